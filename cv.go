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

	"github.com/exactmh/exactmh/internal/alias"
	"github.com/exactmh/exactmh/internal/logit"
	"github.com/exactmh/exactmh/internal/prefault"
	"github.com/exactmh/exactmh/internal/prefetch"
	"github.com/exactmh/exactmh/internal/symm"
	"github.com/exactmh/exactmh/internal/vec"
)

// ControlVariates returns a posterior with exactly the target of p,
// rewritten around the second-order Taylor expansion of the energies at
// θ̂ = la.Mean (Cornish et al. 2019, §3): U_i = Û_i + R_i with Û_i the
// expansion, so that
//
//	π(θ) ∝ p(θ)·e^{−βΣ_iÛ_i(θ)} · Π_i e^{−βR_i(θ)}.
//
// The returned Prior is the first factor, O(d²) per evaluation and no
// data; its Energy holds the remainders R_i, which vanish to third order
// at θ̂, with the DiffBound
//
//	|R_i(θ) − R_i(θ′)| ≤ c_i·M(θ, θ′),  c_i = K_i·‖x_i‖³_{H⁻¹},
//	M = min((a³ + b³)/6, max(a, b)²·δ/2),
//
// K_i ≥ |f_i‴| on the prior's support, a = ‖θ − θ̂‖_H, b = ‖θ′ − θ̂‖_H,
// δ = ‖θ − θ′‖_H, H = la.Precision. The target is unchanged, so every
// kernel stays exact on it; those that take a DiffBound (TFMH: SMH-2 with
// these bounds; TunaMH with control variates) read C·M data a step
// instead of a number growing with N, and on a Box or Ball prior the
// remainders have an EnergyRange for the PoissonMH family.
//
// p.Energy must be a GLM whose |f‴| is bounded on the prior's support, or
// grows at most exponentially where it is not (LossGrowther: the Poisson
// regression's log link under a Gaussian prior), when the bound's M(θ, θ′)
// carries a factor e^{s·max(a, b)}, s = max_i s_i (growthDistance);
// θ̂ need not be the mode (exactness never depends on it), only near the
// posterior mass for the bound to be small, and H must be positive
// definite. Building costs one pass over the data.
//
// Where the GLM also has the methods LossDeriv3(i int, z float64) float64
// (f_i‴) and LossBound4(i int, lo, hi float64) float64 (a bound on |f_i⁗|
// over [lo, hi]), as model.LogisticRegression and model.StudentTRegression
// do, the expansion may go to third order: the surrogate prior then holds
// ⅙Σ_if_i‴(ẑ_i)(x_iᵀΔ)³ as well, and the bound becomes c_i = K_i·s_i⁴ with
// M = min((a⁴ + b⁴)/24, max(a, b)³·δ/6), K_i ≥ |f_i⁗|. Each order trades a
// factor ~ s_i·max(a, b) ~ d/√N, so near a concentrated posterior the
// batches shrink (examples/tall: TunaMH-CV-CN's data per step at logistic
// d = 50 and Student-t d = 100, TestConformance's "third order" rows); it
// is taken where the estimated batch is at least d data and falls by half
// or more, and d ≤ 128,
// and costs one more pass, O(Nd³/6) flops, and O(d³/6) flops but no data
// per evaluation of the prior.
func ControlVariates(p *Posterior, la *LaplaceApprox) (cv *Posterior, err error) {
	err = guard("ControlVariates", func() (err error) {
		cv, err = controlVariates(p, la, cvCubicAuto, nil, nil)
		return err
	})
	return cv, err
}

// controlVariatesCtx is ControlVariates for the automatic default: its
// passes over the data stop within a chunk of data once ctx is cancelled,
// returning ctx's error (TestChooseInterrupted).
func controlVariatesCtx(ctx context.Context, p *Posterior, la *LaplaceApprox) (cv *Posterior, err error) {
	stop, release := watchContext(ctx)
	defer release()
	err = guard("ControlVariates", func() (err error) {
		cv, err = controlVariates(p, la, cvCubicAuto, nil, stop)
		return err
	})
	if errors.Is(err, errInterrupted) {
		return nil, fmt.Errorf("exactmh: ControlVariates: %w", ctx.Err())
	}
	return cv, err
}

// controlVariates builds ControlVariates' rewrite, of the order the mode
// selects (cvCubicAuto in real use); mutate, nil in real use, lets the
// tests spoil the surrogate. Its passes return errInterrupted within a
// chunk of data once stop (nil: never) is set. The bound constants are
// compact beyond cvCompactLimit data (cvBuild).
func controlVariates(p *Posterior, la *LaplaceApprox, order cvCubicMode, mutate func(*cvPrior), stop *atomic.Bool) (*Posterior, error) {
	return cvBuild{order: order, mutate: mutate, stop: stop}.build(p, la)
}

// cvBuild is how controlVariates builds: the expansion's order and the
// hooks above, and whether the bound constants c_i are kept compact —
// rounded up to alias's 16-bit grid (alias.Up), 2 bytes a datum, drawn
// from by alias.Blocked — which they are beyond cvCompactLimit data, or
// always with compact set (the tests, which check the compact state's
// draws at small N). code and envelope, nil in real use, are the tests'
// mutants of the compact state: a coding of c_i in place of alias.Up (one
// that rounds down breaks the bound) and the blocks' envelopes of the
// sampler (alias.NewBlocked).
type cvBuild struct {
	order    cvCubicMode
	mutate   func(*cvPrior)
	stop     *atomic.Bool
	compact  bool
	plain    bool // never compact: a c_i is beyond the grid
	code     func(c float64) (uint16, bool)
	envelope func(block []uint16) uint16
}

