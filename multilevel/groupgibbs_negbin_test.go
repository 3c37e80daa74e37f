// Copyright ©2026 The exactmh Authors. All rights reserved.
// Use of this source code is governed by a BSD-style
// license that can be found in the LICENSE file.

package multilevel_test

import (
	"context"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/exactmh/exactmh"
	"github.com/exactmh/exactmh/mcmctest"
	"github.com/exactmh/exactmh/model"
	"github.com/exactmh/exactmh/multilevel"
)

// mlNegBin is a negative binomial (NB2, log link, offsets) multilevel
// regression for the negative binomial sweep's kit: an intercept and a
// covariate x with β ~ N(0, 1), one factor of G groups (group 0 holding
// about half the data) with a random intercept and a correlated random
// slope on x, u_g ~ N(0, diag(τ)·Ω·diag(τ)), τ_k ~ half-normal(1),
// Ω ~ LKJ(1), the shape φ ~ Gamma(4, 2), offsets log e_i, e_i ~ U(0.5, 2):
// every parameter unknown. θ = (β, u_0, …, u_{G−1}, log τ, atanh ρ,
// log φ).
type mlNegBin struct {
	n, groups int
	// dropJacobian builds the posterior without the log φ transform's
	// Jacobian (the mutant "the shape prior's Jacobian dropped").
	dropJacobian bool
}

func (m mlNegBin) dim() int { return 2 + 2*m.groups + 2 + 1 + 1 }

// truth draws θ from the prior (the LKJ(1) of q = 2: ρ uniform).
func (m mlNegBin) truth(rng *rand.Rand) []float64 {
	d := m.dim()
	th := make([]float64, d)
	th[0], th[1] = rng.NormFloat64(), rng.NormFloat64()
	t0, t1 := math.Abs(rng.NormFloat64()), math.Abs(rng.NormFloat64())
	rho := 2*rng.Float64() - 1
	for g := range m.groups {
		a, b := rng.NormFloat64(), rng.NormFloat64()
		th[2+2*g] = t0 * a
		th[3+2*g] = t1 * (rho*a + math.Sqrt(1-rho*rho)*b)
	}
	lt := 2 + 2*m.groups
	th[lt], th[lt+1], th[lt+2] = math.Log(t0), math.Log(t1), math.Atanh(rho)
	th[d-1] = math.Log(gammaDraw(rng, 4) / 2)
	return th
}

// build returns the posterior of data drawn at θ.
func (m mlNegBin) build(rng *rand.Rand, theta []float64) (*exactmh.Posterior, error) {
	d := m.dim()
	phi := math.Exp(theta[d-1])
	ml := &model.Multilevel{Y: make([]float64, m.n), Offset: make([]float64, m.n), Intercept: true, FixedSD: []float64{1, 1}}
	x := model.Covariate{Name: "x", Values: make([]float64, m.n)}
	f := model.Factor{Name: "g", Index: make([]int32, m.n), Tau: model.HalfNormal(1), Correlated: true, Slopes: []model.Covariate{x}}
	ml.Fixed = []model.Covariate{x}
	for i := range m.n {
		g := i % m.groups
		if i >= m.n/2 && rng.IntN(2) == 0 {
			g = 0
		}
		f.Index[i] = int32(g)
		xi := rng.NormFloat64()
		x.Values[i] = xi
		o := math.Log(0.5 + 1.5*rng.Float64())
		ml.Offset[i] = o
		eta := o + theta[0] + theta[2+2*g] + (theta[1]+theta[3+2*g])*xi
		lam := gammaDraw(rng, phi) / phi
		// μ capped at e⁸ (a draw of the prior this far out is rare; the
		// cap keeps a draw's cost bounded).
		ml.Y[i] = float64(poissonDraw(rng, math.Exp(math.Min(eta, 8))*lam))
	}
	ml.Factors = []model.Factor{f}
	p, err := model.NewNegBinomialMultilevel(ml, model.Gamma(4, 2))
	if err != nil {
		return nil, err
	}
	if m.dropJacobian {
		p.Prior = shapeJacobianDropped{p.Prior.(*model.WithScale)}
	}
	return p, nil
}

