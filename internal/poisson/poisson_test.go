package poisson

import (
	"math"
	"math/rand/v2"
	"testing"

	"gonum.org/v1/gonum/stat/distuv"
)

// Sample mean and variance within 5 standard errors of μ (the variance's
// standard error uses the Poisson fourth central moment μ + 3μ²).
func TestMoments(t *testing.T) {
	for i, mean := range []float64{0, 0.001, 0.5, 3, 9.99, 10, 10.5, 50, 1000, 1e5, 1e7, 1e11} {
		rng := rand.New(rand.NewPCG(uint64(i), 7))
		const n = 200000
		var s, s2 float64
		for range n {
			k := float64(Draw(rng, mean))
			s += k
			s2 += k * k
		}
		m := s / n
		v := s2/n - m*m
		if mean == 0 {
			if s != 0 {
				t.Errorf("mean 0 gave nonzero draws")
			}
			continue
		}
		seMean := math.Sqrt(mean / n)
		seVar := math.Sqrt((mean + 3*mean*mean - mean*mean) / n)
		if math.Abs(m-mean) > 5*seMean {
			t.Errorf("μ = %g: sample mean %g (se %g)", mean, m, seMean)
		}
		if math.Abs(v-mean) > 5*seVar {
			t.Errorf("μ = %g: sample variance %g (se %g)", mean, v, seVar)
		}
	}
}

// Chi-square goodness of fit against the exact pmf, tails pooled so that
// every cell expects at least 5.
func TestChiSquare(t *testing.T) {
	for i, mean := range []float64{0.5, 3, 9.99, 10, 25, 500} {
		rng := rand.New(rand.NewPCG(uint64(i), 11))
		const n = 100000
		counts := map[int]float64{}
		for range n {
			counts[Draw(rng, mean)]++
		}
		pmf := func(k int) float64 {
			lg, _ := math.Lgamma(float64(k) + 1)
			return math.Exp(-mean + float64(k)*math.Log(mean) - lg)
		}
		// Cells: [0, lo], lo+1 … hi−1, [hi, ∞).
		lo, hi := 0, int(mean)
		cdfLo := pmf(0)
		for cdfLo*n < 5 {
			lo++
			cdfLo += pmf(lo)
		}
		for {
			tail := 1.0
			for k := 0; k < hi; k++ {
				tail -= pmf(k)
			}
			if tail*n < 5 {
				hi--
				break
			}
			hi++
		}
		var stat float64
		cells := 0
		cell := func(obs, exp float64) {
			stat += (obs - exp) * (obs - exp) / exp
			cells++
		}
		var obs float64
		for k := 0; k <= lo; k++ {
			obs += counts[k]
		}
		cell(obs, cdfLo*n)
		covered := cdfLo
		for k := lo + 1; k < hi; k++ {
			cell(counts[k], pmf(k)*n)
			covered += pmf(k)
		}
		obs = 0
		for k, c := range counts {
			if k >= hi {
				obs += c
			}
		}
		cell(obs, (1-covered)*n)
		limit := distuv.ChiSquared{K: float64(cells - 1)}.Quantile(0.999)
		if stat > limit {
			t.Errorf("μ = %g: chi-square %.1f > %.1f with %d cells", mean, stat, limit, cells)
		}
	}
}

func TestCheck(t *testing.T) {
	for _, bad := range []float64{-1, math.NaN(), math.Inf(1), 2 * MaxMean} {
		if Check(bad) == nil {
			t.Errorf("Check(%v) = nil", bad)
		}
	}
	for _, good := range []float64{0, 1e-9, 1e7, MaxMean} {
		if err := Check(good); err != nil {
			t.Error(err)
		}
	}
}

func TestDrawAllocatesNothing(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 1))
	for _, mean := range []float64{3, 1e4} {
		if a := testing.AllocsPerRun(1000, func() { Draw(rng, mean) }); a != 0 {
			t.Errorf("Draw(%g) allocates %v times", mean, a)
		}
	}
}

func benchmarkDraw(b *testing.B, mean float64) {
	rng := rand.New(rand.NewPCG(1, 1))
	b.ReportAllocs()
	s := 0
	for b.Loop() {
		s += Draw(rng, mean)
	}
	_ = s
}

func BenchmarkDrawMean5(b *testing.B)    { benchmarkDraw(b, 5) }
func BenchmarkDrawMean1000(b *testing.B) { benchmarkDraw(b, 1000) }
