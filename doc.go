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
// problem. Today the package has full-batch MH, MALA and HMC (the references
// every kernel is measured against), the exact minibatch kernels TunaMH,
// PoissonMH, FlyMC, TFMH, SMH-1/SMH-2, Poisson-Barker, Poisson-MALA and
// TunaMH-SGLD, the auxiliary-variable framework Aux they are instances of,
// the inexact comparators AustereMH and MHBT, FindMAP for the MAP-based
// variants, Stan CSV input and output, and resumable, checkpointable runs.
//
// # Using it
//
// Build a Posterior from an Energy (ready-made: NewLogisticRegression,
// NewStudentTRegression, NewGaussianMean, NewGaussianMixture, or your own
// type), a Prior (Flat, Box, Ball, Gaussian) and β; pick a Kernel; call
// Sample; print res.Summary():
//
//	e, _ := exactmh.NewLogisticRegression(x, y, d)
//	post := &exactmh.Posterior{Energy: e, Prior: prior}
//	res, err := exactmh.Sample(ctx, post, exactmh.MH{}, nil)
//	fmt.Print(res.Summary())
//
// # Architecture as built
//
// Every kernel is the same loop (Algorithm 4 of the auxiliary-variable
// framework paper): propose θ′, draw an auxiliary minibatch, estimate
// π(θ′)/π(θ) from it, accept with probability min(1, estimate × proposal
// ratio). Kernels differ in how they draw the minibatch and which bound makes
// the estimate valid. The files:
//
//   - energy.go: Energy (Uᵢ at one θ for a slice of indices, into a
//     caller-owned slice: batch-oriented so that a kernel never pays an
//     interface call per datum), the fast paths EnergyDiffer (Uᵢ(θ)−Uᵢ(θ′)
//     reading each datum once), Gradienter (adds Σ wₖ∇U_{iₖ}) and
//     EnergyGradienter (both in one read, for MALA and HMC), and the
//     ready-made energies with stable numerics (log-sigmoid via softplus).
//     Data are contiguous row-major []float64.
//   - posterior.go: Prior and its four ready-made forms, and Posterior
//     (energy + prior + β). The plan put these in energy.go; they have their
//     own file because the prior is a separate concept with its own contract:
//     evaluated exactly every step, never subsampled, −Inf outside the
//     support, which rejects a proposal before any datum is read.
//   - target.go: Target, the per-chain view of a Posterior that kernels are
//     given. It applies β, and it counts every datum energy and gradient
//     evaluation, so the driver — not the kernel — reports cost: a kernel
//     cannot misreport what it touched. It also turns a non-finite energy
//     into an EnergyError naming the datum and θ.
//   - bounds.go: DiffBound (|Uᵢ(θ)−Uᵢ(θ′)| ≤ cᵢ·M(θ,θ′)) and EnergyRange
//     (Uᵢ ∈ [loᵢ, loᵢ+widthᵢ] on the support), their constructors for each
//     ready-made energy and prior support, and CheckBound / CheckRange, which
//     hunt for violations and name the datum and numbers.
//   - proposal.go: Proposal (draw θ′, return log q(θ|θ′) − log q(θ′|θ)) and the
//     Gaussian RandomWalk whose scale the driver adapts.
//   - sampler.go: the Kernel/Chain contract (Start builds per-chain state
//     with all scratch memory; Step advances one transition in place and
//     reports Info; a step allocates nothing), Settings, Result, Recorder,
//     and the driver Sample. mh.go holds full-batch MH, split from sampler.go
//     so that every kernel, the reference included, has a file that reads as
//     its algorithm.
//   - tunamh.go and poissonmh.go: the first exact minibatch kernels;
//     minibatch.go holds what they share (proposal defaults, chunked
//     evaluation in fixed scratch, the distinct-data counter, the full-batch
//     energy difference every truncated kernel falls back to). Each keeps
//     its auxiliary variables in a reusable type — tunaBatch (TunaMH's
//     Poisson minibatch and ratio estimate) and poissonCounts (the Poisson
//     counts at θ, φ at θ′, the ratio and the count-weighted gradient) — so
//     that the gradient kernels reuse them rather than copy them. Chains
//     that tune themselves in warmup implement WarmupAware; chains that
//     report parameters (χ, λ) implement ParamReporter.
//   - auxmcmc.go: Aux, the auxiliary-variable framework (Algorithm 4) as a
//     generic Kernel: an AuxScheme[W1, W2] supplies ω1, the proposal given
//     ω1, ω2 and the log ratio; Aux applies the prior exactly and accepts.
//     Go generics type the ω values, which are pointers into chain-owned
//     storage, so a step allocates nothing. poissongrad.go (Poisson-Barker,
//     Poisson-MALA: Case 2, ω1 = ω2 = poissonCounts) and tunasgld.go
//     (TunaMH-SGLD: Case 3, ω1 a K-subset, ω2 tunaBatch) are schemes; a test
//     writes PoissonMH through Aux and gets draws bit-identical to the direct
//     kernel. AuxChain.Report takes and returns Info by value: through an
//     interface a pointer would make every Info escape to the heap.
//   - tfmh.go and smh.go: factorised MH by Poisson thinning, evaluating one
//     datum at a time so that nothing is read after the first rejection;
//     SMH keeps O(N) scalars per GLM (f′, f″ at x_iᵀθ̂), not N Hessians.
//     TaylorBounder supplies the remainder bounds; the Student-t constants
//     are derived in the code and the reference's were found correct.
//   - fullgrad.go: MALA and HMC. HMC recomputes the gradient at every
//     leapfrog position (the reference code's stale and aliased gradients
//     made its baselines wrong); tests check reversibility and a unit
//     Jacobian.
//   - findmap.go: FindMAP. L-BFGS cannot follow a mode onto the edge of a
//     box or ball (the objective is +Inf outside), so for those priors a
//     projected gradient ascent finishes the job.
//   - flymc.go and flybounds.go: Firefly MC, the one stateful kernel so
//     far — its chain carries the brightness z_i of every datum as a
//     bright-first permutation with positions (O(1) to brighten or darken,
//     no per-step allocation) and caches log ρ_i of the bright data at the
//     current θ. Its lower bounds (FlyBound) are a separate interface from
//     DiffBound because they bound the likelihood itself, not its
//     differences, and must collapse: Σ log B_i costs O(d²) (regression
//     bounds as a quadratic form) or O(d) (the mixture's Taylor bound). The
//     gap log L_i − log B_i is computed in one read of datum i through
//     Target.Gaps, which counts it and reports a negative gap as a
//     LowerBoundViolation. Info.AuxEvals splits the z-step's evaluations
//     from the θ-step's.
//   - austere.go and mhbt.go: the inexact comparators, Exact() false, with
//     their bias tested (AustereMH fails the pairwise check where TunaMH
//     passes; MHBT matches the tempered posterior, not the posterior).
//     AustereTestError evaluates the sequential test's error and data use by
//     the appendix's dynamic programme. MHBT keeps its batch and cached batch
//     mean on rejection (the reference code does not, which changes the law).
//   - sampler.go's chainRunner holds a chain's whole state between
//     transitions — chain, PCG stream, dual-averaging state, next transition
//     index, clocks — so Resume continues a cancelled or finished run
//     bit-identically. checkpoint.go serialises it (gob) with each chain's
//     own state through the Checkpointer interface (every built-in chain
//     implements it; values Start recomputes from θ are not saved, so a
//     checkpoint stays small except for the permutations the
//     without-replacement kernels draw from).
//   - stancsv.go: CmdStan's CSV layout, written whole (WriteStanCSV) or
//     streamed (StanCSVRecorder, a Recorder that is also a RunFinisher), and
//     read (ReadStanCSV). lp__ is written only for kernels that know the
//     exact log posterior; the minibatch kernels' columns are batch_size__,
//     n_energy__ and n_grad__. progress.go's Progress prints per-chain
//     progress and a final line through RunFinisher.
//   - diagnostics.go: ESS (bulk, tail, basic, quantile), R-hat (rank-
//     normalized, basic), MCSE of means and quantiles, autocorrelation by FFT
//     — numerically identical to the Stan team's R package posterior, tested
//     against its output — plus coda's AR-spectrum ESS as a second opinion
//     and the accuracy measures TotalVariation, SymmetricKL and MSE.
//     summary.go holds the Summary table and progress.go the Progress
//     recorder.
//   - internal/exactness: the harness every kernel test uses — pairwise
//     detailed balance, the App. J.1 random walk, conjugate Gaussians,
//     moment checks within k·MCSE. CheckMoments refuses chains with a bulk
//     ESS below 100 (a chain that hardly moves has huge standard errors and
//     would pass anything), and ShowsBias tells a deliberately wrong kernel
//     that is biased from one that is merely stuck: every mutant test must
//     show bias. internal/alias and internal/poisson hold
//     the alias table and the exact Poisson sampler the minibatch kernels
//     draw with; internal/mnist loads the bundled MNIST digits for the
//     examples.
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
// where and which numbers; nothing reachable from the API panics on bad
// input. (internal/poisson.Draw panics on a bad mean, but every kernel checks
// the mean first and returns an error.) A cancelled context makes Sample return
// the draws made so far with Status Canceled; a failing chain stops the run
// with Status Failed and keeps the draws too.
package exactmh
