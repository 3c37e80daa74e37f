// Copyright ©2026 The exactmh Authors. All rights reserved.
// Use of this source code is governed by a BSD-style
// license that can be found in the LICENSE file.

package multilevel

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"

	"github.com/exactmh/exactmh"
)

// NegBinomialEnergy is the energy of a negative binomial (NB2, log link)
// multilevel model with its shape φ unknown (model.SparseNegBinomialRegression):
// θ = (w, log φ), w the D coordinates of a multilevel model's sparse rows,
//
//	U_i(θ) = log Γ(φ) − log Γ(y_i + φ) − φ·log φ − y_i·η_i + (y_i + φ)·log(φ + e^{η_i}),
//
// η_i = x_iᵀw + o_i. Under a ScaledPrior over a Layout of dimension D
// (model.NewNegBinomialMultilevel) GroupGibbs samples it by its negative
// binomial sweep (groupgibbs_negbin.go; docs/multilevel.md, "Negative
// binomial sweep").
type NegBinomialEnergy interface {
	exactmh.Energy
	// ShapeView returns a new energy of w at shape φ: f_i(z) = −y_i·z +
	// (y_i + φ)·log(φ + e^z), the terms free of z dropped.
	ShapeView(phi float64) ShapeGLM
	// Counts returns y (read only).
	Counts() []float64
}

// ShapeGLM is a negative binomial energy of w at a shape SetShape changes:
// a SparseRowGLM with a sparse Hessian whose LossBound(i, 3, ·, ·) is
// (y_i + ref)/(6√3)·max(1, φ/ref) ≥ sup|f_i‴| = (y_i + φ)/(6√3), so that
// bounds weighed at φ = ref hold at any φ once scaled by max(1, φ/ref).
type ShapeGLM interface {
	SparseRowGLM
	exactmh.SparseHessianer
	SetShape(phi, ref float64)
}

// negBinOf returns the negative binomial energy and the layout of a
// NegBinomialEnergy of dimension D + 1 under a ScaledPrior over a Layout
// of dimension D with a sparse Hessian.
func negBinOf(e exactmh.Energy, p exactmh.Prior) (NegBinomialEnergy, Layout, exactmh.Prior, bool) {
	nb, ok := e.(NegBinomialEnergy)
	if !ok {
		return nil, nil, nil, false
	}
	sp, ok := p.(ScaledPrior)
	if !ok {
		return nil, nil, nil, false
	}
	base := sp.Unwrap()
	lay, ok := base.(Layout)
	if !ok || lay.NumTerms() == 0 {
		return nil, nil, nil, false
	}
	if _, ok := base.(exactmh.SparseHessianer); !ok {
		return nil, nil, nil, false
	}
	if len(lay.Blocks())+1 != nb.Dim() {
		return nil, nil, nil, false
	}
	return nb, lay, base, true
}

// IsNegBinomial reports whether p is a negative binomial multilevel model
// with its shape estimated (a NegBinomialEnergy under a ScaledPrior over a
// Layout), which GroupGibbs samples by its negative binomial sweep and the
// automatic default chooses GroupGibbs for.
func IsNegBinomial(p *exactmh.Posterior) bool {
	_, _, _, ok := negBinOf(p.Energy, p.Prior)
	return ok
}

// shapeCond is the conditional of ℓ = log φ given the linear predictors:
// V(ℓ) = Σ_i U_i = −Σ_k c_k·log(φ + k) − N·φ·ℓ + Σ_i (y_i + φ)·L_i + const,
// L_i = log(φ + e^{η_i}), c_k = #{i : y_i > k} (log Γ(y + φ) − log Γ(φ)
// = Σ_{k<y} log(φ + k)), so that the φ-only part costs O(max y).
type shapeCond struct {
	y  []float64
	ck []float64
	n  float64
	// noJacobianQ, a mutant of the tests, drops the proposal's q ratio.
	noQ bool
}

