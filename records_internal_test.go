// Copyright ©2026 The exactmh Authors. All rights reserved.
// Use of this source code is governed by a BSD-style
// license that can be found in the LICENSE file.

package exactmh

import (
	"math/rand/v2"
	"testing"
	"unsafe"

	"github.com/exactmh/exactmh/internal/alias"
)

// TestDatumRecordSizes: SMH's record is one 64-byte cache line, so that
// an array of them (page-aligned when large) never has a record straddling
// two lines; so is a record of two numbers half of one.
func TestDatumRecordSizes(t *testing.T) {
	if s := unsafe.Sizeof(datumRecord[smhDatum]{}); s != 64 {
		t.Errorf("SMH's record is %d bytes, want 64", s)
	}
	if s := unsafe.Sizeof(datumRecord[pairDatum]{}); s != 32 {
		t.Errorf("a record of two numbers is %d bytes, want 32", s)
	}
}

// pairDatum is a record's terms in the tests.
type pairDatum struct{ c, y float64 }

// TestDrawRecordsIsDrawInto: drawRecords draws the indices the table it
// copies draws (DrawInto, then one uniform per datum), leaving the
// generator in the same state, on skewed weights with zeros; each record
// keeps its datum's terms.
func TestDrawRecordsIsDrawInto(t *testing.T) {
	w := make([]float64, 700)
	rng := rand.New(rand.NewPCG(5, 6))
	for i := range w {
		w[i] = float64(rng.IntN(3)) * rng.ExpFloat64()
	}
	table, err := alias.New(w)
	if err != nil {
		t.Fatal(err)
	}
	recs := newRecords(table, func(i int) pairDatum { return pairDatum{c: w[i], y: float64(i)} })
	for i, r := range recs {
		if r.data.c != w[i] || r.data.y != float64(i) {
			t.Fatalf("record %d holds %+v, want c = %v, y = %d", i, r.data, w[i], i)
		}
	}
	a, b := rand.New(rand.NewPCG(1, 2)), rand.New(rand.NewPCG(1, 2))
	for _, n := range []int{0, 1, 16, 250} {
		got, gotU := make([]int, n), make([]float64, n)
		want, wantU := make([]int, n), make([]float64, n)
		drawRecords(a, recs, got, gotU)
		table.DrawInto(b, want, wantU)
		for j := range wantU {
			wantU[j] = b.Float64()
		}
		for j := range want {
			if got[j] != want[j] || gotU[j] != wantU[j] {
				t.Fatalf("n = %d, draw %d: drawRecords %d (u %v), the table %d (u %v)", n, j, got[j], gotU[j], want[j], wantU[j])
			}
			if w[got[j]] == 0 {
				t.Fatalf("drew %d, of weight 0", got[j])
			}
		}
		if a.Uint64() != b.Uint64() {
			t.Fatalf("n = %d: the generators differ after the draws", n)
		}
	}
}
