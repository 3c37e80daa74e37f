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

	"github.com/exactmh/exactmh/internal/precision"
	"github.com/exactmh/exactmh/internal/vec"
	"github.com/exactmh/exactmh/sparse"
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

	// SparsePrecision and SparseFactor, when set, are H (lower triangle)
	// and its sparse Cholesky factorisation H = PᵀLLᵀP under a
	// fill-reducing order: the sparse approximation FindLaplace and
	// LaplaceAt make where the energy and the prior implement
	// SparseHessianer (a multilevel model: the fixed effects coupled to
	// every group's effects, each group's effects only to themselves),
	// with memory O(nnz(L)). Precision and CovChol are then nil, and the
	// methods below work through the sparse factor in O(nnz(L)) where the
	// dense ones cost O(d²).
	SparsePrecision *sparse.SymCSC
	SparseFactor    *sparse.Cholesky

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
// and the search is MAPAuto or MAPNewton, it is the sparse approximation
// instead: the same Newton search over the sparse Hessian, with
// SparsePrecision and SparseFactor set and no dense matrix of d×d (for
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
	const who = "exactmh: FindLaplace"
	m, pt, err := findMAP(ctx, p, init, s, true)
	if err != nil {
		if m == nil {
			return nil, within(who, err)
		}
		return &LaplaceApprox{MAP: m, Mean: m.Theta, LogDensity: m.LogDensity, Passes: m.Passes}, within(who, err)
	}
	t, err := NewTarget(p)
	if err != nil {
		return nil, err
	}
	la := &LaplaceApprox{MAP: m, Mean: m.Theta, LogDensity: m.LogDensity, Passes: m.Passes, ExactHessian: true}
	var h []float64
	if pt != nil {
		if sh, ok := pt.Hess.(*precision.SparseHessian); ok {
			return la, la.factorSparse(t, sh, pt.Shift, who)
		}
		h, la.data = pt.h, pt.sums(t.Energy())
	}
	if h == nil {
		// The Hessian's pass stops within a chunk of data once ctx is
		// cancelled (TestChooseInterrupted).
		defer t.watch(ctx)()
		la.data = nil
		var passes int
		h, la.ExactHessian, passes, err = t.negLogPosteriorHessian(m.Theta)
		la.Passes += passes
		if err != nil {
			return la, within(who, cancelled(ctx, err))
		}
	}
	return la, la.factorDense(t, h, who)
}

// LaplaceAt returns the Gaussian approximation N(θ, H(θ)⁻¹) at a given θ,
// meant to be a mode found before (by FindMAP): the Hessian there and the
// log density, two reads of the data for an exact Hessian. It fails as
// FindLaplace does, and is sparse where FindLaplace's would be; θ is not
// checked to be a mode.
func LaplaceAt(p *Posterior, theta []float64) (*LaplaceApprox, error) {
	const who = "exactmh: LaplaceAt"
	t, err := p.targetAt("LaplaceAt", theta)
	if err != nil {
		return nil, err
	}
	la := &LaplaceApprox{Mean: slices.Clone(theta), ExactHessian: true}
	var h []float64
	var sh *precision.SparseHessian
	if sparsePath(p) {
		eh, ph, _ := sparseParts(t)
		m := &MAP{}
		hs, err := (&sparseNewton{t: t, eh: eh, ph: ph, best: m}).hessian(la.Mean)
		if err != nil {
			return nil, within(who, err)
		}
		sh = &precision.SparseHessian{H: hs}
		la.Passes = m.Passes
	} else {
		var passes int
		h, la.ExactHessian, passes, err = t.negLogPosteriorHessian(la.Mean)
		la.Passes = passes
		if err != nil {
			return nil, within(who, err)
		}
	}
	u, err := t.TotalEnergy(la.Mean)
	la.Passes++
	if err != nil {
		return nil, within(who, err)
	}
	la.LogDensity = t.LogPrior(la.Mean) - u
	if sh == nil {
		return la, la.factorDense(t, h, who)
	}
	tau, err := sh.Factor()
	if err != nil {
		return nil, within(who, fmt.Errorf("the Hessian at θ: %w", err))
	}
	return la, la.factorSparse(t, sh, tau, who)
}

// factorSparse fills SparsePrecision, SparseFactor, LogDetCov,
// LogEvidence and Warnings from the sparse Hessian sh at the mode,
// factored with the shift tau, or says why H is not positive definite
// (tau > 0: the factor is of H + τI, precision.SparseHessian).
func (la *LaplaceApprox) factorSparse(t *Target, sh *precision.SparseHessian, tau float64, who string) error {
	la.Warnings = supportWarnings(t.Prior(), la.Mean)
	if tau != 0 {
		return fmt.Errorf("%s: the Hessian at the mode is not positive definite (%v): the posterior is improper or flat along some direction (an unidentified parameter under a flat prior, collinear covariates), or θ̂ is a saddle point", who, sh.NotPD)
	}
	la.SparsePrecision, la.SparseFactor = sh.H, sh.Chol
	la.LogDetCov = -sh.Chol.LogDet()
	la.LogEvidence = la.LogDensity + float64(len(la.Mean))/2*math.Log(2*math.Pi) + la.LogDetCov/2
	return nil
}

