// Copyright ©2026 The exactmh Authors. All rights reserved.
// Use of this source code is governed by a BSD-style
// license that can be found in the LICENSE file.

package exactmh_test

import (
	"math/rand/v2"
	"runtime"
	"testing"

	"github.com/exactmh/exactmh"
	"github.com/exactmh/exactmh/internal/testgen"
	"github.com/exactmh/exactmh/model"
)

// TestEnergyRangeUnboundedAllocatesNothing checks that the EnergyRange of
// a logistic regression (float64 and float32 rows) and of its
// control-variate rewrite under an unbounded prior fails
// before allocating its per-datum arrays: the automatic default asks for
// both on every flat GLM (16 bytes a datum each, faulted in, 32 GB at
// N = 10⁹). N = 2¹⁸: the arrays would be 4 MiB a range; less than 1 MiB
// may be allocated in all.
func TestEnergyRangeUnboundedAllocatesNothing(t *testing.T) {
	const n, d = 1 << 18, 4
	x, x32, y := testgen.BinaryRows(rand.New(rand.NewPCG(1, 2)), n, d)
	e, err := model.NewLogisticRegression(x, y, d)
	if err != nil {
		t.Fatal(err)
	}
	e32, err := model.NewLogisticRegression32(x32, y, d)
	if err != nil {
		t.Fatal(err)
	}
	prior, _ := model.NewIsoGaussian(d, 10)
	p := &exactmh.Posterior{Energy: e, Prior: prior}
	la, err := exactmh.LaplaceAt(p, make([]float64, d))
	if err != nil {
		t.Fatal(err)
	}
	cv, err := exactmh.ControlVariates(p, la)
	if err != nil {
		t.Fatal(err)
	}
	for _, q := range []struct {
		name string
		p    *exactmh.Posterior
	}{{"GLM", p}, {"float32 GLM", &exactmh.Posterior{Energy: e32, Prior: prior}}, {"control variates", cv}} {
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		_, err := q.p.EnergyRange()
		runtime.ReadMemStats(&after)
		if err == nil {
			t.Errorf("%s: an EnergyRange under a Gaussian prior", q.name)
		}
		if b := after.TotalAlloc - before.TotalAlloc; b > 1<<20 {
			t.Errorf("%s: EnergyRange allocated %d bytes before failing (%v), want < 1 MiB", q.name, b, err)
		}
	}
}