// cvCompactLimit is the N from which ControlVariates keeps its bound
// constants compact: each c_i rounded up to a 16-bit code (alias.Up: a
// float32's upper half, relative spacing at most 2^−8), drawn from by
// alias.Blocked (an alias table over blocks of 32 data, 16 bytes a block,
// and rejection inside the drawn block against its largest code). The
// kernels' state beyond the rows is then 2.5 bytes a datum where it is 24
// below (c_i, 8 bytes, and a column of the alias table over them, 16):
// 250 MB at N = 10⁸, 2.5 GB at 10⁹, where 24 bytes would be 24 GB.
//
// Of the ways to keep less than 4 bytes a datum, this one keeps a step's
// cost what it is: a draw reads one block record and one cache line of
// codes (as the float64 state reads an alias column and c_i), and the
// rejection inside a block takes Σ_B|B|·max_B c_i/C trials a draw on
// average, at most 32 whatever the data — 2.97 on a logistic regression
// with Gaussian features, d = 10 (TestCompactStateBytes logs it) — all
// within that one line: O(1) in N.
// Recomputing c_i = K_i·‖x_i‖³_{H⁻¹} from the row instead (no state at
// all) would cost a row read and O(d²) flops for every trial of the
// rejection, rejected trials included, and a block envelope bounding
// every row's c_i in it — a pass to find, and a looser envelope, so more
// trials. Rounding up keeps the bound valid, so the kernels stay exact
// with it as with any bound: only C grows, by at most 2^−8 (0.2 % on
// average), and with it the batches. Below the limit the float64 state
// is kept, and every draw is as it was (TestGoldenDraws): its 24 bytes a
// datum are at most 0.8 GB there, and the examples' runs below 3.4·10⁷
// data keep their draws. The step costs the same CPU with either state
// (BenchmarkCVCompactStep, figures/bench/compact_state.txt), so the limit
// is about memory and reproducibility, not speed. A variable for the
// tests.
var cvCompactLimit = 1 << 25

