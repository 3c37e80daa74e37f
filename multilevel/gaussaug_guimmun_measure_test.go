//go:build unix

// Copyright ©2026 The exactmh Authors. All rights reserved.
// Use of this source code is governed by a BSD-style
// license that can be found in the LICENSE file.

package multilevel_test

import (
	"context"
	"encoding/csv"
	"flag"
	"math"
	"os"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/exactmh/exactmh"
	"github.com/exactmh/exactmh/model"
	"github.com/exactmh/exactmh/multilevel"
)

var (
	guimmunAblate = flag.String("guimmunablate", "", "run TestGuimmunAblation: the probit sweep on guimmun under each `;`-separated list of AugmentMutant's names (\"\" the sweep itself, written base) (figures/bench/multilevel_real_guimmun5.txt)")
	guimmunSeeds  = flag.Int("guimmunseeds", 4, "TestGuimmunAblation: seeds 1 … n")
	guimmunDraws  = flag.Int("guimmundraws", 1000, "TestGuimmunAblation: draws per chain (4 chains, warmup exactmh.MinBurnIn)")
)

// guimmunPosterior builds examples/multilevel-real's guimmun model
// (mlmRev::guImmun, probit, (1|mom) + (1|comm), the categorical covariates
// against R's first levels, pcInd81 standardised, half-normal(1) scales,
// flat fixed effects) from its CSV file.
func guimmunPosterior(t *testing.T) *exactmh.Posterior {
	f, err := os.Open("../examples/multilevel-real/data/guimmun.csv")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	rows, err := csv.NewReader(f).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	head, rows := rows[0], rows[1:]
	col := func(name string) int { return slices.Index(head, name) }
	n := len(rows)
	m := &model.Multilevel{Family: model.ProbitFamily{}, Y: make([]float64, n), Intercept: true}
	for i, r := range rows {
		m.Y[i], _ = strconv.ParseFloat(r[col("immun")], 64)
	}
	for _, c := range []string{"kid2p", "mom25p", "ord", "ethn", "momEd", "husEd", "momWork", "rural"} {
		j := col(c)
		var levels []string
		for _, r := range rows {
			if !slices.Contains(levels, r[j]) {
				levels = append(levels, r[j])
			}
		}
		slices.Sort(levels)
		for _, l := range levels[1:] {
			v := make([]float64, n)
			for i, r := range rows {
				if r[j] == l {
					v[i] = 1
				}
			}
			m.Fixed = append(m.Fixed, model.Covariate{Name: c + l, Values: v})
		}
	}
	{
		j := col("pcInd81")
		v := make([]float64, n)
		var s, ss float64
		for i, r := range rows {
			v[i], _ = strconv.ParseFloat(r[j], 64)
			s += v[i]
		}
		mean := s / float64(n)
		for _, x := range v {
			ss += (x - mean) * (x - mean)
		}
		sd := math.Sqrt(ss / float64(n-1))
		for i := range v {
			v[i] = (v[i] - mean) / sd
		}
		m.Fixed = append(m.Fixed, model.Covariate{Name: "pcInd81", Values: v})
	}
	for _, g := range []string{"mom", "comm"} {
		j := col(g)
		ids := map[string]int32{}
		idx := make([]int32, n)
		for i, r := range rows {
			k, ok := ids[r[j]]
			if !ok {
				k = int32(len(ids))
				ids[r[j]] = k
			}
			idx[i] = k
		}
		m.Factors = append(m.Factors, model.Factor{Name: g, Index: idx, Tau: model.HalfNormal(1)})
	}
	p, err := model.NewMultilevel(m)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// TestGuimmunAblation runs the probit augmentation sweep on guimmun, 4 ×
// (exactmh.MinBurnIn + draws) from the Laplace-EM centre, under each list
// of AugmentMutant's exact switches of -guimmunablate and seeds 1 … n, and
// logs the sampling's CPU time, the min bulk ESS over every parameter and
// that of each scale and per CPU-second. A measurement, not a check: run
// with -guimmunablate (GOMAXPROCS=1 under taskset for the figures).
func TestGuimmunAblation(t *testing.T) {
	if *guimmunAblate == "" {
		t.Skip("a measurement: run with -guimmunablate")
	}
	p := guimmunPosterior(t)
	c, _, err := multilevel.Center(context.Background(), p)
	if err != nil {
		t.Fatal(err)
	}
	configs := strings.Split(*guimmunAblate, ";")
	sumPer, sumESS, sumCPU := make([]float64, len(configs)), make([]float64, len(configs)), make([]float64, len(configs))
	// Seeds outer, configurations inner: each seed's runs back to back,
	// under about the same load.
	for seed := 1; seed <= *guimmunSeeds; seed++ {
		for ci, names := range configs {
			if names == "base" {
				names = ""
			}
			k := multilevel.AugmentMutant(multilevel.GroupGibbs{Center: c}, names)
			cpu0 := ablationCPU()
			res, err := exactmh.Sample(context.Background(), p, k, &exactmh.Settings{Chains: 4, Warmup: exactmh.MinBurnIn, Draws: *guimmunDraws, Seed: uint64(seed), Init: c})
			if err != nil {
				t.Fatal(err)
			}
			cpu := (ablationCPU() - cpu0).Seconds()
			s := res.Summary()
			minESS, minName := math.Inf(1), ""
			var scales []string
			fixedMin := math.Inf(1)
			for _, q := range s.Params {
				if q.ESSBulk < minESS {
					minESS, minName = q.ESSBulk, q.Name
				}
				if strings.HasPrefix(q.Name, "log_tau") {
					scales = append(scales, q.Name+" "+strconv.FormatFloat(q.ESSBulk, 'f', 0, 64))
				}
				if !strings.Contains(q.Name, "[") && !strings.HasPrefix(q.Name, "log_tau") {
					fixedMin = min(fixedMin, q.ESSBulk)
				}
			}
			t.Logf("%-14q seed %d: CPU %.2fs, min bulk ESS %.0f (%s), %.1f per CPU-s; %s; fixed min %.0f; %v",
				configs[ci], seed, cpu, minESS, minName, minESS/cpu, strings.Join(scales, ", "), fixedMin, res.Chains[0].Params)
			sumPer[ci] += minESS / cpu
			sumESS[ci] += minESS
			sumCPU[ci] += cpu
		}
	}
	ns := float64(*guimmunSeeds)
	for ci, names := range configs {
		t.Logf("%-14q MEAN over %d seeds: CPU %.2fs, min bulk ESS %.0f, %.1f per CPU-s", names, *guimmunSeeds, sumCPU[ci]/ns, sumESS[ci]/ns, sumPer[ci]/ns)
	}
}

// ablationCPU returns the process's user + system CPU time so far.
func ablationCPU() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