func newShapeCond(y []float64) (*shapeCond, error) {
	var ymax float64
	for i, v := range y {
		if !(v >= 0) || v != math.Trunc(v) || v > 1e8 {
			return nil, fmt.Errorf("y[%d] = %v, want a count in [0, 10⁸]", i, v)
		}
		ymax = math.Max(ymax, v)
	}
	ck := make([]float64, int(ymax)+1)
	for _, v := range y {
		if v > 0 {
			ck[int(v)-1]++ // y > k for k < y: a suffix sum below
		}
	}
	for k := len(ck) - 2; k >= 0; k-- {
		ck[k] += ck[k+1]
	}
	return &shapeCond{y: y, ck: ck, n: float64(len(y))}, nil
}

// shapeVals is V, V′, V″ at one ℓ.
type shapeVals struct{ v, d1, d2 float64 }

// eval returns V, V′, V″ in ℓ at l given the linear predictors eta, in
// one pass (the terms −y_i·η_i, constant in ℓ, left out). With
// p_i = φ/(φ + μ_i):
//
//	∂V/∂φ = −Σ_k c_k/(φ+k) − N(ℓ + 1) + Σ_i L_i + Σ_i (y_i + φ)p_i/φ,
//	∂²V/∂φ² = Σ_k c_k/(φ+k)² − N/φ + Σ_i [2p_i/φ − (y_i + φ)p_i²/φ²],
//
// and V′ = φ·∂V/∂φ, V″ = V′ + φ²·∂²V/∂φ².
//
// mu holds μ_i = e^{η_i} (nil: computed here), read where η_i < 600.
func (s *shapeCond) eval(l float64, eta, mu []float64) shapeVals {
	f := math.Exp(l)
	var sl, syl, sp, syp, syp2 float64
	for i, z := range eta {
		y := s.y[i]
		var L, p float64
		if z < 600 { // μ finite: one log
			var m float64
			if mu != nil {
				m = mu[i]
			} else {
				m = math.Exp(z)
			}
			L = math.Log(f + m)
			p = f / (f + m)
		} else {
			L = logSum(l, z)
			p = math.Exp(l - L)
		}
		sl += L
		syl += y * L
		sp += p
		syp += y * p
		syp2 += (y + f) * p * p
	}
	var lk, d1k, d2k float64
	for k, c := range s.ck {
		if c == 0 {
			break
		}
		r := 1 / (f + float64(k))
		lk += c * math.Log(f+float64(k))
		d1k += c * r
		d2k += c * r * r
	}
	v := -lk - s.n*f*l + syl + f*sl
	dphi := -d1k - s.n*(l+1) + sl + (syp+f*sp)/f
	d2phi := d2k - s.n/f + 2*sp/f - syp2/(f*f)
	d1 := f * dphi
	return shapeVals{v, d1, d1 + f*f*d2phi}
}

// logSum returns log(e^a + e^b) without overflow.
func logSum(a, b float64) float64 {
	if a < b {
		a, b = b, a
	}
	return a + math.Log1p(math.Exp(b-a))
}

// shapeNewton returns the conditional's mode in ℓ given eta by Newton's
// method from l (the prior's terms from logPrior, by central
// differences), and its sd there.
func (s *shapeCond) shapeNewton(l float64, eta []float64, logPrior func(l float64) float64) (float64, float64) {
	sd := 1.0
	for range 50 {
		v := s.eval(l, eta, nil)
		g, h := priorDerivs(logPrior, l)
		g, h = v.d1-g, v.d2-h
		if !(h > 0) {
			h = math.Abs(g) + 1
		}
		step := -g / h
		step = math.Max(-1, math.Min(1, step))
		l += step
		sd = 1 / math.Sqrt(h)
		if math.Abs(step) < 1e-10 {
			break
		}
	}
	return l, sd
}

