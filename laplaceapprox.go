// Copyright ©2026 The exactmh Authors. All rights reserved.
// Use of this source code is governed by a BSD-style
// license that can be found in the LICENSE file.

package exactmh

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	refl "reflect"
	"slices"

	"gonum.org/v1/gonum/mat"
)

// LaplaceApprox is the Laplace approximation of a posterior: the Gaussian
// N(θ̂, H⁻¹) centred at the MAP θ̂, whose precision H is the Hessian of the
// negative log posterior there,
//
//	H = β·Σ_i∇²U_i(θ̂) − ∇²log prior(θ̂).
//
// It is exact for a Gaussian likelihood under a flat or Gaussian prior and,
// for a regular model, accurate to O(1/N) as the data grow. It is poor where
// the mode is on the boundary of the prior's support (a Box or Ball) or on
// a kink of a Laplace prior: the gradient does not vanish there, and the
// Gaussian ignores the truncation or the kink. Warnings then says so.
type LaplaceApprox struct {
	// MAP is the mode and the search that found it (nil for LaplaceAt).
	MAP *MAP
	// Mean is θ̂.
	Mean []float64
	// Precision is H.
	Precision *mat.SymDense
	// CovChol is the lower-triangular L with LLᵀ = H⁻¹: θ̂ + Lz, z a
	// standard normal vector, is a draw from the approximation.
	CovChol *mat.TriDense
	// LogDetCov is log det H⁻¹ = −log det H.
	LogDetCov float64
	// LogDensity is log π(θ̂) = log prior(θ̂) − βΣU_i(θ̂), as Posterior.LogDensity.
	LogDensity float64
	// LogEvidence is the Laplace estimate of the log normalising constant
	// log ∫ π(θ) dθ = LogDensity + (d/2)·log 2π + ½·LogDetCov, for π as
	// the energies compute it: energies that drop constants (the ready-made
	// ones drop log y!, log σ√(2π) and the like) shift it by their sum.
	LogEvidence float64
	// ExactHessian reports whether H is exact (see Posterior.Hessian);
	// false means central differences of the gradient.
	ExactHessian bool
	// Passes is the number of times the data were read: the MAP search's
	// passes (none more after a Newton search, which ends with H at θ̂),
	// plus one for an exact Hessian or 2d for a numerical one.
	Passes int
	// Warnings name the coordinates where θ̂ is on the boundary of a Box
	// or Ball prior or on a kink of a Laplace prior, where the
	// approximation is poor; empty otherwise.
	Warnings []string

	// Sparse, when set, is the sparse Laplace approximation this one is
	// (FindLaplace takes it where the energy and the prior implement
	// SparseHessianer): H is Sparse.Precision and its factor
	// Sparse.Factor, Precision and CovChol are nil, and the methods below
	// work through the sparse factor.
	Sparse *SparseLaplace

	// data, when the Newton search could record them (Target.cvSums), are
	// the data's sums at Mean from its last pass, which ControlVariates
	// takes instead of summing them again.
	data *dataSums
}

// dataSums are a GLM's untempered sums Σ_i∇U_i(θ) = Σ_if_i′(x_iᵀθ)x_i and
// Σ_i∇²U_i(θ) = Σ_if_i″(x_iᵀθ)x_ix_iᵀ (upper triangle, d×d row-major) at
// θ, from the Newton search's last pass: bit for bit what controlVariates
// would sum at θ (see Target.cvSums). They were summed from energy's data
// at theta, and are used only for that energy and a Mean equal to theta
// bit for bit (matches).
type dataSums struct {
	energy     Energy
	theta      []float64
	grad, hess []float64
}

// matches reports whether the sums are e's at θ, bit for bit.
func (s *dataSums) matches(e Energy, theta []float64) bool {
	if s == nil || !sameEnergy(s.energy, e) || len(theta) != len(s.theta) {
		return false
	}
	for j, v := range theta {
		if math.Float64bits(v) != math.Float64bits(s.theta[j]) {
			return false
		}
	}
	return true
}

