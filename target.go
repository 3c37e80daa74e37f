// Copyright ©2026 The exactmh Authors. All rights reserved.
// Use of this source code is governed by a BSD-style
// license that can be found in the LICENSE file.

package exactmh

import (
	"context"
	"errors"
	"fmt"
	"math"
	"slices"
	"sync/atomic"

	"github.com/exactmh/exactmh/internal/stream"
)

// chunk is the number of data a Target processes per call to the user's
// Energy when it works through all N data or rescales gradient weights: its
// scratch arrays have this fixed size, so no call allocates.
const chunk = 512

// Target is a kernel's view of a Posterior for one chain. Every datum
// evaluation a kernel makes goes through it and is counted here, by the
// driver's code, so kernels cannot misreport their cost (the "fake problem"
// of gonum/optimize). The energies it returns are tempered: βU_i.
//
// It also checks what kernels must never silently consume: a non-finite
// energy returns an *EnergyError naming the datum and θ.
//
// A Target belongs to one chain and is not safe for concurrent use.
type Target struct {
	n, d   int
	beta   float64
	energy Energy
	differ EnergyDiffer // nil when the energy has no fused difference
	grad   Gradienter   // nil when the energy has no gradient
	prior  Prior
	pgrad  PriorGradienter

	cache *runCache // shared with the run's other chains; nil by NewTarget

	evals     int64 // datum energy evaluations
	gradEvals int64 // datum gradient evaluations
	hessEvals int64 // datum Hessian evaluations (FindMAP's Newton steps, Laplace approximations)

	// interrupt, when not nil, is polled once per chunk of the whole-data
	// passes (TotalEnergy, TotalEnergyAndGradient, AddGradient, the full
	// gradient and Hessian, FindMAP's Newton sweeps); once set they return
	// errInterrupted. The driver sets it only for a chain that can abandon
	// a transition (stepInterrupter), FindMAP for its search.
	interrupt *atomic.Bool
	// costLimit, when positive, makes the passes that poll interrupt
	// during a Step (inStep) of a chain that can abandon a transition
	// (abandonable, set by the driver: stepInterrupter) return
	// errInterrupted too once the counted cost evals + costGrad·gradEvals
	// exceeds it, costCut then set: a racing pilot's guard ends a
	// transition that can no longer keep it in the race (pilotGuard.arm),
	// decided by counts, never by a clock. The driver's rollback puts the
	// counts back as they were before the transition.
	costLimit           float64
	abandonable, inStep bool
	costCut             bool
	// ctx is the context interrupt watches (watch), for a Start that runs
	// a whole phase of its own — the multilevel kernels' Laplace-EM
	// centre — to pass on (runContext).
	ctx context.Context

	// pass streams the whole-data pass block is in (energy.go's
	// rowStore.pass): started at row 0, ended at row N.
	pass stream.Pass

	idxBuf [chunk]int
	valBuf [chunk]float64
	wBuf   [chunk]float64
	one    [2]float64
}

// NewTarget returns a counting Target for p, for driving a Kernel's chains by
// hand (Sample makes one per chain itself).
func NewTarget(p *Posterior) (*Target, error) {
	if err := p.Validate(); err != nil {
		return nil, err
	}
	t := &Target{
		n:      p.Energy.Len(),
		d:      p.Energy.Dim(),
		beta:   p.beta(),
		energy: p.Energy,
		prior:  p.prior(),
	}
	t.differ, _ = p.Energy.(EnergyDiffer)
	t.grad, _ = p.Energy.(Gradienter)
	if g, ok := p.Energy.(GLM); ok {
		// A GLM without its own fast paths gets them from the contract.
		if t.differ == nil {
			t.differ = glmDiffer{g}
		}
		if t.grad == nil {
			t.grad = glmGradient{g}
		}
	}
	t.pgrad, _ = t.prior.(PriorGradienter)
	return t, nil
}

// N returns the number of data.
func (t *Target) N() int { return t.n }

// Dim returns the dimension of θ.
func (t *Target) Dim() int { return t.d }

