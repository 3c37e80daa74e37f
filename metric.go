// Copyright ©2026 The exactmh Authors. All rights reserved.
// Use of this source code is governed by a BSD-style
// license that can be found in the LICENSE file.

package exactmh

import (
	"bytes"
	"encoding/gob"
	"fmt"
	"math"
	"math/rand/v2"

	"gonum.org/v1/gonum/mat"
)

// Metric is the Euclidean metric of the gradient kernels (MALA, HMC, NUTS,
// Poisson-Barker, Poisson-MALA, TunaMH-SGLD):
// the inverse mass matrix M⁻¹, which preconditions their moves. Hamiltonian
// kernels draw the momentum p ~ N(0, M), whose kinetic energy is ½pᵀM⁻¹p
// and whose velocity is M⁻¹p (Neal 2011, "MCMC using Hamiltonian dynamics",
// §4.1; Betancourt 2017, "A conceptual introduction to Hamiltonian Monte
// Carlo", §4.2); a Langevin proposal with step scale σ moves
// θ′ = θ + (σ²/2)M⁻¹∇log π(θ) + σ·ξ, ξ ~ N(0, M⁻¹) (Roberts and Stramer
// 2002). M⁻¹ ≈ the posterior covariance makes every direction equally easy,
// which is what warmup's metric adaptation estimates (Settings.Metric).
//
// The zero value is the identity (Stan's unit_e): any dimension, and the
// kernels then make exactly the draws they made before metrics existed.
// NewDiagMetric builds a diagonal M⁻¹ (diag_e), NewDenseMetric a dense one
// (dense_e) through its Cholesky factor M⁻¹ = LLᵀ. A Metric is immutable
// and may be shared by chains; its methods allocate nothing.
type Metric struct {
	kind metricKind
	d    int
	inv  []float64 // M⁻¹: its diagonal (diag) or the d×d matrix, row-major (dense)
	sd   []float64 // diag: √M⁻¹ᵢᵢ
	chol []float64 // dense: L, lower triangular, row-major d×d, M⁻¹ = LLᵀ
	mass []float64 // dense: M = (M⁻¹)⁻¹, row-major d×d
	ext  MetricOps // NewMetric's
}

type metricKind uint8

const (
	unitMetric metricKind = iota
	diagMetric
	denseMetric
	extMetric
)

// MetricOps is a metric defined outside this package (NewMetric), such as
// multilevel's sparse one whose M is a posterior Hessian applied through
// its sparse Cholesky factor in O(nnz) where a dense metric costs O(d²).
// Its methods mean what Metric's do, with MulChol, MulCholT and SolveChol
// applying one factor L of M⁻¹ = LLᵀ, its transpose and its inverse; they
// must not allocate and must be safe for concurrent use by chains.
type MetricOps interface {
	Dim() int
	Kind() MetricKind
	Momentum(p []float64) // p ~ N(0, M) from p ~ N(0, I), in place
	KineticEnergy(p []float64) float64
	MulInvMass(dst, v []float64)
	Noise(x []float64) // x ~ N(0, M⁻¹) from x ~ N(0, I), in place
	MassNorm(r []float64) float64
	MulChol(dst, v []float64)
	MulCholT(dst, v []float64)
	SolveChol(dst, v []float64)
}

// NewMetric returns the metric that ops implements. Warmup keeps it
// (SetMetric leaves it in place) unless ops has a method Rescale(v
// []float64) MetricOps, which SetMetric then calls with the diagonal of
// warmup's estimate of M⁻¹ and whose result replaces ops: a metric fixed
// after warmup, so sampling stays exact. Checkpoints store it as the
// identity (the kernel's Start sets ops again).
func NewMetric(ops MetricOps) (Metric, error) {
	if ops == nil || ops.Dim() < 1 {
		return Metric{}, fmt.Errorf("exactmh: NewMetric: no operations or dimension < 1")
	}
	return Metric{kind: extMetric, d: ops.Dim(), ext: ops}, nil
}