// sameEnergy reports whether a and b are the same energy: the same pointer
// (only pointers are compared: comparing other dynamic types could panic
// or say nothing about the data behind them).
func sameEnergy(a, b Energy) bool {
	ta := refl.TypeOf(a)
	return ta != nil && ta.Kind() == refl.Pointer && ta == refl.TypeOf(b) && a == b
}

// IndefiniteHessianError reports that the Hessian of the negative log
// posterior at a mode is not positive definite, so there is no Laplace
// approximation: the posterior is improper or flat along Direction (a flat
// prior on an unidentified parameter, collinear covariates, separable
// classes), or the point is not a maximum.
type IndefiniteHessianError struct {
	// Theta is the point (the mode found).
	Theta []float64
	// MinEigenvalue and MaxEigenvalue are the extreme eigenvalues of H.
	MinEigenvalue, MaxEigenvalue float64
	// Direction is the unit eigenvector of MinEigenvalue.
	Direction []float64
}

func (e *IndefiniteHessianError) Error() string {
	what := "not positive definite"
	if e.MinEigenvalue > 0 {
		what = "numerically singular"
	}
	return fmt.Sprintf("the Hessian of −log π at the mode θ̂ = %.6g is %s: its smallest eigenvalue is %.3g (largest %.3g), eigenvector %.3g; the posterior is improper or flat along that direction (an unidentified parameter under a flat prior, collinear covariates, separable classes) or θ̂ is not a maximum",
		e.Theta, what, e.MinEigenvalue, e.MaxEigenvalue, e.Direction)
}

// laplaceCond is the condition number of H beyond which it is treated as
// singular: H⁻¹ would have no correct digit.
const laplaceCond = 1e14

// FindLaplace returns the Laplace approximation of p: FindMAP from init
// with the settings s, then the Hessian at the mode (Posterior.Hessian; a
// Newton search has it already and reads no more data). It returns an
// *IndefiniteHessianError if the Hessian is not positive definite (or has a
// condition number above 10¹⁴), an error wrapping ErrNoGradient if p has no
// gradient, and FindMAP's error if the search fails. On an error the result
// holds what was found, if anything: the MAP, and the Precision when it is
// not positive definite.
//
// Where the energy and the prior (unless flat) implement SparseHessianer,
// and the search is MAPAuto or MAPNewton, it is FindSparseLaplace's sparse
// approximation instead, with Sparse set and no dense matrix of d×d (for
// an energy that is also a GLM, from d = 200 only: below, the dense one
// gives the GLM control variates). LaplaceAt does the same.
func FindLaplace(ctx context.Context, p *Posterior, init []float64, s *MAPSettings) (la *LaplaceApprox, err error) {
	err = guard("FindLaplace", func() (err error) {
		la, err = findLaplace(ctx, p, init, s)
		return err
	})
	return la, err
}

// findLaplace is FindLaplace without its guard.
func findLaplace(ctx context.Context, p *Posterior, init []float64, s *MAPSettings) (*LaplaceApprox, error) {
	if la, ok, err := findLaplaceSparse(ctx, p, init, s); ok {
		return la, err
	}
	m, h, sums, err := findMAP(ctx, p, init, s)
	if err != nil {
		if m == nil {
			return nil, within("exactmh: FindLaplace", err)
		}
		return &LaplaceApprox{MAP: m, Mean: m.Theta, LogDensity: m.LogDensity}, within("exactmh: FindLaplace", err)
	}
	t, err := NewTarget(p)
	if err != nil {
		return nil, err
	}
	la := &LaplaceApprox{MAP: m, Mean: m.Theta, LogDensity: m.LogDensity, Passes: m.Passes, ExactHessian: true, data: sums}
	if h == nil {
		// The Hessian's pass stops within a chunk of data once ctx is
		// cancelled (TestChooseInterrupted).
		defer t.watch(ctx)()
		la.data = nil
		var passes int
		h, la.ExactHessian, passes, err = t.negLogPosteriorHessian(m.Theta)
		la.Passes += passes
		if err != nil {
			return la, within("exactmh: FindLaplace", cancelled(ctx, err))
		}
	}
	return la, la.factor(t, h, "exactmh: FindLaplace")
}

