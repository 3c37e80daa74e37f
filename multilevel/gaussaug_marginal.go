// Copyright ©2026 The exactmh Authors. All rights reserved.
// Use of this source code is governed by a BSD-style
// license that can be found in the LICENSE file.

package multilevel

import (
	"fmt"
	"math"
	"math/rand/v2"
)

// marginalWidth is the marginal scale move's slice width in s before
// warmup adapts it.
const marginalWidth = 0.5

// linearPredictors sets η_i = x_iᵀw + o_i at θ, one pass over the rows.
func (c *augChain) linearPredictors() {
	ptr, col, val, w := c.rows.ptr, c.rows.col, c.rows.val, c.theta
	for i := range c.eta {
		e := c.off[i]
		for k := ptr[i]; k < ptr[i+1]; k++ {
			e += val[k] * w[col[k]]
		}
		c.eta[i] = e
	}
}

// marginalScale is update 5 for term t, made once z is spent: a
// Metropolis–Hastings update by an overrelaxed Newton proposal
// (scaleProposal, from h's first two derivatives at the point: two data
// passes a move; TestAugmentMoments with the mutant newton-reverse), or
// with the hook newtonOff a slice sampling update (Neal, Ann. Statist. 31,
// 2003: stepping out by the width, at most 32 widths, then shrinkage;
// about six passes), of the position s along the orbit of the group
//
//	T_s: ℓ_t → ℓ_t + s, u_t → e^s·u_t;  every other scale ℓ → ℓ + k_t·s,
//	     every other location coordinate (β, other effects) → e^{k_t·s}·(·)
//
// under the probit likelihood itself, not z's. T_s∘T_r = T_{s+r}, and the
// state's density along the orbit in s (the group's Haar measure ds) is
//
//	h(s) = −Σ_i U_i(o_i + e^s·a_i + e^{k_t·s}·r_i) + log p(T_s θ) + (G_t + k_t(E − G_t))·s,
//
// a_i the term's part of η_i, r_i the rest less the offset, E = len(eff)
// the location coordinates (the Jacobian of the scalings): an exact
// update (Liu and Sabatti, Biometrika 87, 2000, the generalised Gibbs
// step, with any h-invariant kernel along the orbit). k_t = 0 is the
// non-centred update of τ_t given ũ_t = u_t/τ_t; k_t = τ_t²/(1 + Σ τ²) at
// the centre (asisTerm.k) follows a binary model's attenuation as well —
// the fixed effects and the other terms scale with the latent sd √(1 +
// Σ τ²), so a larger τ_t comes with larger β. Every earlier update
// conditions on z, which pins τ far more tightly than y does where each
// level holds a datum or two (the latent data say u, and so τ, to within
// about 1/√N); this one does not. Each evaluation reads every datum
// (counted).
//
// Collapsed levels. The term's single-datum levels S (asisTerm.sRow: a
// level whose effect enters one datum i alone, as c_i·u_g) are integrated
// out of the move's target: ∫ N(u; 0, τ²)·Φ(±(m_i + c_iu)) du =
// Φ(±m_i/√(1 + c_i²τ²)), m_i the rest of η_i, so datum i's energy is
// U_i(m_i/√(1 + c_i²τ_t²)) at T_s θ, the prior is taken with those effects
// at 0 plus |S|·ℓ_t (log N(0; 0, τ²) + ℓ is constant: the integral is 1),
// and T_s scales G_t − |S| effects, so the Jacobian is
// (G_t − |S| + k_t(E − G_t))·s. The slice update is then invariant for
// the marginal of θ without u_S, and drawCollapsed draws u_S from its
// conditional given y and the moved rest: together a blocked Gibbs update
// of (θ without u_S, u_S) that leaves π(θ) invariant. Given y a
// single-datum level's effect is nearly as wide as its prior (τ_mom ≈ 1.5
// against one binary datum), and the move no longer holds it fixed in
// the non-centred form while τ moves: on guimmun (1,063 of 1,595 mothers
// with one child) it doubles log τ_mom's bulk ESS
// (figures/bench/multilevel_real_augment.txt). TestAugmentCollapsedMoments
// and TestAugmentCollapsedSBC, with the mutants collapse-prior,
// collapse-jacobian and collapse-latent.
//
// Collapsed pairs. The Newton move integrates the term's two-datum
// levels P (asisTerm.pCol) out in the same way: their two data's energy is
// −log Φ₂ of the pair's latent data (pairLoss), the prior takes their
// effects at 0 plus |P|·ℓ_t, T_s scales G_t − |S| − |P| effects, and
// drawPairs draws each pair's effect from its conditional given both data
// after the move (docs/multilevel.md, "Probit by augmentation", update 5;
// TestAugmentCollapsedMoments with the mutants pair-rho, pair-product and
// pair-one). On guimmun it takes the 500 mothers of two children out of
// the effects the move holds in the non-centred form
// (figures/bench/multilevel_real_guimmun5.txt).
func (c *augChain) marginalScale(rng *rand.Rand, t *asisTerm) (moved float64) {
	th := c.theta
	kt := t.k
	ptr, col, val := c.rows.ptr, c.rows.col, c.rows.val
	for i := range c.a {
		var s float64
		for k := ptr[i]; k < ptr[i+1]; k++ {
			if t.in[col[k]] {
				s += val[k] * th[col[k]]
			}
		}
		c.a[i] = s
		c.r[i] = c.eta[i] - c.off[i] - s
	}
	nS, nP := len(t.sRow), len(t.pCol)
	scaled := t.levels - nS - nP // the term's effects T_s scales: the collapsed ones are integrated out
	if c.ah.collapseJacobian {
		scaled = t.levels
	}
	jac := float64(scaled) + kt*float64(len(c.eff)-t.levels)
	if c.ah.marginalNoJacobian {
		jac = 0
	}
	priorS := float64(nS + nP) // log ∫ N(u; 0, τ²) du = 0 = log N(0; 0, τ²) + ℓ + ½log 2π
	if c.ah.collapseNoPrior {
		priorS = 0
	}
	// move sets dst = T_s θ, the collapsed effects at 0.
	move := func(dst []float64, s float64) {
		copy(dst, th)
		e, ek := math.Exp(s), math.Exp(kt*s)
		for _, j := range c.eff {
			if t.in[j] {
				dst[j] *= e
			} else {
				dst[j] *= ek
			}
		}
		for _, j := range c.pxLog {
			if j == t.logTau {
				dst[j] += s
			} else {
				dst[j] += kt * s
			}
		}
		for _, j := range t.sCol {
			dst[j] = 0
		}
		for _, j := range t.pCol {
			dst[j] = 0
		}
	}
	tau2 := math.Exp(2 * th[t.logTau])
	lastU, lastNon := math.NaN(), math.NaN() // the last evaluation's energy, and its part off the collapsed data
	f := func(s float64) float64 {
		var u, uS float64
		if s == 0 && nS == 0 && !math.IsNaN(c.uCur) {
			u = c.uCur // the state's energy, the previous term's last evaluation
		} else if s == 0 && 2*nS < len(c.a) && !math.IsNaN(c.uCur) {
			// The state's energy with the collapsed data's terms swapped
			// for their integrated ones: 2|S| data read, not N.
			u = c.uCur
			for q, i := range t.sRow {
				v := t.sVal[q]
				u -= c.pe.Loss(int(i), c.eta[i])
				uS += c.pe.Loss(int(i), (c.off[i]+c.r[i])/math.Sqrt(1+v*v*tau2))
			}
			c.t.Count(2 * nS)
		} else {
			e, ek := math.Exp(s), math.Exp(kt*s)
			if nS == 0 {
				for i, ai := range c.a {
					u += c.pe.Loss(i, c.off[i]+e*ai+ek*c.r[i])
				}
			} else {
				t2 := tau2 * e * e
				for i, ai := range c.a {
					if q := t.sOf[i]; q >= 0 {
						v := t.sVal[q]
						uS += c.pe.Loss(i, (c.off[i]+ek*c.r[i])/math.Sqrt(1+v*v*t2))
					} else {
						u += c.pe.Loss(i, c.off[i]+e*ai+ek*c.r[i])
					}
				}
			}
			c.t.Count(len(c.a))
		}
		lastU, lastNon = u+uS, u
		u += uS
		move(c.next, s)
		v := -u + c.t.LogPrior(c.next) + priorS*c.next[t.logTau] + jac*s
		if math.IsNaN(v) {
			return math.Inf(-1)
		}
		return v
	}
	var x, fx0, u0, non0 float64
	if c.ah.newtonOff {
		c.curOK = false
		fx0 = f(0)
		u0, non0 = lastU, lastNon
		x = sliceStep(rng, f, 0, fx0, t.width)
	} else {
		// fd is f with its first two derivatives in s (the data's exactly,
		// the prior's by central differences): the proposal's only input.
		//
		// Each datum's energy and its two derivatives in η are written to
		// dst, and at s = 0 (useCur) read from c.cur where a previous
		// term's move left them at the datum's current η (Step; a
		// datum's entry is NaN where its η has moved since): the same
		// values at the same state, each datum evaluated once per state
		// (TestAugmentMoments and TestAugmentSBC with the mutant
		// cache-stale). The collapsed data's are at their integrated η
		// and are always evaluated.
		fd := func(s float64, dst *lossCache, useCur bool) (v, g, h float64) {
			e, ek := math.Exp(s), math.Exp(kt*s)
			t2 := tau2 * e * e
			var u, uS float64
			fresh := 0
			for i, ai := range c.a {
				if nP > 0 && t.pOf[i] >= 0 {
					dst.l[i] = math.NaN() // a collapsed pair's datum: below
					continue
				}
				var eta, d1, d2, l, f1, f2 float64
				ri := ek * c.r[i]
				q := int32(-1)
				if nS > 0 {
					q = t.sOf[i]
				}
				if q >= 0 {
					// η = n/√(1 + A), n = o + e^{ks}r, A = c²τ²e^{2s}.
					cv := t.sVal[q]
					A := cv * cv * t2
					n, n1, n2 := c.off[i]+ri, kt*ri, kt*kt*ri
					w := 1 / math.Sqrt(1+A)
					w1 := -A * w * w * w               // d/ds (1 + A)^{−1/2}
					w2 := -2*A*w*w*w + 3*A*A*w*w*w*w*w // d²/ds²
					eta, d1, d2 = n*w, n1*w+n*w1, n2*w+2*n1*w1+n*w2
				} else {
					eta = c.off[i] + e*ai + ri
					d1, d2 = e*ai+kt*ri, e*ai+kt*kt*ri
				}
				if useCur && q < 0 && !math.IsNaN(c.cur.l[i]) {
					l, f1, f2 = c.cur.l[i], c.cur.f1[i], c.cur.f2[i]
				} else {
					var lam float64
					l, lam = c.probitLossLam(i, eta)
					f1, f2 = probitDerivs(c.y[i], eta, lam)
					fresh++
				}
				dst.l[i], dst.f1[i], dst.f2[i] = l, f1, f2
				if q >= 0 {
					uS += l
				} else {
					u += l
				}
				g -= f1 * d1
				h -= f2*d1*d1 + f1*d2
			}
			for q := range nP {
				l, d1, d2 := c.pairLoss(t.pRow[2*q], t.pRow[2*q+1], t.pVal[2*q], t.pVal[2*q+1], ek, kt, t2)
				uS += l
				g -= d1
				h -= d2
			}
			fresh += 2 * nP
			c.t.Count(fresh)
			lastU, lastNon = u+uS, u
			lp := func(s float64) float64 {
				move(c.next, s)
				return c.t.LogPrior(c.next) + priorS*c.next[t.logTau] + jac*s
			}
			const eps = 1e-4
			lm, lpp := lp(s-eps), lp(s+eps)
			l0 := lp(s)
			v = -(u + uS) + l0
			g += (lpp - lm) / (2 * eps)
			h += (lpp - 2*l0 + lm) / (eps * eps)
			if math.IsNaN(v) {
				v = math.Inf(-1)
			}
			return v, g, h
		}
		var g0, h0 float64
		fx0, g0, h0 = fd(0, &c.cur, c.curOK)
		u0, non0 = lastU, lastNon
		m0, sd0 := scaleProposal(0, g0, h0, t.width, scaleRelax)
		y := m0 + sd0*rng.NormFloat64()
		fy, gy, hy := fd(y, &c.prop, false)
		m1, sd1 := scaleProposal(y, gy, hy, t.width, scaleRelax)
		la := fy - fx0 - logNormal(y, m0, sd0*sd0)
		if !c.ah.newtonNoReverse {
			la += logNormal(0, m1, sd1*sd1)
		}
		t.mT++
		if la >= 0 || rng.Float64() < math.Exp(la) {
			x = y
			t.mN++
			c.cur, c.prop = c.prop, c.cur
		}
		// c.cur holds the data's values at the state's η but for the
		// collapsed data, whose effects drawCollapsed redraws.
		c.curOK = true
		if !c.ah.cacheStale {
			for _, i := range t.sRow {
				c.cur.l[i] = math.NaN()
			}
			for _, i := range t.pRow {
				c.cur.l[i] = math.NaN()
			}
		}
	}
	if x == 0 && nS+nP == 0 {
		c.uCur = u0 // θ unchanged
		return 0
	}
	c.uCur = lastU // the last evaluation was at x
	if x == 0 {
		lastNon = non0
	}
	move(c.next, x)
	copy(th, c.next)
	e, ek := math.Exp(x), math.Exp(kt*x)
	if nS > 0 {
		c.drawCollapsed(rng, t, ek)
	}
	if nP > 0 {
		c.drawPairs(rng, t, ek)
	}
	c.lp = c.t.LogPrior(th)
	for i, ai := range c.a {
		c.eta[i] = c.off[i] + e*ai + ek*c.r[i]
	}
	if nS+nP > 0 && !c.ah.newtonOff {
		// The Newton proposal reads no uCur: only the collapsed data's η.
		for q, i := range t.sRow {
			c.eta[i] = c.off[i] + ek*c.r[i] + t.sVal[q]*th[t.sCol[q]]
		}
		for k, i := range t.pRow {
			c.eta[i] = c.off[i] + ek*c.r[i] + t.pVal[k]*th[t.pCol[k/2]]
		}
	} else if nS > 0 {
		// The state's energy for the next term's f(0): the other data's
		// part at x and the collapsed data's at their new effects.
		u := lastNon
		for q, i := range t.sRow {
			c.eta[i] = c.off[i] + ek*c.r[i] + t.sVal[q]*th[t.sCol[q]]
			u += c.pe.Loss(int(i), c.eta[i])
		}
		c.t.Count(nS)
		c.uCur = u
	}
	return x
}

