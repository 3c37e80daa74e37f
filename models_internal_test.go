// Copyright ©2026 The exactmh Authors. All rights reserved.
// Use of this source code is governed by a BSD-style
// license that can be found in the LICENSE file.

package exactmh

import "gonum.org/v1/gonum/mat"

// The ready-made models for the tests that see this package's unexported
// names. The models live in package model, which imports this package, so
// a test file of this package cannot import it; models_hook_test.go
// (package exactmh_test, compiled into the same test binary) sets these
// constructors to model's at init, before any test runs. They return the
// contracts the kernels see, which is all these tests use.
var (
	NewLogisticRegression   func(x, y []float64, d int) (ReadyGLM, error)
	NewLogisticRegression32 func(x []float32, y []float64, d int) (ReadyGLM, error)
	NewStudentTRegression   func(x, y []float64, d int, nu float64) (ReadyGLM, error)
	NewGLM                  func(x, y []float64, d int, family any) (ReadyGLM, error)
	NewGLM32                func(x []float32, y []float64, d int, family any) (ReadyGLM, error)
	NewGaussianMean         func(y []float64, d int, sigma *mat.SymDense) (ReadyEnergy, error)
	NewGaussianMixture      func(x []float64, sigma2 float64) (ReadyEnergy, error)
	NewIsoGaussian          func(d int, sd float64) (ReadyPrior, error)
	NewBall                 func(d int, radius float64, center []float64) (ReadySupport, error)
	NewBox                  func(lo, hi []float64) (ReadySupport, error)
	NewCube                 func(d int, lo, hi float64) (ReadySupport, error)

	// BoxBounds returns the faces of a model.Box, BallRadius the radius of
	// a model.Ball; ok is false for any other prior.
	BoxBounds  func(p Prior) (lo, hi []float64, ok bool)
	BallRadius func(p Prior) (r float64, ok bool)
)

// ReadyGLM is what every GLM of package model implements.
type ReadyGLM interface {
	DenseGLM
	EnergyDiffer
	Gradienter
	EnergyGradienter
	DiffBounder
	EnergyRanger
	TaylorBounder
	FlyBounder
}

// ReadyEnergy is what package model's other energies implement.
type ReadyEnergy interface {
	Energy
	Gradienter
	Hessianer
	DiffBounder
	EnergyRanger
}

// ReadyPrior is what package model's priors implement.
type ReadyPrior interface {
	Prior
	PriorGradienter
	PriorHessianer
}

// ReadySupport is what package model's Box and Ball implement.
type ReadySupport interface {
	BoundedSupport
	PriorGradienter
	PriorHessianer
}

// overriddenLogistic embeds a logistic regression and changes its loss:
// the kernels and the control variates must use its Loss, not the
// embedded type's inlined or grouped losses (denseLogistic refuses it).
type overriddenLogistic struct{ ReadyGLM }

func (o overriddenLogistic) Loss(i int, z float64) float64 {
	return 2 * o.ReadyGLM.Loss(i, z)
}

func (o overriddenLogistic) LossDerivs(i int, z float64) (f1, f2 float64) {
	f1, f2 = o.ReadyGLM.LossDerivs(i, z)
	return 2 * f1, 2 * f2
}

func (o overriddenLogistic) LossBound(i, k int, lo, hi float64) float64 {
	return 2 * o.ReadyGLM.LossBound(i, k, lo, hi)
}

// The GLM families of package model, named for NewGLM and NewGLM32.
type (
	ProbitFamily   struct{}
	PoissonFamily  struct{}
	GaussianFamily struct{ Sigma float64 }
)
