package main

import (
	"github.com/exactmh/exactmh"
	"github.com/exactmh/exactmh/model"
)

// refCost is the htg energy at the reference implementation's cost per
// datum (the auxiliary-variable paper's TruncGaussian.jl): every energy
// U_i(θ) = ½β(θ − y_i)ᵀΣ⁻¹(θ − y_i) and gradient is computed with the
// dense d×d precision matrix, O(d²) per datum, and there is no one-read
// difference U_i(θ) − U_i(θ′), so MH and MALA evaluate every datum at both
// points, as that code's mh and mala do. The draws are the same target's;
// only the cost per datum changes. (The reference code also allocates per
// datum, which this does not.)
type refCost struct {
	inner *model.GaussianMean
	y     []float64 // row-major N×d
	prec  []float64 // row-major d×d
}

func newRefCost(g *model.GaussianMean) *refCost {
	e := &refCost{inner: g, y: make([]float64, 0, g.Len()*d), prec: make([]float64, d*d)}
	for i := range g.Len() {
		e.y = append(e.y, g.Row(i)...)
	}
	p := g.Precision()
	for a := range d {
		for b := range d {
			e.prec[a*d+b] = p.At(a, b)
		}
	}
	return e
}

// Len returns N.
func (e *refCost) Len() int { return e.inner.Len() }

// Dim returns d.
func (e *refCost) Dim() int { return d }

// Energies sets dst[k] = ½(θ − y_i)ᵀP(θ − y_i) by the dense quadratic form.
func (e *refCost) Energies(dst, theta []float64, idx []int) {
	var r [d]float64
	for k, i := range idx {
		for j := range r {
			r[j] = theta[j] - e.y[i*d+j]
		}
		var q float64
		for a := range r {
			for b := range r {
				q += r[a] * e.prec[a*d+b] * r[b]
			}
		}
		dst[k] = q / 2
	}
}

// AddGradient adds Σ_k w[k]·P(θ − y_i), each by a dense matrix–vector
// product.
func (e *refCost) AddGradient(grad, theta []float64, idx []int, w []float64) {
	var r [d]float64
	for k, i := range idx {
		for j := range r {
			r[j] = theta[j] - e.y[i*d+j]
		}
		for a := range r {
			var s float64
			for b := range r {
				s += e.prec[a*d+b] * r[b]
			}
			grad[a] += w[k] * s
		}
	}
}

// EnergyRange is the Gaussian mean's (the paper's M_i).
func (e *refCost) EnergyRange(prior exactmh.Prior) (*exactmh.EnergyRange, error) {
	return e.inner.EnergyRange(prior)
}