// priorDerivs returns the first two derivatives of logPrior at l by
// central differences.
func priorDerivs(logPrior func(l float64) float64, l float64) (float64, float64) {
	const h = 1e-4
	a, b, c := logPrior(l-h), logPrior(l), logPrior(l+h)
	d1, d2 := (c-a)/(2*h), (c-2*b+a)/(h*h)
	if math.IsNaN(d1) || math.IsInf(d1, 0) || math.IsNaN(d2) || math.IsInf(d2, 0) {
		return 0, 0
	}
	return d1, d2
}

// negBinHooks are the negative binomial sweep's test hooks: noQ drops the
// shape proposal's q ratio; stale keeps the control variate's sums g and
// H at the centre's shape while each datum's expansion follows φ (the
// bias the rebuild removes).
type negBinHooks struct{ noQ, stale bool }

// negBinCentre is the centre of the negative binomial sweep: the
// Laplace-EM centre of w given φ, then φ's conditional mode given the
// centre's linear predictors, twice (from the moment estimate of φ),
// and the shape's sd there; once per run (the run cache).
func negBinCentre(name string, t *exactmh.Target, nb NegBinomialEnergy, lay Layout, base exactmh.Prior) (centre, sd []float64, err error) {
	c, err := shared(t, "multilevel/negbincentre", func() ([2][]float64, error) {
		y := nb.Counts()
		sc, err := newShapeCond(y)
		if err != nil {
			return [2][]float64{}, fmt.Errorf("%s: %w", name, err)
		}
		var m, m2 float64
		for _, v := range y {
			m, m2 = m+v, m2+v*v
		}
		m /= float64(len(y))
		v := m2/float64(len(y)) - m*m
		phi := 10.0
		if v > m && m > 0 {
			phi = math.Min(1e3, math.Max(1e-2, m*m/(v-m)))
		}
		l := math.Log(phi)
		D := nb.Dim() - 1
		eta := make([]float64, len(y))
		var w, wsd []float64
		full := make([]float64, D+1)
		for range 2 {
			view := nb.ShapeView(math.Exp(l))
			it, err := exactmh.NewTarget(&exactmh.Posterior{Energy: view, Prior: base})
			if err != nil {
				return [2][]float64{}, err
			}
			if w, wsd, err = multilevelCenter(t.RunContext(), it, lay); err != nil {
				return [2][]float64{}, fmt.Errorf("%s: the Laplace-EM centre at shape %.4g: %w", name, math.Exp(l), err)
			}
			for i := range eta {
				eta[i], _ = view.LinearPredictors(i, w, w)
			}
			copy(full, w)
			var lsd float64
			l, lsd = sc.shapeNewton(l, eta, func(x float64) float64 {
				full[D] = x
				return t.LogPrior(full)
			})
			full[D] = l
			wsd = append(wsd[:D:D], lsd)
		}
		if math.IsNaN(l) || math.IsInf(l, 0) {
			return [2][]float64{}, fmt.Errorf("%s: the shape's conditional mode at the centre is %v", name, l)
		}
		return [2][]float64{slices.Clone(full), wsd}, nil
	})
	return c[0], c[1], err
}

// negBinChain is GroupGibbs's negative binomial sweep: a GroupGibbs sweep
// of w given φ (the inner chain, whose energy is the chain's own view at
// φ and whose control variate's sums are rebuilt whenever φ moves), then,
// every ShapeEvery-th sweep, log φ given w by a Newton–Metropolis–Hastings
// step reading every datum.
type negBinChain struct {
	inner   *gibbsChain
	t       *exactmh.Target
	view    ShapeGLM
	sc      *shapeCond
	hooks   negBinHooks
	d       int       // D + 1
	ref     float64   // φ̂, the centre's shape
	theta   []float64 // (w, log φ)
	eta, mu []float64 // η_i at the sweep's w, and e^{η_i}
	lpTheta []float64 // scratch for the prior in ℓ
	// The control variate's sums at φ (H's values in the inner chain's
	// order and the gradient) are the chain's own; cols and vals are the
	// rebuild's row buffers.
	cols            []int32
	vals            []float64
	hLong           []int32      // row of H → its inverse map's index in hInv, −1: none (initHPos)
	hInv            []int32      // the long rows' column → index in H's values, −1: absent
	sumsAt          float64      // the φ of the sums
	muHat           []float64    // μ̂_i = e^{ẑ_i}, ẑ_i the centre's linear predictors (shared)
	pats            *rowPatterns // the rows' positions in H's values (shared; nil: hPos)
	every           int          // the shape's update every every-th sweep (ShapeEvery)
	sweep           uint64       // sweeps made, for the schedule (checkpointed)
	rebuilt         int          // data read by the last rebuild
	shapeTried, acc float64
}

