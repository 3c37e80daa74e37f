// Copyright ©2026 The exactmh Authors. All rights reserved.
// Use of this source code is governed by a BSD-style
// license that can be found in the LICENSE file.

package exactmh

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"sync/atomic"

	"github.com/exactmh/exactmh/internal/vec"
)

// DiffBound is the assumption of TunaMH and TFMH (TunaMH paper,
// Assumption 1): for all θ, θ' in the prior's support and every datum i,
//
//	|U_i(θ) − U_i(θ')| ≤ C[i]·M(θ, θ').
//
// Like every bound in exactmh (EnergyRange, FlyBound, TaylorBounder's b_i)
// it is in the units of the untempered energy U_i: a kernel multiplies it by
// the Posterior's β itself, as the Target multiplies the energies, so the
// same bound serves every β.
//
// A bound that does not hold silently destroys exactness, so kernels that
// compute ΔU_i check it for every datum they draw, audit it over all data
// at Start (see the package documentation, "Bounds"), and CheckBound tests
// it on sampled pairs.
type DiffBound struct {
	// C holds c_i ≥ 0 for every datum, untempered.
	C []float64
	// Metric is the symmetric M(θ, θ′) (the papers call it a metric;
	// exactmh's Metric type is the gradient kernels' inverse mass matrix);
	// nil means the Euclidean distance ‖θ − θ′‖₂, the M of every bound in
	// the papers.
	Metric func(theta, thetaNew []float64) float64

	// compact, when not nil, holds the c_i in place of C (nil then): the
	// control variates' compact state beyond cvCompactLimit data
	// (compactConsts). Only the package makes such bounds; Posterior's
	// DiffBound returns them decoded into C.
	compact *compactConsts
}

// at returns c_i.
func (b *DiffBound) at(i int) float64 {
	if b.compact != nil {
		return b.compact.at(i)
	}
	return b.C[i]
}

// len returns the number of c_i.
func (b *DiffBound) len() int {
	if b.compact != nil {
		return len(b.compact.codes)
	}
	return len(b.C)
}

// plain returns b with its c_i in C (decoded from the compact state, a
// new slice of 8 bytes a datum), or b itself when it has no compact state.
func (b *DiffBound) plain() *DiffBound {
	if b.compact == nil {
		return b
	}
	c := make([]float64, b.len())
	for i := range c {
		c[i] = b.at(i)
	}
	return &DiffBound{C: c, Metric: b.Metric}
}

// M returns M(θ, θ').
func (b *DiffBound) M(theta, thetaNew []float64) float64 {
	if b.Metric == nil {
		return vec.Dist(theta, thetaNew)
	}
	return b.Metric(theta, thetaNew)
}

// Sum returns C = Σ_i c_i.
func (b *DiffBound) Sum() float64 {
	var s float64
	if b.compact != nil {
		for i := range b.compact.codes {
			s += b.compact.at(i)
		}
		return s
	}
	for _, c := range b.C {
		s += c
	}
	return s
}

func (b *DiffBound) check(n int) error {
	if b == nil {
		return errors.New("exactmh: nil DiffBound")
	}
	if b.len() != n {
		return fmt.Errorf("exactmh: DiffBound has %d c_i, want one per datum (N = %d)", b.len(), n)
	}
	if b.compact != nil {
		// Every code is a finite c_i ≥ 0 by construction (alias.Up).
		if s := b.compact.scale; !(s > 0) || math.IsInf(s, 0) {
			return fmt.Errorf("exactmh: DiffBound's compact c_i are scaled by %v, want finite > 0", s)
		}
		return nil
	}
	for i, c := range b.C {
		if !(c >= 0) || math.IsInf(c, 0) {
			return fmt.Errorf("exactmh: DiffBound c_%d = %v, want finite ≥ 0", i, c)
		}
	}
	return nil
}

