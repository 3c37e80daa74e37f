// Copyright ©2026 The exactmh Authors. All rights reserved.
// Use of this source code is governed by a BSD-style
// license that can be found in the LICENSE file.

package model

// The mutants of the families' kit tests (families_test.go), set only
// from here.

// MutateGaussianN makes e's N·s term count n data instead of N.
func MutateGaussianN(e *GaussianRegression, n float64) { e.mutantN = n }

// MutateNoJacobian drops the log transform's Jacobian from p.
func MutateNoJacobian(p *WithScale) { p.noJacobian = true }

// ScaleLogDensity exposes ScalePrior.logDensity.
func ScaleLogDensity(s ScalePrior, l float64) (f, d1, d2 float64) { return s.logDensity(l) }

// MutateIgnoreTrials makes e take each datum as one trial with response
// k_i/n_i.
func MutateIgnoreTrials(e *BinomialRegression) { e.ignoreTrials = true }

// MutateNoShapeLog drops the φ·log φ term of e's energy.
func MutateNoShapeLog(e *NegBinomialRegression) { e.noShapeLog = true }

// MutateSparseGaussianN makes g's N·s term count n data instead of N.
func MutateSparseGaussianN(g *SparseGaussianRegression, n float64) { g.mutantN = n }

// MutateTNu makes e's loss use ν/2 for (ν+1)/2.
func MutateTNu(e *StudentTScaleRegression) { e.mutantNu = true }

// MutateTSigmaCount makes e's energy count its s = log σ term twice per
// datum (2N·log σ for N·log σ).
func MutateTSigmaCount(e *StudentTScaleRegression) { e.mutantN = true }
