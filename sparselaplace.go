// Copyright ©2026 The exactmh Authors. All rights reserved.
// Use of this source code is governed by a BSD-style
// license that can be found in the LICENSE file.

package exactmh

import (
	"context"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"

	"gonum.org/v1/gonum/mat"

	"github.com/exactmh/exactmh/internal/vec"
	"github.com/exactmh/exactmh/sparse"
)

// SparseHessianer is an optional capability of an Energy (∇² of Σ_i U_i)
// or a Prior (∇² of −log p) whose Hessian is sparse. The pattern is
// the same at every θ. One whose pass over the data is long may also
// implement
//
//	SparseHessianStop(theta []float64, stop func() bool) (*sparse.SymCSC, error)
//
// polling stop (once per chunk of data) and returning an error once it
// reports true, so that a cancelled run or search stops within the pass
// (model.SparseGLM does).
type SparseHessianer interface {
	SparseHessian(theta []float64) (*sparse.SymCSC, error)
}

// stopSparseHessianer is a SparseHessianer whose pass over the data polls
// a stop function (model.SparseGLM's SparseHessianStop), returning an
// error once it reports true.
type stopSparseHessianer interface {
	SparseHessianStop(theta []float64, stop func() bool) (*sparse.SymCSC, error)
}

// SparseHessianOf returns h's SparseHessian at θ (h an energy's or a
// prior's), or ErrInterrupted once t's run is cancelled: before the call,
// and within a chunk of data inside it where h polls (a SparseHessianer
// with SparseHessianStop); another SparseHessianer is waited for
// (TestInterruptSparseHessian).
func (t *Target) SparseHessianOf(h SparseHessianer, theta []float64) (*sparse.SymCSC, error) {
	if t.interrupted() {
		return nil, errInterrupted
	}
	sh, ok := h.(stopSparseHessianer)
	if !ok || t.interrupt == nil {
		return h.SparseHessian(theta)
	}
	m, err := sh.SparseHessianStop(theta, t.interrupted)
	if err != nil && t.interrupted() {
		return nil, errInterrupted
	}
	return m, err
}

// SparseLaplace is the Laplace approximation N(θ̂, H⁻¹) of a posterior
// whose Hessian is sparse (a multilevel model: the fixed effects coupled
// to every group's effects, each group's effects only to themselves), held
// as the sparse precision H = β·∇²ΣU_i(θ̂) − ∇²log p(θ̂) and its sparse
// Cholesky factor H = PᵀLLᵀP under a fill-reducing order: memory
// O(nnz(L)), where LaplaceApprox holds dense d×d matrices.
type SparseLaplace struct {
	// MAP is the mode and the search that found it (nil for
	// SparseLaplaceAt).
	MAP *MAP
	// Mean is θ̂.
	Mean []float64
	// Precision is H, lower triangle.
	Precision *sparse.SymCSC
	// Factor is the Cholesky factorisation of H.
	Factor *sparse.Cholesky
	// LogDetCov is log det H⁻¹ = −log det H.
	LogDetCov float64
	// LogDensity is log π(θ̂) = log prior(θ̂) − βΣU_i(θ̂).
	LogDensity float64
	// LogEvidence is the Laplace estimate of log ∫ π(θ) dθ,
	// LogDensity + (d/2)·log 2π + ½·LogDetCov (see LaplaceApprox).
	LogEvidence float64
	// Passes is the number of times the data were read.
	Passes int
}

// sparseParts returns the energy's and the prior's sparse Hessians, or
// why the sparse Laplace approximation does not apply: the energy and
// the prior must implement SparseHessianer (a nil Prior, flat, does).
func sparseParts(t *Target) (SparseHessianer, SparseHessianer, string) {
	eh, ok := t.Energy().(SparseHessianer)
	if !ok {
		return nil, nil, fmt.Sprintf("energy %T does not implement SparseHessianer", t.Energy())
	}
	ph, ok := t.Prior().(SparseHessianer) // a nil Prior's flat one does
	if !ok {
		return nil, nil, fmt.Sprintf("prior %T does not implement SparseHessianer", t.Prior())
	}
	return eh, ph, ""
}

// SparseHessian returns the Hessian of the flat prior's −log p: the d×d
// zero matrix with no stored entry, d = len(θ).
func (flat) SparseHessian(theta []float64) (*sparse.SymCSC, error) {
	return &sparse.SymCSC{N: len(theta), ColPtr: make([]int, len(theta)+1), RowIdx: []int{}, Val: []float64{}}, nil
}

