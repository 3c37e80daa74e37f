// Copyright ©2026 The exactmh Authors. All rights reserved.
// Use of this source code is governed by a BSD-style
// license that can be found in the LICENSE file.

package main

import (
	"fmt"
	"io"
	"math"
	"sort"
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
//     increases without bound along its coefficient; and separation by a
//     combination of columns (combinedSeparation), complete or
//     quasi-complete, found by Newton's method diverging and certified on
//     every row.
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
	if len(out) == 0 {
		if s := combinedSeparation(d.X, d.Y, n, p, d.Names); s != "" {
			out = append(out, fmt.Sprintf("%s separates the response %s (every row with y = 1 on one side of a hyperplane, every row with y = 0 on the other or on it): under the flat prior the coefficients drift without bound along that direction; use a proper prior (--prior normal:SD) or drop a term", s, d.YName))
		}
	}
	return out
}

// combinedSeparation looks for a direction u with s_i x_iᵀu ≥ 0 for every
// row (s_i = ±1 for y_i = 1 or 0) and > 0 for some: separation of a
// binary response by a combination of columns, complete or
// quasi-complete, where the logistic and probit likelihoods increase
// towards their supremum along u and have no maximum (Albert and
// Anderson 1984). No single column need separate: two or three together
// can. Newton's method on the logistic log-likelihood, over at most about
// 20,000 evenly spaced rows (separation of all rows holds in any subset;
// fewer when d > 44),
// converges where there is a maximum and otherwise runs off along such a
// u. The rows whose margins stay bounded while the others grow (ties on
// the hyperplane, in quasi-complete separation) are then put exactly on
// it, by projecting u on the null space of their columns, and u is
// checked on every row: a warning is a certificate, up to rounding
// (margins below −10⁻⁹ of the largest are refused). Rows the check finds
// on the wrong side join the subset and the search runs again, up to four
// times. It returns the combination, its main columns named, or "" if no
// separation is found: one that Newton's 60 steps or the rounds do not
// reach goes unreported.
func combinedSeparation(x, y []float64, n, p int, names []string) string {
	// At most 20,000 rows, fewer in many dimensions (a Newton step costs
	// O(rows·d²)), never fewer than 2,000.
	stride := max(1, n/max(2_000, min(20_000, 40_000_000/(p*p))))
	var rows []int
	for i := 0; i < n; i += stride {
		rows = append(rows, i)
	}
	margins := make([]float64, n)
	for range 4 {
		beta := newtonDiverges(x, y, p, rows)
		if beta == nil {
			return ""
		}
		var top float64
		for i := range n {
			margins[i] = signedMargin(x[i*p:(i+1)*p], beta, y[i])
			top = max(top, math.Abs(margins[i]))
		}
		// The iterate itself, then projections putting ever fewer rows
		// with small margins on the hyperplane.
		var violators []int
		for i, m := range margins {
			if m < -1e-9*top {
				violators = append(violators, i)
			}
		}
		if top > 0 && len(violators) == 0 {
			return separationColumns(x, n, p, stride, beta, names)
		}
		for _, tie := range []float64{1e-3, 1e-4, 1e-5, 1e-6} {
			if u := tieProjection(x, n, p, beta, tie*top, margins); u != nil && separates(x, y, n, p, u) {
				return separationColumns(x, n, p, stride, u, names)
			}
		}
		added := 0
		for _, i := range violators {
			if i%stride != 0 && added < 20_000 {
				rows = append(rows, i)
				added++
			}
		}
		if added == 0 {
			return ""
		}
	}
	return ""
}

// separates reports whether every row's margin s_i x_iᵀu is at least
// −10⁻⁹ of the largest, which is positive.
func separates(x, y []float64, n, p int, u []float64) bool {
	var lo, top float64
	for i := range n {
		m := signedMargin(x[i*p:(i+1)*p], u, y[i])
		lo, top = min(lo, m), max(top, m)
	}
	return top > 0 && lo >= -1e-9*top
}

// signedMargin returns s·xᵀu, s = +1 for y = 1 and −1 for y = 0.
func signedMargin(row, u []float64, y float64) float64 {
	var m float64
	for a, v := range row {
		m += v * u[a]
	}
	if y == 0 {
		m = -m
	}
	return m
}

