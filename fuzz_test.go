// Copyright ©2026 The exactmh Authors. All rights reserved.
// Use of this source code is governed by a BSD-style
// license that can be found in the LICENSE file.

package exactmh_test

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"io"
	"math"
	"strings"
	"testing"
	"time"

	"gonum.org/v1/gonum/mat"

	"github.com/exactmh/exactmh"
	"github.com/exactmh/exactmh/model"
	"github.com/exactmh/exactmh/progress"
)

// FuzzLoadCheckpoint feeds LoadCheckpoint arbitrary files, seeded with
// valid checkpoints of kernels with every kind of saved state (completed
// and cancelled runs) and truncated and bit-flipped copies of them. It must
// never panic; a file it loads must give a Result whose draws and summary
// can be read and that Resume continues, a few transitions, without panic
// or hang.
//
//	go test -run '^$' -fuzz FuzzLoadCheckpoint -fuzztime 10s .
func FuzzLoadCheckpoint(f *testing.F) {
	p, byName, init := checkpointKernels(f)
	names := []string{"MH", "TunaMH", "FlyMC", "MHBT", "MHBT-RSGLD", "AustereMH", "TunaMH-SGLD"}
	kernels := make([]exactmh.Kernel, len(names))
	for i, name := range names {
		kernels[i] = byName[name]
		for _, cut := range []int64{0, 30, 90} {
			file := savedRun(f, p, kernels[i], init, cut)
			f.Add(uint8(i), file)
			if cut == 0 {
				f.Add(uint8(i), file[:len(file)/2])
				flipped := bytes.Clone(file)
				flipped[len(flipped)*2/3] ^= 0x10
				f.Add(uint8(i), flipped)
			}
		}
	}
	f.Fuzz(func(t *testing.T, ki uint8, file []byte) {
		loadAndResume(t, p, kernels[int(ki)%len(kernels)], file)
	})
}

// loadAndResume loads file; if it loads, the draws and summary must be
// readable and Resume must run 20 transitions without panic or hang.
func loadAndResume(t *testing.T, p *exactmh.Posterior, k exactmh.Kernel, file []byte) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	rec := &stoppingProgress{progress.New(io.Discard, time.Hour), &cancelAt{n: 20, cancel: cancel}}
	res, err := exactmh.LoadCheckpoint(bytes.NewReader(file), p, k, rec)
	if err != nil {
		return
	}
	for c, ch := range res.Chains {
		for i := range ch.Len() {
			_ = res.Draw(c, i)
		}
	}
	_ = res.Summary().String()
	done := make(chan struct{})
	go func() {
		defer close(done)
		exactmh.Resume(ctx, res, 1)
	}()
	select {
	case <-done:
	case <-time.After(30 * time.Second):
		t.Fatal("Resume of a loaded checkpoint hangs")
	}
	if ctx.Err() == context.DeadlineExceeded {
		t.Fatal("Resume of a loaded checkpoint ran 10 s for 20 transitions")
	}
}

// stoppingProgress is a progress.Printer (a ResumeRecorder: Resume initialises it
// from the run so far) that cancels the run after a few transitions.
type stoppingProgress struct {
	*progress.Printer
	stop *cancelAt
}

func (s *stoppingProgress) Record(e *exactmh.Event) error {
	s.stop.Record(e)
	return s.Printer.Record(e)
}

