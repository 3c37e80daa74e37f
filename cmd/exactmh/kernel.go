// Copyright ©2026 The exactmh Authors. All rights reserved.
// Use of this source code is governed by a BSD-style
// license that can be found in the LICENSE file.

package main

import (
	"context"
	"flag"
	"fmt"
	"math"
	"slices"
	"strings"

	"github.com/exactmh/exactmh"
	mlpkg "github.com/exactmh/exactmh/multilevel"
)

// kernelFlags are the kernel and its hyperparameters.
type kernelFlags struct {
	kernel string
	scale  float64
	chi    float64
	steps  int
	q      float64
	lambda float64
	set    map[string]bool // hyperparameter flags given
	// maxScale, from a choice file, caps the Crank–Nicolson proposal's
	// step scale of a -cn kernel (exactmh.CrankNicolson.MaxScale; 0: none).
	maxScale float64
}

func (k *kernelFlags) register(fs *flag.FlagSet) {
	fs.StringVar(&k.kernel, "kernel", "auto", "the kernel (see KERNELS)")
	fs.Float64Var(&k.scale, "scale", 0, "initial step scale (warmup adapts it; 0: the kernel's default)")
	fs.Float64Var(&k.chi, "chi", 0, "TunaMH's χ > 0 (0: the heuristic)")
	fs.IntVar(&k.steps, "steps", 0, "HMC's leapfrog steps per transition (0: 10)")
	fs.Float64Var(&k.q, "q", 0, "FlyMC's q, the probability of proposing to brighten a dark datum (0: 0.01)")
	fs.Float64Var(&k.lambda, "lambda", 0, "λ of PoissonMH, Poisson-Barker, Poisson-MALA (0: LambdaScale·L²)")
}

// cliKernels are the registered kernels --kernel takes (exactmh.Kernels
// with a CLI name), by that name.
var cliKernels = func() map[string]exactmh.KernelInfo {
	m := map[string]exactmh.KernelInfo{}
	for _, ki := range exactmh.Kernels() {
		if ki.CLI != "" {
			m[ki.CLI] = ki
		}
	}
	return m
}()

// baseKernels lists the kernel names --kernel takes, without -cv/-cn, in
// the registry's order.
func baseKernels() []string {
	var names []string
	for _, ki := range exactmh.Kernels() {
		if ki.CLI != "" {
			names = append(names, ki.CLI)
		}
	}
	return names
}

// proposalKernels lists the kernels with a -cn form (KernelInfo.TakesProposal).
func proposalKernels() []string {
	var names []string
	for _, name := range baseKernels() {
		if cliKernels[name].TakesProposal() {
			names = append(names, name)
		}
	}
	return names
}

// alias returns the --kernel name for another spelling of it: the
// library's name lower-cased ("smh-1", "poisson-barker") or without its
// hyphens ("poissonbarker", "tunamhsgld"); s itself if none.
func alias(s string) string {
	for _, ki := range exactmh.Kernels() {
		lower := strings.ToLower(ki.Name)
		if ki.CLI != "" && (s == lower || s == strings.ReplaceAll(lower, "-", "")) {
			return ki.CLI
		}
	}
	return s
}

// ncKernels lists the kernels with a non-centred form (-nc: they declare
// WithNonCentred), in the registry's order.
func ncKernels() []string {
	var names []string
	for _, name := range baseKernels() {
		if _, ok := cliKernels[name].New(nil).(ncTaker); ok {
			names = append(names, name)
		}
	}
	return names
}

// kernelSpec is a parsed --kernel.
type kernelSpec struct {
	base       string
	cv, cn, nc bool
	canon      string // base[-cv][-cn][-nc]
	applies    map[string]bool
}

// parseKernel parses a kernel name with optional -cv, -cn and -nc
// suffixes (in that order, as the automatic default names them:
// TunaMH-CV-CN, NUTS-NC).
func parseKernel(name string) (*kernelSpec, error) {
	s := strings.ToLower(strings.TrimSpace(name))
	ks := &kernelSpec{}
	if b, ok := strings.CutSuffix(s, "-nc"); ok {
		s, ks.nc = b, true
	}
	if b, ok := strings.CutSuffix(s, "-cn"); ok {
		s, ks.cn = b, true
	}
	if b, ok := strings.CutSuffix(s, "-cv"); ok {
		s, ks.cv = b, true
	}
	s = alias(s)
	if _, ok := cliKernels[s]; !ok {
		return nil, usageErr("--kernel %s: unknown kernel (want auto or one of %s, optionally with -cv and/or -cn: e.g. tunamh-cv-cn; or -nc: nuts-nc)", name, strings.Join(baseKernels(), ", "))
	}
	ks.base = s
	ks.canon = s
	if ks.cv {
		ks.canon += "-cv"
	}
	if ks.cn {
		ks.canon += "-cn"
	}
	if ks.nc {
		ks.canon += "-nc"
	}
	return ks, nil
}

