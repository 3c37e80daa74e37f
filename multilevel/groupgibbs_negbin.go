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

// countSums returns Σ_k c_k·log(φ + k), Σ_k c_k/(φ + k) and
// Σ_k c_k/(φ + k)² at φ = f, c_k the number of data with y > k: the
// log-gamma ratio's sum log Γ(y + φ) − log Γ(φ) = Σ_{k<y} log(φ + k) and
// its first two derivatives in φ (c_k is 0 from the largest y on).
func (s *shapeCond) countSums(f float64) (lk, d1k, d2k float64) {
	for k, c := range s.ck {
		if c == 0 {
			break
		}
		r := 1 / (f + float64(k))
		lk += c * math.Log(f+float64(k))
		d1k += c * r
		d2k += c * r * r
	}
	return lk, d1k, d2k
}

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
	lk, d1k, d2k := s.countSums(f)
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
// shape proposal's q ratio; stale makes each datum's expansion follow φ
// while the control variate's sums stay at φ̂ (ΣÛ_i ≠ the sums);
// dropBlock leaves block 1's part out of the shape test's thinning rate;
// noCross leaves the cross term Σ_i k_ηℓ,i·δη_i out of the shape test's
// control variate sums (each datum's remainder keeps it); rEta and rL,
// if positive, replace the shape test's region (negBinShapeREta, …).
type negBinHooks struct {
	noQ, stale, dropBlock, noCross bool
	rEta, rL                       float64
	// checkBound checks every datum of each block the effects' sweep
	// updates against its bound; noFloor leaves the mismatch out of
	// the bound (λ = 1, ε² = 0).
	checkBound, noFloor bool
}

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
// φ while its control variate stays the expansion at (ŵ, φ̂), the bound
// carrying the mismatch: setShape), then, every ShapeEvery-th sweep,
// log φ given w by Metropolis–Hastings decided by a minibatch test with
// control variates in (η, log φ) (shapeStepMB), or by reading every datum
// where the test's region does not hold.
type negBinChain struct {
	inner   *gibbsChain
	t       *exactmh.Target
	view    ShapeGLM
	sc      *shapeCond
	sm      *shapeMB // the shape test's terms (shared)
	hooks   negBinHooks
	d       int       // D + 1
	ref     float64   // φ̂, the centre's shape
	theta   []float64 // (w, log φ)
	eta, mu []float64 // η_i at the sweep's w, and e^{η_i} (the full pass)
	lpTheta []float64 // scratch for the prior in ℓ
	muHat   []float64 // μ̂_i = e^{ẑ_i}, ẑ_i the centre's linear predictors (shared)
	// The control variate's sums at φ̂ (g₀, H₀: the shared terms') and
	// their slopes in φ (g₁, H₁, shared); the chain's sums are
	// g₀ + Δφ·g₁, H₀ + Δφ·H₁ (its own, in the inner chain), and expand
	// each datum's expansion to match.
	g0, h0, g1, h1 []float64
	q              []float64 // the shape test's Q in H's order (shared)
	expand         *negBinExpand
	every          int    // the shape's update every every-th sweep (ShapeEvery)
	sweep          uint64 // sweeps made, for the schedule (checkpointed)
	read           int    // data read by the last shape update
	// The shape test's scratch: ‖w_b − ŵ_b‖² by block, the components'
	// cumulative rates, a row's blocks.
	dsq, cum, dw []float64
	rb           rowBlocks
	// Counts for Params: shape updates tried, accepted, decided by the
	// full pass.
	shapeTried, acc, full float64
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
	// GroupGibbs's terms (its alias tables and the centre's sums, which
	// stay at φ̂).
	it, err := shared(t, fmt.Sprintf("multilevel/negbininner/%p", &centre[0]), func() (*exactmh.Target, error) {
		return exactmh.NewTarget(&exactmh.Posterior{Energy: nb.ShapeView(ref), Prior: base})
	})
	if err != nil {
		return nil, err
	}
	ik := k
	ik.Center = centre[:d-1]
	ik.crossOff = true // the bound's scale k3Scale multiplies the pairs' weights, not coded ones
	ik.cubicOff = true // the fixed block's cubic term is f‴ at one shape; the bound's floor is for the quadratic expansion
	ic, err := ik.Start(it, theta0[:d-1])
	if err != nil {
		return nil, err
	}
	inner, ok := ic.(*gibbsChain)
	if !ok {
		return nil, fmt.Errorf("%s: the inner chain is a %T, want GroupGibbs's", name, ic)
	}
	c := &negBinChain{inner: inner, t: t, view: nb.ShapeView(ref), sc: sc, hooks: k.negBin, d: d, ref: ref,
		theta: slices.Clone(theta0), lpTheta: slices.Clone(theta0)}
	inner.rows, inner.rowsErr = c.view, nil
	inner.checkBound = c.hooks.checkBound
	// The chain's own sums, from the shared ones at φ̂.
	terms := *inner.gibbsTerms
	c.g0, c.h0 = terms.gradSum, terms.hVal
	terms.gradSum, terms.hVal = slices.Clone(terms.gradSum), slices.Clone(terms.hVal)
	inner.gibbsTerms = &terms
	c.expand = &negBinExpand{ShapeGLM: it.Energy().(ShapeGLM), y: sc.y, phiHat: ref}
	inner.expand = c.expand
	// The inner chain's target, the chain's own: the shared one (it)
	// carries the run's cache of terms, but a count there would mix the
	// chains' evaluations (Info.Evals depends on the workers otherwise).
	if inner.t, err = exactmh.NewTarget(&exactmh.Posterior{Energy: c.view, Prior: base}); err != nil {
		return nil, err
	}
	c.muHat, err = shared(t, fmt.Sprintf("multilevel/negbinmuhat/%p", &centre[0]), func() ([]float64, error) {
		mu := make([]float64, nb.Len())
		for i := range mu {
			z, _ := c.view.LinearPredictors(i, centre[:d-1], centre[:d-1])
			mu[i] = math.Exp(z)
			if math.IsInf(mu[i], 0) {
				return nil, fmt.Errorf("%s: datum %d's linear predictor at the centre is %v, want < 709", name, i, z)
			}
		}
		return mu, nil
	})
	if err != nil {
		return nil, err
	}
	c.rb.init(inner.blocks)
	sl, err := shared(t, fmt.Sprintf("multilevel/negbinslopes/%p", &centre[0]), func() ([3][]float64, error) {
		g1, h1, q, err := negBinSlopes(inner.gibbsTerms, c.view, sc.y, c.muHat, ref)
		return [3][]float64{g1, h1, q}, err
	})
	if err != nil {
		return nil, err
	}
	c.g1, c.h1, c.q = sl[0], sl[1], sl[2]
	if c.sm, err = shared(t, fmt.Sprintf("multilevel/negbinshape/%p/%v/%v", &centre[0], c.hooks.rEta, c.hooks.rL), func() (*shapeMB, error) {
		return c.newShapeMB(name, centre)
	}); err != nil {
		return nil, err
	}
	c.dsq = make([]float64, inner.nb)
	c.dw = make([]float64, d-1)
	c.cum = make([]float64, inner.nb+1)
	c.every = k.ShapeEvery
	if c.every <= 0 {
		c.every = DefaultShapeEvery
	}
	c.setShape(theta0[d-1])
	return c, nil
}

