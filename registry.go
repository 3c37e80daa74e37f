// Copyright ©2026 The exactmh Authors. All rights reserved.
// Use of this source code is governed by a BSD-style
// license that can be found in the LICENSE file.

package exactmh

import (
	"context"
	"slices"
	"sync"
)

// KernelFamily says how a kernel reads the data.
type KernelFamily int

const (
	// FullBatchFamily: every datum's energy each step (MH).
	FullBatchFamily KernelFamily = iota
	// GradientFamily: every datum's energy and gradient each step (MALA,
	// HMC, NUTS).
	GradientFamily
	// MinibatchFamily: a random subset of the data each step, exactly
	// (TunaMH, TFMH, FlyMC, the Poisson kernels, TunaMH-SGLD) or not (the
	// inexact comparators of package inexact).
	MinibatchFamily
	// ControlVariateFamily: a minibatch of Taylor remainders about a
	// centre, the MAP by default (SMH).
	ControlVariateFamily
)

// String returns the family's name: "full-batch", "gradient", "minibatch"
// or "control-variate".
func (f KernelFamily) String() string {
	switch f {
	case FullBatchFamily:
		return "full-batch"
	case GradientFamily:
		return "gradient"
	case MinibatchFamily:
		return "minibatch"
	case ControlVariateFamily:
		return "control-variate"
	}
	return "KernelFamily(?)"
}

// KernelInfo describes one registered kernel (the package's own, or one
// another package added with Register): the one list of kernels the
// exactmh command's --kernel names, the automatic default's candidates and
// the golden, fuzz, ErrNoBound and conformance tests range over
// (TestRegistryComplete fails on an exported kernel missing from it).
// Generic kernels (Aux, Exchange) are frameworks whose instances the
// caller builds from a scheme or a model, so they have no default
// configuration and no entry.
type KernelInfo struct {
	// Name is the kernel's name as Kernel.Name returns it for New(nil),
	// which Stan CSV files record: "TunaMH", "SMH-2".
	Name string
	// CLI is its name for the exactmh command's --kernel ("tunamh",
	// "smh2"), or "" for the inexact comparators the command does not
	// offer.
	CLI string
	// Family says how it reads the data, Exact whether it leaves the
	// posterior exactly invariant (Kernel.Exact).
	Family KernelFamily
	Exact  bool
	// What Start needs of the posterior: the energy's and prior's
	// gradients (ErrNoGradient otherwise); a bound (ErrNoBound otherwise),
	// a DiffBound, an EnergyRange (a bounded support: a Box or Ball
	// prior), a FlyBound or Taylor remainder bounds; a centre (New's
	// argument, the MAP), which the command finds with FindLaplace.
	NeedsGradient, NeedsBound, NeedsDiffBound, NeedsRange, NeedsCenter bool
	// NeedsMultilevel says that the kernel samples only a multilevel
	// model's posterior: random-effect terms in the prior (package
	// multilevel's Layout: the MultilevelPrior of model.NewMultilevel) over
	// a multilevel.SparseRowGLM energy with sparse Hessians; any other is refused at
	// Start, saying so. Its centre is the Laplace-EM one, which its
	// Start finds when New's center is nil (there is no joint mode for
	// FindLaplace), so NeedsCenter is false. Every consumer of the
	// registry runs such a kernel on a multilevel target: the conformance
	// rows (mcmctest.Case.NeedsMultilevel), the golden draws, the fuzz
	// targets, the ErrNoBound check (a Poisson multilevel model) and the
	// exactmh command (a model with (1|group) terms).
	NeedsMultilevel bool
	// New returns the kernel's default configuration, built around center
	// where NeedsCenter (SMH's Center, FlyMC's TightAt; nil elsewhere) or,
	// if not nil, NeedsMultilevel.
	New func(center []float64) Kernel
	// Choose, if not nil, is the automatic default's own path for the
	// posteriors the kernel is made for (package multilevel's GroupGibbs:
	// a multilevel model, with its Laplace-EM centre), which Choose tries
	// before its own: it returns false, having done nothing, for another
	// posterior; else it fills c (Name, Kernel, Posterior, Reason,
	// Candidates, and Center where the chains are to start about a centre)
	// or returns an error. Below AutoSmallN data Choose takes a full-batch
	// sampler without pilots. c's Pilot and PilotFullBatch run pilots that
	// share the choice's run caches and price them by counted costs, as
	// Choose's own (Choice.Pricing): nothing in a choice reads a clock.
	Choose func(ctx context.Context, p *Posterior, c *Choice, seed uint64) (bool, error)
	// FromLaplace, if not nil, offers the kernel to the automatic default
	// as a candidate built on a dense Laplace approximation la of a
	// posterior that is not a GLM (package localgibbs's kernel, where the
	// data's dependence pattern lets coordinates move over their own data
	// alone). It returns the kernel and why it applies, or a nil kernel and
	// why not, and the passes over the data it read to decide (counted
	// into the choice's phases). Its pilot then races the others', priced
	// by counted costs, and the chains of a run it wins start from draws
	// of la (LaplaceInits).
	FromLaplace func(ctx context.Context, p *Posterior, la *LaplaceApprox) (k Kernel, why string, passes float64, err error)

	// auto is the kernel's role among the automatic default's candidates
	// (auto.go); passes, for a full-batch kernel, the passes over the
	// data a transition takes at least (autoCand.passes).
	auto   autoRole
	passes float64
}