// build is controlVariates with b's options.
//
// The bound: both terms of M follow from |x_iᵀv| ≤ ‖x_i‖_{H⁻¹}‖v‖_H
// (Cauchy–Schwarz in H's inner product), the first from Taylor's
// remainder at each end, the second from the mean value theorem on
// |R_i′| ≤ K_i(z − ẑ_i)²/2 along the segment. Unlike SMH's bound, which
// uses ‖·‖₁ and max_j|x_ij| and grows like d^{3/2} faster, it is
// Euclidean in the posterior's own shape: Σ_i f_i″s_i² = d, so
// C = Σc_i ~ d^{3/2}/√N and a, b ~ √d. The energy is itself a GLM (its
// loss is r_i(z) = f_i(z) − f_i(ẑ_i) − f_i′(ẑ_i)(z − ẑ_i) −
// ½f_i″(ẑ_i)(z − ẑ_i)²), so gradients, ranges and the other derived
// bounds follow from the contract.
//
// When p's prior is a BoundedSupport the rewritten prior has the same
// support (the surrogate factor is positive everywhere), and the
// remainders' EnergyRange takes the exact extremes of r_i on eight pieces
// of each datum's interval of x_iᵀθ, each widened by Taylor's K·h³/6. A
// range holds over the whole support, and r_i grows like
// f_i″(ẑ_i)(z − ẑ_i)²/2 where U_i grows like |z − ẑ_i|, so the range pays
// only on a support within a few tens of posterior sds of θ̂
// (TestPoissonMHControlVariatesMeasure).
//
// Memory is O(N): c_i, 8 bytes a datum, or 2 beyond cvCompactLimit data
// (the codes), and up to cvRecordLimit data the expansion (x_iᵀθ̂, f_i′,
// f_i″, f_i‴) per datum; at third order the pass keeps s_i² (8 bytes a
// datum) or, compact, both orders' codes until it chooses. The sums Σ_i∇U_i(θ̂)
// and Σ_i∇²U_i(θ̂), about half of the build, are skipped when la is
// FindLaplace's after a Newton search on p's energy under β = 1 with
// float64 rows, whose last pass summed them at θ̂ in the same order, bit
// for bit (and la.Mean is still that θ̂).
func (o cvBuild) build(p *Posterior, la *LaplaceApprox) (*Posterior, error) {
	const who = "ControlVariates"
	order, mutate, stop := o.order, o.mutate, o.stop
	if err := p.Validate(); err != nil {
		return nil, err
	}
	g, ok := p.Energy.(GLM)
	if !ok {
		return nil, fmt.Errorf("exactmh: %s: %w: energy %T is not a GLM (Row, Loss, LossDerivs, LossBound)", who, ErrNoBound, p.Energy)
	}
	if la != nil && la.SparseFactor != nil {
		return nil, fmt.Errorf("exactmh: %s: the Laplace approximation is sparse (d = %d); the GLM control variates need the dense one", who, len(la.Mean))
	}
	if la == nil || la.Precision == nil || la.CovChol == nil {
		return nil, fmt.Errorf("exactmh: %s: nil Laplace approximation (use FindLaplace or LaplaceAt)", who)
	}
	n, d := g.Len(), g.Dim()
	if len(la.Mean) != d || la.Precision.SymmetricDim() != d {
		return nil, fmt.Errorf("exactmh: %s: Laplace approximation of dimension %d, posterior %d", who, len(la.Mean), d)
	}
	if err := vec.FiniteVec(who+": θ̂", la.Mean); err != nil {
		return nil, err
	}
	prior := p.prior()
	if math.IsInf(prior.LogPrior(la.Mean), -1) {
		return nil, fmt.Errorf("exactmh: %s: θ̂ = %v is outside the prior's support", who, la.Mean)
	}
	e := &cvEnergy{g: g, d: d, n: n, center: slices.Clone(la.Mean), prec: make([]float64, d*d)}
	compact := !o.plain && (o.compact || n >= cvCompactLimit)
	code := o.code
	if code == nil {
		code = alias.Up
	}
	if compact {
		e.codes, e.envelope = prefault.Make[uint16](n), o.envelope
	} else {
		e.c = prefault.Make[float64](n)
	}
	for a := range d {
		for b := range d {
			e.prec[a*d+b] = la.Precision.At(a, b)
		}
	}
	// Lᵀ, upper triangular, row-major: s_i = ‖Lᵀx_i‖ with LLᵀ = H⁻¹.
	lt := make([]float64, d*d)
	for a := range d {
		for b := a; b < d; b++ {
			lt[a*d+b] = la.CovChol.At(b, a)
		}
	}
	cp := &cvPrior{base: prior, beta: p.beta(), d: d, center: e.center,
		grad: make([]float64, d), hess: make([]float64, d*d)}
	e.conv = rowConverterOf(g)
	if r, ok := denseLogistic(g); ok {
		e.ly = r.Y
	}
	e.mem = memRows(g)
	e.k3.n = n
	if n <= cvRecordLimit {
		e.at = prefault.Make[cvTaylor](n)
	}
	// One pass over the data in blocks (parallel.go): each datum's
	// expansion, K_i and c_i in place, the sums Σf_i′x_i and Σf_i″x_ix_iᵀ
	// per block, added in block order — unless la holds those sums from
	// FindLaplace's last Newton pass, summed from the same data at the
	// same θ̂ in the same order and so equal bit for bit (dataSums): then
	// they are copied, and the pass skips its O(d²) rank updates (all
	// that remains of O(d²) a datum is s_i).
	sums := la.data
	if !sums.matches(p.Energy, la.Mean) {
		sums = nil
	}
	grower, growth := growthMode(g, prior)
	// Third order (cv_cubic.go) is weighed for a LossCuber, under no
	// LossGrowther bound: the pass keeps K_i of both orders, s_i² and f_i‴.
	cuber, cubic := g.(LossCuber)
	cubic = cubic && !growth && order != cvCubicNever && d <= cvCubicMaxDim && cuberAgrees(g, cuber)
	// At third order the choice waits for both sums: the pass keeps s_i²
	// (float64 state) or, compact, both orders' codes (2 bytes each).
	var s2s []float64
	var codes4 []uint16
	if cubic && compact {
		codes4 = prefault.Make[uint16](n)
	} else if cubic {
		s2s = prefault.Make[float64](n)
	}
	type part struct {
		grad, hess []float64
		k3, k4     mostlyOne
		sMax       float64
		c3, c4     float64
		err        error
	}
	nb := passBlocks(n, d*d+d)
	parts := make([]part, nb)
	forBlocks(nb, func(b int) {
		pt := &parts[b]
		lo, hi := blockRange(b, nb, n)
		pt.grad, pt.hess, pt.k3.n, pt.k4.n = cp.grad, cp.hess, hi-lo, hi-lo
		if nb > 1 && sums == nil {
			pt.grad, pt.hess = make([]float64, d), make([]float64, d*d)
		}
		acc := symm.RankAcc{H: pt.hess, D: d}
		rows := newRowCursor(g)
		sp := e.mem.pass(d, lo, hi)
		defer sp.End()
		for i := lo; i < hi; i++ {
			if (i-lo)%chunk == 0 {
				if stopped(stop) {
					pt.err = errInterrupted
					return
				}
				sp.At(i)
			}
			x := rows.row(i)
			// ẑ_i exactly as taylor computes it when it does not store it.
			z := e.rowDot(i, e.center)
			f1, f2 := g.LossDerivs(i, z)
			if math.IsNaN(f1) || math.IsInf(f1, 0) || math.IsNaN(f2) || math.IsInf(f2, 0) {
				pt.err = fmt.Errorf("exactmh: %s: datum %d: f′ = %v, f″ = %v at x_iᵀθ̂ = %v", who, i, f1, f2, z)
				return
			}
			var k3 float64
			if growth {
				a, ok := grower.LossGrowth(i, z)
				if !ok || !(a >= 0) || math.IsInf(a, 1) {
					pt.err = fmt.Errorf("exactmh: %s: datum %d: LossGrowth at x_iᵀθ̂ = %v is %v, want finite ≥ 0", who, i, z, a)
					return
				}
				k3 = a
			} else {
				zlo, zhi := glmZRange(x, prior)
				var err error
				if k3, err = glmLossBound(who, g, i, 3, zlo, zhi); err != nil {
					pt.err = err
					return
				}
			}
			s2 := symm.LtNormSq(lt, x, d)
			pt.sMax = max(pt.sMax, math.Sqrt(s2))
			var f3 float64
			if cubic {
				var err error
				if f3, err = cubicDeriv3(who, cuber, i, z); err != nil {
					pt.err = err
					return
				}
				zlo, zhi := glmZRange(x, prior)
				k4 := cuber.LossBound4(i, zlo, zhi)
				pt.k4.set(i-lo, k4)
				pt.c4 += k4 * s2 * s2 // +Inf or NaN: cvCubicChoose declines
				if compact {
					// A code that fails (c_i not finite or beyond the
					// grid) makes C₄ +Inf: no third order.
					q, ok := code(k4 * s2 * s2)
					if !ok {
						pt.c4 = math.Inf(1)
					}
					codes4[i] = q
				} else {
					s2s[i] = s2
				}
			}
			if e.at != nil {
				e.at[i] = cvTaylor{zHat: z, f1: f1, f2: f2, f3: f3}
			}
			pt.k3.set(i-lo, k3)
			if c := k3 * s2 * math.Sqrt(s2); compact {
				q, ok := code(c)
				if !ok {
					pt.err = errCompactCode
					return
				}
				e.codes[i] = q
				pt.c3 += c
			} else {
				e.c[i] = c
				pt.c3 += e.c[i]
			}
			if sums == nil {
				vec.Axpy(pt.grad, f1, x)
				acc.Add(x, f2)
			}
		}
		acc.Flush()
	})
	var c3, c4 float64
	for b := range parts {
		pt := &parts[b]
		if errors.Is(pt.err, errCompactCode) && !o.compact {
			// A c_i beyond the 16-bit grid (above about 6.8·10³⁸): the
			// float64 state holds it.
			o.plain = true
			return o.build(p, la)
		}
		if pt.err != nil {
			return nil, pt.err
		}
		c3, c4 = c3+pt.c3, c4+pt.c4
	}
	if cubic = cubic && cvCubicChoose(order, c3, c4, d, n); !cubic && e.at != nil {
		for i := range e.at {
			e.at[i].f3 = 0 // as taylor recomputes it at second order
		}
	}
	if cubic && compact {
		e.codes = codes4 // the second order's codes are dropped
	}
	for b := range parts {
		pt := &parts[b]
		lo, hi := blockRange(b, nb, n)
		for i := lo; i < hi; i++ {
			if cubic {
				k4 := pt.k4.at(i - lo)
				e.k3.set(i, k4)
				if !compact {
					e.c[i] = k4 * s2s[i] * s2s[i]
				}
			} else {
				e.k3.set(i, pt.k3.at(i-lo))
			}
		}
		if growth {
			e.sGrow = max(e.sGrow, pt.sMax)
		}
		if nb > 1 && sums == nil {
			vec.Axpy(cp.grad, 1, pt.grad)
			symm.AddUpper(cp.hess, pt.hess, d)
		}
	}
	if sums != nil {
		copy(cp.grad, sums.grad)
		for a := range d {
			copy(cp.hess[a*d+a:a*d+d], sums.hess[a*d+a:a*d+d])
		}
	}
	symm.Symmetrize(cp.hess, d)
	if err := vec.FiniteVec(who+": Σ∇U_i(θ̂)", cp.grad); err != nil {
		return nil, err
	}
	if err := vec.FiniteVec(who+": Σ∇²U_i(θ̂)", cp.hess); err != nil {
		return nil, err
	}
	if cubic {
		e.cuber = cuber
		var err error
		if cp.cube, err = e.cubicTensor(stop); err != nil {
			return nil, err
		}
		if err := vec.FiniteVec(who+": Σf_i‴x_i⊗x_i⊗x_i", cp.cube.w); err != nil {
			return nil, err
		}
	}
	if mutate != nil {
		mutate(cp)
	}
	var pr Prior = cp
	if pg, ok := prior.(PriorGradienter); ok {
		pr = &cvGradPrior{cvPrior: cp, pg: pg}
	}
	return &Posterior{Energy: e, Prior: pr, Beta: p.Beta, Names: p.Names}, nil
}

