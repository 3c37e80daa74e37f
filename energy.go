// Copyright ©2026 The exactmh Authors. All rights reserved.
// Use of this source code is governed by a BSD-style
// license that can be found in the LICENSE file.

package exactmh

import (
	"errors"
	"fmt"
	"math"

	"gonum.org/v1/gonum/mat"
)

// Energy is a target factorised over N data: π(θ) ∝ prior(θ)·exp(−Σ_i U_i(θ)),
// where U_i(θ) = −log p(x_i | θ) is the energy of datum i.
//
// Energy is batch-oriented: a kernel asks for the energies of a slice of data
// at one θ and receives them in a slice it owns, so an implementation can keep
// its data in contiguous row-major storage and loop over it without calls per
// datum. Implementations must be safe for concurrent use by several chains
// (read-only after construction) and must not retain dst, theta or idx.
type Energy interface {
	// Len returns N, the number of data.
	Len() int
	// Dim returns d, the dimension of θ.
	Dim() int
	// Energies sets dst[k] = U_{idx[k]}(θ) for every k. len(dst) == len(idx).
	Energies(dst, theta []float64, idx []int)
}

// EnergyDiffer is an optional fast path of an Energy: it computes energy
// differences reading each datum once (a GLM reads x_i once for both dot
// products). Kernels use it when the Energy implements it.
type EnergyDiffer interface {
	// EnergyDiffs sets dst[k] = U_i(θ) − U_i(θ') for i = idx[k]: the
	// log-likelihood ratio of datum i for the move θ → θ'.
	EnergyDiffs(dst, theta, thetaNew []float64, idx []int)
}

// Gradienter is an optional capability of an Energy, needed by gradient-based
// kernels.
type Gradienter interface {
	// AddGradient adds Σ_k w[k]·∇U_{idx[k]}(θ) to grad. len(w) == len(idx).
	AddGradient(grad, theta []float64, idx []int, w []float64)
}

// EnergyGradienter is an optional fast path of a Gradienter: energies and
// gradient in one read of the data, which the full-batch gradient kernels
// (MALA, HMC) need at every proposal.
type EnergyGradienter interface {
	// EnergiesAndGradient sets dst[k] = U_{idx[k]}(θ) and adds
	// Σ_k w[k]·∇U_{idx[k]}(θ) to grad.
	EnergiesAndGradient(dst, grad, theta []float64, idx []int, w []float64)
}

// dataRows checks a row-major data matrix of n rows and d columns.
func dataRows(name string, x []float64, n, d int) error {
	if d <= 0 {
		return fmt.Errorf("exactmh: %s: dimension %d, want > 0", name, d)
	}
	if n <= 0 {
		return fmt.Errorf("exactmh: %s: no data (N = %d)", name, n)
	}
	if len(x) != n*d {
		return fmt.Errorf("exactmh: %s: len(X) = %d, want N·d = %d·%d = %d", name, len(x), n, d, n*d)
	}
	for k, v := range x {
		if math.IsNaN(v) || math.IsInf(v, 0) {
			return fmt.Errorf("exactmh: %s: X[%d] (row %d, column %d) = %v is not finite", name, k, k/d, k%d, v)
		}
	}
	return nil
}

func finiteVec(name string, v []float64) error {
	for k, x := range v {
		if math.IsNaN(x) || math.IsInf(x, 0) {
			return fmt.Errorf("exactmh: %s[%d] = %v is not finite", name, k, x)
		}
	}
	return nil
}

func dot(a, b []float64) float64 {
	var s float64
	for j, v := range a {
		s += v * b[j]
	}
	return s
}

// softplus returns log(1 + e^z) without overflow or cancellation.
func softplus(z float64) float64 {
	if z > 0 {
		return z + math.Log1p(math.Exp(-z))
	}
	return math.Log1p(math.Exp(z))
}

// sigmoid returns 1/(1 + e^−z) without overflow.
func sigmoid(z float64) float64 {
	if z >= 0 {
		return 1 / (1 + math.Exp(-z))
	}
	e := math.Exp(z)
	return e / (1 + e)
}