// NewDiagMetric returns the diagonal metric with M⁻¹ = diag(invMass):
// each entry is a variance, positive and finite. invMass is copied.
func NewDiagMetric(invMass []float64) (Metric, error) {
	if len(invMass) == 0 {
		return Metric{}, fmt.Errorf("exactmh: NewDiagMetric: empty diagonal")
	}
	m := Metric{kind: diagMetric, d: len(invMass), inv: make([]float64, len(invMass)), sd: make([]float64, len(invMass))}
	for j, v := range invMass {
		if !(v > 0) || math.IsInf(v, 1) {
			return Metric{}, fmt.Errorf("exactmh: NewDiagMetric: M⁻¹[%d] = %v, want positive and finite", j, v)
		}
		m.inv[j], m.sd[j] = v, math.Sqrt(v)
	}
	return m, nil
}

// NewDenseMetric returns the metric with the dense inverse mass matrix
// invMass, which must be symmetric positive definite with finite entries.
// It is copied and factorised once (gonum's Cholesky).
func NewDenseMetric(invMass mat.Symmetric) (Metric, error) {
	d := invMass.SymmetricDim()
	if d == 0 {
		return Metric{}, fmt.Errorf("exactmh: NewDenseMetric: empty matrix")
	}
	m := Metric{kind: denseMetric, d: d, inv: make([]float64, d*d), chol: make([]float64, d*d), mass: make([]float64, d*d)}
	for i := range d {
		for j := range d {
			v := invMass.At(i, j)
			if math.IsNaN(v) || math.IsInf(v, 0) {
				return Metric{}, fmt.Errorf("exactmh: NewDenseMetric: M⁻¹[%d][%d] = %v, want finite", i, j, v)
			}
			m.inv[i*d+j] = v
		}
	}
	var ch mat.Cholesky
	if ok := ch.Factorize(invMass); !ok {
		return Metric{}, fmt.Errorf("exactmh: NewDenseMetric: the %d×%d inverse mass matrix is not positive definite", d, d)
	}
	var l mat.TriDense
	ch.LTo(&l)
	for i := range d {
		for j := 0; j <= i; j++ {
			m.chol[i*d+j] = l.At(i, j)
		}
	}
	var mass mat.SymDense
	if err := ch.InverseTo(&mass); err != nil {
		return Metric{}, fmt.Errorf("exactmh: NewDenseMetric: inverting M⁻¹: %w", err)
	}
	for i := range d {
		for j := range d {
			m.mass[i*d+j] = mass.At(i, j)
		}
	}
	return m, nil
}

// Kind returns "unit", "diag" or "dense".
func (m Metric) Kind() MetricKind {
	switch m.kind {
	case diagMetric:
		return MetricDiag
	case denseMetric:
		return MetricDense
	case extMetric:
		return m.ext.Kind()
	}
	return MetricUnit
}

// Dim returns the dimension of M⁻¹, 0 for the identity (which fits any).
func (m Metric) Dim() int { return m.d }

// InvMassDiag returns a copy of the diagonal of M⁻¹ (nil for the identity).
func (m Metric) InvMassDiag() []float64 {
	switch m.kind {
	case diagMetric:
		return append([]float64(nil), m.inv...)
	case denseMetric:
		v := make([]float64, m.d)
		for j := range v {
			v[j] = m.inv[j*m.d+j]
		}
		return v
	}
	return nil
}

// InvMass returns a copy of M⁻¹ (nil for the identity).
func (m Metric) InvMass() *mat.SymDense {
	switch m.kind {
	case diagMetric:
		s := mat.NewSymDense(m.d, nil)
		for j, v := range m.inv {
			s.SetSym(j, j, v)
		}
		return s
	case denseMetric:
		return mat.NewSymDense(m.d, append([]float64(nil), m.inv...))
	}
	return nil
}

// check returns an error unless the metric fits dimension d.
func (m Metric) check(d int) error {
	if m.kind != unitMetric && m.d != d {
		return fmt.Errorf("Metric has dimension %d, want %d", m.d, d)
	}
	return nil
}

// DrawMomentum sets p to a draw from N(0, M): p = ξ for the identity,
// ξᵢ/√M⁻¹ᵢᵢ for a diagonal metric and L⁻ᵀξ for a dense one (so that
// Cov p = L⁻ᵀL⁻¹ = M), with ξ ~ N(0, I) drawn coordinate by coordinate.
func (m Metric) DrawMomentum(rng *rand.Rand, p []float64) {
	for j := range p {
		p[j] = rng.NormFloat64()
	}
	switch m.kind {
	case extMetric:
		m.ext.Momentum(p)
	case diagMetric:
		for j := range p {
			p[j] /= m.sd[j]
		}
	case denseMetric:
		// Solve Lᵀp = ξ in place, last coordinate first.
		d := m.d
		for i := d - 1; i >= 0; i-- {
			s := p[i]
			for k := i + 1; k < d; k++ {
				s -= m.chol[k*d+i] * p[k]
			}
			p[i] = s / m.chol[i*d+i]
		}
	}
}

