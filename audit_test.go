// Copyright ©2026 The exactmh Authors. All rights reserved.
// Use of this source code is governed by a BSD-style
// license that can be found in the LICENSE file.

package exactmh_test

import (
	"context"
	"errors"
	"math"
	"slices"
	"strings"
	"testing"

	"github.com/exactmh/exactmh"
	"github.com/exactmh/exactmh/model"
)

// rare returns the indices of every tenth datum: the data a wrong bound
// is wrong on in the audit tests, which the kernels draw ∝ their (wrong,
// tiny) bound, that is almost never.
func rare(n int) []int {
	var idx []int
	for i := 3; i < n; i += 10 {
		idx = append(idx, i)
	}
	return idx
}

// startErr starts k on p at theta0 through its own Target and returns the
// error, checking that the audit neither counted evaluations on the
// chain's Target nor failed a correct bound.
func startErr(t *testing.T, p *exactmh.Posterior, k exactmh.Kernel, theta0 []float64) error {
	t.Helper()
	tg, err := exactmh.NewTarget(p)
	if err != nil {
		t.Fatal(err)
	}
	_, err = k.Start(tg, theta0)
	if tg.Evals() != 0 {
		t.Errorf("%s: Start made %d evaluations on the chain's Target, want the audit's own", k.Name(), tg.Evals())
	}
	return err
}

// wantAudit checks that err is Start's audit failing on one of the data
// in bad (nil: any), with the datum and the points in the violation.
func wantAudit(t *testing.T, name string, err error, bad []int) {
	t.Helper()
	if err == nil || !strings.Contains(err.Error(), "bound audit") {
		t.Errorf("%s: Start error %v, want the bound audit's", name, err)
		return
	}
	var v *exactmh.BoundViolation
	var lv *exactmh.LowerBoundViolation
	switch {
	case errors.As(err, &v):
		if v.Theta == nil || v.Ratio <= 1 || (bad != nil && !slices.Contains(bad, v.Datum)) {
			t.Errorf("%s: violation %+v, want a datum of %v with its points and ratio > 1", name, v, bad)
		}
	case errors.As(err, &lv):
		if lv.Theta == nil || (bad != nil && !slices.Contains(bad, lv.Datum)) {
			t.Errorf("%s: violation %+v, want a datum of %v with its point", name, lv, bad)
		}
	default:
		t.Errorf("%s: error %v wraps no violation", name, err)
	}
	t.Logf("%s: %v", name, err)
}