// LogisticRegression is the energy of Bayesian logistic regression:
// U_i(θ) = −y_i log σ(x_iᵀθ) − (1 − y_i) log σ(−x_iᵀθ) = softplus(x_iᵀθ) − y_i x_iᵀθ,
// with labels y_i ∈ {0, 1}. It is computed through a softplus that never
// overflows, so U_i is finite for every finite θ.
type LogisticRegression struct {
	x []float64 // N×d row-major features
	y []float64 // labels in {0, 1}
	d int
}

// NewLogisticRegression returns the logistic-regression energy of the
// features x (row-major, N rows of d columns) and labels y ∈ {0, 1}.
// The slices are kept, not copied.
func NewLogisticRegression(x, y []float64, d int) (*LogisticRegression, error) {
	if err := dataRows("NewLogisticRegression", x, len(y), d); err != nil {
		return nil, err
	}
	for i, v := range y {
		if v != 0 && v != 1 {
			return nil, fmt.Errorf("exactmh: NewLogisticRegression: label y[%d] = %v, want 0 or 1", i, v)
		}
	}
	return &LogisticRegression{x: x, y: y, d: d}, nil
}

// Len returns the number of data.
func (e *LogisticRegression) Len() int { return len(e.y) }

// Dim returns the number of features.
func (e *LogisticRegression) Dim() int { return e.d }

// Row returns the features of datum i (not a copy).
func (e *LogisticRegression) Row(i int) []float64 { return e.x[i*e.d : (i+1)*e.d] }

// Label returns y_i.
func (e *LogisticRegression) Label(i int) float64 { return e.y[i] }

// Energies sets dst[k] = U_{idx[k]}(θ).
func (e *LogisticRegression) Energies(dst, theta []float64, idx []int) {
	for k, i := range idx {
		z := dot(e.Row(i), theta)
		dst[k] = softplus(z) - e.y[i]*z
	}
}

// EnergyDiffs sets dst[k] = U_i(θ) − U_i(θ'), reading x_i once.
func (e *LogisticRegression) EnergyDiffs(dst, theta, thetaNew []float64, idx []int) {
	for k, i := range idx {
		var z, zn float64
		for j, v := range e.Row(i) {
			z += v * theta[j]
			zn += v * thetaNew[j]
		}
		dst[k] = softplus(z) - softplus(zn) - e.y[i]*(z-zn)
	}
}

// EnergiesAndGradient sets dst[k] = U_i(θ) and adds w[k]·∇U_i(θ) to grad
// for i = idx[k], computing x_iᵀθ once per datum.
func (e *LogisticRegression) EnergiesAndGradient(dst, grad, theta []float64, idx []int, w []float64) {
	for k, i := range idx {
		row := e.Row(i)
		z := dot(row, theta)
		dst[k] = softplus(z) - e.y[i]*z
		g := w[k] * (sigmoid(z) - e.y[i])
		for j, v := range row {
			grad[j] += g * v
		}
	}
}

// AddGradient adds Σ_k w[k]·(σ(x_iᵀθ) − y_i)·x_i to grad.
func (e *LogisticRegression) AddGradient(grad, theta []float64, idx []int, w []float64) {
	for k, i := range idx {
		row := e.Row(i)
		g := w[k] * (sigmoid(dot(row, theta)) - e.y[i])
		for j, v := range row {
			grad[j] += g * v
		}
	}
}

// StudentTRegression is the energy of robust linear regression with Student-t
// noise of ν degrees of freedom (TunaMH paper App. J.2):
// U_i(θ) = (ν+1)/2 · log(1 + (y_i − x_iᵀθ)²/ν).
type StudentTRegression struct {
	x  []float64
	y  []float64
	d  int
	nu float64
}

// NewStudentTRegression returns the robust-regression energy of x (row-major,
// N×d), responses y and ν > 0 degrees of freedom. The slices are kept.
func NewStudentTRegression(x, y []float64, d int, nu float64) (*StudentTRegression, error) {
	if err := dataRows("NewStudentTRegression", x, len(y), d); err != nil {
		return nil, err
	}
	if err := finiteVec("NewStudentTRegression: y", y); err != nil {
		return nil, err
	}
	if !(nu > 0) || math.IsInf(nu, 0) {
		return nil, fmt.Errorf("exactmh: NewStudentTRegression: degrees of freedom ν = %v, want finite > 0", nu)
	}
	return &StudentTRegression{x: x, y: y, d: d, nu: nu}, nil
}

