// Copyright ©2026 The exactmh Authors. All rights reserved.
// Use of this source code is governed by a BSD-style
// license that can be found in the LICENSE file.

package exactmh

import (
	"errors"
	"fmt"
	"math"
	"slices"

	"gonum.org/v1/gonum/mat"
)

// FlyBound is a collapsible lower bound on every datum's likelihood, the
// ingredient of Firefly Monte Carlo: 0 < B_i(θ) ≤ L_i(θ) = exp(−U_i(θ)),
// chosen so that Σ_i log B_i(θ) costs time independent of N (a quadratic
// form in θ for the regression bounds). Bounds are in untempered units; FlyMC
// raises them to the power β with the likelihood (B_i^β ≤ L_i^β).
//
// A FlyBound is shared by all chains and must be safe for concurrent use.
// Check a hand-made one with CheckFlyBound.
type FlyBound interface {
	// LogBoundSum returns Σ_i log B_i(θ) over all N data.
	LogBoundSum(theta []float64) float64
	// Gaps sets dst[k] = log L_i(θ) − log B_i(θ) = −U_i(θ) − log B_i(θ),
	// which must be ≥ 0, for i = idx[k], reading each datum once.
	Gaps(dst, theta []float64, idx []int)
}

// FlyBounder is implemented by energies with ready-made FlyMC bounds.
type FlyBounder interface {
	// FlyBound returns the energy's lower bounds for the prior's support:
	// tight at θ = at (MAP-tuned FlyMC) or, for a nil at, the energy's
	// untuned default.
	FlyBound(at []float64, prior Prior) (FlyBound, error)
}

// flyMargin is subtracted from every log B_i so that the gaps stay strictly
// positive even where a bound is tight (log ρ_i = log(e^gap − 1) is then
// finite), as in the FlyMC reference code (EPS = 1e-6). It shifts Σ log B_i
// by a constant and changes nothing else.
const flyMargin = 1e-6

// glmBound is the quadratic bound shared by the GLM energies: with
// z_i = x_iᵀθ, log B_i(θ) = a_i z_i² + b_i z_i + c_i, so
// Σ_i log B_i(θ) = θᵀAθ + vᵀθ + Σc_i with A = Σ a_i x_i x_iᵀ, v = Σ b_i x_i:
// O(d²) per evaluation after an O(N d²) set-up.
type glmBound struct {
	e       glmLoss
	a, b, c []float64
	quad    *mat.SymDense // A
	lin     []float64     // v
	sumC    float64
	d       int
}

// glmLoss is a GLM energy: U_i(θ) depends on θ through z_i = x_iᵀθ only.
type glmLoss interface {
	Energy
	Row(i int) []float64
	// lossAt returns U_i at z_i = z.
	lossAt(i int, z float64) float64
}

func (e *LogisticRegression) lossAt(i int, z float64) float64 { return softplus(z) - e.y[i]*z }
func (e *StudentTRegression) lossAt(i int, z float64) float64 { return e.u(e.y[i] - z) }

// newGLMBound collapses the per-datum coefficients.
func newGLMBound(e glmLoss, a, b, c []float64) *glmBound {
	d := e.Dim()
	g := &glmBound{e: e, a: a, b: b, c: c, quad: mat.NewSymDense(d, nil), lin: make([]float64, d), d: d}
	for i := range a {
		row := e.Row(i)
		g.quad.SymRankOne(g.quad, a[i], mat.NewVecDense(d, row))
		for j, v := range row {
			g.lin[j] += b[i] * v
		}
		g.sumC += c[i]
	}
	return g
}

// LogBoundSum returns θᵀAθ + vᵀθ + Σc_i.
func (g *glmBound) LogBoundSum(theta []float64) float64 {
	s := g.sumC + dot(g.lin, theta)
	for j := range g.d {
		var r float64
		for k := range g.d {
			r += g.quad.At(j, k) * theta[k]
		}
		s += theta[j] * r
	}
	return s
}

// Gaps sets dst[k] = −U_i(θ) − log B_i(θ).
func (g *glmBound) Gaps(dst, theta []float64, idx []int) {
	for k, i := range idx {
		z := dot(g.e.Row(i), theta)
		dst[k] = -g.e.lossAt(i, z) - (g.a[i]*z*z + g.b[i]*z + g.c[i])
	}
}