// Beta returns the tempering factor β (1 when untempered).
func (t *Target) Beta() float64 { return t.beta }

// Energy returns the user's energy, for kernels that need its concrete type
// to build bounds at start. Kernels must not evaluate it directly: every
// evaluation goes through the Target's methods so it is counted.
func (t *Target) Energy() Energy { return t.energy }

// Prior returns the prior (Flat when the posterior has none).
func (t *Target) Prior() Prior { return t.prior }

// HasGradient reports whether the energy and the prior both provide gradients.
func (t *Target) HasGradient() bool { return t.grad != nil && t.pgrad != nil }

// Evals returns the number of datum energy evaluations made so far.
func (t *Target) Evals() int64 { return t.evals }

// GradEvals returns the number of datum gradient evaluations made so far.
func (t *Target) GradEvals() int64 { return t.gradEvals }

// LogPrior returns log p(θ), −Inf outside the support. It is exact and costs
// no datum evaluation.
func (t *Target) LogPrior(theta []float64) float64 { return t.prior.LogPrior(theta) }

// checkBatch checks the arguments of a call on a batch of data, once per
// call: θ (and θ′ for a difference, when hasNew) of the target's
// dimension, room in dst for every datum, and indices in [0, N). It costs
// one comparison per index and allocates only for the error.
func (t *Target) checkBatch(who string, ndst int, theta, thetaNew []float64, hasNew bool, idx []int) error {
	switch {
	case len(theta) != t.d:
		return fmt.Errorf("exactmh: Target.%s: len(θ) = %d, want the dimension %d", who, len(theta), t.d)
	case hasNew && len(thetaNew) != t.d:
		return fmt.Errorf("exactmh: Target.%s: len(θ′) = %d, want the dimension %d", who, len(thetaNew), t.d)
	case ndst < len(idx):
		return fmt.Errorf("exactmh: Target.%s: len(dst) = %d < len(idx) = %d", who, ndst, len(idx))
	}
	n := uint(t.n)
	for _, i := range idx {
		if uint(i) >= n {
			return t.indexError(who, idx)
		}
	}
	return nil
}

// indexError names the first index of idx outside [0, N).
func (t *Target) indexError(who string, idx []int) error {
	for k, i := range idx {
		if i < 0 || i >= t.n {
			return fmt.Errorf("exactmh: Target.%s: idx[%d] = %d, want a datum index in [0, N = %d)", who, k, i, t.n)
		}
	}
	return nil
}

// Energies sets dst[k] = βU_{idx[k]}(θ) and returns an *EnergyError if one is
// not finite. It returns an error, before evaluating anything, if θ is not
// of the target's dimension, dst is shorter than idx or an index is
// outside [0, N).
func (t *Target) Energies(dst, theta []float64, idx []int) error {
	if err := t.checkBatch("Energies", len(dst), theta, nil, false, idx); err != nil {
		return err
	}
	t.evals += int64(len(idx))
	t.energy.Energies(dst, theta, idx)
	return scaleFinite(dst[:len(idx)], t.beta, idx, theta, nil)
}

// allFinite reports whether every value of x is finite, at about a
// fifth of the cost of testing each: v − v is 0 for a finite v and NaN
// otherwise, so four running sums of it are 0 exactly when every value is
// finite.
func allFinite(x []float64) bool {
	var a0, a1, a2, a3 float64
	k := 0
	for ; k+4 <= len(x); k += 4 {
		v := x[k : k+4 : k+4]
		a0 += v[0] - v[0]
		a1 += v[1] - v[1]
		a2 += v[2] - v[2]
		a3 += v[3] - v[3]
	}
	for ; k < len(x); k++ {
		a0 += x[k] - x[k]
	}
	return a0+a1+a2+a3 == 0
}