// multilevel reports whether p is a multilevel model's posterior: a prior
// with random-effect terms (model.NewMultilevel's, from --terms with
// (1|g) terms).
func multilevel(p *exactmh.Posterior) bool {
	lay, ok := p.Prior.(interface{ NumTerms() int })
	return ok && lay.NumTerms() > 0
}

// The capabilities (typed setters, exactmh's capabilities.go) a kernel
// declares for the command's kernel flags.
type (
	scaleTaker  interface{ WithScale(float64) exactmh.Kernel }
	chiTaker    interface{ WithChi(float64) exactmh.Kernel }
	stepsTaker  interface{ WithSteps(int) exactmh.Kernel }
	qTaker      interface{ WithQ(float64) exactmh.Kernel }
	lambdaTaker interface{ WithLambda(float64) exactmh.Kernel }
	ncTaker     interface{ WithNonCentred(bool) exactmh.Kernel }
)

// flagSetter is a kernel flag: which kernels take it (those that declare
// its setter) and how it sets one.
type flagSetter struct {
	takes func(exactmh.Kernel) bool
	// set returns k with the flag's value set, or k as it is if k does
	// not take the flag.
	set func(k exactmh.Kernel, f *kernelFlags) exactmh.Kernel
}

// setterOf is the flagSetter of the kernels that implement I, set by set.
func setterOf[I any](set func(I, *kernelFlags) exactmh.Kernel) flagSetter {
	return flagSetter{
		takes: func(k exactmh.Kernel) bool { _, ok := k.(I); return ok },
		set: func(k exactmh.Kernel, f *kernelFlags) exactmh.Kernel {
			if i, ok := k.(I); ok {
				return set(i, f)
			}
			return k
		},
	}
}

// scaleFlag sets --scale on the kernels with an initial step scale.
var scaleFlag = setterOf(func(k scaleTaker, f *kernelFlags) exactmh.Kernel { return k.WithScale(f.scale) })

// hyperFlags are the hyperparameter flags, each applying to the kernels
// that declare its setter.
var hyperFlags = map[string]flagSetter{
	"chi":    setterOf(func(k chiTaker, f *kernelFlags) exactmh.Kernel { return k.WithChi(f.chi) }),
	"steps":  setterOf(func(k stepsTaker, f *kernelFlags) exactmh.Kernel { return k.WithSteps(f.steps) }),
	"q":      setterOf(func(k qTaker, f *kernelFlags) exactmh.Kernel { return k.WithQ(f.q) }),
	"lambda": setterOf(func(k lambdaTaker, f *kernelFlags) exactmh.Kernel { return k.WithLambda(f.lambda) }),
}

// hyperOwners returns the --kernel names a hyperparameter flag applies to.
func hyperOwners(flagName string) []string {
	var owners []string
	for _, name := range baseKernels() {
		if hyperFlags[flagName].takes(cliKernels[name].New(nil)) {
			owners = append(owners, name)
		}
	}
	return owners
}

// check refuses hyperparameters the kernel does not take.
func (k *kernelFlags) check(ks *kernelSpec) error {
	for flagName := range hyperFlags {
		if owners := hyperOwners(flagName); k.set[flagName] && !slices.Contains(owners, ks.base) {
			return usageErr("--%s applies to %s, not to --kernel %s", flagName, strings.Join(owners, ", "), ks.canon)
		}
	}
	switch {
	case k.set["scale"] && !(k.scale > 0 && !math.IsInf(k.scale, 0)):
		return usageErr("--scale %v: want a finite number > 0", k.scale)
	case k.set["chi"] && !(k.chi > 0 && !math.IsInf(k.chi, 0)):
		return usageErr("--chi %v: want a finite number > 0", k.chi)
	case k.set["steps"] && k.steps < 1:
		return usageErr("--steps %d: want ≥ 1", k.steps)
	case k.set["q"] && !(k.q > 0 && k.q <= 1):
		return usageErr("--q %v: want in (0, 1]", k.q)
	case k.set["lambda"] && !(k.lambda > 0 && !math.IsInf(k.lambda, 0)):
		return usageErr("--lambda %v: want a finite number > 0", k.lambda)
	}
	return nil
}

// needsLaplace reports whether building the kernel needs the Laplace
// approximation (the MAP and H⁻¹).
func (ks *kernelSpec) needsLaplace() bool {
	return ks.cv || ks.cn || cliKernels[ks.base].NeedsCenter
}

