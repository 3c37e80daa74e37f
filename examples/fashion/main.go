// Copyright ©2026 The exactmh Authors. All rights reserved.
// Use of this source code is governed by a BSD-style
// license that can be found in the LICENSE file.

// Command fashion measures the automatic default on a real mid-size
// classification: Fashion-MNIST (Debian's dataset-fashion-mnist, 70,000
// images in /usr/share/datasets/fashion-mnist), one class against the rest,
// a logistic regression on the first 50 principal components of the
// training images and an intercept (d = 51), prior N(0, 10²) on each
// coefficient. The training split is 60,000 images (1/7 held out, shuffled
// with -seed), the posterior's N.
//
// It prints the choice, data read per transition, min bulk and tail ESS,
// R-hat, and min bulk ESS per CPU-second of the whole run (the choice —
// MAP, Laplace, control variates, pilots — warmup and sampling; the
// loading and PCA are not counted), read from getrusage so that a loaded
// machine does not inflate it, and per second of wall time. -export DIR
// writes the data for Stan's NUTS (examples/tall/stan/run.R with
// logreg_normal.stan, a posterior named fashion*).
//
//	go run ./examples/fashion
//	go run ./examples/fashion -export /tmp/fashion
//	Rscript examples/tall/stan/run.R /tmp/fashion /tmp/fashion/stan fashion_c0 1 1
package main

import (
	"context"
	"flag"
	"fmt"
	"log"
	"math"
	"path/filepath"
	"runtime"
	"time"

	"github.com/exactmh/exactmh"
	"github.com/exactmh/exactmh/examples/internal/report"
	"github.com/exactmh/exactmh/internal/mnist"
	"github.com/exactmh/exactmh/model"
)

// priorSD is the prior's standard deviation on every coefficient (the
// Stan program's sigma).
const priorSD = 10

func main() {
	cf := report.RegisterCommon(runtime.GOMAXPROCS(0), 1000)
	dir := flag.String("dir", "/usr/share/datasets/fashion-mnist", "directory of Fashion-MNIST's four IDX files (Debian's dataset-fashion-mnist)")
	class := flag.Int("class", 0, "the class labelled 1 (0 = T-shirt/top … 9 = ankle boot); every other is 0")
	comps := flag.Int("components", 50, "principal components")
	warmup := flag.Int("warmup", 1000, "warmup transitions per chain")
	exportTo := flag.String("export", "", "only write the data as CSV (hexadecimal reals) to this directory")
	cpuprofile := flag.String("cpuprofile", "", "write a CPU profile of the sampling (everything after the PCA) to this file")
	phases := flag.Bool("phases", false, "print the process's CPU time at each step of the automatic default's choice")
	kernel := flag.String("kernel", "auto", "auto (the automatic default), or TFMH-CV-CN or TunaMH-CV-CN on the same Laplace approximation, without pilots")
	flag.Parse()
	log.SetFlags(0)
	log.SetPrefix("fashion: ")
	if cf.Quick {
		*warmup, cf.Draws = 200, 300
	}
	split, err := load(*dir, *class, *comps, cf.Seed)
	if err != nil {
		log.Fatalf("%v (install Debian's dataset-fashion-mnist, or give -dir)", err)
	}
	d := split.D
	e, err := model.NewLogisticRegression(split.TrainX, split.TrainY, d)
	if err != nil {
		log.Fatal(err)
	}
	name := fmt.Sprintf("fashion_c%d", *class)
	if *exportTo != "" {
		if err := export(*exportTo, name, e, d); err != nil {
			log.Fatal(err)
		}
		return
	}
	prior, err := model.NewIsoGaussian(d, priorSD)
	if err != nil {
		log.Fatal(err)
	}
	post := &exactmh.Posterior{Energy: e, Prior: prior}
	set := &exactmh.Settings{Chains: cf.Chains, Warmup: *warmup, Draws: cf.Draws, Seed: cf.Seed}
	if !cf.Quiet {
		set.Recorder = cf.Progress()
	}
	stopProfile := report.StartCPUProfile(*cpuprofile)
	cpu0, wall0 := report.CPUTime(), time.Now()
	if *phases {
		set.ChoiceProgress = func(step string) {
			fmt.Printf("%8.2f CPU-s %s\n", (report.CPUTime() - cpu0).Seconds(), step)
		}
	}
	run, k := post, exactmh.Kernel(nil)
	if *kernel != "auto" {
		run, k, err = fixedKernel(post, *kernel)
		if err != nil {
			log.Fatal(err)
		}
	}
	res, err := exactmh.Sample(context.Background(), run, k, set)
	if err != nil {
		log.Fatal(err)
	}
	cpu, wall := report.CPUTime()-cpu0, time.Since(wall0)
	if *phases {
		fmt.Printf("%8.2f CPU-s done\n", cpu.Seconds())
	}
	stopProfile()
	s := res.Summary()
	minTail := math.Inf(1)
	for _, p := range s.Params {
		minTail = math.Min(minTail, p.ESSTail)
	}
	fmt.Printf("Fashion-MNIST class %d vs rest: N = %d, d = %d (%d components and an intercept), %d chains × (%d + %d) on %d cores\n",
		*class, e.Len(), d, *comps, cf.Chains, *warmup, cf.Draws, runtime.GOMAXPROCS(0))
	if res.Choice != nil {
		fmt.Printf("chose %s\n", res.Choice)
	} else {
		fmt.Printf("kernel %s (no pilots)\n", *kernel)
	}
	fmt.Printf("%.4g data per transition (%.3g%% of N), acceptance %.3f; min bulk ESS %.0f, min tail ESS %.0f, max R-hat %.4f\n",
		s.EvalsPerStep, 100*s.EvalsPerStep/float64(e.Len()), s.AcceptRate, s.MinESSBulk(), minTail, s.MaxRHat())
	fmt.Printf("everything (MAP, Laplace, control variates, pilots, warmup and sampling): %.2f CPU-s, %.2f s wall: min bulk ESS per CPU-second %.4g, per wall second %.4g\n",
		cpu.Seconds(), wall.Seconds(), s.MinESSBulk()/cpu.Seconds(), s.MinESSBulk()/wall.Seconds())
	fmt.Printf("test accuracy of the posterior mean %.4f\n", split.Accuracy(res.Mean()))
	for _, w := range s.Warnings {
		fmt.Printf("warning: %s\n", w)
	}
	if cf.Out != "" {
		if err := cf.SaveStanCSV(res, name, nil); err != nil {
			log.Fatal(err)
		}
	}
}

