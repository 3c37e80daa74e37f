// Bayesian logistic regression on the bundled MNIST digits (TunaMH paper
// §5.3; auxiliary-variable paper §5.3, App. E.3–E.4).
//
// For the digit pairs 7 vs 9 and 3 vs 5 (PCA-50 features fitted on the
// training split, no intercept, flat prior) the program runs MH, MALA, HMC
// (5 leapfrog steps), TunaMH and TunaMH-SGLD (χ = 10⁻⁵, K = 20, gradient
// clipped to norm 2) at the step sizes 8·10⁻⁴, 10⁻³, 2·10⁻³ and 4·10⁻³, one
// chain each from a Kaiming-uniform start for a fixed wall-clock budget, and
// prints the test accuracy of the running posterior mean (predict the
// positive digit iff x·θ̄ > 0) at fixed times. With -out DIR it writes one
// accuracy-versus-time PNG per digit pair, each kernel at its best step.
//
// The bundled set holds 10,000 digits (2,048 sevens and nines), not the
// 60,000 of the papers, so N is about 1,640 rather than 12,214 and TunaMH's
// batch is about 85 rather than 504 (E[B] = χC²M² + CM scales with N); the
// shape of the curves — the minibatch kernels reaching a good accuracy
// sooner — is what to compare with the papers' figures.
//
//	go run ./examples/mnist
//	go run ./examples/mnist -pairs 7v9 -steps 1e-3 -out figures
package main

import (
	"flag"
	"fmt"
	"log"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"context"

	"github.com/exactmh/exactmh"
	"github.com/exactmh/exactmh/examples/internal/figure"
	"github.com/exactmh/exactmh/examples/internal/report"
	"github.com/exactmh/exactmh/internal/mnist"
	"gonum.org/v1/plot/vg"
)

func main() {
	cf := report.RegisterCommon(1, 0)
	pairs := flag.String("pairs", "7v9,3v5", "comma-separated digit pairs, positive v negative")
	steps := flag.String("steps", "8e-4,1e-3,2e-3,4e-3", "comma-separated step sizes")
	budget := flag.Duration("budget", 2500*time.Millisecond, "wall-clock time per run")
	only := flag.String("kernels", "", "comma-separated kernel names to run (default: all)")
	flag.Parse()
	seed, asJSON, quick, quiet, out := &cf.Seed, &cf.JSON, &cf.Quick, &cf.Quiet, &cf.Out
	log.SetFlags(0)
	log.SetPrefix("mnist: ")
	if *quick {
		*pairs, *steps, *budget = "7v9", "1e-3", 300*time.Millisecond
	}
	hs, err := floats(*steps)
	if err != nil {
		log.Fatalf("-steps: %v", err)
	}
	want := map[string]bool{}
	for _, k := range strings.Split(*only, ",") {
		if k != "" {
			want[k] = true
		}
	}
	checkpoints := []time.Duration{*budget / 25, *budget / 10, *budget / 5, *budget / 2, *budget}

	for _, pair := range strings.Split(*pairs, ",") {
		pos, neg, err := parsePair(pair)
		if err != nil {
			log.Fatalf("-pairs: %v", err)
		}
		opt := mnist.DefaultOptions()
		opt.Positive, opt.Negative, opt.Seed = pos, neg, *seed
		data, err := mnist.Load(opt)
		if err != nil {
			log.Fatal(err)
		}
		energy, err := exactmh.NewLogisticRegression(data.TrainX, data.TrainY, data.D)
		if err != nil {
			log.Fatal(err)
		}
		post := &exactmh.Posterior{Energy: energy}
		init := kaiming(data.D, *seed)
		if !*asJSON {
			fmt.Printf("\nMNIST %d vs %d: %d training and %d test images, %d components, flat prior, %v per run\n",
				pos, neg, data.NTrain(), data.NTest(), data.D, *budget)
			fmt.Printf("%-12s %8s %7s %10s", "kernel", "step", "accept", "mean batch")
			for _, c := range checkpoints {
				fmt.Printf(" %9s", "acc@"+round(c))
			}
			fmt.Println()
		}
		best := map[string]figure.Series{}
		bestAcc := map[string]float64{}
		var names []string
		for _, h := range hs {
			for _, k := range kernels(h) {
				if len(want) > 0 && !want[k.Name()] {
					continue
				}
				set := &exactmh.Settings{Chains: cf.Chains, Draws: cf.Draws, Warmup: exactmh.NoWarmup, NoAdapt: true,
					Duration: *budget, Init: init, Seed: *seed, Recorder: cf.Progress()}
				res, err := exactmh.Sample(context.Background(), post, k, set)
				if err != nil {
					log.Fatalf("%s, step %g: %v", k.Name(), h, err)
				}
				if err := cf.SaveStanCSV(res, fmt.Sprintf("mnist_%dv%d_%s_%g", pos, neg, res.Kernel, h), nil); err != nil {
					log.Fatal(err)
				}
				curve := accuracyCurve(res, data, checkpoints)
				s := res.Summary()
				if *asJSON {
					at := map[string]any{}
					for i, c := range checkpoints {
						at[round(c)] = report.OrNull(curve[i])
					}
					report.Write(os.Stdout, report.Row(res, map[string]any{
						"pair": pair, "step": h, "test_accuracy": report.OrNull(curve[len(curve)-1]), "accuracy_at": at,
					}))
				} else {
					fmt.Printf("%-12s %8.0e %7.3f %10.1f", res.Kernel, h, s.AcceptRate, s.MeanBatch)
					for _, a := range curve {
						fmt.Printf(" %9.4f", a)
					}
					fmt.Println()
				}
				if final := curve[len(curve)-1]; !(final <= bestAcc[res.Kernel]) {
					if _, seen := bestAcc[res.Kernel]; !seen {
						names = append(names, res.Kernel)
					}
					bestAcc[res.Kernel] = final
					best[res.Kernel] = fineCurve(res, data, *budget, fmt.Sprintf("%s (%.0e)", res.Kernel, h))
				}
			}
		}
		if *out != "" {
			var series []figure.Series
			for _, n := range names {
				series = append(series, best[n])
			}
			path := filepath.Join(*out, fmt.Sprintf("mnist_%dv%d.png", pos, neg))
			if err := figure.Lines(path, figure.Layout{Title: fmt.Sprintf("MNIST %d vs %d: test accuracy of the running mean", pos, neg),
				XLabel: "seconds", YLabel: "test accuracy", LogX: true, LegendTop: false, Width: 6 * vg.Inch, Height: 4 * vg.Inch}, series); err != nil {
				log.Fatal(err)
			}
			if !*quiet {
				log.Printf("wrote %s", path)
			}
		}
	}
}