// A bound wrong only on rarely drawn data — c_i·10⁻⁹ on a tenth of the
// data, or c_i = 0 for one informative datum — let a run complete with the
// posterior mean tens of MCSEs off before Start audited it. Now every
// minibatch kernel's Start fails, naming the datum, and TrustBound opts
// out.
func TestStartAuditCatchesRarelyDrawnBounds(t *testing.T) {
	t.Parallel()
	p := logisticPosterior()
	n := p.Len()
	theta0 := []float64{1, -1}
	bad := rare(n)
	db, err := p.DiffBound()
	if err != nil {
		t.Fatal(err)
	}
	tiny := &exactmh.DiffBound{C: slices.Clone(db.C)}
	for _, i := range bad {
		tiny.C[i] *= 1e-9
	}
	zero := &exactmh.DiffBound{C: slices.Clone(db.C)}
	zero.C[17] = 0
	wantAudit(t, "TunaMH c_i·1e-9", startErr(t, p, exactmh.TunaMH{Bound: tiny}, theta0), bad)
	wantAudit(t, "TunaMH c_17 = 0", startErr(t, p, exactmh.TunaMH{Bound: zero}, theta0), []int{17})
	wantAudit(t, "TFMH c_i·1e-9", startErr(t, p, exactmh.TFMH{Bound: tiny}, theta0), bad)
	if err := startErr(t, p, exactmh.TunaMH{Bound: tiny, TrustBound: true}, theta0); err != nil {
		t.Errorf("TunaMH with TrustBound: %v, want no audit", err)
	}
	for _, k := range []exactmh.Kernel{exactmh.TunaMH{Bound: db}, exactmh.TFMH{Bound: db}} {
		if err := startErr(t, p, k, theta0); err != nil {
			t.Errorf("%s with the true bound: %v", k.Name(), err)
		}
	}

	// SMH's Taylor bounds, through an energy whose TaylorBounder is wrong.
	e := p.Energy.(*model.LogisticRegression)
	sp := &exactmh.Posterior{Energy: wrongTaylor{e, bad}, Prior: p.Prior}
	for _, order := range []int{1, 2} {
		k := exactmh.SMH{Order: order, Center: theta0}
		wantAudit(t, k.Name()+" b_i·1e-9", startErr(t, sp, k, theta0), bad)
		if err := startErr(t, p, k, theta0); err != nil {
			t.Errorf("%s with the true bounds: %v", k.Name(), err)
		}
	}

	// PoissonMH's range widths, on a bounded support.
	g := boxed(t, 200, 0.01)
	r, err := g.Posterior.EnergyRange()
	if err != nil {
		t.Fatal(err)
	}
	narrow := &exactmh.EnergyRange{Lo: r.Lo, Width: slices.Clone(r.Width)}
	for _, i := range rare(g.Posterior.Len()) {
		narrow.Width[i] *= 1e-9
	}
	flat := &exactmh.EnergyRange{Lo: r.Lo, Width: slices.Clone(r.Width)}
	flat.Width[17] = 0
	wantAudit(t, "PoissonMH Width·1e-9", startErr(t, g.Posterior, exactmh.PoissonMH{Range: narrow}, g.Mean), rare(g.Posterior.Len()))
	wantAudit(t, "PoissonMH Width_17 = 0", startErr(t, g.Posterior, exactmh.PoissonMH{Range: flat}, g.Mean), []int{17})
	if err := startErr(t, g.Posterior, exactmh.PoissonMH{Range: r}, g.Mean); err != nil {
		t.Errorf("PoissonMH with the true range: %v", err)
	}
	// The framework kernels with a gradient audit the same way.
	inf := math.Inf(1)
	wantAudit(t, "Poisson-MALA Width·1e-9", startErr(t, g.Posterior, exactmh.PoissonMALA{Range: narrow, MaxBatch: inf}, g.Mean), rare(g.Posterior.Len()))
	wantAudit(t, "Poisson-Barker Width_17 = 0", startErr(t, g.Posterior, exactmh.PoissonBarker{Range: flat, MaxBatch: inf}, g.Mean), []int{17})
	wantAudit(t, "TunaMH-SGLD c_i·1e-9", startErr(t, p, exactmh.TunaMHSGLD{Bound: tiny, Chi: 0.1}, theta0), bad)
	for _, k := range []exactmh.Kernel{exactmh.PoissonMALA{Range: r, MaxBatch: inf}, exactmh.PoissonBarker{Range: r, MaxBatch: inf}} {
		if err := startErr(t, g.Posterior, k, g.Mean); err != nil {
			t.Errorf("%s with the true range: %v", k.Name(), err)
		}
	}
	if err := startErr(t, p, exactmh.TunaMHSGLD{Bound: db, Chi: 0.1}, theta0); err != nil {
		t.Errorf("TunaMH-SGLD with the true bound: %v", err)
	}

	// FlyMC's lower bounds: above the likelihood on a tenth of the data
	// (LogBoundSum kept consistent), or a LogBoundSum that is not the
	// bounds' sum; a constant offset of the sum is harmless and passes.
	fb, err := exactmh.NewRangeFlyBound(g.Posterior)
	if err != nil {
		t.Fatal(err)
	}
	above := raised{fb, rare(g.Posterior.Len()), 1e3}
	wantAudit(t, "FlyMC B_i > L_i", startErr(t, g.Posterior, exactmh.FlyMC{Bound: above, Q: 0.1}, g.Mean), rare(g.Posterior.Len()))
	err = startErr(t, g.Posterior, exactmh.FlyMC{Bound: offsetSum{fb}, Q: 0.1}, g.Mean)
	if err == nil || !strings.Contains(err.Error(), "LogBoundSum") {
		t.Errorf("FlyMC with an inconsistent LogBoundSum: %v, want the audit's error", err)
	}
	if err := startErr(t, g.Posterior, exactmh.FlyMC{Bound: constOffset{fb}, Q: 0.1}, g.Mean); err != nil {
		t.Errorf("FlyMC with a constant offset in LogBoundSum: %v", err)
	}
	if err := startErr(t, g.Posterior, exactmh.FlyMC{Bound: fb, Q: 0.1}, g.Mean); err != nil {
		t.Errorf("FlyMC with the true bound: %v", err)
	}
	if err := startErr(t, p, exactmh.FlyMC{TightAt: theta0}, theta0); err != nil {
		t.Errorf("FlyMC-MAP with the logistic bound: %v", err)
	}

	// Through Sample the error names the package and chain once.
	_, err = exactmh.Sample(context.Background(), p, exactmh.TunaMH{Bound: tiny}, &exactmh.Settings{Chains: 1, Draws: 10, Init: theta0})
	if msg := err.Error(); !strings.HasPrefix(msg, "exactmh: chain 1: TunaMH: bound audit") {
		t.Errorf("Sample: %q", msg)
	}
}