// TakesProposal reports whether the kernel moves by a Proposal, and so
// has a Crank–Nicolson form (WithLaplace's -CN): the exact kernels that
// declare WithProposal (capabilities.go), but not the multilevel ones
// (NeedsMultilevel), whose posterior has no joint mode for the dense
// Laplace approximation.
func (ki KernelInfo) TakesProposal() bool {
	return ki.Exact && !ki.NeedsMultilevel && takesProposal(ki.New(nil))
}

// autoRole is a set of the ways the automatic default (Choose) pilots a
// kernel.
type autoRole uint8

const (
	// autoCVCN: on the control-variate rewrite with the Crank–Nicolson
	// proposal ("TunaMH-CV-CN").
	autoCVCN autoRole = 1 << iota
	// autoCN: on the posterior with the Crank–Nicolson proposal ("MH-CN").
	autoCN
	// autoPoissonCN, autoPoisson: the Poisson candidate (poissonCand) with
	// the Crank–Nicolson proposal, and without one.
	autoPoissonCN
	autoPoisson
	// autoBounded: as it is, where the energy has a DiffBound.
	autoBounded
	// autoFull: as it is, the full-batch candidates every choice pilots.
	autoFull
	// autoMultimodal: as it is, on a posterior with two modes, where no
	// Laplace approximation serves (multimodalChoice).
	autoMultimodal
)