// FuzzCheckpointFields edits one field of a valid checkpoint at a time —
// settings, counts, positions, scales, adaptation, kernel states — to
// arbitrary values, which random bytes rarely reach through gob. The
// checks of FuzzLoadCheckpoint apply.
//
//	go test -run '^$' -fuzz FuzzCheckpointFields -fuzztime 10s .
func FuzzCheckpointFields(f *testing.F) {
	p, byName, init := checkpointKernels(f)
	names := []string{"MH", "TunaMH", "FlyMC", "MHBT", "MHBT-RSGLD", "AustereMH", "TunaMH-SGLD"}
	kernels := make([]exactmh.Kernel, len(names))
	var files [][]byte
	for i, name := range names {
		kernels[i] = byName[name]
		for _, cut := range []int64{0, 30, 90} {
			files = append(files, savedRun(f, p, kernels[i], init, cut))
		}
	}
	for field := range uint8(24) {
		f.Add(uint8(3*field), field, int64(-1), 0.0)
		f.Add(uint8(3*field+1), field, int64(1), math.NaN())
	}
	f.Fuzz(func(t *testing.T, which, field uint8, v int64, x float64) {
		i := int(which) % len(files)
		k := kernels[i/3]
		n := int(v)
		file := exactmh.EditCheckpoint(files[i], func(cp *exactmh.CheckpointFile) {
			cc := &cp.Chains[int(uint64(v)%uint64(len(cp.Chains)))]
			r := &cc.Result
			switch field % 24 {
			case 0:
				cp.Settings.Workers = n
			case 1:
				cp.Settings.Chains = n
			case 2:
				cp.Settings.Warmup = n
			case 3:
				cp.Settings.Draws = n
			case 4:
				cp.Settings.Thin = n
			case 5:
				cp.Settings.TargetAccept = x
			case 6:
				cp.Settings.Duration = time.Duration(v)
			case 7:
				cp.Status = exactmh.Status(n)
			case 8:
				cc.Next = n
			case 9:
				cc.Next += n % 8
			case 10:
				r.Draws = r.Draws[:min(len(r.Draws), max(n, 0))]
			case 11:
				r.Infos = r.Infos[:min(len(r.Infos), max(n, 0))]
			case 12:
				cc.Theta[n&1] = x
			case 13:
				cc.Scale = x
			case 14:
				r.Scale = x
			case 15:
				cc.Adapt.LogAvg = x
			case 16:
				cc.Adapt.T = n
			case 17:
				r.Chain = n
			case 18:
				r.Warmup.Steps += n % 4
			case 19, 20, 21:
				if len(cc.State) > 0 { // a byte of the kernel's state
					cc.State[int(uint64(v)%uint64(len(cc.State)))] ^= byte(field)
				}
			case 22:
				cc.WarmupAware = !cc.WarmupAware
			case 23:
				cp.Settings.NoAdapt = !cp.Settings.NoAdapt
			}
		})
		loadAndResume(t, p, k, file)
	})
}

// floats decodes raw as float64s, 8 bytes each (a tail shorter than 8
// bytes is dropped): every bit pattern, NaNs and infinities included.
func floats(raw []byte) []float64 {
	v := make([]float64, len(raw)/8)
	for i := range v {
		v[i] = math.Float64frombits(binary.LittleEndian.Uint64(raw[8*i:]))
	}
	return v
}

// bytesOf encodes v as floats decodes it.
func bytesOf(v ...float64) []byte {
	b := make([]byte, 8*len(v))
	for i, x := range v {
		binary.LittleEndian.PutUint64(b[8*i:], math.Float64bits(x))
	}
	return b
}

// FuzzEnergyConstructors builds every ready-made energy — logistic,
// Student-t, the GLM families, the Gaussian mixture and mean — from
// arbitrary data, dimensions and parameters. A constructor must never
// panic: it returns an error, or an energy of the N and d it was given
// whose energies, gradients (where it has them) and bounds can be
// evaluated, without panic, at the origin.
//
//	go test -run '^$' -fuzz FuzzEnergyConstructors -fuzztime 60s .
func FuzzEnergyConstructors(f *testing.F) {
	f.Add(uint8(0), uint8(2), int64(2), 1.0, bytesOf(0.5, -1, 2, 0.25, 1, 0))
	f.Add(uint8(1), uint8(2), int64(2), 3.0, bytesOf(0.5, -1, 2, 0.25, 1.5, -2))
	f.Add(uint8(2), uint8(3), int64(1), 0.5, bytesOf(1, 2, 3, 0.1, 0.2, 0.3))
	f.Add(uint8(3), uint8(2), int64(2), 0.0, bytesOf(1, 0, 0.5, 0.5, 3, 0))
	f.Add(uint8(4), uint8(2), int64(1), 0.0, bytesOf(1, 0, 0.5, -0.5))
	f.Add(uint8(5), uint8(0), int64(1), 2.0, bytesOf(0.5, -1, 2, 3))
	f.Add(uint8(6), uint8(0), int64(2), 1.0, bytesOf(0.5, -1, 2, 3))
	f.Add(uint8(0), uint8(4), int64(1)<<62, 1.0, []byte{})
	f.Add(uint8(6), uint8(0), int64(-3), 1e-300, bytesOf(1, 2, 3))
	f.Fuzz(func(t *testing.T, kind, ny uint8, d64 int64, param float64, raw []byte) {
		d := int(d64)
		v := floats(raw)
		m := min(int(ny), len(v))
		y, x := v[:m], v[m:]
		var e exactmh.Energy
		var err error
		switch kind % 7 {
		case 0:
			for i := range y { // mostly valid labels
				y[i] = math.Float64frombits(math.Float64bits(y[i]) & 1)
				if y[i] != 0 {
					y[i] = 1
				}
			}
			e, err = model.NewLogisticRegression(x, y, d)
		case 1:
			e, err = model.NewStudentTRegression(x, y, d, param)
		case 2:
			e, err = model.NewGLM(x, y, d, model.GaussianFamily{Sigma: param})
		case 3:
			e, err = model.NewGLM(x, y, d, model.PoissonFamily{})
		case 4:
			e, err = model.NewGLM(x, y, d, model.ProbitFamily{})
		case 5:
			e, err = model.NewGaussianMixture(v, param)
		case 6:
			var sigma *mat.SymDense
			if d > 0 && d <= 8 {
				sigma = mat.NewSymDense(d, nil)
				for j := range d {
					sigma.SetSym(j, j, param)
				}
			}
			e, err = model.NewGaussianMean(v, d, sigma)
		}
		if err != nil {
			return
		}
		switch {
		case e.Len() <= 0 || e.Dim() <= 0:
			t.Fatalf("accepted an energy with N = %d, d = %d", e.Len(), e.Dim())
		case kind%7 < 5 && (e.Len() != len(y) || e.Dim() != d):
			t.Fatalf("N = %d, d = %d from %d responses and d = %d", e.Len(), e.Dim(), len(y), d)
		}
		checkEnergy(t, e)
	})
}

