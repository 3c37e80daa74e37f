// Quickstart: will a flight arrive more than 15 minutes late? A Bayesian
// logistic regression on 3 million real US domestic flights of 2001,
// sampled exactly by exactmh's automatic kernel.
//
// The bundled file examples/data/flights-3m.parquet (Bureau of
// Transportation Statistics on-time data as packaged by vega-datasets; see
// examples/data/README.md) is read with the package data, which builds the
// design: log distance, time of day (a daily cycle), day of week, month
// and the busiest origin and destination airports, standardised, with an
// intercept. The posterior over the coefficients (prior N(0, 2.5²) on each
// standardised one) is sampled by Sample with a nil kernel: it finds the
// MAP and the Laplace approximation, rewrites the posterior with control
// variates, measures short pilots and keeps the fastest exact kernel. The
// program prints what it chose and why, the odds ratios on the original
// scale with 90% intervals, ESS per second, R-hat and the data read per
// step, then spends the same wall time on full-batch NUTS, the sampler
// Stan users run, for comparison.
//
//	go run ./examples/quickstart
//	go run ./examples/quickstart -out out   # Stan CSV files, and the command that plots them
//	go run -tags plot ./examples/quickstart -out out   # also a trace plot and the odds-ratio figure
//	go run ./examples/quickstart -json      # one JSON object per run
package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"log"
	"math"
	"os"
	"os/signal"
	"path/filepath"
	"slices"
	"text/tabwriter"
	"time"

	"github.com/exactmh/exactmh"
	"github.com/exactmh/exactmh/data"
	"github.com/exactmh/exactmh/diagnostics"
	"github.com/exactmh/exactmh/examples/internal/report"
	"github.com/exactmh/exactmh/model"
)

