// Copyright ©2026 The exactmh Authors. All rights reserved.
// Use of this source code is governed by a BSD-style
// license that can be found in the LICENSE file.

package polyagamma

import (
	"math"
	"math/rand/v2"
)

// Source is the sampler's stream of uniform bits: xoshiro256** (D.
// Blackman and S. Vigna, "Scrambled linear pseudorandom number
// generators", ACM TOMS 47(4), 2021), seeded from a *rand.Rand (Seed).
// Its methods are concrete, so the draws' two to three uniforms and
// exponentials each are calls the compiler inlines or makes directly,
// not through rand.Rand's Source interface, whose dispatch per uniform
// is a sizeable share of a draw's cost (BenchmarkDrawLogitEta;
// figures/bench/multilevel_real_contra3.txt). A caller seeds it from its own
// stream before a batch of draws (multilevel: once a sweep), so the draws
// are a function of that stream alone: the same seed, the same draws, and
// nothing more to save in a checkpoint. The zero Source is not seeded:
// use NewSource.
type Source struct {
	s0, s1, s2, s3 uint64
	r              *rand.Rand // the same stream, for NormFloat64
	m              fault      // faultZigWedge: the exponential's mutant
}

// NewSource returns a Source seeded from rng (Seed), or with rng nil a
// fixed state, for a caller that seeds it before every use.
func NewSource(rng *rand.Rand) *Source {
	s := &Source{s0: 1}
	s.r = rand.New(s)
	if rng != nil {
		s.Seed(rng)
	}
	return s
}

// Seed sets the state from four draws of rng, each passed through
// SplitMix64's finaliser (Vigna's recommended seeding), never all zero.
func (s *Source) Seed(rng *rand.Rand) {
	s.s0, s.s1, s.s2, s.s3 = mix64(rng.Uint64()), mix64(rng.Uint64()), mix64(rng.Uint64()), mix64(rng.Uint64())
	if s.s0|s.s1|s.s2|s.s3 == 0 {
		s.s0 = 1
	}
}

// mix64 is SplitMix64's output function.
func mix64(z uint64) uint64 {
	z += 0x9e3779b97f4a7c15
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9
	z = (z ^ (z >> 27)) * 0x94d049bb133111eb
	return z ^ (z >> 31)
}

// Uint64 returns 64 uniform bits (xoshiro256**).
func (s *Source) Uint64() uint64 {
	r := rotl(s.s1*5, 7) * 9
	t := s.s1 << 17
	s.s2 ^= s.s0
	s.s3 ^= s.s1
	s.s1 ^= s.s2
	s.s0 ^= s.s3
	s.s2 ^= t
	s.s3 = rotl(s.s3, 45)
	return r
}

func rotl(x uint64, k uint) uint64 { return x<<k | x>>(64-k) }

// Float64 returns a uniform on [0, 1) in steps of 2⁻⁵³, as
// rand.Rand.Float64.
func (s *Source) Float64() float64 {
	return float64(s.Uint64()>>11) * 0x1p-53
}

// NormFloat64 returns a standard normal (rand.Rand.NormFloat64's
// ziggurat, on this stream).
func (s *Source) NormFloat64() float64 { return s.r.NormFloat64() }

// ExpFloat64 returns an Exp(1) variate by the ziggurat of G. Marsaglia
// and W. W. Tsang ("The ziggurat method for generating random
// variables", J. Stat. Softw. 5(8), 2000) with 256 layers, as
// rand.Rand.ExpFloat64, its tables computed at start-up in float64
// (zigTables): a layer's draw is kept outright below its inner bound,
// the base layer's tail is re + Exp(1), and a wedge's point is kept under
// the density. Exact for any tables that partition the density into
// layers of equal area (TestSourceExp; the mutant faultZigWedge, every
// wedge's point kept, caught).
func (s *Source) ExpFloat64() float64 {
	for {
		u := s.Uint64()
		j := uint32(u)
		i := uint8(u >> 32)
		x := float64(j) * zigW[i]
		if j < zigK[i] {
			return x
		}
		if i == 0 {
			return zigR - math.Log(s.Float64())
		}
		if s.m == faultZigWedge || zigF[i]+s.Float64()*(zigF[i-1]-zigF[i]) < math.Exp(-x) {
			return x
		}
	}
}

// zigR is the ziggurat's base layer's edge and zigV each layer's area
// (Marsaglia and Tsang's 256-layer exponential constants).
const (
	zigR = 7.69711747013104972
	zigV = 3.949659822581572e-3
)

// zigK, zigW and zigF are the ziggurat's tables: a layer's inner bound
// in units of 2⁻³² of its width, its width over 2³², and the density at
// its edge.
var zigK, zigW, zigF = zigTables()

// zigTables returns the exponential ziggurat's tables by Marsaglia and
// Tsang's recursion x_{i−1} = −log(v/x_i + e^{−x_i}) from x = r.
func zigTables() (k [256]uint32, w, f [256]float64) {
	const m = 1 << 32
	de := zigR
	te := de
	q := zigV / math.Exp(-de)
	k[0] = uint32(de / q * m)
	k[1] = 0
	w[0] = q / m
	w[255] = de / m
	f[0] = 1
	f[255] = math.Exp(-de)
	for i := 254; i >= 1; i-- {
		de = -math.Log(zigV/de + math.Exp(-de))
		k[i+1] = uint32(de / te * m)
		te = de
		f[i] = math.Exp(-de)
		w[i] = de / m
	}
	return k, w, f
}
