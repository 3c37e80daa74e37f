// Copyright ©2026 The exactmh Authors. All rights reserved.
// Use of this source code is governed by a BSD-style
// license that can be found in the LICENSE file.

// Package mcmctest is a conformance kit for exactmh kernels: the checks that
// show a Markov kernel leaves its target exactly invariant, that it keeps
// exactmh's contracts (no allocation per step, checkpoints that resume bit
// for bit, draws independent of the number of workers, honest Info), and —
// run on deliberately wrong variants of the kernel — that the checks can
// see when it does not. Every built-in kernel of exactmh passes it, in one
// table (conformance_test.go in the exactmh repository); a kernel of your
// own, written against exactmh.Kernel or through exactmh.Aux, is checked
// the same way.
//
// # Proving your kernel exact
//
// No finite test proves a kernel exact; what the kit does is make each way
// of being wrong visible, with a known false-alarm rate, and prove its own
// power by failing your wrong variants. Describe the kernel in a Case and
// call Check from a test:
//
//	func TestMyKernel(t *testing.T) {
//		mcmctest.Check(t, mcmctest.Case{
//			Name: "mine",
//			Kernel: func(pb mcmctest.Problem) exactmh.Kernel {
//				return MyKernel{Proposal: pb.Proposal, Scale: pb.Scale}
//			},
//			UsesProposal: true,
//			Exact:        true,
//			Mutants: map[string]func(mcmctest.Problem) exactmh.Kernel{
//				"no prior ratio": func(pb mcmctest.Problem) exactmh.Kernel {
//					return MyKernel{Proposal: pb.Proposal, Scale: pb.Scale, forgetPrior: true}
//				},
//			},
//		})
//	}
//
// Check builds the kernel on small problems whose answers are known and
// runs, as subtests:
//
//   - pairwise: detailed balance on a fixed pair of points (Pairwise). A
//     chain whose proposal swaps A and B (SwapProposal) makes many
//     independent accept/reject decisions from each; the log ratio of the
//     acceptance rates must equal log π(B)q(A|B) − log π(A)q(B|A) within 4
//     standard errors, with a log proposal ratio of 0 and of 0.7 (a kernel
//     that applies q's ratio with the wrong sign, or not at all, fails).
//     This is the sharpest check: it sees a bias of a few per cent in one
//     second, but only for kernels that take a Proposal.
//   - moments: the chains' means and variances match the closed-form
//     posterior of a Gaussian-mean model within 4 Monte Carlo standard
//     errors (CheckMoments), after running until every coordinate has a bulk
//     ESS of at least 400 (150 with -short): standard errors from too few
//     effective draws would pass anything.
//   - walk: the random walk of the TunaMH paper, App. J.1 (RandomWalk),
//     whose data of two kinds cancel exactly so that the target is uniform:
//     the up and down acceptance rates must agree (Pairwise), and a chain on
//     ten lattice states must have the uniform law's mean and variance.
//     Minibatch kernels that weight data wrongly fail here.
//   - sbc: simulation-based calibration (SBC, Talts et al. 2018): θ is
//     drawn from the prior, data from the model, and the kernel's chain is
//     started at θ — an exact posterior draw — so that for an exact kernel
//     the rank of θ among thinned draws is uniform. The check needs no
//     closed-form posterior and catches errors anywhere in the posterior,
//     including at the boundary of a bounded support.
//   - allocs: AllocsPerStep is 0.
//   - checkpoint: CheckCheckpoint (cancel, checkpoint, load, resume: bit for
//     bit the uninterrupted run).
//   - workers: CheckWorkers (Workers 1, 2 and 4 and a Recorder give the
//     same draws).
//   - info: CheckInfo (every transition's Info says what exactmh.Info
//     promises).
//   - mutant/NAME: each deliberately wrong variant must fail pairwise (|z|
//     at least 6), the walk (|z| at least 6), the moments (a moment outside 4
//     standard errors, not merely too few effective draws: ShowsBias) or SBC.
//     A check that passes every mutant proves nothing, so a mutant that
//     passes everything fails the test.
//
// Inexact kernels (Exact false: a biased comparator such as
// exactmh.AustereMH) run the structural checks only.
//
// # False alarms
//
// The statistical checks are hypothesis tests, so an exact kernel fails them
// with a small probability: a |z| above 4 has probability 6·10⁻⁵ per
// statistic, and SBC rejects at p < 0.001/d. Check uses fixed seeds, so its
// verdict for a given kernel is reproducible; a kernel that fails should be
// looked at, not re-run with other seeds. With -short every check runs
// fewer transitions: its tolerances, computed from Monte Carlo standard
// errors, widen accordingly, and mutants with small biases may need the full
// run to be caught.
//
// # Building blocks
//
// The checks are exported separately for tests of a kernel's own features:
// Pairwise with SwapProposal; RandomWalk, LatticeProposal, StationaryTV and
// HistogramTV for App. J.1; ConjugateGaussian and BoxedGaussian (Gaussian
// targets with closed-form moments) with CheckMoments and ShowsBias; SBC
// with the models GaussianModel, BoxModel and LogisticModel (or a Model of
// your own); AllocsPerStep, CheckCheckpoint, CheckWorkers and CheckInfo.
package mcmctest
