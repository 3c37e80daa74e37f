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
	if err == nil || !strings.Contains(err.Error(), "chain 1") {
		t.Errorf("err = %v, want chain 1's", err)
	}
}
