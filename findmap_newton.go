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

	"github.com/exactmh/exactmh/internal/fdiff"
	"github.com/exactmh/exactmh/internal/newton"
	"github.com/exactmh/exactmh/internal/precision"
	"github.com/exactmh/exactmh/internal/vec"
)

// newtonParts returns the exact Hessians of the energy and the prior, or
// why Newton's method does not apply.
func newtonParts(t *Target) (Hessianer, PriorHessianer, string) {
	hs := t.hessianer()
	if hs == nil {
		return nil, nil, fmt.Sprintf("energy %T implements neither Hessianer nor GLM", t.Energy())
	}
	switch t.Prior().(type) {
	case BoundedSupport:
		return nil, nil, fmt.Sprintf("prior %T: the mode may lie on its boundary", t.Prior())
	case kinked:
		return nil, nil, fmt.Sprintf("prior %T: the mode may lie on a kink", t.Prior())
	}
	ph, ok := t.Prior().(PriorHessianer)
	if !ok {
		return nil, nil, fmt.Sprintf("prior %T does not implement PriorHessianer", t.Prior())
	}
	return hs, ph, ""
}

// newtonPoint is a point of the Newton search (internal/newton's Point:
// θ, f = −log π, its gradient, the Newton step and decrement) with what
// the models record there: the dense Hessian's upper triangle (h, which
// Hess factors; nil for the sparse model) and, when recorded
// (denseNewton.record), the data's parts of g and h as the sweep summed
// them, before the prior's (dg, dh).
type newtonPoint struct {
	newton.Point
	h      []float64 // dense: upper triangle of the d×d Hessian, row-major
	dg, dh []float64
}

// sums returns the data's sums recorded at pt for ControlVariates, or nil
// if none were recorded. They are handed over, not copied: pt is not
// evaluated again.
func (pt *newtonPoint) sums(e Energy) *dataSums {
	if pt.dg == nil {
		return nil
	}
	return &dataSums{energy: e, theta: slices.Clone(pt.X), grad: pt.dg, hess: pt.dh}
}

// direction sets the Newton step and decrement of pt: through the factor
// of H, or of H + τI where H is not positive definite (or numerically
// singular), which still gives a descent direction (precision.Hessian).
func (pt *newtonPoint) direction() error {
	if err := pt.Direction(); err != nil {
		return fmt.Errorf("exactmh: %w at θ = %v", err, pt.X)
	}
	return nil
}

// newtonModel is what the Newton search evaluates (newton.Problem): f =
// −log π with its gradient and Hessian at a point (Eval, which also sets
// the step), and f alone (Value, +Inf outside the prior's support), each
// adding the passes over the data it made to the search's MAP.
// denseNewton and sparseNewton are its two: the search itself is
// internal/newton's.
type newtonModel interface {
	newton.Problem[*newtonPoint]
	point() *newtonPoint
}

// denseNewton is the Newton model of an energy with an exact dense
// Hessian (Hessianer, or a GLM's): f, g and H in one pass for a GLM
// (Target.newtonSweep).
type denseNewton struct {
	t      *Target
	hs     Hessianer
	ph     PriorHessianer
	best   *MAP
	record bool // record the data's sums (newtonPoint.dg, dh)
	prior  []float64
}

func (m *denseNewton) point() *newtonPoint {
	d := m.t.Dim()
	pt := &newtonPoint{Point: newton.Point{X: make([]float64, d), G: make([]float64, d), Step: make([]float64, d)}, h: make([]float64, d*d)}
	pt.Hess = &precision.DenseHessian{D: d, H: pt.h}
	if m.record {
		pt.dg, pt.dh = make([]float64, d), make([]float64, d*d)
	}
	return pt
}

func (m *denseNewton) Eval(pt *newtonPoint) error {
	t, d := m.t, m.t.Dim()
	clear(pt.G)
	clear(pt.h)
	lp := t.LogPrior(pt.X)
	if math.IsInf(lp, -1) {
		return errOutside
	}
	u, passes, err := t.newtonSweep(m.hs, pt.h, pt.G, pt.X)
	m.best.Passes += passes
	if err != nil {
		return err
	}
	pt.F = u - lp
	if pt.dg != nil {
		copy(pt.dg, pt.G)
		copy(pt.dh, pt.h)
	}
	// Subtract ∇log p and ∇²log p.
	if err := pt.priorGradient(t); err != nil {
		return err
	}
	if m.prior == nil {
		m.prior = make([]float64, d*d)
	}
	return pt.priorCurvature(m.ph, m.prior, d)
}

