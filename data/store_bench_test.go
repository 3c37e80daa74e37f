package data

import (
	"fmt"
	"math/rand/v2"
	"path/filepath"
	"testing"

	"github.com/exactmh/exactmh"
	"github.com/exactmh/exactmh/model"
)

// BenchmarkStoreDatum measures ns per datum of a logistic regression's
// EnergyDiffs over random batches of 64 rows of N = 10⁶, for X in memory
// (float64), memory-mapped from a store (float64, pages cached:
// Validate reads every page first) and mapped float32
// (LogisticRegression32), at d = 10 and 100. Building the stores writes
// 1.2 GB to the temp directory at d = 100; -short skips d = 100.
func BenchmarkStoreDatum(b *testing.B) {
	const n, batch = 1_000_000, 64
	for _, d := range []int{10, 100} {
		if d == 100 && testing.Short() {
			continue
		}
		dir := b.TempDir()
		rng := rand.New(rand.NewPCG(1, 2))
		x := make([]float64, n*d)
		y := make([]float64, n)
		for k := range x {
			x[k] = float64(float32(rng.NormFloat64()))
		}
		for i := range y {
			y[i] = float64(rng.IntN(2))
		}
		stores := map[DType]*Store{}
		for _, dt := range []DType{Float64, Float32} {
			path := filepath.Join(dir, dt.String())
			w, err := CreateStore(path, n, d, dt)
			if err != nil {
				b.Fatal(err)
			}
			for i := range n {
				if err := w.WriteRow(x[i*d:(i+1)*d], y[i]); err != nil {
					b.Fatal(err)
				}
			}
			if err := w.Close(); err != nil {
				b.Fatal(err)
			}
			s, err := OpenStore(path)
			if err != nil {
				b.Fatal(err)
			}
			defer s.Close()
			if err := s.Validate(); err != nil { // every page read once, into the page cache
				b.Fatal(err)
			}
			stores[dt] = s
		}
		mem, err := model.NewLogisticRegression(x, y, d)
		if err != nil {
			b.Fatal(err)
		}
		map64, err := model.NewLogisticRegression(stores[Float64].X64(), stores[Float64].Y(), d)
		if err != nil {
			b.Fatal(err)
		}
		map32, err := model.NewLogisticRegression32(stores[Float32].X32(), stores[Float32].Y(), d)
		if err != nil {
			b.Fatal(err)
		}
		idx := make([]int, 1<<16)
		for k := range idx {
			idx[k] = rng.IntN(n)
		}
		theta, theta2 := make([]float64, d), make([]float64, d)
		for j := range theta {
			theta[j], theta2[j] = 0.1*rng.NormFloat64(), 0.1*rng.NormFloat64()
		}
		dst := make([]float64, batch)
		for _, c := range []struct {
			name string
			e    exactmh.EnergyDiffer
		}{{"memory64", mem}, {"mapped64", map64}, {"mapped32", map32}} {
			b.Run(fmt.Sprintf("d=%d/%s", d, c.name), func(b *testing.B) {
				k := 0
				for b.Loop() {
					c.e.EnergyDiffs(dst, theta, theta2, idx[k:k+batch])
					if k += batch; k+batch > len(idx) {
						k = 0
					}
				}
				b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*batch), "ns/datum")
			})
		}
	}
}