// rowPatterns are the positions in H's values of the entries a row's
// outer product adds to, per distinct set of columns (a pattern: with
// one factor, one per level): pos[off[k]:off[k+1]] lists them in the
// order setShape adds, (j, c) then (c, j) for c ≠ j, so that the rebuild
// adds by index, with no search. id[i] is row i's pattern.
type rowPatterns struct {
	id       []int32
	off, pos []int32
}

// rowPatternsMax is the most positions the patterns may hold (beyond it
// setShape searches through hPos instead).
const rowPatternsMax = 1 << 24

// initPatterns returns the rows' patterns, or nil if they would hold
// more than rowPatternsMax positions.
func (c *negBinChain) initPatterns() (*rowPatterns, error) {
	n := c.view.Len()
	p := &rowPatterns{id: make([]int32, n), off: []int32{0}}
	seen := map[string]int32{}
	var key []byte
	cols, vals := c.cols, c.vals
	for i := range n {
		cols, vals = c.view.SparseRow(i, cols[:0], vals[:0])
		key = key[:0]
		for _, col := range cols {
			key = binary.LittleEndian.AppendUint32(key, uint32(col))
		}
		if k, ok := seen[string(key)]; ok {
			p.id[i] = k
			continue
		}
		for k0, j := range cols {
			for _, col := range cols[k0:] {
				q, ok := c.hPos(j, col)
				if !ok {
					return nil, fmt.Errorf("GroupGibbs: datum %d's entry (%d, %d) outside the centre's Hessian pattern", i, j, col)
				}
				p.pos = append(p.pos, int32(q))
				if col != j {
					q, _ = c.hPos(col, j)
					p.pos = append(p.pos, int32(q))
				}
			}
		}
		if len(p.pos) > rowPatternsMax {
			return nil, nil
		}
		k := int32(len(p.off) - 1)
		seen[string(key)] = k
		p.off = append(p.off, int32(len(p.pos)))
		p.id[i] = k
	}
	c.cols, c.vals = cols, vals
	return p, nil
}