func (m *denseNewton) Value(theta []float64) (float64, error) {
	return posteriorEnergy(m.t, m.best, theta)
}

// posteriorEnergy is U(θ) − log p(θ), +Inf outside the prior's support
// without a pass over the data; a pass is counted in best.Passes.
func posteriorEnergy(t *Target, best *MAP, theta []float64) (float64, error) {
	lp := t.LogPrior(theta)
	if math.IsInf(lp, -1) {
		return math.Inf(1), nil
	}
	best.Passes++
	u, err := t.TotalEnergy(theta)
	return u - lp, err
}

// priorGradient subtracts ∇log p(pt.X) from pt.G, the energy's gradient
// (AddLogPriorGradient adds to −G, the log posterior's gradient).
func (pt *newtonPoint) priorGradient(t *Target) error {
	for j := range pt.G {
		pt.G[j] = -pt.G[j]
	}
	if err := t.AddLogPriorGradient(pt.G, pt.X); err != nil {
		return err
	}
	for j := range pt.G {
		pt.G[j] = -pt.G[j]
	}
	return nil
}

// priorCurvature subtracts the log prior's Hessian at pt.X (summed into
// scratch, d×d) from the upper triangle of pt.h, checks that triangle is
// finite and sets the Newton direction.
func (pt *newtonPoint) priorCurvature(ph PriorHessianer, scratch []float64, d int) error {
	clear(scratch)
	ph.AddLogPriorHessian(scratch, pt.X)
	for a := range d {
		for b := a; b < d; b++ {
			pt.h[a*d+b] -= scratch[a*d+b]
		}
	}
	if err := fdiff.FiniteUpper(pt.h, d, pt.X); err != nil {
		return err
	}
	return pt.direction()
}

// newtonSearch runs damped Newton (internal/newton) from best.Theta over
// the model m (dense or sparse) and leaves the best point in best. It
// returns the last point when the search converged: its Hessian is the
// exact Hessian of −log π at best.Theta (not positive definite where
// pt.Shift > 0, which is for the caller), and, when m recorded them, the
// data's sums there for ControlVariates.
//
// An iteration evaluates f, g and H at the full Newton step θ + p (one
// pass for a GLM) and takes it if it satisfies the Armijo condition
// f(θ + p) ≤ f(θ) − 10⁻⁴·gᵀ(H + τI)⁻¹g, or if f rose by no more than the
// rounding of a log density summed over many data while the decrement fell
// (near the mode the change of f drowns in rounding, the decrement does
// not). Otherwise it backtracks by energies alone, to the minimiser of the
// quadratic through f(θ), its slope and the last trial, kept within
// [0.1, 0.5] of the last step, and evaluates g and H only where it stops
// (newtonPolicy). It stops where the decrement is at most set.Tol or the
// gradient below set.GradTol, or at the rounding floor of f.
//
// alt, if not nil, is where the search started before the presearch moved
// best.Theta (newtonPresearch): the first pass compares the log posterior
// at best.Theta with alt's and, unless it is higher, the search starts
// from alt instead.
func newtonSearch(ctx context.Context, m newtonModel, best *MAP, set MAPSettings, alt *newtonStart) (*newtonPoint, error) {
	cur, trial := m.point(), m.point()
	copy(cur.X, best.Theta)
	err := m.Eval(cur)
	if alt != nil && (err != nil || !(cur.F < alt.f)) {
		copy(best.Theta, alt.theta)
		copy(cur.X, alt.theta)
		err = m.Eval(cur)
	}
	if err != nil {
		return nil, fmt.Errorf("exactmh: FindMAP: %w", err)
	}
	pol := newtonPolicy
	pol.DecTol, pol.GradTol, pol.MaxIterations = set.Tol, set.GradTol, set.MaxIterations
	s := newton.Search[*newtonPoint]{Problem: m, Policy: pol, Iterations: best.Iterations,
		Report: func(cur *newtonPoint) {
			copy(best.Theta, cur.X)
			best.LogDensity = -cur.F
			best.GradNorm = math.Sqrt(vec.Dot(cur.G, cur.G))
			best.Decrement = math.NaN()
			if cur.Shift == 0 {
				best.Decrement = cur.Dec / 2
			}
		}}
	pt, out, err := s.Minimize(ctx, cur, trial)
	best.Iterations = s.Iterations
	switch out {
	case newton.Converged:
		return pt, nil // (H not positive definite is for the caller)
	case newton.Stopped:
		return nil, fmt.Errorf("exactmh: FindMAP stopped after %d iterations: %w", best.Iterations, err)
	case newton.MaxIterations:
		return nil, fmt.Errorf("exactmh: FindMAP did not converge in %d Newton iterations (‖∇‖ = %.3g, decrement %.3g)", best.Iterations, best.GradNorm, pt.Dec/2)
	case newton.NoDecrease:
		e := fmt.Errorf("exactmh: FindMAP: the line search found no decrease along the Newton direction at θ = %v (‖∇‖ = %.3g, decrement %.3g)", pt.X, best.GradNorm, pt.Dec/2)
		if err != nil {
			e = fmt.Errorf("%w; the full step failed with: %w", e, err)
		}
		return nil, e
	}
	return nil, fmt.Errorf("exactmh: FindMAP: %w", err)
}