// setShape sets the view's φ = e^l, the control variate's sums
// g₀ + Δφ·g₁, H₀ + Δφ·H₁ (O(D + nnz(H)), no datum read) and the inner
// chain's bound for the mismatch between the data's energy at φ and the
// expansion f̃ (negBinExpand; docs/multilevel.md, "Negative binomial
// sweep"). Datum i's remainder R_i = f_i(·; φ) − f̃_i has
//
//	∂_zR_i(ζ) = [f′(ζ; φ) − f′(ẑ; φ) − f″(ẑ; φ)(ζ − ẑ)] + e₁ + e₂(ζ − ẑ),
//
// e₁ = f′(ẑ; φ) − f̃′ = Δφ²/2·∂²_φf′(ẑ; t), e₂ = f″(ẑ; φ) − f̃″ =
// Δφ²/2·∂²_φf″(ẑ; t) for some t between φ̂ and φ; with d = |ζ − ẑ| the
// bracket is at most k_i·d²/2, k_i = (y_i + φ̂)·nbK3·max(1, φ/φ̂) ≥
// sup|f‴(·; φ)|. With σ = μ/(φ + μ), τ = σ(1 − σ), ρ = 1 − 2σ,
//
//	∂²_φf′ = −2σ²(1 − σ)/φ + 2yσ(1 − σ)²/φ²,
//	∂²_φf″ = −τ(ρ + 6τ − 1)/φ − yτ(6τ − 1 − ρ)/φ²,
//
// so |∂²_φf′| ≤ 8/27·(1/φ₋ + y/φ₋²), |∂²_φf″| ≤ (1/φ₋ + y/φ₋²)/2 (φ₋ =
// min(φ, φ̂); TestNegBinPhiDerivs), and (1/φ₋ + y/φ₋²)/(y + φ̂) ≤ c₀ =
// max(1/(φ₋φ̂), 1/φ₋²) bounds |e₁|/k_i ≤ e₁ₖ = Δφ²·4/27·c₀/nbK3 and
// |e₂|/k_i ≤ e₂ₖ = Δφ²/4·c₀/nbK3 whatever y_i. The chain's bound is
// λk_i·B_i/2·Σ_b a_ib²(F_b + ε²) ≥ λk_i/2·(d² + B_iS_iε²) (S_i = Σ_b a_ib²,
// d² ≤ B_iΣ_b a_ib²F_b), which covers k_id²/2 + |e₁| + |e₂|d when, by
// |e₂|d ≤ (λ − 1)k_id²/2 + e₂²/(2(λ − 1)k_i),
//
//	ε² ≥ [2e₁ₖ/λ + e₂ₖ²/(λ(λ − 1))]/(B_iS_i),
//
// which ε² below satisfies for every datum with (B_iS_i)₋ = min_i B_iS_i
// (rows with S_i = 0 do not move). The rate and each datum's bound scale
// by λ·max(1, φ/φ̂) (k3Scale), the pairs' factors by + ε² (facFloor): both
// second order in Δφ.
func (c *negBinChain) setShape(l float64) {
	phi := math.Exp(l)
	c.view.SetShape(phi, c.ref)
	ic := c.inner
	dphi := phi - c.ref
	c.expand.dphi = dphi
	if !c.hooks.stale {
		g := ic.gibbsTerms
		for j, v := range c.g0 {
			g.gradSum[j] = v + dphi*c.g1[j]
		}
		for p, v := range c.h0 {
			g.hVal[p] = v + dphi*c.h1[p]
		}
	}
	if dphi == 0 || c.hooks.noFloor {
		ic.k3Scale, ic.facFloor = math.Max(1, phi/c.ref), 0
		return
	}
	lo := math.Min(phi, c.ref)
	c0 := math.Max(1/(lo*c.ref), 1/(lo*lo))
	e1 := dphi * dphi * 4 / 27 * c0 / nbK3
	e2 := dphi * dphi / 4 * c0 / nbK3
	lam1 := math.Min(1, math.Max(16*e2, 1e-9)) // λ − 1
	lam := 1 + lam1
	ic.k3Scale = lam * math.Max(1, phi/c.ref)
	ic.facFloor = (2*e1/lam + e2*e2/(lam*lam1)) / c.sm.bsMin
}