// checkEnergy evaluates an accepted energy at the origin through a
// Target — energies, gradient — and asks the posterior for its bounds:
// errors are allowed (a bound may not exist, an energy may overflow),
// panics are not.
func checkEnergy(t *testing.T, e exactmh.Energy) {
	p := &exactmh.Posterior{Energy: e}
	if err := p.Validate(); err != nil {
		t.Fatalf("the constructor accepted an energy Validate refuses: %v", err)
	}
	tgt, err := exactmh.NewTarget(p)
	if err != nil {
		t.Fatal(err)
	}
	theta := make([]float64, e.Dim())
	tgt.TotalEnergy(theta)
	idx := []int{0, e.Len() - 1}
	dst := make([]float64, 2)
	tgt.Energies(dst, theta, idx)
	if tgt.HasGradient() {
		tgt.AddGradient(make([]float64, e.Dim()), theta, idx, nil)
	}
	p.DiffBound()
	p.EnergyRange()
}

// FuzzPriorConstructors builds every ready-made prior — Box, Cube, Ball,
// Gaussian, IsoGaussian, Laplace, IsoLaplace — from arbitrary dimensions
// and parameters. A constructor must never panic: it returns an error, or
// a prior of the dimension asked for whose log density at its centre is
// finite and whose gradient there is finite.
//
//	go test -run '^$' -fuzz FuzzPriorConstructors -fuzztime 60s .
func FuzzPriorConstructors(f *testing.F) {
	f.Add(uint8(0), int64(2), 0.0, 1.0, bytesOf(-1, 1, 0, 2))
	f.Add(uint8(1), int64(3), -1.0, 1.0, []byte{})
	f.Add(uint8(2), int64(2), 1.0, 0.0, bytesOf(0.5, 0.5))
	f.Add(uint8(3), int64(2), 0.0, 0.0, bytesOf(0, 1, 1, 2))
	f.Add(uint8(4), int64(2), 1e-160, 0.0, []byte{})
	f.Add(uint8(5), int64(1), 0.0, 0.0, bytesOf(0, 1e-300))
	f.Add(uint8(6), int64(1)<<40, 1.0, 0.0, []byte{})
	f.Fuzz(func(t *testing.T, kind uint8, d64 int64, a, b float64, raw []byte) {
		d := int(d64)
		if d > 1<<16 && d <= exactmh.MaxDim {
			return // valid, but too large to allocate while fuzzing
		}
		v := floats(raw)
		half := v[:len(v)/2]
		rest := v[len(v)/2:][:len(half)]
		var pr exactmh.Prior
		var center []float64
		var err error
		switch kind % 7 {
		case 0:
			var box *model.Box
			if box, err = model.NewBox(half, rest); err == nil {
				pr, center, d = box, mid(box.Lo, box.Hi), len(half)
			}
		case 1:
			var box *model.Box
			if box, err = model.NewCube(d, a, b); err == nil {
				pr, center = box, mid(box.Lo, box.Hi)
			}
		case 2:
			var c []float64
			if len(v) > 0 {
				c = v
			}
			var ball *model.Ball
			if ball, err = model.NewBall(d, a, c); err == nil {
				pr, center = ball, ball.Center
			}
		case 3:
			var g *model.Gaussian
			if g, err = model.NewGaussian(half, rest); err == nil {
				pr, center, d = g, g.Mean, len(half)
			}
		case 4:
			var g *model.Gaussian
			if g, err = model.NewIsoGaussian(d, a); err == nil {
				pr, center = g, g.Mean
			}
		case 5:
			var l *model.Laplace
			if l, err = model.NewLaplace(half, rest); err == nil {
				pr, center, d = l, l.Mean, len(half)
			}
		case 6:
			var l *model.Laplace
			if l, err = model.NewIsoLaplace(d, a); err == nil {
				pr, center = l, l.Mean
			}
		}
		if err != nil {
			return
		}
		if center == nil {
			center = make([]float64, d)
		}
		if len(center) != d {
			t.Fatalf("a prior of dimension %d has a centre of length %d", d, len(center))
		}
		if lp := pr.LogPrior(center); math.IsNaN(lp) || math.IsInf(lp, 0) {
			t.Fatalf("log prior %v at its centre", lp)
		}
		if pg, ok := pr.(exactmh.PriorGradienter); ok {
			g := make([]float64, d)
			pg.AddLogPriorGradient(g, center)
			for j, v := range g {
				if math.IsNaN(v) || math.IsInf(v, 0) {
					t.Fatalf("gradient[%d] = %v at the centre", j, v)
				}
			}
		}
	})
}

