// Copyright ©2026 The exactmh Authors. All rights reserved.
// Use of this source code is governed by a BSD-style
// license that can be found in the LICENSE file.

package exactmh

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"gonum.org/v1/gonum/mat"
)

// gapProblem is a discrete target for exact spectral gaps: θ ∈ {0, …, K−1},
// N data with U_i(θ) = c_i·g_i(θ), |g_i(θ+1) − g_i(θ)| ≤ 1, so that
// Assumption 1 holds with M(θ, θ′) = |θ − θ′|; the proposal moves ±1 with
// probability ½ each (a move off the ends is rejected).
type gapProblem struct {
	k int
	c []float64
	u [][]float64 // u[i][θ] = U_i(θ)
}

func newGapProblem(k int, c []float64, seed uint64) gapProblem {
	rng := rand.New(rand.NewPCG(seed, 0))
	u := make([][]float64, len(c))
	for i := range u {
		u[i] = make([]float64, k)
		g := 0.0
		for th := range k {
			u[i][th] = c[i] * g
			g += 2*rng.Float64() - 1
		}
	}
	return gapProblem{k: k, c: c, u: u}
}

// logPi returns log π(θ) = −Σ_i U_i(θ), unnormalised.
func (p gapProblem) logPi() []float64 {
	l := make([]float64, p.k)
	for th := range l {
		for _, ui := range p.u {
			l[th] -= ui[th]
		}
	}
	return l
}

// poissonPMF returns the Poisson(mu) probabilities of 0, 1, … up to the
// point where less than 1e-16 of the mass remains.
func poissonPMF(mu float64) []float64 {
	p := []float64{math.Exp(-mu)}
	sum := p[0]
	for n := 1; 1-sum > 1e-16 || float64(n) < mu; n++ {
		p = append(p, p[n-1]*mu/float64(n))
		sum += p[n]
		if n > 10000 {
			break
		}
	}
	return p
}

// tunaAccept returns TunaMH's exact acceptance probability for the move
// from → to with χ, term (tunaTerm or a mutant's) and a(r). By Poisson
// thinning the kept copies of datum i are independent Poisson counts
// s_i ~ Poisson(λ·(c_i/C)·keep_i), λ = χC²M² + CM, and
// log r = Σ_i s_i·term_i: the expectation E[a(r)] is summed over every
// count vector up to a remaining mass below 1e-16 per datum.
func (p gapProblem) tunaAccept(from, to int, chi float64, term func(d, mi, a float64) (float64, float64), acc Acceptance) float64 {
	m := math.Abs(float64(to - from))
	var sumC float64
	for _, c := range p.c {
		sumC += c
	}
	lambda := chi*sumC*sumC*m*m + sumC*m
	pmf := make([][]float64, len(p.c))
	terms := make([]float64, len(p.c))
	for i, c := range p.c {
		keep, t := term(p.u[i][from]-p.u[i][to], c*m, chi*sumC*c*m*m)
		pmf[i] = poissonPMF(lambda * c / sumC * keep)
		terms[i] = t
	}
	var alpha float64
	var rec func(i int, prob, logR float64)
	rec = func(i int, prob, logR float64) {
		if i == len(pmf) {
			alpha += prob * acc.Prob(logR)
			return
		}
		for s, q := range pmf[i] {
			if q == 0 {
				continue
			}
			l := logR
			if s > 0 {
				l += float64(s) * terms[i]
			}
			rec(i+1, prob*q, l)
		}
	}
	rec(0, 1, 0)
	return alpha
}

// matrix returns the transition matrix of the ±1 walk whose acceptance
// probability for a → b is alpha(a, b).
func (p gapProblem) matrix(alpha func(a, b int) float64) *mat.Dense {
	P := mat.NewDense(p.k, p.k, nil)
	for a := range p.k {
		stay := 1.0
		for _, b := range []int{a - 1, a + 1} {
			if b < 0 || b >= p.k {
				continue
			}
			v := 0.5 * alpha(a, b)
			P.Set(a, b, v)
			stay -= v
		}
		P.Set(a, a, stay)
	}
	return P
}

// imbalance returns the largest violation of detailed balance by P with
// respect to π = exp(logPi), |π(a)P(a,b) − π(b)P(b,a)|/max(…), and π
// normalised to a maximum of 1.
func imbalance(P *mat.Dense, logPi []float64) (float64, []float64) {
	k := len(logPi)
	top := slices.Max(logPi)
	pi := make([]float64, k)
	for i, l := range logPi {
		pi[i] = math.Exp(l - top)
	}
	var imb float64
	for a := range k {
		for b := a + 1; b < k; b++ {
			fa, fb := pi[a]*P.At(a, b), pi[b]*P.At(b, a)
			if fa > 0 || fb > 0 {
				imb = max(imb, math.Abs(fa-fb)/max(fa, fb))
			}
		}
	}
	return imb, pi
}

// gap returns 1 − λ₂ of P, reversible with respect to π = exp(logPi),
// from the eigenvalues of the symmetric D^{1/2}PD^{−1/2}, D = diag(π),
// and P's violation of detailed balance (imbalance).
func gap(t *testing.T, P *mat.Dense, logPi []float64) (g, imb float64) {
	k := len(logPi)
	imb, pi := imbalance(P, logPi)
	S := mat.NewSymDense(k, nil)
	for a := range k {
		for b := a; b < k; b++ {
			S.SetSym(a, b, math.Sqrt(pi[a]/pi[b])*P.At(a, b))
		}
	}
	var e mat.EigenSym
	if !e.Factorize(S, false) {
		t.Fatal("eigendecomposition failed")
	}
	v := e.Values(nil) // ascending
	if math.Abs(v[k-1]-1) > 1e-10 {
		t.Fatalf("largest eigenvalue %v, want 1", v[k-1])
	}
	return 1 - v[k-2], imb
}