// cvEnergy holds the remainders R_i = U_i − Û_i of a GLM at θ̂: per datum
// the expansion (ẑ_i = x_iᵀθ̂, f_i′(ẑ_i), f_i″(ẑ_i)), K_i ≥ sup|f_i‴| (one
// number when it is the same for all data, as it is under any unbounded
// prior) and c_i = K_i·s_i³.
//

// Up to cvRecordLimit data the expansion is stored, 32 bytes a datum read
// with one cache miss; beyond, it is recomputed from the row the kernel
// reads anyway (one more dot product and f_i′, f_i″: an exp for the
// logistic loss), bit for bit as at construction, so that only c_i is
// held — 8 bytes a datum, or beyond cvCompactLimit data 2 (codes rounded
// up, compactConsts): at large N the state, not the arithmetic, is what a
// machine runs out of.
type cvEnergy struct {
	g      GLM
	conv   rowConverter // g's, if its rows are not float64
	d, n   int
	center []float64
	at     []cvTaylor // nil beyond cvRecordLimit data
	k3     mostlyOne  // K_i
	c      []float64  // c_i, nil when compact
	// codes, beyond cvCompactLimit data, holds c_i rounded up to alias's
	// grid in place of c (c_i ≤ alias.Value(codes[i])); envelope is
	// cvBuild's.
	codes    []uint16
	envelope func(block []uint16) uint16
	prec     []float64 // H, d×d row-major (symmetric)
	ly       []float64 // the labels of a logistic DenseGLM, whose loss losses inlines
	// sGrow, when positive, is max_i s_i, and K_i is A_i of LossGrowther:
	// M(θ, θ′) is growthDistance's, valid pair by pair.
	sGrow float64
	// cuber, when not nil, is g expanded to third order (cv_cubic.go):
	// the expansion holds f_i‴(ẑ_i), K_i ≥ sup|f_i⁗|, c_i = K_i·s_i⁴ and
	// M = M₄.
	cuber LossCuber

	mem rowStore // the GLM's rows when the package keeps them (memRows), for prefetch
}

// errCompactCode is a c_i that alias.Up cannot code (beyond its grid).
var errCompactCode = errors.New("a bound constant c_i beyond the compact state's grid")

// cvTaylor is datum i's expansion point and Taylor coefficients (f3 is
// f_i‴(ẑ_i) for a LossCuber GLM, used in the third-order expansion only).
type cvTaylor struct{ zHat, f1, f2, f3 float64 }

// cvRecordLimit is the largest N for which ControlVariates stores each
// datum's expansion (32 bytes a datum: 8 MB at this N, within the caches).
// Beyond, the record is one more cache miss per datum drawn and tens of
// megabytes to fault in at construction, where recomputing is a dot
// product on a row already in cache. A variable for the tests, which check
// that both ways give the same draws.
var cvRecordLimit = 1 << 18

// taylor returns datum i's expansion, stored or recomputed.
func (e *cvEnergy) taylor(i int) cvTaylor {
	if e.at != nil {
		return e.at[i]
	}
	z := e.rowDot(i, e.center)
	f1, f2 := e.g.LossDerivs(i, z)
	t := cvTaylor{zHat: z, f1: f1, f2: f2}
	if e.cuber != nil {
		t.f3 = e.cuber.LossDeriv3(i, z)
	}
	return t
}

// bound3 returns K_i (of f_i⁗ in the third-order expansion).
func (e *cvEnergy) bound3(i int) float64 { return e.k3.at(i) }

// mostlyOne holds n numbers set in order of index: one number until one
// differs (under any unbounded prior every datum's z range, and so K_i, is
// the same), then a slice.
type mostlyOne struct {
	n   int
	all float64
	v   []float64 // nil while every number is all
}

// set sets number i, after numbers 0 … i−1.
func (m *mostlyOne) set(i int, x float64) {
	switch {
	case i == 0:
		m.all = x
	case m.v != nil:
		m.v[i] = x
	case x != m.all:
		m.v = make([]float64, m.n)
		for j := range i {
			m.v[j] = m.all
		}
		m.v[i] = x
	}
}

