package exactmh_test

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/exactmh/exactmh"
	"github.com/exactmh/exactmh/mcmctest"
	"github.com/exactmh/exactmh/model"
	"gonum.org/v1/gonum/mat"
)

// The MAP of a conjugate Gaussian is its closed-form posterior mean.
func TestFindMAPConjugate(t *testing.T) {
	sigma := mat.NewSymDense(3, []float64{1, 0.3, 0, 0.3, 2, 0.4, 0, 0.4, 1.5})
	g, err := mcmctest.ConjugateGaussian(400, []float64{1, -2, 0.5}, sigma, []float64{0, 0, 0}, []float64{0.5, 0.5, 0.5}, 0.3, 3)
	if err != nil {
		t.Fatal(err)
	}
	m, err := exactmh.FindMAP(context.Background(), g.Posterior, []float64{0, 0, 0}, nil)
	if err != nil {
		t.Fatal(err)
	}
	for j, v := range g.Mean {
		if math.Abs(m.Theta[j]-v) > 1e-6 {
			t.Errorf("θ[%d] = %.9f, want %.9f", j, m.Theta[j], v)
		}
	}
	if m.GradNorm > 1e-5 || m.Evals == 0 || m.GradEvals == 0 {
		t.Errorf("‖∇‖ = %g, evals %d, gradient evals %d", m.GradNorm, m.Evals, m.GradEvals)
	}
	t.Logf("%d iterations, %d evaluations", m.Iterations, m.Evals)
}

// simLogistic simulates a logistic regression with n data in d dimensions.
func simLogistic(t *testing.T, n, d int, seed uint64) *model.LogisticRegression {
	t.Helper()
	rng := rand.New(rand.NewPCG(seed, 1))
	x, y := make([]float64, n*d), make([]float64, n)
	for i := range n {
		var z float64
		for j := range d {
			x[i*d+j] = rng.NormFloat64()
			z += x[i*d+j] * float64(j%3-1)
		}
		if rng.Float64() < 1/(1+math.Exp(-z)) {
			y[i] = 1
		}
	}
	e, err := model.NewLogisticRegression(x, y, d)
	if err != nil {
		t.Fatal(err)
	}
	return e
}

// checkStationary checks by central differences of LogDensity that the
// gradient vanishes at θ and that nearby points are not better.
func checkStationary(t *testing.T, name string, p *exactmh.Posterior, theta []float64, tol float64) {
	t.Helper()
	l0, err := p.LogDensity(theta)
	if err != nil {
		t.Fatal(err)
	}
	for j := range theta {
		h := 1e-5 * math.Max(1, math.Abs(theta[j]))
		up, dn := append([]float64(nil), theta...), append([]float64(nil), theta...)
		up[j] += h
		dn[j] -= h
		lu, _ := p.LogDensity(up)
		ld, _ := p.LogDensity(dn)
		if g := (lu - ld) / (2 * h); math.Abs(g) > tol {
			t.Errorf("%s: ∂/∂θ%d = %.3g at the MAP", name, j, g)
		}
		up[j] += 1e-2
		dn[j] -= 1e-2
		lu, _ = p.LogDensity(up)
		ld, _ = p.LogDensity(dn)
		if lu > l0 || ld > l0 {
			t.Errorf("%s: a point 0.01 away along θ%d is better than the MAP", name, j)
		}
	}
}

func TestFindMAPRegressions(t *testing.T) {
	lr := simLogistic(t, 2000, 5, 7)
	prior, _ := model.NewIsoGaussian(5, 2)
	rng := rand.New(rand.NewPCG(8, 8))
	x, y := make([]float64, 3000*4), make([]float64, 3000)
	for i := range y {
		var s float64
		for j := range 4 {
			x[i*4+j] = rng.NormFloat64()
			s += x[i*4+j]
		}
		y[i] = s + rng.NormFloat64()
	}
	st, _ := model.NewStudentTRegression(x, y, 4, 4)
	for _, c := range []struct {
		name string
		p    *exactmh.Posterior
	}{
		{"logistic, flat prior", &exactmh.Posterior{Energy: lr}},
		{"logistic, Gaussian prior", &exactmh.Posterior{Energy: lr, Prior: prior}},
		{"Student-t", &exactmh.Posterior{Energy: st}},
	} {
		m, err := exactmh.FindMAP(context.Background(), c.p, make([]float64, c.p.Dim()), nil)
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		checkStationary(t, c.name, c.p, m.Theta, 1e-4)
		t.Logf("%s: θ̂ = %.4f (%d iterations, ‖∇‖ = %.2g)", c.name, m.Theta, m.Iterations, m.GradNorm)
	}
	// With a flat prior the MAP does not depend on β.
	a, _ := exactmh.FindMAP(context.Background(), &exactmh.Posterior{Energy: st}, make([]float64, 4), nil)
	b, _ := exactmh.FindMAP(context.Background(), &exactmh.Posterior{Energy: st, Beta: 1e-3}, make([]float64, 4), &exactmh.MAPSettings{GradTol: 1e-9})
	for j := range a.Theta {
		if math.Abs(a.Theta[j]-b.Theta[j]) > 1e-5 {
			t.Errorf("β changed the flat-prior MAP: %v vs %v", a.Theta, b.Theta)
			break
		}
	}
}