// KineticEnergy returns ½pᵀM⁻¹p.
func (m Metric) KineticEnergy(p []float64) float64 {
	var k float64
	switch m.kind {
	case extMetric:
		return m.ext.KineticEnergy(p)
	case unitMetric:
		for _, v := range p {
			k += v * v / 2
		}
	case diagMetric:
		for j, v := range p {
			k += m.inv[j] * v * v / 2
		}
	case denseMetric:
		// ½‖Lᵀp‖².
		d := m.d
		for i := range d {
			var s float64
			for r := i; r < d; r++ {
				s += m.chol[r*d+i] * p[r]
			}
			k += s * s / 2
		}
	}
	return k
}

// MulInvMass sets dst = M⁻¹v: the velocity of momentum v (Stan's
// dτ/dp, the "sharp" momentum of the U-turn criterion) or the
// preconditioned direction of a gradient v. dst and v must not overlap
// unless they are the same slice and the metric is not dense.
func (m Metric) MulInvMass(dst, v []float64) {
	switch m.kind {
	case extMetric:
		m.ext.MulInvMass(dst, v)
	case unitMetric:
		copy(dst, v)
	case diagMetric:
		for j, x := range v {
			dst[j] = m.inv[j] * x
		}
	case denseMetric:
		d := m.d
		for i := range d {
			row := m.inv[i*d : (i+1)*d]
			var s float64
			for j, x := range v {
				s += row[j] * x
			}
			dst[i] = s
		}
	}
}

// DrawNoise sets dst to a draw from N(0, M⁻¹), the noise of a
// preconditioned Langevin proposal: ξ, √M⁻¹ᵢᵢ·ξᵢ or Lξ, with ξ ~ N(0, I)
// drawn coordinate by coordinate.
func (m Metric) DrawNoise(rng *rand.Rand, dst []float64) {
	for j := range dst {
		dst[j] = rng.NormFloat64()
	}
	switch m.kind {
	case extMetric:
		m.ext.Noise(dst)
	case diagMetric:
		for j := range dst {
			dst[j] *= m.sd[j]
		}
	case denseMetric:
		// dst = Lξ in place, last coordinate first.
		d := m.d
		for i := d - 1; i >= 0; i-- {
			var s float64
			for k := 0; k <= i; k++ {
				s += m.chol[i*d+k] * dst[k]
			}
			dst[i] = s
		}
	}
}

// MassNorm returns rᵀMr, the squared norm of r in the metric whose
// covariance is M⁻¹: with it a Langevin proposal's log density is
// −MassNorm(θ′ − μ)/(2σ²) up to a constant that cancels in the
// Metropolis–Hastings ratio.
func (m Metric) MassNorm(r []float64) float64 {
	var s float64
	switch m.kind {
	case extMetric:
		return m.ext.MassNorm(r)
	case unitMetric:
		for _, v := range r {
			s += v * v
		}
	case diagMetric:
		for j, v := range r {
			s += v * v / m.inv[j]
		}
	case denseMetric:
		d := m.d
		for i := range d {
			row := m.mass[i*d : (i+1)*d]
			var t float64
			for j, v := range r {
				t += row[j] * v
			}
			s += r[i] * t
		}
	}
	return s
}

// metricWire is a Metric as checkpoints store it: the factors are
// recomputed, bit for bit, from M⁻¹.
type metricWire struct {
	Kind string
	Inv  []float64
}

// MarshalBinary encodes the metric (its kind and M⁻¹), so that it can be
// saved in checkpoints.
func (m Metric) MarshalBinary() ([]byte, error) {
	var b bytes.Buffer
	w := metricWire{Kind: string(m.Kind()), Inv: m.inv}
	if m.kind == extMetric {
		w.Kind = string(MetricUnit)
	}
	err := gob.NewEncoder(&b).Encode(w)
	return b.Bytes(), err
}