// build returns the kernel, the posterior it samples (p, or its
// control-variate rewrite) and the Laplace approximation it was built
// around (nil if none), as the automatic default builds its candidates
// (exactmh.WithLaplace); la is found from the origin, as Choose finds it.
func (k *kernelFlags) build(ctx context.Context, ks *kernelSpec, p *exactmh.Posterior) (exactmh.Kernel, *exactmh.Posterior, *exactmh.LaplaceApprox, error) {
	if err := k.check(ks); err != nil {
		return nil, nil, nil, err
	}
	ki := cliKernels[ks.base]
	switch {
	case ks.nc && !slices.Contains(ncKernels(), ks.base):
		return nil, nil, nil, usageErr("--kernel %s: %s has no non-centred form (-nc; only %s do)", ks.canon, ks.base, strings.Join(ncKernels(), ", "))
	case (ks.nc || ki.NeedsMultilevel) && isOrdinal(p):
		return nil, nil, nil, usageErr("--kernel %s: --family ordinal is sampled by the full-batch kernels (nuts, mh-cn, …), with random effects too: %s has no ordinal form (its cutpoints enter every datum)", ks.canon, ks.base)
	case ks.nc && !multilevel(p), ki.NeedsMultilevel && !multilevel(p) && !mlpkg.IsGaussian(p) && !mlpkg.IsNegBinomial(p):
		what := ks.base + " samples only multilevel models"
		if ks.nc {
			what = "-nc non-centres the random effects (u = τ·z)"
		}
		return nil, nil, nil, usageErr("--kernel %s needs a model with random-effect terms, e.g. --terms 'x,(1|group)': %s, and this model has none", ks.canon, what)
	case ki.NeedsMultilevel && (ks.cv || ks.cn):
		return nil, nil, nil, usageErr("--kernel %s: %s takes no -cv or -cn form: it builds its own control variates around the Laplace-EM centre (a multilevel posterior has no joint mode)", ks.canon, ks.base)
	}
	if ks.cn && !ki.TakesProposal() {
		return nil, nil, nil, usageErr("--kernel %s: %s takes no proposal, so it has no -cn form (only %s do)", ks.canon, ks.base, strings.Join(proposalKernels(), ", "))
	}
	var la *exactmh.LaplaceApprox
	if ks.needsLaplace() {
		var err error
		la, err = exactmh.FindLaplace(ctx, p, make([]float64, p.Dim()), &exactmh.MAPSettings{Tol: exactmh.AutoMAPTol})
		if err != nil {
			return nil, nil, nil, inputErr(fmt.Errorf("--kernel %s needs the MAP and Laplace approximation: %w", ks.canon, err))
		}
	}
	var center []float64
	if ki.NeedsCenter {
		center = la.Mean
	}
	kern := scaleFlag.set(ki.New(center), k)
	for _, name := range []string{"chi", "steps", "q", "lambda"} {
		kern = hyperFlags[name].set(kern, k)
	}
	if nc, ok := kern.(ncTaker); ok && ks.nc {
		kern = nc.WithNonCentred(true)
	}
	kern, post, _, err := exactmh.WithLaplace(p, la, kern, ks.cv, ks.cn)
	if err != nil {
		return nil, nil, nil, inputErr(fmt.Errorf("--kernel %s: %w", ks.canon, err))
	}
	if cn := cnProposal(kern); cn != nil && k.maxScale > 0 {
		cn.MaxScale = k.maxScale // WithLaplace made cn for this kernel alone
	}
	// The bounds the exact minibatch kernels need, asked for before any
	// chain starts, so that a missing one is said in the user's terms.
	switch {
	case ki.NeedsRange:
		if _, err := post.EnergyRange(); err != nil {
			return nil, nil, nil, usageErr("--kernel %s needs a bounded energy range, which needs a bounded prior (--prior box:R or ball:R): %v", ks.canon, err)
		}
	case ki.NeedsDiffBound:
		if _, err := post.DiffBound(); err != nil {
			return nil, nil, nil, usageErr("--kernel %s needs a difference bound on the prior's support (try --prior box:R or ball:R, or the -cv form): %v", ks.canon, err)
		}
	}
	return kern, post, la, nil
}

// describe returns the kernel flags as they identify a run, for checkpoint
// metadata.
func (k *kernelFlags) describe(ks *kernelSpec) string {
	s := ks.canon
	for _, f := range []struct {
		name string
		v    float64
	}{{"scale", k.scale}, {"chi", k.chi}, {"steps", float64(k.steps)}, {"q", k.q}, {"lambda", k.lambda}} {
		if f.v != 0 {
			s += fmt.Sprintf(" --%s %v", f.name, f.v)
		}
	}
	return s
}

// wrapList joins names with ", " for the help text, which starts the list
// at column 2, breaking lines before column 72 and indenting continuation
// lines by two spaces.
func wrapList(names []string) string {
	var b strings.Builder
	col := 2
	for i, name := range names {
		if i > 0 {
			b.WriteString(",")
			col++
			if col+1+len(name) > 72 {
				b.WriteString("\n  ")
				col = 2
			} else {
				b.WriteString(" ")
				col++
			}
		}
		b.WriteString(name)
		col += len(name)
	}
	return b.String()
}

// cnProposal returns kernel k's proposal (the Proposer it declares) if it
// is a Crank–Nicolson proposal, else nil.
func cnProposal(k exactmh.Kernel) *exactmh.CrankNicolson {
	p, ok := k.(interface{ Proposer() exactmh.Proposal })
	if !ok {
		return nil
	}
	cn, _ := p.Proposer().(*exactmh.CrankNicolson)
	return cn
}
