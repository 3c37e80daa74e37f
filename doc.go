// Copyright ©2026 The exactmh Authors. All rights reserved.
// Use of this source code is governed by a BSD-style
// license that can be found in the LICENSE file.

// Package exactmh is exact minibatch Markov chain Monte Carlo for Bayesian
// inference on tall data.
//
// A posterior over θ ∈ ℝᵈ given N data is
//
//	π(θ) ∝ prior(θ) · exp(−β Σᵢ Uᵢ(θ)),
//
// with Uᵢ the energy (negative log-likelihood) of datum i and β an optional
// tempering factor. Metropolis–Hastings (MH) needs all N energies at every
// step. Minibatch kernels look at a few hundred; most of the popular ones are
// inexact — their chains converge to the wrong distribution. exactmh offers the
// exact ones (TunaMH, PoissonMH, FlyMC, TFMH/SMH, Poisson-Barker,
// Poisson-MALA, TunaMH-SGLD), the inexact ones beside them for honest
// comparison, and the diagnostics that show which is better on a given
// problem. Today the package has full-batch MH, MALA, HMC and NUTS (the
// references every kernel is measured against; the gradient kernels with
// a Metric and Stan's warmup), the exact minibatch kernels TunaMH,
// PoissonMH, FlyMC, TFMH, SMH-1/SMH-2, Poisson-Barker, Poisson-MALA and
// TunaMH-SGLD, the auxiliary-variable framework Aux they are instances of
// (with Metropolis or Barker acceptance), the exchange algorithm
// (Exchange) for likelihoods with an intractable normaliser,
// the inexact comparators AustereMH, MHminibatch, MHBT and SGLD, FindMAP (damped Newton with
// exact Hessians where they exist) and FindLaplace, the Laplace
// approximation N(θ̂, H⁻¹) around which the CrankNicolson and GaussianWalk
// proposals move any proposal-driven kernel, Stan CSV input and output,
// and resumable, checkpointable runs.
//
// # Using it
//
// Build a Posterior from an Energy (ready-made: NewLogisticRegression,
// NewStudentTRegression, NewGaussianMean, NewGaussianMixture; any
// generalised linear model through NewGLM with GaussianFamily,
// PoissonFamily, ProbitFamily or your own GLMFamily; or your own type that
// implements Energy or the GLM contract, which is all the GLM-based bounds
// and control variates need), a Prior (Flat, Box, Ball, Gaussian) and β;
// call Sample with a nil Kernel for the automatic default, or pick one;
// print res.Summary():
//
//	e, _ := model.NewLogisticRegression(x, y, d)
//	post := &exactmh.Posterior{Energy: e, Prior: prior}
//	res, err := exactmh.Sample(ctx, post, nil, nil) // automatic: see Choose
//	fmt.Print(res.Choice, "\n", res.Summary())
//
// The automatic default (Choose) finds the MAP and the Laplace
// approximation, rewrites a GLM posterior with ControlVariates — the
// second-order Taylor surrogate at the MAP in the prior, the remainders,
// whose bound shrinks with distance to the MAP, as the energies — and
// measures short pilots of the kernels that apply (TunaMH and TFMH on the
// remainders, MH with the Crank–Nicolson proposal, PoissonMH with it on a
// Box or Ball prior, TunaMH, NUTS), taking the fastest; NUTS alone for
// small N; no Laplace-based kernel where it finds a second mode. A tenth
// of the Crank–Nicolson proposal's steps are a random walk shaped by
// H⁻¹ (CrankNicolson.Walk), so that a posterior whose tails are heavier
// than the Laplace approximation's is still explored: Crank–Nicolson moves
// alone cannot leave such a tail once there.
//
// # Architecture as built
//
// Every kernel is the same loop (Algorithm 4 of the auxiliary-variable
// framework paper): propose θ′, draw an auxiliary minibatch, estimate
// π(θ′)/π(θ) from it, accept with probability min(1, estimate × proposal
// ratio). The loop is written once: walk.go holds the position, the
// proposal and its scale, the exact prior-and-proposal part of the ratio
// (rejecting outside the prior's support before any datum is read) and the
// accept step; auxmcmc.go runs the framework's schemes on it. TunaMH and
// PoissonMH (Case 1), Poisson-Barker and Poisson-MALA (Case 2) and
// TunaMH-SGLD (Case 3) are such schemes, with 0 allocations per step and the
// draws of their former direct implementations bit for bit. Each kernel file
// then holds only its own auxiliary-variable draw, ratio estimate and saved
// state. contracts.go has every interface between the driver and the kernels
// and recorders, with compile-time assertions for every built-in chain.
//
// The Target a chain is given applies β and counts every datum evaluation,
// so the driver, not the kernel, reports cost. Sample runs chains in
// parallel; each chain's whole state between transitions (chain, random
// stream, step-size adaptation, next transition) is kept, so Resume and
// LoadCheckpoint continue a run bit-identically.
//
// Sub-packages hold what does not need the sampler: diagnostics (ESS,
// R-hat, MCSE, identical to the R package posterior's), stancsv (CmdStan's
// CSV files, written whole or streamed, and read) and mcmctest, the
// conformance kit every built-in kernel passes and with which users prove
// their own kernels exact. ARCHITECTURE.md describes every file and how to
// add a kernel.
//
// # Bounds
//
// The exact minibatch kernels rest on per-datum bounds: TunaMH, TFMH and
// TunaMH-SGLD on a DiffBound, PoissonMH, Poisson-Barker and Poisson-MALA on
// an EnergyRange, FlyMC on a FlyBound, SMH on a TaylorBounder's constants.
// Every bound is in the untempered energy's units — the energies' own
// (DiffBounder, EnergyRanger, FlyBounder, TaylorBounder), the GLM ones,
// Posterior.DiffBound and Posterior.EnergyRange, and any bound set on a
// kernel — and the kernel applies β, as the Target applies it to the
// energies, so one bound serves every β.
//
// A wrong bound makes a chain inexact without a sign, and the kernels draw
// data in proportion to their bounds, so a datum whose bound is far too
// small, or zero, is almost never read. Two checks stand against that:
//
//   - Every datum a step evaluates is checked against its bound; a
//     violation stops the chain with a BoundViolation (a
//     LowerBoundViolation for FlyMC).
//   - Before sampling, the Start of TunaMH, TFMH, PoissonMH, FlyMC, SMH,
//     Poisson-Barker, Poisson-MALA and TunaMH-SGLD audits the bound over
//     all N data, at θ0 and three proposals from it,
//     drawn by the kernel's Proposal at 1, 3 and 10 times its initial step
//     scale from a fixed generator of the audit's own (the chain's random
//     stream and evaluation count are untouched) and moved into the prior's
//     support. For every datum it checks what a step would: β|ΔU_i| ≤
//     βc_i·M between θ0 and each proposal (TunaMH, TFMH); βU_i within
//     β·[Lo_i, Lo_i + Width_i] at each point (PoissonMH); every gap log L_i −
//     log B_i ≥ 0 at each point, and LogBoundSum changing from θ0 to the
//     farthest proposal as the per-datum bounds' sum does (FlyMC); the
//     Taylor remainders' difference within βb_i·κ between θ0 and each
//     proposal (SMH). A c_i or width of zero thus passes only where the
//     datum's energy is the same at all those points. The error names the
//     datum with the worst violation, the points, the value against its
//     bound, how many data fail there, and — for β < 1, when the bound
//     would hold divided by β — that it was probably given in tempered
//     units. It costs 3 passes over the data (TunaMH, TFMH, SMH), 4
//     (PoissonMH) or 6 (FlyMC): about 0.1 to 0.25 s for a logistic
//     regression with N = 10⁶ and d = 10 (go test -run '^$' -bench
//     StartAudit .). A bound is audited once per run, by the first chain
//     to start, at its θ0 (whether it holds does not depend on the chain;
//     FlyMC, whose check keeps state, audits per chain), and the automatic
//     default's pilots share their audits with the run they choose for.
//
// The audit does not check the bound anywhere else in the support: a bound
// wrong only far from θ0 is found, if ever, when a step draws a violating
// datum there. It does not find loose bounds (valid, only costly), nor a
// wrong bound that happens to hold at its points. CheckBound, CheckRange
// and CheckFlyBound search the whole support much more thoroughly (200
// points or pairs by default); run them on every hand-made bound. Each
// auditing kernel's TrustBound field skips the audit, for a bound known to
// hold when the passes matter (huge N, many chains, short runs); it is a
// kernel field rather than a Settings flag because the bound is part of the
// kernel's configuration, and because Start — which also runs when chains
// are started by hand or resumed from a checkpoint — sees the kernel, not
// the Settings.
//
// # Choosing χ
//
// TunaMH's χ trades its batch, expected χC²M² + CM, against the noise of
// its ratio estimate. The paper's rule (χC²M² < 1 in most steps,
// ChiHeuristic) collapses on concentrated posteriors, where C·M grows like
// √N: it picks χ ≈ 10⁻⁷ and a chain 100× slower than full-batch MH. So
// halfway through an adapted warmup of at least 200 transitions a chain
// whose χ is chosen (TunaMH.Chi = 0, NoChiSearch false) searches χ on a
// grid of 10^(k/4) at the adapted step scale for the largest predicted
// α·‖θ′ − θ‖² per unit of cost; the second half of warmup then adapts the
// step with χ fixed. (A joint search over scales 2^k times the adapted one
// was measured and dropped: with k < 0 it chose short steps on the
// tempered mixture and lost 8× in ESS per second, since squared jumps do
// not see switches between modes; with k ≥ 0 it chose the adapted scale
// everywhere it was run.) The prediction reads 128 data per proposal, 24
// proposals, drawn from the search's own generator (the chain's stream is
// untouched), and more data — up to 4096, or N if fewer — for a proposal
// whose 128 cannot resolve its log ratio to ±0.5: each datum's count in
// TunaMH's minibatch is Poisson, so the log-ratio estimate's mean and
// variance follow for every χ from the same sampled energy differences,
// and the acceptance is that of a normal log ratio with those moments.
// When even that cannot resolve most proposals' log ratios the search
// does not judge (TunaMH would there need batches of order (C·M·sd u)²).
// Its choice is then compared with full-batch MH (the chain runs as MH if
// MH is predicted 1.25× faster), so untempered TunaMH and TunaMH-CN
// without control variates run as MH; the README's examples/tall table
// shows what the search does with them. TunaMH-SGLD with Chi = 0 does the
// same on its Langevin proposals, each from a gradient minibatch drawn as
// the chain draws its own (without replacement), after a start from the
// heuristic on the proposal's noise alone; where the search predicts an
// acceptance below 0.15 at the adapted step, warmup does not hold the
// step there but adapts it toward the kernel's own target.
//
// # Dependencies
//
// gonum (mat for the Gaussian models, Newton steps, Laplace
// approximations and the dense metric, optimize for FindMAP's L-BFGS
// fallback, stat/distuv for AustereMH's t quantiles, dsp/fourier
// for the autocorrelations behind ESS; plot only in examples) and the
// standard library. No other module.
//
// Sparse Hessians (multilevel models: SparseHessianer, FindSparseLaplace,
// SparseCrankNicolson) are factored by the package's own package sparse —
// a minimum degree ordering, the elimination tree and an up-looking
// Cholesky factorisation after Davis's CSparse, about 500 lines — because
// gonum has none, konstantin8105/sparse (a CSparse port) is LGPL and
// unmaintained, and go-sparse/sparse (AMD and an LDLᵀ port of QDLDL) is a
// pre-1.0 module; what the proposals need besides a factor (a draw from
// N(0, H⁻¹) with no scratch memory, safe across chains; refactoring
// without allocation; the diagonal of H⁻¹) is a few dozen lines on top of
// either.
//
// # Randomness and reproducibility
//
// All randomness comes from math/rand/v2. Chain c of a run draws from
// rand.New(rand.NewPCG(Settings.Seed, c)), so a seed gives bit-identical
// draws whatever the number of workers, and recorders never draw random
// numbers, so observing a run cannot change it. golang.org/x/exp/rand is not
// used: it is deprecated (gonum dropped it in v0.16), and its sources satisfy
// math/rand/v2's Source anyway. Settings.Seed is used as given, zero
// included: the plan had a zero Seed mean 1, but then seed 0 could not be
// asked for, and a zero Settings is reproducible either way.
//
// # Errors
//
// Bad configuration, dimension mismatches, non-finite energies and violated
// bounds (BoundViolation, LowerBoundViolation) are errors that say what,
// where and which numbers. Bad input to the API is an error, not a panic,
// with the exceptions Go code conventionally makes: indexing a Result out
// of range (Draw, Samples) panics with a message naming the index and the
// range, as indexing a slice does, and so do methods called on a nil
// pointer. (internal/poisson.Draw panics on a bad mean, but every kernel
// checks the mean first and returns an error.) Sizes no process could
// allocate — a dimension above MaxDim, more than MaxChains chains, N·d
// overflowing int — are errors too; memory in proportion to what was asked
// for (the data, Draws) is not checked against the machine.
//
// A panic in user code that the driver calls — an Energy, Prior, Proposal,
// Recorder or a whole Kernel — does not kill the process: Sample, Resume
// and LoadCheckpoint recover it and return a *PanicError naming the chain,
// the transition and the call, with the stack; FindMAP, FindLaplace,
// ControlVariates, Posterior.Hessian and Choose return one too (Chain and
// Transition −1), including for a panic in a block of their parallel
// passes. A cancelled context makes
// Sample return the draws made so far with Status Canceled; a failing chain
// stops the run with Status Failed and keeps the draws too, and Status and
// the returned error always agree (Completed comes with a nil error). A
// run that failed only because its Recorder did (a *RecorderError: a full
// disk) keeps every chain's state and can be resumed or checkpointed.
//
// Errors are how a chain avoids being silently wrong: a non-finite energy
// or gradient, or a violated bound the kernel sees, stops the chain rather
// than reach an acceptance probability. A kernel can only see the data it
// reads, though: a bound that is wrong for a datum the minibatches never
// draw goes unnoticed, which is why CheckBound, CheckRange and
// CheckFlyBound should vet a bound before it is trusted.
package exactmh