// scaleFinite multiplies dst, the energies (or differences, θ′ not nil)
// of data idx, by β (not at β = 1, where the product is dst) and returns
// an *EnergyError for the first value that is not finite, each value
// looked at only when allFinite says one is not (a kernel's hot path:
// LocalGibbs calls Energies on two passes of the data a transition).
func scaleFinite(dst []float64, beta float64, idx []int, theta, thetaNew []float64) error {
	if beta != 1 {
		for k := range dst {
			dst[k] *= beta
		}
	}
	if allFinite(dst) {
		return nil
	}
	for k, v := range dst {
		if math.IsNaN(v) || math.IsInf(v, 0) {
			return newEnergyError(idx[k], theta, thetaNew, v)
		}
	}
	return nil
}

// EnergyDiffs sets dst[k] = β(U_i(θ) − U_i(θ')) for i = idx[k], the log
// likelihood ratio of datum i for the move θ → θ'. With an EnergyDiffer it
// reads each datum once (one evaluation per datum); otherwise it evaluates U_i
// at both points (two evaluations per datum). Its arguments are checked as
// Energies checks its own.
func (t *Target) EnergyDiffs(dst, theta, thetaNew []float64, idx []int) error {
	if err := t.checkBatch("EnergyDiffs", len(dst), theta, thetaNew, true, idx); err != nil {
		return err
	}
	return t.energyDiffs(dst, theta, thetaNew, idx)
}

// energyDiffs is EnergyDiffs without the check of its arguments, for a
// kernel that calls it datum by datum with θ, θ′ of the target's dimension
// and indices it drew from [0, N) (TFMH's step), where the check would
// cost about as much as the call.
func (t *Target) energyDiffs(dst, theta, thetaNew []float64, idx []int) error {
	if t.differ != nil {
		t.evals += int64(len(idx))
		t.differ.EnergyDiffs(dst, theta, thetaNew, idx)
	} else {
		t.evals += 2 * int64(len(idx))
		for k := range idx {
			t.energy.Energies(t.one[:1], theta, idx[k:k+1])
			t.energy.Energies(t.one[1:], thetaNew, idx[k:k+1])
			dst[k] = t.one[0] - t.one[1]
		}
	}
	return t.temperDiffs(dst, theta, thetaNew, idx)
}

// temperDiffs multiplies the differences dst of data idx by β and reports
// the first that is not finite.
func (t *Target) temperDiffs(dst, theta, thetaNew []float64, idx []int) error {
	return scaleFinite(dst[:len(idx)], t.beta, idx, theta, thetaNew)
}

// energyDiffsFrom sets dst[k] as EnergyDiffs(dst[k], theta, nexts[k], idx)
// does, bit for bit, and returns each one's error in errs[k], for an
// energy that computes differences from one point to several at once
// (manyDiffer: the terms at theta are shared); for any other, it calls
// EnergyDiffs for each.
func (t *Target) energyDiffsFrom(dst [][]float64, theta []float64, nexts [][]float64, idx []int, errs []error) {
	md, ok := t.energy.(manyDiffer)
	if !ok || t.differ != EnergyDiffer(md) {
		for k, next := range nexts {
			errs[k] = t.EnergyDiffs(dst[k], theta, next, idx)
		}
		return
	}
	for k, next := range nexts {
		if errs[k] = t.checkBatch("EnergyDiffs", len(dst[k]), theta, next, true, idx); errs[k] != nil {
			return
		}
	}
	t.evals += int64(len(nexts) * len(idx))
	md.energyDiffsFrom(dst, theta, nexts, idx)
	for k, next := range nexts {
		errs[k] = t.temperDiffs(dst[k], theta, next, idx)
	}
}

// manyDiffer is an EnergyDiffer that also computes the differences from one
// point to several in one pass, each bit for bit its EnergyDiffs.
type manyDiffer interface {
	EnergyDiffer
	energyDiffsFrom(dst [][]float64, theta []float64, nexts [][]float64, idx []int)
}

// TotalEnergy returns βΣ_i U_i(θ) over all N data, in chunks through the
// Target's own scratch (no allocation). It costs N evaluations. θ of the
// wrong length is an error.
func (t *Target) TotalEnergy(theta []float64) (float64, error) {
	if len(theta) != t.d {
		return 0, fmt.Errorf("exactmh: Target.TotalEnergy: len(θ) = %d, want the dimension %d", len(theta), t.d)
	}
	u, _, err := t.totalEnergies(theta, nil)
	return u, err
}

