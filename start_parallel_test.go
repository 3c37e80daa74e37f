// Copyright ©2026 The exactmh Authors. All rights reserved.
// Use of this source code is governed by a BSD-style
// license that can be found in the LICENSE file.

package exactmh_test

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/exactmh/exactmh"
)

// rendezvous is MH whose Start waits until two Starts are in flight: it
// fails unless Sample starts chains concurrently.
type rendezvous struct {
	exactmh.MH
	mu      *sync.Mutex
	waiting *int
	both    chan struct{}
}

func (k rendezvous) Start(t *exactmh.Target, theta0 []float64) (exactmh.Chain, error) {
	k.mu.Lock()
	if *k.waiting++; *k.waiting == 2 {
		close(k.both)
	}
	k.mu.Unlock()
	select {
	case <-k.both:
		return k.MH.Start(t, theta0)
	case <-time.After(10 * time.Second):
		return nil, errors.New("the other chain's Start never ran alongside")
	}
}

// TestStartsInParallel checks that Sample starts chains on its workers
// concurrently, and that a failing Start is still reported by chain order.
func TestStartsInParallel(t *testing.T) {
	g := boxed(t, 50, 1)
	var mu sync.Mutex
	var waiting int
	k := rendezvous{mu: &mu, waiting: &waiting, both: make(chan struct{})}
	set := &exactmh.Settings{Chains: 2, Workers: 2, Warmup: 10, Draws: 10, Init: g.Mean}
	if _, err := exactmh.Sample(context.Background(), g.Posterior, k, set); err != nil {
		t.Fatal(err)
	}
	bad := &exactmh.Settings{Chains: 3, Workers: 2, Warmup: 10, Draws: 10, Inits: [][]float64{g.Mean, {100, 100}, {200, 200}}}
	_, err := exactmh.Sample(context.Background(), g.Posterior, exactmh.MH{}, bad)
	// Chain index 1 (the second) fails first; messages number chains
	// from 1.
	if err == nil || !strings.Contains(err.Error(), "chain 2 ") {
		t.Errorf("err = %v, want the second chain's (chain 2)", err)
	}
}

// TestChainNumbers checks that messages number chains from 1 among the
// chains of the whole run, as Progress, stancsv's file names and the
// command do: the first chain of a run with Settings.FirstChain = 4 (the
// fifth chain of a scaled-out run) is chain 5 in its errors, while
// PanicError.Chain stays the 0-based index into Result.Chains.
func TestChainNumbers(t *testing.T) {
	g := boxed(t, 50, 1)
	set := &exactmh.Settings{Chains: 1, FirstChain: 4, Warmup: 10, Draws: 10, Init: []float64{100, 100}}
	_, err := exactmh.Sample(context.Background(), g.Posterior, exactmh.MH{}, set)
	if err == nil || !strings.Contains(err.Error(), "of chain 5 ") {
		t.Errorf("start error %v, want it to name chain 5", err)
	}
	// A recorder that panics on the second chain's tenth transition.
	rec := &hookRecorder{f: func(e *exactmh.Event) error {
		if e.Chain == 1 && e.Iteration == 10 {
			panic(errors.New("recorder panics"))
		}
		return nil
	}}
	set = &exactmh.Settings{Chains: 2, FirstChain: 4, Warmup: 10, Draws: 10, Init: g.Mean, Recorder: rec}
	_, err = exactmh.Sample(context.Background(), g.Posterior, exactmh.MH{}, set)
	var pe *exactmh.PanicError
	if !errors.As(err, &pe) || pe.Chain != 1 || !strings.Contains(err.Error(), "chain 6, transition 10") {
		t.Errorf("panic error %v, want Chain 1 named chain 6", err)
	}
}
