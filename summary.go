package exactmh

import (
	"fmt"
	"io"
	"math"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"gonum.org/v1/gonum/stat"

	"github.com/exactmh/exactmh/diagnostics"
)

// ParamSummary summarizes the draws of one coordinate of θ.
type ParamSummary struct {
	Name         string
	Mean, SD     float64
	Q5, Q50, Q95 float64 // type-7 quantiles of all draws
	MCSE         float64 // Monte Carlo standard error of the mean (diagnostics.MCSEMean)
	ESSBulk      float64
	ESSTail      float64
	ESSPerSecond float64 // ESSBulk per second of sampling (see Summary.SamplingTime)
	RHat         float64
	NotAvailable bool // the draws were constant or non-finite: diagnostics are NaN
}

// Summary is the table of a run: per-coordinate posterior summaries and
// diagnostics, the kernel's cost figures, and warnings.
type Summary struct {
	Kernel string
	Exact  bool
	Status Status
	Chains int // chains summarised: those with draws
	Draws  int // kept draws per chain (the shortest chain's, after cancellation)
	// NoDraws lists the chains left out because they have no draws (a run
	// cancelled or failed before they sampled); nil if every chain has some.
	NoDraws []int
	Params  []ParamSummary

	AcceptRate   float64 // sampling phase, all chains
	EvalsPerStep float64 // datum energy evaluations per transition
	GradPerStep  float64 // datum gradient evaluations per transition
	MeanBatch    float64 // mean Info.Batch per transition
	// SamplingTime is the sum over chains of each chain's sampling-phase
	// wall time, so ESS per second is per chain-second and does not depend
	// on how many chains ran side by side. It is the CPU time of the
	// sampling only when each running chain had a core to itself
	// (Settings.Workers ≤ the free cores); on busier cores it is larger.
	SamplingTime time.Duration

	// Warnings lists what makes the figures untrustworthy: R-hat above 1.01,
	// bulk or tail ESS below 100 per chain, tail ESS below half the bulk
	// ESS or a chain staying more than 50 transitions at one point
	// (diagnostics.TailRatioWarn, diagnostics.StayWarn), an incomplete run.
	Warnings []string
}