// nbK3 is sup_s |σ(s)(1 − σ(s))(1 − 2σ(s))| = 1/(6√3): the NB2 loss at a
// fixed shape has |f‴| ≤ (y + φ)·nbK3 (model's negBinShape).
var nbK3 = 1 / (6 * math.Sqrt(3))

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
	c.read = 0
	moved, err := c.shapeStep(rng)
	if err != nil {
		return exactmh.Info{}, err
	}
	c.sweep++
	info.Batch += c.read
	info.Accepted = info.Accepted || moved
	return info, nil
}

// shapeStepFull updates ℓ = log φ given w by Metropolis–Hastings with the
// Newton proposal ℓ′ ~ N(ℓ − G(ℓ)/H(ℓ), 1/H(ℓ)), G and H the first two
// derivatives of −log π(ℓ | w) (a unit random-walk step where H ≤ 0),
// reading every datum once for η_i and computing the conditional at ℓ
// and ℓ′ in one pass over them: the update where w is outside the shape
// test's region (shapeStep).
func (c *negBinChain) shapeStepFull(rng *rand.Rand) (bool, error) {
	D := c.d - 1
	w := c.theta[:D]
	if c.eta == nil {
		c.eta, c.mu = make([]float64, c.view.Len()), make([]float64, c.view.Len())
	}
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
	c.read += len(c.eta)
	c.full++
	_, lNew, logR, ok := c.shapeProposal(rng, func(l float64) shapeVals { return c.sc.eval(l, c.eta, c.mu) })
	if !ok {
		return false, nil
	}
	if !(logR >= 0 || rng.Float64() < math.Exp(logR)) {
		return false, nil
	}
	c.accept(lNew)
	return true, nil
}