// EnergyRange is the assumption of PoissonMH and its gradient relatives: on
// the prior's support, Lo[i] ≤ U_i(θ) ≤ Lo[i] + Width[i] for every datum,
// in the untempered energy's units (the kernel multiplies Lo and Width by
// β). In the papers' notation, with β applied, φ_i = β(Lo[i] + Width[i] −
// U_i) ∈ [0, M_i] with M_i = β·Width[i].
type EnergyRange struct {
	Lo, Width []float64
}

func (r *EnergyRange) check(n int) error {
	if r == nil {
		return errors.New("exactmh: nil EnergyRange")
	}
	if len(r.Lo) != n || len(r.Width) != n {
		return fmt.Errorf("exactmh: EnergyRange has %d Lo and %d Width, want N = %d each", len(r.Lo), len(r.Width), n)
	}
	for i := range r.Lo {
		if math.IsNaN(r.Lo[i]) || math.IsInf(r.Lo[i], 0) || !(r.Width[i] >= 0) || math.IsInf(r.Width[i], 0) {
			return fmt.Errorf("exactmh: EnergyRange datum %d: Lo = %v, Width = %v, want finite, Width ≥ 0", i, r.Lo[i], r.Width[i])
		}
	}
	return nil
}

// DiffBounder is implemented by energies that know a DiffBound on a prior's
// support (untempered, as every bound; the kernels apply β).
type DiffBounder interface {
	DiffBound(prior Prior) (*DiffBound, error)
}

// EnergyRanger is implemented by energies that know an EnergyRange on a
// prior's support (untempered, as every bound; the kernels apply β).
type EnergyRanger interface {
	EnergyRange(prior Prior) (*EnergyRange, error)
}

// DiffBound returns the DiffBound of the posterior's energy on its prior's
// support: the energy's own (DiffBounder) or, for a GLM without one,
// GLMDiffBound. It is untempered, whatever β — what TunaMH.Bound,
// TFMH.Bound and CheckBound take; the kernels apply β.
func (p *Posterior) DiffBound() (*DiffBound, error) {
	b, err := p.diffBound()
	if b == nil || err != nil {
		return b, err
	}
	if b.compact != nil {
		return b.plain(), nil // a new slice: the caller may change it
	}
	return &DiffBound{C: slices.Clone(b.C), Metric: b.Metric}, nil // the caller may change it
}

// diffBound is DiffBound for the kernels, which never change it: the
// energy's own c_i are shared rather than copied (8 bytes a datum).
func (p *Posterior) diffBound() (*DiffBound, error) {
	if err := p.Validate(); err != nil {
		return nil, err
	}
	var b *DiffBound
	var err error
	switch e := p.Energy.(type) {
	case sharedDiffBounder:
		b = e.sharedDiffBound()
	case DiffBounder:
		// The user's energy may keep (and later change) what it returns.
		if b, err = e.DiffBound(p.prior()); err == nil && b != nil {
			b = &DiffBound{C: slices.Clone(b.C), Metric: b.Metric}
		}
	case GLM:
		b, err = GLMDiffBound(e, p.prior())
	default:
		return nil, fmt.Errorf("exactmh: %w: energy %T has no ready-made DiffBound (implement DiffBounder or GLM); construct one and verify it with CheckBound", ErrNoBound, p.Energy)
	}
	if err != nil {
		return nil, err
	}
	if b == nil {
		return nil, fmt.Errorf("exactmh: energy %T returned a nil DiffBound and no error", p.Energy)
	}
	return b, b.check(p.Len())
}

// sharedDiffBounder is an energy of the package whose DiffBound is fixed at
// construction and can be handed to the kernels without a copy.
type sharedDiffBounder interface {
	DiffBounder
	sharedDiffBound() *DiffBound
}

