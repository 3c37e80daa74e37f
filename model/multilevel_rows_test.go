// Copyright ©2026 The exactmh Authors. All rights reserved.
// Use of this source code is governed by a BSD-style
// license that can be found in the LICENSE file.

package model

import (
	"math/rand/v2"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/exactmh/exactmh"
	"github.com/exactmh/exactmh/data"
)

// describe returns m without its data but Y and Offset, as
// NewMultilevelRows takes it.
func describe(m *Multilevel) *Multilevel {
	c := *m
	c.Fixed = nil
	for _, f := range m.Fixed {
		c.Fixed = append(c.Fixed, Covariate{Name: f.Name})
	}
	c.Factors = nil
	for _, f := range m.Factors {
		g := Factor{Name: f.Name, Levels: f.Levels, NoIntercept: f.NoIntercept, Tau: f.Tau}
		if g.Levels == nil {
			g.Levels = []string{"1", "2", "3"}
		}
		for _, s := range f.Slopes {
			g.Slopes = append(g.Slopes, Covariate{Name: s.Name})
		}
		c.Factors = append(c.Factors, g)
	}
	return &c
}

// TestMultilevelRowsFromStore writes the rows of NewMultilevel's energy to
// a data.SparseStore, maps it, and checks that NewMultilevelRows over the
// mapped rows (nothing copied) is the same posterior: the same names,
// every datum's energy bit for bit and the same prior, float32 and
// float64, with an offset; and that rows of the wrong width, or a factor
// without levels, are errors.
func TestMultilevelRowsFromStore(t *testing.T) {
	dir := t.TempDir()
	for _, f32 := range []bool{false, true} {
		rng := rand.New(rand.NewPCG(3, 3))
		m := smallMultilevel(rng, 300, LogisticFamily{}, f32)
		m.Offset = make([]float64, len(m.Y))
		for i := range m.Offset {
			m.Offset[i] = rng.NormFloat64()
		}
		want, err := NewMultilevel(m)
		if err != nil {
			t.Fatal(err)
		}
		dtype := data.Float64
		if f32 {
			dtype = data.Float32
		}
		d := want.Energy.Dim()
		path := filepath.Join(dir, dtype.String())
		w, err := data.CreateSparseStore(path, len(m.Y), d, dtype, true, nil)
		if err != nil {
			t.Fatal(err)
		}
		type rowser interface {
			SparseRow(i int, cols []int32, vals []float64) ([]int32, []float64)
		}
		var cols []int32
		var vals []float64
		for i := range m.Y {
			cols, vals = want.Energy.(rowser).SparseRow(i, cols[:0], vals[:0])
			if err := w.WriteRow(cols, vals, m.Y[i], m.Offset[i]); err != nil {
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
		defer s.Close()
		dm := describe(m)
		dm.Y, dm.Offset = s.Y(), s.Offset()
		var got *exactmh.Posterior
		if f32 {
			got, err = NewMultilevelRows(dm, SparseRows[float32]{N: s.N(), D: s.D(), RowPtr: s.RowPtr(), Col: s.Col(), Val: s.Val32()})
		} else {
			got, err = NewMultilevelRows(dm, SparseRows[float64]{N: s.N(), D: s.D(), RowPtr: s.RowPtr(), Col: s.Col(), Val: s.Val64()})
		}
		if err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(got.Names, want.Names) {
			t.Fatalf("names %q, want %q", got.Names, want.Names)
		}
		idx := make([]int, len(m.Y))
		for i := range idx {
			idx[i] = i
		}
		e1, e2 := make([]float64, len(idx)), make([]float64, len(idx))
		for range 3 {
			theta := randomTheta(rng, d)
			want.Energy.Energies(e1, theta, idx)
			got.Energy.Energies(e2, theta, idx)
			if !slices.Equal(e1, e2) {
				t.Fatalf("float32 %v: energies differ", f32)
			}
			if a, b := want.Prior.LogPrior(theta), got.Prior.LogPrior(theta); a != b {
				t.Fatalf("log prior %v, want %v", b, a)
			}
		}
		// A layout one column narrower than the rows.
		short := describe(m)
		short.Y, short.Offset = s.Y(), s.Offset()
		short.Factors[1].Levels = short.Factors[1].Levels[:2]
		if _, err := NewMultilevelRows(short, SparseRows[float64]{N: s.N(), D: s.D()}); err == nil || !strings.Contains(err.Error(), "want N = len(Y) = 300 rows of the layout's 13 columns (or the dimension 16)") {
			t.Errorf("narrow layout: %v", err)
		}
		nolev := describe(m)
		nolev.Factors[1].Levels = nil
		if _, err := NewMultilevelRows(nolev, SparseRows[float64]{}); err == nil || !strings.Contains(err.Error(), `factor 1 ("rater"): no Levels`) {
			t.Errorf("no levels: %v", err)
		}
	}
}

// TestMultilevelRowsLogScaleSlot gives NewMultilevelRows rows as wide as θ
// with an entry in a log scale's column, which the layout reserves for
// the scale and no row may hold: an error naming the row and the scale,
// where it was accepted (and NUTS then sampled another model).
func TestMultilevelRowsLogScaleSlot(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 3))
	m := smallMultilevel(rng, 50, LogisticFamily{}, false)
	ref, err := NewMultilevel(m)
	if err != nil {
		t.Fatal(err)
	}
	_, _, _, _, _, lt := ref.Prior.(*MultilevelPrior).Term(0)
	d, n := ref.Dim(), len(m.Y)
	rows := SparseRows[float64]{N: n, D: d, RowPtr: make([]int, n+1)}
	for i := range n {
		rows.Col = append(rows.Col, 0)
		rows.Val = append(rows.Val, 1)
		if i == 7 {
			rows.Col = append(rows.Col, int32(lt))
			rows.Val = append(rows.Val, 0.5)
		}
		rows.RowPtr[i+1] = len(rows.Col)
	}
	_, err = NewMultilevelRows(describe(m), rows)
	if err == nil || !strings.Contains(err.Error(), "row 7") || !strings.Contains(err.Error(), ref.Names[lt]) {
		t.Fatalf("a row holding the log scale %s: error %v, want one naming row 7 and the scale", ref.Names[lt], err)
	}
}