// at returns number i.
func (m *mostlyOne) at(i int) float64 {
	if m.v == nil {
		return m.all
	}
	return m.v[i]
}

var (
	_ GLM          = (*cvEnergy)(nil)
	_ EnergyDiffer = (*cvEnergy)(nil)
	_ DiffBounder  = (*cvEnergy)(nil)
	_ EnergyRanger = (*cvEnergy)(nil)

	_ sharedDiffBounder = (*cvEnergy)(nil)
)

// Len returns N.
func (e *cvEnergy) Len() int { return e.n }

// Dim returns d.
func (e *cvEnergy) Dim() int { return e.d }

// Row returns x_i.
func (e *cvEnergy) Row(i int) []float64 { return e.g.Row(i) }

// rowDot, rowDot2, rowAxpy and readRow make cvEnergy a rowConverter: the
// same arithmetic as on g.Row(i) for float64 rows, without Row's copy for
// the float32 GLMs.
func (e *cvEnergy) rowDot(i int, theta []float64) float64 {
	if e.conv != nil {
		return e.conv.rowDot(i, theta)
	}
	return vec.Dot(e.g.Row(i), theta)
}

func (e *cvEnergy) rowDot2(i int, a, b []float64) (float64, float64) {
	if e.conv != nil {
		return e.conv.rowDot2(i, a, b)
	}
	return vec.Dot2(e.g.Row(i), a, b)
}

func (e *cvEnergy) rowAxpy(grad []float64, alpha float64, i int) {
	if e.conv != nil {
		e.conv.rowAxpy(grad, alpha, i)
		return
	}
	vec.Axpy(grad, alpha, e.g.Row(i))
}

func (e *cvEnergy) readRow(dst []float64, i int) []float64 {
	if e.conv != nil {
		return e.conv.readRow(dst, i)
	}
	return e.g.Row(i)
}

// Loss returns the remainder r_i(z) = f_i(z) − f_i(ẑ_i) − f_i′(ẑ_i)(z − ẑ_i)
// − ½f_i″(ẑ_i)(z − ẑ_i)².
func (e *cvEnergy) Loss(i int, z float64) float64 {
	t := e.taylor(i)
	a := z - t.zHat
	if e.cuber != nil {
		return e.g.Loss(i, z) - e.g.Loss(i, t.zHat) - t.f1*a - 0.5*t.f2*a*a - t.f3*a*a*a/6
	}
	return e.g.Loss(i, z) - e.g.Loss(i, t.zHat) - t.f1*a - 0.5*t.f2*a*a
}

// LossDerivs returns r_i′(z) and r_i″(z).
func (e *cvEnergy) LossDerivs(i int, z float64) (f1, f2 float64) {
	g1, g2 := e.g.LossDerivs(i, z)
	t := e.taylor(i)
	if e.cuber != nil {
		a := z - t.zHat
		return g1 - t.f1 - t.f2*a - 0.5*t.f3*a*a, g2 - t.f2 - t.f3*a
	}
	return g1 - t.f1 - t.f2*(z-t.zHat), g2 - t.f2
}

// LossBound bounds |r_i^{(k)}| on [lo, hi] from K = sup|f_i‴| on the hull of
// [lo, hi] and ẑ_i: |r‴| ≤ K, |r″| ≤ K·m, |r′| ≤ K·m²/2 with m the largest
// distance from ẑ_i (r′ and r″ vanish at ẑ_i).
//
// In the third-order expansion r‴ = f_i‴(z) − f_i‴(ẑ_i) vanishes at ẑ_i
// too, and the bounds are one order higher from K₄ = sup|f_i⁗|: |r‴| ≤
// K₄·m, |r″| ≤ K₄·m²/2, |r′| ≤ K₄·m³/6; or, from |r‴| ≤ K + |f_i‴(ẑ_i)|
// (finite where m is not), the lesser of those and the same chain from
// that bound.
func (e *cvEnergy) LossBound(i, k int, lo, hi float64) float64 {
	zh := e.taylor(i).zHat
	m := max(math.Abs(lo-zh), math.Abs(hi-zh))
	if e.cuber != nil {
		k4 := e.cuber.LossBound4(i, min(lo, zh), max(hi, zh))
		k3 := e.g.LossBound(i, 3, min(lo, zh), max(hi, zh)) + math.Abs(e.taylor(i).f3)
		switch k {
		case 3:
			return min(k4*m, k3)
		case 2:
			return min(k4*m*m/2, k3*m)
		case 1:
			return min(k4*m*m*m/6, k3*m*m/2)
		}
		return math.Inf(1)
	}
	k3 := e.g.LossBound(i, 3, min(lo, zh), max(hi, zh))
	switch k {
	case 3:
		return k3
	case 2:
		return k3 * m
	case 1:
		return k3 * m * m / 2
	}
	return math.Inf(1)
}

// cvRangePieces is the number of pieces EnergyRange cuts each datum's
// interval of z into: the slack it adds, K·h³/6 at each end of a piece of
// half-width h, falls as cvRangePieces⁻³.
const cvRangePieces = 8

// EnergyRange returns a range of the remainders R_i on the support of a
// Box or Ball prior — or of the prior ControlVariates returned, whose
// support is its base prior's — for PoissonMH, Poisson-MALA and
// Poisson-Barker: with z = x_iᵀθ ∈ [lo_i, hi_i] there (linearRange),
// every value of r_i on that interval lies in [Lo_i, Lo_i + Width_i]
// (remainderRange). Any other prior has no range, and the error says so.
//
// It is computed on each call, from the stored or the recomputed
// expansion alike (they are equal bit for bit): eight pieces per datum,
// each one evaluation of f_i, f_i′ and f_i″ and a bound on |f_i‴|.
func (e *cvEnergy) EnergyRange(prior Prior) (*EnergyRange, error) {
	return e.energyRange(prior, nil)
}