// startNegBin starts the negative binomial sweep at θ0 (centre nil: the
// shared negBinCentre).
func startNegBin(name string, t *exactmh.Target, k GroupGibbs, nb NegBinomialEnergy, lay Layout, base exactmh.Prior, theta0 []float64) (*negBinChain, error) {
	if t.Beta() != 1 {
		return nil, fmt.Errorf("%s: a negative binomial multilevel model at inverse temperature %v: the negative binomial sweep samples β = 1 only", name, t.Beta())
	}
	if k.Joint > 0 {
		return nil, fmt.Errorf("%s: Joint = %d on a negative binomial multilevel model: its sweep makes no joint moves (Joint 0)", name, k.Joint)
	}
	centre := k.Center
	if centre == nil {
		var err error
		if centre, _, err = negBinCentre(name, t, nb, lay, base); err != nil {
			return nil, err
		}
	}
	d := nb.Dim()
	if len(centre) != d {
		return nil, fmt.Errorf("%s: len(Center) = %d, want %d", name, len(centre), d)
	}
	ref := math.Exp(centre[d-1])
	if !(ref > 0) || math.IsInf(ref, 0) {
		return nil, fmt.Errorf("%s: the centre's shape e^%v, want finite > 0", name, centre[d-1])
	}
	sc, err := shared(t, "multilevel/negbincond", func() (*shapeCond, error) { return newShapeCond(nb.Counts()) })
	if err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	// The inner target, w given φ̂: one per run, so that the chains share
	// GroupGibbs's terms (its alias tables and the centre's sums).
	it, err := shared(t, fmt.Sprintf("multilevel/negbininner/%p", &centre[0]), func() (*exactmh.Target, error) {
		return exactmh.NewTarget(&exactmh.Posterior{Energy: nb.ShapeView(ref), Prior: base})
	})
	if err != nil {
		return nil, err
	}
	ik := k
	ik.Center = centre[:d-1]
	ik.crossOff = true // the bound's scale k3Scale multiplies the pairs' weights, not coded ones
	ic, err := ik.Start(it, theta0[:d-1])
	if err != nil {
		return nil, err
	}
	inner, ok := ic.(*gibbsChain)
	if !ok {
		return nil, fmt.Errorf("%s: the inner chain is a %T, want GroupGibbs's", name, ic)
	}
	// The chain's own view and sums.
	terms := *inner.gibbsTerms
	terms.gradSum, terms.hVal = slices.Clone(terms.gradSum), slices.Clone(terms.hVal)
	inner.gibbsTerms = &terms
	c := &negBinChain{inner: inner, t: t, view: nb.ShapeView(ref), sc: sc, hooks: k.negBin, d: d, ref: ref,
		theta: slices.Clone(theta0), eta: make([]float64, nb.Len()), mu: make([]float64, nb.Len()), lpTheta: slices.Clone(theta0)}
	inner.rows, inner.rowsErr = c.view, nil
	// The inner chain's target, the chain's own: the shared one (it)
	// carries the run's cache of terms, but a count there would mix the
	// chains' evaluations (Info.Evals depends on the workers otherwise).
	if inner.t, err = exactmh.NewTarget(&exactmh.Posterior{Energy: c.view, Prior: base}); err != nil {
		return nil, err
	}
	c.initHPos()
	// The rebuild's row buffers, at the longest row.
	for i := range nb.Len() {
		c.cols, c.vals = c.view.SparseRow(i, c.cols[:0], c.vals[:0])
	}
	c.muHat, err = shared(t, fmt.Sprintf("multilevel/negbinmuhat/%p", &centre[0]), func() ([]float64, error) {
		mu := make([]float64, nb.Len())
		for i := range mu {
			z, _ := c.view.LinearPredictors(i, centre[:d-1], centre[:d-1])
			mu[i] = math.Exp(z)
		}
		return mu, nil
	})
	if err != nil {
		return nil, err
	}
	if c.pats, err = shared(t, fmt.Sprintf("multilevel/negbinpats/%p", &centre[0]), c.initPatterns); err != nil {
		return nil, err
	}
	c.every = k.ShapeEvery
	if c.every <= 0 {
		c.every = DefaultShapeEvery
	}
	c.sumsAt = ref // the shared terms' sums
	if _, err := c.setShape(theta0[d-1]); err != nil {
		return nil, err
	}
	return c, nil
}

