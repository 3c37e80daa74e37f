// Copyright ©2026 The exactmh Authors. All rights reserved.
// Use of this source code is governed by a BSD-style
// license that can be found in the LICENSE file.

package exactmh

import (
	"errors"
	"fmt"
	"math"
	"strings"
)

// Prior is the prior density of θ. Kernels evaluate it exactly at every step
// (it is O(d) and never subsampled). LogPrior returns −Inf outside the
// support, which rejects a proposal before any datum is touched; truncated
// targets are expressed this way. Implementations must be safe for
// concurrent use.
type Prior interface {
	// LogPrior returns log p(θ) up to an additive constant, or −Inf outside
	// the support.
	LogPrior(theta []float64) float64
}

// PriorGradienter is an optional capability of a Prior, needed by gradient
// kernels.
type PriorGradienter interface {
	// AddLogPriorGradient adds ∇log p(θ) to grad (θ inside the support).
	AddLogPriorGradient(grad, theta []float64)
}

// dimChecker is implemented by the ready-made priors so that a Posterior can
// check them against the energy's dimension when a run starts.
type dimChecker interface {
	checkDim(d int) error
}

// Flat is the improper flat prior p(θ) = 1 on R^d.
type Flat struct{}

// LogPrior returns 0.
func (Flat) LogPrior([]float64) float64 { return 0 }

// AddLogPriorGradient adds nothing.
func (Flat) AddLogPriorGradient(_, _ []float64) {}

// AddLogPriorHessian adds nothing.
func (Flat) AddLogPriorHessian(_, _ []float64) {}

// Box is the uniform prior on the box Lo[j] ≤ θ_j ≤ Hi[j].
type Box struct {
	Lo, Hi  []float64
	logNorm float64
}

// NewBox returns the uniform prior on the box [lo_1, hi_1]×…×[lo_d, hi_d].
func NewBox(lo, hi []float64) (*Box, error) {
	if len(lo) == 0 || len(lo) != len(hi) {
		return nil, fmt.Errorf("exactmh: NewBox: len(lo) = %d, len(hi) = %d, want equal and > 0", len(lo), len(hi))
	}
	b := &Box{Lo: append([]float64(nil), lo...), Hi: append([]float64(nil), hi...)}
	for j := range lo {
		w := hi[j] - lo[j]
		if !(w > 0) || math.IsInf(w, 0) {
			return nil, fmt.Errorf("exactmh: NewBox: side %d is [%v, %v], want finite lo < hi", j, lo[j], hi[j])
		}
		b.logNorm -= math.Log(w)
	}
	return b, nil
}

// NewCube returns the uniform prior on [lo, hi]^d.
func NewCube(d int, lo, hi float64) (*Box, error) {
	if err := checkDim("NewCube", d); err != nil {
		return nil, err
	}
	l, h := make([]float64, d), make([]float64, d)
	for j := range l {
		l[j], h[j] = lo, hi
	}
	return NewBox(l, h)
}

// Contains reports whether θ lies in the box.
func (b *Box) Contains(theta []float64) bool {
	for j, v := range theta {
		if !(v >= b.Lo[j] && v <= b.Hi[j]) {
			return false
		}
	}
	return true
}

// LogPrior returns −log(volume) inside the box and −Inf outside.
func (b *Box) LogPrior(theta []float64) float64 {
	if !b.Contains(theta) {
		return math.Inf(-1)
	}
	return b.logNorm
}

// AddLogPriorGradient adds nothing: the density is constant on the box.
func (b *Box) AddLogPriorGradient(_, _ []float64) {}

// AddLogPriorHessian adds nothing: the density is constant on the box. (A
// posterior mode on the box's boundary is not a stationary point, and a
// Laplace approximation there is poor: FindLaplace says so.)
func (b *Box) AddLogPriorHessian(_, _ []float64) {}

