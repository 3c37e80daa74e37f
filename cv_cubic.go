// Copyright ©2026 The exactmh Authors. All rights reserved.
// Use of this source code is governed by a BSD-style
// license that can be found in the LICENSE file.

package exactmh

import (
	"fmt"
	"math"
	"sync/atomic"

	"github.com/exactmh/exactmh/internal/vec"
)

// LossCuber is implemented by GLMs whose loss has a third derivative and a
// bounded fourth (model.LogisticRegression, model.StudentTRegression):
// ControlVariates may then expand each energy to third order (cvCubicGain).
//
// LossDeriv3 returns f_i‴(z). LossBound4 returns an upper bound on
// sup |f_i⁗(z)| over lo ≤ z ≤ hi (lo may be −Inf and hi +Inf), +Inf if
// there is none.
type LossCuber interface {
	LossDeriv3(i int, z float64) float64
	LossBound4(i int, lo, hi float64) float64
}

// Third-order control variates. With the cubic term of each energy's
// Taylor expansion at θ̂ moved into the surrogate prior as well,
//
//	Û_i(θ) = f_i + f_i′u + ½f_i″u² + ⅙f_i‴u³,  u = x_iᵀ(θ − θ̂),
//
// the remainders vanish to fourth order and, by the same two arguments as
// the second-order bound (Taylor's remainder at each end; the mean value
// theorem with |R_i′(z)| ≤ K_i|z − ẑ_i|³/6 along the segment),
//
//	|R_i(θ) − R_i(θ′)| ≤ c_i·M₄(θ, θ′),  c_i = K_i·s_i⁴,
//	M₄ = min((a⁴ + b⁴)/24, max(a, b)³·δ/6),
//
// now with K_i ≥ sup|f_i⁗| on the prior's support and a, b, δ, s_i as in
// ControlVariates. Each order trades a factor s_i·max(a, b) ~ d/√N for the
// ratio of the derivative bounds, so near a concentrated posterior (d ≪ √N)
// the batches shrink: ControlVariates takes the third order where its
// estimate of C·M falls by cvCubicGain or more at a = b = √d (the typical
// distance of a draw from θ̂), that C·M is at least d data, and
// d ≤ cvCubicMaxDim (cvCubicChoose). The surrogate prior
// then holds the tensor T = Σ_i f_i‴(ẑ_i)·x_i⊗x_i⊗x_i, d(d+1)(d+2)/6
// numbers built in one more pass over the data (O(Nd³/6) flops), and each
// evaluation of it costs O(d³/6) flops and no data.
const (
	// cvCubicGain is the least ratio of estimated second- to third-order
	// batches at which ControlVariates expands to third order.
	cvCubicGain = 2
	// cvCubicMaxDim is the largest d at which it does: beyond, the
	// surrogate's O(d³) evaluation and its O(Nd³) build outweigh the data
	// saved.
	cvCubicMaxDim = 128
)

// cvCubicMode selects the expansion order: by the gain (auto, what
// ControlVariates does), second, or third wherever the GLM is a LossCuber
// (the tests prove each order through the kit).
type cvCubicMode int

const (
	cvCubicAuto cvCubicMode = iota
	cvCubicNever
	cvCubicAlways
)

// cvCubicChoose reports whether to expand to third order in the mode, from
// the sums of the second- and third-order bound constants C₃ = ΣK₃s_i³ and
// C₄ = ΣK₄s_i⁴: by the gain, the smaller of the two terms' ratios at
// a = b = √d, 4C₃/(C₄√d) for the a³ and 3C₃/(C₄√d) for the δ term, must
// reach cvCubicGain, and the second-order batch there, C₃·d^{3/2}/3, must
// be at least d data: below, a step's O(d²) proposal and prior cost more
// than its data, and the cubic form's O(d³/6) would cost more than the
// data it saves (examples/tall's rlr d = 10, 1.5 data a step, keeps the
// second order).
//
// And the third order must pay for itself over a run of the default length
// (cvCubicRunSteps transitions): its tensor costs N·d³/6 flops to build
// and d³/6 more per step, against the data it saves at about 2d + 40
// flops each (a row's dot product and its loss). On examples/tall's
// logistic d = 50 and Student-t d = 100 rows (N = 10⁵) the build
// outweighed the data saved over a whole run (examples/README, "Third-order
// control variates"), which this rule declines
// (TestControlVariatesOrderChoice); a set read thousands of rows a step at
// second order pays it back.
func cvCubicChoose(mode cvCubicMode, c3, c4 float64, d, n int) bool {
	switch {
	case mode == cvCubicNever || d > cvCubicMaxDim || !(c4 >= 0) || math.IsInf(c4, 1):
		return false
	case mode == cvCubicAlways:
		return true
	}
	sd := math.Sqrt(float64(d))
	if !(3*c3 >= cvCubicGain*c4*sd && c3*sd*sd*sd/3 >= float64(d)) {
		return false
	}
	fd := float64(d)
	batch2 := c3 * sd * sd * sd / 3
	batch3 := batch2 * min(1, c4*sd/(3*c3))
	cube := fd * fd * fd / 6
	saved := (batch2-batch3)*(2*fd+40) - cube
	return cvCubicRunSteps*saved >= float64(n)*cube
}