// TestTunaMHSpectralGap computes TunaMH's transition matrix exactly on
// small discrete targets (8 states and 2 states, 2 data; the Poisson counts summed to
// convergence, with the kernel's own tunaTerm) and its spectral gap against
// full-batch MH's, and checks:
//
//   - detailed balance of the TunaMH matrix to 1e-12, for Metropolis and
//     Barker acceptance (the ejection mutant's matrix must violate it);
//   - gap ratio ≥ the TunaMH paper's Theorem 2 bound
//     exp(−1/χ − 2√(log 2/χ)) and ≥ the framework paper's Prop. 6 bound
//     e^{−1/e}·exp(−1/(2χ)), over χ from 10⁻² to 30;
//   - gap ratio ≥ κ at χ = TunaMH{}.ChiForKappa(κ).
//
// It logs each χ's expected batch χC²M² + CM beside C²M² + CM, the
// quantity that Theorem 3's lower bound ζκ(C²M² + CM) on any exact
// method's batch scales.
func TestTunaMHSpectralGap(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: Theorem 3's gap computed on dense transition matrices (eigenvalues, χ scans); runs without -short")
	}
	// A random 1-Lipschitz landscape, and the two-state construction of
	// Theorem 3's proof: equal probabilities, and two data whose energy
	// differences ±c_iM cancel, so that MH always accepts and every
	// rejection TunaMH makes costs it gap.
	twoState := gapProblem{k: 2, c: []float64{3, 3}, u: [][]float64{{0, 3}, {3, 0}}}
	// (The ejection mutant is checked on the landscape: on the symmetric
	// two states its errors cancel.)
	for _, p := range []gapProblem{newGapProblem(8, []float64{2, 1.2}, 3), twoState} {
		t.Run(fmt.Sprintf("K=%d", p.k), func(t *testing.T) { checkGap(t, p, p.k > 2) })
	}
}

func checkGap(t *testing.T, p gapProblem, mutantToo bool) {
	logPi := p.logPi()
	mh := p.matrix(func(a, b int) float64 { return math.Exp(min(logPi[b]-logPi[a], 0)) })
	gMH, imb := gap(t, mh, logPi)
	if imb > 1e-12 {
		t.Fatalf("MH matrix violates detailed balance by %v", imb)
	}
	var sumC float64
	for _, c := range p.c {
		sumC += c
	}
	t.Logf("MH gap %.6f; C = %.2f, M = 1 per move: C²M² + CM = %.3f", gMH, sumC, sumC*sumC+sumC)
	tuna := func(chi float64, term func(d, mi, a float64) (float64, float64), acc Acceptance) *mat.Dense {
		return p.matrix(func(a, b int) float64 { return p.tunaAccept(a, b, chi, term, acc) })
	}
	for _, chi := range []float64{0.01, 0.1, 0.3, 1, 3, 10, 30} {
		g, imb := gap(t, tuna(chi, tunaTerm, AcceptMetropolis), logPi)
		if imb > 1e-12 {
			t.Errorf("χ = %v: TunaMH matrix violates detailed balance by %v", chi, imb)
		}
		thm2 := math.Exp(-1/chi - 2*math.Sqrt(math.Ln2/chi))
		prop6 := math.Exp(-1/math.E - 1/(2*chi))
		ratio := g / gMH
		t.Logf("χ = %5.2f: gap %.6f, ratio %.4f ≥ Theorem 2 %.4g, Prop. 6 %.4g; E[B] = χC²M² + CM = %.3f vs C²M² + CM = %.3f",
			chi, g, ratio, thm2, prop6, chi*sumC*sumC+sumC, sumC*sumC+sumC)
		if ratio < thm2*(1-1e-9) || ratio < prop6*(1-1e-9) {
			t.Errorf("χ = %v: gap ratio %v below a proven bound (Theorem 2 %v, Prop. 6 %v)", chi, ratio, thm2, prop6)
		}
		if b := (TunaMH{}).GapBound(chi); b != max(thm2, prop6) {
			t.Errorf("TunaMH{}.GapBound(%v) = %v, want %v", chi, b, max(thm2, prop6))
		}
		_, imb = gap(t, tuna(chi, tunaTerm, AcceptBarker), logPi)
		if imb > 1e-12 {
			t.Errorf("χ = %v: TunaMH with Barker acceptance violates detailed balance by %v", chi, imb)
		}
	}
	for _, kappa := range []float64{0.2, 0.5, 0.7} {
		chi := TunaMH{}.ChiForKappa(kappa)
		g, _ := gap(t, tuna(chi, tunaTerm, AcceptMetropolis), logPi)
		t.Logf("κ = %.1f: ChiForKappa = %.4g (eq. 2: %.4g), gap ratio %.4f", kappa, chi, 4/((1-kappa)*math.Log(1/kappa)), g/gMH)
		if g/gMH < kappa {
			t.Errorf("κ = %v: χ = ChiForKappa = %v gives gap ratio %v < κ", kappa, chi, g/gMH)
		}
	}
	if !mutantToo {
		return
	}
	// The ejection mutant (φ_new in the keep probability) is not reversible.
	mutant := func(d, mi, a float64) (float64, float64) {
		keep, _ := tunaTerm(-d, mi, a)
		_, term := tunaTerm(d, mi, a)
		return keep, term
	}
	if imb, _ := imbalance(tuna(0.3, mutant, AcceptMetropolis), logPi); imb < 1e-3 {
		t.Errorf("the ejection mutant's matrix satisfies detailed balance to %v", imb)
	} else {
		t.Logf("ejection mutant: detailed balance violated by %.3g (relative)", imb)
	}
}