// newtonPolicy is newtonSearch's rule (its tolerances and cap are
// MAPSettings'): the Armijo condition with c = 10⁻⁴, the full step
// evaluated with its gradient and Hessian (one pass for a GLM), the
// rounding floor logDensityNoise, and backtracking by the clamped
// quadratic fit down to a step of 10⁻¹⁰.
var newtonPolicy = newton.Policy{
	Armijo:     1e-4,
	LineSearch: newton.Quadratic,
	MinStep:    1e-10,
	Fused:      true,
	Noise:      logDensityNoise,
	Floor:      newton.FloorStop,
}

// stridedGLM is every stride-th datum of a GLM (data 0, stride, 2·stride,
// …): FindMAP's first phase on tall data (newtonPresearch) finds the mode
// of this subsample's posterior, tempered by stride so that it weighs as
// much as the whole, before any pass over all the data.
type stridedGLM struct {
	g      GLM
	conv   rowConverter // g's, or nil
	stride int
	n      int
}

func newStridedGLM(g GLM, stride int) *stridedGLM {
	s := &stridedGLM{g: g, stride: stride, n: (g.Len() + stride - 1) / stride}
	s.conv = rowConverterOf(g)
	return s
}

func (s *stridedGLM) Dim() int                      { return s.g.Dim() }
func (s *stridedGLM) Len() int                      { return s.n }
func (s *stridedGLM) Row(i int) []float64           { return s.g.Row(i * s.stride) }
func (s *stridedGLM) Loss(i int, z float64) float64 { return s.g.Loss(i*s.stride, z) }
func (s *stridedGLM) LossDerivs(i int, z float64) (f1, f2 float64) {
	return s.g.LossDerivs(i*s.stride, z)
}

func (s *stridedGLM) LossBound(i, k int, lo, hi float64) float64 {
	return s.g.LossBound(i*s.stride, k, lo, hi)
}

// Energies sets dst[k] = f_i(x_iᵀθ) of the subsample's data idx.
func (s *stridedGLM) Energies(dst, theta []float64, idx []int) {
	for k, i := range idx {
		j := i * s.stride
		if s.conv != nil {
			dst[k] = s.g.Loss(j, s.conv.rowDot(j, theta))
		} else {
			dst[k] = s.g.Loss(j, vec.Dot(s.g.Row(j), theta))
		}
	}
}

// stridedRows is the subsample of a GLM whose rows are not float64 slices
// (a rowConverter): the Newton sweep reads them through it, as it reads
// the whole GLM's, without allocating.
type stridedRows struct{ *stridedGLM }

