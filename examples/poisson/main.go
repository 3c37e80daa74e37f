// Copyright ©2026 The exactmh Authors. All rights reserved.
// Use of this source code is governed by a BSD-style
// license that can be found in the LICENSE file.

// Command poisson measures the automatic default on a Poisson regression
// with an offset (log exposure) under a Gaussian prior: f‴ = e^z has no
// bound on ℝ, so the control variates bound their remainders pair by pair
// (the GLM's optional LossGrowth method, see exactmh.GLM), and the default runs a minibatch kernel.
//
// The data (simulated from -seed): N rows (-n, 10⁶), an intercept and
// d − 1 features x ~ N(0, 0.5²) (-d, 10), exposures t_i ~ U(0.5, 2),
// counts y_i ~ Poisson(t_i·e^{x_iᵀθ*}), θ* = (0.5, 0.3, −0.3, …); prior
// N(0, 2.5²) on each coefficient. The energy is
// U_i(θ) = e^{x_iᵀθ + o_i} − y_i(x_iᵀθ + o_i), o_i = log t_i.
//
// It prints the choice, data read per transition (and as a share of N),
// min bulk and tail ESS, R-hat, and min bulk ESS per second of wall time
// including the choice (MAP, Laplace, control variates, pilots) and
// warmup. -export DIR writes the data for examples/poisson/stan.
//
//	go run ./examples/poisson
//	go run ./examples/poisson -export /tmp/poisson
//	Rscript examples/poisson/stan/run.R /tmp/poisson /tmp/poisson/stan
package main

import (
	"context"
	"flag"
	"fmt"
	"log"
	"math"
	"math/rand/v2"
	"runtime"
	"strconv"

	"github.com/exactmh/exactmh"
	"github.com/exactmh/exactmh/examples/internal/report"
	"github.com/exactmh/exactmh/model"
)

func main() {
	cf := report.RegisterCommon(runtime.GOMAXPROCS(0), 1000)
	n := flag.Int("n", 1000000, "rows")
	d := flag.Int("d", 10, "coefficients, the intercept included")
	warmup := flag.Int("warmup", 1000, "warmup transitions per chain")
	exportTo := flag.String("export", "", "only write the data as CSV (hexadecimal reals) to this directory")
	flag.Parse()
	if cf.Quick {
		*n, *warmup, cf.Draws = 20000, 200, 300
	}
	rng := rand.New(rand.NewPCG(uint64(cf.Seed), 0x706f6973))
	e := simulate(rng, *n, *d)
	if *exportTo != "" {
		if err := export(*exportTo, e); err != nil {
			log.Fatal(err)
		}
		return
	}
	prior, err := model.NewIsoGaussian(*d, 2.5)
	if err != nil {
		log.Fatal(err)
	}
	post := &exactmh.Posterior{Energy: e, Prior: prior}
	set := &exactmh.Settings{Chains: cf.Chains, Warmup: *warmup, Draws: cf.Draws, Seed: uint64(cf.Seed)}
	if !cf.Quiet {
		set.Recorder = cf.Progress()
	}
	cpu0 := report.CPUTime()
	res, err := exactmh.Sample(context.Background(), post, nil, set)
	if err != nil {
		log.Fatal(err)
	}
	cpu := report.CPUTime() - cpu0
	s := res.Summary()
	minTail := math.Inf(1)
	for _, p := range s.Params {
		minTail = math.Min(minTail, p.ESSTail)
	}
	total := res.Choice.Time + res.Elapsed
	fmt.Printf("N = %d, d = %d, %d chains × (%d + %d) on %d cores\n", *n, *d, cf.Chains, *warmup, cf.Draws, runtime.GOMAXPROCS(0))
	fmt.Printf("chose %s\n", res.Choice)
	fmt.Printf("%.4g data per transition (%.3g%% of N), acceptance %.3f; min bulk ESS %.0f, min tail ESS %.0f, max R-hat %.4f\n",
		s.EvalsPerStep, 100*s.EvalsPerStep/float64(*n), s.AcceptRate, s.MinESSBulk(), minTail, s.MaxRHat())
	fmt.Printf("choice %.2fs + run %.2fs (wall): min bulk ESS per second including everything %.4g; per second of sampling (chain-seconds) %.4g\n",
		res.Choice.Time.Seconds(), res.Elapsed.Seconds(), s.MinESSBulk()/total.Seconds(), s.MinESSPerSecond())
	fmt.Printf("CPU %.2fs (choice, warmup and draws): min bulk ESS per CPU-second including everything %.4g\n", cpu.Seconds(), s.MinESSBulk()/cpu.Seconds())
	for _, w := range s.Warnings {
		fmt.Printf("warning: %s\n", w)
	}
	for _, p := range s.Params {
		fmt.Printf("%-10s %9.5f %9.5f %9.5f %9.5f %7.0f %7.0f\n", p.Name, p.Mean, p.SD, p.Q5, p.Q95, p.ESSBulk, p.ESSTail)
	}
	if cf.Out != "" {
		if err := cf.SaveStanCSV(res, "poisson", nil); err != nil {
			log.Fatal(err)
		}
	}
}

