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
// tempering factor. Metropolis–Hastings reads all N energies at every step;
// minibatch kernels read a few, and most of the popular ones converge to
// the wrong distribution. This package has the exact ones, the inexact
// ones beside them for comparison, and the full-batch references, behind
// one Energy/Prior contract and one driver.
//
// This package holds the contracts and the algorithms: what a model must
// provide, the kernels, the driver and the Laplace machinery. The
// ready-made models and priors are in package [github.com/exactmh/exactmh/model].
//
//	e, _ := model.NewLogisticRegression(x, y, d)
//	prior, _ := model.NewIsoGaussian(d, 2.5)
//	post := &exactmh.Posterior{Energy: e, Prior: prior}
//	res, err := exactmh.Sample(ctx, post, nil, nil) // nil kernel: the automatic default
//	fmt.Print(res.Choice, "\n", res.Summary())
//
// # Kernels
//
// Exact minibatch: [TunaMH], [PoissonMH], [FlyMC], [TFMH], [SMH],
// [PoissonBarker], [PoissonMALA], [TunaMHSGLD], all instances of the
// auxiliary-variable framework [Aux] (an [AuxScheme] and its [AuxChain],
// with Metropolis or Barker [Acceptance]), and [Exchange] for likelihoods with an intractable
// normaliser ([IntractableLikelihood], [DoublyIntractable]).
// For multilevel models (grouped data), package
// github.com/exactmh/exactmh/multilevel: GroupGibbs (the automatic
// default's, block by block; logistic, probit and Poisson with its log
// link, its fixed effects with a cross-cubic control variate so they mix
// at many groups) and GroupSMH (joint moves), which it registers
// ([Register]) when imported (package model imports it); here, [NUTS]
// and [HMC] non-centred (NonCentred: u = τ·z, for groups with few data).
// Full batch: [MH], [MALA], [HMC], [NUTS] (with a [Metric] of a
// [MetricKind] and Stan's warmup). Inexact, for comparison: package
// github.com/exactmh/exactmh/inexact (AustereMH, MHminibatch, MHBT, SGLD),
// which registers them when imported. Proposals: [RandomWalk],
// [GaussianWalk], [CrankNicolson], all of them a [Proposal]. [Kernels]
// lists the registered kernels ([KernelInfo], [KernelFamily]). A user's
// kernel implements [Kernel] and [Chain] (optionally [Tunable],
// [WarmupAware], [AcceptTarget], [MetricAdapter], [ParamReporter],
// [Checkpointer]), reuses the built-in kernels' loop through [Walk], and
// is proven exact with package mcmctest.
//
// # Models
//
// [Energy] is the per-datum energy, with optional fast paths
// ([EnergyDiffer], [Gradienter], [EnergyGradienter], [Hessianer]); [GLM]
// is the contract of a generalised linear model, from which every bound
// and the control variates follow; [DenseGLM] ([DenseRows]) lets the
// kernels read a GLM's rows directly; an energy and prior with sparse
// Hessians ([SparseHessianer]) make a sparse [LaplaceApprox] (package
// multilevel's SparseRowGLM and Layout are the contract of a multilevel
// model: sparse rows, the fixed and group effects). [Prior] (with [PriorGradienter], [PriorHessianer];
// [BoundedSupport] for a compact support) is evaluated exactly at every
// step. [Posterior] puts them together, and [Target] is the tempered
// posterior a chain evaluates. Dimensions above [MaxDim] are refused.
//
// # Bounds
//
// The exact minibatch kernels rest on per-datum bounds, in the untempered
// energy's units: [DiffBound] (TunaMH, TFMH, TunaMH-SGLD), [EnergyRange]
// (PoissonMH, Poisson-Barker, Poisson-MALA), [FlyBound] (FlyMC) and
// [TaylorBounder] (SMH), from the energy ([DiffBounder], [EnergyRanger],
// [FlyBounder]) or derived from the GLM contract ([GLMTaylorBounder],
// [GLMQuadraticFlyBound]; [GLM]'s optional LossGrowth for losses whose derivatives grow
// without bound, as Poisson's). TunaMH's minibatch size follows a
// [ChiRule]. Every datum a step reads is checked against its bound
// ([BoundViolation], [LowerBoundViolation]), and each kernel's Start audits
// the bound over all data; [CheckBound], [CheckRange] and [CheckFlyBound]
// search the support for violations more thoroughly ([CheckOptions]). docs/bounds.md has the details.
//
// # Running
//
// [Sample] runs chains in parallel under [Settings] and returns a
// [Result] ([ChainResult] per chain with each transition's [Info],
// [Totals] per phase and a [Status]; [Result.Summary], a [Summary] of
// [ParamSummary] rows with Stan's diagnostics); [Resume] and
// [LoadCheckpoint] continue a run bit-identically; a [Recorder]
// (package progress's Printer, package stancsv's; optionally a
// [RunFinisher] or [ResumeRecorder]) sees the [RunInfo] and every transition's [Event]. With a nil Kernel, [Choose] picks one: it finds the MAP and the
// Laplace approximation ([FindMAP] under [MAPSettings] and a [MAPMethod],
// giving a [MAP]; [FindLaplace], [LaplaceApprox]; an
// [IndefiniteHessianError] where there is none), rewrites a GLM posterior
// with [ControlVariates], measures short pilots of the kernels that apply
// and reports its [Choice] (a [Candidate] per pilot); [WithLaplace] rebuilds
// a named choice. Errors say what, where and which numbers: a kernel that
// needs gradients says [ErrNoGradient], a panic in user code is a
// [PanicError], a failing recorder a [RecorderError], a
// non-finite energy an [EnergyError] (except at a leapfrog position of
// [NUTS] or [HMC], where it is zero density: a divergence); a cancelled or
// failed run keeps its draws.
//
// Chain c of a run draws from rand.New(rand.NewPCG(Settings.Seed, c)) of
// math/rand/v2, so a seed gives the same draws whatever the number of
// workers; recorders never draw random numbers. [Version] is the
// package's version, which Stan CSV files and checkpoints record.
//
// Sub-packages: model (the ready-made models and priors), multilevel
// (the multilevel kernels), inexact (the inexact comparators), sparse (the
// sparse Cholesky factorisation behind a sparse LaplaceApprox), diagnostics
// (ESS, R-hat, MCSE, identical to the R package posterior's), stancsv
// (CmdStan's CSV files), data (CSV, Parquet and Arrow readers, designs and
// the memory-mapped Store), mcmctest (the conformance kit). ARCHITECTURE.md
// maps the files.
//
// # Dependencies
//
// gonum (mat for the Gaussian models, Newton steps, Laplace approximations
// and the dense metric, optimize for FindMAP's L-BFGS fallback,
// stat/distuv for package inexact's AustereMH, dsp/fourier for the
// autocorrelations behind ESS; plot for package stanplot, whose trace,
// rank and interval plots the command draws, and for the examples'
// figures: the library itself does not link it) and the
// standard library. Package data reads Parquet with its own reader and
// klauspost/compress's zstd decoder (zstd is the codec of the bundled
// flights and of most writers' defaults, and the standard library has no
// public decoder); its sub-packages data/arrowipc (Arrow IPC and Feather)
// and data/parquetcodecs (Brotli and LZ4_RAW pages), which the command
// imports, add apache/arrow-go and its codecs, so that go run
// ./examples/quickstart downloads gonum, klauspost/compress and
// golang.org/x/tools only (TestLightDependencies). golang.org/x/exp/rand is not used: it is deprecated, and
// math/rand/v2's sources serve.
//
// Sparse Hessians (multilevel models: SparseHessianer, FindLaplace's
// sparse path, its CrankNicolson) are factored by exactmh's own package sparse — a
// minimum degree ordering, the elimination tree and an up-looking Cholesky
// factorisation after Davis's CSparse — because gonum has none,
// konstantin8105/sparse (a CSparse port) is LGPL and unmaintained, and
// go-sparse/sparse (AMD and an LDLᵀ port of QDLDL) is a pre-1.0 module;
// what the proposals need besides a factor (a draw from N(0, H⁻¹) with no
// scratch memory, safe across chains; refactoring without allocation; the
// diagonal of H⁻¹) would be a few dozen lines on top of either.
package exactmh
