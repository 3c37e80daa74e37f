// Copyright ©2026 The exactmh Authors. All rights reserved.
// Use of this source code is governed by a BSD-style
// license that can be found in the LICENSE file.

package exactmh

import (
	"bytes"
	"encoding/gob"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"time"
)

// checkpoint is the file format (gob): the run and every chain.
type checkpoint struct {
	Version  string
	Kernel   string
	Exact    bool
	Dim, N   int
	Settings Settings
	Status   Status
	Elapsed  time.Duration
	Chains   []chainCheckpoint
}

type chainCheckpoint struct {
	Result      ChainResult // Err is not saved
	Theta       []float64
	State       []byte // Checkpointer.MarshalState
	RNG         []byte // PCG.MarshalBinary
	Scale       float64
	Adapt       dualAveraging // the step-scale adaptation
	Next        int
	Clock       time.Duration
	WarmupAware bool
	Metric      Metric         // the chain's metric, if it has one (MetricAdapter)
	Windows     *metricWindows // the metric adaptation, if any
}

// Checkpoint writes the run — settings, draws and every chain's full state
// (position, kernel state, metric, random stream, adaptation, next
// transition) — to
// w, so that LoadCheckpoint can rebuild it, in another process, for Resume.
// The posterior's data and the kernel are not written: LoadCheckpoint is
// given them again. A failed run cannot be checkpointed; neither can one
// whose chains do not implement Checkpointer.
func (r *Result) Checkpoint(w io.Writer) error {
	if r == nil || r.runners == nil {
		return errors.New("exactmh: Checkpoint: the result holds no chain state")
	}
	if r.Status == Failed {
		return errors.New("exactmh: Checkpoint: the run failed")
	}
	set := r.Settings
	set.Recorder = nil // not serialisable; give LoadCheckpoint's result a new one if needed
	cp := checkpoint{Version: Version, Kernel: r.Kernel, Exact: r.Exact, Dim: r.Dim, N: r.N,
		Settings: set, Status: r.Status, Elapsed: r.Elapsed}
	for c, cr := range r.runners {
		k, ok := cr.ch.(Checkpointer)
		if !ok {
			return fmt.Errorf("exactmh: Checkpoint: %s chains (%T) do not implement Checkpointer", r.Kernel, cr.ch)
		}
		state, err := k.MarshalState()
		if err != nil {
			return fmt.Errorf("exactmh: Checkpoint: chain %d: %w", c, err)
		}
		rng, err := cr.src.MarshalBinary()
		if err != nil {
			return err
		}
		res := *cr.r
		res.Err = nil
		cc := chainCheckpoint{Result: res, Theta: cr.ch.Position(), State: state, RNG: rng, Scale: res.Scale,
			Adapt: cr.adapt,
			Next:  cr.it, Clock: cr.clock, WarmupAware: cr.warm != nil}
		if cr.tune != nil {
			cc.Scale = cr.tune.StepScale()
		}
		if cr.met != nil {
			cc.Metric, cc.Windows = cr.met.Metric(), cr.win
		}
		cp.Chains = append(cp.Chains, cc)
	}
	return gob.NewEncoder(w).Encode(&cp)
}

// LoadCheckpoint reads a checkpoint written by Result.Checkpoint and
// rebuilds the run on posterior p with kernel k — the same data and kernel
// configuration as the original run, which it cannot check beyond the
// kernel's name, N and the dimension. The result can be inspected like any
// other and continued with Resume; rec, if not nil, becomes its Recorder.
func LoadCheckpoint(rd io.Reader, p *Posterior, k Kernel, rec Recorder) (*Result, error) {
	var cp checkpoint
	if err := gob.NewDecoder(rd).Decode(&cp); err != nil {
		return nil, fmt.Errorf("exactmh: LoadCheckpoint: %w", err)
	}
	if err := p.Validate(); err != nil {
		return nil, err
	}
	if k == nil || k.Name() != cp.Kernel {
		return nil, fmt.Errorf("exactmh: LoadCheckpoint: the checkpoint is of kernel %s, not %v", cp.Kernel, kernelName(k))
	}
	if p.Len() != cp.N || p.Dim() != cp.Dim {
		return nil, fmt.Errorf("exactmh: LoadCheckpoint: the checkpoint has N = %d, d = %d; the posterior N = %d, d = %d", cp.N, cp.Dim, p.Len(), p.Dim())
	}
	res := &Result{Kernel: cp.Kernel, Exact: cp.Exact, Config: k, Dim: cp.Dim, N: cp.N, Settings: cp.Settings,
		Status: cp.Status, Elapsed: cp.Elapsed}
	res.Settings.Recorder = rec
	for c, cc := range cp.Chains {
		t, err := NewTarget(p)
		if err != nil {
			return nil, err
		}
		ch, err := k.Start(t, cc.Theta)
		if err != nil {
			return nil, fmt.Errorf("exactmh: LoadCheckpoint: chain %d: %w", c, err)
		}
		kc, ok := ch.(Checkpointer)
		if !ok {
			return nil, fmt.Errorf("exactmh: LoadCheckpoint: %s chains do not implement Checkpointer", cp.Kernel)
		}
		if err := kc.UnmarshalState(cc.State); err != nil {
			return nil, fmt.Errorf("exactmh: LoadCheckpoint: chain %d: %w", c, err)
		}
		src := &rand.PCG{}
		if err := src.UnmarshalBinary(cc.RNG); err != nil {
			return nil, fmt.Errorf("exactmh: LoadCheckpoint: chain %d: random stream: %w", c, err)
		}
		r := cc.Result
		cr := &chainRunner{ch: ch, t: t, src: src, rng: rand.New(src), it: cc.Next, clock: cc.Clock, r: &r,
			adapt: cc.Adapt}
		cr.tune, _ = ch.(Tunable)
		if cr.tune != nil {
			cr.tune.SetStepScale(cc.Scale)
		}
		if cc.WarmupAware {
			cr.warm, _ = ch.(WarmupAware)
		}
		if cr.met, _ = ch.(MetricAdapter); cr.met != nil {
			if err := cr.met.SetMetric(cc.Metric); err != nil {
				return nil, fmt.Errorf("exactmh: LoadCheckpoint: chain %d: %w", c, err)
			}
			cr.win = cc.Windows
		}
		res.runners = append(res.runners, cr)
		res.Chains = append(res.Chains, cr.r)
	}
	return res, nil
}

func kernelName(k Kernel) string {
	if k == nil {
		return "nil"
	}
	return k.Name()
}

// gobState encodes a chain's state struct.
func gobState(v any) ([]byte, error) {
	var b bytes.Buffer
	if err := gob.NewEncoder(&b).Encode(v); err != nil {
		return nil, err
	}
	return b.Bytes(), nil
}

// ungobState decodes a chain's state struct.
func ungobState(b []byte, v any) error {
	return gob.NewDecoder(bytes.NewReader(b)).Decode(v)
}