// jjCurvature returns −tanh(ξ/2)/(4ξ), the curvature of the Jaakkola–Jordan
// bound, with its limit −1/8 at ξ = 0 (where the reference code's
// (e^ξ − 1)/((e^ξ + 1)4ξ) is 0/0).
func jjCurvature(xi float64) float64 {
	if math.Abs(xi) < 1e-4 {
		return -0.125 + xi*xi/96 // Taylor: tanh(x/2)/(4x) = 1/8 − x²/96 + …
	}
	return -math.Tanh(xi/2) / (4 * xi)
}

// FlyBound returns the Jaakkola–Jordan bound (Jaakkola & Jordan 2000, used
// by FlyMC, Maclaurin & Adams 2014): with s = (2y_i − 1)x_iᵀθ,
//
//	log σ(s) ≥ a(ξ)s² + s/2 + log σ(ξ) − ξ/2 − a(ξ)ξ², a(ξ) = −tanh(ξ/2)/(4ξ),
//
// tight at s = ±ξ. For a nil at every datum uses the untuned ξ = 1.5 of the
// FlyMC and TunaMH experiments; otherwise ξ_i = x_iᵀat, so every bound is
// tight at θ = at (MAP-tuned FlyMC). The prior is not needed.
func (e *LogisticRegression) FlyBound(at []float64, _ Prior) (FlyBound, error) {
	if at == nil {
		return e.FlyBoundXi(1.5)
	}
	if len(at) != e.d {
		return nil, fmt.Errorf("exactmh: LogisticRegression.FlyBound: len(at) = %d, want %d", len(at), e.d)
	}
	if err := finiteVec("LogisticRegression.FlyBound: at", at); err != nil {
		return nil, err
	}
	return e.jjBound(func(i int) float64 { return dot(e.Row(i), at) }), nil
}

// FlyBoundXi returns the Jaakkola–Jordan bound tight at |s| = ξ for every
// datum (see FlyBound).
func (e *LogisticRegression) FlyBoundXi(xi float64) (FlyBound, error) {
	if math.IsNaN(xi) || math.IsInf(xi, 0) {
		return nil, fmt.Errorf("exactmh: LogisticRegression.FlyBoundXi: ξ = %v, want finite", xi)
	}
	return e.jjBound(func(int) float64 { return xi }), nil
}

// jjBound writes the bound of datum i, in s, as a polynomial in z = x_iᵀθ:
// s = σ_i z with σ_i = 2y_i − 1, so a s² + s/2 + c = a z² + (σ_i/2) z + c.
func (e *LogisticRegression) jjBound(xi func(i int) float64) *glmBound {
	n := e.Len()
	a, b, c := make([]float64, n), make([]float64, n), make([]float64, n)
	for i := range n {
		x := xi(i)
		a[i] = jjCurvature(x)
		b[i] = e.y[i] - 0.5
		c[i] = -softplus(-x) - x/2 - a[i]*x*x - flyMargin
	}
	return newGLMBound(e, a, b, c)
}

// FlyBound returns the tangent bound of the Student-t likelihood in r²
// (Maclaurin & Adams 2014, §4.2): log L = −(ν+1)/2·log(1 + t/ν) is convex in
// t = r², so its tangent at t₀ = r₀² lies below it:
//
//	log B_i = a r_i² + c, a = −(ν+1)/(2(ν + r₀²)), c = −(ν+1)/2·log(1 + r₀²/ν) − a r₀²,
//
// with r_i = y_i − x_iᵀθ. For a nil at every datum uses r₀ = 0 (the FlyMC
// reference's default); otherwise r₀ is datum i's residual at θ = at, so
// every bound is tight there. The prior is not needed.
func (e *StudentTRegression) FlyBound(at []float64, _ Prior) (FlyBound, error) {
	if at == nil {
		return e.FlyBoundR0(0)
	}
	if len(at) != e.d {
		return nil, fmt.Errorf("exactmh: StudentTRegression.FlyBound: len(at) = %d, want %d", len(at), e.d)
	}
	if err := finiteVec("StudentTRegression.FlyBound: at", at); err != nil {
		return nil, err
	}
	return e.tangentBound(func(i int) float64 { return e.y[i] - dot(e.Row(i), at) }), nil
}

// FlyBoundR0 returns the tangent bound tight at |r_i| = r₀ for every datum
// (see FlyBound).
func (e *StudentTRegression) FlyBoundR0(r0 float64) (FlyBound, error) {
	if math.IsNaN(r0) || math.IsInf(r0, 0) {
		return nil, fmt.Errorf("exactmh: StudentTRegression.FlyBoundR0: r₀ = %v, want finite", r0)
	}
	return e.tangentBound(func(int) float64 { return r0 }), nil
}