// scaleMaxStep is the largest step of scaleProposal's mean in s.
const scaleMaxStep = 2

// scaleRelax is the overrelaxation α of the marginal scale move's
// proposal (scaleProposal): the proposed point reflected through the
// Newton mode with a fraction α of the distance kept, Adler's
// overrelaxation (Phys. Rev. D 23, 1981) of the Gaussian approximation.
const scaleRelax = 0.8

// scaleProposal returns the mean and sd of the marginal scale move's
// proposal from the point x of the orbit, where h has derivatives g and
// hh: with the Newton mode μ = x − g/hh (its step within ±scaleMaxStep)
// and σ² = −1/hh, N(μ − relax·(x − μ), (1 − relax²)σ²) where hh < 0 — a
// kernel that keeps N(μ, σ²) itself invariant, so that near a Gaussian h
// it is nearly always kept and its draws are anticorrelated with x —
// else N(x, width²). A function of the point alone, so that the reverse
// proposal's density is the same function at the proposed point.
func scaleProposal(x, g, hh, width, relax float64) (mean, sd float64) {
	if !(hh < 0) || math.IsInf(hh, 0) || math.IsNaN(g) || math.IsInf(g, 0) {
		return x, width
	}
	return x + (1+relax)*min(max(-g/hh, -scaleMaxStep), scaleMaxStep), math.Sqrt((1 - relax*relax) / -hh)
}