// setShape sets the view's φ = e^l, the bound's scale max(1, φ/φ̂) and,
// unless the sums are at φ already, rebuilds the control variate's sums
// g = Σ_i f_i′(ẑ_i)x_i and H = Σ_i f_i″(ẑ_i)x_ix_iᵀ at the centre for φ
// in one pass over the data, returning the data it read. With r = μ̂_i/φ
// (μ̂_i = e^{ẑ_i}, kept from the start: no exponential here),
// f′ = (y_i + φ)·r/(1 + r) − y_i and f″ = (y_i + φ)·r/(1 + r)², the
// loss's derivatives (model's negBinShape.LossDerivs, to rounding). Each
// row adds f_i″·x_ij·x_ic to H's entries (j, c) and (c, j) in the order
// of the data, with no allocation (the row buffers are the chain's, sized
// at start). The entries' positions are the row's pattern's (rowPatterns),
// else found through the long rows' inverse maps (the fixed effects',
// touched by every datum) or by binary search in a short row (hPos).
func (c *negBinChain) setShape(l float64) (int, error) {
	phi := math.Exp(l)
	c.view.SetShape(phi, c.ref)
	c.inner.k3Scale = math.Max(1, phi/c.ref)
	if c.hooks.stale || phi == c.sumsAt {
		return 0, nil
	}
	g := c.inner.gibbsTerms
	clear(g.gradSum)
	clear(g.hVal)
	cols, vals := c.cols, c.vals
	y := c.sc.y
	for i, mu := range c.muHat {
		r := mu / phi
		pm, pp := r/(1+r), 1/(1+r)
		if math.IsInf(r, 1) {
			pm, pp = 1, 0
		}
		f1, f2 := (y[i]+phi)*pm-y[i], (y[i]+phi)*pm*pp
		if math.IsNaN(f1+f2) || math.IsInf(f1+f2, 0) {
			return 0, fmt.Errorf("GroupGibbs: datum %d at the centre and shape %v: f′ = %v, f″ = %v, want finite", i, phi, f1, f2)
		}
		cols, vals = c.view.SparseRow(i, cols[:0], vals[:0])
		for q, col := range cols {
			g.gradSum[col] += f1 * vals[q]
		}
		if c.pats != nil {
			pos := c.pats.pos[c.pats.off[c.pats.id[i]]:c.pats.off[c.pats.id[i]+1]]
			q := 0
			for k0, j := range cols {
				a := f2 * vals[k0]
				for k := k0; k < len(cols); k++ {
					v := a * vals[k]
					g.hVal[pos[q]] += v
					q++
					if cols[k] != j {
						g.hVal[pos[q]] += v
						q++
					}
				}
			}
			continue
		}
		for k0, j := range cols {
			a := f2 * vals[k0]
			for k := k0; k < len(cols); k++ {
				col := cols[k]
				v := a * vals[k]
				p, ok := c.hPos(j, col)
				if !ok {
					return 0, fmt.Errorf("GroupGibbs: datum %d's entry (%d, %d) outside the centre's Hessian pattern", i, j, col)
				}
				g.hVal[p] += v
				if col != j {
					p, _ = c.hPos(col, j)
					g.hVal[p] += v
				}
			}
		}
	}
	c.cols, c.vals = cols, vals
	c.sumsAt = phi
	c.t.Count(c.view.Len())
	return c.view.Len(), nil
}

// hPos returns the index in H's values of entry (r, col): through the
// long row's inverse map where r has one (hInv), else a binary search of
// row r's columns.
func (c *negBinChain) hPos(r, col int32) (int, bool) {
	g := c.inner.gibbsTerms
	if k := c.hLong[r]; k >= 0 {
		p := c.hInv[int(k)*len(c.hLong)+int(col)]
		return int(p), p >= 0
	}
	lo, hi := g.hPtr[r], g.hPtr[r+1]
	p, ok := slices.BinarySearch(g.hCol[lo:hi], col)
	return lo + p, ok
}

// hLongRow is the length from which a row of H gets an inverse map, and
// hInvMax the most entries the maps may hold: the rows of the fixed
// effects (or of a factor's few large levels), which every datum's
// outer product touches, cost O(1) a lookup instead of a binary search
// over up to D columns.
const (
	hLongRow = 32
	hInvMax  = 1 << 24
)

