// Copyright ©2026 The exactmh Authors. All rights reserved.
// Use of this source code is governed by a BSD-style
// license that can be found in the LICENSE file.

package exactmh_test

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/exactmh/exactmh"
	"github.com/exactmh/exactmh/model"
	"gonum.org/v1/gonum/mat"
)

// testInvMass is a 3×3 covariance with strong correlations.
func testInvMass() *mat.SymDense {
	return mat.NewSymDense(3, []float64{
		2.0, 0.9, -0.4,
		0.9, 1.0, 0.3,
		-0.4, 0.3, 0.5,
	})
}

// Every operation of a Metric agrees with the same linear algebra done by
// gonum on M⁻¹ itself.
func TestMetricAlgebra(t *testing.T) {
	inv := testInvMass()
	diag, err := exactmh.NewDiagMetric([]float64{2, 1, 0.5})
	if err != nil {
		t.Fatal(err)
	}
	dense, err := exactmh.NewDenseMetric(inv)
	if err != nil {
		t.Fatal(err)
	}
	diagInv := mat.NewSymDense(3, []float64{2, 0, 0, 0, 1, 0, 0, 0, 0.5})
	eye := mat.NewSymDense(3, []float64{1, 0, 0, 0, 1, 0, 0, 0, 1})
	v := []float64{0.3, -1.2, 0.7}
	for _, c := range []struct {
		name string
		m    exactmh.Metric
		inv  *mat.SymDense
	}{{"unit", exactmh.Metric{}, eye}, {"diag", diag, diagInv}, {"dense", dense, inv}} {
		t.Run(c.name, func(t *testing.T) {
			if string(c.m.Kind()) != c.name {
				t.Errorf("Kind %q", c.m.Kind())
			}
			var minvV mat.VecDense
			minvV.MulVec(c.inv, mat.NewVecDense(3, v))
			got := make([]float64, 3)
			c.m.MulInvMass(got, v)
			for j := range got {
				if math.Abs(got[j]-minvV.AtVec(j)) > 1e-12 {
					t.Errorf("MulInvMass = %v, want %v", got, minvV.RawVector().Data)
				}
			}
			if want := mat.Dot(mat.NewVecDense(3, v), &minvV) / 2; math.Abs(c.m.KineticEnergy(v)-want) > 1e-12 {
				t.Errorf("KineticEnergy = %v, want %v", c.m.KineticEnergy(v), want)
			}
			var mv mat.VecDense
			if err := mv.SolveVec(c.inv, mat.NewVecDense(3, v)); err != nil {
				t.Fatal(err)
			}
			if want := mat.Dot(mat.NewVecDense(3, v), &mv); math.Abs(c.m.MassNorm(v)-want) > 1e-10 {
				t.Errorf("MassNorm = %v, want %v", c.m.MassNorm(v), want)
			}
			// The draws' covariances: N(0, M) for the momentum, N(0, M⁻¹)
			// for the noise, within Monte Carlo error.
			var ch mat.Cholesky
			var mass mat.SymDense
			if !ch.Factorize(c.inv) {
				t.Fatal("M⁻¹ not positive definite")
			}
			if err := ch.InverseTo(&mass); err != nil {
				t.Fatal(err)
			}
			rng := rand.New(rand.NewPCG(3, 4))
			const n = 40000
			for _, draw := range []struct {
				name string
				f    func(dst []float64)
				cov  mat.Symmetric
			}{{"DrawMomentum", func(p []float64) { c.m.DrawMomentum(rng, p) }, &mass}, {"DrawNoise", func(p []float64) { c.m.DrawNoise(rng, p) }, c.inv}} {
				var s [3][3]float64
				x := make([]float64, 3)
				for range n {
					draw.f(x)
					for i := range 3 {
						for j := range 3 {
							s[i][j] += x[i] * x[j] / n
						}
					}
				}
				for i := range 3 {
					for j := range 3 {
						want := draw.cov.At(i, j)
						se := math.Sqrt((draw.cov.At(i, i)*draw.cov.At(j, j) + want*want) / n)
						if math.Abs(s[i][j]-want) > 5*se {
							t.Errorf("%s: covariance[%d][%d] = %.4f, want %.4f ± %.4f", draw.name, i, j, s[i][j], want, se)
						}
					}
				}
			}
		})
	}
}