// shapeProposal draws ℓ′ from the Newton proposal at ℓ of the shape's
// conditional as vals gives it (value, first and second derivatives in ℓ)
// and returns ℓ, ℓ′ and the Metropolis–Hastings log ratio of vals's
// energies, the prior and the two proposal densities (the reverse from
// ℓ′'s Newton step); ok is false where ℓ′ has no prior mass or no value.
func (c *negBinChain) shapeProposal(rng *rand.Rand, vals func(l float64) shapeVals) (l, lNew, logR float64, ok bool) {
	D := c.d - 1
	copy(c.lpTheta, c.theta)
	logPrior := func(l float64) float64 {
		c.lpTheta[D] = l
		return c.t.LogPrior(c.lpTheta)
	}
	l = c.theta[D]
	cur := vals(l)
	m, v := newtonProposal(cur, l, logPrior)
	lNew = m + math.Sqrt(v)*rng.NormFloat64()
	nxt := vals(lNew)
	mr, vr := newtonProposal(nxt, lNew, logPrior)
	lpNew, lpCur := logPrior(lNew), logPrior(l)
	c.shapeTried++
	if math.IsInf(lpNew, -1) || math.IsNaN(nxt.v) {
		return l, lNew, 0, false
	}
	logR = -(nxt.v - cur.v) + lpNew - lpCur
	if !c.hooks.noQ {
		logR += logNormal(l, mr, vr) - logNormal(lNew, m, v)
	}
	return l, lNew, logR, true
}

// accept moves ℓ to l.
func (c *negBinChain) accept(l float64) {
	c.acc++
	c.theta[c.d-1] = l
	c.setShape(l)
}

// Position returns θ = (w, log φ).
func (c *negBinChain) Position() []float64 { return c.theta }

// DefaultShapeEvery is GroupGibbs's ShapeEvery when unset: the shape's
// update every sweep. Decided by the minibatch test (shapeMB), it reads
// a few hundred data at N = 10⁶ and costs O(D + nnz(H) + max y) besides,
// less than the effects' sweep, and the shape's conditional given the
// effects is nearly its marginal (its sd ∝ 1/√N, the Newton proposal
// close to an independent draw from it).
const DefaultShapeEvery = 1

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
	ps["shape_full"] = c.full / max(c.shapeTried, 1)
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
	b = binary.LittleEndian.AppendUint64(b, math.Float64bits(c.full))
	return binary.LittleEndian.AppendUint64(b, c.sweep), nil
}

// UnmarshalState restores what MarshalState saved.
func (c *negBinChain) UnmarshalState(b []byte) error {
	if len(b) < 32 {
		return errors.New("GroupGibbs: negative binomial checkpoint state too short")
	}
	n := len(b) - 32
	c.shapeTried = math.Float64frombits(binary.LittleEndian.Uint64(b[n:]))
	c.acc = math.Float64frombits(binary.LittleEndian.Uint64(b[n+8:]))
	c.full = math.Float64frombits(binary.LittleEndian.Uint64(b[n+16:]))
	c.sweep = binary.LittleEndian.Uint64(b[n+24:])
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
	c.Reason = fmt.Sprintf("a negative binomial multilevel model with its shape estimated (N = %d): GroupGibbs's sweep of the effects given the shape (minibatch, its control variate following the shape to first order), then, every %d sweep(s), the shape given them by a Newton–Metropolis step decided by a minibatch test (control variates in the linear predictors and the shape); NUTS reads every datum at each leapfrog step", p.Len(), DefaultShapeEvery)
	return nil
}

// nbPhiDerivs returns ∂_φf′ and ∂_φf″ of the NB2 loss at (z, φ): with
// σ = μ/(φ + μ), ∂_φf′ = σ² − yσ(1 − σ)/φ and
// ∂_φf″ = 2σ²(1 − σ) − yσ(1 − σ)(1 − 2σ)/φ.
func nbPhiDerivs(y, z, phi float64) (d1, d2 float64) {
	r := math.Exp(z) / phi
	sig := r / (1 + r)
	if math.IsInf(r, 1) {
		sig = 1
	}
	s1 := sig * (1 - sig)
	return sig*sig - y*s1/phi, 2*sig*s1 - y*s1*(1-2*sig)/phi
}