// poissonDraw draws Poisson(m) by inversion (m < 30) or as a sum of
// draws of smaller means.
func poissonDraw(rng *rand.Rand, m float64) int {
	if m >= 30 {
		k := int(m/20) + 1
		s := 0
		for range k {
			s += poissonDraw(rng, m/float64(k))
		}
		return s
	}
	l, p, k := math.Exp(-m), 1.0, 0
	for {
		p *= rng.Float64()
		if p <= l {
			return k
		}
		k++
	}
}

// shapeJacobianDropped is a WithScale prior without the log transform's
// Jacobian: log p(θ) − ℓ.
type shapeJacobianDropped struct{ *model.WithScale }

func (p shapeJacobianDropped) LogPrior(theta []float64) float64 {
	return p.WithScale.LogPrior(theta) - theta[len(theta)-1]
}

func (p shapeJacobianDropped) AddLogPriorGradient(grad, theta []float64) {
	p.WithScale.AddLogPriorGradient(grad, theta)
	grad[len(theta)-1]--
}

// negBinProblem returns the problem with GroupGibbs's negative binomial
// centre as its mode.
func negBinProblem(p *exactmh.Posterior) (mcmctest.Problem, error) {
	t, err := exactmh.NewTarget(p)
	if err != nil {
		return mcmctest.Problem{}, err
	}
	c, err := multilevel.GroupGibbs{}.DefaultStart(t)
	if err != nil {
		return mcmctest.Problem{}, err
	}
	sd := make([]float64, len(c))
	for j := range sd {
		sd[j] = 0.1
	}
	return mcmctest.Problem{Posterior: p, Mode: c, SD: sd}, nil
}

// Draw implements mcmctest.Model.
func (m mlNegBin) Draw(rng *rand.Rand) ([]float64, mcmctest.Problem, error) {
	theta := m.truth(rng)
	p, err := m.build(rng, theta)
	if err != nil {
		return nil, mcmctest.Problem{}, err
	}
	pb, err := negBinProblem(p)
	return theta, pb, err
}

// TestNegBinShapeCond checks the shape's conditional V(ℓ) given the
// linear predictors (the counts' histogram in place of log Γ) against
// the energy's sum: V(ℓ₁) − V(ℓ₀) = Σ_i U_i(w, ℓ₁) − U_i(w, ℓ₀) at random
// points, and V′, V″ against central differences of V.
func TestNegBinShapeCond(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	m := mlNegBin{n: 300, groups: 5}
	theta := m.truth(rng)
	p, err := m.build(rng, theta)
	if err != nil {
		t.Fatal(err)
	}
	e := p.Energy.(multilevel.NegBinomialEnergy)
	d := m.dim()
	view := e.ShapeView(1)
	eta := make([]float64, m.n)
	for i := range eta {
		eta[i], _ = view.LinearPredictors(i, theta[:d-1], theta[:d-1])
	}
	idx := make([]int, m.n)
	for i := range idx {
		idx[i] = i
	}
	dst := make([]float64, m.n)
	for _, pair := range [][2]float64{{0, 1}, {-1.5, 2.5}, {0.7, 0.71}} {
		th0, th1 := append([]float64(nil), theta...), append([]float64(nil), theta...)
		th0[d-1], th1[d-1] = pair[0], pair[1]
		p.Energy.(exactmh.EnergyDiffer).EnergyDiffs(dst, th1, th0, idx)
		var want float64
		for _, v := range dst {
			want += v
		}
		v0, _, _, err := multilevel.NegBinShapeCond(e.Counts(), eta, pair[0])
		if err != nil {
			t.Fatal(err)
		}
		v1, _, _, _ := multilevel.NegBinShapeCond(e.Counts(), eta, pair[1])
		if math.Abs((v1-v0)-want) > 1e-8*(1+math.Abs(want)) {
			t.Errorf("ℓ %v → %v: V difference %v, the energy's %v", pair[0], pair[1], v1-v0, want)
		}
	}
	for _, l := range []float64{-1, 0.3, 2} {
		const h = 1e-4
		vm, _, _, _ := multilevel.NegBinShapeCond(e.Counts(), eta, l-h)
		v, d1, d2, _ := multilevel.NegBinShapeCond(e.Counts(), eta, l)
		vp, _, _, _ := multilevel.NegBinShapeCond(e.Counts(), eta, l+h)
		fd1, fd2 := (vp-vm)/(2*h), (vp-2*v+vm)/(h*h)
		if math.Abs(d1-fd1) > 1e-5*(1+math.Abs(fd1)) || math.Abs(d2-fd2) > 1e-3*(1+math.Abs(fd2)) {
			t.Errorf("ℓ = %v: V′ %v, V″ %v; differences %v, %v", l, d1, d2, fd1, fd2)
		}
	}
}

