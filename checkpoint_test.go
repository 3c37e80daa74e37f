// Copyright ©2026 The exactmh Authors. All rights reserved.
// Use of this source code is governed by a BSD-style
// license that can be found in the LICENSE file.

package exactmh_test

import (
	"bytes"
	"context"
	"encoding/gob"
	"io"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/exactmh/exactmh"
	"github.com/exactmh/exactmh/inexact"
	"github.com/exactmh/exactmh/progress"
)

// checkpointKernels are kernels with every kind of saved state: none (MH),
// χ and warmup flags (TunaMH), brightness (FlyMC), a batch and permutation
// (MHBT), a permutation (AustereMH, TunaMH-SGLD).
func checkpointKernels(t testing.TB) (*exactmh.Posterior, map[string]exactmh.Kernel, []float64) {
	g := boxed(t, 120, 1)
	b, err := exactmh.NewRangeFlyBound(g.Posterior)
	if err != nil {
		t.Fatal(err)
	}
	return g.Posterior, map[string]exactmh.Kernel{
		"MH":          exactmh.MH{},
		"TunaMH":      exactmh.TunaMH{},
		"FlyMC":       exactmh.FlyMC{Bound: b, Q: 0.1},
		"MHBT":        inexact.MHBT{BatchSize: 20},
		"MHBT-RSGLD":  inexact.MHBT{BatchSize: 20, RSGLD: true, AdaptBeta: true, Scale: 1e-3},
		"AustereMH":   inexact.AustereMH{BatchSize: 20},
		"TunaMH-SGLD": exactmh.TunaMHSGLD{Chi: 1e-3, GradBatch: 10, Scale: 0.05},
	}, g.Mean
}

