// Copyright ©2026 The exactmh Authors. All rights reserved.
// Use of this source code is governed by a BSD-style
// license that can be found in the LICENSE file.

package multilevel

// GroupGibbsFixedRhoBad returns k with its fixed blocks' Crank–Nicolson
// innovation left unshrunk (a mutant: a move not reversible for the
// block's Gaussian, whose ratio treats it as one).
func GroupGibbsFixedRhoBad(k GroupGibbs) GroupGibbs {
	k.fixedRhoBad = true
	return k
}

// SetCNMinN sets the size from which the automatic default pilots the
// fixed blocks' Crank–Nicolson move, and returns a function that restores
// it.
func SetCNMinN(n int) func() {
	old := cnMinN
	cnMinN = n
	return func() { cnMinN = old }
}

// FixedRhoFor is the automatic default's Crank–Nicolson ρ for a fixed
// block whose independence proposals accept acc.
func FixedRhoFor(acc float64) float64 { return fixedRhoFor(acc) }
