// Copyright ©2026 The exactmh Authors. All rights reserved.
// Use of this source code is governed by a BSD-style
// license that can be found in the LICENSE file.

package exactmh_test

import (
	"context"
	"errors"
	"fmt"
	"math"
	"strings"
	"testing"

	"github.com/exactmh/exactmh"
	"github.com/exactmh/exactmh/inexact"
	"github.com/exactmh/exactmh/model"
)

// hiddenGradient hides the gradient of an energy.
type hiddenGradient struct{ exactmh.Energy }

// A kernel that needs gradients on a posterior without them fails before
// sampling with an error that errors.Is recognises as ErrNoGradient.
func TestErrNoGradient(t *testing.T) {
	p := logisticPosterior()
	bare := &exactmh.Posterior{Energy: hiddenGradient{p.Energy}, Prior: p.Prior}
	for _, k := range []exactmh.Kernel{exactmh.MALA{}, exactmh.HMC{}, inexact.MHBT{RSGLD: true},
		exactmh.TunaMHSGLD{Chi: 0.01}, exactmh.PoissonMALA{}} {
		_, err := exactmh.Sample(context.Background(), bare, k, &exactmh.Settings{Chains: 1, Draws: 1})
		if !errors.Is(err, exactmh.ErrNoGradient) {
			t.Errorf("%s: error %v, want ErrNoGradient", k.Name(), err)
		}
	}
	if _, err := exactmh.FindMAP(context.Background(), bare, []float64{0, 0}, nil); !errors.Is(err, exactmh.ErrNoGradient) {
		t.Errorf("FindMAP: error %v, want ErrNoGradient", err)
	}
}

// An error from a running chain names the package, the kernel, the chain
// and the transition once each, then what went wrong with its numbers.
func TestErrorPrefixOnce(t *testing.T) {
	p := logisticPosterior()
	tiny := make([]float64, p.Len())
	for i := range tiny {
		tiny[i] = 1e-9 // far too small: the first datum drawn violates it
	}
	// χ = 10¹⁷ makes the expected batch χC²M² about 10² with these c_i.
	// TrustBound lets the wrong bound past Start's audit, so that the first
	// transition finds it.
	_, err := exactmh.Sample(context.Background(), p, exactmh.TunaMH{Bound: &exactmh.DiffBound{C: tiny}, Chi: 1e17, TrustBound: true},
		&exactmh.Settings{Chains: 1, Draws: 10, Init: []float64{1, -1}})
	var v *exactmh.BoundViolation
	if !errors.As(err, &v) {
		t.Fatalf("error %v, want a BoundViolation", err)
	}
	msg := err.Error()
	if !strings.HasPrefix(msg, "exactmh: TunaMH: chain 1: transition ") || strings.Count(msg, "exactmh") != 1 ||
		strings.Count(msg, "TunaMH") != 1 || !strings.Contains(msg, "bound violated by datum") {
		t.Errorf("run error %q: want one \"exactmh: TunaMH: chain 1: transition k: \" prefix, then the violation", msg)
	}
	// A configuration error names the package and the kernel once each.
	_, err = exactmh.Sample(context.Background(), p, exactmh.TunaMH{Chi: -1}, &exactmh.Settings{Chains: 1})
	if msg := err.Error(); strings.Count(msg, "exactmh") != 1 || strings.Count(msg, "TunaMH") != 1 {
		t.Errorf("start error %q: want \"exactmh\" and \"TunaMH\" once each", msg)
	}
	// So does the audit's, which still wraps the violation.
	_, err = exactmh.Sample(context.Background(), p, exactmh.TunaMH{Bound: &exactmh.DiffBound{C: tiny}, Chi: 1e17},
		&exactmh.Settings{Chains: 1, Draws: 10, Init: []float64{1, -1}})
	if msg := fmt.Sprint(err); !errors.As(err, &v) || !strings.HasPrefix(msg, "exactmh: chain 1: TunaMH: bound audit") ||
		strings.Count(msg, "exactmh") != 1 || strings.Count(msg, "TunaMH") != 1 {
		t.Errorf("audit error %q: want \"exactmh: chain 1: TunaMH: bound audit\" once, wrapping a BoundViolation", msg)
	}
}