// totalEnergies returns βΣ_i U_i at theta and, unless next is nil, at
// next in one pass: each chunk's rows are read for theta and again, still
// in cache, for next (N or 2N evaluations, one read of the data).
func (t *Target) totalEnergies(theta, next []float64) (u, uNext float64, err error) {
	var sum [2]float64
	for lo := 0; lo < t.n; lo += chunk {
		if t.interrupted() {
			return 0, 0, errInterrupted
		}
		idx, _ := t.block(lo)
		val := t.valBuf[:len(idx)]
		for p, at := range [2][]float64{theta, next} {
			if at == nil {
				break
			}
			t.evals += int64(len(idx))
			t.energy.Energies(val, at, idx)
			s, err := sumEnergies(val, idx, at)
			if err != nil {
				return 0, 0, err
			}
			sum[p] += s
		}
	}
	return t.beta * sum[0], t.beta * sum[1], nil
}

// Gaps sets dst[k] = β(−U_i(θ) − log B_i(θ)) for i = idx[k]: FlyMC's
// tempered log-likelihood gap over the lower bound b, one evaluation per
// datum. A non-finite gap returns an *EnergyError, a negative one a
// *LowerBoundViolation. Its arguments are checked as Energies checks its
// own, and b must not be nil.
func (t *Target) Gaps(dst, theta []float64, idx []int, b FlyBound) error {
	if err := t.checkBatch("Gaps", len(dst), theta, nil, false, idx); err != nil {
		return err
	}
	if b == nil {
		return errors.New("exactmh: Target.Gaps: nil FlyBound")
	}
	t.evals += int64(len(idx))
	b.Gaps(dst, theta, idx)
	for k, v := range dst[:len(idx)] {
		v *= t.beta
		if math.IsNaN(v) || math.IsInf(v, 0) {
			return newEnergyError(idx[k], theta, nil, v)
		}
		if v < 0 {
			return &LowerBoundViolation{Datum: idx[k], Theta: slices.Clone(theta), Gap: v}
		}
		dst[k] = v
	}
	return nil
}

// TotalEnergyAndGradient returns βΣ_iU_i(θ) over all N data and adds
// β·Σ_i∇U_i(θ) to grad, reading each datum once when the energy implements
// EnergyGradienter (otherwise it makes the two passes). It costs N energy
// and N gradient evaluations.
func (t *Target) TotalEnergyAndGradient(grad, theta []float64) (float64, error) {
	if len(theta) != t.d || len(grad) != t.d {
		return 0, fmt.Errorf("exactmh: Target.TotalEnergyAndGradient: len(θ) = %d, len(grad) = %d, want the dimension %d", len(theta), len(grad), t.d)
	}
	eg, ok := t.energy.(EnergyGradienter)
	if !ok {
		if err := t.addFullGradient(grad, theta); err != nil {
			return 0, err
		}
		return t.TotalEnergy(theta)
	}
	var sum float64
	for lo := 0; lo < t.n; lo += chunk {
		if t.interrupted() {
			return 0, errInterrupted
		}
		idx, w := t.block(lo)
		val := t.valBuf[:len(idx)]
		t.evals += int64(len(idx))
		t.gradEvals += int64(len(idx))
		eg.EnergiesAndGradient(val, grad, theta, idx, w)
		s, err := sumEnergies(val, idx, theta)
		if err != nil {
			return 0, err
		}
		sum += s
	}
	return t.beta * sum, finiteGradient(grad, theta)
}

