// Copyright ©2026 The exactmh Authors. All rights reserved.
// Use of this source code is governed by a BSD-style
// license that can be found in the LICENSE file.

package stancsv_test

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"strings"

	"github.com/exactmh/exactmh"
	"github.com/exactmh/exactmh/model"
	"github.com/exactmh/exactmh/stancsv"
)

// logistic returns a logistic-regression posterior on n simulated points
// with true coefficients (1, −2).
func logistic(n int) *exactmh.Posterior {
	rng := rand.New(rand.NewPCG(1, 2))
	x := make([]float64, 2*n)
	y := make([]float64, n)
	for i := range n {
		x[2*i], x[2*i+1] = rng.NormFloat64(), rng.NormFloat64()
		if rng.Float64() < 1/(1+math.Exp(-(x[2*i]-2*x[2*i+1]))) {
			y[i] = 1
		}
	}
	e, err := model.NewLogisticRegression(x, y, 2)
	if err != nil {
		panic(err)
	}
	prior, _ := model.NewIsoGaussian(2, 10)
	return &exactmh.Posterior{Energy: e, Prior: prior}
}

// Write a finished run's chain and read it back. Full-batch MH knows the
// exact log posterior, so the file has an lp__ column.
func ExampleWrite() {
	res, err := exactmh.Sample(context.Background(), logistic(200), exactmh.MH{},
		&exactmh.Settings{Chains: 2, Warmup: 200, Draws: 500, Seed: 1})
	if err != nil {
		panic(err)
	}
	var buf bytes.Buffer
	if err := stancsv.Write(&buf, res, 1, &stancsv.Options{Names: []string{"w1", "w2"}}); err != nil {
		panic(err)
	}
	f, err := stancsv.Read(&buf)
	if err != nil {
		panic(err)
	}
	fmt.Println(strings.Join(f.Columns, ","))
	fmt.Println(len(f.Draws), "draws of", f.ParamNames())
	fmt.Println("algorithm", f.Config["method.sample.algorithm"], "chain", f.Config["id"], "seed", f.Config["random.seed"])
	// Output:
	// lp__,accept_stat__,stepsize__,treedepth__,divergent__,w1,w2
	// 500 draws of [w1 w2]
	// algorithm MH chain 2 seed 1
}

// A Recorder streams each chain to its own writer during the run (NewFiles
// opens prefix_1.csv, prefix_2.csv, …). TunaMH never evaluates the log
// posterior, so its lp__ column holds 0 (and the configuration key
// output.lp__ says so). With Options.DiagnosticColumns, batch_size__
// holds the size of each transition's minibatch (without, the trailer
// holds its mean, File.Diagnostics["batch_size"]).
func ExampleRecorder() {
	var buf bytes.Buffer
	rec := &stancsv.Recorder{Open: func(int) (io.Writer, error) { return &buf, nil },
		Options: stancsv.Options{DiagnosticColumns: true}}
	res, err := exactmh.Sample(context.Background(), logistic(200), exactmh.TunaMH{},
		&exactmh.Settings{Chains: 1, Warmup: 100, Draws: 300, Seed: 1, Recorder: rec})
	if err != nil {
		panic(err)
	}
	f, err := stancsv.Read(&buf)
	if err != nil {
		panic(err)
	}
	batch, _ := f.Column("batch_size__")
	same := len(batch) == len(res.Chains[0].Infos)
	for i, b := range batch {
		same = same && int(b) == res.Chains[0].Infos[i].Batch
	}
	fmt.Println(strings.Join(f.Columns, ","))
	fmt.Println(len(f.Draws), "draws; batch_size__ is Info.Batch:", same)
	fmt.Println("mean batch:", math.Abs(f.Diagnostics["batch_size"]-res.Summary().MeanBatch) < 1e-5*res.Summary().MeanBatch)
	// Output:
	// lp__,accept_stat__,stepsize__,treedepth__,divergent__,accepted__,batch_size__,n_energy__,n_grad__,theta.1,theta.2
	// 300 draws; batch_size__ is Info.Batch: true
	// mean batch: true
}

// Read also reads CmdStan's own files: nested configuration comments,
// nan and inf, the adaptation and timing comments.
func ExampleRead() {
	const file = `# model = bernoulli_model
# method = sample (Default)
#   sample
#     num_samples = 2
lp__,accept_stat__,theta
# Adaptation terminated
# Step size = 0.93
-7.1,0.98,0.25
-inf,nan,0.01
# 
#  Elapsed Time: 0.005 seconds (Warm-up)
#                0.001 seconds (Sampling)
#                0.006 seconds (Total)
`
	f, err := stancsv.Read(strings.NewReader(file))
	if err != nil {
		panic(err)
	}
	theta, _ := f.Column("theta")
	fmt.Println(f.Config["model"], f.Config["method"], f.Config["method.sample.num_samples"])
	fmt.Println(f.ParamNames(), theta, f.Draws[1][:2])
	fmt.Println(f.StepSize, f.WarmupSeconds, f.SamplingSeconds)
	// Output:
	// bernoulli_model sample 2
	// [theta] [0.25 0.01] [-Inf NaN]
	// 0.93 0.005 0.001
}