// EnergyRange returns the EnergyRange of the posterior's energy on its
// prior's support: the energy's own (EnergyRanger) or, for a GLM without
// one, GLMEnergyRange. It is untempered, whatever β — what PoissonMH.Range
// and CheckRange take; the kernels apply β.
func (p *Posterior) EnergyRange() (*EnergyRange, error) {
	return p.energyRange(nil)
}

// energyRange is EnergyRange, returning errInterrupted within a chunk of
// data once stop is set where the pass is the package's own (a GLM's, the
// control-variate rewrite's; stopRanger): the Poisson kernels' Start and
// the automatic default's candidate build it over all N data
// (TestInterruptRange).
func (p *Posterior) energyRange(stop *atomic.Bool) (*EnergyRange, error) {
	if err := p.Validate(); err != nil {
		return nil, err
	}
	var r *EnergyRange
	var err error
	if sr, ok := p.Energy.(stopRanger); ok {
		r, err = sr.energyRange(p.prior(), stop)
	} else if er, ok := p.Energy.(EnergyRanger); ok {
		r, err = er.EnergyRange(p.prior())
	} else if g, ok := p.Energy.(GLM); ok {
		r, err = glmEnergyRange(g, p.prior(), stop)
	} else {
		return nil, fmt.Errorf("exactmh: %w: energy %T has no ready-made EnergyRange (implement EnergyRanger or GLM); construct one and verify it with CheckRange", ErrNoBound, p.Energy)
	}
	if err != nil {
		return nil, err
	}
	out := &EnergyRange{Lo: slices.Clone(r.Lo), Width: slices.Clone(r.Width)}
	return out, out.check(p.Len())
}

// stopRanger is an EnergyRanger of the package whose pass over the data
// polls a cancellation flag once per chunk (Posterior.energyRange).
type stopRanger interface {
	energyRange(prior Prior, stop *atomic.Bool) (*EnergyRange, error)
}

// supportWrapper is a prior of the package that multiplies another by a
// density positive and finite everywhere (ControlVariates' surrogate,
// cvPrior): its support is the other's, which supportPrior returns.
type supportWrapper interface {
	supportPrior() Prior
}

// supportOf returns the prior whose type describes p's support: p itself,
// or, through any number of wrappers (supportWrapper), the prior they
// wrap. The bounds of a Box or Ball support (linearRange, maxDist,
// intoSupport) hold for a wrapped Box or Ball alike; for every other prior
// supportOf(p) is p, and nothing changes.
func supportOf(p Prior) Prior {
	for {
		w, ok := p.(supportWrapper)
		if !ok {
			return p
		}
		p = w.supportPrior()
	}
}

// BoundedSupport is implemented by a Prior whose support is a bounded
// convex set (model.Box, model.Ball, or a user's). Whatever needs a finite
// range reads it through these methods: GLMEnergyRange (PoissonMH, FlyMC's
// range bound) and the GLM derivative bounds on a compact support
// (linearRange), the bounds that grow with the distance between two points
// (maxDist), CheckBound's and the audits' sampling of the support
// (intoSupport), FindMAP's projected steps and the default initial point.
type BoundedSupport interface {
	Prior
	// LinearRange returns the smallest and largest xᵀθ over the support.
	LinearRange(x []float64) (lo, hi float64)
	// MaxDist returns the largest ‖θ − y‖₂ over the support.
	MaxDist(y []float64) float64
	// Reflect folds x into the support by reflection at its boundary.
	Reflect(x []float64)
	// Project replaces x by its Euclidean projection onto the support, a
	// point inside it despite rounding.
	Project(x []float64)
	// Middle sets x to the support's centre.
	Middle(x []float64)
}

// linearRange returns the range of xᵀθ over the support of a bounded prior
// (a BoundedSupport, or one wrapped, see supportOf).
func linearRange(x []float64, prior Prior) (lo, hi float64, err error) {
	if s, ok := supportOf(prior).(BoundedSupport); ok {
		lo, hi = s.LinearRange(x)
		return lo, hi, nil
	}
	return 0, 0, fmt.Errorf("exactmh: an energy range needs a bounded support (a BoundedSupport prior such as model.Box or model.Ball), have %s", supportName(prior))
}