func (s stridedRows) rowDot(i int, theta []float64) float64 { return s.conv.rowDot(i*s.stride, theta) }
func (s stridedRows) rowDot2(i int, a, b []float64) (float64, float64) {
	return s.conv.rowDot2(i*s.stride, a, b)
}
func (s stridedRows) rowAxpy(grad []float64, alpha float64, i int) {
	s.conv.rowAxpy(grad, alpha, i*s.stride)
}
func (s stridedRows) readRow(dst []float64, i int) []float64 { return s.conv.readRow(dst, i*s.stride) }

// newtonPresearch is FindMAP's first phase on a tall GLM (N at least
// newtonPresearchFactor·newtonHessianRows): damped Newton on the posterior
// of every stride-th datum, tempered by stride (about newtonHessianRows
// data), to a decrement of newtonNear nats. Its mode lies within about
// √stride posterior sds of the whole data's, where Newton on all the data
// converges in a few iterations (TestFindLaplacePresearch). The result
// replaces best.Theta; the start is returned with its negative log
// posterior, for the search to go back to unless the whole data's log
// posterior is higher at the result (a subsample may separate a rare
// category): the search's first pass decides. Evaluations are added to
// best's counts, passes as the fraction of the data read. Errors other
// than the context's leave best.Theta as it was, and return no start.
func newtonPresearch(ctx context.Context, t *Target, p *Posterior, ph PriorHessianer, best *MAP, set MAPSettings) (*newtonStart, error) {
	g, ok := t.Energy().(GLM)
	if _, own := t.Energy().(Hessianer); !ok || own || t.N() < newtonPresearchFactor*newtonHessianRows {
		return nil, nil
	}
	stride := t.N() / newtonHessianRows
	sub := newStridedGLM(g, stride)
	var wrapped GLM = sub
	if sub.conv != nil {
		wrapped = stridedRows{sub}
	}
	st, err := NewTarget(&Posterior{Energy: wrapped, Prior: p.Prior, Beta: t.Beta() * float64(stride)})
	if err != nil {
		return nil, nil
	}
	pre := &MAP{Theta: slices.Clone(best.Theta), LogDensity: math.Inf(-1), Decrement: math.NaN()}
	preSet := set
	preSet.Tol, preSet.GradTol, preSet.MaxIterations = newtonNear, 0, newtonPresearchIterations
	// A row every stride: over a file mapping each would pull in the
	// disk's read-ahead around it, about the whole file a sweep.
	done := memRows(t.energy).randomReads(t.d, 0, t.n)
	_, err = newtonSearch(ctx, &denseNewton{t: st, hs: st.hessianer(), ph: ph, best: pre}, pre, preSet, nil)
	done()
	best.Iterations += pre.Iterations
	best.Passes += (pre.Passes*st.N() + t.N() - 1) / t.N()
	t.evals += st.Evals()
	t.gradEvals += st.GradEvals()
	t.hessEvals += st.hessEvals
	if cerr := ctx.Err(); cerr != nil {
		return nil, fmt.Errorf("exactmh: FindMAP stopped after %d iterations: %w", best.Iterations, cerr)
	}
	if err != nil {
		return nil, nil
	}
	// Kept only if the whole posterior agrees: the start's energy here
	// (one pass), the result's in the search's first pass.
	f0, err0 := glmStartEnergy(t, g, best.Theta)
	best.Passes++
	if err0 != nil {
		return nil, nil
	}
	start := &newtonStart{theta: slices.Clone(best.Theta), f: f0 - t.LogPrior(best.Theta)}
	copy(best.Theta, pre.Theta)
	return start, nil
}

// glmStartEnergy is t.TotalEnergy(θ) for the GLM g, but at θ = 0, the
// default start, it sums the losses f_i(0) in the same chunks without
// reading a row (x_iᵀ0 = 0 for finite rows): the labels alone, a
// hundredth of a pass on the flights.
func glmStartEnergy(t *Target, g GLM, theta []float64) (float64, error) {
	for _, v := range theta {
		if v != 0 {
			return t.TotalEnergy(theta)
		}
	}
	idx, val := make([]int, chunk), make([]float64, chunk)
	var sum float64
	for lo := 0; lo < t.N(); lo += chunk {
		m := min(chunk, t.N()-lo)
		for k := range m {
			idx[k] = lo + k
			val[k] = g.Loss(lo+k, 0)
		}
		s, err := sumEnergies(val[:m], idx[:m], theta)
		if err != nil {
			return 0, err
		}
		sum += s
	}
	t.evals += int64(t.N())
	return t.Beta() * sum, nil
}