// The identity metric computes exactly what the kernels computed before
// metrics existed: its draws are ξ itself, its kinetic energy the sum of
// v²/2 in order.
func TestMetricIdentityBitForBit(t *testing.T) {
	var m exactmh.Metric
	a, b := rand.New(rand.NewPCG(1, 1)), rand.New(rand.NewPCG(1, 1))
	p := make([]float64, 5)
	m.DrawMomentum(a, p)
	var k float64
	for j := range p {
		v := b.NormFloat64()
		if p[j] != v {
			t.Fatalf("momentum %d: %v, want %v", j, p[j], v)
		}
		k += v * v / 2
	}
	if m.KineticEnergy(p) != k {
		t.Errorf("kinetic energy %v, want %v bit for bit", m.KineticEnergy(p), k)
	}
}

func TestMetricErrorsAndEncoding(t *testing.T) {
	for name, f := range map[string]func() error{
		"empty diag":       func() error { _, err := exactmh.NewDiagMetric(nil); return err },
		"zero variance":    func() error { _, err := exactmh.NewDiagMetric([]float64{1, 0}); return err },
		"NaN variance":     func() error { _, err := exactmh.NewDiagMetric([]float64{math.NaN()}); return err },
		"infinite":         func() error { _, err := exactmh.NewDiagMetric([]float64{math.Inf(1)}); return err },
		"not pos. def.":    func() error { _, err := exactmh.NewDenseMetric(mat.NewSymDense(2, []float64{1, 2, 2, 1})); return err },
		"NaN dense":        func() error { _, err := exactmh.NewDenseMetric(mat.NewSymDense(1, []float64{math.NaN()})); return err },
		"MALA wrong dim":   func() error { return startWithMetric(exactmh.MALA{Metric: mustDiag(t, 1, 1, 1)}) },
		"HMC wrong dim":    func() error { return startWithMetric(exactmh.HMC{Metric: mustDiag(t, 1)}) },
		"unknown encoding": func() error { var m exactmh.Metric; return m.UnmarshalBinary([]byte("junk")) },
	} {
		if err := f(); err == nil {
			t.Errorf("%s: no error", name)
		}
	}
	dense, _ := exactmh.NewDenseMetric(testInvMass())
	for _, m := range []exactmh.Metric{{}, mustDiag(t, 2, 3), dense} {
		b, err := m.MarshalBinary()
		if err != nil {
			t.Fatal(err)
		}
		var back exactmh.Metric
		if err := back.UnmarshalBinary(b); err != nil {
			t.Fatal(err)
		}
		p := []float64{0.1, -0.7, 2, 0.4}[:max(m.Dim(), 1)]
		if back.Kind() != m.Kind() || back.Dim() != m.Dim() || back.KineticEnergy(p) != m.KineticEnergy(p) || back.MassNorm(p) != m.MassNorm(p) {
			t.Errorf("%s metric changed in encoding", m.Kind())
		}
	}
	if got := dense.InvMassDiag(); got[0] != 2 || got[2] != 0.5 {
		t.Errorf("InvMassDiag %v", got)
	}
	if mat.Equal(dense.InvMass(), testInvMass()) != true || (exactmh.Metric{}).InvMass() != nil {
		t.Error("InvMass does not return M⁻¹")
	}
}

func mustDiag(t *testing.T, v ...float64) exactmh.Metric {
	m, err := exactmh.NewDiagMetric(v)
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// startWithMetric starts k on a 2-d Gaussian target.
func startWithMetric(k exactmh.Kernel) error {
	prior, _ := model.NewIsoGaussian(2, 1)
	e, _ := model.NewLogisticRegression([]float64{1, 0, 0, 1}, []float64{1, 0}, 2)
	tg, err := exactmh.NewTarget(&exactmh.Posterior{Energy: e, Prior: prior})
	if err != nil {
		return err
	}
	_, err = k.Start(tg, []float64{0, 0})
	return err
}
