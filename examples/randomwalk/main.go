// The bias demonstration of the TunaMH paper (App. J.1).
//
// θ lives on {0, …, K−1}; 5000 data are −1 and 1000 are 5, U_i(θ) = θx_i/N,
// so Σx_i = 0 and the target is uniform. Proposals are θ ± 1. On this chain
// any kernel's stationary law is ν(k) ∝ (α+/α−)^k, where α± are its
// acceptance probabilities for up and down moves (App. A): an exact kernel
// has α+ = α− and a uniform ν; an inexact one drifts to one end, and the
// more so the larger K.
//
// For K ∈ {200, 1000, 5000} the program measures α± from many decisions at
// the middle of the chain (as many as fit in -budget, up to -decisions: the
// TV at large K magnifies the error of α+/α− K-fold, so cheap kernels get
// millions), prints the TV distance of the
// implied ν to uniform with its Monte Carlo error, and at K = 200 also the
// TV of a simulated chain's histogram (-chains chains of -draws draws).
// No affordable number of decisions resolves TunaMH's TV at K = 5000 (its
// Monte Carlo error there is as large as AustereMH's TV), so for TunaMH the
// program also computes α± exactly: the kept draws of the data equal to x
// are a Poisson count, so α± = E[min(1, r)] is a double sum over two
// Poisson laws (tunaExact), and the TV of the ν it implies has no Monte
// Carlo error at all.
// With -out DIR it writes those chains' Stan CSV and randomwalk_tv.png. Kernels: MH and TunaMH (exact) and
// AustereMH with ε = 0.01, m = 30 (inexact): its TV grows with K while the
// exact kernels' stay within their Monte Carlo error of zero (TunaMH paper
// Fig. 1, Fig. 5).
//
//	go run ./examples/randomwalk
//	go run ./examples/randomwalk -json
package main

import (
	"context"
	"flag"
	"fmt"
	"log"
	"maps"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"time"

	"github.com/exactmh/exactmh"
	"github.com/exactmh/exactmh/examples/internal/figure"
	"github.com/exactmh/exactmh/examples/internal/report"
	"github.com/exactmh/exactmh/inexact"
	"github.com/exactmh/exactmh/mcmctest"
)