// sparseNewton evaluates −log π, its gradient and its sparse Hessian, and
// factors the Hessian, keeping the pattern's symbolic analysis from the
// first point.
type sparseNewton struct {
	t      *Target
	eh, ph SparseHessianer
	d      int
	g, gp  []float64
	work   []float64
	sym    *sparse.Symbolic
	chol   *sparse.Cholesky
	h      *sparse.SymCSC
	passes int
	// notPD says why H itself could not be used at the last factor (nil
	// when it could).
	notPD error
}

// value returns f(θ) = −log π(θ) = βΣU_i(θ) − log p(θ), +Inf outside the
// prior's support.
func (s *sparseNewton) value(theta []float64) (float64, error) {
	lp := s.t.LogPrior(theta)
	if math.IsInf(lp, -1) || math.IsNaN(lp) {
		return math.Inf(1), nil
	}
	u, err := s.t.TotalEnergy(theta)
	s.passes++
	if err != nil {
		return 0, err
	}
	return u - lp, nil
}

// gradient sets s.g to ∇f(θ) and returns f(θ).
func (s *sparseNewton) gradient(theta []float64) (float64, error) {
	clear(s.g)
	u, err := s.t.TotalEnergyAndGradient(s.g, theta)
	s.passes++
	if err != nil {
		return 0, err
	}
	clear(s.gp)
	if err := s.t.AddLogPriorGradient(s.gp, theta); err != nil {
		return 0, err
	}
	for j, v := range s.gp {
		s.g[j] -= v
	}
	return u - s.t.LogPrior(theta), nil
}

// hessian sets s.h to H(θ) = β·∇²ΣU_i + ∇²(−log p), on the union of the
// two patterns and the diagonal, checking the pattern stays the one
// analysed first.
func (s *sparseNewton) hessian(theta []float64) error {
	he, err := s.t.SparseHessianOf(s.eh, theta)
	s.passes++
	if err != nil {
		return fmt.Errorf("the energy's SparseHessian: %w", err)
	}
	if he == nil || he.N != s.d {
		return fmt.Errorf("the energy's SparseHessian is %s, want %d×%d", dimString(he), s.d, s.d)
	}
	id := identity(s.d)
	h, err := sparse.Add(s.t.Beta(), he, 0, id)
	if err != nil {
		return fmt.Errorf("the energy's SparseHessian: %w", err)
	}
	if s.ph != nil {
		hp, err := s.t.SparseHessianOf(s.ph, theta)
		if err != nil {
			return fmt.Errorf("the prior's SparseHessian: %w", err)
		}
		if hp == nil || hp.N != s.d {
			return fmt.Errorf("the prior's SparseHessian is %s, want %d×%d", dimString(hp), s.d, s.d)
		}
		if h, err = sparse.Add(1, h, 1, hp); err != nil {
			return fmt.Errorf("the prior's SparseHessian: %w", err)
		}
	}
	if s.h != nil && !s.h.SamePattern(h) {
		return fmt.Errorf("the sparse Hessian's pattern changed between θ values (%d entries, then %d): SparseHessianer must return the same pattern at every θ", s.h.NNZ(), h.NNZ())
	}
	s.h = h
	return nil
}

// factor factors s.h + τI, returning whether τ = 0 (H itself was
// positive definite). τ starts at 10⁻³·max|H_jj| and grows by factors of
// 10, as the dense Newton search does (Nocedal & Wright, Algorithm 3.3).
// A factor whose squared pivot ratio exceeds newtonCond (a lower bound on
// the condition number above the dense search's threshold) counts as
// singular.
func (s *sparseNewton) factor() (bool, error) {
	if s.sym == nil {
		sym, err := sparse.Analyze(s.h, nil)
		if err != nil {
			return false, err
		}
		s.sym = sym
	}
	err := s.refactor(s.h)
	if err == nil {
		lo, hi := s.chol.PivotRange()
		if (hi/lo)*(hi/lo) <= newtonCond {
			s.notPD = nil
			return true, nil
		}
		err = fmt.Errorf("the Hessian is numerically singular: its Cholesky factor's pivots range from %.3g to %.3g", lo, hi)
	}
	s.notPD = err
	var maxDiag float64
	for j := range s.d {
		maxDiag = math.Max(maxDiag, math.Abs(s.h.At(j, j)))
	}
	shifted := s.h.Clone()
	for tau := 1e-3 * math.Max(maxDiag, 1e-300); tau < 1e300; tau *= 10 {
		copy(shifted.Val, s.h.Val)
		for j := range s.d {
			addDiag(shifted, j, tau)
		}
		if err = s.refactor(shifted); err == nil {
			lo, hi := s.chol.PivotRange()
			if (hi/lo)*(hi/lo) <= newtonCond {
				return false, nil
			}
			err = fmt.Errorf("H + %.3g·I is numerically singular: its Cholesky factor's pivots range from %.3g to %.3g", tau, lo, hi)
		}
	}
	return false, err
}

