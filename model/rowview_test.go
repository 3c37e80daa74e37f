// Copyright ©2026 The exactmh Authors. All rights reserved.
// Use of this source code is governed by a BSD-style
// license that can be found in the LICENSE file.

package model

import (
	"context"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/exactmh/exactmh"
	"github.com/exactmh/exactmh/data"
	"github.com/exactmh/exactmh/multilevel"
)

// storeOf writes the rows of post's energy, m.Y and m.Offset to a sparse
// store at path and opens it.
func storeOf(t *testing.T, m *Multilevel, post *exactmh.Posterior, path string, dtype data.DType) *data.SparseStore {
	t.Helper()
	type rowser interface {
		SparseRow(i int, cols []int32, vals []float64) ([]int32, []float64)
	}
	w, err := data.CreateSparseStore(path, len(m.Y), post.Energy.Dim(), dtype, m.Offset != nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	var cols []int32
	var vals []float64
	for i := range m.Y {
		cols, vals = post.Energy.(rowser).SparseRow(i, cols[:0], vals[:0])
		o := 0.0
		if m.Offset != nil {
			o = m.Offset[i]
		}
		if err := w.WriteRow(cols, vals, m.Y[i], o); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	s, err := data.OpenSparseStore(path)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// TestRowViewGroupGibbs samples a multilevel model over a mapped sparse
// store with GroupGibbs twice — reading the drawn rows through the
// mapping, and through SetRowReaders's pread views — and checks that the
// draws are bit for bit the same (the views compute each row's linear
// predictors and losses as the mapped energy does), for float32 and
// float64 values with an offset; then that a store truncated after
// opening makes the run fail with an error naming the row and the
// numbers, not a crash.
func TestRowViewGroupGibbs(t *testing.T) {
	dir := t.TempDir()
	for _, f32 := range []bool{false, true} {
		rng := rand.New(rand.NewPCG(5, 5))
		m := smallMultilevel(rng, 400, LogisticFamily{}, f32)
		m.Offset = make([]float64, len(m.Y))
		for i := range m.Offset {
			m.Offset[i] = 0.3 * rng.NormFloat64()
		}
		post, err := NewMultilevel(m)
		if err != nil {
			t.Fatal(err)
		}
		dtype := data.Float64
		if f32 {
			dtype = data.Float32
		}
		path := filepath.Join(dir, dtype.String())
		s := storeOf(t, m, post, path, dtype)
		defer s.Close()
		build := func(view bool) *exactmh.Posterior {
			dm := describe(m)
			dm.Y, dm.Offset = s.Y(), s.Offset()
			var p *exactmh.Posterior
			var err error
			if f32 {
				p, err = NewMultilevelRows(dm, SparseRows[float32]{N: s.N(), D: s.D(), RowPtr: s.RowPtr(), Col: s.Col(), Val: s.Val32()})
				if view {
					p.Energy.(*SparseGLM[float32]).SetRowReaders(func() RowReader { return s.RowReader() })
				}
			} else {
				p, err = NewMultilevelRows(dm, SparseRows[float64]{N: s.N(), D: s.D(), RowPtr: s.RowPtr(), Col: s.Col(), Val: s.Val64()})
				if view {
					p.Energy.(*SparseGLM[float64]).SetRowReaders(func() RowReader { return s.RowReader() })
				}
			}
			if err != nil {
				t.Fatal(err)
			}
			return p
		}
		set := &exactmh.Settings{Chains: 2, Warmup: 50, Draws: 100, Seed: 9}
		want, err := exactmh.Sample(context.Background(), build(false), multilevel.GroupGibbs{}, set)
		if err != nil {
			t.Fatal(err)
		}
		got, err := exactmh.Sample(context.Background(), build(true), multilevel.GroupGibbs{}, set)
		if err != nil {
			t.Fatal(err)
		}
		for c := range want.Chains {
			for k := range want.Chains[c].Len() {
				a, b := want.Draw(c, k), got.Draw(c, k)
				for j := range a {
					if a[j] != b[j] {
						t.Fatalf("float32 %v: chain %d, draw %d, θ[%d] = %v through the views, %v through the mapping", f32, c, k, j, b[j], a[j])
					}
				}
			}
		}
		if f32 {
			continue
		}
		// Truncate the file behind the open store: the views' reads
		// come up short.
		p := build(true)
		if err := os.Truncate(path, int64(s.Size())/2); err != nil {
			t.Fatal(err)
		}
		p.Energy.(*SparseGLM[float64]).SetRowReaders(func() RowReader { return s.RowReader() })
		v := p.Energy.(*SparseGLM[float64]).RowView()
		if z, _ := v.LinearPredictors(s.N()-1, make([]float64, s.D()), make([]float64, s.D())); z == z {
			t.Errorf("a row past the truncation: linear predictor %v, want NaN", z)
		}
		err = v.(interface{ Err() error }).Err()
		if err == nil || !strings.Contains(err.Error(), "row 399") || !strings.Contains(err.Error(), "unexpected EOF") {
			t.Errorf("a row past the truncation: %v, want a short read of row 399", err)
		}
	}
}

// TestSparseHessianChunks checks that the sparse Hessian's pattern is the
// union of the rows' outer products whatever the columns that mark it in
// bitsets (none, the default's, all) and however many column ranges
// buffer the others' tails (one for each fixed effect with a budget of
// the largest column's), the Hessian through it bit for bit the same, and
// that a stop polled during the pass stops the Hessian.
func TestSparseHessianChunks(t *testing.T) {
	rng := rand.New(rand.NewPCG(6, 6))
	m := smallMultilevel(rng, 500, LogisticFamily{}, false)
	build := func() *SparseGLM[float64] {
		post, err := NewMultilevel(m)
		if err != nil {
			t.Fatal(err)
		}
		return post.Energy.(*SparseGLM[float64])
	}
	theta := randomTheta(rng, build().Dim())
	want, err := build().SparseHessian(theta)
	if err != nil {
		t.Fatal(err)
	}
	// The pattern from its definition: (c, j), c ≥ j, for each row's pair of columns.
	e := build()
	r := &e.rows
	pairs := map[[2]int]bool{}
	tails := make([]int, r.D)
	for i := range r.N {
		cols := r.Col[r.RowPtr[i]:r.RowPtr[i+1]]
		for k, j := range cols {
			tails[j] += len(cols) - k - 1
			for _, c := range cols[k:] {
				pairs[[2]int{int(c), int(j)}] = true
			}
		}
	}
	if len(pairs) != len(want.RowIdx) {
		t.Fatalf("the pattern has %d entries, want %d", len(want.RowIdx), len(pairs))
	}
	for j := range r.D {
		for q := want.ColPtr[j]; q < want.ColPtr[j+1]; q++ {
			if !pairs[[2]int{want.RowIdx[q], j}] || (q > want.ColPtr[j] && want.RowIdx[q] <= want.RowIdx[q-1]) {
				t.Fatalf("column %d's entries %v are not its rows' columns, ascending", j, want.RowIdx[want.ColPtr[j]:want.ColPtr[j+1]])
			}
		}
	}
	defer func(a, b, c int) { tailChunkRows, minTailChunk, markShare = a, b, c }(tailChunkRows, minTailChunk, markShare)
	tailChunkRows, minTailChunk = 0, 0
	if k := len(tailChunks(tails, r.N)) - 1; k < 3 {
		t.Fatalf("%d column ranges, want at least one for each fixed effect", k)
	}
	for _, share := range []int{0, 64, 1 << 30} {
		markShare = share
		e := build()
		once, err := e.SparseHessianOnce(theta, nil)
		if err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(once.Val, want.Val) || !slices.Equal(once.RowIdx, want.RowIdx) || e.hessDone.Load() || e.hess != nil {
			t.Fatalf("markShare %d: SparseHessianOnce differs from SparseHessian or kept its pattern", share)
		}
		got, err := e.SparseHessian(theta)
		if err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(got.ColPtr, want.ColPtr) || !slices.Equal(got.RowIdx, want.RowIdx) || !slices.Equal(got.Val, want.Val) {
			t.Fatalf("markShare %d: the Hessian built by column ranges differs from the one built at once", share)
		}
		calls := 0
		if _, err := e.SparseHessianStop(theta, func() bool { calls++; return calls > 1 }); err != ErrStopped {
			t.Errorf("stopped: %v, want ErrStopped", err)
		}
	}
}
