package inexact_test

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/exactmh/exactmh"
	"github.com/exactmh/exactmh/inexact"
	"github.com/exactmh/exactmh/mcmctest"
	"gonum.org/v1/gonum/stat/distuv"
)

// On the App. J.1 up/down pair AustereMH (ε = 0.01, m = 30) fails the
// pairwise detailed-balance check that TunaMH passes with the same number of
// decisions.
func TestAustereMHPairwiseBias(t *testing.T) {
	t.Parallel()
	p, _, err := mcmctest.RandomWalk(200)
	if err != nil {
		t.Fatal(err)
	}
	a, b := []float64{100}, []float64{101}
	decisions := 200000
	if testing.Short() {
		decisions = 40000 // AustereMH's z is about 14 then
	}
	austere, err := mcmctest.Pairwise(p, func(q exactmh.Proposal) exactmh.Kernel {
		return inexact.AustereMH{Proposal: q, Scale: 1, Epsilon: 0.01, BatchSize: 30}
	}, a, b, 0, decisions, 7)
	if err != nil {
		t.Fatal(err)
	}
	tuna, err := mcmctest.Pairwise(p, func(q exactmh.Proposal) exactmh.Kernel {
		return exactmh.TunaMH{Proposal: q, Scale: 1}
	}, a, b, 0, decisions, 7)
	if err != nil {
		t.Fatal(err)
	}
	if math.Abs(tuna.Z) > 4 {
		t.Errorf("TunaMH fails the pairwise check: %v", tuna)
	}
	if math.Abs(austere.Z) < 6 {
		t.Errorf("AustereMH passes the pairwise check: %v", austere)
	}
	t.Logf("AustereMH: %v\nTunaMH:    %v", austere, tuna)
	if (inexact.AustereMH{}).Exact() {
		t.Error("AustereMH claims to be exact")
	}
}

// The dynamic programme of App. A agrees with a simulation of the
// sequential z-test on a population of l's, for error and data usage.
func TestAustereTestError(t *testing.T) {
	t.Parallel()
	trials := 20000
	if testing.Short() {
		trials = 5000
	}
	const bigN, m, eps = 2000, 100, 0.05
	g := distuv.UnitNormal.Quantile(1 - eps)
	rng := rand.New(rand.NewPCG(3, 3))
	for _, muStd := range []float64{0, 0.5, 2, -1} {
		// A population with standardised mean μ_std relative to μ0 = 0.
		l := make([]float64, bigN)
		var mean, sd float64
		for i := range l {
			l[i] = rng.NormFloat64()
			mean += l[i] / bigN
		}
		for i := range l {
			l[i] -= mean
			sd += l[i] * l[i] / bigN
		}
		sd = math.Sqrt(sd)
		shift := muStd * sd / math.Sqrt(bigN-1)
		for i := range l {
			l[i] += shift
		}
		wrong, used, usedSq := 0, 0, 0.0
		perm := make([]int, bigN)
		for i := range perm {
			perm[i] = i
		}
		for range trials {
			n, sum := 0, 0.0
			for {
				for k := n; k < n+m; k++ {
					r := k + rng.IntN(bigN-k)
					perm[k], perm[r] = perm[r], perm[k]
					sum += l[perm[k]]
				}
				n += m
				if n == bigN {
					if (sum > 0) != (muStd > 0) && muStd != 0 {
						wrong++
					}
					break
				}
				// The model's z statistic with the population σ_l.
				z := (sum / float64(n)) / (sd / math.Sqrt(float64(n)) * math.Sqrt(float64(bigN-n)/float64(bigN-1)))
				if math.Abs(z) > g {
					if (z > 0) != (muStd >= 0) {
						wrong++
					}
					break
				}
			}
			used += n
			usedSq += float64(n) * float64(n) / (bigN * bigN)
		}
		ft := float64(trials)
		gotErr, gotUse := float64(wrong)/ft, float64(used)/ft/bigN
		seUse := math.Sqrt((usedSq/ft - gotUse*gotUse) / ft)
		wantErr, wantUse, err := inexact.AustereMH{}.TestError(muStd, float64(m)/bigN, eps)
		if err != nil {
			t.Fatal(err)
		}
		// Within 4 Monte Carlo standard errors, plus 0.003 for the
		// programme's normal approximation of the test.
		seErr := math.Sqrt(wantErr*(1-wantErr)/ft) + 1e-3
		if math.Abs(gotErr-wantErr) > 4*seErr+0.003 || math.Abs(gotUse-wantUse) > 4*seUse+0.003 {
			t.Errorf("μ_std = %v: simulated error %.4f, data %.4f; dynamic programme %.4f, %.4f", muStd, gotErr, gotUse, wantErr, wantUse)
		}
		t.Logf("μ_std = %v: error %.4f (DP %.4f), data fraction %.4f (DP %.4f)", muStd, gotErr, wantErr, gotUse, wantUse)
	}
	if _, _, err := (inexact.AustereMH{}).TestError(0, 0, 0.01); err == nil {
		t.Error("π1 = 0: no error")
	}
	if e, f, _ := (inexact.AustereMH{}).TestError(0.3, 1, 0.01); e != 0 || f != 1 {
		t.Errorf("π1 = 1: error %v, data %v; want 0, 1", e, f)
	}
}

func BenchmarkAustereMHStepLogistic(b *testing.B) {
	benchmarkKernel(b, tallLogistic(b), inexact.AustereMH{Scale: 0.02})
}