// addFullGradient adds β·Σ_i∇U_i(θ) over all data to grad, in chunks
// through the target's scratch: bit for bit AddGradient over the indices
// 0 … N−1 (the same chunks, in order, with the weights β), without their
// O(N) index array (8 bytes a datum).
//
// FindMAP's L-BFGS and projected ascent use it.
func (t *Target) addFullGradient(grad, theta []float64) error {
	if t.grad == nil {
		return t.errNoGradient()
	}
	for lo := 0; lo < t.n; lo += chunk {
		if t.interrupted() {
			return errInterrupted
		}
		idx, w := t.block(lo)
		t.gradEvals += int64(len(idx))
		t.grad.AddGradient(grad, theta, idx, w)
	}
	return finiteGradient(grad, theta)
}

// sumEnergies returns the sum of a chunk of energies, or an *EnergyError
// for the first non-finite one (or an error if only the sum overflows).
func sumEnergies(val []float64, idx []int, theta []float64) (float64, error) {
	var s float64
	for _, v := range val {
		s += v
	}
	if math.IsNaN(s) || math.IsInf(s, 0) {
		for k, v := range val {
			if math.IsNaN(v) || math.IsInf(v, 0) {
				return 0, newEnergyError(idx[k], theta, nil, v)
			}
		}
		return 0, &nonFiniteError{fmt.Sprintf("exactmh: energies of data %d…%d at θ = %v overflow when summed", idx[0], idx[len(idx)-1], theta)}
	}
	return s, nil
}

// finiteGradient reports the first non-finite component of grad.
func finiteGradient(grad, theta []float64) error {
	if allFinite(grad) {
		return nil
	}
	for j, g := range grad {
		if math.IsNaN(g) || math.IsInf(g, 0) {
			return &nonFiniteError{fmt.Sprintf("exactmh: gradient component %d is %v at θ = %v", j, g, theta)}
		}
	}
	return nil
}

// nonFiniteError is a gradient with a non-finite component, or finite
// energies whose sum overflows.
type nonFiniteError struct{ msg string }

func (e *nonFiniteError) Error() string { return e.msg }

// isNonFinite reports whether err is a non-finite energy, energy sum or
// gradient (an *EnergyError or a nonFiniteError): at a leapfrog position
// NUTS and HMC take it for zero density, a divergence (gradWalk.evalStep),
// where it stops any other evaluation.
func isNonFinite(err error) bool {
	var ee *EnergyError
	var ne *nonFiniteError
	return errors.As(err, &ee) || errors.As(err, &ne)
}

func (t *Target) errNoGradient() error {
	return fmt.Errorf("exactmh: energy %T has no gradient (implements neither Gradienter nor GLM)", t.energy)
}

// AddGradient adds β·Σ_k w[k]·∇U_{idx[k]}(θ) to grad (w nil means all
// weights 1). It returns an error if the energy has no gradient, or,
// before evaluating anything, if grad or θ is not of the target's
// dimension, w is neither nil nor as long as idx, or an index is outside
// [0, N).
func (t *Target) AddGradient(grad, theta []float64, idx []int, w []float64) error {
	if t.grad == nil {
		return t.errNoGradient()
	}
	if len(grad) != t.d {
		return fmt.Errorf("exactmh: Target.AddGradient: len(grad) = %d, want the dimension %d", len(grad), t.d)
	}
	if err := t.checkBatch("AddGradient", len(idx), theta, nil, false, idx); err != nil {
		return err
	}
	if w != nil && len(w) != len(idx) {
		return fmt.Errorf("exactmh: Target.AddGradient: len(w) = %d, want len(idx) = %d (or nil)", len(w), len(idx))
	}
	t.gradEvals += int64(len(idx))
	for lo := 0; lo < len(idx); lo += chunk {
		if t.interrupted() {
			return errInterrupted
		}
		m := min(chunk, len(idx)-lo)
		wb := t.wBuf[:m]
		for k := range wb {
			wk := 1.0
			if w != nil {
				wk = w[lo+k]
			}
			wb[k] = t.beta * wk
		}
		t.grad.AddGradient(grad, theta, idx[lo:lo+m], wb)
	}
	return finiteGradient(grad, theta)
}

