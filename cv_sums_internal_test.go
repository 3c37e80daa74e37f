// Copyright ©2026 The exactmh Authors. All rights reserved.
// Use of this source code is governed by a BSD-style
// license that can be found in the LICENSE file.

package exactmh

import (
	"context"
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/exactmh/exactmh/internal/logit"
	"github.com/exactmh/exactmh/internal/testgen"
	"github.com/exactmh/exactmh/internal/vec"
)

// cvSumsGLMs returns float64-row GLMs of n data in d dimensions: logistic,
// probit (through NewGLM) and Student-t regression.
func cvSumsGLMs(t *testing.T, n, d int) map[string]GLM {
	t.Helper()
	rng := rand.New(rand.NewPCG(uint64(n), 11))
	x := make([]float64, n*d)
	for i := range x {
		x[i] = rng.NormFloat64() / math.Sqrt(float64(d))
	}
	yb, yr := make([]float64, n), make([]float64, n)
	for i := range n {
		var z float64
		for j := range d {
			z += x[i*d+j] * float64(j%3-1)
		}
		if rng.Float64() < logit.Sigmoid(z) {
			yb[i] = 1
		}
		yr[i] = z + rng.NormFloat64()
	}
	lr, err := NewLogisticRegression(x, yb, d)
	if err != nil {
		t.Fatal(err)
	}
	probit, err := NewGLM(x, yb, d, ProbitFamily{})
	if err != nil {
		t.Fatal(err)
	}
	st, err := NewStudentTRegression(x, yr, d, 4)
	if err != nil {
		t.Fatal(err)
	}
	return map[string]GLM{"logistic": lr, "probit": probit, "student-t": st}
}

// cvParts returns the control-variate posterior's energy and prior.
func cvParts(t *testing.T, p *Posterior, la *LaplaceApprox) (*cvEnergy, *cvPrior) {
	t.Helper()
	q, err := ControlVariates(p, la)
	if err != nil {
		t.Fatal(err)
	}
	return q.Energy.(*cvEnergy), q.Prior.(*cvGradPrior).cvPrior
}

// sameBits reports whether a and b are equal bit for bit.
func sameBits(a, b []float64) bool {
	if len(a) != len(b) {
		return false
	}
	for j := range a {
		if math.Float64bits(a[j]) != math.Float64bits(b[j]) {
			return false
		}
	}
	return true
}

// TestControlVariatesReusesNewtonSums: ControlVariates on FindLaplace's
// approximation takes Σ∇U_i(θ̂) and Σ∇²U_i(θ̂) from the Newton search's
// last pass instead of summing them again, and the rewrite it builds is
// bit for bit the one it builds summing them itself — the sums, every
// datum's expansion, K_i and c_i, and the surrogate prior's log density
// and gradient — in one block and in several (block lengths neither
// multiples of four nor of the chunk), for three GLMs. It would fail if
// the sums the search recorded were not the data's alone (the prior's
// Hessian subtracted), were tempered, were taken at another point than
// θ̂, or were summed in another order.
func TestControlVariatesReusesNewtonSums(t *testing.T) {
	const n, d = 3001, 5
	prior, err := NewIsoGaussian(d, 3)
	if err != nil {
		t.Fatal(err)
	}
	for _, minData := range []int{1 << 30, 500} {
		old := minBlockData
		minBlockData = minData
		for name, g := range cvSumsGLMs(t, n, d) {
			p := &Posterior{Energy: g, Prior: prior}
			la, err := FindLaplace(context.Background(), p, make([]float64, d), nil)
			if err != nil {
				t.Fatal(name, err)
			}
			if la.data == nil {
				t.Fatalf("%s: FindLaplace recorded no sums for ControlVariates", name)
			}
			if nb := passBlocks(n, d*d+d); (nb > 1) != (minData < n) {
				t.Fatalf("%d blocks with minBlockData = %d", nb, minData)
			}
			e1, p1 := cvParts(t, p, la)
			fresh := *la
			fresh.data = nil
			e2, p2 := cvParts(t, p, &fresh)
			if !sameBits(p1.grad, p2.grad) || !sameBits(p1.hess, p2.hess) {
				t.Fatalf("%s, minBlockData %d: reused sums differ from summed ones:\n∇ %v\n  %v\nH %v\n  %v",
					name, minData, p1.grad, p2.grad, p1.hess, p2.hess)
			}
			if !sameBits(e1.c, e2.c) || !slices.Equal(e1.at, e2.at) || e1.k3.all != e2.k3.all || !sameBits(e1.k3.v, e2.k3.v) {
				t.Fatalf("%s: the per-datum expansions differ", name)
			}
			q1 := &cvGradPrior{cvPrior: p1, pg: prior}
			q2 := &cvGradPrior{cvPrior: p2, pg: prior}
			rng := rand.New(rand.NewPCG(3, 3))
			for range 20 {
				theta := la.Rand(rng, nil)
				g1, g2 := make([]float64, d), make([]float64, d)
				q1.AddLogPriorGradient(g1, theta)
				q2.AddLogPriorGradient(g2, theta)
				if !sameBits([]float64{q1.LogPrior(theta)}, []float64{q2.LogPrior(theta)}) || !sameBits(g1, g2) {
					t.Fatalf("%s: the surrogate priors differ at %v", name, theta)
				}
			}
			// The sums are what a direct sum over the data gives, within
			// rounding (not merely what the sweep gives twice).
			wantG, wantH := make([]float64, d), make([]float64, d*d)
			for i := range n {
				x := g.Row(i)
				f1, f2 := g.LossDerivs(i, vec.Dot(x, la.Mean))
				for a := range d {
					wantG[a] += f1 * x[a]
					for b := range d {
						wantH[a*d+b] += f2 * x[a] * x[b]
					}
				}
			}
			for j := range wantH {
				if j < d && math.Abs(p1.grad[j]-wantG[j]) > 1e-9*(1+math.Abs(wantG[j])) {
					t.Fatalf("%s: Σ∇U_i[%d] = %v, direct sum %v", name, j, p1.grad[j], wantG[j])
				}
				if math.Abs(p1.hess[j]-wantH[j]) > 1e-9*(1+math.Abs(wantH[j])) {
					t.Fatalf("%s: Σ∇²U_i[%d] = %v, direct sum %v", name, j, p1.hess[j], wantH[j])
				}
			}
		}
		minBlockData = old
	}
}