// Len returns the number of data.
func (e *StudentTRegression) Len() int { return len(e.y) }

// Dim returns the number of regressors.
func (e *StudentTRegression) Dim() int { return e.d }

// Nu returns the degrees of freedom ν.
func (e *StudentTRegression) Nu() float64 { return e.nu }

// Row returns the regressors of datum i (not a copy).
func (e *StudentTRegression) Row(i int) []float64 { return e.x[i*e.d : (i+1)*e.d] }

// Response returns y_i.
func (e *StudentTRegression) Response(i int) float64 { return e.y[i] }

func (e *StudentTRegression) u(r float64) float64 {
	return 0.5 * (e.nu + 1) * math.Log1p(r*r/e.nu)
}

// Energies sets dst[k] = U_{idx[k]}(θ).
func (e *StudentTRegression) Energies(dst, theta []float64, idx []int) {
	for k, i := range idx {
		dst[k] = e.u(e.y[i] - dot(e.Row(i), theta))
	}
}

// EnergyDiffs sets dst[k] = U_i(θ) − U_i(θ'), reading x_i once.
func (e *StudentTRegression) EnergyDiffs(dst, theta, thetaNew []float64, idx []int) {
	for k, i := range idx {
		var z, zn float64
		for j, v := range e.Row(i) {
			z += v * theta[j]
			zn += v * thetaNew[j]
		}
		r, rn := e.y[i]-z, e.y[i]-zn
		// log1p(a) − log1p(b) = log1p((a − b)/(1 + b)) keeps precision for close θ, θ'.
		a, b := r*r/e.nu, rn*rn/e.nu
		dst[k] = 0.5 * (e.nu + 1) * math.Log1p((a-b)/(1+b))
	}
}

// EnergiesAndGradient sets dst[k] = U_i(θ) and adds w[k]·∇U_i(θ) to grad
// for i = idx[k], computing the residual once per datum.
func (e *StudentTRegression) EnergiesAndGradient(dst, grad, theta []float64, idx []int, w []float64) {
	for k, i := range idx {
		row := e.Row(i)
		r := e.y[i] - dot(row, theta)
		dst[k] = e.u(r)
		g := -w[k] * (e.nu + 1) * r / (e.nu + r*r)
		for j, v := range row {
			grad[j] += g * v
		}
	}
}

// AddGradient adds Σ_k w[k]·∇U_i(θ), ∇U_i = −(ν+1)·r_i/(ν + r_i²)·x_i with r_i = y_i − x_iᵀθ.
func (e *StudentTRegression) AddGradient(grad, theta []float64, idx []int, w []float64) {
	for k, i := range idx {
		row := e.Row(i)
		r := e.y[i] - dot(row, theta)
		g := -w[k] * (e.nu + 1) * r / (e.nu + r*r)
		for j, v := range row {
			grad[j] += g * v
		}
	}
}

// GaussianMean is the energy of the mean θ of Gaussian data y_i ~ N(θ, Σ) with
// a known full covariance Σ: U_i(θ) = ½(θ − y_i)ᵀΣ⁻¹(θ − y_i) (normalising
// constant dropped). It stores P·y_i and ½y_iᵀP y_i (P = Σ⁻¹) so that an energy
// costs O(d) per datum plus O(d²) per call, with no scratch memory.
type GaussianMean struct {
	y     []float64 // N×d data, kept for bounds
	py    []float64 // N×d, row i = P·y_i
	half  []float64 // ½ y_iᵀ P y_i
	prec  *mat.SymDense
	d     int
	lmax  float64 // largest eigenvalue of P
	sigma *mat.SymDense
}