// offsetPoisson is the Poisson regression's energy with an offset o_i:
// U_i(θ) = e^{z + o_i} − y_i(z + o_i), z = x_iᵀθ. It implements
// exactmh.GLM, from which the package derives the energy differences,
// gradients and Hessian, and the optional LossGrowth method of exactmh.GLM (f‴ = e^{z + o_i} ≤
// e^{z₀ + o_i}·e^{|z − z₀|}), which gives ControlVariates its bound under
// the Gaussian prior.
type offsetPoisson struct {
	x, y, o []float64
	d       int
}

func (e *offsetPoisson) Len() int            { return len(e.y) }
func (e *offsetPoisson) Dim() int            { return e.d }
func (e *offsetPoisson) Row(i int) []float64 { return e.x[i*e.d : (i+1)*e.d] }

func (e *offsetPoisson) Energies(dst, theta []float64, idx []int) {
	for k, i := range idx {
		var z float64
		for j, v := range e.Row(i) {
			z += v * theta[j]
		}
		dst[k] = e.Loss(i, z)
	}
}

// Loss returns e^{z + o_i} − y_i(z + o_i) (+Inf where the exponential
// overflows).
func (e *offsetPoisson) Loss(i int, z float64) float64 {
	u := z + e.o[i]
	if u > 709 {
		return math.Inf(1)
	}
	return math.Exp(u) - e.y[i]*u
}

// LossDerivs returns f′ = e^{z + o_i} − y_i and f″ = e^{z + o_i}.
func (e *offsetPoisson) LossDerivs(i int, z float64) (f1, f2 float64) {
	m := math.Exp(z + e.o[i])
	return m - e.y[i], m
}

// LossBound returns sup|f^{(k)}| over [lo, hi]: f′ is increasing, f″ = f‴
// = e^{z + o_i} (+Inf when hi is).
func (e *offsetPoisson) LossBound(i, k int, lo, hi float64) float64 {
	eh := math.Exp(hi + e.o[i])
	switch k {
	case 1:
		return math.Max(math.Abs(math.Exp(lo+e.o[i])-e.y[i]), math.Abs(eh-e.y[i]))
	case 2, 3:
		return eh
	}
	return math.Inf(1)
}

// LossGrowth returns e^{z₀ + o_i}.
func (e *offsetPoisson) LossGrowth(i int, z0 float64) (float64, bool) {
	return math.Exp(z0 + e.o[i]), true
}

// simulate returns the data.
func simulate(rng *rand.Rand, n, d int) *offsetPoisson {
	theta := make([]float64, d)
	theta[0] = 0.5
	for j := 1; j < d; j++ {
		theta[j] = 0.3 * float64(1-2*((j+1)%2))
	}
	e := &offsetPoisson{x: make([]float64, n*d), y: make([]float64, n), o: make([]float64, n), d: d}
	for i := range n {
		row := e.Row(i)
		row[0] = 1
		z := theta[0]
		for j := 1; j < d; j++ {
			row[j] = 0.5 * rng.NormFloat64()
			z += row[j] * theta[j]
		}
		e.o[i] = math.Log(0.5 + 1.5*rng.Float64())
		e.y[i] = poisson(rng, math.Exp(z+e.o[i]))
	}
	return e
}

// poisson draws from Poisson(lam) by inversion (lam is a few units here).
func poisson(rng *rand.Rand, lam float64) float64 {
	p := math.Exp(-lam)
	k, cdf, u := 0.0, p, rng.Float64()
	for u > cdf && p > 0 {
		k++
		p *= lam / k
		cdf += p
	}
	return k
}

// export writes DIR/poisson.csv (y,offset,x1,…,xd, reals in hexadecimal,
// which R reads exactly) and DIR/poisson_constants.csv (n, d).
func export(dir string, e *offsetPoisson) error {
	cols := []string{"y", "offset"}
	for j := range e.d {
		cols = append(cols, fmt.Sprintf("x%d", j+1))
	}
	return report.ExportCSV(dir, "poisson", cols, e.Len(), func(b []byte, i int) []byte {
		b = strconv.AppendFloat(b, e.y[i], 'g', -1, 64)
		b = report.HexFloat(append(b, ','), e.o[i])
		for _, v := range e.Row(i) {
			b = report.HexFloat(append(b, ','), v)
		}
		return b
	}, "d", strconv.Itoa(e.d))
}