// factorDense fills Precision, CovChol, LogDetCov, LogEvidence and
// Warnings from the upper triangle h of H, or returns an
// *IndefiniteHessianError (with Precision set).
func (la *LaplaceApprox) factorDense(t *Target, h []float64, who string) error {
	d := t.d
	la.Precision = mat.NewSymDense(d, h)
	la.Warnings = supportWarnings(t.Prior(), la.Mean)
	var chol mat.Cholesky
	if !chol.Factorize(la.Precision) || chol.Cond() > precision.Cond {
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
	var err error
	if la.CovChol, err = precision.CovChol(la.Precision); err != nil {
		return fmt.Errorf("%s: at θ̂ = %v: %w", who, la.Mean, err)
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

// precisionFactor returns the approximation's precision H with its
// factor, dense (CovChol and Precision) or sparse (SparseFactor), or nil
// where there is none (H was not positive definite): the methods below
// are written once over it.
func (la *LaplaceApprox) precisionFactor() precision.Factor {
	if la.SparseFactor != nil {
		return &precision.Sparse{Prec: la.SparsePrecision, Chol: la.SparseFactor}
	}
	if la.CovChol == nil {
		return nil
	}
	d := len(la.Mean)
	c := make([]float64, d*d)
	for a := range d {
		for b := 0; b <= a; b++ {
			c[a*d+b] = la.CovChol.At(a, b)
		}
	}
	var prec []float64
	if la.Precision != nil {
		prec = make([]float64, d*d)
		for a := range d {
			for b := range d {
				prec[a*d+b] = la.Precision.At(a, b)
			}
		}
	}
	return precision.NewDense(c, prec)
}

// Covariance returns H⁻¹ (d solves with the factor: O(d·nnz(L)) time and
// d² memory for a sparse approximation).
func (la *LaplaceApprox) Covariance() *mat.SymDense {
	return precision.Covariance(la.precisionFactor())
}

// SD returns the approximation's marginal standard deviations, √(H⁻¹)_jj
// (for a sparse approximation from the diagonal of H⁻¹ on the factor's
// pattern, sparse.Cholesky.InverseDiag, without forming H⁻¹).
func (la *LaplaceApprox) SD() []float64 {
	sd := make([]float64, len(la.Mean))
	la.precisionFactor().InverseDiag(sd)
	for j, v := range sd {
		sd[j] = math.Sqrt(v)
	}
	return sd
}

// Rand sets dst (allocated if nil) to a draw θ̂ + ξ, ξ ~ N(0, H⁻¹) from
// standard normals of rng (Lz with LLᵀ = H⁻¹, or PᵀL⁻ᵀz for a sparse
// approximation), and returns it.
func (la *LaplaceApprox) Rand(rng *rand.Rand, dst []float64) []float64 {
	if dst == nil {
		dst = make([]float64, len(la.Mean))
	}
	la.precisionFactor().Normal(rng, dst)
	for j, m := range la.Mean {
		dst[j] += m
	}
	return dst
}

// LogProb returns the normalised log density of the approximation at θ:
// −(d/2)·log 2π − ½·LogDetCov − ½(θ − θ̂)ᵀH(θ − θ̂).
func (la *LaplaceApprox) LogProb(theta []float64) float64 {
	d := len(la.Mean)
	return -float64(d)/2*math.Log(2*math.Pi) - la.LogDetCov/2 - la.precisionFactor().Quad(theta, la.Mean)/2
}

// CrankNicolson returns the Crank–Nicolson proposal around the
// approximation, N(θ̂, H⁻¹), through its factor (dense or sparse, shared
// with it: the approximation must not be modified while the proposal is
// in use): the proposal under which a posterior close to its Laplace
// approximation keeps a high acceptance for large moves in any dimension.
// A tenth of its steps are a random walk shaped by H⁻¹, for tails the
// approximation misses (CrankNicolson.Walk).
func (la *LaplaceApprox) CrankNicolson() (*CrankNicolson, error) {
	f := la.precisionFactor()
	if f == nil || f.Dim() != len(la.Mean) {
		return nil, fmt.Errorf("exactmh: LaplaceApprox.CrankNicolson: no factor of the precision (the Hessian was not positive definite)")
	}
	if err := vec.FiniteVec("LaplaceApprox.CrankNicolson: mean", la.Mean); err != nil {
		return nil, err
	}
	return &CrankNicolson{Walk: defaultWalk, mean: slices.Clone(la.Mean), fac: f}, nil
}

// Proposal returns the Crank–Nicolson proposal around the approximation
// (CrankNicolson) as a Proposal: the automatic default's "-CN"
// candidates' and WithLaplace's.
func (la *LaplaceApprox) Proposal() (Proposal, error) { return la.CrankNicolson() }

// GaussianWalk returns the random walk with increments shaped like H⁻¹
// through the approximation's factor, which it shares (see CrankNicolson).
func (la *LaplaceApprox) GaussianWalk() (*GaussianWalk, error) {
	f := la.precisionFactor()
	if f == nil {
		return nil, fmt.Errorf("exactmh: LaplaceApprox.GaussianWalk: no factor of the precision (the Hessian was not positive definite)")
	}
	return &GaussianWalk{fac: f}, nil
}