func (b *Box) checkDim(d int) error {
	if len(b.Lo) != d || len(b.Hi) != d {
		return fmt.Errorf("exactmh: Box prior has dimension %d (Hi %d), energy has %d", len(b.Lo), len(b.Hi), d)
	}
	return nil
}

// Ball is the uniform prior on the Euclidean ball ‖θ − Center‖₂ ≤ Radius
// (Center nil means the origin). NewBall checks its arguments; a literal
// Ball{Radius: r} is as good, of the energy's dimension, and is checked
// when a run starts (Posterior.Validate): Radius finite > 0, Center nil or
// of the energy's dimension and finite.
type Ball struct {
	Center  []float64
	Radius  float64
	d       int
	logNorm float64
}

// NewBall returns the uniform prior on the d-dimensional ball of the given
// radius about center (nil: the origin).
func NewBall(d int, radius float64, center []float64) (*Ball, error) {
	if err := checkDim("NewBall", d); err != nil {
		return nil, err
	}
	if !(radius > 0) || math.IsInf(radius, 0) {
		return nil, fmt.Errorf("exactmh: NewBall: radius %v, want finite > 0", radius)
	}
	if center != nil && len(center) != d {
		return nil, fmt.Errorf("exactmh: NewBall: len(center) = %d, want %d", len(center), d)
	}
	if err := finiteVec("NewBall: center", center); err != nil {
		return nil, err
	}
	// log volume = (d/2) log π + d log R − lgamma(d/2 + 1).
	return &Ball{Center: append([]float64(nil), center...), Radius: radius, d: d, logNorm: -logBallVolume(d, radius)}, nil
}

// logBallVolume returns the log volume of the d-ball of radius r,
// (d/2) log π + d log r − lgamma(d/2 + 1).
func logBallVolume(d int, r float64) float64 {
	lg, _ := math.Lgamma(float64(d)/2 + 1)
	return float64(d)/2*math.Log(math.Pi) + float64(d)*math.Log(r) - lg
}

// Contains reports whether θ lies in the ball.
func (b *Ball) Contains(theta []float64) bool {
	var s float64
	for j, v := range theta {
		if len(b.Center) > 0 {
			v -= b.Center[j]
		}
		s += v * v
	}
	return s <= b.Radius*b.Radius
}

// LogPrior returns −log(volume) inside the ball and −Inf outside.
func (b *Ball) LogPrior(theta []float64) float64 {
	if !b.Contains(theta) {
		return math.Inf(-1)
	}
	if b.d == 0 { // a literal Ball: normalised for θ's dimension
		return -logBallVolume(len(theta), b.Radius)
	}
	return b.logNorm
}

// AddLogPriorGradient adds nothing: the density is constant on the ball.
func (b *Ball) AddLogPriorGradient(_, _ []float64) {}

// AddLogPriorHessian adds nothing: the density is constant on the ball (see
// Box.AddLogPriorHessian for modes on the boundary).
func (b *Ball) AddLogPriorHessian(_, _ []float64) {}

// centerNorm returns ‖Center‖₂.
func (b *Ball) centerNorm() float64 {
	var s float64
	for _, v := range b.Center {
		s += v * v
	}
	return math.Sqrt(s)
}

func (b *Ball) checkDim(d int) error {
	if b.d == 0 { // a literal Ball, of the energy's dimension
		if !(b.Radius > 0) || math.IsInf(b.Radius, 0) {
			return fmt.Errorf("exactmh: Ball prior: Radius = %v, want finite > 0", b.Radius)
		}
		if b.Center != nil && len(b.Center) != d {
			return fmt.Errorf("exactmh: Ball prior: len(Center) = %d, energy has dimension %d", len(b.Center), d)
		}
		return finiteVec("Ball prior: Center", b.Center)
	}
	if b.d != d {
		return fmt.Errorf("exactmh: Ball prior has dimension %d, energy has %d", b.d, d)
	}
	return nil
}