// A c_i = 0 (or a zero width) is right for a datum whose energy does not
// depend on θ — here rows x_i = 0 of a logistic regression, U_i = log 2 —
// and the audit, finding the energy constant, lets it pass.
func TestStartAuditAllowsConstantData(t *testing.T) {
	t.Parallel()
	x, y := simulateLogistic(100, []float64{1, -1}, 3)
	for _, i := range []int{5, 50} {
		x[2*i], x[2*i+1] = 0, 0
	}
	e, err := model.NewLogisticRegression(x, y, 2)
	if err != nil {
		t.Fatal(err)
	}
	ball, _ := model.NewBall(2, 3, nil)
	p := &exactmh.Posterior{Energy: e, Prior: ball, Beta: 0.5}
	db, _ := p.DiffBound()
	r, _ := p.EnergyRange()
	if db.C[5] != 0 || db.C[50] != 0 || r.Width[5] != 0 {
		t.Fatalf("c_5 = %v, c_50 = %v, width_5 = %v: want 0 for x_i = 0", db.C[5], db.C[50], r.Width[5])
	}
	for _, k := range []exactmh.Kernel{exactmh.TunaMH{}, exactmh.TFMH{}, exactmh.PoissonMH{}, exactmh.FlyMC{}, exactmh.SMH{Order: 1, Center: []float64{0.5, -0.5}}} {
		if err := startErr(t, p, k, []float64{0.5, -0.5}); err != nil {
			t.Errorf("%s: %v", k.Name(), err)
		}
	}
}

// The audit samples a high-dimensional Box or Ball directly, as the
// checkers do: TunaMH starts on [−1, 1]⁵⁰, from a corner too, and on the
// unit ball in d = 50, where proposals from θ0 mostly leave the support.
func TestStartAuditHighDimensionalSupports(t *testing.T) {
	t.Parallel()
	const d = 50
	w := make([]float64, d)
	for j := range w {
		w[j] = math.Sin(float64(j + 1))
	}
	x, y := simulateLogistic(200, w, 9)
	e, err := model.NewLogisticRegression(x, y, d)
	if err != nil {
		t.Fatal(err)
	}
	box, _ := model.NewCube(d, -1, 1)
	ball, _ := model.NewBall(d, 1, nil)
	corner := make([]float64, d)
	corner[0], corner[1] = 1, -1
	for _, c := range []struct {
		prior  exactmh.Prior
		theta0 []float64
	}{{box, make([]float64, d)}, {box, corner}, {ball, make([]float64, d)}} {
		p := &exactmh.Posterior{Energy: e, Prior: c.prior}
		if err := startErr(t, p, exactmh.TunaMH{Scale: 0.5}, c.theta0); err != nil {
			t.Errorf("%T from %v: TunaMH: %v", c.prior, c.theta0[:2], err)
		}
		db, _ := p.DiffBound()
		for i := range db.C {
			db.C[i] /= 100
		}
		wantAudit(t, "TunaMH c_i/100 in d = 50", startErr(t, p, exactmh.TunaMH{Scale: 0.5, Bound: db}, c.theta0), nil)
	}
}

// wrongTaylor is a logistic regression whose Taylor bounds are 10⁹ times
// too small on the data bad.
type wrongTaylor struct {
	*model.LogisticRegression
	bad []int
}