// TestGroupGibbsNegBinStructural runs the kit's structural checks on
// GroupGibbs's negative binomial sweep (N = 400, 5 groups, started from
// DefaultStart's centre): no allocation per sweep (the control variate's
// sums moved to φ in place, the shape's test), Info's counts, checkpoint and
// resume, results and counts independent of the workers; with the
// shape's test deciding (its region wide) as well.
func TestGroupGibbsNegBinStructural(t *testing.T) {
	m := mlNegBin{n: 400, groups: 5}
	_, pb, err := m.Draw(rand.New(rand.NewPCG(41, 42)))
	if err != nil {
		t.Fatal(err)
	}
	k := multilevel.GroupGibbs{Center: pb.Mode}
	checkStructural(t, "the negative binomial sweep", k, pb.Posterior, pb.Mode, 300)
	// The shape's minibatch test deciding (its region widened: at this N
	// the default region sends most updates to the full pass).
	checkStructural(t, "the negative binomial sweep, the shape test's region wide", multilevel.NegBinRegion(k, 10, 1), pb.Posterior, pb.Mode, 300)
}

// TestGroupGibbsNegBinMoments compares GroupGibbs's negative binomial
// sweep with full-batch NUTS's means and variances (two-sample |z| < 4.5
// on every coordinate, log φ included) on the kit in two configurations,
// each where a mutant has power, and requires each mutant to fail there:
//
//   - N = 1000, six groups (correlated intercept and slope, offsets), the
//     sweep around DefaultStart's centre, with the shape's update every
//     DefaultShapeEvery sweeps and every sweep, and the automatic default
//     chooses it. Mutant caught: the shape update without its Hastings
//     ratio (NegBinNoQ).
//   - N = 150, the same groups, where the data inform φ little, so its
//     prior shapes the posterior: the shape prior's Jacobian dropped (a
//     prior density in φ used as one in log φ: log π moves by −ℓ, which
//     shifts E[ℓ] by about Var(ℓ | y)) must fail. And the sweep around a
//     centre whose shape is 4φ̂ (exact for any centre): the sweep itself
//     must pass, and the control variate's sums left at the centre's
//     shape (NegBinStale) must fail — each datum's expansion follows φ
//     while H keeps f″ at 4φ̂, so w's conditional precision is that of
//     the wrong shape. (Around DefaultStart's own centre the stale sums'
//     bias is first order in φ − φ̂, whose posterior mean is about 0:
//     it is not seen there.)
func TestGroupGibbsNegBinMoments(t *testing.T) {
	if testing.Short() {
		t.Skip("moments: NUTS reference and GroupGibbs")
	}
	ctx := context.Background()
	type config struct {
		name string
		kit  mlNegBin
		seed uint64
	}
	for _, cf := range []config{{"N = 1000", mlNegBin{n: 1000, groups: 6}, 25}, {"N = 150", mlNegBin{n: 150, groups: 6}, 27}} {
		kit := cf.kit
		rng := rand.New(rand.NewPCG(23, 24))
		theta := kit.truth(rng)
		d := kit.dim()
		theta[0], theta[1], theta[d-1] = 0.5, 0.3, math.Log(1.5)
		build := func(m mlNegBin) *exactmh.Posterior {
			p, err := m.build(rand.New(rand.NewPCG(cf.seed, cf.seed+1)), theta)
			if err != nil {
				t.Fatal(err)
			}
			return p
		}
		p := build(kit)
		pb, err := negBinProblem(p)
		if err != nil {
			t.Fatal(err)
		}
		run := func(p *exactmh.Posterior, k exactmh.Kernel, seed uint64) *exactmh.Result {
			r, err := exactmh.Sample(ctx, p, k, &exactmh.Settings{Chains: 4, Warmup: 300, Draws: 1500, Seed: seed, Init: pb.Mode})
			if err != nil {
				t.Fatal(err)
			}
			return r
		}
		ref := run(p, &exactmh.NUTS{}, 1)
		type row struct {
			name string
			p    *exactmh.Posterior
			k    exactmh.Kernel
		}
		var pass, mutants []row
		gg := multilevel.GroupGibbs{Center: pb.Mode}
		if kit.n == 1000 {
			every3 := gg
			every3.ShapeEvery = 3
			// The shape test's region widened, so that its minibatch test
			// decides the updates (the default region sends most of them
			// to the full pass at this N), around the centre and around
			// centres off by 1 in group 0's intercept (block 1, about 40 %
			// of the data; its sd about 0.05) and by 0.4 in the fixed
			// intercept, where the linear predictors' distance to the
			// centre's makes the cross terms and the remainders large.
			wide := multilevel.NegBinRegion(gg, 10, 1)
			shifted := append([]float64(nil), pb.Mode...)
			shifted[2]++
			wideOff := multilevel.NegBinRegion(multilevel.GroupGibbs{Center: shifted}, 10, 1)
			shifted0 := append([]float64(nil), pb.Mode...)
			shifted0[0] += 0.4
			wideOff0 := multilevel.NegBinRegion(multilevel.GroupGibbs{Center: shifted0}, 10, 1)
			pass = []row{{"GroupGibbs", p, gg}, {"GroupGibbs, the shape every third sweep", p, every3},
				{"GroupGibbs, the shape test's region wide", p, wide},
				{"GroupGibbs, the region wide, around a centre off by 1 in group 0's intercept", p, wideOff},
				{"GroupGibbs, the region wide, around a centre off by 0.4 in the intercept", p, wideOff0}}
			mutants = []row{{"shape update without its Hastings ratio", p, multilevel.NegBinNoQ(gg)},
				{"the shape test's bound dropping a group (group 0 off centre)", p, multilevel.NegBinDropBlock(wideOff)},
				{"the shape test without its cross terms (intercept off centre)", p, multilevel.NegBinNoCross(wideOff0)}}
			def, err := exactmh.Sample(ctx, p, nil, &exactmh.Settings{Chains: 2, Warmup: 100, Draws: 100, Seed: 5})
			if err != nil {
				t.Fatal(err)
			}
			if def.Choice == nil || def.Choice.Name != "GroupGibbs" {
				t.Errorf("the default chose %v, want GroupGibbs", def.Choice)
			}
		} else {
			off := append([]float64(nil), pb.Mode...)
			off[d-1] += math.Log(4)
			gOff := multilevel.GroupGibbs{Center: off}
			pass = []row{{"GroupGibbs", p, gg}, {"GroupGibbs around the centre of shape 4φ̂", p, gOff}}
			mutants = []row{
				{"sums stale after a shape move (centre of shape 4φ̂)", p, multilevel.NegBinStale(gOff)},
				{"the shape prior's Jacobian dropped", build(mlNegBin{n: kit.n, groups: kit.groups, dropJacobian: true}), gg},
			}
		}
		for _, r := range pass {
			res := run(r.p, r.k, 3)
			z, j := gaussZ(res, ref)
			t.Logf("%s, %s: largest two-sample |z| %.2f (θ%d) against NUTS; mean batch %.1f of N = %d; shape accept %.3f, by the full pass %.3f", cf.name, r.name, z, j, res.Summary().MeanBatch, kit.n, res.Chains[0].Params["shape_accept"], res.Chains[0].Params["shape_full"])
			if !(math.Abs(z) < 4.5) {
				t.Errorf("%s, %s: moments off NUTS's: z = %.2f (θ%d)", cf.name, r.name, z, j)
			}
		}
		for _, mut := range mutants {
			res := run(mut.p, mut.k, 3)
			if z, j := gaussZ(res, ref); math.Abs(z) < 4.5 {
				t.Errorf("%s: mutant %q passes: z = %.2f (θ%d)", cf.name, mut.name, z, j)
			} else {
				t.Logf("%s: mutant %q caught: z = %.1f (θ%d)", cf.name, mut.name, z, j)
			}
		}
	}
}