// probitDerivs returns U′ and U″ of the probit energy U = −log Φ(t),
// t = ±η (+ where y), at η from λ(t) = φ(t)/Φ(t) (probitLossLam): U′ =
// ∓λ, U″ = λ(t + λ), the latter clamped to [0, 1] (its bounds; the far
// left tail's cancellation). Only the proposal reads them, so their
// rounding is no part of the target.
func probitDerivs(y bool, eta, lam float64) (f1, f2 float64) {
	t := eta
	if !y {
		t = -eta
	}
	f2 = min(max(lam*(t+lam), 0), 1)
	if y {
		return -lam, f2
	}
	return lam, f2
}

// probitLoss returns datum i's probit energy U_i(η) = −log Φ(t), t = ±η
// (+ where y_i), the marginal scale moves' and levelDraw's energy, the
// probit sweep's most frequent evaluation (probitLossLam).
func (c *augChain) probitLoss(i int, eta float64) float64 {
	l, _ := c.probitLossLam(i, eta)
	return l
}

// probitLossLam returns datum i's probit energy l = −log Φ(t), t = ±η
// (+ where y_i), and λ(t) = φ(t)/Φ(t): on [phiLo, phiHi] from negLogPhi's
// table (relative error of l at most 7·10⁻¹⁶ against a math/big
// reference, no worse than erfc's: TestNegLogPhi; the model's erfc-based
// value to 2·10⁻¹⁴: TestAugmentProbitLoss), above it
// −log1p(−½erfc(t/√2)) and below it the model's Loss (its Mills series),
// as the model computes them, bit for bit; λ there by e^{l − t²/2}/√(2π).
// Every evaluation of the energy in these moves is this one function of
// η, at the current and the proposed point alike, and the cached values
// (lossCache) are its values.
func (c *augChain) probitLossLam(i int, eta float64) (l, lam float64) {
	t := eta
	if !c.y[i] {
		t = -eta
	}
	cell := 0
	if c.ah.phiCell {
		cell = 32
	}
	if l, lam, ok := negLogPhiCell(t, cell); ok {
		return l, lam
	}
	if t > 0 {
		l = -math.Log1p(-0.5 * math.Erfc(t/math.Sqrt2))
	} else {
		l = c.pe.Loss(i, eta)
	}
	return l, proposalExp(l-t*t/2) / math.Sqrt(2*math.Pi)
}