func (s *sparseNewton) refactor(h *sparse.SymCSC) error {
	if s.chol == nil {
		c, err := s.sym.Factor(h)
		if err != nil {
			return err
		}
		s.chol = c
		return nil
	}
	return s.chol.Refactor(h)
}

// addDiag adds v to the stored diagonal entry (j, j) of a.
func addDiag(a *sparse.SymCSC, j int, v float64) {
	// The diagonal is the first entry of its column (rows ascend, ≥ j).
	a.Val[a.ColPtr[j]] += v
}

// identity returns the d×d identity.
func identity(d int) *sparse.SymCSC {
	a := &sparse.SymCSC{N: d, ColPtr: make([]int, d+1), RowIdx: make([]int, d), Val: make([]float64, d)}
	for j := range d {
		a.ColPtr[j+1] = j + 1
		a.RowIdx[j] = j
		a.Val[j] = 1
	}
	return a
}

func dimString(a *sparse.SymCSC) string {
	if a == nil {
		return "nil"
	}
	return fmt.Sprintf("%d×%d", a.N, a.N)
}

// FindSparseLaplace returns the sparse Laplace approximation of p: the
// mode by damped Newton on the sparse Hessian of −log π (the energy's and
// the prior's SparseHessian, the gradient through Gradienter and
// PriorGradienter), each step −H⁻¹g solved through a sparse Cholesky
// factor in O(nnz(L)) with the fill-reducing order analysed once, then the
// factor at the mode. Where H is not positive definite the step is through
// H + τI (a descent direction); the step is halved until f = −log π
// decreases sufficiently (Armijo, c = 10⁻⁴). It stops, as FindMAP, when the
// Newton decrement ½gᵀH⁻¹g is at most s.Tol (0: 10⁻¹⁶) or every gradient
// component below s.GradTol (0: 10⁻⁶), after at most s.MaxIterations
// (0: 100) iterations.
//
// The energy must implement SparseHessianer and Gradienter, and the prior
// SparseHessianer and PriorGradienter unless it is flat. It returns an
// error if the Hessian at the mode is not positive definite, and the best
// point found with an error if the search does not converge.
func FindSparseLaplace(ctx context.Context, p *Posterior, init []float64, s *MAPSettings) (la *SparseLaplace, err error) {
	err = guard("FindSparseLaplace", func() (err error) {
		la, err = findSparseLaplace(ctx, p, init, s)
		return err
	})
	return la, err
}

