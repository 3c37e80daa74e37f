// Copyright ©2026 The exactmh Authors. All rights reserved.
// Use of this source code is governed by a BSD-style
// license that can be found in the LICENSE file.

// Package inexact holds the INEXACT minibatch samplers, beside package
// exactmh's exact ones for an honest comparison of cost and bias: their
// chains converge to a law that differs from the posterior by an amount
// no run length removes.
//
//   - AustereMH: the sequential t-test of Korattikara, Chen and Welling
//     (2014).
//   - MHminibatch: the minibatch Barker test of Seita, Pan, Chen and Canny
//     (2017).
//   - MHBT: MH with batch tempering (Wu, Wang and Wong), with the random
//     walk, reversible SGLD (RSGLD) or plain SGLD proposals; it targets a
//     tempered posterior.
//   - SGLD: stochastic-gradient Langevin dynamics (Welling and Teh 2011),
//     no MH correction.
//
// Each kernel's Exact returns false. The package sits beside exactmh as
// image/png sits beside image: the kernels are written on exactmh's
// exported surface (exactmh.Walk, exactmh.Target) and registered with
// exactmh.Register when the package is imported, so that exactmh.Kernels
// and everything ranging over it (the conformance, golden, fuzz and
// capability tests) see them. The exactmh command offers
// none of them; the examples randomwalk and mhbt measure them.
package inexact