// LaplaceAt returns the Gaussian approximation N(θ, H(θ)⁻¹) at a given θ,
// meant to be a mode found before (by FindMAP): the Hessian there and the
// log density, two reads of the data for an exact Hessian. It fails as
// FindLaplace does; θ is not checked to be a mode.
func LaplaceAt(p *Posterior, theta []float64) (*LaplaceApprox, error) {
	if sparsePath(p) {
		return laplaceAtSparse(p, theta)
	}
	t, err := p.targetAt("LaplaceAt", theta)
	if err != nil {
		return nil, err
	}
	la := &LaplaceApprox{Mean: slices.Clone(theta)}
	h, exact, passes, err := t.negLogPosteriorHessian(la.Mean)
	la.ExactHessian, la.Passes = exact, passes
	if err != nil {
		return nil, within("exactmh: LaplaceAt", err)
	}
	u, err := t.TotalEnergy(la.Mean)
	la.Passes++
	if err != nil {
		return nil, within("exactmh: LaplaceAt", err)
	}
	la.LogDensity = t.LogPrior(la.Mean) - u
	return la, la.factor(t, h, "exactmh: LaplaceAt")
}

// factor fills Precision, CovChol, LogDetCov, LogEvidence and Warnings from
// the upper triangle h of H, or returns an *IndefiniteHessianError (with
// Precision set).
func (la *LaplaceApprox) factor(t *Target, h []float64, who string) error {
	d := t.d
	la.Precision = mat.NewSymDense(d, h)
	la.Warnings = supportWarnings(t.Prior(), la.Mean)
	var chol mat.Cholesky
	if !chol.Factorize(la.Precision) || chol.Cond() > laplaceCond {
		var eig mat.EigenSym
		if !eig.Factorize(la.Precision, true) {
			return fmt.Errorf("%s: the Hessian at θ̂ = %v is not positive definite, and its eigendecomposition failed", who, la.Mean)
		}
		var vecs mat.Dense
		eig.VectorsTo(&vecs)
		vals := eig.Values(nil)
		return within(who, &IndefiniteHessianError{
			Theta:         slices.Clone(la.Mean),
			MinEigenvalue: vals[0], MaxEigenvalue: vals[d-1],
			Direction: mat.Col(nil, 0, &vecs),
		})
	}
	la.LogDetCov = -chol.LogDet()
	la.LogEvidence = la.LogDensity + float64(d)/2*math.Log(2*math.Pi) + la.LogDetCov/2
	// A lower L with LLᵀ = H⁻¹: with J the reversal permutation, factor
	// JHJ = RRᵀ (R lower); then H⁻¹ = (JR⁻ᵀJ)(JR⁻ᵀJ)ᵀ and JR⁻ᵀJ is lower
	// triangular. No inverse of H is formed.
	rev := mat.NewSymDense(d, nil)
	for a := range d {
		for b := a; b < d; b++ {
			rev.SetSym(a, b, la.Precision.At(d-1-a, d-1-b))
		}
	}
	var rc mat.Cholesky
	if !rc.Factorize(rev) {
		return fmt.Errorf("%s: the reversed Hessian at θ̂ = %v has no Cholesky factor", who, la.Mean)
	}
	var r, rinv mat.TriDense
	rc.LTo(&r)
	if err := rinv.InverseTri(&r); err != nil {
		if _, ok := err.(mat.Condition); !ok {
			return fmt.Errorf("%s: inverting the Cholesky factor: %v", who, err)
		}
	}
	la.CovChol = mat.NewTriDense(d, mat.Lower, nil)
	for a := range d {
		for b := 0; b <= a; b++ {
			// (JR⁻ᵀJ)_ab = (R⁻¹)_{d−1−b, d−1−a}.
			la.CovChol.SetTri(a, b, rinv.At(d-1-b, d-1-a))
		}
	}
	return nil
}

// modeWarner is a prior that can say why a Gaussian approximation at θ
// is poor: θ on the boundary of its support (model.Box, model.Ball) or on
// a kink of its density (model.Laplace).
type modeWarner interface {
	ModeWarnings(theta []float64) []string
}