func findSparseLaplace(ctx context.Context, p *Posterior, init []float64, s *MAPSettings) (*SparseLaplace, error) {
	const who = "exactmh: FindSparseLaplace"
	if err := p.Validate(); err != nil {
		return nil, err
	}
	t, err := NewTarget(p)
	if err != nil {
		return nil, err
	}
	d := t.Dim()
	if len(init) != d {
		return nil, fmt.Errorf("%s: len(init) = %d, want %d", who, len(init), d)
	}
	if err := vec.FiniteVec("FindSparseLaplace: init", init); err != nil {
		return nil, err
	}
	if err := t.requireGradient(); err != nil {
		return nil, fmt.Errorf("%s %w", who, err)
	}
	// Its passes over the data stop within a chunk once ctx is cancelled
	// (the sparse Hessians are the energy's and prior's own calls).
	defer t.watch(ctx)()
	eh, ph, why := sparseParts(t)
	if why != "" {
		return nil, fmt.Errorf("%s: %s", who, why)
	}
	var set MAPSettings
	if s != nil {
		set = *s
	}
	if set.Tol < 0 || math.IsNaN(set.Tol) || set.GradTol < 0 || math.IsNaN(set.GradTol) || set.MaxIterations < 0 {
		return nil, fmt.Errorf("%s: Tol = %v, GradTol = %v, MaxIterations = %d, want ≥ 0", who, set.Tol, set.GradTol, set.MaxIterations)
	}
	if set.Tol == 0 {
		set.Tol = 1e-16
	}
	if set.GradTol == 0 {
		set.GradTol = 1e-6
	}
	if set.MaxIterations == 0 {
		set.MaxIterations = 100
	}
	if lp := t.LogPrior(init); math.IsInf(lp, -1) || math.IsNaN(lp) {
		return nil, fmt.Errorf("%s: init = %v is outside the prior's support", who, init)
	}
	sn := &sparseNewton{t: t, eh: eh, ph: ph, d: d, g: make([]float64, d), gp: make([]float64, d), work: make([]float64, d)}
	theta := slices.Clone(init)
	next := make([]float64, d)
	step := make([]float64, d)
	best := &MAP{Theta: theta, Method: MAPNewton, Decrement: math.NaN()}
	f, err := sn.gradient(theta)
	if err != nil {
		return nil, within(who, cancelled(ctx, err))
	}
	result := func(err error) (*SparseLaplace, error) {
		err = cancelled(ctx, err)
		best.LogDensity = -f
		best.GradNorm = math.Sqrt(vec.Dot(sn.g, sn.g))
		best.Passes = sn.passes
		best.Evals, best.GradEvals = t.Evals(), t.GradEvals()
		la := &SparseLaplace{MAP: best, Mean: best.Theta, LogDensity: best.LogDensity, Passes: sn.passes}
		if err != nil {
			return la, within(who, err)
		}
		return la, nil
	}
	for it := 0; ; it++ {
		if err := ctx.Err(); err != nil {
			return result(err)
		}
		if err := sn.hessian(theta); err != nil {
			return result(err)
		}
		pd, err := sn.factor()
		if err != nil {
			return result(fmt.Errorf("factoring the Hessian at iteration %d: %w", it, err))
		}
		sn.chol.Solve(step, sn.g, sn.work)
		dec := vec.Dot(sn.g, step) // gᵀ(H + τI)⁻¹g
		for j := range step {
			step[j] = -step[j]
		}
		if pd {
			best.Decrement = dec / 2
		} else {
			best.Decrement = math.NaN()
		}
		gmax := 0.0
		for _, v := range sn.g {
			gmax = math.Max(gmax, math.Abs(v))
		}
		if pd && (dec/2 <= set.Tol || gmax <= set.GradTol) {
			break
		}
		if !pd && gmax <= set.GradTol {
			return result(fmt.Errorf("the gradient vanishes (max |g| = %.3g) where the Hessian is not positive definite (%v): the posterior is improper or flat along some direction (an unidentified parameter under a flat prior, collinear covariates), or θ is a saddle point", gmax, sn.notPD))
		}
		if it >= set.MaxIterations {
			return result(fmt.Errorf("no convergence in %d Newton iterations: decrement %.3g, max |gradient| %.3g", it, dec/2, gmax))
		}
		// Backtracking: f(θ + a·step) ≤ f(θ) − 10⁻⁴·a·dec.
		a := 1.0
		var fn float64
		for k := 0; ; k++ {
			for j := range theta {
				next[j] = theta[j] + a*step[j]
			}
			if fn, err = sn.value(next); err != nil {
				var ee *EnergyError
				if !errors.As(err, &ee) {
					return result(err)
				}
				fn = math.Inf(1) // a non-finite energy: step back
			}
			if fn <= f-1e-4*a*dec {
				break
			}
			if k == 60 {
				// No decrease along the step: at the rounding floor of f.
				if pd && dec/2 <= 1e-12*(1+math.Abs(f)) {
					goto converged
				}
				return result(fmt.Errorf("the line search found no decrease of −log π at iteration %d (decrement %.3g, f = %.15g)", it, dec/2, f))
			}
			a /= 2
		}
		copy(theta, next)
		best.Iterations = it + 1
		if f, err = sn.gradient(theta); err != nil {
			return result(err)
		}
	}
converged:
	la, _ := result(nil)
	if err := la.setFactor(sn.h, sn.chol, d); err != nil {
		return la, within(who, err)
	}
	return la, nil
}