// newtonStart is a point the Newton search may start from instead, with
// its negative log posterior (newtonPresearch).
type newtonStart struct {
	theta []float64
	f     float64
}

// The first phase of FindMAP on tall GLMs (newtonPresearch): from N =
// newtonPresearchFactor·newtonHessianRows data, at most
// newtonPresearchIterations Newton iterations on a subsample of about
// newtonHessianRows.
const (
	newtonPresearchFactor     = 4
	newtonPresearchIterations = 50
)

// newtonHessianRows is about the number of data FindMAP's presearch
// reads (newtonPresearch), newtonNear the decrement, in nats, to which it
// converges: the whole data's mode is then within a few of its sds.
const (
	newtonHessianRows = 1 << 17
	newtonNear        = 1.0
)

// errOutside is the error of a Newton evaluation outside the prior's
// support (a user's PriorHessianer with a bounded support).
var errOutside = errors.New("θ is outside the prior's support")

// wideNewton is the Newton model of FindMAP's first phases on a wide GLM
// (newtonWide): f and g from the whole data (one gradient pass, d
// multiply-adds a datum) and H either from a strided subsample tempered by
// its stride (sub: (N/stride)·d²/2 multiply-adds, an unbiased estimate of
// the whole data's Hessian) or, once frozen is set, the exact Hessian of an
// earlier iterate. Newton with an approximate Hessian H̃ still descends
// (H̃ positive definite) and converges linearly, at the rate
// ‖I − H̃⁻¹H‖ near the mode; the exact search that follows
// (denseNewton) then sums the exact Hessian once, at the mode.
type wideNewton struct {
	t      *Target
	sub    *Target // the subsample, β·stride; nil once frozen
	subHs  Hessianer
	ph     PriorHessianer
	best   *MAP
	frozen []float64    // the exact Hessian's upper triangle (data and prior) of an earlier iterate
	primed *newtonPoint // the exact point frozen was summed at: its f and g are not read again
	prior  []float64
	sg     []float64 // the subsample's gradient (not used)
	subN   int64     // data the subsample's sweeps read
}

func (m *wideNewton) point() *newtonPoint {
	d := m.t.Dim()
	pt := &newtonPoint{Point: newton.Point{X: make([]float64, d), G: make([]float64, d), Step: make([]float64, d)}, h: make([]float64, d*d)}
	pt.Hess = &precision.DenseHessian{D: d, H: pt.h}
	return pt
}

func (m *wideNewton) Eval(pt *newtonPoint) error {
	t, d := m.t, m.t.Dim()
	if q := m.primed; q != nil && slices.Equal(pt.X, q.X) {
		m.primed = nil
		pt.F = q.F
		copy(pt.G, q.G)
		copy(pt.h, m.frozen)
		return pt.direction()
	}
	lp := t.LogPrior(pt.X)
	if math.IsInf(lp, -1) {
		return errOutside
	}
	clear(pt.G)
	m.best.Passes++
	if _, fused := t.energy.(EnergyGradienter); !fused {
		m.best.Passes++
	}
	u, err := t.TotalEnergyAndGradient(pt.G, pt.X)
	if err != nil {
		return err
	}
	pt.F = u - lp
	if err := pt.priorGradient(t); err != nil {
		return err
	}
	if m.frozen != nil {
		copy(pt.h, m.frozen)
		return pt.direction()
	}
	clear(pt.h)
	if m.sg == nil {
		m.sg, m.prior = make([]float64, d), make([]float64, d*d)
	}
	clear(m.sg)
	_, _, err = m.sub.newtonSweep(m.subHs, pt.h, m.sg, pt.X)
	m.subN += int64(m.sub.N())
	if err != nil {
		return err
	}
	return pt.priorCurvature(m.ph, m.prior, d)
}

func (m *wideNewton) Value(theta []float64) (float64, error) {
	return posteriorEnergy(m.t, m.best, theta)
}