// NewGaussianMean returns the energy of data y (row-major, N×d) with
// covariance sigma (d×d, symmetric positive definite). y is kept, not copied.
func NewGaussianMean(y []float64, d int, sigma *mat.SymDense) (*GaussianMean, error) {
	if d <= 0 {
		return nil, fmt.Errorf("exactmh: NewGaussianMean: dimension %d, want > 0", d)
	}
	if len(y)%d != 0 {
		return nil, fmt.Errorf("exactmh: NewGaussianMean: len(y) = %d is not a multiple of d = %d", len(y), d)
	}
	n := len(y) / d
	if err := dataRows("NewGaussianMean", y, n, d); err != nil {
		return nil, err
	}
	if sigma == nil || sigma.SymmetricDim() != d {
		return nil, fmt.Errorf("exactmh: NewGaussianMean: covariance must be %d×%d", d, d)
	}
	var chol mat.Cholesky
	if ok := chol.Factorize(sigma); !ok {
		return nil, errors.New("exactmh: NewGaussianMean: covariance is not positive definite")
	}
	prec := mat.NewSymDense(d, nil)
	if err := chol.InverseTo(prec); err != nil {
		return nil, fmt.Errorf("exactmh: NewGaussianMean: inverting covariance: %v", err)
	}
	var eig mat.EigenSym
	if ok := eig.Factorize(prec, false); !ok {
		return nil, errors.New("exactmh: NewGaussianMean: eigendecomposition of the precision failed")
	}
	vals := eig.Values(nil)
	e := &GaussianMean{y: y, py: make([]float64, len(y)), half: make([]float64, n), prec: prec, d: d,
		lmax: vals[len(vals)-1], sigma: mat.NewSymDense(d, nil)}
	e.sigma.CopySym(sigma)
	for i := 0; i < n; i++ {
		yi, pyi := y[i*d:(i+1)*d], e.py[i*d:(i+1)*d]
		for a := 0; a < d; a++ {
			var s float64
			for b := 0; b < d; b++ {
				s += prec.At(a, b) * yi[b]
			}
			pyi[a] = s
		}
		e.half[i] = 0.5 * dot(yi, pyi)
	}
	return e, nil
}

// Len returns the number of data.
func (e *GaussianMean) Len() int { return len(e.half) }

// Dim returns d.
func (e *GaussianMean) Dim() int { return e.d }

// Row returns datum y_i (not a copy).
func (e *GaussianMean) Row(i int) []float64 { return e.y[i*e.d : (i+1)*e.d] }

// Precision returns a copy of P = Σ⁻¹.
func (e *GaussianMean) Precision() *mat.SymDense {
	p := mat.NewSymDense(e.d, nil)
	p.CopySym(e.prec)
	return p
}

// Covariance returns a copy of Σ.
func (e *GaussianMean) Covariance() *mat.SymDense {
	s := mat.NewSymDense(e.d, nil)
	s.CopySym(e.sigma)
	return s
}

// quad returns ½θᵀPθ.
func (e *GaussianMean) quad(theta []float64) float64 {
	var s float64
	for a := 0; a < e.d; a++ {
		for b := 0; b < e.d; b++ {
			s += theta[a] * e.prec.At(a, b) * theta[b]
		}
	}
	return 0.5 * s
}

// Energies sets dst[k] = ½(θ − y_i)ᵀP(θ − y_i) = ½θᵀPθ − θᵀPy_i + ½y_iᵀPy_i.
func (e *GaussianMean) Energies(dst, theta []float64, idx []int) {
	q := e.quad(theta)
	for k, i := range idx {
		dst[k] = q - dot(theta, e.py[i*e.d:(i+1)*e.d]) + e.half[i]
	}
}

// EnergyDiffs sets dst[k] = U_i(θ) − U_i(θ') = ½θᵀPθ − ½θ'ᵀPθ' − (θ − θ')ᵀPy_i,
// which has no cancellation between large terms of each datum.
func (e *GaussianMean) EnergyDiffs(dst, theta, thetaNew []float64, idx []int) {
	q := e.quad(theta) - e.quad(thetaNew)
	for k, i := range idx {
		var s float64
		for j, v := range e.py[i*e.d : (i+1)*e.d] {
			s += (theta[j] - thetaNew[j]) * v
		}
		dst[k] = q - s
	}
}