// mid returns the midpoint of the box [lo, hi] without overflow.
func mid(lo, hi []float64) []float64 {
	m := make([]float64, len(lo))
	for j := range m {
		m[j] = lo[j]/2 + hi[j]/2
		m[j] = min(max(m[j], lo[j]), hi[j])
	}
	return m
}

// FuzzSettings runs Sample on a tiny posterior (20 data, d = 2, a box
// prior) with arbitrary Settings: chain, worker, warmup, draw and thinning
// counts, duration, seed, target acceptance, metric, NoAdapt and initial
// point, and MH, MALA or TunaMH. It must not panic; it returns an error
// before any work, or a result whose Status agrees with the error
// (Completed with none, Canceled with the context's), whose chains made
// the draws they were asked for when they completed, and whose draws are
// finite and inside the prior's support. Runs are cut at 200 ms.
//
//	go test -run '^$' -fuzz FuzzSettings -fuzztime 60s .
func FuzzSettings(f *testing.F) {
	g := boxed(f, 20, 1)
	kernels := []exactmh.Kernel{exactmh.MH{}, exactmh.MALA{}, exactmh.TunaMH{}}
	f.Add(uint8(0), int64(2), int64(0), int64(10), int64(20), int64(1), int64(0), uint64(1), 0.0, uint8(0), false, g.Mean[0], g.Mean[1])
	f.Add(uint8(1), int64(1), int64(1), int64(-1), int64(5), int64(3), int64(0), uint64(7), 0.9, uint8(2), true, g.Mean[0], g.Mean[1])
	f.Add(uint8(2), int64(3), int64(2), int64(30), int64(0), int64(0), int64(time.Millisecond), uint64(0), 0.5, uint8(1), false, g.Mean[0], g.Mean[1])
	f.Add(uint8(0), int64(1), int64(0), int64(0), int64(math.MaxInt64), int64(math.MaxInt64), int64(0), uint64(3), 0.0, uint8(3), false, 100.0, math.NaN())
	f.Fuzz(func(t *testing.T, ki uint8, chains, workers, warmup, draws, thin, dur int64, seed uint64, target float64, metric uint8, noAdapt bool, x0, x1 float64) {
		if chains > 8 && chains <= exactmh.MaxChains {
			return // valid, but too many to start while fuzzing
		}
		set := &exactmh.Settings{Chains: int(chains), Workers: int(workers), Warmup: int(warmup), Draws: int(draws), Thin: int(thin),
			Duration: time.Duration(dur), Seed: seed, TargetAccept: target, NoAdapt: noAdapt,
			Metric: []exactmh.MetricKind{"", exactmh.MetricDiag, exactmh.MetricDense, exactmh.MetricUnit, exactmh.MetricAuto, "bogus"}[int(metric)%6]}
		if !(math.IsNaN(x0) && math.IsNaN(x1)) { // both NaN: the origin
			set.Init = []float64{x0, x1}
		}
		ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
		defer cancel()
		res, err := exactmh.Sample(ctx, g.Posterior, kernels[int(ki)%len(kernels)], set)
		if res == nil {
			if err == nil {
				t.Fatal("no result and no error")
			}
			return
		}
		switch {
		case res.Status == exactmh.Completed && err != nil:
			t.Fatalf("Completed with an error: %v", err)
		case res.Status == exactmh.Canceled && !errors.Is(err, context.DeadlineExceeded):
			t.Fatalf("Canceled with error %v", err)
		case res.Status == exactmh.Failed && err == nil:
			t.Fatal("Failed without an error")
		}
		for c, ch := range res.Chains {
			if res.Status == exactmh.Completed && res.Settings.Duration == 0 && ch.Len() != res.Settings.Draws {
				t.Fatalf("completed chain %d has %d draws of %d", c, ch.Len(), res.Settings.Draws)
			}
			for k := range ch.Len() {
				th := res.Draw(c, k)
				if lp := g.Posterior.Prior.LogPrior(th); math.IsInf(lp, -1) || math.IsNaN(lp) {
					t.Fatalf("chain %d draw %d = %v is outside the prior's support", c, k, th)
				}
			}
		}
		_ = res.Summary().String()
	})
}