// AddLogPriorGradient adds ∇log p(θ) to grad, or returns an error if the
// prior has no gradient, or, before evaluating it, if grad or θ is not of
// the target's dimension.
func (t *Target) AddLogPriorGradient(grad, theta []float64) error {
	if t.pgrad == nil {
		return fmt.Errorf("exactmh: prior %T has no gradient (does not implement PriorGradienter)", t.prior)
	}
	if len(theta) != t.d || len(grad) != t.d {
		return fmt.Errorf("exactmh: Target.AddLogPriorGradient: len(θ) = %d, len(grad) = %d, want the dimension %d", len(theta), len(grad), t.d)
	}
	t.pgrad.AddLogPriorGradient(grad, theta)
	return nil
}

// EnergyError reports a non-finite energy or energy difference: the datum, the
// point(s) and the value. Kernels stop the chain with it rather than let a NaN
// reach an acceptance probability.
type EnergyError struct {
	Datum    int       // index i of the datum
	Theta    []float64 // θ at which U_i was evaluated
	ThetaNew []float64 // θ' for an energy difference, else nil
	Value    float64   // the non-finite value (β-scaled)
}

func newEnergyError(i int, theta, thetaNew []float64, v float64) *EnergyError {
	e := &EnergyError{Datum: i, Theta: append([]float64(nil), theta...), Value: v}
	if thetaNew != nil {
		e.ThetaNew = append([]float64(nil), thetaNew...)
	}
	return e
}

// Error names the datum, the non-finite value and the point(s).
func (e *EnergyError) Error() string {
	if e.ThetaNew != nil {
		return fmt.Sprintf("energy difference of datum %d between θ = %v and θ' = %v is %v", e.Datum, e.Theta, e.ThetaNew, e.Value)
	}
	return fmt.Sprintf("energy of datum %d at θ = %v is %v", e.Datum, e.Theta, e.Value)
}

// errInterrupted is returned by a whole-data pass abandoned because the
// run was cancelled (Target.interrupt); the driver then rolls the
// transition back (chainRunner.steps).
var errInterrupted = errors.New("transition interrupted by cancellation")

// interrupted reports whether the pass in progress is to be abandoned.
func (t *Target) interrupted() bool {
	if t.inStep && t.abandonable && t.costLimit > 0 && t.countedCost() > t.costLimit {
		t.costCut = true
		return true
	}
	return stopped(t.interrupt)
}

// countedCost is the datum evaluations t counted, gradients at costGrad
// of one (the pilots' pricing without a step's proposal).
func (t *Target) countedCost() float64 {
	return float64(t.evals) + costGrad*float64(t.gradEvals)
}

// watchContext returns a flag set once ctx is cancelled, for passes over
// the data to poll once per chunk, and the function that stops watching;
// the flag is nil for a context that cannot be cancelled.
func watchContext(ctx context.Context) (flag *atomic.Bool, release func() bool) {
	if ctx == nil || ctx.Done() == nil {
		return nil, func() bool { return false }
	}
	flag = new(atomic.Bool)
	flag.Store(ctx.Err() != nil) // at once for a context already cancelled; AfterFunc's call is asynchronous
	return flag, context.AfterFunc(ctx, func() { flag.Store(true) })
}

// watch makes t's whole-data passes return errInterrupted within a chunk
// once ctx is cancelled, until the function it returns is called, which
// restores the watch before it: a phase that watches its own context
// inside a Start (multilevelCenter) leaves the Start's watch in place.
func (t *Target) watch(ctx context.Context) (release func()) {
	prevFlag, prevCtx := t.interrupt, t.ctx
	flag, stop := watchContext(ctx)
	t.interrupt, t.ctx = flag, ctx
	return func() {
		stop()
		t.interrupt, t.ctx = prevFlag, prevCtx
	}
}

// RunContext returns the context t's passes watch (the run's, during a
// chain's Start and DefaultStart), or context.Background if none: for a
// phase a kernel runs in Start — the multilevel kernels' Laplace-EM
// centre — to stop when the run is cancelled.
func (t *Target) RunContext() context.Context {
	if t.ctx == nil {
		return context.Background()
	}
	return t.ctx
}