// initHPos builds the long rows' inverse maps, longest first, within
// hInvMax entries.
func (c *negBinChain) initHPos() {
	g := c.inner.gibbsTerms
	d := len(g.hPtr) - 1
	c.hLong = make([]int32, d)
	var long []int
	for r := range d {
		c.hLong[r] = -1
		if g.hPtr[r+1]-g.hPtr[r] >= hLongRow {
			long = append(long, r)
		}
	}
	slices.SortStableFunc(long, func(a, b int) int { return (g.hPtr[b+1] - g.hPtr[b]) - (g.hPtr[a+1] - g.hPtr[a]) })
	long = long[:min(len(long), hInvMax/max(d, 1))]
	c.hInv = make([]int32, len(long)*d)
	for i := range c.hInv {
		c.hInv[i] = -1
	}
	for k, r := range long {
		c.hLong[r] = int32(k)
		for p := g.hPtr[r]; p < g.hPtr[r+1]; p++ {
			c.hInv[k*d+int(g.hCol[p])] = int32(p)
		}
	}
}

// Position returns θ = (w, log φ).
func (c *negBinChain) Position() []float64 { return c.theta }

// Step makes one sweep: GroupGibbs's of w given φ, then the shape's
// update.
func (c *negBinChain) Step(rng *rand.Rand) (exactmh.Info, error) {
	before := c.inner.t.Evals()
	info, err := c.inner.Step(rng)
	c.t.Count(int(c.inner.t.Evals() - before))
	if err != nil {
		return info, err
	}
	D := c.d - 1
	copy(c.theta[:D], c.inner.theta)
	if (c.sweep+1)%uint64(c.every) != 0 {
		c.sweep++
		return info, nil
	}
	c.rebuilt = 0
	moved, err := c.shapeStep(rng)
	if err != nil {
		return exactmh.Info{}, err
	}
	c.sweep++
	info.Batch += len(c.eta) + c.rebuilt
	info.Accepted = info.Accepted || moved
	return info, nil
}

// DefaultShapeEvery is GroupGibbs's ShapeEvery when unset: the shape's
// update every third sweep. Its cost (a pass for the linear predictors,
// two over them for the conditional, one for the rebuild when the shape
// moves) is several effects' sweeps, and the shape's conditional given
// the effects is nearly its marginal (its sd ∝ 1/√N, the Newton proposal
// close to an independent draw from it), so that the shape's own ESS is
// about one per update: every third sweep gives it about a third of the
// draws, which on the tall rows (figures/bench/families_agreement.txt)
// is still above the slowest effects', at a fraction of the cost.
const DefaultShapeEvery = 3

// shapeStep updates ℓ = log φ given w by Metropolis–Hastings with the
// Newton proposal ℓ′ ~ N(ℓ − G(ℓ)/H(ℓ), 1/H(ℓ)), G and H the first two
// derivatives of −log π(ℓ | w) (a unit random-walk step where H ≤ 0),
// reading every datum once for η_i and computing the conditional at ℓ
// and ℓ′ in one pass over them (docs/multilevel.md, "Negative binomial
// sweep").
func (c *negBinChain) shapeStep(rng *rand.Rand) (bool, error) {
	D := c.d - 1
	w := c.theta[:D]
	for lo := 0; lo < len(c.eta); lo += chunk {
		if err := c.t.Interrupted(); err != nil {
			return false, err
		}
		for i := lo; i < min(lo+chunk, len(c.eta)); i++ {
			c.eta[i], _ = c.view.LinearPredictors(i, w, w)
			c.mu[i] = math.Exp(c.eta[i])
		}
	}
	c.t.Count(len(c.eta))
	copy(c.lpTheta, c.theta)
	logPrior := func(l float64) float64 {
		c.lpTheta[D] = l
		return c.t.LogPrior(c.lpTheta)
	}
	l := c.theta[D]
	cur := c.sc.eval(l, c.eta, c.mu)
	m, v := newtonProposal(cur, l, logPrior)
	lNew := m + math.Sqrt(v)*rng.NormFloat64()
	nxt := c.sc.eval(lNew, c.eta, c.mu)
	mr, vr := newtonProposal(nxt, lNew, logPrior)
	lpNew, lpCur := logPrior(lNew), logPrior(l)
	if math.IsInf(lpNew, -1) || math.IsNaN(nxt.v) {
		c.shapeTried++
		return false, nil
	}
	logR := -(nxt.v - cur.v) + lpNew - lpCur
	if !c.hooks.noQ {
		logR += logNormal(l, mr, vr) - logNormal(lNew, m, v)
	}
	c.shapeTried++
	if !(logR >= 0 || rng.Float64() < math.Exp(logR)) {
		return false, nil
	}
	c.acc++
	c.theta[D] = lNew
	n, err := c.setShape(lNew)
	c.rebuilt = n
	if err != nil {
		return false, err
	}
	return true, nil
}

