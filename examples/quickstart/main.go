// Quickstart: Bayesian logistic regression on real MNIST digits, 7 vs 9.
//
// The 2,048 bundled images of 7s and 9s are shuffled with -seed, 20% are
// held out, and the pixels are projected on the first 50 principal
// components of the training images. The posterior over the 50 weights
// (Gaussian prior N(0, 10²) on each) is sampled by 4 chains of full-batch
// Metropolis–Hastings, the exact reference every minibatch kernel of exactmh
// is measured against. The program prints the posterior summary, the cost
// per step, ESS per second and the test accuracy of the posterior mean.
//
//	go run ./examples/quickstart
//	go run ./examples/quickstart -json      # one JSON object per kernel run
package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"log"
	"os"
	"os/signal"
	"path/filepath"
	"time"

	"github.com/exactmh/exactmh"
	"github.com/exactmh/exactmh/examples/internal/figure"
	"github.com/exactmh/exactmh/examples/internal/report"
	"github.com/exactmh/exactmh/internal/mnist"
	"gonum.org/v1/plot/vg"
)

func main() {
	cf := report.RegisterCommon(4, 1000)
	warmup := flag.Int("warmup", 10000, "warmup transitions per chain")
	thin := flag.Int("thin", 150, "transitions per kept draw")
	rows := flag.Int("rows", 10, "parameters shown in the summary table (0: all)")
	flag.Parse()
	seed, chains, draws, asJSON, quick, quiet := &cf.Seed, &cf.Chains, &cf.Draws, &cf.JSON, &cf.Quick, &cf.Quiet
	if *quick {
		*draws, *warmup, *thin = 100, 200, 2
	}
	log.SetFlags(0)
	log.SetPrefix("quickstart: ")

	opt := mnist.DefaultOptions()
	opt.Seed = *seed
	data, err := mnist.Load(opt)
	if err != nil {
		log.Fatal(err)
	}
	energy, err := exactmh.NewLogisticRegression(data.TrainX, data.TrainY, data.D)
	if err != nil {
		log.Fatal(err)
	}
	prior, err := exactmh.NewIsoGaussian(data.D, 10)
	if err != nil {
		log.Fatal(err)
	}
	post := &exactmh.Posterior{Energy: energy, Prior: prior}

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	set := &exactmh.Settings{Chains: *chains, Warmup: *warmup, Draws: *draws, Thin: *thin, Seed: *seed}
	if !*quiet {
		set.Recorder = exactmh.NewProgress(os.Stderr, time.Second)
	}
	out := io.Writer(os.Stdout)
	if !*asJSON {
		fmt.Fprintf(out, "MNIST 7 vs 9: %d training and %d test images, %d principal components; prior N(0, 10²)\n\n",
			data.NTrain(), data.NTest(), data.D)
	}

	kernels := []exactmh.Kernel{exactmh.MH{}}
	for _, k := range kernels {
		res, err := exactmh.Sample(ctx, post, k, set)
		if res == nil {
			log.Fatal(err)
		}
		if err != nil {
			log.Printf("%s: %v (reporting the %s run)", k.Name(), err, res.Status)
		}
		s := res.Summary()
		acc := data.Accuracy(res.Mean())
		if err := saveOutputs(cf, res); err != nil {
			log.Fatal(err)
		}
		if *asJSON {
			report.Write(out, report.Row(res, map[string]any{
				"rhat_max": report.OrNull(s.MaxRHat()), "test_accuracy": acc,
			}))
			continue
		}
		shown := *s
		if *rows > 0 && len(shown.Params) > *rows {
			shown.Params = shown.Params[:*rows]
		}
		fmt.Fprint(out, &shown)
		if len(shown.Params) < len(s.Params) {
			fmt.Fprintf(out, "  … %d more parameters (-rows 0 shows all)\n", len(s.Params)-len(shown.Params))
		}
		fmt.Fprintf(out, "\n%s: acceptance %.3f, %.0f datum evaluations per step (N = %d), min bulk ESS %.0f, %.1f ESS/s, max R-hat %.3f, %.1fs wall\n",
			s.Kernel, s.AcceptRate, s.EvalsPerStep, res.N, s.MinESSBulk(), s.MinESSPerSecond(), s.MaxRHat(), res.Elapsed.Seconds())
		fmt.Fprintf(out, "test accuracy of the posterior mean: %.2f%% (%d test images)\n", 100*acc, data.NTest())
	}
	if !*asJSON {
		// With N = 1638 and 50 weights, a minibatch kernel's bound costs
		// about as much as reading every datum (TunaMH falls back to full
		// MH at this step size); they win on tall data.
		fmt.Fprintln(out, "\nN here is small enough for full-batch MH; for tall data, see go run ./examples/tgm (N = 10⁶) and examples/README.md.")
	}
}

// saveOutputs writes, with -out DIR, each chain's Stan CSV and a trace plot
// of the first coefficient.
func saveOutputs(cf *report.Common, res *exactmh.Result) error {
	if cf.Out == "" {
		return nil
	}
	if err := cf.SaveStanCSV(res, "quickstart_"+res.Kernel, nil); err != nil {
		return err
	}
	var series []figure.Series
	for c, ch := range res.Chains {
		s := figure.Series{Name: fmt.Sprintf("chain %d", c+1)}
		for k := range ch.Len() {
			s.X = append(s.X, float64(k))
			s.Y = append(s.Y, res.Draw(c, k)[0])
		}
		series = append(series, s)
	}
	return figure.Lines(filepath.Join(cf.Out, "quickstart_trace.png"), figure.Layout{
		Title: res.Kernel + ": trace of θ1 (first principal component)", XLabel: "draw", YLabel: "θ1",
		Width: 7 * vg.Inch, Height: 3.5 * vg.Inch, LegendTop: true}, series)
}
