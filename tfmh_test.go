package exactmh_test

import (
	"context"
	"errors"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/exactmh/exactmh"
	"github.com/exactmh/exactmh/mcmctest"
	"github.com/exactmh/exactmh/model"
)

// statementOne is the energy of the TunaMH paper's App. C: U_i(θ) = −θx_i
// with x_i = ±a, half each, so Σ_i U_i ≡ 0 and MH accepts every move.
type statementOne struct{ x []float64 }

func (e *statementOne) Len() int { return len(e.x) }
func (e *statementOne) Dim() int { return 1 }
func (e *statementOne) Energies(dst, theta []float64, idx []int) {
	for k, i := range idx {
		dst[k] = -theta[0] * e.x[i]
	}
}
func (e *statementOne) DiffBound(exactmh.Prior) (*exactmh.DiffBound, error) {
	c := make([]float64, len(e.x))
	for i, x := range e.x {
		c[i] = math.Abs(x)
	}
	return &exactmh.DiffBound{C: c}, nil
}

// Statement 1: for a ±1 move every datum's factor is min(1, e^{∓a}); half
// the data have ΔU_i = a, each rejecting with probability a/(c_iM) = 1
// when drawn, and K ~ Poisson(CM = Na) draws hit them at rate Na/2, so TFMH
// accepts with probability e^{−Na/2} = e^{−M/2} with M = Σ|x_i|, where MH
// accepts always.
func TestTFMHStatementOne(t *testing.T) {
	const n, total = 1000, 2.0 // M = Σ|x_i| = 2: acceptance e^{−1}
	x := make([]float64, n)
	for i := range x {
		x[i] = total / n
		if i%2 == 1 {
			x[i] = -x[i]
		}
	}
	box, _ := model.NewCube(1, -1e6, 1e6)
	p := &exactmh.Posterior{Energy: &statementOne{x}, Prior: box}
	tg, err := exactmh.NewTarget(p)
	if err != nil {
		t.Fatal(err)
	}
	ch, err := exactmh.TFMH{Proposal: mcmctest.LatticeProposal{}, Scale: 1, MaxRate: math.Inf(1)}.Start(tg, []float64{0})
	if err != nil {
		t.Fatal(err)
	}
	rng := rand.New(rand.NewPCG(1, 1))
	const steps = 40000
	acc := 0
	for range steps {
		info, err := ch.Step(rng)
		if err != nil {
			t.Fatal(err)
		}
		if info.Accepted {
			acc++
		}
	}
	got, want := float64(acc)/steps, math.Exp(-total/2)
	se := math.Sqrt(want * (1 - want) / steps)
	if math.Abs(got-want) > 4*se {
		t.Errorf("TFMH acceptance %.4f, want e^{−M/2} = %.4f ± %.4f", got, want, se)
	}
	res, err := exactmh.Sample(context.Background(), p, exactmh.MH{Proposal: mcmctest.LatticeProposal{}, Scale: 1},
		&exactmh.Settings{Chains: 1, Warmup: exactmh.NoWarmup, NoAdapt: true, Draws: 1000})
	if err != nil {
		t.Fatal(err)
	}
	if a := res.Sampling().AcceptRate(); a != 1 {
		t.Errorf("MH acceptance %.4f, want 1", a)
	}
	t.Logf("TFMH acceptance %.4f vs e^{−M/2} = %.4f (MH: 1)", got, want)
}

// With a tiny MaxRate every step falls back to full MH and the chain is
// still exact.
func TestTFMHFallback(t *testing.T) {
	g := boxed(t, 300, 1)
	set := &exactmh.Settings{Chains: 4, Warmup: 300, Draws: 3000, Seed: 4, Init: g.Mean}
	res, err := exactmh.Sample(context.Background(), g.Posterior, exactmh.TFMH{MaxRate: 1e-9}, set)
	if err != nil {
		t.Fatal(err)
	}
	// Every step inside the support falls back (the rate always exceeds
	// 1e-9).
	tot := res.Sampling()
	if tot.Fallbacks != tot.Steps-countOutside(res) || tot.Fallbacks == 0 {
		t.Fatalf("%d fallbacks in %d steps (%d proposals outside the box)", tot.Fallbacks, tot.Steps, countOutside(res))
	}
	if err := mcmctest.CheckMoments(res, g.Mean, g.SD(), 4); err != nil {
		t.Error(err)
	}
}

// countOutside is the number of proposals rejected by the prior (they
// never reach the fallback decision).
func countOutside(res *exactmh.Result) int {
	n := 0
	for _, c := range res.Chains {
		for _, in := range c.Infos {
			if in.AcceptProb == 0 && !in.Fallback {
				n++
			}
		}
	}
	return n
}

func TestTFMHErrors(t *testing.T) {
	g := boxed(t, 200, 1)
	bound, _ := g.Posterior.DiffBound()
	small := &exactmh.DiffBound{C: make([]float64, len(bound.C))}
	for i := range bound.C {
		small.C[i] = bound.C[i] / 20
	}
	_, err := exactmh.Sample(context.Background(), g.Posterior, exactmh.TFMH{Bound: small},
		&exactmh.Settings{Chains: 1, Warmup: 100, Draws: 100, Init: g.Mean})
	var v *exactmh.BoundViolation
	if !errors.As(err, &v) || v.Ratio <= 1 {
		t.Errorf("err = %v, want a BoundViolation", err)
	}
	tg, _ := exactmh.NewTarget(g.Posterior)
	for name, k := range map[string]exactmh.TFMH{
		"negative MaxRate": {MaxRate: -1},
		"bad scale":        {Scale: -1},
		"short bound":      {Bound: &exactmh.DiffBound{C: []float64{1}}},
	} {
		if _, err := k.Start(tg, g.Mean); err == nil {
			t.Errorf("%s: no error", name)
		}
	}
}

func BenchmarkTFMHStepLogistic(b *testing.B) {
	benchmarkKernel(b, tallLogistic(b), exactmh.TFMH{Scale: 1e-4})
}