// TestGroupGibbsNegBinSBC is simulation-based calibration of GroupGibbs's
// negative binomial sweep on the kit (N = 200 rows in 6 groups) with
// every parameter unknown — β, each group's correlated intercept and
// slope, log τ, the correlation, log φ: ranks uniform at Bonferroni level
// 10⁻³ over 100 replicates; the default and the shape test's region wide.
func TestGroupGibbsNegBinSBC(t *testing.T) {
	if testing.Short() {
		t.Skip("SBC: 100 replicates")
	}
	for _, wide := range []bool{false, true} {
		kern := func(pb mcmctest.Problem) exactmh.Kernel {
			k := multilevel.GroupGibbs{Center: pb.Mode}
			if wide {
				// The shape test deciding (at N = 200 its default region
				// sends most updates to the full pass).
				return multilevel.NegBinRegion(k, 10, 1)
			}
			return k
		}
		r, err := mcmctest.SBC(mlNegBin{n: 200, groups: 6}, kern, &mcmctest.SBCOptions{Replicates: 100, Seed: 9, MaxThin: 200})
		if err != nil {
			t.Fatal(err)
		}
		t.Logf("the shape test's region wide %t: SBC p-values %.3g (thin %d)", wide, r.P, r.Thin)
		if r.Reject(1e-3) {
			t.Errorf("the shape test's region wide %t: SBC rejects uniformity: p = %.3g", wide, r.P)
		}
	}
}

