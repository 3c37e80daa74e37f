// Copyright ©2026 The exactmh Authors. All rights reserved.
// Use of this source code is governed by a BSD-style
// license that can be found in the LICENSE file.

package exactmh_test

import (
	"fmt"

	"gonum.org/v1/gonum/mat"

	"github.com/exactmh/exactmh"
	// Registered with the root (exactmh.Register) in this test binary, so
	// that every test ranging over exactmh.Kernels — the golden draws, the
	// conformance rows, the capability, fuzz and registry checks, internal
	// ones too — sees the inexact comparators (model brings multilevel's).
	_ "github.com/exactmh/exactmh/inexact"
	"github.com/exactmh/exactmh/model"
)

// init gives the internal tests package model's constructors (see
// models_internal_test.go).
func init() {
	exactmh.NewLogisticRegression = func(x, y []float64, d int) (exactmh.ReadyGLM, error) {
		return model.NewLogisticRegression(x, y, d)
	}
	exactmh.NewLogisticRegression32 = func(x []float32, y []float64, d int) (exactmh.ReadyGLM, error) {
		return model.NewLogisticRegression32(x, y, d)
	}
	exactmh.NewStudentTRegression = func(x, y []float64, d int, nu float64) (exactmh.ReadyGLM, error) {
		return model.NewStudentTRegression(x, y, d, nu)
	}
	exactmh.NewGLM = func(x, y []float64, d int, f any) (exactmh.ReadyGLM, error) {
		return model.NewGLM(x, y, d, family(f))
	}
	exactmh.NewGLM32 = func(x []float32, y []float64, d int, f any) (exactmh.ReadyGLM, error) {
		return model.NewGLM32(x, y, d, family(f))
	}
	exactmh.NewGaussianMean = func(y []float64, d int, sigma *mat.SymDense) (exactmh.ReadyEnergy, error) {
		return model.NewGaussianMean(y, d, sigma)
	}
	exactmh.NewGaussianMixture = func(x []float64, sigma2 float64) (exactmh.ReadyEnergy, error) {
		return model.NewGaussianMixture(x, sigma2)
	}
	exactmh.NewIsoGaussian = func(d int, sd float64) (exactmh.ReadyPrior, error) { return model.NewIsoGaussian(d, sd) }
	exactmh.NewBall = func(d int, r float64, c []float64) (exactmh.ReadySupport, error) { return model.NewBall(d, r, c) }
	exactmh.NewBox = func(lo, hi []float64) (exactmh.ReadySupport, error) { return model.NewBox(lo, hi) }
	exactmh.NewCube = func(d int, lo, hi float64) (exactmh.ReadySupport, error) { return model.NewCube(d, lo, hi) }
	exactmh.BoxBounds = func(p exactmh.Prior) (lo, hi []float64, ok bool) {
		if b, ok := p.(*model.Box); ok {
			return b.Lo, b.Hi, true
		}
		return nil, nil, false
	}
	exactmh.BallRadius = func(p exactmh.Prior) (float64, bool) {
		if b, ok := p.(*model.Ball); ok && len(b.Center) == 0 {
			return b.Radius, true
		}
		return 0, false
	}
}

// family returns the model family an internal test names.
func family(f any) model.GLMFamily {
	switch f := f.(type) {
	case exactmh.ProbitFamily:
		return model.ProbitFamily{}
	case exactmh.PoissonFamily:
		return model.PoissonFamily{}
	case exactmh.GaussianFamily:
		return model.GaussianFamily{Sigma: f.Sigma}
	}
	panic(fmt.Sprintf("no model family for %T", f))
}