// energyRange is EnergyRange returning errInterrupted within a chunk of
// data once stop is set (stopRanger).
func (e *cvEnergy) energyRange(prior Prior, stop *atomic.Bool) (*EnergyRange, error) {
	if err := checkPriorDim(prior, e.d); err != nil {
		return nil, err
	}
	if err := rangeSupport(prior); err != nil {
		return nil, err
	}
	r := &EnergyRange{Lo: prefault.Make[float64](e.n), Width: prefault.Make[float64](e.n)}
	rows := newRowCursor(e)
	for i := range r.Lo {
		if i%chunk == 0 && stopped(stop) {
			return nil, errInterrupted
		}
		lo, hi, err := linearRange(rows.row(i), prior)
		if err != nil {
			return nil, err
		}
		if r.Lo[i], r.Width[i], err = e.remainderRange(i, lo, hi); err != nil {
			return nil, err
		}
	}
	return r, nil
}

// remainderRange returns Lo and Width with Lo ≤ r_i(z) ≤ Lo + Width for
// every z ∈ [lo, hi], where r_i(z) = f_i(z) − f_i(ẑ) − f_i′(ẑ)(z − ẑ) −
// ½f_i″(ẑ)(z − ẑ)² (ẑ = ẑ_i, anywhere: the expansion point need not be
// in the interval).
//
// The interval is cut into cvRangePieces pieces. On a piece [a, b] with
// centre c and half-width h, Taylor's theorem with Lagrange's remainder
// gives, for t = z − c ∈ [−h, h] and some ξ between c and z (so in [a, b]),
//
//	r_i(z) = r_i(c) + r_i′(c)t + ½r_i″(c)t² + r_i‴(ξ)t³/6,
//
// and r_i‴ = f_i‴ (the subtracted quadratic has none), so with
// K = sup|f_i‴| on [a, b] (f_i's LossBound of order 3 there)
//
//	min_t q(t) − K·h³/6 ≤ r_i(z) ≤ max_t q(t) + K·h³/6,
//	q(t) = r_i(c) + r_i′(c)t + ½r_i″(c)t²,
//
// where the extremes of the quadratic q on [−h, h] are exact: at t = ±h or
// at its vertex t = −r_i′(c)/r_i″(c) if that lies inside. The range is the
// union over the pieces. It is valid for any GLM loss with a finite bound
// on |f‴| over each piece, and tight: its slack, K·h³/6 at each end, is
// the error of the quadratic alone, a few per cent of the width for the
// logistic loss on an interval of width 30 (K = 1/(6√3), h ≈ 1.9: 0.1 of a
// range about 28 wide). A single expansion at ẑ would give the cruder
// |r_i(z)| ≤ K·|z − ẑ|³/6, which grows like the cube of the interval while
// r_i itself, for a loss linear at infinity, grows like its square.
//
// The bound holds for the exact r_i; the kernels compare it with computed
// energies, whose rounding error grows with the magnitudes the remainder
// is computed from (f_i(z), f_i(ẑ), the Taylor terms, z through x_iᵀθ).
// Both ends are widened by roundingSlack times a bound on those
// magnitudes over the interval, as EnergyDiffs forgives its rounding.
func (e *cvEnergy) remainderRange(i int, lo, hi float64) (rlo, width float64, err error) {
	const who = "ControlVariates: EnergyRange"
	t := e.taylor(i)
	f0 := e.g.Loss(i, t.zHat)
	rlo, rhi := math.Inf(1), math.Inf(-1)
	var fMax, r1Max float64 // bounds on |f_i| and |r_i′| over [lo, hi]
	step := (hi - lo) / cvRangePieces
	for k := range cvRangePieces {
		a, b := lo+float64(k)*step, lo+float64(k+1)*step
		if k == cvRangePieces-1 {
			b = hi
		}
		c, h := a+(b-a)/2, (b-a)/2
		k3, err := glmLossBound(who, e.g, i, 3, a, b)
		if err != nil {
			return 0, 0, err
		}
		dz := c - t.zHat
		fc := e.g.Loss(i, c)
		g1, g2 := e.g.LossDerivs(i, c)
		r0 := fc - f0 - t.f1*dz - 0.5*t.f2*dz*dz
		r1 := g1 - t.f1 - t.f2*dz
		r2 := g2 - t.f2
		if e.cuber != nil {
			// r‴ = f_i‴ − f_i‴(ẑ_i): |r‴| ≤ K + |f_i‴(ẑ_i)| on the piece.
			r0 -= t.f3 * dz * dz * dz / 6
			r1 -= 0.5 * t.f3 * dz * dz
			r2 -= t.f3 * dz
			k3 += math.Abs(t.f3)
		}
		qlo, qhi := quadRange(r0, r1, r2, h)
		tail := k3 * h * h * h / 6
		rlo, rhi = min(rlo, qlo-tail), max(rhi, qhi+tail)
		// |f_i| and |r_i′| on the piece, by the same expansion one order
		// lower (r_i″ = f_i″ − f_i″(ẑ), and |f_i″ − g2| ≤ K·h).
		fMax = max(fMax, math.Abs(fc)+math.Abs(g1)*h+math.Abs(g2)*h*h/2+tail)
		r1Max = max(r1Max, math.Abs(r1)+math.Abs(r2)*h+k3*h*h/2)
	}
	m := max(math.Abs(lo-t.zHat), math.Abs(hi-t.zHat))
	mag := 1 + math.Abs(f0) + fMax + math.Abs(t.f1)*m + 0.5*math.Abs(t.f2)*m*m +
		max(math.Abs(lo), math.Abs(hi))*r1Max
	if e.cuber != nil {
		mag += math.Abs(t.f3) * m * m * m / 6
	}
	pad := roundingSlack * mag
	rlo, rhi = rlo-pad, rhi+pad
	if math.IsNaN(rlo) || math.IsNaN(rhi) || math.IsInf(rlo, 0) || math.IsInf(rhi, 0) {
		return 0, 0, fmt.Errorf("exactmh: %s: datum %d: remainder range [%v, %v] over z ∈ [%v, %v] (ẑ = %v) is not finite",
			who, i, rlo, rhi, lo, hi, t.zHat)
	}
	return rlo, rhi - rlo, nil
}

