// Copyright ©2026 The exactmh Authors. All rights reserved.
// Use of this source code is governed by a BSD-style
// license that can be found in the LICENSE file.

package exactmh

import (
	"context"
	"errors"
	"fmt"
	"math"
	"slices"

	"github.com/exactmh/exactmh/internal/vec"
	"gonum.org/v1/gonum/optimize"
)

// MAPMethod selects FindMAP's search.
type MAPMethod int

const (
	// MAPAuto is damped Newton where it applies — an energy with an exact
	// Hessian (a GLM, GaussianMean, GaussianMixture, any Hessianer) and a
	// prior with one (PriorHessianer) that is neither Box, Ball nor
	// Laplace — and L-BFGS elsewhere. A Newton pass costs O(d²) per datum,
	// an L-BFGS pass O(d): on well-scaled data with d in the hundreds
	// L-BFGS can be several times faster, but on badly scaled or correlated covariates it needs hundreds of
	// passes or does not converge, while Newton's handful of passes does
	// not depend on the conditioning; Auto takes the bounded loss.
	MAPAuto MAPMethod = iota
	// MAPNewton is damped Newton: the Newton step solves H p = −g with the
	// exact Hessian (shifted by a multiple of the identity where it is not
	// positive definite), and a backtracking line search keeps the
	// Armijo condition. FindMAP fails if the posterior lacks an exact
	// Hessian or has a Box, Ball or Laplace prior.
	MAPNewton
	// MAPLBFGS is L-BFGS (gonum/optimize), finished by projected gradient
	// ascent when the mode is on the boundary of a Box or Ball.
	MAPLBFGS
)

// String returns "auto", "Newton" or "L-BFGS".
func (m MAPMethod) String() string {
	switch m {
	case MAPAuto:
		return "auto"
	case MAPNewton:
		return "Newton"
	case MAPLBFGS:
		return "L-BFGS"
	}
	return fmt.Sprintf("MAPMethod(%d)", int(m))
}

// MAPSettings configure FindMAP. A nil *MAPSettings or zero fields mean the
// defaults.
type MAPSettings struct {
	// Method is the search (0: MAPAuto).
	Method MAPMethod
	// Tol stops the search when the Newton decrement δ = ½gᵀH⁻¹g at θ is
	// at most Tol (0: 1e-16), g the gradient and H the Hessian of the
	// negative log posterior — the exact Hessian for Newton, L-BFGS's
	// inverse-Hessian estimate otherwise (it must then hold at two
	// successive iterations). δ is the gain in log density that one more
	// Newton step predicts, and √(2δ) the distance to the mode in
	// standard deviations of the Laplace approximation, whatever N, β and
	// the units of θ: the rule neither tightens as the data grow (as a
	// threshold on the gradient, which grows with N, does) nor depends on
	// how the covariates are scaled. With Tol left at 0, L-BFGS also
	// stops once δ is within the rounding of the log density,
	// 10⁻¹²·(1 + |log π|), which its line search cannot resolve.
	Tol float64
	// GradTol also stops the search when every component of the gradient
	// of the log posterior is below it in magnitude (0: 1e-6). It is
	// absolute, so on tall data Tol is the rule that stops the search.
	GradTol float64
	// MaxIterations bounds the iterations (0: 100 for Newton, 1000 for
	// L-BFGS).
	MaxIterations int
}

// MAP is the result of FindMAP.
type MAP struct {
	// Theta is the best point found.
	Theta []float64
	// LogDensity is log prior(θ) − βΣU_i(θ) at Theta.
	LogDensity float64
	// GradNorm is the Euclidean norm of ∇ log posterior at Theta.
	GradNorm float64
	// Decrement is the Newton decrement δ = ½gᵀH⁻¹g at Theta (see
	// MAPSettings.Tol): with the exact Hessian for Newton, with L-BFGS's
	// estimate at its last iteration otherwise; NaN where there is none
	// (Newton where the Hessian is not positive definite, L-BFGS before
	// its second iteration or after projected ascent).
	Decrement float64
	// Method is the search that ran: MAPNewton or MAPLBFGS.
	Method MAPMethod
	// Iterations is the number of Newton or L-BFGS iterations (and
	// projected-ascent steps).
	Iterations int
	// Passes is the number of times the search read the whole data set:
	// the cost that matters on tall data. A Newton iteration on a GLM reads
	// it once for the energy, gradient and Hessian together (once more per
	// backtracking step, for the energy alone); an L-BFGS evaluation reads
	// it once for an energy that implements EnergyGradienter (the
	// ready-made GLMs do) and twice otherwise. A Hessian costs O(d²) per
	// datum, a gradient O(d): for large d a Newton pass is the slower one.
	// The iterations on a subsample of a tall GLM count as the fraction of
	// the data they read, rounded up.
	Passes int
	// Evals, GradEvals and HessEvals count the datum energy, gradient and
	// Hessian evaluations.
	Evals, GradEvals, HessEvals int64
}