// FuzzKernels runs every registered kernel — and the automatic default, and TFMH on the
// control-variate rewrite — for a few transitions on a fuzzed small
// logistic regression (up to 24 data in up to 3 dimensions, a box or no
// prior, any β), asserting no panic and either an error or draws that are
// finite and inside the support. Runs are cut at 300 ms.
//
//	go test -run '^$' -fuzz FuzzKernels -fuzztime 60s .
func FuzzKernels(f *testing.F) {
	f.Add(uint8(0), uint8(10), uint8(2), uint64(1), 1.0, true, []byte{1, 2, 3, 200, 17, 90})
	f.Add(uint8(5), uint8(3), uint8(1), uint64(2), 1e-3, false, []byte{0, 0, 0})
	f.Add(uint8(15), uint8(24), uint8(3), uint64(3), 1e3, true, []byte{255, 1, 128})
	f.Fuzz(func(t *testing.T, ki, n8, d8 uint8, seed uint64, beta float64, boxed bool, raw []byte) {
		n, d := 1+int(n8)%24, 1+int(d8)%3
		if len(raw) == 0 {
			raw = []byte{0}
		}
		x, y := make([]float64, n*d), make([]float64, n)
		for i := range x {
			x[i] = (float64(raw[i%len(raw)]) - 128) / 32
		}
		for i := range y {
			y[i] = float64(raw[(i*7)%len(raw)] % 2)
		}
		e, err := model.NewLogisticRegression(x, y, d)
		if err != nil {
			return
		}
		post := &exactmh.Posterior{Energy: e, Beta: beta}
		if boxed {
			box, err := model.NewCube(d, -2, 2)
			if err != nil {
				t.Fatal(err)
			}
			post.Prior = box
		}
		if post.Validate() != nil {
			return
		}
		center := make([]float64, d)
		// Every registered kernel, NUTS with shallower trees and
		// TunaMH-SGLD with a small gradient batch (the runs are cut at
		// 300 ms); then the automatic default (nil) and TFMH on
		// ControlVariates (a nil func).
		var kernels []func() exactmh.Kernel
		refuses := map[int]bool{} // the multilevel kernels: a flat model is refused
		for _, ki := range exactmh.Kernels() {
			if ki.NeedsMultilevel {
				refuses[len(kernels)] = true
			}
			kernels = append(kernels, func() exactmh.Kernel {
				switch k := ki.New(center).(type) {
				case exactmh.NUTS:
					k.MaxDepth = 5
					return k
				case exactmh.TunaMHSGLD:
					k.Chi, k.GradBatch = 0.1, 3
					return k
				default:
					return k
				}
			})
		}
		kernels = append(kernels, func() exactmh.Kernel { return nil }, nil)
		var k exactmh.Kernel
		pick := int(ki) % len(kernels)
		if f := kernels[pick]; f != nil {
			k = f()
		} else {
			la, err := exactmh.LaplaceAt(post, center)
			if err != nil {
				return
			}
			if post, err = exactmh.ControlVariates(post, la); err != nil {
				return
			}
			k = exactmh.TFMH{}
		}
		if err := fuzzSample(t, post, k, seed); refuses[pick] && (err == nil || !strings.Contains(err.Error(), "multilevel model")) {
			t.Fatalf("%s on a flat logistic regression: error %v, want one saying it needs a multilevel model", k.Name(), err)
		}
	})
}