// newtonProposal returns the Newton proposal's mean and variance from ℓ
// given V, V′, V″ there.
func newtonProposal(s shapeVals, l float64, logPrior func(float64) float64) (m, v float64) {
	g, h := priorDerivs(logPrior, l)
	g, h = s.d1-g, s.d2-h
	if !(h > 0) || math.IsInf(h, 0) || math.IsNaN(g) {
		return l, 1
	}
	return l - g/h, 1 / h
}

// logNormal returns log N(x; m, v) up to a constant.
func logNormal(x, m, v float64) float64 {
	r := x - m
	return -r*r/(2*v) - math.Log(v)/2
}

// Params reports the inner sweep's rates and shape_accept.
func (c *negBinChain) Params() map[string]float64 {
	ps := c.inner.Params()
	ps["shape_accept"] = c.acc / max(c.shapeTried, 1)
	return ps
}

// MarshalState saves the inner chain's counters, the shape's and the
// sweeps made (the schedule's phase).
func (c *negBinChain) MarshalState() ([]byte, error) {
	b, err := c.inner.MarshalState()
	if err != nil {
		return nil, err
	}
	b = binary.LittleEndian.AppendUint64(b, math.Float64bits(c.shapeTried))
	b = binary.LittleEndian.AppendUint64(b, math.Float64bits(c.acc))
	return binary.LittleEndian.AppendUint64(b, c.sweep), nil
}

// UnmarshalState restores what MarshalState saved.
func (c *negBinChain) UnmarshalState(b []byte) error {
	if len(b) < 24 {
		return errors.New("GroupGibbs: negative binomial checkpoint state too short")
	}
	n := len(b) - 24
	c.shapeTried = math.Float64frombits(binary.LittleEndian.Uint64(b[n:]))
	c.acc = math.Float64frombits(binary.LittleEndian.Uint64(b[n+8:]))
	c.sweep = binary.LittleEndian.Uint64(b[n+16:])
	return c.inner.UnmarshalState(b[:n])
}

// AbandonStep undoes the inner sweep (the shape's update, the sweep's
// last, is abandoned before it changes θ).
func (c *negBinChain) AbandonStep() {
	c.inner.AbandonStep()
	copy(c.theta[:c.d-1], c.inner.theta)
}

var _ interface{ AbandonStep() } = (*negBinChain)(nil)

// chooseNegBin is the automatic default's choice on a negative binomial
// multilevel model: GroupGibbs's negative binomial sweep, with no pilot.
func chooseNegBin(c *exactmh.Choice, p *exactmh.Posterior, t *exactmh.Target, nb NegBinomialEnergy, lay Layout, base exactmh.Prior) error {
	centre, sd, err := negBinCentre("GroupGibbs", t, nb, lay, base)
	if err != nil {
		return err
	}
	c.Name, c.Kernel, c.Posterior, c.Center, c.CenterSD = "GroupGibbs", GroupGibbs{Center: centre}, p, centre, sd
	c.Reason = fmt.Sprintf("a negative binomial multilevel model with its shape estimated (N = %d): GroupGibbs's sweep of the effects given the shape (minibatch, its control variate rebuilt when the shape moves), then, every %d sweeps, the shape given them by a Newton–Metropolis step reading every datum; NUTS reads every datum at each leapfrog step", p.Len(), DefaultShapeEvery)
	return nil
}