// proposalExp returns e^x to a relative error below 10⁻⁶ (x clamped to
// ±700): 2^k times a degree-6 Taylor polynomial in r = x − k·ln 2,
// |r| ≤ ½ln 2. A deterministic function, so the proposal densities it
// enters are exact; it only saves math.Exp's cost, a datum's in each of
// the Newton proposal's passes.
func proposalExp(x float64) float64 {
	x = min(max(x, -700), 700)
	// k = x·log₂e rounded to the nearest integer (ties to even) by adding
	// and subtracting 1.5·2⁵², where the sum's unit in the last place is 1
	// (|x·log₂e| ≤ 1010): two additions where math.Round takes a sequence
	// of bit operations. The conversion rounds the sum (no fused or
	// reassociated form).
	const shift = 0x1.8p52
	k := float64(x*math.Log2E+shift) - shift
	r := x - k*math.Ln2
	p := 1 + r*(1+r*(1.0/2+r*(1.0/6+r*(1.0/24+r*(1.0/120+r*(1.0/720))))))
	return p * math.Float64frombits(uint64(int64(k)+1023)<<52)
}

// drawCollapsed completes the collapsed marginal scale move of term t:
// each single-datum level's effect u_g drawn from its conditional given
// y_i and the rest of θ (at the moved position, the rest of datum i's
// linear predictor m = o_i + e^{k_t·x}·r_i). With z_i = m + c·u_g + ε,
// w = z_i − m ~ N(0, v), v = 1 + c²τ², is drawn given the sign of z_i
// (y_i), then u_g | w ~ N(cτ²w/v, τ²/v): a draw from u_g's conditional
// given y_i, exactly, so that the move (a kernel invariant for the
// marginal of the other coordinates, then the collapsed ones from their
// conditional) leaves π(θ) invariant.
func (c *augChain) drawCollapsed(rng *rand.Rand, t *asisTerm, ek float64) {
	th := c.theta
	tau2 := math.Exp(2 * th[t.logTau])
	for q, i := range t.sRow {
		cv := t.sVal[q]
		v := 1 + cv*cv*tau2
		sd := math.Sqrt(v)
		m := c.off[i] + ek*c.r[i]
		var w float64
		if c.y[i] {
			w = sd * truncAbove(rng, -m/sd)
		} else {
			w = -sd * truncAbove(rng, m/sd)
		}
		mean, vu := cv*tau2*w/v, tau2/v
		if c.ah.collapseLatentVar {
			vu = tau2
		}
		th[t.sCol[q]] = mean + math.Sqrt(vu)*rng.NormFloat64()
	}
}