// On the truncated Gaussian mixture (box prior) the search stays in the
// box and finds a mode.
func TestFindMAPMixture(t *testing.T) {
	rng := rand.New(rand.NewPCG(2, 2))
	x := make([]float64, 20000)
	for i := range x {
		x[i] = math.Sqrt2*rng.NormFloat64() + float64(rng.IntN(2))
	}
	e, _ := model.NewGaussianMixture(x, 2)
	box, _ := model.NewCube(2, -3, 3)
	p := &exactmh.Posterior{Energy: e, Prior: box, Beta: 1e-2}
	m, err := exactmh.FindMAP(context.Background(), p, []float64{0.5, 0}, nil)
	if err != nil {
		t.Fatal(err)
	}
	checkStationary(t, "mixture", p, m.Theta, 1e-3)
	near := func(a, b float64) bool { return math.Hypot(m.Theta[0]-a, m.Theta[1]-b) < 0.3 }
	if !near(0, 1) && !near(1, -1) {
		t.Errorf("MAP %v is near neither mode (0, 1) nor (1, −1)", m.Theta)
	}
	// A start near the box's edge: the line search must back off from +Inf.
	m2, err := exactmh.FindMAP(context.Background(), p, []float64{2.95, -2.95}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if !box.Contains(m2.Theta) {
		t.Errorf("MAP %v outside the box", m2.Theta)
	}
	t.Logf("from (0.5, 0): %.4f; from (2.95, −2.95): %.4f", m.Theta, m2.Theta)
}

func TestFindMAPErrors(t *testing.T) {
	lr := simLogistic(t, 100, 2, 1)
	p := &exactmh.Posterior{Energy: lr}
	ball, _ := model.NewBall(2, 1, nil)
	for name, f := range map[string]func() (*exactmh.MAP, error){
		"nil posterior": func() (*exactmh.MAP, error) { return exactmh.FindMAP(context.Background(), nil, []float64{0, 0}, nil) },
		"wrong length":  func() (*exactmh.MAP, error) { return exactmh.FindMAP(context.Background(), p, []float64{0}, nil) },
		"outside support": func() (*exactmh.MAP, error) {
			return exactmh.FindMAP(context.Background(), &exactmh.Posterior{Energy: lr, Prior: ball}, []float64{2, 0}, nil)
		},
		"bad settings": func() (*exactmh.MAP, error) {
			return exactmh.FindMAP(context.Background(), p, []float64{0, 0}, &exactmh.MAPSettings{GradTol: -1})
		},
		"no prior gradient": func() (*exactmh.MAP, error) {
			return exactmh.FindMAP(context.Background(), &exactmh.Posterior{Energy: lr, Prior: noGradPrior{}}, []float64{0, 0}, nil)
		},
		"iteration limit": func() (*exactmh.MAP, error) {
			return exactmh.FindMAP(context.Background(), p, []float64{0, 0}, &exactmh.MAPSettings{MaxIterations: 1, GradTol: 1e-15})
		},
	} {
		if _, err := f(); err == nil {
			t.Errorf("%s: no error", name)
		} else {
			t.Logf("%s: %v", name, err)
		}
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	m, err := exactmh.FindMAP(ctx, p, []float64{0, 0}, nil)
	if err == nil || m == nil || len(m.Theta) != 2 {
		t.Errorf("cancelled: result %v, err %v; want the start point and an error", m, err)
	}
}

// noGradPrior is a prior without a gradient.
type noGradPrior struct{}

func (noGradPrior) LogPrior([]float64) float64 { return 0 }

func ExampleFindMAP() {
	// Three data, y_i ~ N(θ, 1): with a flat prior the MAP is their mean.
	e, err := model.NewGaussianMean([]float64{1, 2, 6}, 1, mat.NewSymDense(1, []float64{1}))
	if err != nil {
		fmt.Println(err)
		return
	}
	m, err := exactmh.FindMAP(context.Background(), &exactmh.Posterior{Energy: e}, []float64{0}, nil)
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Printf("MAP %.4f\n", m.Theta[0])
	// Output: MAP 3.0000
}

// When the data pull the mode outside a ball prior, the MAP is on the
// sphere and FindMAP returns it without error.
func TestFindMAPOnBoundary(t *testing.T) {
	e := simLogistic(t, 2000, 3, 9)
	ball, _ := model.NewBall(3, 0.2, nil)
	m, err := exactmh.FindMAP(context.Background(), &exactmh.Posterior{Energy: e, Prior: ball}, []float64{0, 0, 0}, nil)
	if err != nil {
		t.Fatal(err)
	}
	r := math.Sqrt(m.Theta[0]*m.Theta[0] + m.Theta[1]*m.Theta[1] + m.Theta[2]*m.Theta[2])
	if r > 0.2 || r < 0.2*(1-1e-3) {
		t.Errorf("‖θ̂‖ = %.6f, want on the sphere of radius 0.2", r)
	}
	// KKT: the log-likelihood gradient points straight out of the sphere.
	g := make([]float64, 3)
	idx, w := make([]int, e.Len()), make([]float64, e.Len())
	for i := range idx {
		idx[i], w[i] = i, -1
	}
	e.AddGradient(g, m.Theta, idx, w)
	var gt float64
	for j := range g {
		gt += g[j] * m.Theta[j] / (r * r)
	}
	var tang, norm float64
	for j := range g {
		v := g[j] - gt*m.Theta[j]
		tang += v * v
		norm += g[j] * g[j]
	}
	if gt <= 0 || math.Sqrt(tang/norm) > 1e-3 {
		t.Errorf("not a constrained maximum: radial %.3g, tangential/total %.3g", gt, math.Sqrt(tang/norm))
	}
	t.Logf("θ̂ = %.4f, ‖θ̂‖ = %.6f, ‖∇‖ = %.3g, tangential share %.2e", m.Theta, r, m.GradNorm, math.Sqrt(tang/norm))
}