// rangeSupport returns linearRange's error where prior's support is not
// bounded, so that a GLM's EnergyRange fails before it allocates (and
// faults in) its 16 bytes a datum: the automatic default asks for the
// range of every flat GLM's control-variate rewrite and posterior
// (poissonCand), which under an unbounded prior would otherwise hold
// 3.2 GB of garbage at N = 10⁸ and more than a 24 GiB machine's memory at
// 10⁹ (TestEnergyRangeUnboundedAllocatesNothing).
func rangeSupport(prior Prior) error {
	if _, ok := supportOf(prior).(BoundedSupport); ok {
		return nil
	}
	_, _, err := linearRange(nil, prior)
	return err
}

// maxDist returns max ‖θ − y‖₂ over the support of a bounded prior (a
// BoundedSupport, or one wrapped, see supportOf).
func maxDist(y []float64, prior Prior) (float64, error) {
	if s, ok := supportOf(prior).(BoundedSupport); ok {
		return s.MaxDist(y), nil
	}
	return 0, fmt.Errorf("exactmh: this bound needs a bounded support (a BoundedSupport prior such as model.Box or model.Ball), have %s", supportName(prior))
}

// supportName names the prior whose support an error is about: its type,
// or for a wrapper that of the prior it wraps, saying so.
func supportName(p Prior) string {
	if _, ok := p.(supportWrapper); ok {
		return fmt.Sprintf("%T (the base prior of the control-variate prior %T)", supportOf(p), p)
	}
	return fmt.Sprintf("%T", p)
}

// CheckOptions configures CheckBound and CheckRange. The zero value works.
type CheckOptions struct {
	// Points is the number of points (CheckRange) or pairs (CheckBound)
	// sampled (0: 200). Each costs N datum evaluations.
	Points int
	// Center and Spread place the points: θ = Center + Spread·z, z ~ N(0, I)
	// (nil Center: the origin; 0 Spread: 1). A pair's second point is
	// θ + Spread·u·z' with u log-uniform on [10⁻⁴, 1], so both far and
	// near pairs are tried. A point outside the prior's support is moved
	// into it (see intoSupport): each coordinate reflected into a Box, the
	// distance from the centre reflected into a Ball, so that these
	// supports are sampled in any dimension; for other priors it is pulled
	// toward Center (or, for a pair's second point, toward the first) if
	// that lies in the support, and redrawn otherwise.
	Center []float64
	Spread float64
	// Seed seeds the point generator.
	Seed uint64
}

// BoundViolation describes the worst datum found by CheckBound or
// CheckRange. It is also the error they return when the bound fails, and
// the error of a kernel whose bound fails at Start (the audit) or on a
// datum drawn during a run. Value, Bound, Lo and Width are tempered — β
// times the energy's units, as the kernels compare them; Ratio does not
// depend on β.
type BoundViolation struct {
	Datum           int
	Theta, ThetaNew []float64 // ThetaNew is nil for CheckRange
	// Value is |βU_i(θ) − βU_i(θ')| (CheckBound) or βU_i(θ) (CheckRange).
	Value float64
	// Bound is β·c_i·M(θ, θ') (CheckBound); for CheckRange, Value must
	// lie in [Lo, Lo + Width], the EnergyRange's times β.
	Bound, Lo, Width float64
	// Ratio is Value/Bound (CheckBound) or how far outside the range Value
	// is, relative to Width (CheckRange; ≤ 0 inside).
	Ratio float64
}