// newtonWide is FindMAP's Newton search on a wide GLM (d ≥ newtonWideDim,
// at least newtonWideRows·d data a subsample row, N ≥ newtonWideStride
// such subsamples), where a dense Hessian pass (d²/2 multiply-adds a
// datum) costs hundreds of gradient passes. Three phases, each from where
// the last stopped:
//  1. damped Newton with the whole data's f and g and the Hessian of every
//     stride-th datum, tempered by stride, to a decrement of newtonNear;
//  2. the exact Hessian summed there (one pass, f, g and H; its f and g
//     start the phase, wideNewton.primed), then Newton with that Hessian
//     frozen and the whole data's gradients, to the
//     search's own tolerances (linear convergence at the rate
//     ‖I − H(θ₁)⁻¹H(θ)‖, small within a nat of the mode);
//  3. the exact search (newtonSearch over denseNewton), whose first pass
//     sums the exact Hessian at the result and, where the gradient there
//     meets the tolerances, stops: the Laplace approximation's Hessian and
//     the control variates' sums, as where the exact search ran alone.
//
// Phases 1 and 2 end at their iteration caps or on a failed step without
// error: the exact search takes over from the best point they found
// (best.Theta), so the result is the exact search's, to the same
// tolerances (TestFindMAPWide). It returns the exact search's last point.
func newtonWide(ctx context.Context, t *Target, p *Posterior, hs Hessianer, ph PriorHessianer, best *MAP, set MAPSettings, alt *newtonStart) (*newtonPoint, error) {
	d, n := t.Dim(), t.N()
	exact := &denseNewton{t: t, hs: hs, ph: ph, best: best, record: t.cvSums()}
	g, isGLM := t.Energy().(GLM)
	_, own := t.Energy().(Hessianer)
	stride := n / (newtonWideRows * d)
	if !isGLM || own || d < newtonWideDim || stride < newtonWideStride {
		return newtonSearch(ctx, exact, best, set, alt)
	}
	sub := newStridedGLM(g, stride)
	var wrapped GLM = sub
	if sub.conv != nil {
		wrapped = stridedRows{sub}
	}
	st, err := NewTarget(&Posterior{Energy: wrapped, Prior: p.Prior, Beta: t.Beta() * float64(stride)})
	if err != nil {
		return newtonSearch(ctx, exact, best, set, alt)
	}
	m := &wideNewton{t: t, sub: st, subHs: st.hessianer(), ph: ph, best: best}
	s1 := set
	s1.Tol, s1.MaxIterations = newtonNear, min(set.MaxIterations, best.Iterations+newtonWideIterations)
	_, err = newtonSearch(ctx, m, best, s1, alt)
	best.Passes += int((m.subN + int64(n) - 1) / int64(n))
	t.evals += st.Evals()
	t.gradEvals += st.GradEvals()
	t.hessEvals += st.hessEvals
	if cerr := ctx.Err(); cerr != nil {
		return nil, fmt.Errorf("exactmh: FindMAP stopped after %d iterations: %w", best.Iterations, cerr)
	}
	if err == nil && !(best.GradNorm < set.GradTol) {
		// Phase 2: the exact Hessian at phase 1's result, frozen.
		exact.record = false
		pt := exact.point()
		copy(pt.X, best.Theta)
		err = exact.Eval(pt)
		exact.record = t.cvSums()
		if err == nil && pt.Shift == 0 {
			m.frozen, m.primed = pt.h, pt
			s2 := set
			s2.MaxIterations = min(set.MaxIterations, best.Iterations+newtonWideIterations)
			_, err = newtonSearch(ctx, m, best, s2, nil)
			if cerr := ctx.Err(); cerr != nil {
				return nil, fmt.Errorf("exactmh: FindMAP stopped after %d iterations: %w", best.Iterations, cerr)
			}
		}
	}
	return newtonSearch(ctx, exact, best, set, nil)
}

// newtonWide's thresholds: the phases apply from d = newtonWideDim, with a
// subsample of at least newtonWideRows·d data at a stride of at least
// newtonWideStride; each approximate phase runs at most
// newtonWideIterations iterations.
const (
	newtonWideDim        = 64
	newtonWideRows       = 20
	newtonWideStride     = 4
	newtonWideIterations = 40
)
