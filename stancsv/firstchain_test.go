// Copyright ©2026 The exactmh Authors. All rights reserved.
// Use of this source code is governed by a BSD-style
// license that can be found in the LICENSE file.

package stancsv_test

import (
	"context"
	"fmt"
	"path/filepath"
	"testing"

	"github.com/exactmh/exactmh"
	"github.com/exactmh/exactmh/stancsv"
)

// Four one-chain runs with FirstChain 0…3 make the draws of one four-chain
// run, bit for bit, and their files are numbered and identified as its.
func TestFirstChainSplitsARun(t *testing.T) {
	g := boxed(t, 200, 1)
	for _, k := range []exactmh.Kernel{exactmh.MH{}, exactmh.TunaMH{Chi: 1e-3}, exactmh.MALA{}} {
		dir := t.TempDir()
		set := exactmh.Settings{Chains: 4, Draws: 50, Warmup: 60, Seed: 11, Init: g.Mean,
			Recorder: stancsv.NewFiles(filepath.Join(dir, "whole"), &stancsv.Options{SigFigs: 17})}
		whole, err := exactmh.Sample(context.Background(), g.Posterior, k, &set)
		if err != nil {
			t.Fatal(err)
		}
		for c := range 4 {
			one := set
			one.Chains, one.FirstChain = 1, c
			one.Recorder = stancsv.NewFiles(filepath.Join(dir, "split"), &stancsv.Options{SigFigs: 17})
			part, err := exactmh.Sample(context.Background(), g.Posterior, k, &one)
			if err != nil {
				t.Fatal(err)
			}
			a, b := whole.Chains[c], part.Chains[0]
			if fmt.Sprint(a.Draws) != fmt.Sprint(b.Draws) || a.Scale != b.Scale {
				t.Fatalf("%s chain %d: the split run's draws differ from the whole run's", whole.Kernel, c)
			}
		}
		w, s := readChains(t, filepath.Join(dir, "whole"), 4), readChains(t, filepath.Join(dir, "split"), 4)
		for c := range 4 {
			if fmt.Sprint(w[c].Draws) != fmt.Sprint(s[c].Draws) {
				t.Errorf("%s file %d: split and whole differ", whole.Kernel, c+1)
			}
			if id, _ := s[c].ConfigValue("id"); id != fmt.Sprint(c+1) {
				t.Errorf("%s file %d: chain id %q, want %d", whole.Kernel, c+1, id, c+1)
			}
		}
	}
	if _, err := exactmh.Sample(context.Background(), g.Posterior, exactmh.MH{}, &exactmh.Settings{FirstChain: -1}); err == nil {
		t.Error("FirstChain −1 accepted")
	}
}