// FindMAP returns the maximum a posteriori point of p from init, on the
// full tempered log posterior: every evaluation reads all N data. It is
// what the MAP-based kernels need: SMH's control-variate centre, FlyMC's
// tuning point (FlyMC.TightAt) and a start for any chain (Settings.Init).
//
// The energy must implement Gradienter (or GLM) and the prior
// PriorGradienter (all the ready-made ones do); otherwise the error wraps
// ErrNoGradient. By default (MAPAuto) the search is damped Newton where the
// exact Hessian is available and the prior is smooth with full support (a
// GLM or GaussianMean under a flat or Gaussian prior): a few passes over
// the data, each reading a GLM's x_i once for f_i, f_i′ and f_i″. On a
// GLM with N ≥ 2¹⁹ data, Newton first converges on a systematic
// subsample of about 2¹⁷ (every ⌊N/2¹⁷⌋-th datum, its log likelihood
// scaled up to N's), whose mode is a few posterior sds from the whole
// data's, and continues from it on all the data if their log posterior
// is higher there. Elsewhere
// it is L-BFGS (gonum/optimize). Both stop when the Newton decrement is
// below MAPSettings.Tol or the gradient below MAPSettings.GradTol.
//
// Outside a bounded prior's support the objective is +Inf, so the line
// search backs off from the boundary; a MAP on the boundary of a Box or Ball
// is finished by projected gradient ascent and returned without error, with
// a GradNorm that need not be small. L-BFGS also converges when the
// objective stops changing, or when its line search can no longer improve it
// with ‖∇‖ ≤ max(10⁻³, 10⁻⁸‖∇ at init‖) or a decrement within rounding
// of the log density (the rounding floor of sums over many data). If the
// search stops without converging — the iteration limit, a non-finite
// value, a cancelled ctx — FindMAP returns the best point found together
// with an error saying why.
func FindMAP(ctx context.Context, p *Posterior, init []float64, s *MAPSettings) (m *MAP, err error) {
	err = guard("FindMAP", func() (err error) {
		m, _, err = findMAP(ctx, p, init, s, false)
		return err
	})
	return m, err
}

