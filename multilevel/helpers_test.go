// Copyright ©2026 The exactmh Authors. All rights reserved.
// Use of this source code is governed by a BSD-style
// license that can be found in the LICENSE file.

package multilevel_test

import "github.com/exactmh/exactmh/model"

// noGrowthPoisson is Poisson regression's loss without the family's
// LossGrowth: f‴ = e^z unbounded on the line and no pair-wise bound, so
// no multilevel kernel has the bound it needs.
type noGrowthPoisson struct{}

func (noGrowthPoisson) Loss(y, z float64) float64 { return model.PoissonFamily{}.Loss(y, z) }
func (noGrowthPoisson) LossDerivs(y, z float64) (f1, f2 float64) {
	return model.PoissonFamily{}.LossDerivs(y, z)
}
func (noGrowthPoisson) LossBound(y float64, k int, lo, hi float64) float64 {
	return model.PoissonFamily{}.LossBound(y, k, lo, hi)
}
