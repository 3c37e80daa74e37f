package exactmh_test

import (
	"math"
	"testing"

	"github.com/exactmh/exactmh"
	"github.com/exactmh/exactmh/mcmctest"
	"github.com/exactmh/exactmh/model"
	"gonum.org/v1/gonum/mat"
)

// The leapfrog integrator is reversible (forward, flip the momentum,
// forward again returns to the start) and preserves volume (its Jacobian
// has determinant 1), on a non-Gaussian target.
func TestHMCIntegrator(t *testing.T) {
	e := simLogistic(t, 200, 2, 5)
	prior, _ := model.NewIsoGaussian(2, 3)
	p := &exactmh.Posterior{Energy: e, Prior: prior}
	tg, _ := exactmh.NewTarget(p)
	ch, err := exactmh.HMC{Steps: 12}.Start(tg, []float64{0.1, -0.2})
	if err != nil {
		t.Fatal(err)
	}
	const eps = 0.03
	th0, p0 := []float64{0.3, -0.5}, []float64{0.7, 1.1}
	th1, p1, ok, err := exactmh.HMCLeapfrog(ch, th0, p0, eps)
	if err != nil || !ok {
		t.Fatal(err, ok)
	}
	back, pb, _, _ := exactmh.HMCLeapfrog(ch, th1, []float64{-p1[0], -p1[1]}, eps)
	for j := range th0 {
		if math.Abs(back[j]-th0[j]) > 1e-10 || math.Abs(-pb[j]-p0[j]) > 1e-10 {
			t.Errorf("not reversible: (θ, p) = (%v, %v) → back to (%v, %v)", th0, p0, back, pb)
		}
	}
	// Jacobian of (θ, p) ↦ (θ′, p′) by central differences.
	x0 := append(append([]float64(nil), th0...), p0...)
	jac := mat.NewDense(4, 4, nil)
	const h = 1e-6
	for k := range 4 {
		up, dn := append([]float64(nil), x0...), append([]float64(nil), x0...)
		up[k] += h
		dn[k] -= h
		tu, pu, _, _ := exactmh.HMCLeapfrog(ch, up[:2], up[2:], eps)
		td, pd, _, _ := exactmh.HMCLeapfrog(ch, dn[:2], dn[2:], eps)
		fu, fd := append(tu, pu...), append(td, pd...)
		for r := range 4 {
			jac.Set(r, k, (fu[r]-fd[r])/(2*h))
		}
	}
	if det := mat.Det(jac); math.Abs(det-1) > 1e-6 {
		t.Errorf("leapfrog Jacobian determinant %.9f, want 1", det)
	} else {
		t.Logf("det = 1 %+.2e", det-1)
	}
}

func TestGradientKernelErrors(t *testing.T) {
	lin := &mcmctest.Linear{X: []float64{1, -1}}
	g := conjugate(t, 300)
	tg, _ := exactmh.NewTarget(g.Posterior)
	noGrad, _ := exactmh.NewTarget(&exactmh.Posterior{Energy: &statementOne{x: []float64{1, -1}}})
	_ = lin
	for name, start := range map[string]func() error{
		"MALA bad scale": func() error { _, err := exactmh.MALA{Scale: -1}.Start(tg, g.Mean); return err },
		"HMC bad steps":  func() error { _, err := exactmh.HMC{Steps: -2}.Start(tg, g.Mean); return err },
		"HMC bad jitter": func() error { _, err := exactmh.HMC{Jitter: 1}.Start(tg, g.Mean); return err },
		"MALA no grad":   func() error { _, err := exactmh.MALA{}.Start(noGrad, []float64{0}); return err },
		"HMC wrong dim":  func() error { _, err := exactmh.HMC{}.Start(tg, []float64{0}); return err },
	} {
		if err := start(); err == nil {
			t.Errorf("%s: no error", name)
		}
	}
}

func BenchmarkMALAStepLogistic(b *testing.B) {
	benchmarkKernel(b, mnistLikeGauss(b), exactmh.MALA{Scale: 0.01})
}

func BenchmarkHMCStepLogistic(b *testing.B) {
	benchmarkKernel(b, mnistLikeGauss(b), exactmh.HMC{Scale: 0.005, Steps: 10})
}

// mnistLikeGauss is the N = 1000, d = 50 logistic problem of the MH
// benchmark with a Gaussian prior (gradient kernels need a differentiable
// prior).
func mnistLikeGauss(b testing.TB) *exactmh.Posterior {
	p := mnistLike(b, 1000, 50)
	prior, err := model.NewIsoGaussian(50, 10)
	if err != nil {
		b.Fatal(err)
	}
	p.Prior = prior
	return p
}