// tangentBound writes a(y − z)² + c as a z² − 2a y z + (a y² + c).
func (e *StudentTRegression) tangentBound(r0 func(i int) float64) *glmBound {
	n := e.Len()
	a, b, c := make([]float64, n), make([]float64, n), make([]float64, n)
	for i := range n {
		t0 := r0(i) * r0(i)
		ai := -(e.nu + 1) / (2 * (e.nu + t0))
		ci := -e.u(r0(i)) - ai*t0
		y := e.y[i]
		a[i], b[i], c[i] = ai, -2*ai*y, ai*y*y+ci-flyMargin
	}
	return newGLMBound(e, a, b, c)
}

// FlyBound returns the first-order Taylor bound of the TunaMH paper's
// App. J.3 around θ⁰ = at (θ⁰ = 0 for a nil at):
//
//	log B_i(θ) = −U_i(θ⁰) − ∇U_i(θ⁰)ᵀ(θ − θ⁰) − ½Ū_{2,i}‖θ − θ⁰‖₁²,
//
// where Ū_{2,i} bounds every second partial derivative of U_i on the support.
// It needs a Box prior; Ū_{2,i} is the paper's
// ((2|x_i| + 3r)/σ²)² + ((|x_i| + r)/σ²)² + ((|x_i| + 2r)/σ²)² + 2/σ² with
// r = max_j max(|Lo_j|, |Hi_j|) (r = 3 in the paper). It is looser than
// necessary, but a tighter one would not reproduce the paper's batch sizes.
// Σ_i log B_i needs only Σ_i U_i(θ⁰), Σ_i ∇U_i(θ⁰) and Σ_i Ū_{2,i}.
func (e *GaussianMixture) FlyBound(at []float64, prior Prior) (FlyBound, error) {
	box, ok := prior.(*Box)
	if !ok {
		return nil, fmt.Errorf("exactmh: GaussianMixture.FlyBound needs a *Box prior, have %T", prior)
	}
	theta0 := []float64{0, 0}
	if at != nil {
		if len(at) != 2 {
			return nil, fmt.Errorf("exactmh: GaussianMixture.FlyBound: len(at) = %d, want 2", len(at))
		}
		if !box.Contains(at) {
			return nil, fmt.Errorf("exactmh: GaussianMixture.FlyBound: at = %v outside the prior's box", at)
		}
		theta0 = []float64{at[0], at[1]}
	}
	r := 0.0
	for j := range 2 {
		r = math.Max(r, math.Max(math.Abs(box.Lo[j]), math.Abs(box.Hi[j])))
	}
	n := e.Len()
	b := &mixtureBound{e: e, theta0: theta0, u0: make([]float64, n), g0: make([]float64, 2*n), u2: make([]float64, n)}
	idx, one := []int{0}, []float64{1}
	for i := range n {
		x := math.Abs(e.x[i])
		idx[0] = i
		e.Energies(b.u0[i:i+1], theta0, idx)
		e.AddGradient(b.g0[2*i:2*i+2], theta0, idx, one)
		b.u2[i] = e.curvatureBound(x, r)
		b.sumU0 += b.u0[i]
		b.sumG0[0] += b.g0[2*i]
		b.sumG0[1] += b.g0[2*i+1]
		b.sumU2 += b.u2[i]
	}
	return b, nil
}

// curvatureBound is App. J.3's Ū_{2,i} for |x_i| = x on the box of radius r.
func (e *GaussianMixture) curvatureBound(x, r float64) float64 {
	s := e.sigma2
	p, q, t := (2*x+3*r)/s, (x+r)/s, (x+2*r)/s
	return p*p + q*q + t*t + 2/s
}

type mixtureBound struct {
	e            *GaussianMixture
	theta0       []float64
	u0, g0, u2   []float64
	sumU0, sumU2 float64
	sumG0        [2]float64
}

// LogBoundSum returns −ΣU_i(θ⁰) − (Σ∇U_i(θ⁰))ᵀ(θ − θ⁰) − ½ΣŪ_{2,i}‖θ − θ⁰‖₁².
func (b *mixtureBound) LogBoundSum(theta []float64) float64 {
	d0, d1 := theta[0]-b.theta0[0], theta[1]-b.theta0[1]
	l1 := math.Abs(d0) + math.Abs(d1)
	return -b.sumU0 - b.sumG0[0]*d0 - b.sumG0[1]*d1 - 0.5*b.sumU2*l1*l1 - flyMargin*float64(len(b.u0))
}