func (w wrongTaylor) TaylorBound(order int, prior exactmh.Prior) ([]float64, error) {
	b, err := w.LogisticRegression.TaylorBound(order, prior)
	for _, i := range w.bad {
		b[i] *= 1e-9
	}
	return b, err
}

// raised puts log B_i delta above its value for the data bad, and keeps
// LogBoundSum their sum: only the per-datum bounds are wrong.
type raised struct {
	exactmh.FlyBound
	bad   []int
	delta float64
}

func (r raised) Gaps(dst, theta []float64, idx []int) {
	r.FlyBound.Gaps(dst, theta, idx)
	for k, i := range idx {
		if slices.Contains(r.bad, i) {
			dst[k] -= r.delta
		}
	}
}

func (r raised) LogBoundSum(theta []float64) float64 {
	return r.FlyBound.LogBoundSum(theta) + r.delta*float64(len(r.bad))
}

// constOffset adds a constant to LogBoundSum, which cancels from FlyMC's
// acceptance ratio.
type constOffset struct{ exactmh.FlyBound }

func (c constOffset) LogBoundSum(theta []float64) float64 { return c.FlyBound.LogBoundSum(theta) + 7 }

// The units trap cannot close silently: a bound already multiplied by β
// (the old convention) is too small by β < 1, and Start's audit says so —
// violation, and the hint about units.
func TestTemperedBoundCaughtAtStart(t *testing.T) {
	t.Parallel()
	const beta = 0.01
	g := boxed(t, 100, beta)
	db, err := g.Posterior.DiffBound()
	if err != nil {
		t.Fatal(err)
	}
	r, err := g.Posterior.EnergyRange()
	if err != nil {
		t.Fatal(err)
	}
	old := &exactmh.DiffBound{C: make([]float64, len(db.C))}
	for i, c := range db.C {
		old.C[i] = beta * c
	}
	oldR := &exactmh.EnergyRange{Lo: make([]float64, len(r.Lo)), Width: make([]float64, len(r.Width))}
	for i := range r.Lo {
		oldR.Lo[i], oldR.Width[i] = beta*r.Lo[i], beta*r.Width[i]
	}
	for _, k := range []exactmh.Kernel{exactmh.TunaMH{Bound: old}, exactmh.TFMH{Bound: old}, exactmh.PoissonMH{Range: oldR}} {
		err := startErr(t, g.Posterior, k, g.Mean)
		wantAudit(t, k.Name(), err, nil)
		if err == nil || !strings.Contains(err.Error(), "multiplied by β") {
			t.Errorf("%s: error %v, want the hint about β", k.Name(), err)
		}
	}
}

// BenchmarkStartAudit measures Start with and without the audit on a
// logistic regression with N = 10⁶, d = 10 on a ball: the difference is
// the audit's cost.
func BenchmarkStartAudit(b *testing.B) {
	p := mnistLike(b, 1_000_000, 10)
	ball, err := model.NewBall(10, 1, nil)
	if err != nil {
		b.Fatal(err)
	}
	p.Prior, p.Beta = ball, 1e-3
	theta0 := make([]float64, 10)
	for _, c := range []struct {
		name string
		k    func(trust bool) exactmh.Kernel
	}{
		{"TunaMH", func(trust bool) exactmh.Kernel { return exactmh.TunaMH{Chi: 1, TrustBound: trust} }},
		{"PoissonMH", func(trust bool) exactmh.Kernel { return exactmh.PoissonMH{TrustBound: trust} }},
		{"FlyMC", func(trust bool) exactmh.Kernel { return exactmh.FlyMC{TrustBound: trust} }},
		{"SMH-1", func(trust bool) exactmh.Kernel { return exactmh.SMH{Order: 1, Center: theta0, TrustBound: trust} }},
	} {
		for _, trust := range []bool{true, false} {
			name := c.name + "/audit"
			if trust {
				name = c.name + "/trust"
			}
			b.Run(name, func(b *testing.B) {
				k := c.k(trust)
				for b.Loop() {
					tg, _ := exactmh.NewTarget(p)
					if _, err := k.Start(tg, theta0); err != nil {
						b.Fatal(err)
					}
				}
			})
		}
	}
}