// fuzzSample runs k on post for one chain of 20 + 20 transitions, cut at
// 300 ms, and fails t on a missing result or a failed one without an
// error, or a draw that is not finite or lies outside the prior's
// support; it returns Sample's error.
func fuzzSample(t *testing.T, post *exactmh.Posterior, k exactmh.Kernel, seed uint64) error {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer cancel()
	res, err := exactmh.Sample(ctx, post, k, &exactmh.Settings{Chains: 1, Warmup: 20, Draws: 20, Seed: seed})
	if res == nil {
		if err == nil {
			t.Fatal("no result and no error")
		}
		return err
	}
	if res.Status == exactmh.Failed && err == nil {
		t.Fatal("Failed without an error")
	}
	for c, ch := range res.Chains {
		for j := range ch.Len() {
			th := res.Draw(c, j)
			if lp := post.Prior; lp != nil && math.IsInf(lp.LogPrior(th), -1) {
				t.Fatalf("draw %v outside the support", th)
			}
			for _, v := range th {
				if math.IsNaN(v) || math.IsInf(v, 0) {
					t.Fatalf("draw %v not finite", th)
				}
			}
		}
	}
	_ = res.Summary().String()
	return err
}

// FuzzMultilevelKernels runs the multilevel kernels of the registry
// (KernelInfo.NeedsMultilevel, in their default configuration, which finds
// the Laplace-EM centre), the non-centred NUTS and HMC and the automatic
// default for a few transitions on a fuzzed small multilevel model (up to
// 30 data in up to 6 groups, logistic, probit or Poisson, a random
// intercept and optionally a random slope, any y and x), asserting no
// panic and either an error or finite draws inside the support
// (fuzzSample). Runs are cut at 300 ms.
//
//	go test -run '^$' -fuzz FuzzMultilevelKernels -fuzztime 60s .
func FuzzMultilevelKernels(f *testing.F) {
	f.Add(uint8(0), uint8(20), uint8(4), uint8(0), false, uint64(1), []byte{1, 2, 3, 200, 17, 90})
	f.Add(uint8(1), uint8(7), uint8(6), uint8(1), true, uint64(2), []byte{0, 0, 0})
	f.Add(uint8(3), uint8(30), uint8(1), uint8(2), true, uint64(3), []byte{255, 1, 128})
	f.Fuzz(func(t *testing.T, ki, n8, g8, fam uint8, slope bool, seed uint64, raw []byte) {
		n, groups := 1+int(n8)%30, 1+int(g8)%6
		if len(raw) == 0 {
			raw = []byte{0}
		}
		families := []model.GLMFamily{model.LogisticFamily{}, model.ProbitFamily{}, model.PoissonFamily{}}
		ml := &model.Multilevel{Family: families[int(fam)%len(families)], Y: make([]float64, n), Intercept: true,
			Fixed:   []model.Covariate{{Name: "x", Values: make([]float64, n)}},
			Factors: []model.Factor{{Name: "g", Index: make([]int32, n), Tau: model.HalfNormal(1)}}}
		x := ml.Fixed[0].Values
		for i := range n {
			b := raw[i%len(raw)]
			x[i] = (float64(b) - 128) / 32
			ml.Y[i] = float64(raw[(i*7)%len(raw)] % 2)
			if fam%3 == 2 {
				ml.Y[i] = float64(raw[(i*5)%len(raw)] % 4)
			}
			ml.Factors[0].Index[i] = int32((int(b) + i) % groups)
		}
		if slope {
			ml.Factors[0].Slopes = []model.Covariate{{Name: "x", Values: x}}
		}
		post, err := model.NewMultilevel(ml)
		if err != nil {
			return
		}
		kernels := []exactmh.Kernel{nil, exactmh.NUTS{NonCentred: true, MaxDepth: 5}, exactmh.HMC{NonCentred: true, Steps: 5}}
		for _, k := range exactmh.Kernels() {
			if k.NeedsMultilevel {
				kernels = append(kernels, k.New(nil))
			}
		}
		_ = fuzzSample(t, post, kernels[int(ki)%len(kernels)], seed)
	})
}