// pairLoss returns the probit energy of a collapsed pair's two data, i1
// and i2 with the values v1, v2 in their level's column, with the
// level's effect u integrated out, at the point s of the marginal scale
// move (the rest of each η, m_k = o_k + e^{k_t·s}·r_k, and t2 = τ²e^{2s}):
// with z_k = m_k + v_k·u + ε_k, the latent w_k = z_k − m_k are jointly
// normal, var 1 + v_k²τ², cov v₁v₂τ², so
//
//	∫ N(u; 0, τ²)·Φ(σ₁(m₁ + v₁u))·Φ(σ₂(m₂ + v₂u)) du = Φ₂(t₁, t₂; ρ),
//	t_k = σ_k·m_k/√(1 + v_k²τ²),  ρ = σ₁σ₂·v₁v₂τ²/√((1 + v₁²τ²)(1 + v₂²τ²)),
//
// σ_k = ±1 as y_k (TestBVN checks the identity by quadrature), and the
// energy is l = −log Φ₂ (bvnCDF: Genz's method, absolute error about
// 10⁻¹⁵, so relative error grows where Φ₂ is tiny). d1 and d2 are dl/ds
// and d²l/ds², from Φ₂'s partial derivatives in (t₁, t₂, ρ) (no further
// Φ₂; only the proposal reads them, so their rounding is no part of the
// target).
func (c *augChain) pairLoss(i1, i2 int32, v1, v2, ek, kt, t2 float64) (l, d1, d2 float64) {
	var tk, tk1, tk2, wk, wk1, wk2 [2]float64
	sg := 1.0
	for k, i := range [2]int32{i1, i2} {
		v := v1
		if k == 1 {
			v = v2
		}
		A := v * v * t2
		ri := ek * c.r[i]
		n, n1, n2 := c.off[i]+ri, kt*ri, kt*kt*ri
		w := 1 / math.Sqrt(1+A)
		w1 := -A * w * w * w
		w2 := -2*A*w*w*w + 3*A*A*w*w*w*w*w
		if !c.y[i] {
			n, n1, n2 = -n, -n1, -n2
			sg = -sg
		}
		tk[k], tk1[k], tk2[k] = n*w, n1*w+n*w1, n2*w+2*n1*w1+n*w2
		wk[k], wk1[k], wk2[k] = w, w1, w2
	}
	// ρ = B·W, B = σ₁σ₂v₁v₂τ²e^{2s} (B′ = 2B, B″ = 4B), W = w₁w₂.
	B := sg * v1 * v2 * t2
	W := wk[0] * wk[1]
	W1 := wk1[0]*wk[1] + wk[0]*wk1[1]
	W2 := wk2[0]*wk[1] + 2*wk1[0]*wk1[1] + wk[0]*wk2[1]
	rho, rho1, rho2 := B*W, B*(2*W+W1), B*(4*W+4*W1+W2)
	if c.ah.pairRhoSign {
		rho, rho1, rho2 = -rho, -rho1, -rho2
	}
	if c.ah.pairProduct {
		rho, rho1, rho2 = 0, 0, 0
	}
	x, y := tk[0], tk[1]
	p := c.bvn.cdf(x, y, rho)
	l = -math.Log(p)
	// P′ and P″ from the partial derivatives of Φ₂ in (x, y, ρ): ∂_x =
	// φ(x)Φ((y − ρx)/q), ∂_ρ = φ₂ = ∂²_xy, ∂²_x = −x∂_x − ρφ₂, ∂²_xρ =
	// −φ₂(x − ρy)/q², ∂²_ρ = φ₂(ρ/q² + xy/q² − ρQ/q⁴), q² = 1 − ρ², Q =
	// x² − 2ρxy + y².
	q2 := (1 - rho) * (1 + rho)
	q := math.Sqrt(q2)
	Q := x*x - 2*rho*x*y + y*y
	gx := expNeg(x*x/2) / math.Sqrt(2*math.Pi) * fastCDF((y-rho*x)/q)
	gy := expNeg(y*y/2) / math.Sqrt(2*math.Pi) * fastCDF((x-rho*y)/q)
	dn := expNeg(Q/(2*q2)) / (2 * math.Pi * q)
	dx, dy, dr := tk1[0], tk1[1], rho1
	p1 := gx*dx + gy*dy + dn*dr
	hxx, hyy, hxy := -x*gx-rho*dn, -y*gy-rho*dn, dn
	hxr, hyr := -dn*(x-rho*y)/q2, -dn*(y-rho*x)/q2
	hrr := dn * (rho/q2 + x*y/q2 - rho*Q/(q2*q2))
	p2 := gx*tk2[0] + gy*tk2[1] + dn*rho2 +
		hxx*dx*dx + hyy*dy*dy + hrr*dr*dr + 2*(hxy*dx*dy+hxr*dx*dr+hyr*dy*dr)
	d1 = -p1 / p
	d2 = -p2/p + d1*d1
	return l, d1, d2
}