// kernels returns the five kernels at step size h.
func kernels(h float64) []exactmh.Kernel {
	return []exactmh.Kernel{
		exactmh.MH{Scale: h},
		exactmh.MALA{Scale: h},
		exactmh.HMC{Scale: h, Steps: 5},
		exactmh.TunaMH{Scale: h, Chi: 1e-5},
		exactmh.TunaMHSGLD{Scale: h, Chi: 1e-5, GradBatch: 20, Clip: 2},
	}
}

// kaiming is the papers' start: θ_j ~ U(−b, b), b = 1/√d.
func kaiming(d int, seed uint64) []float64 {
	rng := rand.New(rand.NewPCG(seed, 222))
	b := 1 / math.Sqrt(float64(d))
	th := make([]float64, d)
	for j := range th {
		th[j] = b * (2*rng.Float64() - 1)
	}
	return th
}

// runningMean returns the mean of the draws of every chain made by time t
// (nil if none).
func runningMean(res *exactmh.Result, t time.Duration) []float64 {
	mean := make([]float64, res.Dim)
	n := 0
	for _, ch := range res.Chains {
		for k, tk := range ch.Times {
			if tk > t {
				break
			}
			for j := range mean {
				mean[j] += ch.Draws[k*res.Dim+j]
			}
			n++
		}
	}
	if n == 0 {
		return nil
	}
	for j := range mean {
		mean[j] /= float64(n)
	}
	return mean
}

// accuracyCurve is the test accuracy of the running mean at each time.
func accuracyCurve(res *exactmh.Result, data *mnist.Split, ts []time.Duration) []float64 {
	out := make([]float64, len(ts))
	for i, t := range ts {
		out[i] = math.NaN()
		if m := runningMean(res, t); m != nil {
			out[i] = data.Accuracy(m)
		}
	}
	return out
}

// fineCurve samples the accuracy curve at 30 log-spaced times for the plot.
func fineCurve(res *exactmh.Result, data *mnist.Split, budget time.Duration, name string) figure.Series {
	s := figure.Series{Name: name}
	lo := budget.Seconds() / 300
	for k := range 30 {
		t := lo * math.Pow(budget.Seconds()/lo, float64(k)/29)
		if m := runningMean(res, time.Duration(t*float64(time.Second))); m != nil {
			s.X = append(s.X, t)
			s.Y = append(s.Y, data.Accuracy(m))
		}
	}
	return s
}

// parsePair reads "7v9".
func parsePair(s string) (pos, neg int, err error) {
	a, b, ok := strings.Cut(strings.TrimSpace(s), "v")
	if !ok {
		return 0, 0, fmt.Errorf("%q is not of the form 7v9", s)
	}
	if pos, err = strconv.Atoi(a); err != nil {
		return 0, 0, err
	}
	if neg, err = strconv.Atoi(b); err != nil {
		return 0, 0, err
	}
	return pos, neg, nil
}

// floats parses a comma-separated list of positive numbers.
func floats(s string) ([]float64, error) {
	var out []float64
	for _, f := range strings.Split(s, ",") {
		v, err := strconv.ParseFloat(strings.TrimSpace(f), 64)
		if err != nil || !(v > 0) {
			return nil, fmt.Errorf("%q is not a positive number", f)
		}
		out = append(out, v)
	}
	return out, nil
}

// round prints a duration briefly (0.1s, 2.5s).
func round(d time.Duration) string {
	return strconv.FormatFloat(d.Seconds(), 'g', 3, 64) + "s"
}
