// Copyright ©2026 The exactmh Authors. All rights reserved.
// Use of this source code is governed by a BSD-style
// license that can be found in the LICENSE file.

package model

import (
	"fmt"
	"math"
	"math/rand/v2"

	"github.com/exactmh/exactmh"
	"github.com/exactmh/exactmh/internal/vec"
)

// Flat is the improper flat prior p(θ) = 1 on R^d.
type Flat struct{}

// LogPrior returns 0.
func (Flat) LogPrior([]float64) float64 { return 0 }

// AddLogPriorGradient adds nothing.
func (Flat) AddLogPriorGradient(_, _ []float64) {}

// AddLogPriorHessian adds nothing.
func (Flat) AddLogPriorHessian(_, _ []float64) {}

// LogPriorChange returns 0: the change of log p(θ) when θ_j moves to x
// (localgibbs.CoordinatePrior).
func (Flat) LogPriorChange([]float64, int, float64) float64 { return 0 }

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
	if err := vec.CheckDim("NewCube", d); err != nil {
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

func (b *Box) CheckDim(d int) error {
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
	if err := vec.CheckDim("NewBall", d); err != nil {
		return nil, err
	}
	if !(radius > 0) || math.IsInf(radius, 0) {
		return nil, fmt.Errorf("exactmh: NewBall: radius %v, want finite > 0", radius)
	}
	if center != nil && len(center) != d {
		return nil, fmt.Errorf("exactmh: NewBall: len(center) = %d, want %d", len(center), d)
	}
	if err := vec.FiniteVec("NewBall: center", center); err != nil {
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
	return b.dist2(theta) <= b.Radius*b.Radius
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

func (b *Ball) CheckDim(d int) error {
	if b.d == 0 { // a literal Ball, of the energy's dimension
		if !(b.Radius > 0) || math.IsInf(b.Radius, 0) {
			return fmt.Errorf("exactmh: Ball prior: Radius = %v, want finite > 0", b.Radius)
		}
		if b.Center != nil && len(b.Center) != d {
			return fmt.Errorf("exactmh: Ball prior: len(Center) = %d, energy has dimension %d", len(b.Center), d)
		}
		return vec.FiniteVec("Ball prior: Center", b.Center)
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
	if err := vec.FiniteVec("NewGaussian: mean", mean); err != nil {
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
	if err := vec.CheckDim("NewIsoGaussian", d); err != nil {
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

// LogPriorChange returns log p(θ′) − log p(θ) for θ′ = θ but θ′_j = x:
// ½(z_j² − z′_j²) with z = (θ − Mean)/SD, one coordinate's terms of
// LogPrior (localgibbs.CoordinatePrior: a local move's prior ratio in one
// term, not d).
func (g *Gaussian) LogPriorChange(theta []float64, j int, x float64) float64 {
	a, b := (theta[j]-g.Mean[j])/g.SD[j], (x-g.Mean[j])/g.SD[j]
	return 0.5 * (a*a - b*b)
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

func (g *Gaussian) CheckDim(d int) error {
	if len(g.Mean) != d || len(g.SD) != d {
		return fmt.Errorf("exactmh: Gaussian prior has dimension %d (SD %d), energy has %d", len(g.Mean), len(g.SD), d)
	}
	return nil
}

// Project clamps θ into the box (BoundedSupport).
func (b *Box) Project(theta []float64) {
	for j := range theta {
		theta[j] = min(max(theta[j], b.Lo[j]), b.Hi[j])
	}
}

// Project scales θ − centre back onto the ball (shrunk by a few ulps so the
// result is inside despite rounding).
func (b *Ball) Project(theta []float64) {
	var s float64
	for j, v := range theta {
		if len(b.Center) > 0 {
			v -= b.Center[j]
		}
		s += v * v
	}
	r := math.Sqrt(s)
	if r <= b.Radius {
		return
	}
	f := b.Radius / r * (1 - 1e-12)
	for j := range theta {
		c := 0.0
		if len(b.Center) > 0 {
			c = b.Center[j]
		}
		theta[j] = c + (theta[j]-c)*f
	}
}

// LinearRange returns the smallest and largest xᵀθ over the box
// (BoundedSupport).
func (b *Box) LinearRange(x []float64) (lo, hi float64) {
	for j, v := range x {
		p, q := v*b.Lo[j], v*b.Hi[j]
		lo += math.Min(p, q)
		hi += math.Max(p, q)
	}
	return lo, hi
}

// MaxDist returns the largest ‖θ − y‖₂ over the box, at its farthest
// corner.
func (b *Box) MaxDist(y []float64) float64 {
	var q float64
	for j, v := range y {
		m := math.Max(math.Abs(v-b.Lo[j]), math.Abs(b.Hi[j]-v))
		q += m * m
	}
	return math.Sqrt(q)
}

// Reflect folds each coordinate into [Lo_j, Hi_j] by reflection at the
// faces.
func (b *Box) Reflect(x []float64) {
	for j, v := range x {
		x[j] = reflect(v, b.Lo[j], b.Hi[j])
	}
}

// Middle sets x to the box's centre.
func (b *Box) Middle(x []float64) {
	for j := range x {
		x[j] = b.Lo[j] + (b.Hi[j]-b.Lo[j])/2
	}
}

// Uniform sets dst to a point drawn uniformly from the box (the automatic
// default's search for a second mode starts from such points).
func (b *Box) Uniform(rng *rand.Rand, dst []float64) {
	for j := range dst {
		dst[j] = b.Lo[j] + rng.Float64()*(b.Hi[j]-b.Lo[j])
	}
}

// ModeWarnings says where θ is on a face of the box: there the gradient of
// the log density need not vanish, and a Gaussian approximation that
// ignores the truncation is poor (FindLaplace reports it).
func (b *Box) ModeWarnings(theta []float64) []string {
	var w []string
	for j, v := range theta {
		tol := 1e-8 * (b.Hi[j] - b.Lo[j])
		if v-b.Lo[j] <= tol || b.Hi[j]-v <= tol {
			w = append(w, fmt.Sprintf("θ̂[%d] = %.6g is on the edge of the Box prior's [%v, %v]: the mode is on the boundary of the support, where the gradient does not vanish, and the Gaussian approximation, which ignores the truncation, is poor", j, v, b.Lo[j], b.Hi[j]))
		}
	}
	return w
}

// LinearRange returns the smallest and largest xᵀθ over the ball,
// xᵀc ∓ ‖x‖₂·r (BoundedSupport).
func (b *Ball) LinearRange(x []float64) (lo, hi float64) {
	var c float64
	if len(b.Center) > 0 {
		c = vec.Dot(x, b.Center)
	}
	r := vec.Norm2(x) * b.Radius
	return c - r, c + r
}

// MaxDist returns the largest ‖θ − y‖₂ over the ball, ‖y − c‖₂ + r.
func (b *Ball) MaxDist(y []float64) float64 {
	return b.dist(y) + b.Radius
}

// dist returns ‖y − c‖₂.
func (b *Ball) dist(y []float64) float64 { return math.Sqrt(b.dist2(y)) }

// dist2 returns ‖y − c‖₂².
func (b *Ball) dist2(y []float64) float64 {
	var q float64
	for j, v := range y {
		if len(b.Center) > 0 {
			v -= b.Center[j]
		}
		q += v * v
	}
	return q
}

// Reflect folds the distance from the centre into [0, Radius] by
// reflection, keeping the direction.
func (b *Ball) Reflect(x []float64) {
	r := b.dist(x)
	if !(r > 0) || math.IsInf(r, 0) {
		return
	}
	f := reflect(r, 0, b.Radius) / r
	for j := range x {
		var c float64
		if len(b.Center) > 0 {
			c = b.Center[j]
		}
		x[j] = c + (x[j]-c)*f
	}
}

// Middle sets x to the ball's centre.
func (b *Ball) Middle(x []float64) {
	if len(b.Center) == 0 {
		clear(x)
		return
	}
	copy(x, b.Center)
}

// ModeWarnings says whether θ is on the ball's sphere, where the gradient
// of the log density need not vanish (see Box.ModeWarnings).
func (b *Ball) ModeWarnings(theta []float64) []string {
	if r := b.dist(theta); b.Radius-r <= 1e-8*b.Radius {
		return []string{fmt.Sprintf("‖θ̂ − centre‖ = %.6g is the Ball prior's radius %v: the mode is on the boundary of the support, where the gradient does not vanish, and the Gaussian approximation, which ignores the truncation, is poor", r, b.Radius)}
	}
	return nil
}

// reflect folds v into [lo, hi] by reflection at both ends (lo for a
// degenerate interval or a non-finite v).
func reflect(v, lo, hi float64) float64 {
	w := hi - lo
	if !(w > 0) || math.IsInf(w, 0) || math.IsNaN(v) || math.IsInf(v, 0) {
		if v >= lo && v <= hi {
			return v
		}
		return lo
	}
	y := math.Mod(v-lo, 2*w)
	if y < 0 {
		y += 2 * w
	}
	if y > w {
		y = 2*w - y
	}
	return min(max(lo+y, lo), hi)
}

// The priors' contracts with the kernels.
var (
	_             exactmh.BoundedSupport                              = (*Box)(nil)
	_             exactmh.BoundedSupport                              = (*Ball)(nil)
	_             exactmh.PriorHessianer                              = (*Gaussian)(nil)
	_             interface{ Uniform(*rand.Rand, []float64) }         = (*Box)(nil)
	_             interface{ ModeWarnings([]float64) []string }       = (*Laplace)(nil)
	_             interface{ MinNormSubgradient(theta, g []float64) } = (*Laplace)(nil)
	_             interface{ CheckDim(int) error }                    = (*Gaussian)(nil)
	_, _, _, _, _ exactmh.DenseGLM                                    = (*LogisticRegression)(nil), (*LogisticRegression32)(nil), (*GLMEnergy)(nil), (*GLMEnergy32)(nil), (*StudentTRegression)(nil)
)