// savedRun checkpoints a two-chain run of k: completed, or cancelled
// after cut transitions (over both chains).
func savedRun(t testing.TB, p *exactmh.Posterior, k exactmh.Kernel, init []float64, cut int64) []byte {
	t.Helper()
	set := exactmh.Settings{Chains: 2, Workers: 1, Warmup: 40, Draws: 30, Thin: 2, Seed: 3, Init: init}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	if cut > 0 {
		set.Recorder = &cancelAt{n: cut, cancel: cancel}
	}
	res, err := exactmh.Sample(ctx, p, k, &set)
	if err != nil && cut == 0 {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	if err := res.Checkpoint(&buf); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// gobBytes encodes v as a kernel's MarshalState would.
func gobBytes(v any) []byte {
	var b bytes.Buffer
	if err := gob.NewEncoder(&b).Encode(v); err != nil {
		panic(err)
	}
	return b.Bytes()
}

// editState decodes a chain's saved kernel state into a T, edits it and
// encodes it again (gob matches fields by name).
func editState[T any](b []byte, edit func(*T)) []byte {
	var s T
	if err := gob.NewDecoder(bytes.NewReader(b)).Decode(&s); err != nil {
		panic(err)
	}
	edit(&s)
	return gobBytes(&s)
}

type tunaState struct {
	Chi        float64
	Warm       bool
	WarmSteps  int
	Steps      int
	SumB, SumT float64
}

type flyState struct {
	Order   []int32
	NBright int
}

type mhbtState struct {
	Perm, Batch []int
	Beta        float64
	Warm        bool
	Steps       int
	SumAccP     float64
	TestRNG     []byte
}

// A corrupted checkpoint is refused by LoadCheckpoint with an error naming
// the chain, the field and the values — never loaded to deadlock Resume
// (Workers 0), to panic in LoadCheckpoint (an MHBT batch index, a FlyMC
// order index), in a chain (a permutation index) or in Draw and Summary
// (draws shorter than the infos), or to continue silently from garbage.
func TestLoadCheckpointRefusesCorruption(t *testing.T) {
	p, kernels, init := checkpointKernels(t)
	saved := map[string][]byte{}
	for name, k := range kernels {
		saved[name] = savedRun(t, p, k, init, 0)
	}
	mid := savedRun(t, p, kernels["TunaMH"], init, 30) // cancelled mid-warmup: chain 0 at transition 30, chain 1 at 0
	run := func(f func(cp *exactmh.CheckpointFile)) func(cp *exactmh.CheckpointFile) { return f }
	chain0 := func(f func(cc *exactmh.ChainCheckpointFile)) func(cp *exactmh.CheckpointFile) {
		return func(cp *exactmh.CheckpointFile) { f(&cp.Chains[0]) }
	}
	cases := []struct {
		name, kernel string
		file         []byte // nil: saved[kernel]
		edit         func(cp *exactmh.CheckpointFile)
		want         string // in the error
	}{
		// The run.
		{"Workers 0", "MH", nil, run(func(cp *exactmh.CheckpointFile) { cp.Settings.Workers = 0 }), "LoadCheckpoint: settings: Settings.Workers = 0"},
		{"Workers > Chains", "MH", nil, run(func(cp *exactmh.CheckpointFile) { cp.Settings.Workers = 3 }), "Settings.Workers = 3"},
		{"Workers < 0", "MH", nil, run(func(cp *exactmh.CheckpointFile) { cp.Settings.Workers = -1 }), "Settings.Workers = -1"},
		{"Thin 0", "MH", nil, run(func(cp *exactmh.CheckpointFile) { cp.Settings.Thin = 0 }), "Settings.Thin = 0"},
		{"Draws 0", "MH", nil, run(func(cp *exactmh.CheckpointFile) { cp.Settings.Draws = 0 }), "Settings.Draws = 0"},
		{"Warmup −1", "MH", nil, run(func(cp *exactmh.CheckpointFile) { cp.Settings.Warmup = -1 }), "Settings.Warmup = -1"},
		{"TargetAccept 0", "MH", nil, run(func(cp *exactmh.CheckpointFile) { cp.Settings.TargetAccept = 0 }), "Settings.TargetAccept = 0"},
		{"TargetAccept NaN", "MH", nil, run(func(cp *exactmh.CheckpointFile) { cp.Settings.TargetAccept = math.NaN() }), "Settings.TargetAccept = NaN"},
		{"overflowing Draws", "MH", nil, run(func(cp *exactmh.CheckpointFile) { cp.Settings.Draws = math.MaxInt / 2 }), "overflows"},
		{"Init of another dimension", "MH", nil, run(func(cp *exactmh.CheckpointFile) { cp.Settings.Init = []float64{1} }), "Settings.Init has length 1"},
		{"Chains mismatch", "MH", nil, run(func(cp *exactmh.CheckpointFile) { cp.Chains = cp.Chains[:1] }), "1 chains saved, the settings have Chains = 2"},
		{"no chains", "MH", nil, run(func(cp *exactmh.CheckpointFile) { cp.Settings.Chains, cp.Settings.Workers, cp.Chains = 0, 0, nil }), "Settings.Chains = 0"},
		{"status failed", "MH", nil, run(func(cp *exactmh.CheckpointFile) { cp.Status = exactmh.Failed }), "status failed"},
		{"status 7", "MH", nil, run(func(cp *exactmh.CheckpointFile) { cp.Status = 7 }), "status Status(7)"},
		{"completed but short", "MH", nil, run(func(cp *exactmh.CheckpointFile) { cp.Settings.Draws++ }), "chain 1: the run completed, but its next transition is 100 of 102"},
		{"exactness flipped", "MH", nil, run(func(cp *exactmh.CheckpointFile) { cp.Exact = false }), "exact = false"},
		{"negative elapsed", "MH", nil, run(func(cp *exactmh.CheckpointFile) { cp.Elapsed = -1 }), "elapsed time"},

		// A chain's record.
		{"chain index", "MH", nil, chain0(func(cc *exactmh.ChainCheckpointFile) { cc.Result.Chain = 5 }), "chain 1: ChainResult.Chain = 5, want 0"},
		{"negative Next", "TunaMH", mid, chain0(func(cc *exactmh.ChainCheckpointFile) { cc.Next = -3 }), "chain 1: next transition -3 outside [0, 100]"},
		{"Next past the end", "TunaMH", mid, chain0(func(cc *exactmh.ChainCheckpointFile) { cc.Next = 101 }), "next transition 101 outside"},
		{"Draws shorter than Infos·d", "MH", nil, chain0(func(cc *exactmh.ChainCheckpointFile) { cc.Result.Draws = cc.Result.Draws[:10] }), "chain 1: 30 infos, 30 times, 10 draw values and 0 streamed draws"},
		{"Times short", "MH", nil, chain0(func(cc *exactmh.ChainCheckpointFile) { cc.Result.Times = cc.Result.Times[1:] }), "29 times"},
		{"draws without transitions", "TunaMH", mid, chain0(func(cc *exactmh.ChainCheckpointFile) {
			cc.Result.Infos = append(cc.Result.Infos, exactmh.Info{})
			cc.Result.Times = append(cc.Result.Times, 0)
			cc.Result.Draws = append(cc.Result.Draws, 0, 0)
		}), "keep 0 draws"},
		{"steps miscounted", "MH", nil, chain0(func(cc *exactmh.ChainCheckpointFile) { cc.Result.Sampling.Steps-- }), "59 sampling steps"},
		{"accepted beyond steps", "MH", nil, chain0(func(cc *exactmh.ChainCheckpointFile) { cc.Result.Warmup.Accepted = 41 }), "warmup totals: 41 accepted"},
		{"negative evaluations", "MH", nil, chain0(func(cc *exactmh.ChainCheckpointFile) { cc.Result.Sampling.Evals = -1 }), "sampling totals: evaluations -1"},
		{"negative batch", "MH", nil, chain0(func(cc *exactmh.ChainCheckpointFile) { cc.Result.Infos[3].Batch = -1 }), "Infos[3]: batch -1"},
		{"NaN draw", "MH", nil, chain0(func(cc *exactmh.ChainCheckpointFile) { cc.Result.Draws[5] = math.NaN() }), "draw 2: θ[1] = NaN"},
		{"θ NaN", "MH", nil, chain0(func(cc *exactmh.ChainCheckpointFile) { cc.Theta[1] = math.NaN() }), "chain 1: θ[1] = NaN is not finite"},
		{"θ short", "MH", nil, chain0(func(cc *exactmh.ChainCheckpointFile) { cc.Theta = cc.Theta[:1] }), "θ has length 1"},
		{"θ outside the prior", "MH", nil, chain0(func(cc *exactmh.ChainCheckpointFile) { cc.Theta[0] = 1e6 }), "outside the prior's support"},
		{"scale NaN", "MH", nil, chain0(func(cc *exactmh.ChainCheckpointFile) { cc.Scale = math.NaN() }), "chain 1: step scale NaN"},
		{"scale 0", "TunaMH", nil, chain0(func(cc *exactmh.ChainCheckpointFile) { cc.Scale = 0 }), "step scale 0"},
		{"result scale −1", "MH", nil, chain0(func(cc *exactmh.ChainCheckpointFile) { cc.Result.Scale = -1 }), "ChainResult.Scale = -1"},
		{"adaptation NaN", "TunaMH", mid, chain0(func(cc *exactmh.ChainCheckpointFile) { cc.Adapt.Hbar = math.NaN() }), "adaptation state"},
		{"adaptation target", "MH", nil, chain0(func(cc *exactmh.ChainCheckpointFile) { cc.Adapt.Target = 0.9 }), "adaptation at target 0.9"},
		{"adaptation count", "MH", nil, chain0(func(cc *exactmh.ChainCheckpointFile) { cc.Adapt.T = 3 }), "after 3 updates"},
		{"early decision past the half", "MH", nil, chain0(func(cc *exactmh.ChainCheckpointFile) { cc.MidAt = 1000 }), "an early mid-warmup decision after transition 999"},
		{"negative early decision", "MH", nil, chain0(func(cc *exactmh.ChainCheckpointFile) { cc.MidAt = -1 }), "an early mid-warmup decision after transition -2"},
		{"random stream", "MH", nil, chain0(func(cc *exactmh.ChainCheckpointFile) { cc.RNG = cc.RNG[:5] }), "chain 1: random stream"},
		{"negative clock", "MH", nil, chain0(func(cc *exactmh.ChainCheckpointFile) { cc.Clock = -1 }), "chain clock"},
		{"warmup flag", "TunaMH", nil, chain0(func(cc *exactmh.ChainCheckpointFile) { cc.WarmupAware = false }), "told about warmup = false"},
		{"no-state kernel with state", "MH", nil, chain0(func(cc *exactmh.ChainCheckpointFile) { cc.State = []byte{1} }), "MH state: the chain has no state"},

		// Kernel states.
		{"TunaMH χ NaN", "TunaMH", nil, chain0(func(cc *exactmh.ChainCheckpointFile) {
			cc.State = editState(cc.State, func(s *tunaState) { s.Chi = math.NaN() })
		}), "chain 1: TunaMH state: saved χ = NaN"},
		{"TunaMH χ −1", "TunaMH", nil, chain0(func(cc *exactmh.ChainCheckpointFile) {
			cc.State = editState(cc.State, func(s *tunaState) { s.Chi = -1 })
		}), "saved χ = -1"},
		{"TunaMH in warmup after warmup", "TunaMH", nil, chain0(func(cc *exactmh.ChainCheckpointFile) {
			cc.State = editState(cc.State, func(s *tunaState) { s.Warm = true })
		}), "in warmup mode at transition 100"},
		{"TunaMH warmup steps", "TunaMH", nil, chain0(func(cc *exactmh.ChainCheckpointFile) {
			cc.State = editState(cc.State, func(s *tunaState) { s.WarmSteps = -4 })
		}), "saved -4 warmup steps"},
		{"TunaMH batch record", "TunaMH", nil, chain0(func(cc *exactmh.ChainCheckpointFile) {
			cc.State = editState(cc.State, func(s *tunaState) { s.SumB = math.Inf(1) })
		}), "saved batch record"},
		{"FlyMC order index", "FlyMC", nil, chain0(func(cc *exactmh.ChainCheckpointFile) {
			cc.State = editState(cc.State, func(s *flyState) { s.Order[7] = 1 << 20 })
		}), "chain 1: FlyMC state: saved order[7] = 1048576, want in [0, 120)"},
		{"FlyMC order duplicate", "FlyMC", nil, chain0(func(cc *exactmh.ChainCheckpointFile) {
			cc.State = editState(cc.State, func(s *flyState) { s.Order[7] = s.Order[0] })
		}), "saved order[7]"},
		{"FlyMC bright count", "FlyMC", nil, chain0(func(cc *exactmh.ChainCheckpointFile) {
			cc.State = editState(cc.State, func(s *flyState) { s.NBright = 121 })
		}), "bright count 121"},
		{"MHBT batch index", "MHBT", nil, chain0(func(cc *exactmh.ChainCheckpointFile) {
			cc.State = editState(cc.State, func(s *mhbtState) { s.Batch[3] = 500 })
		}), "chain 1: MHBT state: saved batch[3] = 500, want in [0, 120)"},
		{"MHBT batch duplicate", "MHBT", nil, chain0(func(cc *exactmh.ChainCheckpointFile) {
			cc.State = editState(cc.State, func(s *mhbtState) { s.Batch[3] = s.Batch[4] })
		}), "saved batch[4]"},
		{"MHBT permutation duplicate", "MHBT", nil, chain0(func(cc *exactmh.ChainCheckpointFile) {
			cc.State = editState(cc.State, func(s *mhbtState) { s.Perm[9] = s.Perm[10] })
		}), "saved permutation[10]"},
		{"MHBT β NaN", "MHBT-RSGLD", nil, chain0(func(cc *exactmh.ChainCheckpointFile) {
			cc.State = editState(cc.State, func(s *mhbtState) { s.Beta = math.NaN() })
		}), "chain 1: MHBT-RSGLD state: saved β = NaN"},
		{"MHBT β changed", "MHBT", nil, chain0(func(cc *exactmh.ChainCheckpointFile) {
			cc.State = editState(cc.State, func(s *mhbtState) { s.Beta = 3 })
		}), "saved β = 3, but β is not adapted"},
		{"MHBT epoch", "MHBT-RSGLD", nil, chain0(func(cc *exactmh.ChainCheckpointFile) {
			cc.State = editState(cc.State, func(s *mhbtState) { s.Steps = 7 })
		}), "saved epoch of 7 steps"},
		{"MHBT test stream", "MHBT", nil, chain0(func(cc *exactmh.ChainCheckpointFile) {
			cc.State = editState(cc.State, func(s *mhbtState) { s.TestRNG = nil })
		}), "MHBT state"},
		{"AustereMH permutation index", "AustereMH", nil, chain0(func(cc *exactmh.ChainCheckpointFile) {
			cc.State = editState(cc.State, func(s *[]int) { (*s)[2] = -1 })
		}), "chain 1: AustereMH state: saved permutation[2] = -1"},
		{"AustereMH permutation duplicate", "AustereMH", nil, chain0(func(cc *exactmh.ChainCheckpointFile) {
			cc.State = editState(cc.State, func(s *[]int) { (*s)[2] = (*s)[1] })
		}), "saved permutation[2]"},
		{"TunaMH-SGLD permutation short", "TunaMH-SGLD", nil, chain0(func(cc *exactmh.ChainCheckpointFile) {
			cc.State = editState(cc.State, func(s *[]int) { *s = (*s)[1:] })
		}), "chain 1: TunaMH-SGLD state: saved permutation of 119 data"},
		{"TunaMH-SGLD permutation index", "TunaMH-SGLD", nil, chain0(func(cc *exactmh.ChainCheckpointFile) {
			cc.State = editState(cc.State, func(s *[]int) { (*s)[0] = 120 })
		}), "saved permutation[0] = 120"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			file := tc.file
			if file == nil {
				file = saved[tc.kernel]
			}
			bad := exactmh.EditCheckpoint(file, tc.edit)
			res, err := exactmh.LoadCheckpoint(bytes.NewReader(bad), p, kernels[tc.kernel], nil)
			if err == nil {
				t.Fatalf("loaded (status %v)", res.Status)
			}
			if !strings.HasPrefix(err.Error(), "exactmh: LoadCheckpoint: ") || strings.Count(err.Error(), "exactmh:") != 1 || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("error %q, want one prefix \"exactmh: LoadCheckpoint: \" and %q", err, tc.want)
			}
		})
	}
	// The unedited files load and resume.
	for name, file := range saved {
		res, err := exactmh.LoadCheckpoint(bytes.NewReader(file), p, kernels[name], nil)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if _, err := exactmh.Resume(context.Background(), res, 5); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
	}
}