// drawPairs completes the Newton marginal scale move of term t for its
// collapsed pairs: each pair's effect u drawn from its conditional given
// its two data's y and the rest of θ at the moved position (m_k = o_k +
// e^{k_t·x}·r_k), N(0, τ²)·Φ(σ_a(m_a + v_a·u))·Φ(σ_b(m_b + v_b·u)), exactly,
// by rejection: u from the conditional given datum a alone, through its
// latent datum as drawCollapsed draws it, kept with probability
// Φ(σ_b(m_b + v_b·u)) ≤ 1. Datum a is the one of the smaller marginal
// probability Φ(t_a), which makes the acceptance P(y_b | y_a) the larger
// of the two conditionals.
func (c *augChain) drawPairs(rng *rand.Rand, t *asisTerm, ek float64) {
	th := c.theta
	tau2 := math.Exp(2 * th[t.logTau])
	for q, j := range t.pCol {
		var m, sd, sg, v [2]float64
		for k := range 2 {
			i := t.pRow[2*q+k]
			v[k] = t.pVal[2*q+k]
			m[k] = c.off[i] + ek*c.r[i]
			sd[k] = math.Sqrt(1 + v[k]*v[k]*tau2)
			sg[k] = 1
			if !c.y[i] {
				sg[k] = -1
			}
		}
		a := 0
		if sg[1]*m[1]/sd[1] < sg[0]*m[0]/sd[0] {
			a = 1
		}
		b := 1 - a
		va := sd[a] * sd[a]
		for try := 0; ; try++ {
			if try == pairTries {
				c.pairErr = fmt.Errorf("probit sweep: the effect of level %d (coordinate %d) given its two data was not redrawn in %d tries: their latent means %.4g and %.4g at τ = %.4g leave the second datum's outcome about impossible given the first's", q, j, pairTries, m[a], m[b], math.Sqrt(tau2))
				return
			}
			var w float64
			if sg[a] > 0 {
				w = sd[a] * truncAbove(rng, -m[a]/sd[a])
			} else {
				w = -sd[a] * truncAbove(rng, m[a]/sd[a])
			}
			u := v[a]*tau2*w/va + math.Sqrt(tau2/va)*rng.NormFloat64()
			if c.ah.pairRedrawOne || rng.Float64() < normCDF(sg[b]*(m[b]+v[b]*u)) {
				th[j] = u
				break
			}
		}
	}
}