// quadRange returns the least and greatest values of q(t) = r0 + r1·t +
// ½r2·t² for t ∈ [−h, h]: at an end, or at the vertex −r1/r2 if it lies
// inside.
func quadRange(r0, r1, r2, h float64) (lo, hi float64) {
	qa, qb := r0-r1*h+0.5*r2*h*h, r0+r1*h+0.5*r2*h*h
	lo, hi = min(qa, qb), max(qa, qb)
	if r2 != 0 && math.Abs(r1) < math.Abs(r2)*h {
		v := r0 - 0.5*r1*r1/r2
		lo, hi = min(lo, v), max(hi, v)
	}
	return lo, hi
}

// Energies sets dst[k] = R_{idx[k]}(θ).
func (e *cvEnergy) Energies(dst, theta []float64, idx []int) {
	for k, i := range idx {
		dst[k] = e.Loss(i, e.rowDot(i, theta))
	}
}

// EnergyDiffs sets dst[k] = R_i(θ) − R_i(θ′) for i = idx[k].
//
// The difference of two remainders near θ̂ is far smaller than the
// quantities it is computed from (f_i(z) itself is often a difference,
// softplus(z) − yz), so its rounding error, about 10⁻¹⁶ of their size, can
// exceed the exact bound when θ and θ′ are both within ~10⁻⁴ posterior sds
// of θ̂, where the bound is ~10⁻²⁰. A value beyond the per-datum bound by no
// more than roundingSlack of that size is set to the bound (the
// mathematics guarantees the true value is within it); anything more is
// left for the kernel's bound check to report, so a wrong LossBound is
// still caught wherever its excess is visible above rounding.
//
// The data go 64 at a time: their linear predictors, then their losses
// (losses), then the remainders.
func (e *cvEnergy) EnergyDiffs(dst, theta, thetaNew []float64, idx []int) {
	var zs, zns, fzs, fzns [logit.Group]float64
	for lo := 0; lo < len(idx); lo += logit.Group {
		group := idx[lo:min(lo+logit.Group, len(idx))]
		dst[lo] = e.prefetch(group) // overwritten below: the loads are not dead
		for k, i := range group {
			zs[k], zns[k] = e.rowDot2(i, theta, thetaNew)
		}
		e.losses(fzs[:len(group)], zs[:len(group)], group)
		e.losses(fzns[:len(group)], zns[:len(group)], group)
		for k, i := range group {
			dst[lo+k] = e.remainderDiff(i, e.taylor(i), zs[k], zns[k], fzs[k], fzns[k])
		}
	}
}

// prefetch reads the rows and responses of the data idx, when the GLM keeps
// them in memory (memRows) and idx are not consecutive (a pass, which the
// prefetcher streams), in a loop of independent loads, so that a
// minibatch's random rows miss the cache together rather than one at a
// time inside the arithmetic (see prefetch.Data). It returns prefetch.Data's sum,
// which the caller stores where it is overwritten (the energy is shared by
// the chains: it keeps no state).
func (e *cvEnergy) prefetch(idx []int) float64 {
	if len(idx) < 2 || prefetch.Consecutive(idx) {
		return 0
	}
	return e.mem.prefetch(e.d, idx)
}

// energyDiffsFrom sets dst[m] to EnergyDiffs(dst[m], theta, nexts[m], idx),
// bit for bit, computing x_iᵀθ, f_i(x_iᵀθ) and datum i's expansion once for
// all the points (the bound audit's pairs share their first point).
func (e *cvEnergy) energyDiffsFrom(dst [][]float64, theta []float64, nexts [][]float64, idx []int) {
	var zs, fzs, zns, fzns [logit.Group]float64
	var ts [logit.Group]cvTaylor
	for lo := 0; lo < len(idx); lo += logit.Group {
		group := idx[lo:min(lo+logit.Group, len(idx))]
		for k, i := range group {
			zs[k] = e.rowDot(i, theta) // as rowDot2 computes its first
			ts[k] = e.taylor(i)
		}
		e.losses(fzs[:len(group)], zs[:len(group)], group)
		for m, next := range nexts {
			for k, i := range group {
				zns[k] = e.rowDot(i, next)
			}
			e.losses(fzns[:len(group)], zns[:len(group)], group)
			for k, i := range group {
				dst[m][lo+k] = e.remainderDiff(i, ts[k], zs[k], zns[k], fzs[k], fzns[k])
			}
		}
	}
}

// remainderDiff returns datum i's remainder difference R_i(θ) − R_i(θ′)
// from its expansion t, z = x_iᵀθ, z′ = x_iᵀθ′ and the losses f_i(z),
// f_i(z′): the loss difference less the expansion's, held to its
// third-derivative bound K_i·min((a³ + b³)/6, max(a, b)²|a − b|/2) where
// it exceeds it only by rounding.
func (e *cvEnergy) remainderDiff(i int, t cvTaylor, z, zn, fz, fzn float64) float64 {
	a, b := z-t.zHat, zn-t.zHat
	r := (fz - fzn) - t.f1*(z-zn) - 0.5*t.f2*(a-b)*(a+b)
	var lim float64
	if e.cuber != nil {
		r -= t.f3 * (a - b) * (a*a + a*b + b*b) / 6
		lim = cubicLimit(e.bound3(i), a, b)
	} else {
		aa, ab := math.Abs(a), math.Abs(b)
		k := e.bound3(i)
		if e.sGrow > 0 {
			k *= math.Exp(max(aa, ab)) // LossGrowther: |f‴| ≤ A_i·e^{|z − ẑ_i|}
		}
		lim = k * min((aa*aa*aa+ab*ab*ab)/6, max(aa, ab)*max(aa, ab)*math.Abs(a-b)/2)
	}
	if ar := math.Abs(r); ar > lim && ar-lim <= roundingSlack*(1+math.Abs(fz)+math.Abs(fzn)+math.Abs(z)+math.Abs(zn)) {
		r = math.Copysign(lim, r)
	}
	return r
}