// Summary computes the summary of a run. names label the coordinates
// (none given: Result.Names, the Posterior's); with
// fewer names than dimensions the rest are called theta[j], 1-based as in
// Stan: coordinate 0 is theta[1], the column theta.1 of the package
// stancsv's files (CmdStan's CSV flattening of the same name, which
// stansummary prints as theta[1]).
//
// After a cancellation or failure the chains may have different numbers of
// draws: each is cut to the shortest, and chains with none are left out
// (listed in NoDraws and a warning). A nil Result gives an empty Summary
// that says so.
func (r *Result) Summary(names ...string) *Summary {
	if r == nil {
		return &Summary{Warnings: []string{"nil Result: nothing to summarise"}}
	}
	s := &Summary{Kernel: r.Kernel, Exact: r.Exact, Status: r.Status}
	if len(names) == 0 {
		names = r.Names
	}
	var used []int // chains with draws
	n := -1
	for c, ch := range r.Chains {
		if ch.Len() == 0 {
			s.NoDraws = append(s.NoDraws, c)
			continue
		}
		used = append(used, c)
		if n < 0 || ch.Len() < n {
			n = ch.Len()
		}
	}
	s.Chains = len(used)
	s.Draws = max(n, 0)
	tot := r.Sampling()
	s.AcceptRate = tot.AcceptRate()
	s.EvalsPerStep = tot.EvalsPerStep()
	s.GradPerStep = float64(tot.GradEvals) / float64(tot.Steps)
	s.MeanBatch = tot.MeanBatch()
	s.SamplingTime = tot.Time
	secs := tot.Time.Seconds()

	// The coordinates are summarised in parallel (sorting and ranking long
	// chains takes a while), each into its own slot, up to summaryBlock at
	// a time: the block's columns are gathered from the row-major draws in
	// one pass over each draw's row (Result.Samples per coordinate would
	// read every row once per coordinate).
	s.Params = make([]ParamSummary, r.Dim)
	m, n := len(used), s.Draws // equal lengths after a cancelled run
	// Blocks smaller than summaryBlock where that leaves fewer than four
	// per core.
	blk := max(1, min(summaryBlock, r.Dim/(4*runtime.GOMAXPROCS(0))))
	forBlocks((r.Dim+blk-1)/blk, func(b int) {
		lo, hi := b*blk, min((b+1)*blk, r.Dim)
		// Column q, chain i at q·stride + i·n. The stride is even, so
		// every column starts 16-byte aligned as a fresh allocation does:
		// gonum's Sum (Mean, StdDev) adds a misaligned slice's first
		// element apart, in another order, and the pooled figures must be
		// SummarizeParam's to the bit (TestSummaryBlocksMatchSamples).
		stride := (m*n + 1) &^ 1
		cols := make([]float64, (hi-lo)*stride)
		for i, c := range used {
			draws := r.Chains[c].Draws
			for k := range n {
				for q, v := range draws[k*r.Dim+lo : k*r.Dim+hi] {
					cols[q*stride+i*n+k] = v
				}
			}
		}
		x := make([][]float64, m)
		for j := lo; j < hi; j++ {
			for i := range x {
				at := (j-lo)*stride + i*n
				x[i] = cols[at : at+n : at+n]
			}
			name := fmt.Sprintf("theta[%d]", j+1)
			if j < len(names) {
				name = names[j]
			}
			// The chains lie end to end in cols: their pooled draws.
			pool := cols[(j-lo)*stride : (j-lo)*stride+m*n]
			s.Params[j] = summarizeParam(name, x, pool, secs)
		}
	})
	if r.Status != Completed {
		s.Warnings = append(s.Warnings, fmt.Sprintf("the run %s: %d draws per chain instead of %d", r.Status, s.Draws, r.Settings.Draws))
	}
	switch {
	case r.Settings.DiscardDraws:
		s.Warnings = append(s.Warnings, "the draws were streamed to the Recorder and not kept (Settings.DiscardDraws): summarise its files (e.g. stancsv.Read, then diagnostics)")
	case len(r.Chains) > 0 && len(used) == 0:
		s.Warnings = append(s.Warnings, "no chain has any draw: nothing to summarise")
	case len(s.NoDraws) > 0:
		s.Warnings = append(s.Warnings, fmt.Sprintf("chains %s have no draws and are left out: the table is of the other %d", chainList(s.NoDraws), len(used)))
	}
	s.Warnings = append(append(s.Warnings, ParamWarnings(s.Params, len(used))...), stayWarning(r, s)...)
	var asMH, unjudged []string
	var speedup float64
	for _, c := range r.Chains {
		switch {
		case c.Params["chi_unjudged"] == 1:
			unjudged = append(unjudged, fmt.Sprint(c.Chain))
		case c.Params["as_mh"] == 1:
			asMH = append(asMH, fmt.Sprint(c.Chain))
			speedup = max(speedup, c.Params["mh_speedup"])
		}
	}
	if len(unjudged) > 0 {
		s.Warnings = append(s.Warnings, fmt.Sprintf("%s could not judge χ at any step warmup tried in chain(s) %s (its minibatch estimate would need batches of order (C·M·sd)², Params chi_unjudged), so they ran as full-batch MH; ControlVariates shrinks C·M near the mode",
			r.Kernel, strings.Join(unjudged, ", ")))
	}
	if len(asMH) > 0 {
		s.Warnings = append(s.Warnings, fmt.Sprintf("%s ran as full-batch MH in chain(s) %s: warmup predicted MH up to %.3g× faster than any minibatch at this posterior (its bound's C·M grows like √N on a concentrated posterior); ControlVariates shrinks it near the mode, and Sample with a nil Kernel chooses for you",
			r.Kernel, strings.Join(asMH, ", "), speedup))
	} else if tot := r.Sampling(); len(unjudged) == 0 && tot.Steps > 0 && 4*tot.Fallbacks > tot.Steps {
		s.Warnings = append(s.Warnings, fmt.Sprintf("%s fell back to full-batch MH in %.0f%% of transitions: at this step size its expected minibatch exceeds N, so it costs as much as MH (the data are not tall enough, or the steps too long)",
			r.Kernel, 100*float64(tot.Fallbacks)/float64(tot.Steps)))
	}
	if tot := r.Sampling(); tot.Divergent > 0 {
		s.Warnings = append(s.Warnings, fmt.Sprintf("%d of %d transitions after warmup diverged: the step is too long for the posterior's curvature somewhere, and the draws may miss that region (raise Settings.TargetAccept, or reparameterise)",
			tot.Divergent, tot.Steps))
	}
	return s
}

// summaryBlock is how many coordinates Summary gathers and summarises
// together.
const summaryBlock = 8

// SummarizeParam summarises one coordinate's draws x[chain][draw] (chains
// of equal length) as Summary does, with ESSPerSecond = ESSBulk / seconds:
// for draws that did not come from a Result, such as Stan CSV files
// (stancsv.Summarize).
func SummarizeParam(name string, x [][]float64, seconds float64) ParamSummary {
	return summarizeParam(name, x, slices.Concat(x...), seconds)
}