// TestControlVariatesSumsOnlyWhereExact: FindLaplace records no sums where
// the Newton sweep's would not be ControlVariates' bit for bit (β ≠ 1,
// float32 rows, L-BFGS, LaplaceAt), and ControlVariates ignores recorded
// sums for another energy or another θ̂ than they were summed at.
func TestControlVariatesSumsOnlyWhereExact(t *testing.T) {
	const n, d = 600, 3
	x, x32, y := testgen.BinaryRows(rand.New(rand.NewPCG(5, 5)), n, d)
	lr, err := NewLogisticRegression(x, y, d)
	if err != nil {
		t.Fatal(err)
	}
	lr32, err := NewLogisticRegression32(x32, y, d)
	if err != nil {
		t.Fatal(err)
	}
	prior, err := NewIsoGaussian(d, 3)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	for _, c := range []struct {
		name string
		p    *Posterior
		s    *MAPSettings
	}{
		{"tempered", &Posterior{Energy: lr, Prior: prior, Beta: 0.5}, nil},
		{"float32", &Posterior{Energy: lr32, Prior: prior}, nil},
		{"L-BFGS", &Posterior{Energy: lr, Prior: prior}, &MAPSettings{Method: MAPLBFGS}},
	} {
		la, err := FindLaplace(ctx, c.p, make([]float64, d), c.s)
		if err != nil {
			t.Fatal(c.name, err)
		}
		if la.data != nil {
			t.Errorf("%s: FindLaplace recorded sums", c.name)
		}
	}
	p := &Posterior{Energy: lr, Prior: prior}
	la, err := FindLaplace(ctx, p, make([]float64, d), nil)
	if err != nil || la.data == nil {
		t.Fatalf("no sums recorded (%v)", err)
	}
	if at, err := LaplaceAt(p, la.Mean); err != nil || at.data != nil {
		t.Errorf("LaplaceAt: %v, sums %v", err, at.data)
	}
	if !la.data.matches(lr, la.Mean) {
		t.Fatal("the sums do not match their own energy and θ̂")
	}
	other, _ := NewLogisticRegression(x, y, d) // the same data, another energy
	moved := slices.Clone(la.Mean)
	moved[1] = math.Nextafter(moved[1], 1)
	if la.data.matches(other, la.Mean) || la.data.matches(lr, moved) || la.data.matches(lr32, la.Mean) {
		t.Fatal("the sums match another energy or another θ̂")
	}
	// A θ̂ changed after FindLaplace: the rewrite sums at the new θ̂, as
	// without recorded sums, not with the stale ones.
	shifted := *la
	shifted.Mean = slices.Clone(la.Mean)
	shifted.Mean[0] += 0.05
	_, got := cvParts(t, p, &shifted)
	shifted.data = nil
	_, want := cvParts(t, p, &shifted)
	if !sameBits(got.grad, want.grad) || !sameBits(got.hess, want.hess) {
		t.Fatalf("a moved θ̂ took the stale sums: ∇ %v, want %v", got.grad, want.grad)
	}
}