// Gaps sets dst[k] = −U_i(θ) − log B_i(θ).
func (b *mixtureBound) Gaps(dst, theta []float64, idx []int) {
	d0, d1 := theta[0]-b.theta0[0], theta[1]-b.theta0[1]
	l1 := math.Abs(d0) + math.Abs(d1)
	for k, i := range idx {
		logB := -b.u0[i] - b.g0[2*i]*d0 - b.g0[2*i+1]*d1 - 0.5*b.u2[i]*l1*l1 - flyMargin
		dst[k] = -b.e.u(b.e.x[i], theta[0], theta[1]) - logB
	}
}

// NewRangeFlyBound returns the constant bound B_i = exp(−max U_i) from the
// posterior's EnergyRange (the global bound PoissonMH uses): log B_i is the
// negated upper end of U_i's range on the prior's support, so FlyMC applies
// wherever PoissonMH does. Being constant it is loose away from the energy's
// maximum; the regression bounds (FlyBounder) are far tighter where they
// exist.
func NewRangeFlyBound(p *Posterior) (FlyBound, error) {
	r, err := p.EnergyRange()
	if err != nil {
		return nil, err
	}
	b := &rangeBound{e: p.Energy, top: make([]float64, len(r.Lo))}
	for i := range b.top {
		b.top[i] = (r.Lo[i]+r.Width[i])/p.beta() + flyMargin
		b.sum += b.top[i]
	}
	return b, nil
}

type rangeBound struct {
	e   Energy
	top []float64 // max U_i + margin
	sum float64
}

// LogBoundSum returns −Σ_i max U_i.
func (b *rangeBound) LogBoundSum([]float64) float64 { return -b.sum }

// Gaps sets dst[k] = max U_i − U_i(θ).
func (b *rangeBound) Gaps(dst, theta []float64, idx []int) {
	b.e.Energies(dst, theta, idx)
	for k, i := range idx {
		dst[k] = b.top[i] - dst[k]
	}
}

// LowerBoundViolation reports a datum whose FlyMC lower bound exceeds its
// likelihood: log B_i(θ) > log L_i(θ) = −U_i(θ), in tempered units.
type LowerBoundViolation struct {
	Datum int
	Theta []float64
	// Gap is β(log L_i(θ) − log B_i(θ)) < 0.
	Gap float64
}

// Error names the datum, the negative gap and θ.
func (v *LowerBoundViolation) Error() string {
	return fmt.Sprintf("exactmh: FlyMC lower bound violated by datum %d: log L − log B = %.6g < 0 at θ = %v", v.Datum, v.Gap, v.Theta)
}

// errNoFlyBound explains what FlyMC needs.
var errNoFlyBound = errors.New("the energy has no FlyMC lower bound: set FlyMC.Bound or use an energy implementing FlyBounder")

// CheckFlyBound samples points θ in the prior's support (as CheckRange does)
// and checks a FlyMC bound there: every gap log L_i − log B_i is ≥ 0, and
// LogBoundSum(θ) equals Σ_i (−U_i(θ) − gap_i(θ)), the sum of the per-datum
// bounds it stands for. It returns the smallest gap found (untempered), and
// an error if a gap is negative or the sum disagrees beyond rounding. Use it
// on every hand-made FlyBound.
func CheckFlyBound(p *Posterior, b FlyBound, opt *CheckOptions) (minGap float64, err error) {
	s, points, err := newPointSampler(p, opt)
	if err != nil {
		return 0, err
	}
	n, d := s.t.N(), s.t.Dim()
	theta := make([]float64, d)
	idx, gaps, u := make([]int, n), make([]float64, n), make([]float64, n)
	for i := range idx {
		idx[i] = i
	}
	minGap = math.Inf(1)
	for range points {
		if err := s.draw(theta, s.center, s.spread); err != nil {
			return 0, err
		}
		b.Gaps(gaps, theta, idx)
		s.t.energy.Energies(u, theta, idx)
		var sum, scale float64
		for i, g := range gaps {
			if math.IsNaN(g) || g < 0 {
				return g, &LowerBoundViolation{Datum: i, Theta: slices.Clone(theta), Gap: g}
			}
			minGap = math.Min(minGap, g)
			sum += -u[i] - g
			scale += math.Abs(u[i]) + g
		}
		if got := b.LogBoundSum(theta); !(math.Abs(got-sum) <= 1e-9*(scale+1)) {
			return minGap, fmt.Errorf("exactmh: FlyBound.LogBoundSum(θ) = %.12g but the per-datum bounds sum to %.12g at θ = %v", got, sum, theta)
		}
	}
	return minGap, nil
}