// findMAP is FindMAP that also returns the Newton search's last point
// when it converged (nil otherwise, and after L-BFGS): the exact Hessian
// of −log π at the result, dense or, with sparse and where sparsePath
// holds (FindLaplace's sparse path), sparse, and the data's sums there for
// ControlVariates when the search could record them (Target.cvSums).
func findMAP(ctx context.Context, p *Posterior, init []float64, s *MAPSettings, sparse bool) (*MAP, *newtonPoint, error) {
	if err := p.Validate(); err != nil {
		return nil, nil, err
	}
	t, err := NewTarget(p)
	if err != nil {
		return nil, nil, err
	}
	d := t.Dim()
	if len(init) != d {
		return nil, nil, fmt.Errorf("exactmh: FindMAP: len(init) = %d, want %d", len(init), d)
	}
	if ctx == nil {
		ctx = context.Background()
	}
	// A pass over tall data (a Newton sweep reads every row's Hessian) is
	// abandoned within a chunk of data once ctx is cancelled: the search
	// returns the best point found before it (TestFindMAPInterrupted).
	defer t.watch(ctx)()
	if err := t.requireGradient(); err != nil {
		return nil, nil, fmt.Errorf("exactmh: FindMAP %w", err)
	}
	var set MAPSettings
	if s != nil {
		set = *s
	}
	if set.Tol < 0 || math.IsNaN(set.Tol) || set.GradTol < 0 || math.IsNaN(set.GradTol) || set.MaxIterations < 0 {
		return nil, nil, fmt.Errorf("exactmh: FindMAP: Tol = %v, GradTol = %v, MaxIterations = %d, want ≥ 0", set.Tol, set.GradTol, set.MaxIterations)
	}
	if set.Method < MAPAuto || set.Method > MAPLBFGS {
		return nil, nil, fmt.Errorf("exactmh: FindMAP: unknown method %v", set.Method)
	}
	// With the default Tol, L-BFGS also stops at the rounding floor of the
	// log density (see qnConverger); an explicit Tol is kept to the letter.
	floor := set.Tol == 0
	if floor {
		set.Tol = 1e-16
	}
	if set.GradTol == 0 {
		set.GradTol = 1e-6
	}
	if lp := t.LogPrior(init); math.IsInf(lp, -1) || math.IsNaN(lp) {
		return nil, nil, fmt.Errorf("exactmh: FindMAP: init = %v is outside the prior's support", init)
	}
	sparse = sparse && set.Method != MAPLBFGS && sparsePath(p)
	hs, ph, why := newtonParts(t)
	if set.Method == MAPNewton && why != "" && !sparse {
		return nil, nil, fmt.Errorf("exactmh: FindMAP: Newton needs an exact Hessian and a smooth prior with full support: %s", why)
	}
	best := &MAP{Theta: slices.Clone(init), LogDensity: math.Inf(-1), Decrement: math.NaN()}
	var pt *newtonPoint
	if sparse {
		// The sparse path: the same search over the sparse Hessian.
		eh, sph, _ := sparseParts(t)
		best.Method = MAPNewton
		if set.MaxIterations == 0 {
			set.MaxIterations = 100
		}
		pt, err = newtonSearch(ctx, &sparseNewton{t: t, eh: eh, ph: sph, best: best}, best, set, nil)
	} else if set.Method != MAPLBFGS && why == "" {
		best.Method = MAPNewton
		if set.MaxIterations == 0 {
			set.MaxIterations = 100
		}
		var alt *newtonStart
		if alt, err = newtonPresearch(ctx, t, p, ph, best, set); err == nil {
			pt, err = newtonWide(ctx, t, p, hs, ph, best, set, alt)
		}
	} else {
		best.Method = MAPLBFGS
		if set.MaxIterations == 0 {
			set.MaxIterations = 1000
		}
		err = lbfgsSearch(ctx, t, best, set, floor)
	}
	best.Evals, best.GradEvals, best.HessEvals = t.Evals(), t.GradEvals(), t.hessEvals
	if err != nil && errors.Is(err, errInterrupted) {
		err = fmt.Errorf("exactmh: FindMAP stopped after %d iterations: %w", best.Iterations, ctx.Err())
	}
	return best, pt, err
}