// AddGradient adds Σ_k w[k]·P(θ − y_i) to grad.
func (e *GaussianMean) AddGradient(grad, theta []float64, idx []int, w []float64) {
	var wsum float64
	for k, i := range idx {
		wsum += w[k]
		for j, v := range e.py[i*e.d : (i+1)*e.d] {
			grad[j] -= w[k] * v
		}
	}
	for a := 0; a < e.d; a++ {
		var s float64
		for b := 0; b < e.d; b++ {
			s += e.prec.At(a, b) * theta[b]
		}
		grad[a] += wsum * s
	}
}

// GaussianMixture is the energy of the two-component mixture of the TunaMH
// paper (App. J.3): x_i ~ ½N(θ1, σ²) + ½N(θ1 + θ2, σ²), θ = (θ1, θ2),
//
//	U_i(θ) = log(2√(2π)σ) − log[exp(−(x_i − θ1)²/2σ²) + exp(−(x_i − θ1 − θ2)²/2σ²)],
//
// evaluated by log-sum-exp so it stays finite far from the data.
type GaussianMixture struct {
	x      []float64
	sigma2 float64
	logC   float64
}

// NewGaussianMixture returns the mixture energy of the scalar data x with
// component variance sigma2 > 0 (the paper uses σ² = 2). x is kept.
func NewGaussianMixture(x []float64, sigma2 float64) (*GaussianMixture, error) {
	if err := dataRows("NewGaussianMixture", x, len(x), 1); err != nil {
		return nil, err
	}
	if !(sigma2 > 0) || math.IsInf(sigma2, 0) {
		return nil, fmt.Errorf("exactmh: NewGaussianMixture: σ² = %v, want finite > 0", sigma2)
	}
	return &GaussianMixture{x: x, sigma2: sigma2, logC: math.Log(2 * math.Sqrt(2*math.Pi*sigma2))}, nil
}

// Len returns the number of data.
func (e *GaussianMixture) Len() int { return len(e.x) }

// Dim returns 2.
func (e *GaussianMixture) Dim() int { return 2 }

// Sigma2 returns the component variance σ².
func (e *GaussianMixture) Sigma2() float64 { return e.sigma2 }

// X returns datum x_i.
func (e *GaussianMixture) X(i int) float64 { return e.x[i] }

// logAddExp returns log(e^a + e^b).
func logAddExp(a, b float64) float64 {
	if a < b {
		a, b = b, a
	}
	return a + math.Log1p(math.Exp(b-a))
}

func (e *GaussianMixture) u(x, t1, t2 float64) float64 {
	r1, r2 := x-t1, x-t1-t2
	return e.logC - logAddExp(-r1*r1/(2*e.sigma2), -r2*r2/(2*e.sigma2))
}

// Energies sets dst[k] = U_{idx[k]}(θ).
func (e *GaussianMixture) Energies(dst, theta []float64, idx []int) {
	for k, i := range idx {
		dst[k] = e.u(e.x[i], theta[0], theta[1])
	}
}

// EnergyDiffs sets dst[k] = U_i(θ) − U_i(θ').
func (e *GaussianMixture) EnergyDiffs(dst, theta, thetaNew []float64, idx []int) {
	for k, i := range idx {
		x := e.x[i]
		dst[k] = e.u(x, theta[0], theta[1]) - e.u(x, thetaNew[0], thetaNew[1])
	}
}

// AddGradient adds Σ_k w[k]·∇U_i(θ) (App. J.3) to grad.
func (e *GaussianMixture) AddGradient(grad, theta []float64, idx []int, w []float64) {
	for k, i := range idx {
		x := e.x[i]
		r1, r2 := x-theta[0], x-theta[0]-theta[1]
		a1, a2 := -r1*r1/(2*e.sigma2), -r2*r2/(2*e.sigma2)
		// Responsibility of component 2, computed stably.
		p1, p2 := sigmoid(a1-a2), sigmoid(a2-a1)
		grad[0] -= w[k] * (p1*r1 + p2*r2) / e.sigma2
		grad[1] -= w[k] * p2 * r2 / e.sigma2
	}
}