// lastLine returns the last line Progress printed, without the kernel
// name and elapsed time that start it.
func lastLine(t *testing.T, out string) string {
	t.Helper()
	lines := strings.Split(strings.TrimSpace(out), "\n")
	_, rest, ok := strings.Cut(lines[len(lines)-1], ":")
	if !ok {
		t.Fatalf("no progress line in %q", out)
	}
	return rest
}

// Progress keeps working after a restart: given to LoadCheckpoint, it is
// initialised by Resume from the run so far, and its last line — draws,
// acceptance and batch of every chain — is that of one uninterrupted run.
// It also follows an extension of the run (draws out of the new total).
func TestProgressAcrossCheckpoint(t *testing.T) {
	p, kernels, init := checkpointKernels(t)
	for _, name := range []string{"MH", "TunaMH"} {
		k := kernels[name]
		set := exactmh.Settings{Chains: 2, Workers: 1, Warmup: 40, Draws: 30, Thin: 2, Seed: 3, Init: init}
		var whole bytes.Buffer
		s := set
		s.Recorder = progress.New(&whole, time.Hour)
		if _, err := exactmh.Sample(context.Background(), p, k, &s); err != nil {
			t.Fatal(err)
		}

		ctx, cancel := context.WithCancel(context.Background())
		s = set
		s.Recorder = exactmh.MultiRecorder(progress.New(io.Discard, time.Hour), &cancelAt{n: 70, cancel: cancel})
		res, _ := exactmh.Sample(ctx, p, k, &s)
		cancel()
		var file bytes.Buffer
		if err := res.Checkpoint(&file); err != nil {
			t.Fatal(err)
		}
		var resumed bytes.Buffer
		loaded, err := exactmh.LoadCheckpoint(&file, p, k, progress.New(&resumed, time.Hour))
		if err != nil {
			t.Fatal(err)
		}
		if _, err := exactmh.Resume(context.Background(), loaded, 0); err != nil {
			t.Fatal(err)
		}
		if a, b := lastLine(t, whole.String()), lastLine(t, resumed.String()); a != b || !strings.Contains(a, "30/30") {
			t.Errorf("%s: resumed progress %q, uninterrupted %q", name, b, a)
		}
		if _, err := exactmh.Resume(context.Background(), loaded, 10); err != nil {
			t.Fatal(err)
		}
		if got := lastLine(t, resumed.String()); !strings.Contains(got, "chain 2 sampling 40/40") {
			t.Errorf("%s: extended run's progress %q", name, got)
		}
	}
}