// registry is the built-in kernels, in the order the command's help and
// the automatic default list them.
var registry = []KernelInfo{
	{Name: "MH", CLI: "mh", Family: FullBatchFamily, Exact: true,
		New: func([]float64) Kernel { return MH{} }, auto: autoCN | autoMultimodal, passes: 1},
	{Name: "MALA", CLI: "mala", Family: GradientFamily, Exact: true, NeedsGradient: true,
		New: func([]float64) Kernel { return MALA{} }},
	{Name: "HMC", CLI: "hmc", Family: GradientFamily, Exact: true, NeedsGradient: true,
		New: func([]float64) Kernel { return HMC{} }},
	{Name: "NUTS", CLI: "nuts", Family: GradientFamily, Exact: true, NeedsGradient: true,
		New: func([]float64) Kernel { return NUTS{} }, auto: autoFull | autoMultimodal, passes: autoNUTSPasses},
	{Name: "TunaMH", CLI: "tunamh", Family: MinibatchFamily, Exact: true, NeedsBound: true, NeedsDiffBound: true,
		New: func([]float64) Kernel { return TunaMH{} }, auto: autoCVCN | autoBounded | autoMultimodal},
	{Name: "TFMH", CLI: "tfmh", Family: MinibatchFamily, Exact: true, NeedsBound: true, NeedsDiffBound: true,
		New: func([]float64) Kernel { return TFMH{} }, auto: autoCVCN},
	{Name: "SMH-1", CLI: "smh1", Family: ControlVariateFamily, Exact: true, NeedsBound: true, NeedsCenter: true,
		New: func(c []float64) Kernel { return SMH{Order: 1, Center: c} }},
	{Name: "SMH-2", CLI: "smh2", Family: ControlVariateFamily, Exact: true, NeedsBound: true, NeedsCenter: true,
		New: func(c []float64) Kernel { return SMH{Order: 2, Center: c} }},
	{Name: "FlyMC", CLI: "flymc", Family: MinibatchFamily, Exact: true, NeedsBound: true, NeedsCenter: true,
		New: func(c []float64) Kernel { return FlyMC{TightAt: c} }},
	{Name: "PoissonMH", CLI: "poissonmh", Family: MinibatchFamily, Exact: true, NeedsBound: true, NeedsRange: true,
		New: func([]float64) Kernel { return PoissonMH{} }, auto: autoPoissonCN},
	{Name: "Poisson-Barker", CLI: "poisson-barker", Family: MinibatchFamily, Exact: true, NeedsGradient: true, NeedsBound: true, NeedsRange: true,
		New: func([]float64) Kernel { return PoissonBarker{} }},
	{Name: "Poisson-MALA", CLI: "poisson-mala", Family: MinibatchFamily, Exact: true, NeedsGradient: true, NeedsBound: true, NeedsRange: true,
		New: func([]float64) Kernel { return PoissonMALA{} }, auto: autoPoisson},
	{Name: "TunaMH-SGLD", CLI: "tunamh-sgld", Family: MinibatchFamily, Exact: true, NeedsGradient: true, NeedsBound: true, NeedsDiffBound: true,
		New: func([]float64) Kernel { return TunaMHSGLD{} }},
}

// Kernels returns the registered kernels (a copy of the registry): the
// package's own and those other packages registered (multilevel's
// GroupSMH and GroupGibbs, inexact's AustereMH, MHBT, MHminibatch and
// SGLD, once they are imported), exact full-batch ones
// first, then the exact minibatch ones, then the inexact comparators.
func Kernels() []KernelInfo {
	regMu.RLock()
	defer regMu.RUnlock()
	return slices.Clone(registry)
}

// regMu guards registry against Register.
var regMu sync.RWMutex

// Register adds a kernel to the registry, as image.RegisterFormat adds a
// format: a package of kernels calls it from its init (package multilevel
// registers GroupSMH and GroupGibbs), and everything that ranges over
// Kernels — the exactmh command's --kernel, the automatic default (through
// ki.Choose), the conformance, golden and fuzz tests — then sees it. An
// exact kernel goes after the exact ones already registered, before the
// inexact comparators. It panics, as sql.Register does, on an empty Name
// or New, or a Name or CLI name already registered.
func Register(ki KernelInfo) {
	regMu.Lock()
	defer regMu.Unlock()
	if ki.Name == "" || ki.New == nil {
		panic("exactmh: Register: a kernel needs a Name and a New")
	}
	for _, r := range registry {
		if r.Name == ki.Name || ki.CLI != "" && r.CLI == ki.CLI {
			panic("exactmh: Register: kernel " + ki.Name + " (--kernel " + ki.CLI + ") registered twice")
		}
	}
	at := len(registry)
	if ki.Exact {
		at = slices.IndexFunc(registry, func(r KernelInfo) bool { return !r.Exact })
		if at < 0 {
			at = len(registry)
		}
	}
	registry = slices.Insert(registry, at, ki)
}

// withRole returns the registered kernels that play role in the automatic
// default, in the registry's order.
func withRole(role autoRole) []KernelInfo {
	var ks []KernelInfo
	for _, ki := range registry {
		if ki.auto&role != 0 {
			ks = append(ks, ki)
		}
	}
	return ks
}