// Gaussian is the independent normal prior θ_j ~ N(Mean[j], SD[j]²).
type Gaussian struct {
	Mean, SD []float64
	logNorm  float64
}

// minGaussianSD is the smallest standard deviation NewGaussian accepts: the
// smallest s with 1/s² finite.
var minGaussianSD = func() float64 {
	s := math.Sqrt(1 / math.MaxFloat64)
	for math.IsInf(1/(s*s), 0) {
		s = math.Nextafter(s, 1)
	}
	return s
}()

// NewGaussian returns the prior θ_j ~ N(mean[j], sd[j]²) independently.
// Every sd[j] must be finite and large enough (about 1.5e−154) for 1/sd[j]²,
// which its gradient and Hessian use, to be finite.
func NewGaussian(mean, sd []float64) (*Gaussian, error) {
	if len(mean) == 0 || len(mean) != len(sd) {
		return nil, fmt.Errorf("exactmh: NewGaussian: len(mean) = %d, len(sd) = %d, want equal and > 0", len(mean), len(sd))
	}
	if err := finiteVec("NewGaussian: mean", mean); err != nil {
		return nil, err
	}
	g := &Gaussian{Mean: append([]float64(nil), mean...), SD: append([]float64(nil), sd...)}
	for j, s := range sd {
		if !(s > 0) || math.IsInf(s, 0) {
			return nil, fmt.Errorf("exactmh: NewGaussian: sd[%d] = %v, want finite > 0", j, s)
		}
		if math.IsInf(1/(s*s), 0) {
			// The gradient and Hessian divide by sd²: at the mean they
			// would be 0/0.
			return nil, fmt.Errorf("exactmh: NewGaussian: sd[%d] = %v is so small that 1/sd² overflows, want sd ≥ %.3g", j, s, minGaussianSD)
		}
		g.logNorm -= math.Log(s) + 0.5*math.Log(2*math.Pi)
	}
	return g, nil
}

// NewIsoGaussian returns the prior θ ~ N(0, sd²·I_d).
func NewIsoGaussian(d int, sd float64) (*Gaussian, error) {
	if err := checkDim("NewIsoGaussian", d); err != nil {
		return nil, err
	}
	s := make([]float64, d)
	for j := range s {
		s[j] = sd
	}
	return NewGaussian(make([]float64, d), s)
}

// LogPrior returns the normalised log density.
func (g *Gaussian) LogPrior(theta []float64) float64 {
	lp := g.logNorm
	for j, v := range theta {
		z := (v - g.Mean[j]) / g.SD[j]
		lp -= 0.5 * z * z
	}
	return lp
}

// AddLogPriorGradient adds −(θ_j − Mean_j)/SD_j² to grad.
func (g *Gaussian) AddLogPriorGradient(grad, theta []float64) {
	for j, v := range theta {
		grad[j] -= (v - g.Mean[j]) / (g.SD[j] * g.SD[j])
	}
}

// AddLogPriorHessian adds −1/SD_j² to the diagonal of h (d×d row-major).
func (g *Gaussian) AddLogPriorHessian(h, theta []float64) {
	d := len(theta)
	for j, s := range g.SD {
		h[j*d+j] -= 1 / (s * s)
	}
}

func (g *Gaussian) checkDim(d int) error {
	if len(g.Mean) != d || len(g.SD) != d {
		return fmt.Errorf("exactmh: Gaussian prior has dimension %d (SD %d), energy has %d", len(g.Mean), len(g.SD), d)
	}
	return nil
}