// A plain Recorder given to LoadCheckpoint is initialised there with the
// restored run, before Resume sends it events.
func TestLoadCheckpointInitsRecorder(t *testing.T) {
	p, kernels, init := checkpointKernels(t)
	file := savedRun(t, p, kernels["MH"], init, 30)
	rec := &runInfoRecorder{}
	loaded, err := exactmh.LoadCheckpoint(bytes.NewReader(file), p, kernels["MH"], rec)
	if err != nil {
		t.Fatal(err)
	}
	if rec.inits != 1 || rec.run.Chains != 2 || rec.run.Steps != 100 || rec.run.Kernel != "MH" || rec.run.Draws != 30 {
		t.Fatalf("Init called %d times with %+v", rec.inits, rec.run)
	}
	if _, err := exactmh.Resume(context.Background(), loaded, 0); err != nil {
		t.Fatal(err)
	}
	if rec.inits != 1 || rec.events != 200-30 {
		t.Errorf("Init called %d times, %d events, want 1 and 170", rec.inits, rec.events)
	}
}

type runInfoRecorder struct {
	run           exactmh.RunInfo
	inits, events int
}

func (r *runInfoRecorder) Init(run exactmh.RunInfo) error { r.run = run; r.inits++; return nil }
func (r *runInfoRecorder) Record(*exactmh.Event) error    { r.events++; return nil }

// Extending a run past math.MaxInt transitions is refused, not wrapped
// into a negative total that would "complete" at once.
func TestResumeOverflow(t *testing.T) {
	p, kernels, init := checkpointKernels(t)
	res, err := exactmh.Sample(context.Background(), p, kernels["MH"], &exactmh.Settings{Chains: 1, Warmup: 10, Draws: 10, Thin: 2, Init: init})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := exactmh.Resume(context.Background(), res, math.MaxInt/2); err == nil || !strings.Contains(err.Error(), "overflows") || res.Settings.Draws != 10 {
		t.Errorf("Resume by MaxInt/2 draws of thin 2: %v, Draws %d", err, res.Settings.Draws)
	}
}