// pairTries is the most proposals drawPairs makes for one pair's effect
// before it stops the chain with an error (the expected number is
// Φ(t_a)/Φ₂ ≥ 1, about linear in τ for two data of opposite outcomes; NaN
// data never accept): an error, not a hang.
const pairTries = 1 << 20

// smallLevel is the most data a level holds for levelDraw's update.
const smallLevel = 4

// levelsBySize finds the term's levels by their data: if collapse, the
// single-datum levels (a coordinate with exactly one nonzero in the rows,
// in a row that holds no other coordinate of the term), which the
// marginal scale move integrates out, their effects redrawn after it; if
// pairs, the levels of two data (each in a row holding no other
// coordinate of the term), which the Newton marginal scale move
// integrates out too (pairLoss, drawPairs); if small, the levels of 2 …
// smallLevel data (3 … smallLevel with pairs), each in a row holding no
// other coordinate of the term, for levelDraw.
func (t *asisTerm) levelsBySize(rows *augRows, n int, collapse, small, pairs bool) {
	cnt := make(map[int32]int32)
	bad := make(map[int32]bool) // a level sharing a row with another of the term's coordinates
	for i := range n {
		in := 0
		for k := rows.ptr[i]; k < rows.ptr[i+1]; k++ {
			if j := rows.col[k]; t.has(int(j)) {
				cnt[j]++
				in++
			}
		}
		if in > 1 {
			for k := rows.ptr[i]; k < rows.ptr[i+1]; k++ {
				if j := rows.col[k]; t.has(int(j)) {
					bad[j] = true
				}
			}
		}
	}
	var small2 []int32 // the small levels' coordinates, in order of first datum
	seen := make(map[int32]int32)
	pairOf := make(map[int32]int32) // a collapsed pair's coordinate: its index q
	for i := range n {
		for k := rows.ptr[i]; k < rows.ptr[i+1]; k++ {
			j := rows.col[k]
			if !t.has(int(j)) || bad[j] {
				continue
			}
			switch c := cnt[j]; {
			case c == 1 && collapse:
				if t.sOf == nil {
					t.sOf = make([]int32, n)
					for q := range t.sOf {
						t.sOf[q] = -1
					}
				}
				t.sOf[i] = int32(len(t.sRow))
				t.sRow = append(t.sRow, int32(i))
				t.sCol = append(t.sCol, j)
				t.sVal = append(t.sVal, rows.val[k])
			case c == 2 && pairs:
				if t.pOf == nil {
					t.pOf = make([]int32, n)
					for q := range t.pOf {
						t.pOf[q] = -1
					}
				}
				q, ok := pairOf[j]
				if !ok {
					q = int32(len(t.pCol))
					pairOf[j] = q
					t.pCol = append(t.pCol, j)
					t.pRow = append(t.pRow, int32(i), -1)
					t.pVal = append(t.pVal, rows.val[k], 0)
				} else {
					t.pRow[2*q+1], t.pVal[2*q+1] = int32(i), rows.val[k]
				}
				t.pOf[i] = q
			case c >= 2 && c <= smallLevel && small:
				if _, ok := seen[j]; !ok {
					seen[j] = int32(len(small2))
					small2 = append(small2, j)
				}
			}
		}
	}
	if len(small2) == 0 {
		return
	}
	t.lPtr = make([]int32, len(small2)+1)
	for q, j := range small2 {
		t.lPtr[q+1] = t.lPtr[q] + cnt[j]
	}
	t.lCol = small2
	t.lRow = make([]int32, t.lPtr[len(small2)])
	t.lVal = make([]float64, len(t.lRow))
	fill := make([]int32, len(small2))
	for i := range n {
		for k := rows.ptr[i]; k < rows.ptr[i+1]; k++ {
			if q, ok := seen[rows.col[k]]; ok {
				p := t.lPtr[q] + fill[q]
				t.lRow[p], t.lVal[p] = int32(i), rows.val[k]
				fill[q]++
			}
		}
	}
}