// setFactor fills Precision, Factor, LogDetCov and LogEvidence from the
// positive definite h and its factor.
func (la *SparseLaplace) setFactor(h *sparse.SymCSC, c *sparse.Cholesky, d int) error {
	if lo, hi := c.PivotRange(); (hi/lo)*(hi/lo) > laplaceCond {
		return fmt.Errorf("the Hessian at the mode is numerically singular: the pivots of its Cholesky factor range from %.3g to %.3g (condition number above %.0e); the posterior is improper or flat along some direction", lo, hi, laplaceCond)
	}
	la.Precision = h
	la.Factor = c
	la.LogDetCov = -c.LogDet()
	la.LogEvidence = la.LogDensity + float64(d)/2*math.Log(2*math.Pi) + la.LogDetCov/2
	return nil
}

// SparseLaplaceAt returns the sparse Laplace approximation N(θ, H(θ)⁻¹)
// at a given θ, meant to be a mode found before. It fails if H(θ) is not
// positive definite; θ is not checked to be a mode.
func SparseLaplaceAt(p *Posterior, theta []float64) (la *SparseLaplace, err error) {
	err = guard("SparseLaplaceAt", func() error {
		const who = "exactmh: SparseLaplaceAt"
		t, err := p.targetAt("SparseLaplaceAt", theta)
		if err != nil {
			return err
		}
		eh, ph, why := sparseParts(t)
		if why != "" {
			return fmt.Errorf("%s: %s", who, why)
		}
		d := t.Dim()
		sn := &sparseNewton{t: t, eh: eh, ph: ph, d: d}
		if err := sn.hessian(theta); err != nil {
			return within(who, err)
		}
		u, err := t.TotalEnergy(theta)
		sn.passes++
		if err != nil {
			return within(who, err)
		}
		la = &SparseLaplace{Mean: slices.Clone(theta), LogDensity: t.LogPrior(theta) - u}
		if sn.sym, err = sparse.Analyze(sn.h, nil); err != nil {
			return within(who, err)
		}
		if err := sn.refactor(sn.h); err != nil {
			return within(who, fmt.Errorf("the Hessian at θ: %w", err))
		}
		la.Passes = sn.passes
		return la.setFactor(sn.h, sn.chol, d)
	})
	return la, err
}

// Rand sets dst (allocated if nil) to a draw θ̂ + PᵀL⁻ᵀz from the
// approximation, z standard normal from rng, and returns it: O(nnz(L)).
func (la *SparseLaplace) Rand(rng *rand.Rand, dst []float64) []float64 {
	if dst == nil {
		dst = make([]float64, len(la.Mean))
	}
	la.Factor.NormalInto(rng, dst)
	for j, m := range la.Mean {
		dst[j] += m
	}
	return dst
}

// LogProb returns the normalised log density of the approximation at θ:
// −(d/2)·log 2π − ½·LogDetCov − ½(θ − θ̂)ᵀH(θ − θ̂), in O(nnz(H)).
func (la *SparseLaplace) LogProb(theta []float64) float64 {
	d := len(la.Mean)
	return -float64(d)/2*math.Log(2*math.Pi) - la.LogDetCov/2 - la.Precision.Quad(theta, la.Mean)/2
}

// CrankNicolson returns the sparse Crank–Nicolson proposal around the
// approximation, N(θ̂, H⁻¹), with a tenth of its steps random-walk
// steps. It shares the approximation's Mean, Precision and Factor, which
// must not be modified (or refactored) while it is in use.
func (la *SparseLaplace) CrankNicolson() (*CrankNicolson, error) {
	if la.Factor == nil {
		return nil, fmt.Errorf("exactmh: SparseLaplace.CrankNicolson: no factor (the Hessian was not positive definite)")
	}
	return &CrankNicolson{Walk: defaultWalk, mean: la.Mean, sparse: &sparsePrecision{prec: la.Precision, chol: la.Factor}}, nil
}

// sparseGLMMinDim is the dimension from which FindLaplace takes the sparse
// path for an energy that is also a GLM: below it the dense approximation
// costs little (H is 8d² bytes, its factor microseconds to milliseconds)
// and gives the GLM control variates (ControlVariates), which need it.
// Other energies with sparse Hessians take the sparse path at any d: the
// dense path would differentiate their gradient numerically.
const sparseGLMMinDim = 200

