// Copyright ©2026 The exactmh Authors. All rights reserved.
// Use of this source code is governed by a BSD-style
// license that can be found in the LICENSE file.

package exactmh

import (
	"fmt"
	"math"
	"slices"

	"github.com/exactmh/exactmh/internal/vec"
	"gonum.org/v1/gonum/mat"
)

// FlyBound is a collapsible lower bound on every datum's likelihood, the
// ingredient of Firefly Monte Carlo: 0 < B_i(θ) ≤ L_i(θ) = exp(−U_i(θ)),
// chosen so that Σ_i log B_i(θ) costs time independent of N (a quadratic
// form in θ for the regression bounds). Bounds are in untempered units, as
// every bound in exactmh; FlyMC raises them to the power β with the
// likelihood (B_i^β ≤ L_i^β).
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

// FlyBounder is implemented by energies with ready-made FlyMC bounds. A GLM
// that does not implement it gets GLMFlyBound.
type FlyBounder interface {
	// FlyBound returns the energy's lower bounds for the prior's support:
	// tight at θ = at (MAP-tuned FlyMC) or, for a nil at, the energy's
	// untuned default.
	FlyBound(at []float64, prior Prior) (FlyBound, error)
}

// flyMargin is subtracted from every log B_i of the package's FlyMC bounds
// (and model's) so that the gaps stay strictly positive even where a bound
// is tight (log ρ_i = log(e^gap − 1) is then finite), as in the FlyMC
// reference code (EPS = 1e-6). It shifts Σ log B_i by a constant and
// changes nothing else.
const flyMargin = 1e-6

// glmBound is the quadratic bound shared by the GLM energies: with
// z_i = x_iᵀθ, log B_i(θ) = a_i z_i² + b_i z_i + c_i, so
// Σ_i log B_i(θ) = θᵀAθ + vᵀθ + Σc_i with A = Σ a_i x_i x_iᵀ, v = Σ b_i x_i:
// O(d²) per evaluation after an O(N d²) set-up.
type glmBound struct {
	e       GLM
	conv    rowConverter // e's, if its rows are not float64
	a, b, c []float64
	quad    *mat.SymDense // A
	lin     []float64     // v
	sumC    float64
	d       int
}

// GLMQuadraticFlyBound returns the FlyBound log B_i(θ) = a_i z_i² + b_i z_i
// + c_i − 10⁻⁶, z_i = x_iᵀθ, of the GLM e, its sum collapsed to O(d²) per
// evaluation after one pass over the data: the form of GLMFlyBound and of
// model's Jaakkola–Jordan (logistic) and tangent (Student-t) bounds. The
// caller guarantees a_i z² + b_i z + c_i ≤ −U_i on the prior's support
// (CheckFlyBound tests it); the margin of 10⁻⁶ keeps the gaps strictly
// positive where that bound is tight.
func GLMQuadraticFlyBound(e GLM, a, b, c []float64) FlyBound {
	c = slices.Clone(c)
	for i := range c {
		c[i] -= flyMargin
	}
	return newGLMBound(e, a, b, c)
}

// newGLMBound collapses the per-datum coefficients.
func newGLMBound(e GLM, a, b, c []float64) *glmBound {
	d := e.Dim()
	g := &glmBound{e: e, a: a, b: b, c: c, quad: mat.NewSymDense(d, nil), lin: make([]float64, d), d: d}
	g.conv = rowConverterOf(e)
	rows := newRowCursor(e)
	for i := range a {
		row := rows.row(i)
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
	s := g.sumC + vec.Dot(g.lin, theta)
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
		var z float64
		if g.conv != nil {
			z = g.conv.rowDot(i, theta)
		} else {
			z = vec.Dot(g.e.Row(i), theta)
		}
		dst[k] = -g.e.Loss(i, z) - (g.a[i]*z*z + g.b[i]*z + g.c[i])
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
		b.top[i] = r.Lo[i] + r.Width[i] + flyMargin
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

// LowerBoundViolation describes the datum with the smallest gap between
// its likelihood and its FlyMC lower bound found by CheckFlyBound, and is
// the error, with a negative gap, of CheckFlyBound and of a FlyMC chain
// whose bound fails: log B_i(θ) > log L_i(θ) = −U_i(θ).
type LowerBoundViolation struct {
	Datum int
	Theta []float64
	// Gap is log L_i(θ) − log B_i(θ): untempered from CheckFlyBound, β
	// times it in a chain's error; negative in an error.
	Gap float64
}

// Error names the datum, the negative gap and θ.
func (v *LowerBoundViolation) Error() string {
	return fmt.Sprintf("FlyMC lower bound violated by datum %d: log L − log B = %.6g < 0 at θ = %v", v.Datum, v.Gap, v.Theta)
}

// CheckFlyBound samples points θ in the prior's support (as CheckRange does)
// and checks a FlyMC bound there: every gap log L_i − log B_i is ≥ 0, and
// LogBoundSum(θ) equals Σ_i (−U_i(θ) − gap_i(θ)), the sum of the per-datum
// bounds it stands for. It returns the datum with the smallest gap found
// (untempered; how tight the bound is), and an error if a gap is negative
// (wrapping that datum's LowerBoundViolation) or the sum disagrees beyond
// rounding. Use it on every hand-made FlyBound.
func CheckFlyBound(p *Posterior, b FlyBound, opt *CheckOptions) (*LowerBoundViolation, error) {
	s, points, err := newPointSampler(p, opt)
	if err != nil {
		return nil, err
	}
	n, d := s.t.N(), s.t.Dim()
	theta := make([]float64, d)
	idx, gaps, u := make([]int, n), make([]float64, n), make([]float64, n)
	for i := range idx {
		idx[i] = i
	}
	var worst *LowerBoundViolation
	for range points {
		if err := s.draw(theta, s.center, s.spread); err != nil {
			return worst, err
		}
		b.Gaps(gaps, theta, idx)
		s.t.energy.Energies(u, theta, idx)
		var sum, scale float64
		for i, g := range gaps {
			if math.IsNaN(g) || g < 0 {
				v := &LowerBoundViolation{Datum: i, Theta: slices.Clone(theta), Gap: g}
				return v, fmt.Errorf("exactmh: CheckFlyBound: %w", v)
			}
			if worst == nil || g < worst.Gap {
				worst = &LowerBoundViolation{Datum: i, Theta: slices.Clone(theta), Gap: g}
			}
			sum += -u[i] - g
			scale += math.Abs(u[i]) + g
		}
		if got := b.LogBoundSum(theta); !(math.Abs(got-sum) <= 1e-9*(scale+1)) {
			return worst, fmt.Errorf("exactmh: FlyBound.LogBoundSum(θ) = %.12g but the per-datum bounds sum to %.12g at θ = %v", got, sum, theta)
		}
	}
	return worst, nil
}