// cvCubicRunSteps is the run over which the third order must repay its
// build: 4 chains × (1,000 warmup + 1,000 draws), Sample's defaults.
const cvCubicRunSteps = 8000

// cubeTensor is the symmetric d×d×d tensor Σ_i w_i·x_i⊗x_i⊗x_i, packed: for
// a ≤ b the entries c = b … d−1 are w[off[a·d+b]:], each multiplied by the
// number of distinct permutations of (a, b, c), so that the cubic form is
// Σ_{a≤b≤c} w_abc·Δ_aΔ_bΔ_c.
type cubeTensor struct {
	d   int
	off []int
	w   []float64
}

// newCubeTensor returns a zero tensor of dimension d.
func newCubeTensor(d int) *cubeTensor {
	t := &cubeTensor{d: d, off: make([]int, d*d)}
	k := 0
	for a := range d {
		for b := a; b < d; b++ {
			t.off[a*d+b] = k
			k += d - b
		}
	}
	t.w = make([]float64, k)
	return t
}

// add adds w·x⊗x⊗x (unweighted by the permutations: weigh does that once
// at the end).
func (t *cubeTensor) add(w float64, x []float64) {
	d := t.d
	for a := range d {
		va := w * x[a]
		if va == 0 {
			continue
		}
		for b := a; b < d; b++ {
			vab := va * x[b]
			if vab == 0 {
				continue
			}
			o := t.off[a*d+b]
			vec.Axpy(t.w[o:o+d-b], vab, x[b:d])
		}
	}
}

// weigh multiplies each packed entry by its number of permutations.
func (t *cubeTensor) weigh() {
	d := t.d
	for a := range d {
		for b := a; b < d; b++ {
			o := t.off[a*d+b]
			for c := b; c < d; c++ {
				switch {
				case a == b && b == c:
				case a == b || b == c:
					t.w[o+c-b] *= 3
				default:
					t.w[o+c-b] *= 6
				}
			}
		}
	}
}

// form returns Σ_{abc} T_abc·Δ_aΔ_bΔ_c.
func (t *cubeTensor) form(delta []float64) float64 {
	d := t.d
	var s float64
	for a := range d {
		if delta[a] == 0 {
			continue
		}
		var sa float64
		for b := a; b < d; b++ {
			o := t.off[a*d+b]
			sa += delta[b] * dotLocal(t.w[o:o+d-b], delta[b:d])
		}
		s += delta[a] * sa
	}
	return s
}

// addGrad adds alpha·∇form(Δ) to grad.
func (t *cubeTensor) addGrad(grad []float64, alpha float64, delta []float64) {
	d := t.d
	for a := range d {
		for b := a; b < d; b++ {
			o := t.off[a*d+b]
			row := t.w[o : o+d-b]
			dot := dotLocal(row, delta[b:d])
			grad[a] += alpha * delta[b] * dot
			grad[b] += alpha * delta[a] * dot
			ab := alpha * delta[a] * delta[b]
			g := grad[b:d]
			for c, w := range row {
				g[c] += ab * w
			}
		}
	}
}

