// Copyright ©2026 The exactmh Authors. All rights reserved.
// Use of this source code is governed by a BSD-style
// license that can be found in the LICENSE file.

package main

import (
	"path/filepath"
	"testing"

	store "github.com/exactmh/exactmh/data"
	"github.com/exactmh/exactmh/multilevel"
)

// TestCrossedStore writes a small crossed data set (N = 3000, 40 users ×
// 12 items) and checks the store: N rows of the intercept, x1 … x3, one
// user's and one item's column, the users' rows consecutive with the
// rank-size sizes, every item drawn, and the posterior over the mapping a
// multilevel one of the expected dimension.
func TestCrossedStore(t *testing.T) {
	if _, _, err := parseCrossed("40"); err == nil {
		t.Error(`parseCrossed("40"): no error`)
	}
	const n, g1, g2 = 3000, 40, 12
	dir := t.TempDir()
	tr, post, st, stop, err := crossedFromStore(dir, n, g1, g2, 3, true, func(string, ...any) {})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	defer stop()
	if st.N() != n || st.NNZ() != 6*n || st.DType() != store.Float32 {
		t.Fatalf("store: N %d, %d entries, %v; want %d, %d, float32", st.N(), st.NNZ(), st.DType(), n, 6*n)
	}
	if d := post.Energy.Dim(); d != 4+g1+g2+2 {
		t.Errorf("dimension %d, want %d", d, 4+g1+g2+2)
	}
	if _, ok := multilevel.Of(post); !ok {
		t.Error("not a multilevel posterior")
	}
	users, items := make([]int, g1), make([]int, g2)
	last := 0
	r := st.RowReader()
	for i := range n {
		cols, _, _, _, err := r.ReadRow(i, nil, nil)
		if err != nil {
			t.Fatal(err)
		}
		u, it := int(cols[4])-4, int(cols[5])-4-g1
		if len(cols) != 6 || u < 0 || u >= g1 || it < 0 || it >= g2 || u < last {
			t.Fatalf("row %d: columns %v", i, cols)
		}
		last = u
		users[u]++
		items[it]++
	}
	for u, c := range users {
		if c != tr.sizes1[u] {
			t.Errorf("user %d: %d rows, want %d", u+1, c, tr.sizes1[u])
		}
	}
	for it, c := range items {
		if c == 0 {
			t.Errorf("item %d: no row", it+1)
		}
	}
	if items[0] <= items[g2-1] {
		t.Errorf("item sizes not rank-size: first %d, last %d", items[0], items[g2-1])
	}
	if m, _ := filepath.Glob(filepath.Join(dir, "crossed_*.sparse")); len(m) != 1 {
		t.Errorf("store files %v", m)
	}
}