// losses sets dst[k] = f_i(z[k]) for i = idx[k]: for a logistic DenseGLM
// a group at a time (logit.Losses, bit for bit model.LogisticRegression's
// Loss), for any other GLM by its Loss. denseLogistic checks the GLM's Loss
// against the inlined one, so a type that embeds a logistic regression and
// overrides Loss keeps its Loss.
func (e *cvEnergy) losses(dst, z []float64, idx []int) {
	if e.ly != nil {
		copy(dst, z)
		logit.Losses(dst, e.ly, idx)
		return
	}
	for k, i := range idx {
		dst[k] = e.g.Loss(i, z[k])
	}
}

// roundingSlack is the relative size of the rounding error EnergyDiffs
// forgives in a remainder difference: ~500 ulps.
const roundingSlack = 1e-13

// DiffBound returns c_i = K_i·s_i³ and M(θ, θ′) = min((a³ + b³)/6,
// max(a, b)²·δ/2) in H's norm, or at third order c_i = K_i·s_i⁴ and M₄
// (see ControlVariates). prior is the
// posterior's; the bound was computed at construction on the original
// prior's support.
// Compact c_i are returned decoded, as float64s.
func (e *cvEnergy) DiffBound(Prior) (*DiffBound, error) {
	if e.codes != nil {
		return e.sharedDiffBound().plain(), nil
	}
	return &DiffBound{C: slices.Clone(e.c), Metric: e.distance}, nil
}

// sharedDiffBound is DiffBound without the copy, for the kernels; compact
// c_i stay compact.
func (e *cvEnergy) sharedDiffBound() *DiffBound {
	if e.codes != nil {
		return &DiffBound{Metric: e.distance, compact: &compactConsts{codes: e.codes, scale: 1, envelope: e.envelope}}
	}
	return &DiffBound{C: e.c, Metric: e.distance}
}

// boundSum returns C = Σ_i c_i.
func (e *cvEnergy) boundSum() float64 {
	return e.sharedDiffBound().Sum()
}

// distance is M(θ, θ′); it allocates nothing and is safe for concurrent use.
func (e *cvEnergy) distance(theta, thetaNew []float64) float64 {
	a, b := e.norm(theta, e.center), e.norm(thetaNew, e.center)
	delta := e.norm(theta, thetaNew)
	if e.sGrow > 0 {
		return e.growthDistance(a, b, delta)
	}
	if e.cuber != nil {
		return cubicDistance(a, b, delta)
	}
	hi := max(a, b)
	return min((a*a*a+b*b*b)/6, hi*hi*delta/2)
}

// norm returns ‖u − v‖_H = √((u − v)ᵀH(u − v)), from H's upper triangle.
func (e *cvEnergy) norm(u, v []float64) float64 {
	d := e.d
	var s float64
	for a := range d {
		da := u[a] - v[a]
		row := e.prec[a*d : a*d+d]
		r := 0.5 * row[a] * da
		for b := a + 1; b < d; b++ {
			r += row[b] * (u[b] - v[b])
		}
		s += da * r
	}
	return math.Sqrt(max(0, 2*s))
}

// cvPrior is p(θ)·e^{−βΣ_iÛ_i(θ)} without the constant βΣ_iU_i(θ̂).
type cvPrior struct {
	base   Prior
	beta   float64
	d      int
	center []float64
	grad   []float64   // Σ_i∇U_i(θ̂), untempered
	hess   []float64   // Σ_i∇²U_i(θ̂), d×d row-major (symmetric)
	cube   *cubeTensor // Σ_i f_i‴(ẑ_i)·x_i⊗x_i⊗x_i in the third-order expansion, else nil
}

// LogPrior returns log p(θ) − β(gᵀΔ + ½ΔᵀHΔ), Δ = θ − θ̂, less β·⅙T(Δ, Δ, Δ)
// at third order.
func (q *cvPrior) LogPrior(theta []float64) float64 {
	lp := q.base.LogPrior(theta)
	if math.IsInf(lp, -1) || len(theta) != q.d {
		return lp
	}
	d := q.d
	var s float64
	for a := range d {
		da := theta[a] - q.center[a]
		row := q.hess[a*d : a*d+d]
		r := q.grad[a] + 0.5*row[a]*da
		for b := a + 1; b < d; b++ {
			r += row[b] * (theta[b] - q.center[b])
		}
		s += da * r
	}
	if q.cube != nil {
		var buf [cvCubicMaxDim]float64
		delta := buf[:d]
		for a := range d {
			delta[a] = theta[a] - q.center[a]
		}
		s += q.cube.form(delta) / 6
	}
	return lp - q.beta*s
}

// supportPrior returns the base prior, whose support the surrogate factor,
// positive and finite everywhere, leaves unchanged (see supportOf).
func (q *cvPrior) supportPrior() Prior { return q.base }

// checkDim passes the base prior's dimension check on.
func (q *cvPrior) checkDim(d int) error {
	if d != q.d {
		return fmt.Errorf("exactmh: control-variate prior of dimension %d, energy %d", q.d, d)
	}
	if dc, ok := q.base.(dimChecker); ok {
		return dc.CheckDim(d)
	}
	return nil
}

// cvGradPrior is a cvPrior whose base prior has a gradient.
type cvGradPrior struct {
	*cvPrior
	pg PriorGradienter
}

// AddLogPriorGradient adds ∇log p(θ) − β(g + HΔ) to grad, less β·½T(Δ, Δ, ·)
// at third order.
func (q *cvGradPrior) AddLogPriorGradient(grad, theta []float64) {
	q.pg.AddLogPriorGradient(grad, theta)
	d := q.d
	for a := range d {
		row := q.hess[a*d : a*d+d]
		r := q.grad[a]
		for b, h := range row {
			r += h * (theta[b] - q.center[b])
		}
		grad[a] -= q.beta * r
	}
	if q.cube != nil {
		var buf [cvCubicMaxDim]float64
		delta := buf[:d]
		for a := range d {
			delta[a] = theta[a] - q.center[a]
		}
		q.cube.addGrad(grad, -q.beta/6, delta)
	}
}
