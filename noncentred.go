// Copyright ©2026 The exactmh Authors. All rights reserved.
// Use of this source code is governed by a BSD-style
// license that can be found in the LICENSE file.

package exactmh

import (
	"encoding/binary"
	"fmt"
	"math"
	"slices"
)

// nonCentring is the non-centred parametrisation of a multilevel
// posterior (NUTS.NonCentred, HMC.NonCentred; Papaspiliopoulos, Roberts
// and Sköld 2007, "A general framework for the parametrization of
// hierarchical models", Statist. Sci. 22). The chain moves in φ, which is
// θ with each random effect u_{t,g} replaced by z_{t,g} = u_{t,g}/τ_t,
// τ_t = e^{θ[logTau_t]}: θ = T(φ) sets u_{t,g} = τ_t·z_{t,g} and keeps
// every other coordinate. Its target is the pushforward of π,
//
//	log π_φ(φ) = log π(T(φ)) + log|det ∂T/∂φ| = log π(T(φ)) + Σ_t G_t·log τ_t,
//
// G_t the levels of term t (each effect contributes ∂u/∂z = τ_t), with the
// chain rule for its gradient: ∂/∂z_{t,g} = τ_t·∂/∂u_{t,g} and
// ∂/∂log τ_t = ∂/∂log τ_t + Σ_g u_{t,g}·∂/∂u_{t,g} + G_t. T is a smooth
// bijection of ℝᵈ, so a π_φ-invariant kernel in φ is π-invariant in θ,
// exactly, for any prior: the prior of model.NewMultilevel, under which
// z_{t,g} ~ N(0, 1) independently of τ_t, only makes it the
// parametrisation without the funnel that a group with few data leaves in
// the centred one. Draws are reported in θ (Position: the centred
// names, u_…); the metric adapts in φ (workingPosition).
type nonCentring struct {
	terms []ncTerm
	// θ = T(φ) and ∇log π(θ) while evaluating; the centred position
	// Position reports and the φ it is of: pos is θ0 itself until the
	// chain moves, as T(T⁻¹(θ0)) need not be θ0 to the last bit.
	theta, grad, pos, posPhi []float64
	// noJacobian leaves Σ_t G_t·log τ_t out of log π_φ and its gradient: a
	// test hook (NUTSNonCentredNoJacobian), false in every real kernel.
	noJacobian bool
}

// ncTerm is a random-effect term: effects θ[start + g·stride], g < levels,
// scale e^{θ[logTau]}.
type ncTerm struct{ start, stride, levels, logTau int }

// newNonCentring returns the non-centring of t's multilevel prior
// (multilevelLayout), checking that every term fits θ and that no
// coordinate is the effect of two terms or both an effect and a log scale.
func newNonCentring(who string, t *Target, noJacobian bool) (*nonCentring, error) {
	lay, ok := t.Prior().(multilevelLayout)
	if !ok || lay.NumTerms() == 0 {
		return nil, fmt.Errorf("%s: NonCentred needs a multilevel model (the prior of model.NewMultilevel, with random-effect terms); prior %T has no random-effect terms", who, t.Prior())
	}
	d := t.Dim()
	const effect, scale = 1, 2
	role := make([]uint8, d)
	nc := &nonCentring{theta: make([]float64, d), grad: make([]float64, d), pos: make([]float64, d), posPhi: make([]float64, d), noJacobian: noJacobian}
	for tm := range lay.NumTerms() {
		_, _, start, stride, levels, lt := lay.Term(tm)
		if stride < 1 || levels < 0 || start < 0 || levels > 0 && start+(levels-1)*stride >= d || lt < 0 || lt >= d {
			return nil, fmt.Errorf("%s: NonCentred: the prior's term %d (start %d, stride %d, %d levels, log τ at %d) does not fit θ of dimension %d", who, tm, start, stride, levels, lt, d)
		}
		if role[lt] == effect {
			return nil, fmt.Errorf("%s: NonCentred: the prior's term %d has its log τ at θ[%d], an effect of another term", who, tm, lt)
		}
		role[lt] = scale
		for g := range levels {
			j := start + g*stride
			if role[j] != 0 {
				return nil, fmt.Errorf("%s: NonCentred: the prior's term %d has its effect %d at θ[%d], already an effect or a log τ", who, tm, g, j)
			}
			role[j] = effect
		}
		nc.terms = append(nc.terms, ncTerm{start, stride, levels, lt})
	}
	return nc, nil
}

// centred sets dst = T(phi): u = τ·z.
func (nc *nonCentring) centred(dst, phi []float64) { nc.scale(dst, phi, false) }

// working sets dst = T⁻¹(theta): z = u/τ.
func (nc *nonCentring) working(dst, theta []float64) { nc.scale(dst, theta, true) }

// scale sets dst = src with every effect multiplied by its τ =
// e^{src[logTau]}, or divided by it if inverse (the log scales are the
// same coordinates in θ and φ).
func (nc *nonCentring) scale(dst, src []float64, inverse bool) {
	copy(dst, src)
	for _, tm := range nc.terms {
		tau := math.Exp(src[tm.logTau])
		for g := range tm.levels {
			j := tm.start + g*tm.stride
			if inverse {
				dst[j] = src[j] / tau
			} else {
				dst[j] = tau * src[j]
			}
		}
	}
}

// logJacobian returns log|det ∂T/∂φ| = Σ_t G_t·log τ_t (0 in the mutant).
func (nc *nonCentring) logJacobian(phi []float64) float64 {
	if nc.noJacobian {
		return 0
	}
	var s float64
	for _, tm := range nc.terms {
		s += float64(tm.levels) * phi[tm.logTau]
	}
	return s
}