// TestNegBinPhiDerivs checks the negative binomial sweep's derivatives
// in φ against central differences of the NB2 loss's f′ = (y + φ)σ − y,
// f″ = (y + φ)σ(1 − σ) (σ = μ/(φ + μ)), the bounds on their second
// derivatives that setShape uses, |∂²_φf′| ≤ 8/27·(1/φ + y/φ²) and
// |∂²_φf″| ≤ (1/φ + y/φ²)/2, on a grid of (y, z, φ), and the shape test's
// derivatives of k(η, ℓ) = (y + e^ℓ)·log(1 + e^{η−ℓ}) at the centre
// against central differences.
func TestNegBinPhiDerivs(t *testing.T) {
	f := func(y, z, phi float64) (f1, f2 float64) {
		s := 1 / (1 + phi*math.Exp(-z))
		return (y+phi)*s - y, (y + phi) * s * (1 - s)
	}
	for _, y := range []float64{0, 1, 3, 20, 400} {
		for _, z := range []float64{-6, -2, -0.3, 0, 0.7, 2, 5} {
			for _, phi := range []float64{0.05, 0.5, 2, 30} {
				h := 1e-4 * phi
				a1, a2 := f(y, z, phi-h)
				b1, b2 := f(y, z, phi+h)
				d1, d2 := multilevel.NegBinPhiDerivs(y, z, phi)
				if math.Abs(d1-(b1-a1)/(2*h)) > 1e-5*(1+math.Abs(d1)) || math.Abs(d2-(b2-a2)/(2*h)) > 1e-5*(1+math.Abs(d2)) {
					t.Errorf("y %v, z %v, φ %v: ∂_φf′ %v, ∂_φf″ %v; differences %v, %v", y, z, phi, d1, d2, (b1-a1)/(2*h), (b2-a2)/(2*h))
				}
				p1, p2 := multilevel.NegBinPhiDerivs(y, z, phi-h)
				q1, q2 := multilevel.NegBinPhiDerivs(y, z, phi+h)
				s1, s2 := (q1-p1)/(2*h), (q2-p2)/(2*h)
				c := 1/phi + y/(phi*phi)
				if math.Abs(s1) > 8.0/27*c*(1+1e-6) || math.Abs(s2) > c/2*(1+1e-6) {
					t.Errorf("y %v, z %v, φ %v: ∂²_φf′ %v (bound %v), ∂²_φf″ %v (bound %v)", y, z, phi, s1, 8.0/27*c, s2, c/2)
				}
			}
		}
	}
	k := func(y, eta, l float64) float64 {
		s := eta - l
		sp := math.Log1p(math.Exp(s))
		if s > 30 {
			sp = s
		}
		return (y + math.Exp(l)) * sp
	}
	for _, y := range []float64{0, 2, 50} {
		for _, z := range []float64{-3, 0.4, 3} {
			for _, l := range []float64{-1, 0.7, 2} {
				kl, kel, kll, keel, kell, klll := multilevel.NegBinKDerivs(y, math.Exp(z), math.Exp(l))
				const h = 1e-3
				// Derivatives of k_ℓ by central differences of k.
				dl := func(e, ll float64) float64 { return (k(y, e, ll+h) - k(y, e, ll-h)) / (2 * h) }
				want := []float64{dl(z, l),
					(dl(z+h, l) - dl(z-h, l)) / (2 * h),
					(dl(z, l+h) - dl(z, l-h)) / (2 * h),
					(dl(z+h, l) - 2*dl(z, l) + dl(z-h, l)) / (h * h),
					(dl(z+h, l+h) - dl(z+h, l-h) - dl(z-h, l+h) + dl(z-h, l-h)) / (4 * h * h),
					(dl(z, l+h) - 2*dl(z, l) + dl(z, l-h)) / (h * h)}
				got := []float64{kl, kel, kll, keel, kell, klll}
				for q := range got {
					if math.Abs(got[q]-want[q]) > 1e-3*(1+math.Abs(want[q])) {
						t.Errorf("y %v, ẑ %v, ℓ̂ %v: derivative %d of k is %v, differences %v", y, z, l, q, got[q], want[q])
					}
				}
			}
		}
	}
}