// Every registered kernel that needs a bound (KernelInfo.NeedsBound)
// fails with ErrNoBound on an energy with gradients and no bound, and one
// that needs gradients with ErrNoGradient on an energy without; the error
// from inside the library is prefixed once. A multilevel kernel
// (NeedsMultilevel) is given a multilevel model without the bound it
// needs: a family whose f‴ is unbounded on the line with no growth bound
// (Poisson's loss without LossGrowth, noGrowthPoisson).
func TestErrNoBound(t *testing.T) {
	e := logisticPosterior().Energy
	noBound := &exactmh.Posterior{Energy: gradientOnly{energiesOnly{e}, e.(exactmh.Gradienter)}}
	noGradient := &exactmh.Posterior{Energy: energiesOnly{e}}
	n := 40
	ml := &model.Multilevel{Family: noGrowthPoisson{}, Y: make([]float64, n), Intercept: true,
		Factors: []model.Factor{{Name: "g", Index: make([]int32, n), Tau: model.HalfNormal(1)}}}
	for i := range n {
		ml.Factors[0].Index[i] = int32(i % 4)
		ml.Y[i] = float64(i % 3)
	}
	mlNoBound, err := model.NewMultilevel(ml)
	if err != nil {
		t.Fatal(err)
	}
	for _, ki := range exactmh.Kernels() {
		noBound := noBound
		if ki.NeedsMultilevel {
			noBound = mlNoBound
		}
		for _, c := range []struct {
			needs bool
			p     *exactmh.Posterior
			want  error
		}{{ki.NeedsBound, noBound, exactmh.ErrNoBound}, {ki.NeedsGradient, noGradient, exactmh.ErrNoGradient}} {
			if !c.needs {
				continue
			}
			center := []float64{0, 0}
			if ki.NeedsMultilevel {
				center = nil // the Laplace-EM centre, found at Start
			}
			_, err := exactmh.Sample(context.Background(), c.p, ki.New(center), &exactmh.Settings{Chains: 1, Draws: 1})
			if !errors.Is(err, c.want) {
				t.Errorf("%s: error %v, want %v", ki.Name, err, c.want)
				continue
			}
			if msg := err.Error(); strings.Count(msg, "exactmh:") != 1 {
				t.Errorf("%s: error %q names the package more than once", ki.Name, msg)
			}
		}
	}
}

// noGrowthPoisson is Poisson regression's loss without the family's
// LossGrowth: f‴ = e^z unbounded on the line and no pair-wise bound, so
// no multilevel kernel has the bound it needs.
type noGrowthPoisson struct{}

func (noGrowthPoisson) Loss(y, z float64) float64 { return model.PoissonFamily{}.Loss(y, z) }
func (noGrowthPoisson) LossDerivs(y, z float64) (f1, f2 float64) {
	return model.PoissonFamily{}.LossDerivs(y, z)
}
func (noGrowthPoisson) LossBound(y float64, k int, lo, hi float64) float64 {
	return model.PoissonFamily{}.LossBound(y, k, lo, hi)
}

// gradientOnly is an energy with gradients and no bound of any kind.
type gradientOnly struct {
	energiesOnly
	g exactmh.Gradienter
}

func (e gradientOnly) AddGradient(grad, theta []float64, idx []int, w []float64) {
	e.g.AddGradient(grad, theta, idx, w)
}

// energiesOnly hides every method of an energy but Len, Dim and Energies.
type energiesOnly struct{ e exactmh.Energy }

func (e energiesOnly) Len() int                                 { return e.e.Len() }
func (e energiesOnly) Dim() int                                 { return e.e.Dim() }
func (e energiesOnly) Energies(dst, theta []float64, idx []int) { e.e.Energies(dst, theta, idx) }

// Settings whose transitions per chain overflow int are refused before any
// work, instead of a run that "completes" with no draws.
func TestSettingsOverflow(t *testing.T) {
	p := logisticPosterior()
	for _, set := range []exactmh.Settings{
		{Chains: 1, Draws: 1 << 62, Thin: 4},
		{Chains: 1, Draws: math.MaxInt - 10, Warmup: 100},
	} {
		res, err := exactmh.Sample(context.Background(), p, exactmh.MH{}, &set)
		if err == nil || !strings.Contains(err.Error(), "overflows int") {
			t.Errorf("Draws %d, Thin %d, Warmup %d: result %v, error %v; want an overflow error", set.Draws, set.Thin, set.Warmup, res, err)
		}
	}
}
