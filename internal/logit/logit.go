// Copyright ©2026 The exactmh Authors. All rights reserved.
// Use of this source code is governed by a BSD-style
// license that can be found in the LICENSE file.

// Package logit holds the logistic loss f(z) = log(1 + e^z) − y·z in the
// forms the kernels (package exactmh) inline and the logistic regressions
// (package model) compute: one copy of each expression, so that a kernel's
// inlined energy difference and the model's EnergyDiffs give the same
// bits (TestSMHLossDiffBitForBit, TestTFMHLogisticBitForBit).
package logit

import "math"

// softplus returns log(1 + e^z) without overflow or cancellation.
func Softplus(z float64) float64 {
	if z > 0 {
		return z + math.Log1p(math.Exp(-z))
	}
	return math.Log1p(math.Exp(z))
}

// logisticGroup is how many data logisticLosses and logisticLossDiffs
// transform at a time.
const Group = 64

// logisticLosses sets dst[k] = softplus(z) − y_{idx[k]}·z for the linear
// predictors z = dst[k]: the logistic energies, bit for bit softplus's. The
// exponentials of a group of data are computed back to back, then their
// log1p: datum by datum each log1p waits for its exp, and the loss takes
// about 1.8× as long.
func Losses(dst, y []float64, idx []int) {
	var e [Group]float64
	for lo := 0; lo < len(idx); lo += Group {
		z := dst[lo:min(lo+Group, len(idx))]
		for k, zk := range z {
			e[k] = math.Exp(-math.Abs(zk))
		}
		for k, zk := range z {
			// max(z, 0) + log1p(e^−|z|) is softplus's z + log1p(e^−z)
			// for z > 0 and 0 + log1p(e^z) otherwise, without the branch.
			z[k] = max(zk, 0) + math.Log1p(e[k]) - y[idx[lo+k]]*zk
		}
	}
}

// logisticLossDiffs sets dst[k] = U_i(θ) − U_i(θ') for i = idx[k] from the
// linear predictors z = dst[k] at θ and zn[k] at θ', as logisticLosses
// does: bit for bit softplus(z) − softplus(zn) − y_i(z − zn).
func LossDiffs(dst, zn, y []float64, idx []int) {
	var e, en [Group]float64
	for lo := 0; lo < len(idx); lo += Group {
		z := dst[lo:min(lo+Group, len(idx))]
		for k, zk := range z {
			e[k] = math.Exp(-math.Abs(zk))
			en[k] = math.Exp(-math.Abs(zn[lo+k]))
		}
		for k, zk := range z {
			z[k] = EnergyDiff(zk, zn[lo+k], e[k], en[k], y[idx[lo+k]])
		}
	}
}

// logisticEnergyDiff returns U_i(θ) − U_i(θ') of a logistic datum from
// z = x_iᵀθ, zn = x_iᵀθ', e = e^−|z|, en = e^−|zn| and y = y_i: the one
// expression of logisticLossDiffs, which TFMH's step (tfmhChain.energyDiff)
// also calls on one datum, so that the two give the same bits.
func EnergyDiff(z, zn, e, en, y float64) float64 {
	return max(z, 0) + math.Log1p(e) - (max(zn, 0) + math.Log1p(en)) - y*(z-zn)
}

// logisticLossSlopes is logisticLosses that also sets slope[k] =
// w[k]·(σ(z) − y_i), the weight of x_i in the gradient: bit for bit
// softplusSigmoid's. One group of at most logisticGroup data.
func LossSlopes(dst, slope, y []float64, idx []int, w []float64) {
	var e [Group]float64
	for k, zk := range dst {
		e[k] = math.Exp(-math.Abs(zk))
	}
	for k, zk := range dst {
		num := 1.0 // σ(z) = 1/(1 + e^−|z|) for z ≥ 0, e^−|z|/(1 + e^−|z|) below
		if zk < 0 {
			num = e[k]
		}
		yi := y[idx[k]]
		dst[k] = max(zk, 0) + math.Log1p(e[k]) - yi*zk
		slope[k] = w[k] * (num/(1+e[k]) - yi)
	}
}

// softplusSigmoid returns softplus(z) and σ(z) from one exponential: the
// logistic energy and its derivative at the same z.
func SoftplusSigmoid(z float64) (sp, s float64) {
	e := math.Exp(-math.Abs(z)) // ∈ (0, 1]: never overflows
	if z >= 0 {
		return z + math.Log1p(e), 1 / (1 + e)
	}
	return math.Log1p(e), e / (1 + e)
}

// sigmoid returns 1/(1 + e^−z) without overflow.
func Sigmoid(z float64) float64 {
	if z >= 0 {
		return 1 / (1 + math.Exp(-z))
	}
	e := math.Exp(z)
	return e / (1 + e)
}

// logAddExp returns log(e^a + e^b).
func LogAddExp(a, b float64) float64 {
	if a < b {
		a, b = b, a
	}
	return a + math.Log1p(math.Exp(b-a))
}

// LossAndDerivs returns the logistic loss f(z) = softplus(z) − y·z and
// its derivatives f′(z) = σ(z) − y, f″(z) = σ(z)(1 − σ(z)) from one
// exponential (SoftplusSigmoid), bit for bit as Softplus and Sigmoid give
// them separately.
func LossAndDerivs(y, z float64) (f, f1, f2 float64) {
	sp, s := SoftplusSigmoid(z)
	return sp - y*z, s - y, s * (1 - s)
}