// TestNegBinShapeBound checks the shape test on the kit (N = 1000, six
// groups, the centre DefaultStart's, the region widened to rEta = 10,
// rL = 1) at w the centre's plus noise of sd 0.02 and 0.1 and 20 pairs
// (ℓ, ℓ′) in the region: every datum's remainder difference within its
// bound c_i, Σ_ic_i equal to the thinning rate, and the control
// variate's Ṽ(ℓ′) − Ṽ(ℓ) plus Σ_iΔR_i equal to the conditional's
// V(ℓ′) − V(ℓ) from every datum. The mutants must fail: block 1 left out
// of the rate (NegBinDropBlock: Σ_ic_i ≠ rate) and the cross terms left
// out of the sums (NegBinNoCross: the sums ≠ Σ_ik̂_i).
func TestNegBinShapeBound(t *testing.T) {
	m := mlNegBin{n: 1000, groups: 6}
	_, pb, err := m.Draw(rand.New(rand.NewPCG(41, 42)))
	if err != nil {
		t.Fatal(err)
	}
	gg := multilevel.NegBinRegion(multilevel.GroupGibbs{Center: pb.Mode}, 10, 1)
	for _, scale := range []float64{0.02, 0.1} {
		ratio, rateErr, cvErr, reach, err := multilevel.NegBinShapeCheck(gg, pb.Posterior, pb.Mode, 7, scale, 1, 20)
		if err != nil {
			t.Fatal(err)
		}
		t.Logf("w noise %v: reach %.3g, largest |ΔR_i|/c_i %.3g, Σc_i vs rate %.2g, V vs Ṽ + ΣΔR %.2g", scale, reach, ratio, rateErr, cvErr)
		if !(reach <= 10) {
			t.Fatalf("w noise %v: reach %v outside the region", scale, reach)
		}
		if !(ratio <= 1) || !(rateErr < 1e-9) || !(cvErr < 1e-6) {
			t.Errorf("w noise %v: |ΔR_i|/c_i up to %v (want ≤ 1), Σc_i vs rate %v, V vs Ṽ + ΣΔR %v", scale, ratio, rateErr, cvErr)
		}
		_, rateErr, _, _, err = multilevel.NegBinShapeCheck(multilevel.NegBinDropBlock(gg), pb.Posterior, pb.Mode, 7, scale, 1, 20)
		if err != nil {
			t.Fatal(err)
		}
		if !(rateErr > 1e-3) {
			t.Errorf("w noise %v: mutant \"the bound dropping a group\" passes: Σc_i vs rate %v", scale, rateErr)
		}
		_, _, cvErr, _, err = multilevel.NegBinShapeCheck(multilevel.NegBinNoCross(gg), pb.Posterior, pb.Mode, 7, scale, 1, 20)
		if err != nil {
			t.Fatal(err)
		}
		if !(cvErr > 1e-3) {
			t.Errorf("w noise %v: mutant \"a wrong cross term\" passes: V vs Ṽ + ΣΔR %v", scale, cvErr)
		}
	}
}

