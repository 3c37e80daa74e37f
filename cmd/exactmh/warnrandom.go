// Copyright ©2026 The exactmh Authors. All rights reserved.
// Use of this source code is governed by a BSD-style
// license that can be found in the LICENSE file.

package main

import (
	"fmt"
	"math"
	"strings"
)

// randomIdentifiability returns warnings about the random-effect terms of
// m's design that leave the posterior poorly identified, as identifiability
// does for the fixed effects, each naming the term (TestRandomEffectWarnings):
//
//   - a grouping factor within whose every level the response is constant
//     ((1|y), or groups that perfectly separate a binary response): the
//     effects reproduce the data, and neither they nor τ are identified by
//     the likelihood;
//   - a random slope equal to the response up to an affine map ((1 + y|g));
//   - two terms that group the rows identically ((1|g/g), or (1|g) beside
//     cat(g;sd=S)): their effects trade off along a ridge;
//   - a random-effect factor that is also a one-hot fixed effect ((1|g)
//     beside cat(g)).
//
// Each check is a pass over the rows: O(N) per term, O(N) per pair.
func randomIdentifiability(m *fitted) []string {
	d := m.design
	if d == nil || d.N == 0 || len(d.Groups) == 0 {
		return nil
	}
	var out []string
	for gi, g := range d.Groups {
		// The response constant within every level.
		first := make([]float64, len(g.Levels))
		seen := make([]bool, len(g.Levels))
		constant := true
		for i, k := range g.Index {
			switch {
			case !seen[k]:
				first[k], seen[k] = d.Y[i], true
			case first[k] != d.Y[i]:
				constant = false
			}
			if !constant {
				break
			}
		}
		if constant && len(g.Levels) > 1 && len(g.Levels) < d.N { // one row a level is an observation-level effect (overdispersion), not this
			out = append(out, fmt.Sprintf("%s: the response %s is constant within every one of its %d levels (the factor is the response, or separates it perfectly): the effects reproduce the data, and neither they nor the scale are identified by the likelihood", g.Term, d.YName, len(g.Levels)))
		}
		for s, v := range g.Slopes {
			if r := correlation(v, d.Y); math.Abs(r) > 1-1e-9 {
				out = append(out, fmt.Sprintf("%s: the slope %s equals the response %s up to an affine map (correlation %.6f): the response is used as its own covariate", g.Term, g.SlopeNames[s], d.YName, r))
			}
		}
		for _, name := range d.Names {
			if strings.HasPrefix(name, g.Name+"=") && g.FixedSD == 0 {
				out = append(out, fmt.Sprintf("%s: %s is also a one-hot fixed effect (column %q): the levels' fixed and random effects trade off, and only their sum is identified", g.Term, g.Name, name))
				break
			}
		}
		for _, h := range d.Groups[:gi] {
			if samePartition(g.Index, h.Index, len(g.Levels), len(h.Levels)) {
				out = append(out, fmt.Sprintf("%s and %s group the rows identically: their effects trade off along a ridge, and only their sums are identified", h.Term, g.Term))
			}
		}
	}
	return out
}

// samePartition reports whether two level indices of the same rows group
// them identically: a one-to-one map between their levels.
func samePartition(a, b []int32, na, nb int) bool {
	if na != nb || len(a) != len(b) {
		return false
	}
	ab, ba := make([]int32, na), make([]int32, nb)
	for k := range ab {
		ab[k] = -1
	}
	for k := range ba {
		ba[k] = -1
	}
	for i := range a {
		x, y := a[i], b[i]
		if ab[x] < 0 && ba[y] < 0 {
			ab[x], ba[y] = y, x
		}
		if ab[x] != y || ba[y] != x {
			return false
		}
	}
	return true
}

// correlation returns the Pearson correlation of x and y (0 if either is
// constant).
func correlation(x, y []float64) float64 {
	n := float64(len(x))
	var sx, sy, sxx, syy, sxy float64
	for i, a := range x {
		b := y[i]
		sx += a
		sy += b
		sxx += a * a
		syy += b * b
		sxy += a * b
	}
	vx, vy := sxx-sx*sx/n, syy-sy*sy/n
	if !(vx > 0) || !(vy > 0) {
		return 0
	}
	return (sxy - sx*sy/n) / math.Sqrt(vx*vy)
}
