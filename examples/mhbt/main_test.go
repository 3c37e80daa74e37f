package main

import (
	"testing"

	"github.com/exactmh/exactmh/inexact"
)

// fig1Largest finds the first grid index whose acceptance reaches the
// threshold, for a monotone acceptance, and reports none or the top.
func TestFig1Largest(t *testing.T) {
	acc := func(k int) float64 { return float64(k) / fig1K } // grows as ε shrinks
	if got := fig1Largest(acc, 0.5); got != fig1K/2 {
		t.Errorf("threshold 0.5: index %d, want %d", got, fig1K/2)
	}
	if got := fig1Largest(acc, 0); got != 0 {
		t.Errorf("threshold 0: index %d, want 0 (the top of the grid)", got)
	}
	if got := fig1Largest(acc, 1.5); got != -1 {
		t.Errorf("threshold 1.5: index %d, want −1 (none)", got)
	}
}

// The SGLD proposal's acceptance at a fixed ε falls as d grows (the point
// of the paper's Fig. 1), and RSGLD's with β = 2 stays above it.
func TestFig1SGLDCollapsesWithDimension(t *testing.T) {
	k := inexact.MHBT{BatchSize: fig1M, Cn: fig1Cn, SGLD: true, Scale: fig1Eps(1, 12)}
	a1 := fig1Accept(fig1Target(1, 1, false), k, 200, 1)
	a100 := fig1Accept(fig1Target(100, 1, false), k, 200, 1)
	r := inexact.MHBT{BatchSize: fig1M, Cn: fig1Cn, RSGLD: true, Beta: 2, Scale: k.Scale}
	r100 := fig1Accept(fig1Target(100, 1, false), r, 200, 1)
	if !(a100 < a1-0.2) || !(r100 > a100+0.05) {
		t.Errorf("ε = %.3g: SGLD acceptance %.3f at d = 1, %.3f at d = 100; RSGLD (β = 2) %.3f at d = 100", k.Scale, a1, a100, r100)
	}
	t.Logf("ε = %.3g: SGLD acceptance %.3f at d = 1, %.3f at d = 100; RSGLD (β = 2) %.3f at d = 100", k.Scale, a1, a100, r100)
}
