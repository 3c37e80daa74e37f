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
}

func (k *kernelFlags) register(fs *flag.FlagSet) {
	fs.StringVar(&k.kernel, "kernel", "auto", "the kernel (see KERNELS)")
	fs.Float64Var(&k.scale, "scale", 0, "initial step scale (warmup adapts it; 0: the kernel's default)")
	fs.Float64Var(&k.chi, "chi", 0, "TunaMH's χ > 0 (0: the heuristic)")
	fs.IntVar(&k.steps, "steps", 0, "HMC's leapfrog steps per transition (0: 10)")
	fs.Float64Var(&k.q, "q", 0, "FlyMC's q, the probability of proposing to brighten a dark datum (0: 0.01)")
	fs.Float64Var(&k.lambda, "lambda", 0, "λ of PoissonMH, Poisson-Barker, Poisson-MALA (0: LambdaScale·L²)")
}

// baseKernels lists the kernel names --kernel takes, without -cv/-cn.
var baseKernels = []string{"mh", "mala", "hmc", "nuts", "tunamh", "tfmh", "smh1", "smh2", "flymc",
	"poissonmh", "poisson-barker", "poisson-mala", "tunamh-sgld"}

// aliases maps other spellings (the library's names, lower-cased) onto
// baseKernels.
var aliases = map[string]string{"smh-1": "smh1", "smh-2": "smh2", "poissonbarker": "poisson-barker",
	"poissonmala": "poisson-mala", "tunamhsgld": "tunamh-sgld"}

// kernelSpec is a parsed --kernel.
type kernelSpec struct {
	base    string
	cv, cn  bool
	canon   string // base[-cv][-cn]
	applies map[string]bool
}

// parseKernel parses a kernel name with optional -cv and -cn suffixes (in
// that order, as the automatic default names them: TunaMH-CV-CN).
func parseKernel(name string) (*kernelSpec, error) {
	s := strings.ToLower(strings.TrimSpace(name))
	ks := &kernelSpec{}
	if b, ok := strings.CutSuffix(s, "-cn"); ok {
		s, ks.cn = b, true
	}
	if b, ok := strings.CutSuffix(s, "-cv"); ok {
		s, ks.cv = b, true
	}
	if a, ok := aliases[s]; ok {
		s = a
	}
	if !slices.Contains(baseKernels, s) {
		return nil, usageErr("--kernel %s: unknown kernel (want auto or one of %s, optionally with -cv and/or -cn: e.g. tunamh-cv-cn)", name, strings.Join(baseKernels, ", "))
	}
	ks.base = s
	ks.canon = s
	if ks.cv {
		ks.canon += "-cv"
	}
	if ks.cn {
		ks.canon += "-cn"
	}
	return ks, nil
}

// hyperOwners says which kernels each hyperparameter flag applies to.
var hyperOwners = map[string][]string{
	"chi":    {"tunamh", "tunamh-sgld"},
	"steps":  {"hmc"},
	"q":      {"flymc"},
	"lambda": {"poissonmh", "poisson-barker", "poisson-mala"},
}

// check refuses hyperparameters the kernel does not take.
func (k *kernelFlags) check(ks *kernelSpec) error {
	for flagName, owners := range hyperOwners {
		if k.set[flagName] && !slices.Contains(owners, ks.base) {
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
	return ks.cv || ks.cn || ks.base == "smh1" || ks.base == "smh2" || ks.base == "flymc"
}

// build returns the kernel, the posterior it samples (p, or its
// control-variate rewrite) and the Laplace approximation it was built
// around (nil if none), as the automatic default builds its candidates
// (exactmh.WithLaplace); la is found from the origin, as Choose finds it.
func (k *kernelFlags) build(ctx context.Context, ks *kernelSpec, p *exactmh.Posterior) (exactmh.Kernel, *exactmh.Posterior, *exactmh.LaplaceApprox, error) {
	if err := k.check(ks); err != nil {
		return nil, nil, nil, err
	}
	if ks.cn && !slices.Contains([]string{"mh", "tunamh", "tfmh", "smh1", "smh2", "flymc", "poissonmh"}, ks.base) {
		return nil, nil, nil, usageErr("--kernel %s: %s takes no proposal, so it has no -cn form (only mh, tunamh, tfmh, smh1, smh2, flymc and poissonmh do)", ks.canon, ks.base)
	}
	var la *exactmh.LaplaceApprox
	if ks.needsLaplace() {
		var err error
		la, err = exactmh.FindLaplace(ctx, p, make([]float64, p.Dim()), &exactmh.MAPSettings{Tol: exactmh.AutoMAPTol})
		if err != nil {
			return nil, nil, nil, inputErr(fmt.Errorf("--kernel %s needs the MAP and Laplace approximation: %w", ks.canon, err))
		}
	}
	var kern exactmh.Kernel
	switch ks.base {
	case "mh":
		kern = exactmh.MH{Scale: k.scale}
	case "mala":
		kern = exactmh.MALA{Scale: k.scale}
	case "hmc":
		kern = exactmh.HMC{Scale: k.scale, Steps: k.steps}
	case "nuts":
		kern = exactmh.NUTS{Scale: k.scale}
	case "tunamh":
		kern = exactmh.TunaMH{Scale: k.scale, Chi: k.chi}
	case "tfmh":
		kern = exactmh.TFMH{Scale: k.scale}
	case "smh1", "smh2":
		order := 1
		if ks.base == "smh2" {
			order = 2
		}
		kern = exactmh.SMH{Order: order, Center: la.Mean, Scale: k.scale}
	case "flymc":
		kern = exactmh.FlyMC{Scale: k.scale, Q: k.q, TightAt: la.Mean}
	case "poissonmh":
		kern = exactmh.PoissonMH{Scale: k.scale, Lambda: k.lambda}
	case "poisson-barker":
		kern = exactmh.PoissonBarker{Scale: k.scale, Lambda: k.lambda}
	case "poisson-mala":
		kern = exactmh.PoissonMALA{Scale: k.scale, Lambda: k.lambda}
	case "tunamh-sgld":
		kern = exactmh.TunaMHSGLD{Scale: k.scale, Chi: k.chi}
	}
	kern, post, _, err := exactmh.WithLaplace(p, la, kern, ks.cv, ks.cn)
	if err != nil {
		return nil, nil, nil, inputErr(fmt.Errorf("--kernel %s: %w", ks.canon, err))
	}
	// The bounds the exact minibatch kernels need, asked for before any
	// chain starts, so that a missing one is said in the user's terms.
	switch ks.base {
	case "poissonmh", "poisson-barker", "poisson-mala":
		if _, err := post.EnergyRange(); err != nil {
			return nil, nil, nil, usageErr("--kernel %s needs a bounded energy range, which needs a bounded prior (--prior box:R or ball:R): %v", ks.canon, err)
		}
	case "tunamh", "tfmh", "tunamh-sgld":
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