// lbfgsSearch runs L-BFGS from best.Theta, and projected ascent after it
// if it stalls against the boundary of a Box or Ball, leaving the best
// point seen in best.
func lbfgsSearch(ctx context.Context, t *Target, best *MAP, set MAPSettings, floor bool) error {
	d := t.Dim()
	init := slices.Clone(best.Theta)
	conv := &qnConverger{tol: set.Tol, floor: floor, fc: &optimize.FunctionConverge{Absolute: 1e-12, Relative: 1e-12, Iterations: 50}}
	var evalErr error
	// An energy with EnergyGradienter gives the gradient with the energy in
	// one read of the data: f keeps it for grad, which gonum asks for at
	// the same point next.
	_, fused := t.Energy().(EnergyGradienter)
	var cacheTheta, cacheGrad []float64
	if fused {
		cacheTheta, cacheGrad = make([]float64, d), make([]float64, d)
	}
	cached := false
	// f(θ) = βΣU_i(θ) − log prior(θ), the negative log posterior.
	f := func(theta []float64) float64 {
		cached = false
		lp := t.LogPrior(theta)
		if math.IsInf(lp, -1) {
			return math.Inf(1)
		}
		best.Passes++
		var u float64
		var err error
		if fused {
			clear(cacheGrad)
			u, err = t.TotalEnergyAndGradient(cacheGrad, theta)
			copy(cacheTheta, theta)
			cached = err == nil
		} else {
			u, err = t.TotalEnergy(theta)
		}
		if err != nil {
			if evalErr == nil {
				evalErr = err
			}
			return math.NaN()
		}
		conv.logDensity = lp - u
		if v := lp - u; v > best.LogDensity {
			best.LogDensity = v
			copy(best.Theta, theta)
		}
		return u - lp
	}
	grad := func(g, theta []float64) {
		clear(g)
		if math.IsInf(t.LogPrior(theta), -1) {
			return // outside the support f is +Inf; any finite gradient will do
		}
		if cached && slices.Equal(theta, cacheTheta) {
			copy(g, cacheGrad)
		} else {
			best.Passes++
			if err := t.addFullGradient(g, theta); err != nil && evalErr == nil {
				evalErr = err
			}
		}
		// g holds β∇ΣU; subtract ∇log prior.
		for j := range g {
			g[j] = -g[j]
		}
		if err := t.AddLogPriorGradient(g, theta); err != nil && evalErr == nil {
			evalErr = err
		}
		for j := range g {
			g[j] = -g[j]
		}
	}
	// The start is the best point until a better one is seen; L-BFGS is
	// handed its value and gradient.
	f0 := f(best.Theta)
	g0 := make([]float64, d)
	grad(g0, best.Theta)
	if evalErr != nil {
		return fmt.Errorf("exactmh: FindMAP: %w", evalErr)
	}
	// The gradient's size at the start sets the scale of its rounding floor.
	startNorm := math.Sqrt(vec.Dot(g0, g0))
	res, err := optimize.Minimize(optimize.Problem{Func: f, Grad: grad},
		init,
		&optimize.Settings{
			InitValues:        &optimize.Location{F: f0, Gradient: slices.Clone(g0)},
			GradientThreshold: set.GradTol,
			MajorIterations:   set.MaxIterations,
			Converger:         conv,
			Recorder:          ctxRecorder{ctx},
		},
		&optimize.LBFGS{})

	// Report the best point seen, with its gradient (for priors with kinks,
	// the smallest subgradient).
	g := make([]float64, d)
	grad(g, best.Theta)
	if k, ok := t.Prior().(kinked); ok {
		for j := range g { // g is ∇f = −∇log π: flip to the log posterior's
			g[j] = -g[j]
		}
		k.MinNormSubgradient(best.Theta, g)
	}
	best.GradNorm = math.Sqrt(vec.Dot(g, g))
	best.Decrement = conv.dec
	if res != nil {
		best.Iterations = res.Stats.MajorIterations
	}
	switch {
	case ctx.Err() != nil:
		return fmt.Errorf("exactmh: FindMAP stopped after %d iterations: %w", best.Iterations, ctx.Err())
	case evalErr != nil:
		return fmt.Errorf("exactmh: FindMAP: %w", evalErr)
	case err != nil && (best.GradNorm <= max(stallGrad, 1e-8*startNorm) || conv.dec <= max(set.Tol, logDensityNoise(best.LogDensity))):
		// The line search can make no further progress this close to the
		// optimum: rounding of the summed gradient or log density, not a
		// failure.
		return nil
	case err != nil && isProjectable(t.Prior()):
		// L-BFGS stalls against the edge of a box or ball when the mode lies
		// on it: finish by projected gradient ascent.
		best.Decrement = math.NaN()
		return projectedAscent(ctx, t, best, set)
	case err != nil:
		return fmt.Errorf("exactmh: FindMAP: %w (‖∇‖ = %.3g after %d iterations)", err, best.GradNorm, best.Iterations)
	case res.Status == optimize.IterationLimit:
		return fmt.Errorf("exactmh: FindMAP did not converge in %d iterations (‖∇‖ = %.3g)", best.Iterations, best.GradNorm)
	}
	return nil
}

// logDensityNoise is the rounding error allowed in a log density v summed
// over many data: 10⁻¹²·(1 + |v|). A sum of N terms in float64 is exact to
// about √N·ε relative (10⁻¹³ for N = 10⁶), so 10⁻¹² covers N up to 10⁸ with margin; a gain
// below it cannot be resolved by comparing log densities.
func logDensityNoise(v float64) float64 { return 1e-12 * (1 + math.Abs(v)) }

// qnConverger stops L-BFGS when the quasi-Newton decrement ½gᵀH_kg — H_k
// the inverse-Hessian estimate of the last (s, y) pairs of accepted points,
// as L-BFGS builds it — is at most tol, or with floor max(tol,
// logDensityNoise), at two successive iterations, and otherwise defers to
// gonum's FunctionConverge. (A line search that compares log densities
// cannot resolve a gain below their rounding: on N = 10⁶ data, trying
// wasted a hundred passes.)
type qnConverger struct {
	tol        float64
	floor      bool
	logDensity float64 // the last log density evaluated
	fc         *optimize.FunctionConverge
	s, y       [][]float64
	x, g       []float64
	hits       int
	dec        float64 // the last estimate of the decrement, NaN before there is one
}

// qnMemory is the number of (s, y) pairs qnConverger keeps, as many as
// gonum's L-BFGS.
const qnMemory = 15

func (c *qnConverger) Init(dim int) {
	c.s, c.y, c.x, c.g, c.hits, c.dec = nil, nil, nil, nil, 0, math.NaN()
	c.fc.Init(dim)
}