// Error describes the violation: the datum, the value against its bound
// (or range) and the points.
func (v *BoundViolation) Error() string {
	if v.ThetaNew != nil {
		return fmt.Sprintf("bound violated by datum %d: |ΔU| = %.6g > c_i·M = %.6g (ratio %.6g) for θ = %v, θ' = %v",
			v.Datum, v.Value, v.Bound, v.Ratio, v.Theta, v.ThetaNew)
	}
	return fmt.Sprintf("energy range violated by datum %d: βU = %.6g outside [%.6g, %.6g] at θ = %v",
		v.Datum, v.Value, v.Lo, v.Lo+v.Width, v.Theta)
}

// boundTol is the relative slack allowed for rounding when a bound is checked.
const boundTol = 1e-9

// pointSampler draws points in the prior's support for the bound checks.
type pointSampler struct {
	t      *Target
	rng    *rand.Rand
	center []float64
	spread float64
}

func newPointSampler(p *Posterior, opt *CheckOptions) (*pointSampler, int, error) {
	var o CheckOptions
	if opt != nil {
		o = *opt
	}
	if o.Points < 0 || o.Spread < 0 || math.IsNaN(o.Spread) {
		return nil, 0, fmt.Errorf("exactmh: CheckOptions: Points = %d, Spread = %v, want ≥ 0", o.Points, o.Spread)
	}
	if o.Points == 0 {
		o.Points = 200
	}
	if o.Spread == 0 {
		o.Spread = 1
	}
	t, err := NewTarget(p)
	if err != nil {
		return nil, 0, err
	}
	if o.Center == nil {
		o.Center = make([]float64, t.Dim())
	}
	if len(o.Center) != t.Dim() {
		return nil, 0, fmt.Errorf("exactmh: CheckOptions.Center has length %d, want %d", len(o.Center), t.Dim())
	}
	return &pointSampler{t: t, rng: rand.New(rand.NewPCG(o.Seed, 0x626f756e64)), center: o.Center, spread: o.Spread}, o.Points, nil
}

// draw writes a point base + scale·z, moved into the support (intoSupport),
// into dst. Only for a prior other than Box and Ball, with base outside its
// support, can it fail.
func (s *pointSampler) draw(dst, base []float64, scale float64) error {
	for range 1000 {
		for j := range dst {
			dst[j] = base[j] + scale*s.rng.NormFloat64()
		}
		if intoSupport(s.t.prior, dst, base) {
			return nil
		}
	}
	if !inSupport(s.t.prior, base) {
		return fmt.Errorf("exactmh: could not draw a point in the prior's support near %v (outside it) with spread %v: set CheckOptions.Center inside the support", base, scale)
	}
	return fmt.Errorf("exactmh: could not draw a point in the prior's support near %v with spread %v", base, scale)
}

// CheckBound samples pairs (θ, θ') in the prior's support and measures
// |U_i(θ) − U_i(θ')|/(c_i·M(θ, θ')) for every datum (b is untempered, as
// Posterior.DiffBound returns it and the kernels take it; the values are
// reported tempered, see BoundViolation). It returns the worst
// datum found; the error is that *BoundViolation if the ratio exceeds 1
// beyond rounding. Use it on every hand-made bound before trusting a kernel
// with it.
func CheckBound(p *Posterior, b *DiffBound, opt *CheckOptions) (*BoundViolation, error) {
	s, pairs, err := newPointSampler(p, opt)
	if err != nil {
		return nil, err
	}
	if err := b.check(s.t.N()); err != nil {
		return nil, err
	}
	n, d := s.t.N(), s.t.Dim()
	theta, thetaNew := make([]float64, d), make([]float64, d)
	idx, diff := make([]int, n), make([]float64, n)
	for i := range idx {
		idx[i] = i
	}
	worst := &BoundViolation{Datum: -1, Ratio: math.Inf(-1)}
	for range pairs {
		if err := s.draw(theta, s.center, s.spread); err != nil {
			return nil, err
		}
		u := math.Pow(10, -4*s.rng.Float64())
		if err := s.draw(thetaNew, theta, s.spread*u); err != nil {
			return nil, err
		}
		if err := s.t.EnergyDiffs(diff, theta, thetaNew, idx); err != nil {
			return nil, err
		}
		m := s.t.Beta() * b.M(theta, thetaNew)
		for i, v := range diff {
			bound := b.at(i) * m
			ratio := math.Abs(v) / bound
			if bound == 0 {
				ratio = 0
				if v != 0 {
					ratio = math.Inf(1)
				}
			}
			if ratio > worst.Ratio {
				*worst = BoundViolation{Datum: i, Theta: append(worst.Theta[:0], theta...),
					ThetaNew: append(worst.ThetaNew[:0], thetaNew...), Value: math.Abs(v), Bound: bound, Ratio: ratio}
			}
		}
	}
	if worst.Ratio > 1+boundTol {
		return worst, fmt.Errorf("exactmh: CheckBound: %w", worst)
	}
	return worst, nil
}