// dotLocal returns aᵀb (len(b) ≥ len(a)) in Go, four sums at a time, so
// that a slice of the caller's stack array does not escape (vec.Dot's
// assembly makes its arguments leak).
func dotLocal(a, b []float64) float64 {
	b = b[:len(a)]
	var s0, s1, s2, s3 float64
	j := 0
	for ; j+4 <= len(a); j += 4 {
		s0 += a[j] * b[j]
		s1 += a[j+1] * b[j+1]
		s2 += a[j+2] * b[j+2]
		s3 += a[j+3] * b[j+3]
	}
	for ; j < len(a); j++ {
		s0 += a[j] * b[j]
	}
	return (s0 + s1) + (s2 + s3)
}

// cubicTensor sums T = Σ_i f_i‴(ẑ_i)·x_i⊗x_i⊗x_i over e's data in blocks,
// added in block order, or returns errInterrupted within a chunk of data
// once stop (nil: never) is set.
func (e *cvEnergy) cubicTensor(stop *atomic.Bool) (*cubeTensor, error) {
	n, d := e.n, e.d
	t := newCubeTensor(d)
	nb := passBlocks(n, len(t.w))
	parts := make([]*cubeTensor, nb)
	forBlocks(nb, func(b int) {
		pt := t
		if nb > 1 {
			pt = newCubeTensor(d)
		}
		parts[b] = pt
		lo, hi := blockRange(b, nb, n)
		rows := newRowCursor(e.g)
		sp := e.mem.pass(d, lo, hi)
		defer sp.End()
		for i := lo; i < hi; i++ {
			if (i-lo)%chunk == 0 {
				if stopped(stop) {
					return
				}
				sp.At(i)
			}
			pt.add(e.taylor(i).f3, rows.row(i))
		}
	})
	if stopped(stop) {
		return nil, errInterrupted
	}
	if nb > 1 {
		for _, pt := range parts {
			vec.Axpy(t.w, 1, pt.w)
		}
	}
	t.weigh()
	return t, nil
}

// cubicLimit is datum i's fourth-order bound K_i·min((|a|⁴ + |b|⁴)/24,
// max(|a|, |b|)³·|a − b|/6) on |R_i(θ) − R_i(θ′)|, a = x_iᵀθ − ẑ_i and
// b = x_iᵀθ′ − ẑ_i.
func cubicLimit(k, a, b float64) float64 {
	aa, ab := math.Abs(a), math.Abs(b)
	hi := max(aa, ab)
	return k * min((aa*aa*aa*aa+ab*ab*ab*ab)/24, hi*hi*hi*math.Abs(a-b)/6)
}

// cubicDistance is M₄(θ, θ′) from a = ‖θ − θ̂‖_H, b = ‖θ′ − θ̂‖_H and
// δ = ‖θ − θ′‖_H.
func cubicDistance(a, b, delta float64) float64 {
	hi := max(a, b)
	return min((a*a*a*a+b*b*b*b)/24, hi*hi*hi*delta/6)
}

// cuberAgrees reports whether c's LossDeriv3 is the derivative of g's f″ on
// a few data and points (a central difference, to 10⁻⁶), so that a type that
// embeds a model and overrides its loss without LossDeriv3 (which it then
// inherits) keeps the second-order expansion, whose bound holds for its own
// LossBound.
func cuberAgrees(g GLM, c LossCuber) bool {
	const h = 1e-4
	n := g.Len()
	for k := range min(n, 8) {
		i := k * n / min(n, 8)
		for _, z := range [...]float64{-2, -0.3, 0.7, 2.5} {
			_, lo := g.LossDerivs(i, z-h)
			_, hi := g.LossDerivs(i, z+h)
			f3 := c.LossDeriv3(i, z)
			if !(math.Abs((hi-lo)/(2*h)-f3) <= 1e-6*(1+math.Abs(f3))) {
				return false
			}
		}
	}
	return true
}

// cubicDeriv3 returns f_i‴(z) from g, or an error naming the datum when it
// is not finite.
func cubicDeriv3(who string, g LossCuber, i int, z float64) (float64, error) {
	f3 := g.LossDeriv3(i, z)
	if math.IsNaN(f3) || math.IsInf(f3, 0) {
		return 0, fmt.Errorf("exactmh: %s: datum %d: f‴ = %v at x_iᵀθ̂ = %v", who, i, f3, z)
	}
	return f3, nil
}