// supportWarnings returns the prior's ModeWarnings at θ, through any
// wrapper (supportOf), or none.
func supportWarnings(prior Prior, theta []float64) []string {
	if w, ok := supportOf(prior).(modeWarner); ok {
		return w.ModeWarnings(theta)
	}
	return nil
}

// Covariance returns H⁻¹ = LLᵀ (for a sparse approximation, d solves
// with its factor: O(d·nnz(L)) time and d² memory).
func (la *LaplaceApprox) Covariance() *mat.SymDense {
	if la.Sparse != nil {
		return la.Sparse.covariance()
	}
	d := len(la.Mean)
	c := mat.NewSymDense(d, nil)
	c.SymOuterK(1, la.CovChol)
	return c
}

// SD returns the approximation's marginal standard deviations, √(H⁻¹)_jj.
func (la *LaplaceApprox) SD() []float64 {
	if la.Sparse != nil {
		return la.Sparse.SD()
	}
	d := len(la.Mean)
	sd := make([]float64, d)
	for a := range d {
		var s float64
		for b := 0; b <= a; b++ {
			v := la.CovChol.At(a, b)
			s += v * v
		}
		sd[a] = math.Sqrt(s)
	}
	return sd
}

// Rand sets dst (allocated if nil) to a draw θ̂ + Lz, z standard normal from
// rng, and returns it.
func (la *LaplaceApprox) Rand(rng *rand.Rand, dst []float64) []float64 {
	if la.Sparse != nil {
		return la.Sparse.Rand(rng, dst)
	}
	d := len(la.Mean)
	if dst == nil {
		dst = make([]float64, d)
	}
	z := make([]float64, d)
	for j := range z {
		z[j] = rng.NormFloat64()
	}
	for a := range d {
		s := la.Mean[a]
		for b := 0; b <= a; b++ {
			s += la.CovChol.At(a, b) * z[b]
		}
		dst[a] = s
	}
	return dst
}

// LogProb returns the normalised log density of the approximation at θ:
// −(d/2)·log 2π − ½·LogDetCov − ½(θ − θ̂)ᵀH(θ − θ̂).
func (la *LaplaceApprox) LogProb(theta []float64) float64 {
	if la.Sparse != nil {
		return la.Sparse.LogProb(theta)
	}
	d := len(la.Mean)
	diff := make([]float64, d)
	for j := range diff {
		diff[j] = theta[j] - la.Mean[j]
	}
	v := mat.NewVecDense(d, diff)
	q := mat.Inner(v, la.Precision, v)
	return -float64(d)/2*math.Log(2*math.Pi) - la.LogDetCov/2 - q/2
}

// CrankNicolson returns the Crank–Nicolson proposal around the
// approximation, N(θ̂, H⁻¹): the proposal under which a posterior close to
// its Laplace approximation keeps a high acceptance for large moves in any
// dimension. A tenth of its steps are a random walk shaped
// by H⁻¹, for tails the approximation misses (CrankNicolson.Walk). For a
// sparse approximation it is Sparse.CrankNicolson, O(nnz) per step.
func (la *LaplaceApprox) CrankNicolson() (*CrankNicolson, error) {
	if la.Sparse != nil {
		return la.Sparse.CrankNicolson()
	}
	if la.CovChol == nil {
		return nil, fmt.Errorf("exactmh: LaplaceApprox.CrankNicolson: no covariance (the Hessian was not positive definite)")
	}
	return NewCrankNicolson(la.Mean, la.Covariance())
}

// GaussianWalk returns the random walk with increments shaped like H⁻¹
// (through the sparse factor for a sparse approximation).
func (la *LaplaceApprox) GaussianWalk() (*GaussianWalk, error) {
	if la.Sparse != nil {
		return la.Sparse.GaussianWalk()
	}
	if la.CovChol == nil {
		return nil, fmt.Errorf("exactmh: LaplaceApprox.GaussianWalk: no covariance (the Hessian was not positive definite)")
	}
	return NewGaussianWalk(la.Covariance())
}
