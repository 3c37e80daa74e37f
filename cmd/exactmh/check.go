// Copyright ©2026 The exactmh Authors. All rights reserved.
// Use of this source code is governed by a BSD-style
// license that can be found in the LICENSE file.

package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"os/signal"
	"slices"
	"syscall"

	"github.com/exactmh/exactmh"
)

const checkUsage = `Usage: exactmh check --data FILE (--response SPEC [--terms LIST] | --formula F) [flags]

Checks, before a long run, the bounds the exact minibatch kernels rely on,
for the model (the same model flags as exactmh sample) on all the data:

  difference bound   TunaMH, TFMH, TunaMH-SGLD: |U_i(θ) − U_i(θ')| ≤ c_i·M(θ, θ')
  remainder bound    the -cv kernels: the same bound on the control-variate
                     remainders around the MAP
  energy range       PoissonMH, Poisson-Barker, Poisson-MALA (bounded priors)

Each is checked at --points sampled pairs (or points) around the MAP
(exactmh.CheckBound, CheckRange: every datum at every pair), and the
expected batch per step is predicted where it can be: C·M̄ (+1 for TunaMH's
χ heuristic) with C = Σc_i and M̄ the median distance of a typical move
under the Laplace approximation (a random-walk step of optimal size
2.38/√d; for -cv, a Crank–Nicolson move of scale 1), and λ + L for the
Poisson kernels (λ = 0.01·L², the default). These predictions are
approximate: warmup adapts the step and so the batch.

Exit codes: 0 every available bound held; 2 bad input; 3 a bound was
violated (the datum, θ and θ' are printed).

Flags:
`