// newtonDiverges runs 60 steps of Newton's method on the logistic
// log-likelihood of the given rows from 0 and returns the last iterate,
// or nil if the steps converge (a maximum exists on those rows) or fail.
func newtonDiverges(x, y []float64, p int, rows []int) []float64 {
	beta := make([]float64, p)
	grad := make([]float64, p)
	hd := make([]float64, p*p)
	h := mat.NewSymDense(p, nil)
	step := mat.NewVecDense(p, nil)
	var chol mat.Cholesky
	for range 60 {
		clear(grad)
		clear(hd)
		var loss float64 // −log-likelihood
		for _, i := range rows {
			row := x[i*p : (i+1)*p]
			var eta float64
			for a, v := range row {
				eta += v * beta[a]
			}
			mu := 1 / (1 + math.Exp(-eta))
			w, r := mu*(1-mu), y[i]-mu
			if y[i] == 0 {
				eta = -eta
			}
			loss += math.Log1p(math.Exp(-eta))
			for a, v := range row {
				grad[a] += v * r
				ha := hd[a*p : a*p+a+1]
				for b := range ha {
					ha[b] += w * v * row[b]
				}
			}
		}
		if loss < 1e-9 {
			return beta // every row classified with certainty: separated
		}
		var tr float64
		for a := range p {
			tr += hd[a*p+a]
		}
		ridge := 1e-12*tr/float64(p) + 1e-300
		for a := range p {
			for b := 0; b <= a; b++ {
				v := hd[a*p+b]
				if a == b {
					v += ridge
				}
				h.SetSym(a, b, v)
			}
		}
		if !chol.Factorize(h) || chol.SolveVecTo(step, mat.NewVecDense(p, grad)) != nil {
			return nil
		}
		var norm, snorm float64
		for a := range p {
			beta[a] += step.AtVec(a)
			norm += beta[a] * beta[a]
			snorm += step.AtVec(a) * step.AtVec(a)
		}
		switch {
		case math.IsNaN(norm) || math.IsInf(norm, 0):
			return nil
		case snorm <= 1e-20*(1+norm):
			return nil // converged
		case norm > 1e24:
			return beta
		}
	}
	return beta
}

// tieProjection returns beta projected on the null space of the rows
// whose margins (beta's) are at most tie in absolute value: in a
// quasi-complete separation they lie on the hyperplane, and Newton's
// iterate leaves them at bounded margins while the others grow. It
// returns nil if there are no such rows or nothing is left.
func tieProjection(x []float64, n, p int, beta []float64, tie float64, margins []float64) []float64 {
	g := mat.NewSymDense(p, nil)
	ties := 0
	for i, m := range margins[:n] {
		if math.Abs(m) > tie {
			continue
		}
		ties++
		row := x[i*p : (i+1)*p]
		for a, va := range row {
			for b := 0; b <= a; b++ {
				g.SetSym(a, b, g.At(a, b)+va*row[b])
			}
		}
	}
	if ties == 0 {
		return nil
	}
	var eig mat.EigenSym
	if !eig.Factorize(g, true) {
		return nil
	}
	vals := eig.Values(nil)
	var v mat.Dense
	eig.VectorsTo(&v)
	u := make([]float64, p)
	for k, l := range vals {
		if l > 1e-9*vals[p-1] {
			continue
		}
		var c float64
		for a := range p {
			c += v.At(a, k) * beta[a]
		}
		for a := range p {
			u[a] += c * v.At(a, k)
		}
	}
	for _, c := range u {
		if c != 0 {
			return u
		}
	}
	return nil
}

// separationColumns names the main columns of the direction u: the
// largest |u_a|·sd_a, each coefficient's effect on x_iᵀu.
func separationColumns(x []float64, n, p, stride int, u []float64, names []string) string {
	type col struct {
		name string
		w    float64
	}
	var cols []col
	var wmax float64
	for a := range p {
		var s, ss, m float64
		for i := 0; i < n; i += stride {
			v := x[i*p+a]
			s, ss, m = s+v, ss+v*v, m+1
		}
		w := math.Abs(u[a]) * math.Sqrt(max(0, ss/m-(s/m)*(s/m)))
		cols = append(cols, col{names[a], w})
		wmax = max(wmax, w)
	}
	if wmax == 0 {
		return ""
	}
	sort.SliceStable(cols, func(i, j int) bool { return cols[i].w > cols[j].w })
	var parts []string
	for _, c := range cols {
		if c.w < 0.05*wmax || len(parts) == 6 {
			break
		}
		parts = append(parts, fmt.Sprintf("%q", c.name))
	}
	return "a combination of columns (mainly " + strings.Join(parts, ", ") + ")"
}

// warnIdentifiability prints the warnings on stderr, one line each.
func warnIdentifiability(w io.Writer, m *fitted, mf *modelFlags) {
	for _, s := range append(identifiability(m, strings.ToLower(mf.family), strings.ToLower(mf.prior)), randomIdentifiability(m)...) {
		fmt.Fprintf(w, "exactmh: warning: %s\n", s)
	}
}
