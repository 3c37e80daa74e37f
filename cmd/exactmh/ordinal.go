// Copyright ©2026 The exactmh Authors. All rights reserved.
// Use of this source code is governed by a BSD-style
// license that can be found in the LICENSE file.

package main

import (
	"fmt"
	"math"

	"github.com/exactmh/exactmh"
	"github.com/exactmh/exactmh/data"
	"github.com/exactmh/exactmh/model"
)

// isOrdinal reports whether p is a --family ordinal posterior.
func isOrdinal(p *exactmh.Posterior) bool {
	_, ok := p.Energy.(*model.OrdinalRegression)
	return ok
}

// ordinalCategories checks the response of --family ordinal — each
// value an integer in 1..K — and returns K, the largest value (at least
// 2). A category between 1 and K with no data is allowed: the cutpoints'
// prior keeps the posterior proper.
func ordinalCategories(d *data.Design) (int, error) {
	k := 0.0
	for i, y := range d.Y {
		if !(y >= 1) || y != math.Trunc(y) || y > 1<<20 {
			return 0, inputErr(fmt.Errorf("--family ordinal needs the categories 1, 2, …, K in their order as the response; %s is %v in data row %d", d.YName, y, dataRow(d, i)))
		}
		k = max(k, y)
	}
	if k < 2 {
		return 0, inputErr(fmt.Errorf("--family ordinal: %s takes one value (1) in all %d rows, want at least two categories", d.YName, d.N))
	}
	return int(k), nil
}

// dropIntercept removes the intercept column of d, in place (a row-wise
// move of X, no copy): the cutpoints of --family ordinal take its place
// (brms, ordinal::clm). The design is built with it so that numeric
// features are centred as well as scaled (data.Spec.NoStandardize: without an
// intercept they would only be scaled), which keeps the cutpoints and the
// coefficients nearly uncorrelated; cutpointRows undoes the centring.
func dropIntercept(d *data.Design) {
	if !d.Intercept {
		return
	}
	D := d.D
	for i := range d.N {
		copy(d.X[i*(D-1):(i+1)*(D-1)], d.X[i*D+1:(i+1)*D])
	}
	d.X, d.D, d.Intercept = d.X[:d.N*(D-1)], D-1, false
	d.Names, d.Center, d.Scale = d.Names[1:], d.Center[1:], d.Scale[1:]
}

// ordinalResponseErr explains the design's error err when the response
// column is text: an ordinal response is read as the integers 1..K,
// since the order of text levels cannot be inferred ("high" sorts
// before "low").
func ordinalResponseErr(f *data.Frame, col string, err error) error {
	for _, c := range f.Columns() {
		if c.Name == col && c.Type == data.String {
			return fmt.Errorf("--family ordinal: the response %q is text; code its levels as the integers 1, 2, …, K in their order (the order of text levels is not inferred): %w", col, err)
		}
	}
	return err
}

// cutpointRows returns the natural rows Intercept[1] … Intercept[K−1],
// brms's names for the cutpoints of a cumulative logit model, from the
// sampled coordinates at first, …, first+K−2 (model.CutpointNames). On
// standardised features the cutpoint on the original scale is
// c_k + Σ_j θ_j·Center_j/Scale_j over the design's columns (the first
// d.D coordinates): x_stdᵀθ = x_rawᵀb − Σ_j θ_j·Center_j/Scale_j, so
// that F(c_k − x_stdᵀθ) = F(c_k + shift − x_rawᵀb), as the summary's
// coefficients b_j = θ_j/Scale_j are.
func cutpointRows(d *data.Design, first, k int) []naturalRow {
	var out []naturalRow
	for c := range k - 1 {
		out = append(out, naturalRow{name: fmt.Sprintf("Intercept[%d]", c+1), from: first, last: first + k - 2,
			of: func(theta []float64) float64 {
				v := theta[first]
				for j := 1; j <= c; j++ {
					v += math.Exp(theta[first+j])
				}
				for j := range d.D {
					if d.Scale[j] != 0 {
						v += theta[j] * d.Center[j] / d.Scale[j]
					}
				}
				return v
			}})
	}
	return out
}