func main() {
	cf := report.RegisterCommon(4, 200000)
	decisions := flag.Int("decisions", 20_000_000, "most accept/reject decisions per kernel and K")
	budget := flag.Duration("budget", 3*time.Second, "time for the decisions of each kernel and K")
	flag.Parse()
	seed, asJSON, quick := &cf.Seed, &cf.JSON, &cf.Quick
	if *quick {
		*decisions, *budget, cf.Draws = 10000, 100*time.Millisecond, 5000
	}
	curves := map[string]*figure.Series{}
	var order []string
	log.SetFlags(0)
	log.SetPrefix("randomwalk: ")

	kernels := []func(exactmh.Proposal) exactmh.Kernel{
		func(q exactmh.Proposal) exactmh.Kernel { return exactmh.MH{Proposal: q, Scale: 1} },
		func(q exactmh.Proposal) exactmh.Kernel { return exactmh.TunaMH{Proposal: q, Scale: 1} },
		func(q exactmh.Proposal) exactmh.Kernel {
			return inexact.AustereMH{Proposal: q, Scale: 1, Epsilon: 0.01, BatchSize: 30}
		},
		// Seita et al.'s minibatch Barker test, the TunaMH paper's Fig. 1/5
		// baseline (m = 30, δ = 5): inexact.
		func(q exactmh.Proposal) exactmh.Kernel {
			return inexact.MHminibatch{Proposal: q, Scale: 1, BatchSize: 30, Delta: 5}
		},
	}
	if !*asJSON {
		fmt.Printf("App. J.1 random walk: uniform target, up to %d decisions or %v per kernel and K\n\n", *decisions, *budget)
		fmt.Printf("%-10s %6s %10s %9s %9s %18s %10s %10s %10s\n", "kernel", "K", "decisions", "α+", "α−", "TV(ν, uniform)", "mean batch", "chain TV", "exact TV")
	}
	for _, k := range []int{200, 1000, 5000} {
		p, lin, err := mcmctest.RandomWalk(k)
		if err != nil {
			log.Fatal(err)
		}
		mid := float64(k / 2)
		for _, newKernel := range kernels {
			start := time.Now()
			r, err := decide(p, newKernel, mid, *decisions, *budget, *seed)
			if err != nil {
				log.Fatal(err)
			}
			up := float64(r.AccA) / float64(r.FromA)
			down := float64(r.AccB) / float64(r.FromB)
			tv := mcmctest.StationaryTV(up, down, k)
			tvSE := tvError(up, down, r.FromA, r.FromB, k, *seed)
			batch, evals := costs(p, newKernel, mid, *seed)
			chainTV := math.NaN()
			if k == 200 {
				chainTV = simulate(p, newKernel, k, cf)
			}
			name := newKernel(nil).Name()
			upExact, downExact, tvExact := math.NaN(), math.NaN(), math.NaN()
			if _, ok := newKernel(nil).(exactmh.TunaMH); ok {
				upExact, downExact = tunaExact(p, lin, newKernel, mid)
				tvExact = mcmctest.StationaryTV(upExact, downExact, k)
			}
			if curves[name] == nil {
				curves[name] = &figure.Series{Name: name}
				order = append(order, name)
			}
			curves[name].X = append(curves[name].X, float64(k))
			curves[name].Y = append(curves[name].Y, tv)
			if *asJSON {
				report.Write(os.Stdout, map[string]any{
					"kernel": name, "exact": newKernel(nil).Exact(), "K": k, "tv": tv, "tv_se": tvSE, "decisions": r.FromA + r.FromB,
					"alpha_up": up, "alpha_down": down, "accept_rate": (up + down) / 2,
					"mean_batch": batch, "evals_per_step": evals, "chain_tv": report.OrNull(chainTV),
					"alpha_up_exact": report.OrNull(upExact), "alpha_down_exact": report.OrNull(downExact), "tv_exact": report.OrNull(tvExact),
					"ess_bulk_min": nil, "ess_per_sec": nil, "seconds": time.Since(start).Seconds(),
				})
				continue
			}
			chain := "-"
			if !math.IsNaN(chainTV) {
				chain = fmt.Sprintf("%.4f", chainTV)
			}
			exact := "-"
			if !math.IsNaN(tvExact) {
				exact = fmt.Sprintf("%.1e", tvExact)
			}
			fmt.Printf("%-10s %6d %10d %9.4f %9.4f %9.4f ± %6.4f %10.1f %10s %10s\n", name, k, r.FromA+r.FromB, up, down, tv, tvSE, batch, chain, exact)
			if !math.IsNaN(upExact) {
				// The measured α± against the exact ones, in binomial
				// standard errors.
				zUp := (up - upExact) / math.Sqrt(upExact*(1-upExact)/float64(r.FromA))
				zDown := (down - downExact) / math.Sqrt(downExact*(1-downExact)/float64(r.FromB))
				fmt.Printf("%-10s %6s %10s %9.6f %9.6f   exact α± (α+/α− − 1 = %.1e; measured at z = %.2f, %.2f)\n",
					"", "", "", upExact, downExact, upExact/downExact-1, zUp, zDown)
			}
		}
	}
	if cf.Out != "" {
		var series []figure.Series
		for _, name := range order {
			series = append(series, *curves[name])
		}
		if err := figure.Lines(filepath.Join(cf.Out, "randomwalk_tv.png"), figure.Layout{
			Title: "App. J.1 walk: TV of the stationary law to uniform", XLabel: "K (states)", YLabel: "TV",
			LogX: true, LegendTop: false, LegendLeft: true}, series); err != nil {
			log.Fatal(err)
		}
	}
}

// decide runs the pairwise chain between the middle state and the one above
// in blocks of 10⁵ decisions, each with its own seed, until max decisions
// or the budget, and returns the pooled counts.
func decide(p *exactmh.Posterior, newKernel func(exactmh.Proposal) exactmh.Kernel, mid float64, max int, budget time.Duration, seed uint64) (mcmctest.PairResult, error) {
	var total mcmctest.PairResult
	start := time.Now()
	for block := uint64(0); total.FromA+total.FromB < max && (block == 0 || time.Since(start) < budget); block++ {
		n := min(100_000, max-total.FromA-total.FromB)
		r, err := mcmctest.Pairwise(p, newKernel, []float64{mid}, []float64{mid + 1}, 0, n, seed*1_000_003+block)
		if err != nil {
			return total, err
		}
		total.FromA += r.FromA
		total.AccA += r.AccA
		total.FromB += r.FromB
		total.AccB += r.AccB
	}
	return total, nil
}

// tvError is the Monte Carlo standard deviation of the TV estimate,
// propagated by redrawing α± from their binomial sampling laws (normal
// approximation).
func tvError(up, down float64, nUp, nDown, k int, seed uint64) float64 {
	rng := rand.New(rand.NewPCG(seed, 7))
	var s, s2 float64
	const reps = 400
	for range reps {
		u := up + rng.NormFloat64()*math.Sqrt(up*(1-up)/float64(nUp))
		d := down + rng.NormFloat64()*math.Sqrt(down*(1-down)/float64(nDown))
		tv := mcmctest.StationaryTV(math.Min(u, 1), math.Min(d, 1), k)
		s += tv
		s2 += tv * tv
	}
	m := s / reps
	return math.Sqrt(math.Max(s2/reps-m*m, 0))
}