// levelDraw updates each of term t's levels of 2 … smallLevel data
// given y (not z) and the rest of θ, once the marginal scale moves have
// left η current: an independence Metropolis–Hastings update of u_g whose
// proposal is u_g's conditional given its first datum alone, N(0, τ²)·
// Φ(±(m₁ + c₁u)), drawn exactly through that datum's latent variable (as
// drawCollapsed), and kept with probability min(1, Π_{k≥2}
// Φ(±(m_k + c_ku′))/Φ(±(m_k + c_ku))), the ratio of the other data's
// likelihoods (m_k the rest of η_k). Given z, a level of a datum or two is
// pinned by it; given y it is wide, and this draw takes it across that
// width in one step. It reads the level's data twice.
func (c *augChain) levelDraw(rng *rand.Rand, t *asisTerm) {
	if len(t.lCol) == 0 {
		return
	}
	th := c.theta
	tau2 := math.Exp(2 * th[t.logTau])
	var reads int
	for q, j := range t.lCol {
		lo, hi := t.lPtr[q], t.lPtr[q+1]
		u := th[j]
		i1, c1 := t.lRow[lo], t.lVal[lo]
		m := c.eta[i1] - c1*u
		v := 1 + c1*c1*tau2
		sd := math.Sqrt(v)
		var w float64
		if c.y[i1] {
			w = sd * truncAbove(rng, -m/sd)
		} else {
			w = -sd * truncAbove(rng, m/sd)
		}
		un := c1*tau2*w/v + math.Sqrt(tau2/v)*rng.NormFloat64()
		var la float64
		for p := lo + 1; p < hi; p++ {
			i, ck := int(t.lRow[p]), t.lVal[p]
			l0 := c.cur.l[i]
			if !c.curOK || math.IsNaN(l0) {
				l0 = c.probitLoss(i, c.eta[i])
				reads++
			}
			la += l0 - c.probitLoss(i, c.eta[i]+ck*(un-u))
		}
		reads += int(hi - lo - 1)
		t.lT++
		if c.ah.levelNoRatio || la >= 0 || rng.Float64() < math.Exp(la) {
			th[j] = un
			for p := lo; p < hi; p++ {
				c.eta[t.lRow[p]] += t.lVal[p] * (un - u)
				if c.curOK {
					c.cur.l[t.lRow[p]] = math.NaN()
				}
			}
			t.lN++
		}
	}
	c.t.Count(reads)
	c.lp = c.t.LogPrior(th)
	c.uCur = math.NaN()
}

// lossCache holds each datum's probit energy l = U_i(η_i) and its
// derivatives f1 = U′, f2 = U″ in η (probitDerivs) at one point of the
// marginal scale moves (marginalScale): a NaN l marks a datum whose η
// has moved since.
type lossCache struct{ l, f1, f2 []float64 }

// newLossCache returns a lossCache over n data.
func newLossCache(n int) lossCache {
	return lossCache{l: make([]float64, n), f1: make([]float64, n), f2: make([]float64, n)}
}