// stopped reports whether flag (from watchContext; nil: never) is set.
func stopped(flag *atomic.Bool) bool { return flag != nil && flag.Load() }

// cancelled returns ctx's error in place of errInterrupted, which a pass
// abandoned because ctx was cancelled returns, and err otherwise.
func cancelled(ctx context.Context, err error) error {
	if ctx != nil && errors.Is(err, errInterrupted) && ctx.Err() != nil {
		return ctx.Err()
	}
	return err
}

// suspendInterrupt stops the passes from polling the cancellation, for
// work the driver cannot roll back, until the function it returns is
// called.
func (t *Target) suspendInterrupt() (resume func()) {
	flag := t.interrupt
	t.interrupt = nil
	return func() { t.interrupt = flag }
}

// block returns, in the target's scratch, the indices lo … lo+m−1 of the
// chunk of data starting at lo (m = min(chunk, N − lo)) and the weight β
// for each: one pass over all the data is a loop over blocks. Over a
// store's mapping it reads ahead and lets go of what the pass has read
// (rowStore.pass), so that the pass's resident share of the file stays a
// few windows.
func (t *Target) block(lo int) (idx []int, w []float64) {
	m := min(chunk, t.n-lo)
	if lo == 0 {
		t.pass = memRows(t.energy).pass(t.d, 0, t.n)
	}
	t.pass.At(lo)
	if lo+m == t.n {
		t.pass.End() // the last chunk's few pages fault in again
	}
	idx, w = t.idxBuf[:m], t.wBuf[:m]
	for k := range idx {
		idx[k] = lo + k
		w[k] = t.beta
	}
	return idx, w
}

// The methods below are the Target's surface for kernels written outside
// the package (package multilevel's, a user's): what the built-in kernels
// read of it directly.

// Interrupted returns ErrInterrupted once the run t belongs to is
// cancelled mid-transition, nil before. A chain's own loop over O(N) data
// (reads the Target does not make for it) polls it once per chunk of data
// and returns the error from Step, which its AbandonStep then undoes (see
// Chain).
func (t *Target) Interrupted() error {
	if t.interrupted() {
		return errInterrupted
	}
	return nil
}

// Interruptible reports whether t's passes can be interrupted (the driver
// watches the run for a chain with AbandonStep, Watch for a search): only
// then need a chain keep what AbandonStep would restore.
func (t *Target) Interruptible() bool { return t.interrupt != nil }

// Count adds n datum energy evaluations that a kernel made itself, through
// its own reads of an energy's rows (a GLM's loss at a linear predictor),
// to Evals: every datum a kernel reads is counted.
func (t *Target) Count(n int) { t.evals += int64(n) }

// Watch makes t's whole-data passes (and Interrupted) return
// ErrInterrupted within a chunk of data once ctx is cancelled, until the
// function it returns is called: for a search over the data outside a run
// (a multilevel model's Laplace-EM centre).
func (t *Target) Watch(ctx context.Context) (release func()) { return t.watch(ctx) }

// CheckStart returns the error every built-in kernel's Start returns,
// prefixed by name, for a θ0 whose dimension is not t's or a
// doubly-intractable target (IntractableLikelihood, which only Exchange
// samples); nil otherwise.
func (t *Target) CheckStart(name string, theta0 []float64) error {
	if err := refuseIntractable(name, t); err != nil {
		return err
	}
	if err := checkStart(t, theta0); err != nil {
		return fmt.Errorf("%s: %w", name, err)
	}
	return nil
}

// Shared returns what build returns, built once per run for key and shared
// by the run's chains (and the automatic default's pilots and the run it
// chooses): the tables a kernel's Start computes from the posterior and
// its configuration alone. key names everything the value depends on. A
// Target of NewTarget shares nothing: build runs every time. A panic in
// build is the building chain's and an error for the others.
func (t *Target) Shared(key string, build func() (any, error)) (any, error) {
	return shared(t.cache, key, build)
}