func cmdCheck(args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("check", flag.ContinueOnError)
	var mf modelFlags
	mf.register(fs)
	points := fs.Int("points", 100, "pairs (points) sampled per bound; each costs a pass over the data")
	seed := fs.Uint64("seed", 1, "seed of the sampled points")
	if _, err := parseFlags(fs, args, checkUsage, stdout); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return usageErr("check: unexpected argument %q (flags only; see exactmh check -h)", fs.Arg(0))
	}
	if *points < 1 {
		return usageErr("--points %d: want ≥ 1", *points)
	}
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGINT, syscall.SIGTERM)
	defer stop()
	m, err := mf.buildContext(ctx)
	if err != nil {
		if ctx.Err() != nil {
			return failure(fmt.Errorf("interrupted while reading the data: %v", err))
		}
		return err
	}
	warnIdentifiability(stderr, m, &mf)
	p := m.post
	n, d := p.Len(), p.Dim()
	fmt.Fprintf(stdout, "model: %s, N = %d, d = %d, prior %s, β = %g\n", mf.family, n, d, mf.prior, mf.beta)
	la, laErr := exactmh.FindLaplace(ctx, p, make([]float64, d), &exactmh.MAPSettings{Tol: exactmh.AutoMAPTol})
	opt := &exactmh.CheckOptions{Points: *points, Seed: *seed, Spread: 1}
	if laErr == nil {
		sd := slices.Max(la.SD())
		opt.Center, opt.Spread = la.Mean, 3*sd
		fmt.Fprintf(stdout, "MAP found after %d passes; points around it with spread %.3g (3 × the largest Laplace sd)\n", la.Passes, opt.Spread)
	} else {
		fmt.Fprintf(stdout, "no Laplace approximation (%s); points around the origin with spread 1\n", oneLine(laErr.Error()))
	}
	rng := rand.New(rand.NewPCG(*seed, 7))
	var violated error
	report := func(what string, worst *exactmh.BoundViolation, err error) bool {
		if err != nil && isBoundViolation(err) {
			fmt.Fprintf(stdout, "%-18s VIOLATED: %s\n", what, oneLine(err.Error()))
			if violated == nil {
				violated = fmt.Errorf("%s: %w", what, err)
			}
			return false
		}
		if err != nil {
			fmt.Fprintf(stdout, "%-18s not checked: %s\n", what, oneLine(err.Error()))
			return false
		}
		fmt.Fprintf(stdout, "%-18s holds at %d samples: worst ratio %.4g (datum %d)\n", what, *points, worst.Ratio, worst.Datum)
		return true
	}

	// The difference bound on the posterior itself.
	if b, err := p.DiffBound(); err != nil {
		fmt.Fprintf(stdout, "%-18s not available: %s\n", "difference bound", oneLine(err.Error()))
	} else {
		worst, err := exactmh.CheckBound(p, b, opt)
		if report("difference bound", worst, err) && la != nil && la.CovChol != nil {
			mbar := medianMove(rng, la, b, 2.38/math.Sqrt(float64(d)))
			c := b.Sum()
			fmt.Fprintf(stdout, "%-18s C = %.4g; at M̄ = %.3g: TunaMH ≈ %s, TFMH ≈ %s data per step (N = %d)\n", "",
				c, mbar, batch(p.Beta*c*mbar+1, n), batch(p.Beta*c*mbar, n), n)
		}
	}
	if ctx.Err() != nil {
		return failure(ctx.Err())
	}

	// The control-variate remainders.
	if la == nil {
		fmt.Fprintf(stdout, "%-18s not available: no Laplace approximation\n", "remainder bound")
	} else if cv, err := exactmh.ControlVariates(p, la); err != nil {
		fmt.Fprintf(stdout, "%-18s not available: %s\n", "remainder bound", oneLine(err.Error()))
	} else if b, err := cv.DiffBound(); err != nil {
		fmt.Fprintf(stdout, "%-18s not available: %s\n", "remainder bound", oneLine(err.Error()))
	} else {
		worst, err := exactmh.CheckBound(cv, b, opt)
		if report("remainder bound", worst, err) {
			mbar := medianMove(rng, la, b, math.Inf(1))
			c := b.Sum()
			fmt.Fprintf(stdout, "%-18s C = %.4g; at M̄ = %.3g: TunaMH-CV-CN ≈ %s, TFMH-CV-CN ≈ %s data per step\n", "",
				c, mbar, batch(p.Beta*c*mbar+1, n), batch(p.Beta*c*mbar, n))
		}
	}
	if ctx.Err() != nil {
		return failure(ctx.Err())
	}

	// The energy range.
	if r, err := p.EnergyRange(); err != nil {
		fmt.Fprintf(stdout, "%-18s not available: %s\n", "energy range", oneLine(err.Error()))
	} else {
		worst, err := exactmh.CheckRange(p, r, opt)
		if report("energy range", worst, err) {
			var l float64
			for _, w := range r.Width {
				l += p.Beta * w
			}
			lambda := 0.01 * l * l
			fmt.Fprintf(stdout, "%-18s L = %.4g, λ = 0.01·L² = %.4g: PoissonMH ≈ %s data per step\n", "", l, lambda, batch(lambda+l, n))
		}
	}
	if violated != nil {
		return violated
	}
	return nil
}

// batch formats a predicted batch, saying when it exceeds N (the kernel
// then runs full-batch MH steps).
func batch(b float64, n int) string {
	if b > float64(n) {
		return fmt.Sprintf("%.4g (> N: full-batch MH instead)", b)
	}
	return fmt.Sprintf("%.4g", b)
}

// medianMove returns the median of M(θ, θ') over 200 typical moves under
// the Laplace approximation: θ ~ N(θ̂, H⁻¹) and θ' = θ + step·L·z, or, for
// step = +Inf, θ' an independent draw (a Crank–Nicolson move of scale 1).
func medianMove(rng *rand.Rand, la *exactmh.LaplaceApprox, b *exactmh.DiffBound, step float64) float64 {
	d := len(la.Mean)
	ms := make([]float64, 200)
	z := make([]float64, d)
	for k := range ms {
		theta := la.Rand(rng, nil)
		var next []float64
		if math.IsInf(step, 1) {
			next = la.Rand(rng, nil)
		} else {
			next = make([]float64, d)
			for j := range z {
				z[j] = rng.NormFloat64()
			}
			for j := range next {
				next[j] = theta[j]
				for l := 0; l <= j; l++ {
					next[j] += step * la.CovChol.At(j, l) * z[l]
				}
			}
		}
		ms[k] = b.M(theta, next)
	}
	slices.Sort(ms)
	return ms[len(ms)/2]
}
