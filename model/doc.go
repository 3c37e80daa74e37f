// Copyright ©2026 The exactmh Authors. All rights reserved.
// Use of this source code is governed by a BSD-style
// license that can be found in the LICENSE file.

// Package model holds the ready-made models and priors of package exactmh:
// implementations of its contracts (exactmh.Energy, exactmh.GLM,
// exactmh.DenseGLM, exactmh.Prior, exactmh.BoundedSupport), as
// hash/crc32 implements hash. Package exactmh never imports this one; a
// user's own model implements the same contracts and gets the same
// kernels, bounds and fast paths.
//
// # Energies
//
// [LogisticRegression] and [LogisticRegression32] (float32 features, half
// the memory), [StudentTRegression] (robust regression), and any
// generalised linear model through [NewGLM] and [NewGLM32] with a
// [GLMFamily]: [GaussianFamily] (known σ), [PoissonFamily] (log link),
// [ProbitFamily], or the user's own. Each GLM
// keeps its rows in memory and implements exactmh.DenseGLM, so the
// kernels read them directly; the logistic regressions have the
// Jaakkola–Jordan FlyMC bound and Student-t the tangent bound
// (exactmh.FlyBounder), the rest derive theirs from the GLM contract.
// [BinomialRegression] is k of n trials with a logit or probit link (and
// [BinomialFamily] the same with the trials as weights of a multilevel
// model, [NewWeightedSparseGLM]).
// [StudentTScaleRegression] is Student-t regression with σ unknown.
// [NegBinomialRegression] is NB2 counts with offsets and the shape
// unknown (not a GLM in θ: the full-batch kernels sample it).
// [OrdinalRegression] is the cumulative logit model of ratings 1..K with
// K − 1 ordered cutpoints ([WithCutpoints] puts [CutpointPrior] on them
// with the ordered transform's Jacobian; [NewOrdinalMultilevel] with
// random effects), sampled by the full-batch kernels too.
// [GaussianRegression] is linear regression with σ unknown held as its
// sufficient statistics (a step costs O(d²) and reads no datum), with
// its prior on σ through [WithScale]; [SparseGaussianRegression] is the
// same for sparse rows, the Gaussian multilevel model with σ unknown.
// [GaussianMean] and [GaussianMixture] are the papers' toy targets, with
// exact Hessians and bounds; [Ising] is a doubly intractable likelihood
// for the exchange algorithm.
//
// # Priors
//
// [Flat], [Gaussian] (independent normals), [Laplace] (independent
// double-exponentials, with kinks FindMAP handles), and the uniform priors
// on a bounded support, [Box] and [Ball], which implement
// exactmh.BoundedSupport: the PoissonMH-family bounds and the GLM
// derivative bounds of unbounded losses need one. [WithScale] adds a
// [ScalePrior] ([HalfNormal], [HalfStudentT], [Exponential], [Gamma]) on
// a last coordinate sampled on the log scale (σ, a shape), with its
// Jacobian.
package model