// UnmarshalBinary decodes a metric encoded by MarshalBinary.
func (m *Metric) UnmarshalBinary(b []byte) error {
	var w metricWire
	if err := gob.NewDecoder(bytes.NewReader(b)).Decode(&w); err != nil {
		return err
	}
	var err error
	switch MetricKind(w.Kind) {
	case MetricUnit:
		*m = Metric{}
	case MetricDiag:
		*m, err = NewDiagMetric(w.Inv)
	case MetricDense:
		d := int(math.Round(math.Sqrt(float64(len(w.Inv)))))
		if d*d != len(w.Inv) {
			return fmt.Errorf("exactmh: Metric: %d entries do not make a square matrix", len(w.Inv))
		}
		*m, err = NewDenseMetric(mat.NewSymDense(d, w.Inv))
	default:
		err = fmt.Errorf("exactmh: Metric: unknown kind %q", w.Kind)
	}
	return err
}

// MetricKind is what warmup estimates for chains with an inverse mass
// matrix (Settings.Metric), and the kind of a Metric (Metric.Kind).
type MetricKind string

// The values of Settings.Metric; the first three are also the Kinds of a
// Metric.
const (
	// MetricDiag: warmup estimates a diagonal M⁻¹ (Stan's diag_e, its
	// default).
	MetricDiag MetricKind = "diag"
	// MetricDense: warmup estimates a dense M⁻¹ (dense_e).
	MetricDense MetricKind = "dense"
	// MetricUnit: warmup leaves the metric alone; chains keep their
	// kernel's Metric, the identity (unit_e) unless set.
	MetricUnit MetricKind = "unit"
	// MetricAuto (the default, as ""): each window estimates a dense M⁻¹
	// when its draws' correlations would leave a diagonal one badly
	// conditioned and it holds at least 10d draws (d ≤ 100), else a
	// diagonal one. A gradient kernel's step is capped by the narrowest
	// whitened direction; a dense M⁻¹ costs O(d²) per step, nothing beside
	// a full-batch gradient's O(Nd).
	MetricAuto MetricKind = "auto"
)

// The factor L of M⁻¹ = LLᵀ (√M⁻¹ᵢᵢ for a diagonal metric, the identity
// for the unit one) whitens coordinates: z = L⁻¹θ has covariance I where θ
// has M⁻¹. The coordinate-wise Barker proposal is preconditioned in z
// (Poisson-Barker). dst and v must not overlap for mulChol and mulCholT
// with a dense metric; solveChol may work in place.

// mulChol sets dst = Lv.
func (m Metric) mulChol(dst, v []float64) {
	switch m.kind {
	case extMetric:
		m.ext.MulChol(dst, v)
	case unitMetric:
		copy(dst, v)
	case diagMetric:
		for j, x := range v {
			dst[j] = m.sd[j] * x
		}
	case denseMetric:
		d := m.d
		for i := range d {
			var s float64
			for k := 0; k <= i; k++ {
				s += m.chol[i*d+k] * v[k]
			}
			dst[i] = s
		}
	}
}

// mulCholT sets dst = Lᵀv.
func (m Metric) mulCholT(dst, v []float64) {
	switch m.kind {
	case extMetric:
		m.ext.MulCholT(dst, v)
	case unitMetric:
		copy(dst, v)
	case diagMetric:
		for j, x := range v {
			dst[j] = m.sd[j] * x
		}
	case denseMetric:
		d := m.d
		for i := range d {
			var s float64
			for k := i; k < d; k++ {
				s += m.chol[k*d+i] * v[k]
			}
			dst[i] = s
		}
	}
}

// solveChol sets dst = L⁻¹v (forward substitution for a dense metric).
func (m Metric) solveChol(dst, v []float64) {
	switch m.kind {
	case extMetric:
		m.ext.SolveChol(dst, v)
	case unitMetric:
		copy(dst, v)
	case diagMetric:
		for j, x := range v {
			dst[j] = x / m.sd[j]
		}
	case denseMetric:
		d := m.d
		for i := range d {
			s := v[i]
			for k := range i {
				s -= m.chol[i*d+k] * dst[k]
			}
			dst[i] = s / m.chol[i*d+i]
		}
	}
}