// summarizeParam is SummarizeParam given pool, the draws of x's chains
// end to end (Summary's gathered columns hold them so: no copy).
func summarizeParam(name string, x [][]float64, pool []float64, seconds float64) ParamSummary {
	p := ParamSummary{Name: name}
	if len(pool) == 0 {
		p.NotAvailable = true
		p.Mean, p.SD, p.Q5, p.Q50, p.Q95 = math.NaN(), math.NaN(), math.NaN(), math.NaN(), math.NaN()
	} else {
		p.Mean = stat.Mean(pool, nil)
		p.SD = stat.StdDev(pool, nil) // denominator n − 1, as R's sd
	}
	d := diagnostics.Summarize(x)
	if len(pool) > 0 {
		p.Q5, p.Q50, p.Q95 = d.Q5, d.Q50, d.Q95
	}
	p.MCSE, p.ESSBulk, p.ESSTail, p.RHat = d.MCSEMean, d.ESSBulk, d.ESSTail, d.RHat
	p.ESSPerSecond = p.ESSBulk / seconds
	if !diagnostics.Usable(x) {
		p.NotAvailable = true
	}
	return p
}

// MinESSBulk returns the smallest bulk ESS over the coordinates (NaN if any
// is NaN): the figure that limits the accuracy of a run.
func (s *Summary) MinESSBulk() float64 {
	m := math.Inf(1)
	for _, p := range s.Params {
		if math.IsNaN(p.ESSBulk) {
			return math.NaN()
		}
		m = math.Min(m, p.ESSBulk)
	}
	return m
}

// MinESSPerSecond is MinESSBulk per second of sampling (summed over chains).
func (s *Summary) MinESSPerSecond() float64 { return s.MinESSBulk() / s.SamplingTime.Seconds() }

// MaxRHat returns the largest R-hat over the coordinates (NaN if any is NaN).
func (s *Summary) MaxRHat() float64 {
	m := math.Inf(-1)
	for _, p := range s.Params {
		if math.IsNaN(p.RHat) {
			return math.NaN()
		}
		m = math.Max(m, p.RHat)
	}
	return m
}

// String returns the table printed by WriteTo.
func (s *Summary) String() string {
	var b strings.Builder
	s.WriteTo(&b)
	return b.String()
}

// WriteTo prints the summary as an aligned table: a header line with the
// kernel and its cost, one row per coordinate, then the warnings.
func (s *Summary) WriteTo(w io.Writer) (int64, error) {
	cw := &countWriter{w: w}
	exact := "exact"
	if !s.Exact {
		exact = "INEXACT"
	}
	fmt.Fprintf(cw, "%s (%s), %d chains × %d draws, %s: accept %.3f, %.1f evals/step",
		s.Kernel, exact, s.Chains, s.Draws, s.Status, s.AcceptRate, s.EvalsPerStep)
	if s.GradPerStep > 0 {
		fmt.Fprintf(cw, ", %.1f grads/step", s.GradPerStep)
	}
	if s.MeanBatch > 0 {
		fmt.Fprintf(cw, ", mean batch %.1f", s.MeanBatch)
	}
	fmt.Fprintf(cw, ", sampling %.3gs (summed over chains)\n", s.SamplingTime.Seconds())
	tw := tabwriter.NewWriter(cw, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprint(tw, "\tmean\tsd\tmcse\t5%\t50%\t95%\tess_bulk\tess_tail\tess/s\trhat\t\n")
	width := 0
	for _, p := range s.Params {
		width = max(width, len(p.Name))
	}
	for _, p := range s.Params {
		// Names are padded so that they read left-aligned.
		fmt.Fprintf(tw, "%-*s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t\n", width, p.Name,
			num(p.Mean), num(p.SD), num(p.MCSE), num(p.Q5), num(p.Q50), num(p.Q95),
			count(p.ESSBulk), count(p.ESSTail), rate(p.ESSPerSecond), fixed(p.RHat, 3))
	}
	tw.Flush()
	for _, msg := range s.Warnings {
		fmt.Fprintf(cw, "warning: %s\n", msg)
	}
	return cw.n, cw.err
}

// chainList lists chain indices (0-based, as ChainResult.Chain and errors
// number them).
func chainList(cs []int) string {
	var b strings.Builder
	for i, c := range cs {
		if i > 0 {
			b.WriteString(", ")
		}
		fmt.Fprint(&b, c)
	}
	return b.String()
}

func num(v float64) string {
	if math.IsNaN(v) {
		return "NA"
	}
	return fmt.Sprintf("%.4g", v)
}

func count(v float64) string {
	if math.IsNaN(v) {
		return "NA"
	}
	return fmt.Sprintf("%.0f", v)
}

// rate formats an ESS per second: whole numbers from 100 on, two
// significant digits below (0.39, not 0).
func rate(v float64) string {
	if math.IsNaN(v) || math.Abs(v) >= 100 {
		return count(v)
	}
	return strconv.FormatFloat(v, 'g', 2, 64)
}

func fixed(v float64, prec int) string {
	if math.IsNaN(v) {
		return "NA"
	}
	return fmt.Sprintf("%.*f", prec, v)
}

type countWriter struct {
	w   io.Writer
	n   int64
	err error
}

func (c *countWriter) Write(p []byte) (int, error) {
	if c.err != nil {
		return 0, c.err
	}
	n, err := c.w.Write(p)
	c.n += int64(n)
	c.err = err
	return n, err
}