// findLaplaceSparse is FindLaplace's sparse path: when the energy and the
// prior (unless flat) implement SparseHessianer, the search is MAPAuto or
// MAPNewton, and the energy is not a GLM of fewer than sparseGLMMinDim
// parameters, it returns FindSparseLaplace's approximation as a
// LaplaceApprox with Sparse set, and true; otherwise false.
func findLaplaceSparse(ctx context.Context, p *Posterior, init []float64, s *MAPSettings) (*LaplaceApprox, bool, error) {
	if s != nil && s.Method == MAPLBFGS || !sparsePath(p) {
		return nil, false, nil
	}
	sl, err := findSparseLaplace(ctx, p, init, s)
	if sl == nil {
		return nil, true, within("exactmh: FindLaplace", err)
	}
	la := &LaplaceApprox{MAP: sl.MAP, Mean: sl.Mean, LogDensity: sl.LogDensity, Passes: sl.Passes}
	if err != nil {
		return la, true, within("exactmh: FindLaplace", err)
	}
	return sl.approx(la), true, nil
}

// sparsePath reports whether FindLaplace and LaplaceAt take the sparse
// path for p: its energy and prior (unless flat) implement
// SparseHessianer, and the energy is not a GLM of fewer than
// sparseGLMMinDim parameters.
func sparsePath(p *Posterior) bool {
	if p == nil || p.Energy == nil || p.Validate() != nil {
		return false
	}
	t, err := NewTarget(p)
	if err != nil {
		return false
	}
	if _, _, why := sparseParts(t); why != "" {
		return false
	}
	_, isGLM := p.Energy.(GLM)
	return !isGLM || t.Dim() >= sparseGLMMinDim
}

// laplaceAtSparse is LaplaceAt's sparse path: SparseLaplaceAt as a
// LaplaceApprox with Sparse set.
func laplaceAtSparse(p *Posterior, theta []float64) (*LaplaceApprox, error) {
	sl, err := SparseLaplaceAt(p, theta)
	if err != nil {
		return nil, err
	}
	return sl.approx(&LaplaceApprox{Mean: sl.Mean, LogDensity: sl.LogDensity, Passes: sl.Passes}), nil
}

// approx completes la, which holds the mode, as the LaplaceApprox this
// sparse approximation is.
func (sl *SparseLaplace) approx(la *LaplaceApprox) *LaplaceApprox {
	la.Sparse = sl
	la.ExactHessian = true
	la.LogDetCov, la.LogEvidence = sl.LogDetCov, sl.LogEvidence
	return la
}

// SD returns the approximation's marginal standard deviations, √(H⁻¹)_jj,
// from the diagonal of H⁻¹ on the factor's pattern
// (sparse.Cholesky.InverseDiag), without forming H⁻¹.
func (la *SparseLaplace) SD() []float64 {
	sd := make([]float64, len(la.Mean))
	la.Factor.InverseDiag(sd)
	for j, v := range sd {
		sd[j] = math.Sqrt(v)
	}
	return sd
}

// covariance returns H⁻¹ densely, column by column through the factor.
func (la *SparseLaplace) covariance() *mat.SymDense {
	d := len(la.Mean)
	c := mat.NewSymDense(d, nil)
	col, work := make([]float64, d), make([]float64, d)
	for j := range d {
		clear(col)
		col[j] = 1
		la.Factor.Solve(col, col, work)
		for k := j; k < d; k++ {
			c.SetSym(j, k, col[k])
		}
	}
	return c
}

// Proposal returns the Crank–Nicolson proposal around the approximation,
// N(θ̂, H⁻¹), with a tenth of its steps random-walk steps (CrankNicolson,
// through the sparse factor for a sparse approximation). It is the
// proposal of the automatic default's "-CN" candidates and of WithLaplace.
func (la *LaplaceApprox) Proposal() (Proposal, error) {
	if la.Sparse != nil {
		return la.Sparse.CrankNicolson()
	}
	return la.CrankNicolson()
}

// GaussianWalk returns the random walk with increments shaped like H⁻¹
// through the approximation's factor, which it shares (see CrankNicolson).
func (la *SparseLaplace) GaussianWalk() (*GaussianWalk, error) {
	if la.Factor == nil {
		return nil, fmt.Errorf("exactmh: SparseLaplace.GaussianWalk: no factor (the Hessian was not positive definite)")
	}
	return &GaussianWalk{chol: la.Factor}, nil
}