func (c *qnConverger) Converged(loc *optimize.Location) optimize.Status {
	if c.x != nil {
		s, y := make([]float64, len(loc.X)), make([]float64, len(loc.X))
		for j := range s {
			s[j], y[j] = loc.X[j]-c.x[j], loc.Gradient[j]-c.g[j]
		}
		if vec.Dot(s, y) > 0 { // curvature along s: a usable pair
			c.s, c.y = append(c.s, s), append(c.y, y)
			if len(c.s) > qnMemory {
				c.s, c.y = c.s[1:], c.y[1:]
			}
		}
	}
	c.x, c.g = slices.Clone(loc.X), slices.Clone(loc.Gradient)
	if len(c.s) > 0 {
		c.dec = 0.5 * vec.Dot(loc.Gradient, vec.LBFGSTwoLoop(c.s, c.y, loc.Gradient))
		tol := c.tol
		if c.floor {
			tol = max(tol, logDensityNoise(c.logDensity))
		}
		if c.dec <= tol {
			if c.hits++; c.hits >= 2 {
				return optimize.MethodConverge
			}
		} else {
			c.hits = 0
		}
	}
	return c.fc.Converged(loc)
}

// kinked is a prior with points of non-differentiability (model.Laplace):
// at a kink, optimality is a zero subgradient, not a zero gradient.
type kinked interface {
	// MinNormSubgradient replaces g, a gradient of the log posterior at θ,
	// by the smallest-norm element of its subdifferential.
	MinNormSubgradient(theta, g []float64)
}

// isProjectable reports whether the prior's support has a Euclidean
// projection (BoundedSupport.Project).
func isProjectable(p Prior) bool { _, ok := p.(BoundedSupport); return ok }

// projectedAscent improves best by projected gradient ascent with
// backtracking (Armijo) until a step changes θ by less than 10⁻¹⁰
// relative: the way to a mode on the boundary of a box or ball.
func projectedAscent(ctx context.Context, t *Target, best *MAP, set MAPSettings) error {
	proj := t.Prior().(BoundedSupport)
	d := len(best.Theta)
	g, trial := make([]float64, d), make([]float64, d)
	theta := best.Theta
	logPi := func(v []float64) (float64, error) {
		best.Passes++
		u, err := t.TotalEnergy(v)
		return t.LogPrior(v) - u, err
	}
	grad := func(v []float64) error {
		clear(g)
		best.Passes++
		if err := t.addFullGradient(g, v); err != nil {
			return err
		}
		for j := range g {
			g[j] = -g[j]
		}
		return t.AddLogPriorGradient(g, v)
	}
	lp, err := logPi(theta)
	if err != nil {
		return err
	}
	step := 1.0
	for it := range 20 * set.MaxIterations {
		if err := ctx.Err(); err != nil {
			return fmt.Errorf("exactmh: FindMAP stopped: %w", err)
		}
		if err := grad(theta); err != nil {
			return err
		}
		norm := math.Sqrt(vec.Dot(g, g))
		if norm == 0 {
			break
		}
		if it == 0 {
			step = 1 / norm
		}
		moved := false
		for ; step > 1e-300; step /= 2 {
			for j := range trial {
				trial[j] = theta[j] + step*g[j]
			}
			proj.Project(trial)
			lt, err := logPi(trial)
			if err != nil {
				return err
			}
			var dec float64
			for j := range trial {
				dec += g[j] * (trial[j] - theta[j])
			}
			if lt >= lp+1e-4*dec && lt >= lp {
				var change, size float64
				for j := range trial {
					change += (trial[j] - theta[j]) * (trial[j] - theta[j])
					size += theta[j] * theta[j]
				}
				copy(theta, trial)
				lp = lt
				moved = change > 1e-20*(1+size)
				step *= 2
				break
			}
		}
		if !moved {
			break
		}
		best.Iterations++
	}
	best.LogDensity = lp
	if err := grad(theta); err != nil {
		return err
	}
	best.GradNorm = math.Sqrt(vec.Dot(g, g))
	return nil
}

// stallGrad is the gradient norm below which a line search that cannot
// improve is taken as converged (or 10⁻⁸ of the gradient at the start, if
// larger: on big data the summed gradient's rounding floor grows with it).
const stallGrad = 1e-3

// ctxRecorder stops gonum's optimiser when ctx is done.
type ctxRecorder struct{ ctx context.Context }

func (r ctxRecorder) Init() error { return nil }
func (r ctxRecorder) Record(*optimize.Location, optimize.Operation, *optimize.Stats) error {
	if err := r.ctx.Err(); err != nil {
		return errors.Join(errMAPCanceled, err)
	}
	return nil
}

var errMAPCanceled = errors.New("canceled")
