package exactmh

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"gonum.org/v1/gonum/mat"
)

// poissonMHScheme is PoissonMH written through the framework (Case 1: no
// ω1, the random-walk proposal, ω2 = the Poisson counts at θ).
type poissonMHScheme struct{ lambda float64 }

func (poissonMHScheme) Name() string { return "PoissonMH (Aux)" }

func (s poissonMHScheme) Start(t *Target, _ []float64) (AuxChain[struct{}, *poissonCounts], error) {
	counts, err := newPoissonCounts("PoissonMH (Aux)", t, nil, s.lambda, 0, math.Inf(1), nil, nil)
	if err != nil {
		return nil, err
	}
	return &poissonMHAux{counts: counts}, nil
}

type poissonMHAux struct{ counts *poissonCounts }

func (*poissonMHAux) DrawOmega1(*rand.Rand, []float64) (struct{}, error) { return struct{}{}, nil }
func (*poissonMHAux) Propose(rng *rand.Rand, next, theta []float64, _ struct{}, scale float64) (float64, error) {
	return RandomWalk{}.Propose(rng, next, theta, scale), nil
}
func (c *poissonMHAux) DrawOmega2(rng *rand.Rand, theta, _ []float64, _ struct{}) (*poissonCounts, error) {
	return c.counts, c.counts.draw(rng, theta)
}
func (c *poissonMHAux) LogRatio(_, next []float64, _ struct{}, counts *poissonCounts, _ float64) (float64, error) {
	if err := counts.evalAt(next); err != nil {
		return 0, err
	}
	return counts.logRatio(), nil
}
func (c *poissonMHAux) Report(info Info) Info {
	info.Batch, info.Distinct = c.counts.batch, c.counts.seen.Count
	return info
}

// PoissonMH through Aux is the same chain as the direct implementation:
// with the same seed the draws are bit-identical, so the chain
// distributions are equal.
func TestAuxPoissonMHMatchesDirect(t *testing.T) {
	// A small boxed Gaussian-mean target (as in the exactness harness).
	y := []float64{0.3, -0.2, 1.1, 0.4, -0.7, 0.9, 0.2, 0.5}
	e, err := NewGaussianMean(y, 2, mat.NewSymDense(2, []float64{1, 0.3, 0.3, 1}))
	if err != nil {
		t.Fatal(err)
	}
	box, _ := NewCube(2, -2, 2)
	p := &Posterior{Energy: e, Prior: box}
	run := func(k Kernel) []float64 {
		tg, err := NewTarget(p)
		if err != nil {
			t.Fatal(err)
		}
		ch, err := k.Start(tg, []float64{0.1, 0.2})
		if err != nil {
			t.Fatal(err)
		}
		rng := rand.New(rand.NewPCG(5, 6))
		var out []float64
		for range 3000 {
			if _, err := ch.Step(rng); err != nil {
				t.Fatal(err)
			}
			out = append(out, ch.Position()...)
		}
		return out
	}
	direct := run(PoissonMH{Scale: 0.5, Lambda: 3, MaxBatch: math.Inf(1)}) // λ + L > N: never fall back
	framework := run(Aux[struct{}, *poissonCounts]{Scheme: poissonMHScheme{lambda: 3}, Scale: 0.5})
	if !slices.Equal(direct, framework) {
		t.Fatal("PoissonMH through Aux differs from the direct implementation")
	}
	moved := 0
	for k := 2; k < len(direct); k += 2 {
		if direct[k] != direct[k-2] {
			moved++
		}
	}
	if moved < 300 {
		t.Fatalf("the chain hardly moved (%d moves): the comparison is vacuous", moved)
	}
	t.Logf("3000 identical transitions, %d accepted moves", moved)
}