// Posterior is the target of a run: π(θ) ∝ prior(θ)·exp(−β Σ_i U_i(θ)).
//
// The zero values of its optional fields do the right thing: a nil Prior is
// Flat, and Beta 0 means β = 1 (no tempering).
type Posterior struct {
	// Energy holds the data and the per-datum energies U_i. Required.
	Energy Energy
	// Prior is evaluated exactly at every step. nil means Flat.
	Prior Prior
	// Beta is the tempering factor β > 0 (the TunaMH and PoissonMH
	// experiments use β = 1e-4 or 1e-5). 0 means 1.
	Beta float64
	// Names, if not nil, names the d coordinates of θ (one each, unique,
	// non-empty, without ',', '#', newlines or a trailing "__", so that they
	// are Stan CSV column names). They label Result.Summary's rows and the
	// package stancsv's columns; the package data's Design.Names are such
	// names. nil: theta[1] … theta[d].
	Names []string
}

// Validate reports whether the posterior is usable: a non-nil Energy with
// N > 0 and d > 0, a prior of the same dimension, and a finite β ≥ 0.
func (p *Posterior) Validate() error {
	if p == nil {
		return errors.New("exactmh: nil Posterior")
	}
	if p.Energy == nil {
		return errors.New("exactmh: Posterior.Energy is nil")
	}
	if n := p.Energy.Len(); n <= 0 {
		return fmt.Errorf("exactmh: Posterior.Energy has N = %d data, want > 0", n)
	}
	d := p.Energy.Dim()
	if d <= 0 || d > MaxDim {
		return fmt.Errorf("exactmh: Posterior.Energy has dimension %d, want in [1, MaxDim = %d]", d, MaxDim)
	}
	if !(p.Beta >= 0) || math.IsInf(p.Beta, 0) {
		return fmt.Errorf("exactmh: Posterior.Beta = %v, want finite ≥ 0 (0 means 1)", p.Beta)
	}
	if c, ok := p.Prior.(dimChecker); ok {
		if err := c.checkDim(d); err != nil {
			return err
		}
	}
	return checkNames(p.Names, d)
}

// checkNames checks Posterior.Names against the dimension d.
func checkNames(names []string, d int) error {
	if names == nil {
		return nil
	}
	if len(names) != d {
		return fmt.Errorf("exactmh: Posterior.Names has %d names for dimension %d", len(names), d)
	}
	seen := make(map[string]int, d)
	for j, n := range names {
		if n == "" || strings.ContainsAny(n, ",#\n\r") || strings.HasSuffix(n, "__") {
			return fmt.Errorf("exactmh: Posterior.Names[%d] = %q: want a non-empty name without ',', '#', newlines or a trailing \"__\"", j, n)
		}
		if i, dup := seen[n]; dup {
			return fmt.Errorf("exactmh: Posterior.Names[%d] = Posterior.Names[%d] = %q: names must be unique", i, j, n)
		}
		seen[n] = j
	}
	return nil
}

// Dim returns the dimension of θ.
func (p *Posterior) Dim() int { return p.Energy.Dim() }

// Len returns the number of data N.
func (p *Posterior) Len() int { return p.Energy.Len() }

// beta returns the effective tempering factor.
func (p *Posterior) beta() float64 {
	if p.Beta == 0 {
		return 1
	}
	return p.Beta
}

// prior returns the effective prior.
func (p *Posterior) prior() Prior {
	if p.Prior == nil {
		return Flat{}
	}
	return p.Prior
}

// LogDensity returns log prior(θ) − β Σ_i U_i(θ), the unnormalised log
// posterior, reading every datum. It returns an error for a θ of the wrong
// dimension or a non-finite energy.
func (p *Posterior) LogDensity(theta []float64) (float64, error) {
	if err := p.Validate(); err != nil {
		return 0, err
	}
	t, err := NewTarget(p)
	if err != nil {
		return 0, err
	}
	if len(theta) != t.d {
		return 0, fmt.Errorf("exactmh: LogDensity: len(θ) = %d, want %d", len(theta), t.d)
	}
	lp := t.LogPrior(theta)
	if math.IsInf(lp, -1) {
		return lp, nil
	}
	u, err := t.TotalEnergy(theta)
	if err != nil {
		return 0, err
	}
	return lp - u, nil
}
