// Copyright ©2026 The exactmh Authors. All rights reserved.
// Use of this source code is governed by a BSD-style
// license that can be found in the LICENSE file.

package main

import (
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestRandomEffectWarnings builds multilevel models whose random-effect
// terms leave the posterior poorly identified — the response as the
// grouping factor, the response as a slope, a factor nested in itself, a
// factor both random and one-hot fixed — and checks that each gets a
// warning naming its term, and that a sound model gets none.
func TestRandomEffectWarnings(t *testing.T) {
	path := filepath.Join(t.TempDir(), "ml.csv")
	var b strings.Builder
	b.WriteString("y,x,g\n")
	rng := rand.New(rand.NewPCG(1, 2))
	for i := range 400 {
		y := 0
		if rng.Float64() < 0.5 {
			y = 1
		}
		fmt.Fprintf(&b, "%d,%.4f,g%d\n", y, rng.NormFloat64(), i%8)
	}
	if err := os.WriteFile(path, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct{ terms, want string }{
		{"x,(1|y)", "(1 | y): the response"},
		{"x,(1 + y|g)", "the slope y equals the response"},
		{"x,(1|g),cat(g)", "is also a one-hot fixed effect"},
		{"x,(1|g),(1|g:g)", "group the rows identically"},
		{"x,(1|g/g)", "group the rows identically"},
		{"x,(1|g)", ""},
	} {
		mf := modelFlags{data: path, response: "y", terms: c.terms, family: "logistic", prior: "flat", beta: 1, sigma: 1, nu: 4, lkj: 1}
		m, err := mf.build()
		if err != nil {
			t.Errorf("--terms %s: %v", c.terms, err)
			continue
		}
		w := strings.Join(randomIdentifiability(m), "\n")
		switch {
		case c.want == "" && w != "":
			t.Errorf("--terms %s: warnings %q, want none", c.terms, w)
		case c.want != "" && !strings.Contains(w, c.want):
			t.Errorf("--terms %s: warnings %q, want one containing %q", c.terms, w, c.want)
		}
	}
}
