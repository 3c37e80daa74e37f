// Copyright ©2026 The exactmh Authors. All rights reserved.
// Use of this source code is governed by a BSD-style
// license that can be found in the LICENSE file.

// Package multilevel samples multilevel (hierarchical) GLMs exactly by
// minibatches: grouped data, a fixed effect β shared by all, effects u_g
// per group of each grouping factor with u_g ~ N(0, τ²), τ sampled, or a
// factor's effects correlated, u_g ~ N(0, Σ) with Σ's scales and
// correlations sampled (CorrelatedLayout, groupgibbs_corr.go).
// It sits beside package exactmh as image/png sits beside image: it builds
// on exactmh's contracts, driver and Target, and registers its kernels
// with exactmh.Register when imported, so that exactmh.Kernels, the
// exactmh command's --kernel and the automatic default (exactmh.Choose,
// through GroupGibbs's KernelInfo.Choose) see them. Package model imports
// it, so a program that builds its posterior with model.NewMultilevel has
// it registered.
//
// The kernels:
//
//   - GroupGibbs: exact minibatch Metropolis-within-Gibbs, block by block
//     (the fixed effects, then each group's effects) with control
//     variates at a centre and Poisson thinning of the remainders;
//     location moves and slice updates of the log scales. The automatic
//     default's kernel on a multilevel model, piloted against full-batch
//     NUTS (centred or not).
//   - GroupSMH: SMH-2 with joint moves, each datum bounded by how far its
//     own blocks moved.
//
// Where every datum can be read each sweep at a cost the default counts,
// GroupGibbs draws all location coordinates at once from their Gaussian
// conditional through the sparse Cholesky factor: directly for a
// Gaussian family (docs/multilevel.md, "Gaussian sweep"), given latent
// truncated normals for a probit model and given Pólya–Gamma weights for
// a logistic one (GroupGibbs.Augment; "Probit by augmentation",
// "Logistic by Pólya–Gamma augmentation"; for a probit model a term of
// many small levels is eliminated by its Schur complement, which the
// levels' few distinct counts make cheap); there a factor's scale can also
// move with every location coordinate integrated out, which crosses the
// confounding of a nesting's parent with its children (IntegratedScale;
// "Integrated scale moves"). The automatic default takes these sweeps
// without a pilot where their counted cost is small, and Choice says so.
//
// Both centre their control variates at the Laplace-EM centre (Center:
// the mode of the effects given the scales, by Newton's method on the
// sparse Hessian, then the scales from the effects' moments, as lme4
// fits) unless given one.
//
// NUTSLaplace is full-batch non-centred NUTS whose mass matrix is the
// non-centred posterior's Gauss–Newton Hessian at such a centre, applied
// through its sparse Cholesky factor in O(nnz) a leapfrog step
// (exactmh.NewMetric), with each coordinate's scale set by warmup: sums
// of coordinates that the data pin become unit-scale directions.
//
// The contract a posterior meets to be sampled here (Of) is small
// interfaces: Layout of the prior (its blocks and random-effect terms),
// SparseRowGLM of the energy, and the optional FixedScaleLayout,
// RowViewer, LossGrowther4, exactmh.LossGrowther and exactmh.LossCuber.
// model.NewMultilevel meets all of it; a user's own prior or family meets
// it by those methods alone (example_userprior_test.go runs GroupGibbs
// through the conformance kit on one).
package multilevel
