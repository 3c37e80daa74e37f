// Copyright ©2026 The exactmh Authors. All rights reserved.
// Use of this source code is governed by a BSD-style
// license that can be found in the LICENSE file.

package exactmh_test

import (
	"bytes"
	"context"
	"encoding/csv"
	"strings"
	"testing"

	"github.com/exactmh/exactmh"
	"github.com/exactmh/exactmh/model"
	"github.com/exactmh/exactmh/stancsv"
)

// overflowPoisson is a random-intercept Poisson model with large counts
// (y = 300 in each of 4 groups of 10): at θ0 = 0 the gradient of the
// intercept is ≈ 12,000, so a leapfrog step of size 0.5 moves η past 709
// and e^η overflows — the energy is +Inf and the gradient not finite at
// that position.
func overflowPoisson(t *testing.T) *exactmh.Posterior {
	t.Helper()
	const n = 40
	ml := &model.Multilevel{
		Family:    model.PoissonFamily{},
		Y:         make([]float64, n),
		Intercept: true,
		FixedSD:   []float64{10},
		Factors:   []model.Factor{{Name: "g", Index: make([]int32, n), Tau: model.HalfNormal(1)}},
	}
	for i := range n {
		ml.Y[i] = 300
		ml.Factors[0].Index[i] = int32(i % 4)
	}
	p, err := model.NewMultilevel(ml)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// TestLeapfrogOverflowDiverges checks that a leapfrog position whose
// energy or gradient overflows (a Poisson rate e^η past η ≈ 709) is a
// divergence — zero density — in NUTS, HMC and their non-centred forms,
// not an error that ends the run: every run completes, counts its
// divergences (Info.Divergent, Sampling().Divergent, Summary's warning),
// and HMC's Stan CSV carries them in divergent__.
func TestLeapfrogOverflowDiverges(t *testing.T) {
	p := overflowPoisson(t)
	for _, k := range []exactmh.Kernel{
		exactmh.NUTS{Scale: 0.5},
		exactmh.NUTS{Scale: 0.5, NonCentred: true},
		exactmh.HMC{Scale: 0.5, Steps: 3},
		exactmh.HMC{Scale: 0.5, Steps: 3, NonCentred: true},
	} {
		name := k.Name()
		switch k := k.(type) {
		case exactmh.NUTS:
			if k.NonCentred {
				name += "-NC"
			}
		case exactmh.HMC:
			if k.NonCentred {
				name += "-NC"
			}
		}
		t.Run(name, func(t *testing.T) {
			res, err := exactmh.Sample(context.Background(), p, k, &exactmh.Settings{
				Chains: 1, Warmup: 0, Draws: 20, Seed: 1, NoAdapt: true})
			if err != nil {
				t.Fatalf("Sample: %v (a non-finite energy at a leapfrog position must be a divergence)", err)
			}
			tot := res.Sampling()
			if tot.Divergent == 0 {
				t.Fatalf("no divergence counted in %d transitions", tot.Steps)
			}
			n := 0
			for _, in := range res.Chains[0].Infos {
				if in.Divergent {
					n++
				}
			}
			if n != tot.Divergent {
				t.Errorf("%d draws marked divergent, Sampling().Divergent = %d", n, tot.Divergent)
			}
			if !strings.Contains(strings.Join(res.Summary().Warnings, "\n"), "diverged") {
				t.Errorf("Summary warns of no divergence: %q", res.Summary().Warnings)
			}
			var buf bytes.Buffer
			if err := stancsv.Write(&buf, res, 0, nil); err != nil {
				t.Fatal(err)
			}
			rows := csvRows(t, buf.String())
			col := -1
			for j, h := range rows[0] {
				if h == "divergent__" {
					col = j
				}
			}
			if col < 0 {
				t.Fatalf("no divergent__ column in %q", rows[0])
			}
			m := 0
			for _, r := range rows[1:] {
				if r[col] == "1" {
					m++
				}
			}
			if m != tot.Divergent {
				t.Errorf("divergent__ is 1 in %d rows, want %d", m, tot.Divergent)
			}
		})
	}
}

// csvRows parses a Stan CSV file's header and draws, skipping comments.
func csvRows(t *testing.T, s string) [][]string {
	t.Helper()
	r := csv.NewReader(strings.NewReader(s))
	r.Comment = '#'
	rows, err := r.ReadAll()
	if err != nil || len(rows) == 0 {
		t.Fatalf("parse Stan CSV: %v (%d rows)", err, len(rows))
	}
	return rows
}