// fixedKernel returns the posterior and kernel name (TFMH-CV-CN or
// TunaMH-CV-CN) as the automatic default would build them, from the same
// MAP search, without pilots.
func fixedKernel(post *exactmh.Posterior, name string) (*exactmh.Posterior, exactmh.Kernel, error) {
	var k exactmh.Kernel
	switch name {
	case "TFMH-CV-CN":
		k = exactmh.TFMH{}
	case "TunaMH-CV-CN":
		k = exactmh.TunaMH{}
	default:
		return nil, nil, fmt.Errorf("-kernel %q: want auto, TFMH-CV-CN or TunaMH-CV-CN", name)
	}
	la, err := exactmh.FindLaplace(context.Background(), post, make([]float64, post.Dim()), &exactmh.MAPSettings{Tol: exactmh.AutoMAPTol})
	if err != nil {
		return nil, nil, err
	}
	kk, pp, _, err := exactmh.WithLaplace(post, la, k, true, true)
	return pp, kk, err
}

// load reads both Fashion-MNIST splits (70,000 images) and prepares class
// vs rest on comps principal components of the training images, with an
// intercept, 1/7 held out.
func load(dir string, class, comps int, seed uint64) (*mnist.Split, error) {
	var img, lab []byte
	for _, set := range []string{"train", "t10k"} {
		i, l, err := mnist.ReadIDX(filepath.Join(dir, set+"-images-idx3-ubyte.gz"), filepath.Join(dir, set+"-labels-idx1-ubyte.gz"))
		if err != nil {
			return nil, err
		}
		img, lab = append(img, i...), append(lab, l...)
	}
	return mnist.LoadImages(img, lab, mnist.Options{Positive: class, Rest: true, Components: comps,
		TestFraction: 1.0 / 7, Seed: seed, Intercept: true})
}

// export writes DIR/NAME.csv (y,x1,…,xd, reals in hexadecimal, which R
// reads exactly) and DIR/NAME_constants.csv (n, d, sigma).
func export(dir, name string, e *model.LogisticRegression, d int) error {
	cols := []string{"y"}
	for j := range d {
		cols = append(cols, fmt.Sprintf("x%d", j+1))
	}
	return report.ExportCSV(dir, name, cols, e.Len(), func(b []byte, i int) []byte {
		b = report.HexFloat(b, e.Label(i))
		for _, v := range e.Row(i) {
			b = report.HexFloat(append(b, ','), v)
		}
		return b
	}, "d", fmt.Sprint(d), "sigma", fmt.Sprint(priorSD))
}