// negBinExpand is the energy whose derivatives at the centre make each
// datum's expansion in the negative binomial sweep: the view at φ̂ with
// f′ and f″ moved to first order in Δφ = φ − φ̂,
// f̃′ = f′(ẑ; φ̂) + Δφ·∂_φf′(ẑ; φ̂), f̃″ = f″(ẑ; φ̂) + Δφ·∂_φf″(ẑ; φ̂),
// so that the control variate's sums follow φ as g₀ + Δφ·g₁,
// H₀ + Δφ·H₁ (negBinSlopes) with no pass over the data.
type negBinExpand struct {
	ShapeGLM // the view at φ̂ (never SetShape)
	y        []float64
	phiHat   float64
	dphi     float64
}

// LossDerivs returns f̃′, f̃″ at z.
func (e *negBinExpand) LossDerivs(i int, z float64) (f1, f2 float64) {
	f1, f2 = e.ShapeGLM.LossDerivs(i, z)
	d1, d2 := nbPhiDerivs(e.y[i], z, e.phiHat)
	return f1 + e.dphi*d1, f2 + e.dphi*d2
}

// negBinSlopes returns g₁ = Σ_i∂_φf′_i(ẑ_i; φ̂)·x_i, H₁'s values
// Σ_i∂_φf″_i(ẑ_i; φ̂)·x_ix_iᵀ and the shape test's Q = Σ_ik_ηηℓ,i·x_ix_iᵀ
// (shapeMB) in the order of the inner chain's H, in one pass over the
// data (entries found through the long rows' inverse maps, else by
// binary search of a short row).
func negBinSlopes(g *gibbsTerms, view ShapeGLM, y, muHat []float64, phiHat float64) (g1, h1, q []float64, err error) {
	d := len(g.hPtr) - 1
	g1, h1, q = make([]float64, d), make([]float64, len(g.hVal)), make([]float64, len(g.hVal))
	// The long rows' inverse maps, longest first, within hInvMax entries.
	long := make([]int32, d)
	var rows []int
	for r := range d {
		long[r] = -1
		if g.hPtr[r+1]-g.hPtr[r] >= hLongRow {
			rows = append(rows, r)
		}
	}
	slices.SortStableFunc(rows, func(a, b int) int { return (g.hPtr[b+1] - g.hPtr[b]) - (g.hPtr[a+1] - g.hPtr[a]) })
	rows = rows[:min(len(rows), hInvMax/max(d, 1))]
	inv := make([]int32, len(rows)*d)
	for i := range inv {
		inv[i] = -1
	}
	for k, r := range rows {
		long[r] = int32(k)
		for p := g.hPtr[r]; p < g.hPtr[r+1]; p++ {
			inv[k*d+int(g.hCol[p])] = int32(p)
		}
	}
	pos := func(r, col int32) (int, bool) {
		if k := long[r]; k >= 0 {
			p := inv[int(k)*d+int(col)]
			return int(p), p >= 0
		}
		lo, hi := g.hPtr[r], g.hPtr[r+1]
		p, ok := slices.BinarySearch(g.hCol[lo:hi], col)
		return lo + p, ok
	}
	var cols []int32
	var vals []float64
	for i, mu := range muHat {
		d1, d2 := nbPhiDerivs(y[i], math.Log(mu), phiHat)
		_, _, _, kq, _, _ := kDerivs(y[i], mu, phiHat)
		cols, vals = view.SparseRow(i, cols[:0], vals[:0])
		for q, col := range cols {
			g1[col] += d1 * vals[q]
		}
		for k0, j := range cols {
			for k := k0; k < len(cols); k++ {
				col := cols[k]
				x := vals[k0] * vals[k]
				p, ok := pos(j, col)
				if !ok {
					return nil, nil, nil, fmt.Errorf("GroupGibbs: datum %d's entry (%d, %d) outside the centre's Hessian pattern", i, j, col)
				}
				h1[p] += d2 * x
				q[p] += kq * x
				if col != j {
					p, _ = pos(col, j)
					h1[p] += d2 * x
					q[p] += kq * x
				}
			}
		}
	}
	return g1, h1, q, nil
}

// hLongRow is the length from which a row of H gets an inverse map in
// negBinSlopes, and hInvMax the most entries the maps may hold: the rows
// of the fixed effects, which every datum's outer product touches, cost
// O(1) a lookup instead of a binary search over up to D columns.
const (
	hLongRow = 32
	hInvMax  = 1 << 24
)
