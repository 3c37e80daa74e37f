// Copyright ©2026 The exactmh Authors. All rights reserved.
// Use of this source code is governed by a BSD-style
// license that can be found in the LICENSE file.

package main

import (
	"fmt"
	"io"
	"math"
	"strings"

	"gonum.org/v1/gonum/mat"
)

// identifiability returns warnings about a model whose posterior is not
// identified or not proper, found before sampling (issue 31 item 17): a
// chain on such a posterior runs without a word while a coefficient
// drifts forever or two trade off along a ridge.
//
//   - A design of deficient rank (collinear terms, a level coded twice):
//     the eigenvalues of XᵀX over at most about 100,000 evenly spaced
//     rows (O(N·d²) on them), confirmed on every row, and a d×d
//     eigendecomposition.
//   - A feature equal to the response up to an affine map (the response
//     used as its own feature).
//   - Under the flat prior and a binary response (logistic, probit), a
//     feature that separates the classes perfectly: the likelihood
//     increases without bound along its coefficient. Only separation by
//     one column is detected, not by a combination of columns.
func identifiability(m *fitted, family, prior string) []string {
	d := m.design
	n, p := d.N, d.D
	if n == 0 || p == 0 {
		return nil
	}
	var out []string
	// The sums for the correlations with y: one pass.
	sx, sxx, sxy := make([]float64, p), make([]float64, p), make([]float64, p)
	var sy, syy float64
	for i := range n {
		y := d.Y[i]
		sy += y
		syy += y * y
		for a, xa := range d.X[i*p : (i+1)*p] {
			sx[a] += xa
			sxx[a] += xa * xa
			sxy[a] += xa * y
		}
	}
	// The rank, from XᵀX of evenly spaced rows (at most about 100,000,
	// so that the O(N·d²) pass stays short on tall data): collinearity of
	// all rows holds in any subset, and a deficiency found in the subset
	// (which a rare level absent from it also causes) is confirmed on
	// every row.
	stride := max(1, n/100_000)
	lo, hi, names := smallestEigen(d.X, n, p, stride, d.Names)
	if stride > 1 && lo <= 1e-10*hi {
		lo, hi, names = smallestEigen(d.X, n, p, 1, d.Names)
	}
	if hi > 0 && lo <= 1e-10*hi {
		out = append(out, fmt.Sprintf("the design's columns are collinear (smallest eigenvalue of XᵀX/N %.3g, largest %.3g): %q trade off along a direction the data do not inform, so their coefficients are not identified; drop one of the terms", lo, hi, names))
	}
	fn := float64(n)
	vy := syy/fn - (sy/fn)*(sy/fn)
	for a := range p {
		vx := sxx[a]/fn - (sx[a]/fn)*(sx[a]/fn)
		if vx <= 0 || vy <= 0 {
			continue
		}
		r := (sxy[a]/fn - sx[a]/fn*sy/fn) / math.Sqrt(vx*vy)
		if math.Abs(r) > 1-1e-9 {
			out = append(out, fmt.Sprintf("column %q equals the response %s up to scale (correlation %.12g): is the response used as its own feature?", d.Names[a], d.YName, r))
		}
	}
	if prior == "flat" && (family == "logistic" || family == "probit") {
		out = append(out, separation(m)...)
	}
	return out
}

// smallestEigen returns the smallest and largest eigenvalues of XᵀX/m
// over every stride-th row of the n×p matrix x, and the columns with a
// large weight in the smallest one's eigenvector.
func smallestEigen(x []float64, n, p, stride int, colNames []string) (lo, hi float64, names []string) {
	g := make([]float64, p*p) // the lower triangle
	m := 0
	for i := 0; i < n; i += stride {
		row := x[i*p : (i+1)*p]
		m++
		for a, xa := range row {
			ga := g[a*p : a*p+a+1]
			for b := range ga {
				ga[b] += xa * row[b]
			}
		}
	}
	sym := mat.NewSymDense(p, nil)
	for a := range p {
		for b := 0; b <= a; b++ {
			sym.SetSym(a, b, g[a*p+b]/float64(m))
		}
	}
	var eig mat.EigenSym
	if !eig.Factorize(sym, true) {
		return 1, 1, nil
	}
	vals := eig.Values(nil)
	var v mat.Dense
	eig.VectorsTo(&v)
	for a := range p {
		if math.Abs(v.At(a, 0)) > 0.1 {
			names = append(names, colNames[a])
		}
	}
	return vals[0], vals[p-1], names
}

// separation returns a warning for each design column that separates a
// 0/1 response perfectly.
func separation(m *fitted) []string {
	d := m.design
	n, p := d.N, d.D
	lo := [2][]float64{make([]float64, p), make([]float64, p)}
	hi := [2][]float64{make([]float64, p), make([]float64, p)}
	for c := range 2 {
		for a := range p {
			lo[c][a], hi[c][a] = math.Inf(1), math.Inf(-1)
		}
	}
	var count [2]int
	for i := range n {
		c := 0
		if d.Y[i] == 1 {
			c = 1
		} else if d.Y[i] != 0 {
			return nil
		}
		count[c]++
		for a, x := range d.X[i*p : (i+1)*p] {
			lo[c][a] = min(lo[c][a], x)
			hi[c][a] = max(hi[c][a], x)
		}
	}
	if count[0] == 0 || count[1] == 0 {
		return []string{fmt.Sprintf("the response %s takes one value in all %d rows: under the flat prior the intercept drifts without bound; use a proper prior (--prior normal:SD)", d.YName, n)}
	}
	var out []string
	for a := range p {
		if lo[0][a] == hi[0][a] && lo[1][a] == hi[1][a] && lo[0][a] == lo[1][a] {
			continue // constant (the intercept)
		}
		if hi[0][a] < lo[1][a] || hi[1][a] < lo[0][a] {
			out = append(out, fmt.Sprintf("column %q separates the response %s perfectly (its values for y = 0 and y = 1 do not overlap): under the flat prior its coefficient drifts without bound; use a proper prior (--prior normal:SD) or drop the term", d.Names[a], d.YName))
		}
	}
	return out
}

// warnIdentifiability prints the warnings on stderr, one line each.
func warnIdentifiability(w io.Writer, m *fitted, mf *modelFlags) {
	for _, s := range identifiability(m, strings.ToLower(mf.family), strings.ToLower(mf.prior)) {
		fmt.Fprintf(w, "exactmh: warning: %s\n", s)
	}
}