// costs returns the mean batch and evaluations per step over 2000 steps
// of the lattice walk from the middle.
func costs(p *exactmh.Posterior, newKernel func(exactmh.Proposal) exactmh.Kernel, mid float64, seed uint64) (batch, evals float64) {
	res, err := exactmh.Sample(context.Background(), p, newKernel(mcmctest.LatticeProposal{}),
		&exactmh.Settings{Chains: 1, Warmup: exactmh.NoWarmup, NoAdapt: true, Draws: 2000, Init: []float64{mid}, Seed: seed})
	if err != nil {
		log.Fatal(err)
	}
	tot := res.Sampling()
	return tot.MeanBatch(), tot.EvalsPerStep()
}

// simulate runs 4 chains on the K-state walk and returns the TV of their
// pooled histogram to uniform.
func simulate(p *exactmh.Posterior, newKernel func(exactmh.Proposal) exactmh.Kernel, k int, cf *report.Common) float64 {
	res, err := exactmh.Sample(context.Background(), p, newKernel(mcmctest.LatticeProposal{}),
		&exactmh.Settings{Chains: cf.Chains, Warmup: exactmh.NoWarmup, NoAdapt: true, Draws: cf.Draws,
			Init: []float64{float64(k / 2)}, Seed: cf.Seed, Recorder: cf.Progress()})
	if err != nil {
		log.Fatal(err)
	}
	if err := cf.SaveStanCSV(res, fmt.Sprintf("randomwalk_K%d_%s", k, res.Kernel), []string{"state"}); err != nil {
		log.Fatal(err)
	}
	return mcmctest.HistogramTV(res.Samples(0), k)
}

// tunaExact returns TunaMH's exact acceptance probabilities α± for the
// moves mid → mid+1 and mid+1 → mid, with the χ the kernel chooses on the
// pairwise chain (read from its Params). By Algorithm 2 of the TunaMH
// paper, B ~ Poisson(λ), λ = χC²M² + CM, draws are i ∝ c_i and each is
// kept with probability (a_i + φ_old)/(a_i + c_iM), a_i = χCc_iM²,
// contributing log((a_i + φ_new)/(a_i + φ_old)) to log r. All data with the
// same x_i have the same c_i and energy difference, so by Poisson thinning
// the kept draws of each value of x are independent Poisson counts, and
// α = E[min(1, r)] is a sum over two counts (the walk has two values of
// x), truncated where less than 10⁻¹⁸ of either law remains.
func tunaExact(p *exactmh.Posterior, lin *mcmctest.Linear, newKernel func(exactmh.Proposal) exactmh.Kernel, mid float64) (up, down float64) {
	t, err := exactmh.NewTarget(p)
	if err != nil {
		log.Fatal(err)
	}
	ch, err := newKernel(mcmctest.SwapProposal{A: []float64{mid}, B: []float64{mid + 1}}).Start(t, []float64{mid})
	if err != nil {
		log.Fatal(err)
	}
	chi := ch.(exactmh.ParamReporter).Params()["chi"]
	n := float64(len(lin.X))
	// The data by value (in sorted order, so that the sums below are made
	// in the same order every run): c = |x|/N and their total weight.
	weight := map[float64]float64{}
	var sumC float64
	for _, x := range lin.X {
		weight[x] += math.Abs(x) / n
		sumC += math.Abs(x) / n
	}
	values := slices.Sorted(maps.Keys(weight))
	if len(values) != 2 {
		log.Fatalf("tunaExact: %d distinct data values, want 2", len(values))
	}
	alpha := func(dTheta float64) float64 {
		const m = 1.0 // M(θ, θ′) = |θ − θ′|
		lambda := chi*sumC*sumC*m*m + sumC*m
		var pmf [][]float64
		var terms []float64
		for _, x := range values {
			w, c := weight[x], math.Abs(x)/n
			mi, a := c*m, chi*sumC*c*m*m
			d := -dTheta * x / n // U_i(θ) − U_i(θ′)
			phiOld, phiNew := (mi-d)/2, (mi+d)/2
			keep := (a + phiOld) / (a + mi)
			pmf = append(pmf, poissonPMF(lambda*w/sumC*keep))
			terms = append(terms, math.Log1p(phiNew/a)-math.Log1p(phiOld/a))
		}
		var s float64
		for s0, p0 := range pmf[0] {
			for s1, p1 := range pmf[1] {
				logR := 0.0
				if s0 > 0 {
					logR += float64(s0) * terms[0]
				}
				if s1 > 0 {
					logR += float64(s1) * terms[1]
				}
				s += p0 * p1 * math.Exp(math.Min(logR, 0))
			}
		}
		return s
	}
	return alpha(1), alpha(-1)
}

// poissonPMF returns the Poisson(mu) probabilities of 0, 1, … up to the
// first k beyond the mode whose probability is below 10⁻²⁰: the remaining
// tail is then below 10⁻¹⁸ (the terms fall geometrically).
func poissonPMF(mu float64) []float64 {
	pmf := []float64{math.Exp(-mu)}
	for k := 1; float64(k) <= mu+1 || pmf[k-1] >= 1e-20; k++ {
		pmf = append(pmf, pmf[k-1]*mu/float64(k))
	}
	return pmf
}