// CheckRange samples points θ in the prior's support and checks
// Lo[i] ≤ U_i(θ) ≤ Lo[i] + Width[i] for every datum (r is untempered, as
// Posterior.EnergyRange returns it and the kernels take it; the values are
// reported tempered, see BoundViolation). It returns the datum
// closest to (or furthest beyond) its range; the error is that
// *BoundViolation if a value lies outside beyond rounding.
func CheckRange(p *Posterior, r *EnergyRange, opt *CheckOptions) (*BoundViolation, error) {
	s, points, err := newPointSampler(p, opt)
	if err != nil {
		return nil, err
	}
	if err := r.check(s.t.N()); err != nil {
		return nil, err
	}
	n, d := s.t.N(), s.t.Dim()
	theta := make([]float64, d)
	idx, u := make([]int, n), make([]float64, n)
	for i := range idx {
		idx[i] = i
	}
	worst := &BoundViolation{Datum: -1, Ratio: math.Inf(-1)}
	for range points {
		if err := s.draw(theta, s.center, s.spread); err != nil {
			return nil, err
		}
		if err := s.t.Energies(u, theta, idx); err != nil {
			return nil, err
		}
		for i, v := range u {
			lo, w := s.t.Beta()*r.Lo[i], s.t.Beta()*r.Width[i]
			out := math.Max(lo-v, v-(lo+w)) / math.Max(w, math.Abs(lo)+1e-300)
			if out > worst.Ratio {
				*worst = BoundViolation{Datum: i, Theta: append(worst.Theta[:0], theta...), Value: v, Lo: lo, Width: w, Ratio: out}
			}
		}
	}
	if worst.Ratio > boundTol {
		return worst, fmt.Errorf("exactmh: CheckRange: %w", worst)
	}
	return worst, nil
}

// inSupport reports whether θ lies in the prior's support.
func inSupport(p Prior, theta []float64) bool {
	lp := p.LogPrior(theta)
	return !math.IsInf(lp, -1) && !math.IsNaN(lp)
}

// intoSupport moves x into the prior's support if it lies outside and
// reports whether it is inside afterwards. A BoundedSupport (or a prior
// wrapping one, see supportOf) folds it in by reflection (model.Box each
// coordinate at its faces, model.Ball the distance from its centre), which
// samples these supports directly in any dimension, where redrawing whole
// vectors
// until one lands inside fails (a standard normal vector lies in [−1, 1]⁵⁰
// with probability 5·10⁻⁹). For any other prior, and against rounding, x is
// pulled halfway toward base, up to 60 times, which succeeds if base lies
// in a support containing the segment between them (a convex one).
func intoSupport(p Prior, x, base []float64) bool {
	if inSupport(p, x) {
		return true
	}
	if s, ok := supportOf(p).(BoundedSupport); ok {
		s.Reflect(x)
	}
	for range 60 {
		if inSupport(p, x) {
			return true
		}
		for j := range x {
			x[j] = base[j] + (x[j]-base[j])/2
		}
	}
	return inSupport(p, x)
}