// TestNegBinSums checks that the effects' control variate's sums at a
// shape φ ≠ φ̂ (g₀ + Δφ·g₁, H₀ + Δφ·H₁) equal the sums of the data's
// expansions there (negBinExpand), on the kit of TestNegBinShapeBound at
// ℓ̂ ± 0.3, and that the sums left at φ̂ (NegBinStale) do not.
func TestNegBinSums(t *testing.T) {
	m := mlNegBin{n: 1000, groups: 6}
	_, pb, err := m.Draw(rand.New(rand.NewPCG(41, 42)))
	if err != nil {
		t.Fatal(err)
	}
	gg := multilevel.GroupGibbs{Center: pb.Mode}
	lHat := pb.Mode[len(pb.Mode)-1]
	for _, dl := range []float64{-0.3, 0.3} {
		diff, err := multilevel.NegBinSumsCheck(gg, pb.Posterior, pb.Mode, lHat+dl)
		if err != nil {
			t.Fatal(err)
		}
		if !(diff < 1e-9) {
			t.Errorf("ℓ̂ %+v: the sums differ from the expansions' by %v (relative)", dl, diff)
		}
		diff, err = multilevel.NegBinSumsCheck(multilevel.NegBinStale(gg), pb.Posterior, pb.Mode, lHat+dl)
		if err != nil {
			t.Fatal(err)
		}
		if !(diff > 1e-3) {
			t.Errorf("ℓ̂ %+v: mutant \"the control variate's sums at the wrong shape\" passes: %v", dl, diff)
		}
	}
}

// TestNegBinMismatchBound runs the negative binomial sweep on the kit
// (N = 1000, six groups) around its centre and around centres whose shape
// is φ̂e^{±0.3} (so that the data's shape and the control variate's differ
// by about 30 % throughout), every datum of each updated block checked
// against its bound (NegBinCheckBound): 2 chains × 60 sweeps without a
// violation. The mutant with the mismatch left out of the bound (λ = 1,
// ε² = 0) must violate it around an off centre.
func TestNegBinMismatchBound(t *testing.T) {
	m := mlNegBin{n: 1000, groups: 6}
	_, pb, err := m.Draw(rand.New(rand.NewPCG(41, 42)))
	if err != nil {
		t.Fatal(err)
	}
	d := len(pb.Mode)
	run := func(k exactmh.Kernel) error {
		_, err := exactmh.Sample(context.Background(), pb.Posterior, k, &exactmh.Settings{Chains: 2, Warmup: 30, Draws: 30, Seed: 3, Init: pb.Mode})
		return err
	}
	for _, dl := range []float64{0, -0.3, 0.3} {
		c := append([]float64(nil), pb.Mode...)
		c[d-1] += dl
		k := multilevel.GroupGibbs{Center: c}
		if err := run(multilevel.NegBinCheckBound(k, false)); err != nil {
			t.Errorf("centre's shape φ̂e^%v: %v", dl, err)
		}
		if dl == 0 {
			continue
		}
		if err := run(multilevel.NegBinCheckBound(k, true)); err == nil {
			t.Errorf("centre's shape φ̂e^%v: mutant \"the mismatch unbounded\" passes", dl)
		} else {
			t.Logf("centre's shape φ̂e^%v: mutant \"the mismatch unbounded\" caught: %.200v", dl, err)
		}
	}
}