func main() {
	cf := report.RegisterCommon(4, 1000)
	file := flag.String("data", "", "the flights Parquet file (default: the bundled examples/data/flights-3m.parquet)")
	rows := flag.Int("rows", 0, "read only the first rows of the file (0: all)")
	warmup := flag.Int("warmup", 1000, "warmup transitions per chain")
	compare := flag.Bool("compare", true, "spend the same wall time on full-batch NUTS for comparison")
	flag.Parse()
	log.SetFlags(0)
	log.SetPrefix("quickstart: ")
	if cf.Quick {
		cf.Draws, *warmup = 200, 300
		if *rows == 0 {
			*rows = 50000
		}
	}
	path, err := report.FindFlights(*file)
	if err != nil {
		log.Fatal(err)
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	out := io.Writer(os.Stdout)
	if err := run(ctx, out, cf, path, *rows, *warmup, *compare); err != nil {
		log.Fatal(err)
	}
}

// spec is the model: y = delay > 15 minutes on the features below.
var spec = data.Spec{
	Response: data.Above("delay", 15),
	Terms: []data.Term{
		data.Log("distance"),
		data.HourOfDay("date"),
		data.DayOfWeek("date"),
		data.Month("date"),
		data.Categorical("origin", data.TopK(8)),
		data.Categorical("destination", data.TopK(8)),
	},
}

func run(ctx context.Context, out io.Writer, cf *report.Common, path string, rows, warmup int, compare bool) error {
	t0 := time.Now()
	frame, err := data.ReadParquet(path, &data.ReadOptions{
		Columns: []string{"date", "delay", "distance", "origin", "destination"}, Limit: rows})
	if err != nil {
		return err
	}
	design, err := spec.Build(frame)
	if err != nil {
		return err
	}
	loaded := time.Since(t0)
	energy, err := model.NewLogisticRegression(design.X, design.Y, design.D)
	if err != nil {
		return err
	}
	prior, err := model.NewIsoGaussian(design.D, 2.5)
	if err != nil {
		return err
	}
	post := &exactmh.Posterior{Energy: energy, Prior: prior, Names: design.Names}
	late := 0.0
	for _, y := range design.Y {
		late += y
	}
	if !cf.JSON {
		fmt.Fprintf(out, "%d flights (%s), %.1f%% more than 15 min late; %d coefficients; loaded in %.1fs\n\n",
			design.N, filepath.Base(path), 100*late/float64(design.N), design.D, loaded.Seconds())
	}

	set := &exactmh.Settings{Chains: cf.Chains, Warmup: warmup, Draws: cf.Draws, Seed: cf.Seed, Recorder: cf.Progress()}
	res, err := exactmh.Sample(ctx, post, nil, set) // nil: the automatic exact kernel
	if res == nil {
		return err
	}
	if err != nil {
		log.Printf("%v (reporting the %s run)", err, res.Status)
	}
	s := res.Summary()
	total := res.Elapsed + res.Choice.Time
	if cf.JSON {
		report.Write(out, report.Row(res, map[string]any{"chose": res.Choice.Name, "rhat_max": report.OrNull(s.MaxRHat()),
			"total_seconds": total.Seconds(), "n": design.N, "d": design.D}))
	} else {
		fmt.Fprintf(out, "exactmh chose %s\n\n", res.Choice)
		printOddsRatios(out, res, design, s)
		fmt.Fprintf(out, "\n%s (exact): %.1f data read per step of %d (%.4f%%), acceptance %.2f\n",
			res.Choice.Name, s.EvalsPerStep, design.N, 100*s.EvalsPerStep/float64(design.N), s.AcceptRate)
		fmt.Fprintf(out, "min bulk ESS %.0f, max R-hat %.3f: %.0f ESS per second of sampling (per chain-second); %.1fs in all (choice: MAP, Laplace, pilots %.1fs; warmup and sampling %.1fs), %.0f ESS per second of that wall time\n",
			s.MinESSBulk(), s.MaxRHat(), s.MinESSPerSecond(), total.Seconds(), res.Choice.Time.Seconds(), res.Elapsed.Seconds(), s.MinESSBulk()/total.Seconds())
		for _, w := range s.Warnings {
			fmt.Fprintf(out, "warning: %s\n", w)
		}
	}
	if err := saveOutputs(out, cf, res, design); err != nil {
		return err
	}
	if !compare {
		return nil
	}
	return compareNUTS(ctx, out, cf, post, total, warmup, s)
}

// printOddsRatios prints each feature's odds ratio exp(β) on the
// original scale of its column (per unit; per e-fold for log distance),
// with the 90% interval, bulk ESS and R-hat of the coefficient.
func printOddsRatios(out io.Writer, res *exactmh.Result, design *data.Design, s *exactmh.Summary) {
	or := oddsRatios(res, design)
	tw := tabwriter.NewWriter(out, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprint(tw, "feature\todds ratio\t5%\t95%\tess_bulk\trhat\t\n")
	for j, r := range or {
		fmt.Fprintf(tw, "%s\t%.3f\t%.3f\t%.3f\t%.0f\t%.3f\t\n", r.Name, r.Mid, r.Low, r.High, s.Params[j].ESSBulk, s.Params[j].RHat)
	}
	tw.Flush()
	fmt.Fprintln(out, "(odds of arriving > 15 min late, each feature alone changed by one unit of its column — hour.sin/cos are the daily cycle, others vs their reference level; the intercept's is the odds at the reference levels)")
}

// interval is a feature's odds ratio: the posterior median and 90%
// interval.
type interval struct {
	Name           string
	Mid, Low, High float64
}

// oddsRatios returns exp of each coefficient on the original scale: the
// median and 90% interval over all draws.
func oddsRatios(res *exactmh.Result, design *data.Design) []interval {
	var draws [][]float64
	for c, ch := range res.Chains {
		for k := range ch.Len() {
			draws = append(draws, design.Unstandardize(res.Draw(c, k)))
		}
	}
	rows := make([]interval, design.D)
	col := make([]float64, len(draws))
	for j := range rows {
		for k, d := range draws {
			col[k] = d[j]
		}
		slices.Sort(col)
		q := func(p float64) float64 { return math.Exp(diagnostics.Quantile(col, p)) }
		rows[j] = interval{Name: design.Names[j], Mid: q(0.5), Low: q(0.05), High: q(0.95)}
	}
	return rows
}

// compareNUTS spends budget of wall time on full-batch NUTS with the same
// chains and settings and reports how far it got.
func compareNUTS(ctx context.Context, out io.Writer, cf *report.Common, post *exactmh.Posterior, budget time.Duration, warmup int, ours *exactmh.Summary) error {
	ctx, cancel := context.WithTimeout(ctx, budget)
	defer cancel()
	set := &exactmh.Settings{Chains: cf.Chains, Warmup: warmup, Draws: cf.Draws, Seed: cf.Seed, Recorder: cf.Progress()}
	res, err := exactmh.Sample(ctx, post, exactmh.NUTS{}, set)
	if res == nil {
		return err
	}
	var steps int
	for _, c := range res.Chains {
		steps += c.Warmup.Steps + c.Sampling.Steps
	}
	planned := cf.Chains * (warmup + cf.Draws)
	s := res.Summary()
	if cf.JSON {
		return report.Write(out, report.Row(res, map[string]any{"budget_seconds": budget.Seconds(), "transitions": steps, "planned": planned}))
	}
	fmt.Fprintf(out, "\nfull-batch NUTS in the same %.0fs: %d of %d transitions (%d kept draws per chain), %.0f data read per transition",
		budget.Seconds(), steps, planned, s.Draws, float64(res.Warmup().Evals+res.Sampling().Evals)/float64(max(steps, 1)))
	if s.Draws >= 4 && !math.IsNaN(s.MinESSBulk()) {
		fmt.Fprintf(out, "; min bulk ESS %.0f, %.2f ESS/s of sampling", s.MinESSBulk(), s.MinESSPerSecond())
	}
	fmt.Fprintln(out)
	if steps < planned && steps > 0 {
		rest := time.Duration(float64(budget) * float64(planned) / float64(steps))
		fmt.Fprintf(out, "at that pace its %d + %d iterations per chain would take about %s, against exactmh's %.0fs for the same run\n",
			warmup, cf.Draws, rest.Round(time.Second), budget.Seconds())
	}
	_ = ours
	return nil
}

// saveOutputs writes, with -out DIR, each chain's Stan CSV (columns named
// after the design's features) and prints the command that plots them.
// Built with -tags plot, it also draws a trace plot of a few coefficients
// and the odds-ratio figure (figures.go): the plots are left out of the
// default build so that the first go run does not download and compile
// gonum/plot and its fonts (TestLightDependencies).
func saveOutputs(out io.Writer, cf *report.Common, res *exactmh.Result, design *data.Design) error {
	if cf.Out == "" {
		return nil
	}
	if err := cf.SaveStanCSV(res, "quickstart", nil); err != nil {
		return err
	}
	if saveFigures != nil {
		return saveFigures(cf, res, design)
	}
	if !cf.JSON {
		fmt.Fprintf(out, "\nStan CSV files in %s; to plot them: exactmh plot --out %s %s (or go run -tags plot ./examples/quickstart -out %s for the odds-ratio figure)\n",
			cf.Out, filepath.Join(cf.Out, "quickstart"), filepath.Join(cf.Out, "quickstart_*.csv"), cf.Out)
	}
	return nil
}

// saveFigures draws the figures; set by figures.go under -tags plot.
var saveFigures func(cf *report.Common, res *exactmh.Result, design *data.Design) error