// pullback sets gphi = ∇_φ log π_φ from gtheta = ∇_θ log π at theta =
// T(phi).
func (nc *nonCentring) pullback(gphi, gtheta, theta, phi []float64) {
	copy(gphi, gtheta)
	for _, tm := range nc.terms {
		tau := math.Exp(phi[tm.logTau])
		var s float64
		for g := range tm.levels {
			j := tm.start + g*tm.stride
			s += theta[j] * gtheta[j]
			gphi[j] = tau * gtheta[j]
		}
		if !nc.noJacobian {
			s += float64(tm.levels)
		}
		gphi[tm.logTau] += s
	}
}

// eval returns log π_φ(φ) and sets grad = ∇log π_φ(φ), by g's evaluation
// at θ = T(φ).
func (nc *nonCentring) eval(g *gradWalk, grad, phi []float64) (float64, error) {
	nc.centred(nc.theta, phi)
	lp, err := g.evalAt(nc.grad, nc.theta)
	if err != nil || math.IsInf(lp, -1) {
		return lp, err
	}
	nc.pullback(grad, nc.grad, nc.theta, phi)
	return lp + nc.logJacobian(phi), nil
}

// gradient sets grad = ∇log π_φ(φ).
func (nc *nonCentring) gradient(g *gradWalk, grad, phi []float64) error {
	nc.centred(nc.theta, phi)
	if err := g.gradientAt(nc.grad, nc.theta); err != nil {
		return err
	}
	nc.pullback(grad, nc.grad, nc.theta, phi)
	return nil
}

// marshal returns φ, log π_φ(φ) and its gradient: the chain's position is
// saved centred, and T⁻¹(T(φ)) need not be φ to the last bit.
func (nc *nonCentring) marshal(g *gradWalk) []byte {
	b := make([]byte, 0, 8*(2*len(g.theta)+1))
	for _, v := range g.theta {
		b = binary.LittleEndian.AppendUint64(b, math.Float64bits(v))
	}
	b = binary.LittleEndian.AppendUint64(b, math.Float64bits(g.logPi))
	for _, v := range g.grad {
		b = binary.LittleEndian.AppendUint64(b, math.Float64bits(v))
	}
	return b
}

// unmarshal restores what marshal saved, checking its length, that every
// value is finite and that T(φ) is the position Start was given (within
// rounding).
func (nc *nonCentring) unmarshal(g *gradWalk, b []byte) error {
	d := len(g.theta)
	if len(b) != 8*(2*d+1) {
		return fmt.Errorf("non-centred state of %d bytes, want %d (φ, log π and its gradient in dimension %d)", len(b), 8*(2*d+1), d)
	}
	vals := make([]float64, 2*d+1)
	for i := range vals {
		vals[i] = math.Float64frombits(binary.LittleEndian.Uint64(b[8*i:]))
		if math.IsNaN(vals[i]) || math.IsInf(vals[i], 0) {
			return fmt.Errorf("non-centred state: value %d is %v", i, vals[i])
		}
	}
	phi := vals[:d]
	nc.centred(nc.theta, phi)
	start := g.Position()
	for j := range d {
		if math.Abs(nc.theta[j]-start[j]) > 1e-9*math.Max(1, math.Abs(start[j])) {
			return fmt.Errorf("non-centred state: φ maps to θ[%d] = %v, but the checkpoint's θ[%d] = %v", j, nc.theta[j], j, start[j])
		}
	}
	copy(g.theta, phi)
	g.logPi = vals[d]
	copy(g.grad, vals[d+1:])
	return nil
}

// Position returns the chain's θ: centred (T(φ)) when the chain moves in
// the non-centred φ.
func (g *gradWalk) Position() []float64 {
	if g.nc == nil {
		return g.theta
	}
	if !slices.Equal(g.nc.posPhi, g.theta) {
		g.nc.centred(g.nc.pos, g.theta)
		copy(g.nc.posPhi, g.theta)
	}
	return g.nc.pos
}

// logDensity returns log π at Position: logPi, less the Jacobian for a
// non-centred chain (whose logPi is log π_φ).
func (g *gradWalk) logDensity() float64 {
	if g.nc == nil {
		return g.logPi
	}
	return g.logPi - g.nc.logJacobian(g.theta)
}

// workingPosition returns the coordinates the chain moves in (φ when
// non-centred), where warmup estimates the metric.
func (g *gradWalk) workingPosition() []float64 { return g.theta }

// logPrior returns log p at the working position x (the support of T(φ)
// is that of φ's image).
func (g *gradWalk) logPrior(x []float64) float64 {
	if g.nc == nil {
		return g.t.LogPrior(x)
	}
	g.nc.centred(g.nc.theta, x)
	return g.t.LogPrior(g.nc.theta)
}

// MarshalState saves nothing for a centred chain (its state is θ, from
// which Start recomputes the rest), and φ with log π_φ and its gradient
// for a non-centred one.
func (g *gradWalk) marshalState() ([]byte, error) {
	if g.nc == nil {
		return nil, nil
	}
	return g.nc.marshal(g), nil
}

// unmarshalState restores what marshalState saved.
func (g *gradWalk) unmarshalState(b []byte) error {
	if g.nc == nil {
		return noState{}.UnmarshalState(b)
	}
	return g.nc.unmarshal(g, b)
}

// workingPositioner is a chain that moves in other coordinates than those
// it reports (a non-centred NUTS or HMC): warmup estimates the metric from
// workingPosition, not Position.
type workingPositioner interface {
	workingPosition() []float64
}
