// Copyright ©2026 The exactmh Authors. All rights reserved.
// Use of this source code is governed by a BSD-style
// license that can be found in the LICENSE file.

package multilevel

// GaussGibbsSigmaShape returns k with add added to σ⁻²'s Gamma shape N/2
// (−D/2: the residual degrees of freedom of least squares), which the kit
// must catch.
func GaussGibbsSigmaShape(k GroupGibbs, add float64) GroupGibbs {
	k.gauss.sigmaShape = add
	return k
}

// GaussGibbsPrecSigma returns k factoring the effects' precision with M
// scaled by σ^{−pow} rather than σ⁻² (pow 1: M/σ), the factor of a wrong
// precision, which the kit must catch.
func GaussGibbsPrecSigma(k GroupGibbs, pow float64) GroupGibbs {
	k.gauss.precSigmaPow = pow
	return k
}

// GaussGibbsCorrDiagonal returns k factoring the effects' precision with
// each correlated factor's Σ⁻¹ replaced by diag(τ⁻²) while its acceptance
// takes the true prior's, which the kit must catch.
func GaussGibbsCorrDiagonal(k GroupGibbs) GroupGibbs {
	k.gauss.corrDiag = true
	return k
}

// GaussGibbsCorrNC returns k with the Gaussian sweep's non-centred move of
// the correlated factors' scales and correlations left out ("no-corr-nc",
// exact) or with its Jacobian |det L|^G one power short
// ("corr-nc-jacobian", a mutant the kit must catch); "no-term-nc" and
// "term-nc-jacobian" do the same to the independent terms' move.
func GaussGibbsCorrNC(k GroupGibbs, name string) GroupGibbs {
	switch name {
	case "no-corr-nc":
		k.gauss.corrNCOff = true
	case "corr-nc-jacobian":
		k.gauss.corrNCJacobianOff1 = true
	case "no-term-nc":
		k.gauss.termNCOff = true
	case "term-nc-jacobian":
		k.gauss.termNCJacobianOff1 = true
	default:
		panic("GaussGibbsCorrNC: unknown name " + name)
	}
	return k
}
