// Copyright ©2026 The exactmh Authors. All rights reserved.
// Use of this source code is governed by a BSD-style
// license that can be found in the LICENSE file.

package exactmh

import (
	"context"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/exactmh/exactmh/internal/testgen"
)

// TestControlVariateGroupsBitForBit checks the control-variate energy's
// EnergyDiffs, which computes its losses a group at a time, against the
// remainder difference datum by datum through the GLM's Loss, bit for bit:
// float64 and float32 logistic regressions, and a type that embeds one
// and overrides its loss (which must be used).
func TestControlVariateGroupsBitForBit(t *testing.T) {
	const n, d = 3000, 3
	rng := rand.New(rand.NewPCG(12, 13))
	x, x32, y := testgen.BinaryRows(rng, n, d)
	l64, err := NewLogisticRegression(x, y, d)
	if err != nil {
		t.Fatal(err)
	}
	l32, err := NewLogisticRegression32(x32, y, d)
	if err != nil {
		t.Fatal(err)
	}
	prior, err := NewIsoGaussian(d, 3)
	if err != nil {
		t.Fatal(err)
	}
	for name, e := range map[string]Energy{"float64": l64, "float32": l32, "overridden": overriddenLogistic{l64}} {
		p := &Posterior{Energy: e, Prior: prior}
		la, err := FindLaplace(context.Background(), p, make([]float64, d), nil)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		cvp, err := ControlVariates(p, la)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		cv := cvp.Energy.(*cvEnergy)
		theta, next := make([]float64, d), make([]float64, d)
		for j := range theta {
			theta[j], next[j] = la.Mean[j]+0.05*rng.NormFloat64(), la.Mean[j]+0.05*rng.NormFloat64()
		}
		for _, size := range []int{1, 64, 150} {
			idx := make([]int, size)
			for k := range idx {
				idx[k] = rng.IntN(n)
			}
			got := make([]float64, size)
			cv.EnergyDiffs(got, theta, next, idx)
			for k, i := range idx {
				z, zn := cv.rowDot2(i, theta, next)
				tay := cv.taylor(i)
				a, b := z-tay.zHat, zn-tay.zHat
				fz, fzn := cv.g.Loss(i, z), cv.g.Loss(i, zn)
				want := (fz - fzn) - tay.f1*(z-zn) - 0.5*tay.f2*(a-b)*(a+b)
				aa, ab := math.Abs(a), math.Abs(b)
				lim := cv.bound3(i) * min((aa*aa*aa+ab*ab*ab)/6, max(aa, ab)*max(aa, ab)*math.Abs(a-b)/2)
				if cv.cuber != nil { // the third-order expansion (cv_cubic.go)
					want -= tay.f3 * (a - b) * (a*a + a*b + b*b) / 6
					lim = cv.bound3(i) * min((aa*aa*aa*aa+ab*ab*ab*ab)/24, max(aa, ab)*max(aa, ab)*max(aa, ab)*math.Abs(a-b)/6)
				}
				if ar := math.Abs(want); ar > lim && ar-lim <= roundingSlack*(1+math.Abs(fz)+math.Abs(fzn)+math.Abs(z)+math.Abs(zn)) {
					want = math.Copysign(lim, want)
				}
				if got[k] != want {
					t.Errorf("%s, %d data, datum %d: remainder difference %v, want %v", name, size, i, got[k], want)
				}
			}
			// The per-datum work of the control-variate kernels' steps
			// allocates nothing.
			if a := testing.AllocsPerRun(20, func() { cv.EnergyDiffs(got, theta, next, idx) }); a != 0 {
				t.Errorf("%s, %d data: EnergyDiffs allocates %v times", name, size, a)
			}
		}
	}
}
