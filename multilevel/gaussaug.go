// Copyright ©2026 The exactmh Authors. All rights reserved.
// Use of this source code is governed by a BSD-style
// license that can be found in the LICENSE file.

package multilevel

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"

	"github.com/exactmh/exactmh"
	"github.com/exactmh/exactmh/internal/polyagamma"
	"github.com/exactmh/exactmh/sparse"
)

// ProbitGLM is a SparseRowGLM that can say it is probit regression with
// unit weights, U_i = −log Φ((2y_i − 1)·η_i), y_i ∈ {0, 1}, η_i = x_iᵀw +
// o_i (model.SparseGLM of model.ProbitFamily): the model GroupGibbs's
// data-augmentation sweep samples (GroupGibbs.Augment; docs/multilevel.md,
// "Probit by augmentation").
type ProbitGLM interface {
	SparseRowGLM
	// Probit reports whether the energy is probit regression's with unit
	// weights.
	Probit() bool
	// Response returns y_i.
	Response(i int) float64
	// Offset returns o_i (0 without offsets).
	Offset(i int) float64
}

// probitOf returns the layout and energy of a probit multilevel model
// the augmentation samples: a ProbitGLM whose Probit is true under a
// prior that is a Layout of random-effect terms with a sparse Hessian,
// of the energy's dimension.
func probitOf(e exactmh.Energy, p exactmh.Prior) (Layout, ProbitGLM, bool) {
	pe, ok := e.(ProbitGLM)
	if !ok || !pe.Probit() {
		return nil, nil, false
	}
	lay, ok := p.(Layout)
	if !ok || lay.NumTerms() == 0 || len(lay.Blocks()) != e.Dim() {
		return nil, nil, false
	}
	if _, ok := p.(exactmh.SparseHessianer); !ok {
		return nil, nil, false
	}
	return lay, pe, true
}

// IsProbit reports whether p is a probit multilevel model GroupGibbs's
// data-augmentation sweep samples (GroupGibbs.Augment): probit regression
// with unit weights (ProbitGLM) under a multilevel prior, untempered.
func IsProbit(p *exactmh.Posterior) bool {
	_, _, ok := probitOf(p.Energy, p.Prior)
	return ok && (p.Beta == 0 || p.Beta == 1)
}

// augHooks are the test hooks of the augmentation sweep (mutants, set
// from export tests; zero in every real kernel).
type augHooks struct {
	// flipSide truncates z_i to the wrong side of 0 (z_i ≤ 0 where y_i =
	// 1 and z_i > 0 where y_i = 0).
	flipSide bool
	// asisNoPrior draws τ in the interweaving step from the latent
	// data's Gaussian factor alone and keeps it (the prior on τ dropped);
	// asisCentred takes its prior ratio as the centred form's, without
	// the (G − 1)·ℓ of the non-centred one.
	asisNoPrior, asisCentred bool
	// corrAsisOff leaves the correlated factors' components out of the
	// interweaving step (exact: their scales then move by drawCorr alone).
	corrAsisOff bool
	// corrNCOff and corrNCJacobianOff1: gaussHooks', for the
	// augmentation sweep.
	corrNCOff, corrNCJacobianOff1 bool
	// staleB draws the location vector from b = Xᵀ(z − o) of the previous
	// sweep's latent variables.
	staleB bool
	// pxNoJacobian leaves the Jacobian g^{len(eff)} of the location
	// vector's scaling out of the expanded move's target (g^N alone).
	pxNoJacobian bool
	// pxNoShape leaves e^{G·s} out of the expanded move's ratio, the part
	// of the effects' priors its proposal's shape K holds.
	pxNoShape bool
	// nestOff makes no nested scale move (nestScale; exact, not a
	// mutant); nestNoJacobian leaves its e^{G_p·s} out of the target;
	// nestNoShift scales the parent's effects without shifting the
	// children's (every η it touches moved, the data unread).
	nestOff, nestNoJacobian, nestNoShift bool
	// pxOff makes no expanded move.
	pxOff bool
	// marginalOff makes no marginal scale move; marginalNoJacobian
	// leaves the term's G·ℓ out of its target (the effects' prior taken
	// at u = τũ without the Jacobian τ^G of the non-centred form).
	marginalOff, marginalNoJacobian bool
	// attenuationOff makes the marginal scale move's k_t 0 (the
	// non-centred update of τ_t alone; exact, not a mutant).
	attenuationOff bool
	// collapseOff moves every level's effect in the marginal scale move
	// (no level integrated out; exact, not a mutant). collapseNoPrior
	// leaves the integrated levels' |S|·ℓ out of the collapsed target;
	// collapseJacobian counts them among the scaled coordinates (G_t
	// instead of G_t − |S|); collapseLatentVar redraws their effects with
	// variance τ² instead of τ²/(1 + c²τ²).
	collapseOff, collapseNoPrior, collapseJacobian, collapseLatentVar bool
	// newtonOff makes the marginal scale move by slice sampling in s
	// (sliceStep) instead of the Newton proposal (exact, not a mutant);
	// newtonNoReverse leaves the reverse proposal's density out of the
	// Newton proposal's ratio.
	newtonOff, newtonNoReverse bool
	// halfOff makes every term's marginal scale move every sweep (halfRate
	// off; exact, not a mutant).
	halfOff bool
	// levelOff makes no small-level draws (levelDraw; exact, not a
	// mutant); levelNoRatio keeps every proposal (its Metropolis–Hastings
	// ratio over the level's other data dropped).
	levelOff, levelNoRatio bool
	// cacheStale leaves the collapsed data's entries of the marginal
	// scale moves' per-datum cache (augChain.cur) valid after their
	// effects are redrawn: the next term's move reads their energies at
	// the integrated η.
	cacheStale bool
	// phiCell evaluates −log Φ in the marginal scale moves and levelDraw
	// from the Taylor polynomial of the node 32 cells above the nearest
	// (negLogPhiCell; its d kept): about −log Φ(t + ¼).
	phiCell bool
	// The logistic sweep's mutants (gaussaug_logit.go): kappaNoHalf
	// takes κ_i = n_i·y_i, without the −n_i/2; omegaStale draws ω_i at
	// the linear predictors of the chain's start, never refreshed (as if
	// from η the marginal scale moves keep, which the logistic sweep does
	// not make); trialsOne draws ω_i ~ PG(1, η_i) whatever
	// the trials n_i; omegaLag refills M's pairs of row i with row
	// i−1's ω_i (b with row i's).
	kappaNoHalf, omegaStale, trialsOne, omegaLag bool
	// The integrated scale move's mutants (gaussaug_integrate.go):
	// integrateNoLogDet leaves ½log det P out of the proposal's densities;
	// integrateNoQ leaves the forward proposal's density N(w′; m(τ′),
	// P(τ′)⁻¹) out of the ratio (half its log q ratio dropped).
	integrateNoLogDet, integrateNoQ bool
	// The logistic level moves' (gaussaug_level.go): levelMHOff makes
	// none and levelMHAll moves every level of a term of small levels,
	// whatever its share of successes (both exact, not mutants); levelNoQ
	// leaves the proposal's densities out of the ratio; levelDropDatum
	// leaves each level's last datum out of its likelihood.
	levelMHOff, levelMHAll, levelNoQ, levelDropDatum bool
	// refillPairs makes drawOmega refill M by the pairs (pairTab) where
	// it would by the grouped rows (groupTab; exact, not a mutant).
	refillPairs bool
	// The probit sweep's ablation switches (exact, not mutants; the
	// measurements of figures/bench/multilevel_real_guimmun5.txt):
	// gibbsTwice makes updates 1–4 twice a sweep, asisTwice the
	// interweaving steps, marginalTwice the marginal scale moves and
	// small-level draws, nestTwice the nested scale moves; asisOff and
	// tauOff make no interweaving step and no centred τ update.
	gibbsTwice, asisTwice, marginalTwice, nestTwice, asisOff, tauOff bool
	// pairsOff integrates no two-datum level out of the Newton marginal
	// scale move (levelDraw updates them; exact, not a mutant). The
	// mutants of the pairs' integration: pairRhoSign takes the latent
	// correlation ρ with the wrong sign, pairProduct takes Φ₂ as the
	// product of its marginals (ρ = 0), pairRedrawOne redraws a pair's
	// effect given its first datum alone.
	pairsOff, pairRhoSign, pairProduct, pairRedrawOne bool
	// zwTwice draws z and then w a second time after update 2, at the
	// same scales (P's factor kept, only the mean solved anew; with a
	// term eliminated, S refactored).
	zwTwice bool
	// halfMask makes the marginal scale move of each term k whose bit
	// 1<<k is set in a random half of the sweeps (asisTerm.half; exact,
	// not a mutant).
	halfMask uint
	// schurOff draws update 1 through P's factor where it would
	// eliminate a term's levels (exact, not a mutant); schurCond is the
	// mutant that draws the eliminated effects without their dependence
	// on the rest (gaussgibbs_schur.go).
	schurOff, schurCond bool
	// gibbsOne makes one round of updates 1–4 a sweep where gibbsRounds
	// would make two (exact, not a mutant).
	gibbsOne bool
	// The Laplace independence move's mutants (gaussaug_indep.go).
	indep indepHooks
}

// augRows are the rows of a probit model copied into compressed sparse
// row form, read once a sweep.
type augRows struct {
	ptr []int
	col []int32
	val []float64
}

// gram returns XᵀΩX (the lower triangle's pattern and values), Ω =
// diag(ω) (nil: the identity). It is M of the Gaussian model given the
// latent variables: fixed for the probit augmentation's unit variances,
// and the per-sweep precision of a scale-mixture augmentation whose
// latent variances 1/ω_i change.
func (r *augRows) gram(d int, omega []float64) (*sparse.SymCSC, error) {
	tr := sparse.NewTriplet(d)
	for j := range d {
		tr.Add(j, j, 0) // every coordinate on the diagonal: a column no datum holds is the prior's
	}
	for i := range len(r.ptr) - 1 {
		w := 1.0
		if omega != nil {
			w = omega[i]
		}
		lo, hi := r.ptr[i], r.ptr[i+1]
		for a := lo; a < hi; a++ {
			for b := lo; b <= a; b++ {
				tr.Add(int(r.col[a]), int(r.col[b]), w*r.val[a]*r.val[b])
			}
		}
	}
	return tr.SymCSC()
}

// asisTerm is an independent random term's interweaving step: its term,
// and c, the curvature −∂²_τ log p(τ) of a Gaussian factor
// e^{−cτ²/2} of its scale's prior that the step's proposal holds.
type asisTerm struct {
	gaussTerm
	c float64
	// k is the exponent of the other coordinates' scaling in the
	// marginal scale move (marginalScale): τ_t²/(1 + Σ τ²) at the centre,
	// then at warmup's means of τ² (SetWarmup); width is its slice width
	// in s, and the Newton proposal's sd where h″ ≥ 0 (marginalWidth,
	// then 3 times warmup's mean |s| of the move).
	k, width float64
	// The term's single-datum levels (its collapsed levels, S): level
	// q's coordinate sCol[q], its one datum sRow[q] with the value
	// sVal[q] in that coordinate's column; sOf[i] is q for datum i of a
	// collapsed level, −1 otherwise (nil: none).
	sRow, sCol []int32
	sVal       []float64
	sOf        []int32
	// The term's two-datum levels the Newton marginal scale move
	// integrates out as well (its collapsed pairs, P): pair q's
	// coordinate pCol[q], its data pRow[2q], pRow[2q+1] with the values
	// pVal[2q], pVal[2q+1] in that column; pOf[i] is q for a datum of a
	// collapsed pair, −1 otherwise (nil: none).
	pRow, pCol []int32
	pVal       []float64
	pOf        []int32
	// The term's levels of 2 … smallLevel data (levelDraw): level q's
	// coordinate lCol[q], its data lRow[lPtr[q]:lPtr[q+1]] with the
	// values lVal there in that coordinate's column.
	lPtr       []int32
	lRow, lCol []int32
	lVal       []float64
	lN, lT     int64 // levelDraw's proposals kept and made
	mN, mT     int64 // the marginal scale move's Newton proposals kept and made
	// half makes the term's marginal scale move in a random half of the
	// sweeps (halfRate).
	half bool
	// The rows of M at the term's levels, both triangles: level g's
	// entries M_jk, j its coordinate, are M's values at mPos[q] with k =
	// mCol[q], q in [mRow[g], mRow[g+1]) (positions, not values: the
	// logistic sweep refills M), those of column j itself from mSplit[g]
	// on. interweave reads (Mw)_j from them, summed in MulVec's order
	// (the same value to the bit).
	mRow, mSplit []int32
	mCol, mPos   []int32
	// in[j] reports has(j), coordinate j one of the term's effects, a
	// lookup for the probit marginal scale move's tests of every entry
	// of X and every location coordinate (has divides; nil on a logistic
	// model).
	in []bool
	// The integrated scale move (integrate): its rounds a sweep, its
	// random-walk step in log τ and the proposals warmup adapted it over
	// (adaptStep), and its proposals kept and made.
	rounds int
	cw     float64
	cA     float64
	cN, cT int64
}

// augChain is GroupGibbs's data-augmentation sweep on a probit multilevel
// model (Albert and Chib, JASA 88, 1993): with latent z_i ~ N(η_i, 1),
// y_i = 1{z_i > 0}, the model given z is the Gaussian multilevel model
// with σ = 1 known, M = XᵀX fixed and b = Xᵀ(z − o). One transition:
//
//  1. z | w: each z_i from N(η_i, 1) truncated to z_i > 0 (y_i = 1) or
//     z_i ≤ 0 (y_i = 0) by truncAbove, exact in any tail; b is summed in
//     the same pass, O(nnz X);
//  2. w = (β, u) | z, τ jointly, the Gaussian sweep's update 1
//     (gaussChain.drawW: the sparse Cholesky factor of P = M +
//     diag(τ⁻²) + H_F, its pattern analysed once);
//  3. each log τ | u, the Gaussian sweep's update 3 (centred), and the
//     correlated factors' slice updates;
//  4. each independent term's τ again in the non-centred form
//     (interweave; Yu and Meng, JCGS 20, 2011): ũ = u/τ held, τ drawn
//     from its conditional given ũ, z and the rest, then u = τũ.
//
// Then, once z is spent, the marginal scale moves and the small levels'
// draws given y (gaussaug_marginal.go), and the nested scale moves
// (nestScale; gaussaug_nest.go), data-free.
//
// z is drawn afresh every sweep and kept nowhere: the chain is a Markov
// chain on θ alone, each update leaving π(θ)·p(z | θ) invariant. Proven
// by TestAugmentMoments (against NUTS) and TestAugmentSBC, with the
// mutants of augHooks caught.
//
// On a logistic model (logit; gaussaug_logit.go) update 1 draws
// Pólya–Gamma ω_i ~ PG(n_i, η_i) instead of z (drawOmega), which makes
// the model given ω Gaussian with M = XᵀΩX and b = Xᵀ(κ − Ωo), both new
// each sweep; updates 2 and 4 read only M and b and are the same; the
// expanded move (no scale group keeps the Pólya–Gamma form) and the
// marginal scale moves (no ESS for their cost on the real suite) are not
// made. Proven by TestLogitMoments and TestLogitSBC.
//
// Between updates 1 and 2 (either model), the integrated scale moves
// (integrate; gaussaug_integrate.go): each log τ_t with w redrawn from
// update 2's conditional at the proposed τ_t, by Metropolis–Hastings —
// τ with every location coordinate integrated out — in asisTerm.rounds
// rounds a sweep (by default, on a logistic model, as many as are cheap
// against the Pólya–Gamma draws by a counted rule, and one for a
// nesting's parent: integrateDefault; none on a probit one).
type augChain struct {
	*gaussChain
	ah    augHooks
	rows  augRows
	y     []bool // y_i = 1
	off   []float64
	bNext []float64 // the staleB mutant's next b
	asis  []asisTerm
	// asisCorr: each correlated factor's components, one a term of the
	// factor's levels (stride q), for the interweaving step alone
	// (startAugment; the other moves of asis assume independent effects).
	asisCorr []asisTerm
	asisN    int64 // interweaving draws accepted (asis_accept in Params)
	asisT    int64 // and made
	// The parameter-expanded scale move (expand): whether it applies (no
	// offsets), the log scales it shifts, ‖z − o‖² of the sweep's z, and
	// its counts.
	px    bool
	pxLog []int
	pxG   int // the independent terms' effects, G = Σ_t G_t
	zz    float64
	pxN   int64
	pxT   int64
	// The marginal scale moves (marginalScale): the energy, the linear
	// predictors η and a term's a = Z_kũ_k, and the slice width in log τ.
	pe        augGLM
	eta, a, r []float64
	// The logistic sweep (logit; gaussaug_logit.go): κ_i = n_i(y_i − ½),
	// the trials n_i (nil: every n_i = 1), ω_i's positions in M's values
	// (pairPos: per row, its pairs of entries in gram's order), η at the
	// start (the omegaStale mutant's), and the latent variance
	// of the link (1 probit, π²/3 logit) that k_t's attenuation adds to
	// Σ τ².
	logit     bool
	kappa     []float64
	trials    []int
	pairPos   pairTab
	etaPrev   []float64
	latentVar float64
	// The grouped refill (groupTab; nil: by pairPos): the rows' patterns,
	// the accumulators and bases, b = Xᵀκ (no offsets) and the sweep's η.
	groups                  *groupTab
	acc, base, bKappa, etaG []float64
	// pg is the Pólya–Gamma draws' stream, seeded from the sweep's rng
	// at each drawOmega (polyagamma.Source).
	pg *polyagamma.Source
	// The integrated scale moves (gaussaug_integrate.go): the most rounds
	// a term makes a sweep (0: none), the proposal's factor and mean (swapped with gaussChain's
	// chol and mean when kept), a draw's deviation and a zero vector
	// over eff.
	integrateN int
	// gibbsN is the rounds of updates 1–4 a sweep (gibbsRounds).
	gibbsN      int
	chol2       *sparse.Cholesky
	mean2       []float64
	dz, zeroEff []float64
	// The logistic level moves (levelMH; gaussaug_level.go), one set per
	// term they move.
	levels []levelSet
	// The Laplace independence move (gaussaug_indep.go; nil: none).
	ind *indepMove
	// pairErr is set by drawPairs where a pair's effect was not redrawn
	// within pairTries; Step returns it.
	pairErr error
	// order is the order of the marginal scale moves: the terms with
	// collapsed levels first, whose moves leave the state's energy known
	// (uCur) for the next term's.
	order []int
	// The nested scale moves (nestScale; probit), one per nested pair of
	// intercept terms.
	nest []nestPair
	uCur float64 // the energy at θ where the last marginal move left it (NaN: unknown)
	// The Newton marginal scale moves' per-datum energies and derivatives
	// at the state (cur, valid where curOK and its l is not NaN) and at
	// the proposal (prop); probit only (lossCache).
	cur, prop lossCache
	curOK     bool
	// bvn is the collapsed pairs' Φ₂ (pairLoss), its nodes' sines kept.
	bvn bvnTable
	// Warmup (SetWarmup): the sums of τ² per scale of pxLog over nWarm
	// sweeps, and of |s| per marginal move over absN of its moves, from
	// which k_t and each term's slice width are set until warmup ends.
	warm   bool
	nWarm  float64
	tauSum []float64
	absSum []float64
	absN   []float64
}

// startAugment returns the augmentation sweep's chain on the probit
// multilevel model (lay, pe) — or, with logit, the logistic one
// (LogitGLM) — at θ0, the fixed effects' prior expanded at centre (θ0
// when nil), as gaussChain's.
//
// integrate sets the integrated scale moves' rounds a sweep
// (GroupGibbs.IntegratedScale): 0 integrateDefault's on a logistic model
// and none on a probit one, n > 0 n for every independent term, < 0
// none.
func startAugment(name string, t *exactmh.Target, lay Layout, pe augGLM, logit bool, theta0, centre []float64, integrate int, hooks augHooks) (*augChain, error) {
	if t.Beta() != 1 {
		return nil, fmt.Errorf("%s: Augment samples the untempered model; β = %v", name, t.Beta())
	}
	if integrate > integrateMaxRounds {
		return nil, fmt.Errorf("%s: IntegratedScale = %d rounds of integrated scale moves a sweep, each a factorisation of P per term: want at most %d", name, integrate, integrateMaxRounds)
	}
	n, d := pe.Len(), pe.Dim()
	c := &augChain{ah: hooks, y: make([]bool, n), off: make([]float64, n), pe: pe, eta: make([]float64, n), a: make([]float64, n), r: make([]float64, n), logit: logit, latentVar: 1}
	if logit {
		if err := c.startLogit(name, pe.(LogitGLM)); err != nil {
			return nil, err
		}
	}
	sh, err := shared(t, "multilevel/augment/rows", func() (*augShared, error) { return newAugShared(pe, logit) })
	if err != nil {
		return nil, fmt.Errorf("%s: XᵀX: %w", name, err)
	}
	c.rows = sh.rows
	for i := range n {
		c.off[i] = pe.Offset(i)
		if logit {
			continue
		}
		switch y := pe.Response(i); y {
		case 0, 1:
			c.y[i] = y == 1
		default:
			return nil, fmt.Errorf("%s: probit label y[%d] = %v, want 0 or 1", name, i, y)
		}
	}
	// M's pattern is the shared one; its values the chain's own (the
	// logistic sweep writes XᵀΩX into them).
	m := &sparse.SymCSC{N: sh.m.N, ColPtr: sh.m.ColPtr, RowIdx: sh.m.RowIdx, Val: slices.Clone(sh.m.Val)}
	b := make([]float64, d)
	g, err := newGaussChain(name, t, lay, t.Prior(), m, b, true, theta0, centre, gaussHooks{corrNCOff: hooks.corrNCOff, corrNCJacobianOff1: hooks.corrNCJacobianOff1, termNCOff: true})
	if err != nil {
		return nil, err
	}
	c.gaussChain = g
	if logit {
		c.startRefill(sh, m)
		if hooks.omegaStale {
			c.etaPrev = make([]float64, n)
			c.linearPredictors()
			copy(c.etaPrev, c.eta)
		}
	}
	if hooks.staleB {
		c.bNext = make([]float64, d)
		c.sumB(c.theta, b) // the first sweep's stale b: the latent data's means
	}
	for _, tm := range g.terms {
		c.asis = append(c.asis, asisTerm{gaussTerm: tm, c: c.priorCurvature(tm)})
		c.asis[len(c.asis)-1].rowsOfM(m)
		c.pxLog = append(c.pxLog, tm.logTau)
		c.pxG += tm.levels
	}
	for _, cf := range g.corr {
		c.pxLog = append(c.pxLog, cf.logTau...)
		if hooks.corrAsisOff {
			continue
		}
		// Component k of a correlated factor interweaves as a term does:
		// with ũ_gk = u_gk/τ_k held, ũ_g ~ N(0, Ω) has no τ_k in it, the
		// Jacobian τ_k^G of u_·k = τ_kũ_·k cancels the G factors 1/τ_k of
		// u_g's N(0, DΩD), and the rest of interweave's argument is
		// unchanged (the correlation coordinates and the other components
		// held).
		for k := range cf.q {
			tm := gaussTerm{start: cf.start + k, stride: cf.q, levels: cf.levels, logTau: cf.logTau[k]}
			c.asisCorr = append(c.asisCorr, asisTerm{gaussTerm: tm, c: c.priorCurvature(tm)})
			c.asisCorr[len(c.asisCorr)-1].rowsOfM(m)
		}
	}
	v := c.latentVar // the latent variance 1 + Σ τ² (π²/3 + Σ τ²) at the centre
	for _, j := range c.pxLog {
		v += math.Exp(2 * c.centre[j])
	}
	for k := range c.asis {
		c.asis[k].width = marginalWidth
		if !logit {
			a := &c.asis[k]
			a.in = make([]bool, d)
			for g := range a.levels {
				a.in[a.start+g*a.stride] = true
			}
		}
		if !hooks.attenuationOff {
			c.asis[k].k = math.Exp(2*c.centre[c.asis[k].logTau]) / v
		}
	}
	if !logit {
		for k := range c.asis {
			c.asis[k].levelsBySize(&c.rows, n, !hooks.collapseOff, !hooks.levelOff, !hooks.collapseOff && !hooks.pairsOff && !hooks.newtonOff)
		}
	}
	if !logit && !hooks.nestOff {
		c.startNest()
	}
	if !logit {
		c.cur, c.prop = newLossCache(n), newLossCache(n)
	}
	if logit && !hooks.levelMHOff {
		c.startLevels()
	}
	for k := range c.asis {
		if len(c.asis[k].sRow)+len(c.asis[k].pCol) > 0 {
			c.order = append(c.order, k)
		}
	}
	for k := range c.asis {
		if len(c.asis[k].sRow)+len(c.asis[k].pCol) == 0 {
			c.order = append(c.order, k)
		}
	}
	c.halfRate(hooks.halfOff || !hooks.newtonOff)
	for k := range c.asis {
		c.asis[k].half = c.asis[k].half || hooks.halfMask&(1<<k) != 0
	}
	c.tauSum, c.absSum, c.absN = make([]float64, len(c.pxLog)), make([]float64, len(c.asis)), make([]float64, len(c.asis))
	c.px = !logit && !hooks.pxOff && !slices.ContainsFunc(c.off, func(o float64) bool { return o != 0 })
	switch {
	case integrate > 0:
		for k := range c.asis {
			c.asis[k].rounds = integrate
		}
	case integrate == 0 && logit:
		c.integrateDefault(n, logitFlopsPerDatum)
	}
	for _, a := range c.asis {
		c.integrateN = max(c.integrateN, a.rounds)
	}
	if c.integrateN > 0 {
		if c.chol2, err = c.chol.Symbolic().Factor(c.pv); err != nil {
			return nil, fmt.Errorf("%s: %w", name, err)
		}
		ne := len(c.eff)
		c.mean2, c.dz, c.zeroEff = make([]float64, ne), make([]float64, ne), make([]float64, ne)
		for k := range c.asis {
			c.asis[k].cw = integrateWidth
		}
	} else {
		c.integrateN = 0
	}
	// The probit augmentation's M is fixed: update 1 may eliminate a
	// term's levels (gaussgibbs_schur.go).
	if !logit && !hooks.schurOff {
		if err := c.startSchur(); err != nil {
			return nil, fmt.Errorf("%s: %w", name, err)
		}
		if c.schur != nil {
			c.schur.noCond = hooks.schurCond
		}
	}
	c.gibbsN = gibbsRounds(c.schur != nil && !hooks.gibbsOne)
	return c, nil
}

// gibbsRounds returns the rounds of updates 1–4 a sweep makes: two where
// update 1 eliminates a term's small levels (schur), one otherwise. There
// the rounds cost less than the marginal scale moves that follow them
// (whose Newton proposals read every datum, the small levels' through Φ
// and Φ₂), and a second round moves the fixed effects, which the latent
// data hold back, about as far again: more ESS than it costs CPU on
// guimmun (two rounds, "gibbs-2", against one in §4 of
// figures/bench/multilevel_real_schur.txt). Making updates 1–4 twice is a
// composition of π-invariant kernels: exact.
func gibbsRounds(eliminated bool) int {
	if eliminated {
		return 2
	}
	return 1
}

// augShared is what every augmentation chain of a run reads and none
// writes, built once per exactmh.Target (Target.Shared) for the automatic
// default's counts and every chain: the rows in compressed sparse row
// form, M = XᵀX (its pattern, which every chain's M and P keep), and on a
// logistic model the positions of each row's pairs in M's values
// (pairPos) or the grouped rows (groups; refillGroups).
type augShared struct {
	rows    augRows
	m       *sparse.SymCSC
	pairPos pairTab
	groups  *groupTab
}

// newAugShared returns pe's augShared: the rows' nonzero entries, XᵀX
// (augRows.gram) and, logit, the pairs' positions (pairs).
func newAugShared(pe augGLM, logit bool) (*augShared, error) {
	n, d := pe.Len(), pe.Dim()
	sh := &augShared{}
	sh.rows.ptr = make([]int, n+1)
	var cols []int32
	var vals []float64
	for i := range n {
		cols, vals = pe.SparseRow(i, cols[:0], vals[:0])
		for k, j := range cols {
			if vals[k] != 0 {
				sh.rows.col = append(sh.rows.col, j)
				sh.rows.val = append(sh.rows.val, vals[k])
			}
		}
		sh.rows.ptr[i+1] = len(sh.rows.col)
	}
	var err error
	if sh.m, err = sh.rows.gram(d, nil); err != nil {
		return nil, err
	}
	if logit {
		if nv := len(sh.m.Val); nv > math.MaxInt32 {
			return nil, fmt.Errorf("Pólya–Gamma sweep: XᵀX has %d stored entries, above the %d its refill table indexes", nv, math.MaxInt32)
		}
		sh.groups = refillGroups(pe, &sh.rows, sh.m)
		if sh.groups == nil {
			sh.pairPos = pairs(&sh.rows, sh.m)
		}
	}
	return sh, nil
}

// sumB sets b = Xᵀ(η − o) at θ's w: b of latent data at their means.
func (c *augChain) sumB(theta, b []float64) {
	clear(b)
	for i := range c.off {
		lo, hi := c.rows.ptr[i], c.rows.ptr[i+1]
		var eta float64
		for k := lo; k < hi; k++ {
			eta += c.rows.val[k] * theta[c.rows.col[k]]
		}
		for k := lo; k < hi; k++ {
			b[c.rows.col[k]] += c.rows.val[k] * eta
		}
	}
}

// priorCurvature returns c ≥ 0 of the Gaussian factor e^{−cτ²/2} the
// interweaving proposal of term tm takes from its scale's prior p(τ):
// 2(f(1) − f(2))/3 for f(τ) = log p(τ) up to a constant, exactly 1/s²
// for a half-normal(s) prior (whose interweaving draws are then always
// kept), evaluated at the centre with the term's effects at 0 (so that
// a chain restarted anywhere takes the same c). The draws are exact for
// any c: it only sets how much of the prior the proposal holds.
func (c *augChain) priorCurvature(tm gaussTerm) float64 {
	x := c.next
	copy(x, c.centre)
	for g := range tm.levels {
		x[tm.start+g*tm.stride] = 0
	}
	f := func(tau float64) float64 {
		x[tm.logTau] = math.Log(tau)
		return c.t.LogPrior(x) + float64(tm.levels-1)*math.Log(tau) // see interweave: log p(τ) = log π + (G − 1)ℓ
	}
	k := 2 * (f(1) - f(2)) / 3
	if !(k > 0) || math.IsInf(k, 0) {
		return 0
	}
	return k
}

// Step makes one sweep.
func (c *augChain) Step(rng *rand.Rand) (exactmh.Info, error) {
	if c.ind != nil && c.ind.only {
		return c.stepIndep(rng)
	}
	b := c.b
	if c.ah.staleB {
		b = c.bNext
	}
	n := len(c.off)
	for range c.gibbsN * (1 + b2i(c.ah.gibbsTwice)) {
		if err := c.gibbs(rng, b); err != nil {
			return exactmh.Info{}, err
		}
	}
	if c.ind != nil {
		c.ind.curOK = false // the sweep moved θ
		if err := c.indep(rng); err != nil {
			return exactmh.Info{}, err
		}
	}
	// z is spent: every move from here is one of π(θ) alone.
	if !c.ah.marginalOff && !c.logit && len(c.asis) > 0 {
		for range 1 + b2i(c.ah.marginalTwice) {
			c.marginalRound(rng)
		}
		if c.pairErr != nil {
			return exactmh.Info{}, c.pairErr
		}
	}
	// The nested scale moves (gaussaug_nest.go): data-free, η kept.
	for range 1 + b2i(c.ah.nestTwice) {
		for n := range c.nest {
			c.nestScale(rng, &c.nest[n])
		}
	}
	if c.warm {
		c.adapt()
	}
	return exactmh.Info{Accepted: true, AcceptProb: math.NaN(), LogDensity: math.NaN(), Batch: n, Distinct: n}, nil
}

// b2i is 1 for true, 0 for false.
func b2i(b bool) int {
	if b {
		return 1
	}
	return 0
}

// gibbs makes updates 1–4 of the sweep, given the latent data drawn
// into b.
func (c *augChain) gibbs(rng *rand.Rand, b []float64) error {
	if c.logit {
		c.drawOmega(rng, b)
	} else {
		c.drawZ(rng, b)
	}
	n := len(c.off)
	c.t.Count(n)
	if c.integrateN > 0 {
		if err := c.integrate(rng); err != nil {
			return err
		}
	}
	if _, _, err := c.drawW(rng); err != nil {
		return err
	}
	if c.ah.zwTwice && !c.logit {
		c.drawZ(rng, b)
		if c.schur == nil {
			c.condMean(c.chol, c.mean)
			c.fresh = true
		}
		if _, _, err := c.drawW(rng); err != nil {
			return err
		}
	}
	if c.px {
		if err := c.expand(rng); err != nil {
			return err
		}
	}
	for _, tm := range c.terms {
		if c.ah.tauOff {
			break
		}
		if err := c.drawTau(rng, tm); err != nil {
			return err
		}
	}
	c.drawCorr(rng)
	for range (1 + b2i(c.ah.asisTwice)) * (1 - b2i(c.ah.asisOff)) {
		for k := range c.asis {
			if err := c.interweave(rng, &c.asis[k]); err != nil {
				return err
			}
		}
		for k := range c.asisCorr {
			if err := c.interweave(rng, &c.asisCorr[k]); err != nil {
				return err
			}
		}
		if err := c.corrNonCentred(rng); err != nil {
			return err
		}
	}
	if c.ah.staleB {
		copy(c.b, c.bNext)
	}
	if c.logit {
		c.levelMH(rng) // ω is spent
	}
	return nil
}

// marginalRound makes the marginal scale moves and the small levels'
// draws (gaussaug_marginal.go), moves of π(θ) alone.
func (c *augChain) marginalRound(rng *rand.Rand) {
	c.linearPredictors()
	c.uCur = math.NaN() // the sweep's updates moved θ
	c.curOK = false
	for _, k := range c.order {
		if c.asis[k].half && rng.Float64() < 0.5 {
			continue
		}
		x := c.marginalScale(rng, &c.asis[k])
		if c.warm {
			c.absSum[k] += math.Abs(x)
			c.absN[k]++
		}
	}
	for k := range c.asis {
		c.levelDraw(rng, &c.asis[k])
	}
}

// drawZ is update 1: each z_i given η_i, summing b = Xᵀ(z − o) into b.
func (c *augChain) drawZ(rng *rand.Rand, b []float64) {
	clear(b)
	w := c.theta
	ptr, col, val := c.rows.ptr, c.rows.col, c.rows.val
	var zz float64
	defer func() { c.zz = zz }()
	for i, yi := range c.y {
		lo, hi := ptr[i], ptr[i+1]
		eta := c.off[i]
		for k := lo; k < hi; k++ {
			eta += val[k] * w[col[k]]
		}
		// z = η + x with x > −η (y = 1), z = η − x with x ≥ η (y = 0).
		var r float64
		if yi != c.ah.flipSide {
			r = eta + truncAbove(rng, -eta)
		} else {
			r = eta - truncAbove(rng, eta)
		}
		r -= c.off[i]
		zz += r * r
		for k := lo; k < hi; k++ {
			b[col[k]] += val[k] * r
		}
	}
}

// expand is the parameter-expanded scale move (Liu and Wu, JASA 94, 1999;
// Liu and Sabatti, Biometrika 87, 2000), made after update 2 on a model
// without offsets: the whole state (z, w, log τ) moved along the group
// z → gz, w → gw (every fixed and group effect), τ → gτ (every random
// term's and correlated factor's scale; correlations kept), g > 0, which
// keeps each z_i's sign, so every y_i. In s = log g (the group's Haar
// measure ds) the state's density along its orbit is
//
//	h(s) = −½e^{2s}R + (N + E)s + log p(T_s θ),  R = ‖z − Xw‖²,
//
// N + E the coordinates scaled (the Jacobian g^{N+E}, E = len(eff)), and
// log p the log prior. The proposal v = e^{2s} ~ Gamma(K/2, R/2), K = N +
// E − G, G = Σ_t G_t the independent terms' effects (pxG), holds the first
// term and K·s: a term's effects' prior N(gu; 0, g²τ²) contributes −G_t·s
// to log p(T_s θ), so the rest of h is nearly flat in s where the scales'
// and fixed effects' priors are wide. The draw is kept with probability
// min(1, e^{G·s}·p(T_s θ)/p(θ)), an independence Metropolis–Hastings
// update of the orbit's position (from s = 0, its ratio is h − log q at
// the proposal less at 0), which leaves π(θ)·p(z | θ) invariant for any
// K. A proposal holding (N + E)s, the prior's −G·s left in the ratio,
// would propose g² ≈ (N + E)/N and be kept about never where the effects
// are many (guimmun: 1,756 effects over N = 2,159). It moves the
// latent scale with everything measured in it — the direction along
// which a binary model's fixed effects, group effects and scales change
// together (β ∝ √(1 + Σ τ²)), which the Gibbs updates, each given z,
// take in steps of 1/√N. b and ‖z‖² follow z.
func (c *augChain) expand(rng *rand.Rand) error {
	th := c.theta
	w := th[:c.dw]
	var bw float64
	for j, bj := range c.b {
		bw += bj * w[j]
	}
	R := c.zz - 2*bw + c.m.Quad(w, zeros(c.mw))
	if !(R > 0) || math.IsInf(R, 0) {
		return nil
	}
	k := float64(len(c.y) + len(c.eff) - c.pxG) // the proposal's shape K
	jac := float64(c.pxG)                       // h's (N + E)s less K·s
	if c.ah.pxNoJacobian {
		jac -= float64(len(c.eff))
	}
	if c.ah.pxNoShape {
		jac -= float64(c.pxG)
	}
	s := 0.5 * math.Log(gammaDraw(rng, k/2)/(R/2))
	if math.IsInf(s, 0) || math.IsNaN(s) {
		return nil
	}
	g := math.Exp(s)
	copy(c.next, th)
	for _, j := range c.eff {
		c.next[j] *= g
	}
	for _, j := range c.pxLog {
		c.next[j] += s
	}
	lpNew := c.t.LogPrior(c.next)
	la := lpNew - c.lp + jac*s
	if math.IsNaN(la) {
		return fmt.Errorf("GroupGibbs: the expanded scale move's prior ratio is NaN (log prior %v → %v)", c.lp, lpNew)
	}
	c.pxT++
	if la >= 0 || rng.Float64() < math.Exp(la) {
		copy(c.theta, c.next)
		c.lp = lpNew
		for j := range c.b {
			c.b[j] *= g
		}
		c.zz *= g * g
		c.pxN++
	}
	return nil
}

// interweave is update 4 for term a: τ given ũ = u/τ, z and the other
// coordinates. With ũ held, the term adds τ·Z_aũ to every η, and z ~
// N(η, 1) gives τ the Gaussian factor exp(−Aτ²/2 + Bτ),
//
//	A = ũᵀM_aaũ,  B = ũᵀ(b − Mw)_a + τA
//
// (from the sufficient statistics: no datum read). The non-centred
// density has no τ in ũ's prior N(0, I): the Jacobian τ^G of u = τũ
// cancels the G factors 1/τ of u's N(0, τ²), so τ's conditional is that
// factor times p(τ), the scale's prior in τ (log p(τ) = log π(θ) +
// (G − 1)·log τ up to a constant, at u = τũ: the prior in ℓ = log τ
// carries the Jacobian τ). The proposal is the Gaussian N(B/(A + c),
// 1/(A + c)) truncated to τ > 0, which holds the factor e^{−cτ²/2} of the
// prior (asisTerm.c), drawn independently of the current τ and kept with
// probability min(1, p(τ′)e^{cτ′²/2}/(p(τ)e^{cτ²/2})): an exact
// independence Metropolis–Hastings update of τ's conditional, always kept
// for a half-normal prior.
func (c *augChain) interweave(rng *rand.Rand, a *asisTerm) error {
	th := c.theta
	lt := a.logTau
	tau := math.Exp(th[lt])
	mv := c.m.Val
	var A, S float64
	for g := range a.levels {
		j := a.start + g*a.stride
		uj := th[j] / tau
		var mw, col float64 // (Mw)_j: the other columns' entries, then column j's
		for q := a.mRow[g]; q < a.mSplit[g]; q++ {
			mw += mv[a.mPos[q]] * th[a.mCol[q]]
		}
		for q := a.mSplit[g]; q < a.mRow[g+1]; q++ {
			col += mv[a.mPos[q]] * th[a.mCol[q]]
		}
		mw += col
		S += uj * (c.b[j] - mw)
		for p := c.m.ColPtr[j]; p < c.m.ColPtr[j+1]; p++ {
			i := c.m.RowIdx[p]
			if i == j {
				A += c.m.Val[p] * uj * uj
			} else if a.has(i) {
				A += 2 * c.m.Val[p] * uj * th[i] / tau
			}
		}
	}
	B := S + tau*A
	k := a.c
	if c.ah.asisNoPrior {
		k = 0
	}
	prec := A + k
	if !(prec > 0) || math.IsInf(prec, 0) || math.IsNaN(B) {
		return nil // no data and a flat prior: the centred update alone
	}
	sd := 1 / math.Sqrt(prec)
	mean := B / prec
	tNew := mean + sd*truncAbove(rng, -mean/sd)
	if !(tNew > 0) || math.IsInf(tNew, 0) {
		return nil // below the smallest positive float: no move
	}
	lNew := math.Log(tNew)
	copy(c.next, th)
	r := tNew / tau
	for g := range a.levels {
		c.next[a.start+g*a.stride] *= r
	}
	c.next[lt] = lNew
	lpNew := c.t.LogPrior(c.next)
	c.asisT++
	la := lpNew - c.lp + float64(a.levels-1)*(lNew-th[lt]) + k*(tNew*tNew-tau*tau)/2
	if c.ah.asisCentred {
		la -= float64(a.levels-1) * (lNew - th[lt])
	}
	if math.IsNaN(la) {
		return fmt.Errorf("GroupGibbs: the interweaving step of θ[%d]: its prior ratio is NaN (log prior %v → %v)", lt, c.lp, lpNew)
	}
	if c.ah.asisNoPrior || la >= 0 || rng.Float64() < math.Exp(la) {
		copy(c.theta, c.next)
		c.lp = lpNew
		c.asisN++
	}
	return nil
}

// rowsOfM sets a's rows of M (mRow, mCol, mPos) from m's pattern.
func (a *asisTerm) rowsOfM(m *sparse.SymCSC) {
	n := make([]int32, a.levels+1)
	level := func(j int) int { // j's level of the term, or −1
		if !a.has(j) {
			return -1
		}
		return (j - a.start) / a.stride
	}
	each := func(f func(g, k, p int)) {
		for col := range m.N {
			for p := m.ColPtr[col]; p < m.ColPtr[col+1]; p++ {
				i := m.RowIdx[p]
				if g := level(i); g >= 0 {
					f(g, col, p)
				}
				if g := level(col); g >= 0 && i != col {
					f(g, i, p)
				}
			}
		}
	}
	each(func(g, _, _ int) { n[g+1]++ })
	for g := range a.levels {
		n[g+1] += n[g]
	}
	a.mRow = n
	a.mCol, a.mPos = make([]int32, n[a.levels]), make([]int32, n[a.levels])
	next := slices.Clone(n[:a.levels])
	each(func(g, k, p int) {
		a.mCol[next[g]], a.mPos[next[g]] = int32(k), int32(p)
		next[g]++
	})
	a.mSplit = make([]int32, a.levels)
	for g := range a.levels {
		j := a.start + g*a.stride
		q := a.mRow[g]
		for q < a.mRow[g+1] && int(a.mPos[q]) < m.ColPtr[j] {
			q++
		}
		a.mSplit[g] = q
	}
}

// has reports whether coordinate i is one of the term's effects.
func (a *asisTerm) has(i int) bool {
	k := i - a.start
	return k >= 0 && k%a.stride == 0 && k/a.stride < a.levels
}

// Params reports the acceptance rates of the interweaving step
// (asis_accept), the expanded move (expand_accept), the small levels'
// draws (level_accept) and the integrated scale moves
// (integrate_accept) and the marginal scale moves' Newton proposals
// (marginal_accept), NaN for a move not made; with correlated factors,
// the fraction of their scales and correlations the non-centred move
// moved (corr_nc_moved).
func (c *augChain) Params() map[string]float64 {
	var ln, lt, cn, ct, mn, mt int64
	for _, a := range c.asis {
		ln, lt = ln+a.lN, lt+a.lT
		mn, mt = mn+a.mN, mt+a.mT
		cn, ct = cn+a.cN, ct+a.cT
	}
	p := map[string]float64{
		"asis_accept":      rate(c.asisN, c.asisT),
		"expand_accept":    rate(c.pxN, c.pxT),
		"level_accept":     rate(ln, lt),
		"integrate_accept": rate(cn, ct),
		"marginal_accept":  rate(mn, mt),
	}
	if c.logit {
		var mn, mt int64
		for _, s := range c.levels {
			mn, mt = mn+s.n, mt+s.t
		}
		p["level_mh_accept"] = rate(mn, mt)
	}
	if len(c.corrNC) > 0 {
		p["corr_nc_moved"] = rate(c.corrNCN, c.corrNCT)
	}
	if c.ind != nil {
		p["indep_accept"] = rate(c.ind.n, c.ind.t)
		p["indep_max_rejections"] = float64(c.ind.maxRun)
		p["indep_grid"] = 0
		if c.ind.grid != nil {
			p["indep_grid"] = 1
		}
	}
	return p
}

// rate returns kept/made, NaN where nothing was made.
func rate(kept, made int64) float64 {
	if made == 0 {
		return math.NaN()
	}
	return float64(kept) / float64(made)
}

// SetWarmup implements exactmh.WarmupAware: during warmup the marginal
// scale moves' k_t and widths follow the sweeps' means (adapt); after it
// they stay fixed, so that each sampling sweep is the same exact kernel.
func (c *augChain) SetWarmup(on bool) { c.warm = on }

// WarmupSettled implements exactmh.WarmupSettler: the sweep's only
// adaptation, the marginal scale moves' k_t and widths, is a running mean
// over warmup's sweeps that SetWarmup(false) freezes wherever it stands,
// so warmup is burn-in past exactmh.MinBurnIn sweeps and the runner ends
// it there; the requested draws are all made (TestGaussSweepWarmupSettles).
func (c *augChain) WarmupSettled(int) bool { return true }

// adapt adds the sweep's τ² to warmup's sums and sets each term's k_t =
// E τ_t²/(1 + Σ E τ²) and width = 3·E|s| (within [0.02, 2]) from them.
func (c *augChain) adapt() {
	c.nWarm++
	v := c.latentVar
	for q, j := range c.pxLog {
		c.tauSum[q] += math.Exp(2 * c.theta[j])
		v += c.tauSum[q] / c.nWarm
	}
	for k := range c.asis {
		a := &c.asis[k]
		if c.nWarm >= 20 {
			a.width = min(max(3*c.absSum[k]/max(c.absN[k], 1), 0.02), 2)
		}
		if !c.ah.attenuationOff {
			a.k = c.tauSum[slices.Index(c.pxLog, a.logTau)] / c.nWarm / v
		}
	}
}

// halfRate sets which terms' marginal scale moves are made in a random
// half of the sweeps (asisTerm.half): where some term's levels hold on
// average at most smallLevel data, every term whose levels hold more.
// Where levels hold a datum or two, the latent data pin τ (see
// marginalScale) and the term needs its move under y every sweep; a term
// of larger levels is held far less by z, and the small terms' moves
// scale it along the attenuation (k_t) as well. Making a move with
// probability 1/2, independently of the state, is a random-scan mixture
// of two π-invariant kernels: exact. On guimmun it halves the community
// term's share of the data read (figures/bench/multilevel_real_augment.txt).
func (c *augChain) halfRate(off bool) {
	if off {
		return
	}
	small := make([]bool, len(c.asis))
	some := false
	for k := range c.asis {
		a := &c.asis[k]
		nnz := c.termNNZ(a)
		small[k] = nnz <= smallLevel*a.levels
		some = some || small[k]
	}
	if !some {
		return
	}
	for k := range c.asis {
		c.asis[k].half = !small[k]
	}
}

// MarshalState saves the counters and warmup's adaptation (θ is the whole
// state otherwise: z is drawn afresh each sweep), floats exactly.
func (c *augChain) MarshalState() ([]byte, error) {
	b := fmt.Appendf(nil, "%d %d %d %d %t %v", c.asisN, c.asisT, c.pxN, c.pxT, c.warm, c.nWarm)
	for _, x := range c.tauSum {
		b = fmt.Appendf(b, " %v", x)
	}
	for k, x := range c.absSum {
		b = fmt.Appendf(b, " %v %v %v %v", x, c.absN[k], c.asis[k].k, c.asis[k].width)
	}
	for _, a := range c.asis {
		b = fmt.Appendf(b, " %d %d", a.lN, a.lT)
	}
	for _, a := range c.asis {
		b = fmt.Appendf(b, " %v %v %d %d", a.cw, a.cA, a.cN, a.cT)
	}
	for _, s := range c.levels {
		b = fmt.Appendf(b, " %d %d", s.n, s.t)
	}
	for _, a := range c.asis {
		b = fmt.Appendf(b, " %d %d", a.mN, a.mT)
	}
	if c.ind != nil {
		b = c.ind.marshal(b)
	}
	return b, nil
}

// UnmarshalState restores what MarshalState saved.
func (c *augChain) UnmarshalState(b []byte) error {
	r := bytes.NewReader(b)
	_, err := fmt.Fscan(r, &c.asisN, &c.asisT, &c.pxN, &c.pxT, &c.warm, &c.nWarm)
	for q := range c.tauSum {
		if err == nil {
			_, err = fmt.Fscan(r, &c.tauSum[q])
		}
	}
	for k := range c.absSum {
		if err == nil {
			_, err = fmt.Fscan(r, &c.absSum[k], &c.absN[k], &c.asis[k].k, &c.asis[k].width)
		}
	}
	for k := range c.asis {
		if err == nil {
			_, err = fmt.Fscan(r, &c.asis[k].lN, &c.asis[k].lT)
		}
		if err == nil && (c.asis[k].lN < 0 || c.asis[k].lN > c.asis[k].lT) {
			err = errors.New("small-level counts out of range")
		}
	}
	for k := range c.asis {
		a := &c.asis[k]
		if err == nil {
			_, err = fmt.Fscan(r, &a.cw, &a.cA, &a.cN, &a.cT)
		}
		if err == nil && (a.cN < 0 || a.cN > a.cT || !(a.cA >= 0) || (c.integrateN > 0 && !(a.cw > 0 && a.cw < math.Inf(1)))) {
			err = errors.New("integrated scale move's step or counts out of range")
		}
	}
	for k := range c.levels {
		s := &c.levels[k]
		if err == nil {
			_, err = fmt.Fscan(r, &s.n, &s.t)
		}
		if err == nil && (s.n < 0 || s.n > s.t) {
			err = errors.New("level moves' counts out of range")
		}
	}
	for k := range c.asis {
		a := &c.asis[k]
		if err == nil {
			_, err = fmt.Fscan(r, &a.mN, &a.mT)
		}
		if err == nil && (a.mN < 0 || a.mN > a.mT) {
			err = errors.New("marginal scale move's counts out of range")
		}
	}
	if err == nil && c.ind != nil {
		err = c.ind.unmarshal(r)
	}
	if err != nil {
		return fmt.Errorf("the augmentation sweep's state %q: %w", b, err)
	}
	if c.asisN < 0 || c.asisN > c.asisT || c.pxN < 0 || c.pxN > c.pxT {
		return errors.New("the augmentation sweep's state: counts out of range")
	}
	return nil
}

// truncAbove draws x ~ N(0, 1) conditioned on x > a, exactly, 0
// allocations. For a < 0.25 by rejection from N(0, 1) (accepting at least
// 0.40 of draws); above, by Robert's exponential rejection (Statistics
// and Computing 5, 1995): x = a + E/λ, E ~ Exp(1), λ = (a + √(a² + 4))/2,
// kept if E′ > (x − λ)²/2 for E′ ~ Exp(1), i.e. with probability
// e^{−(x−λ)²/2}, which accepts at least 0.79 of proposals and only
// improves as a grows, so that a far tail (a = 40) costs what a = 1 does.
// The two methods cost the same near a = 0.25 (TestTruncAbove).
func truncAbove(rng *rand.Rand, a float64) float64 {
	if a < truncSwitch {
		for {
			if x := rng.NormFloat64(); x > a {
				return x
			}
		}
	}
	lam := (a + math.Sqrt(a*a+4)) / 2
	for {
		x := a + rng.ExpFloat64()/lam
		if d := x - lam; rng.ExpFloat64() > d*d/2 {
			return x
		}
	}
}

// truncSwitch is the a above which truncAbove rejects from the
// exponential.
const truncSwitch = 0.25

// augmentMaxN is the largest N the automatic default samples a probit or
// logistic multilevel model by augmentation: a sweep reads every datum
// (and draws a latent variable for each), where the minibatch sweep reads
// a few; at and above it the minibatch route (multilevelChoice).
const augmentMaxN = 200_000

// augmentMaxFill is the largest number of entries of the factor of P the
// automatic default accepts for the augmentation sweep, which factors P
// once a sweep.
const augmentMaxFill = 5_000_000

// logitMaxFlops is the largest counted cost of a sweep the automatic
// default accepts for the logistic sweep: logitFlopsPerDatum per datum
// (a Pólya–Gamma draw and the row's share of XᵀΩX) plus the multiply-adds
// of the sweep's factorisation of P (sparse.Symbolic.FactorFlops) and of
// its integrated scale moves (integrateCost each). It is about the cost at
// which the sweeps of a default run, 4 × (exactmh.MinBurnIn + 1000) (the
// sweep adapts nothing the runner waits for), take half a minute
// (docs/multilevel.md, "Logistic by Pólya–Gamma augmentation"): above
// it, N of about forty thousand or more, or crossed factors of a thousand
// levels or more (whose factor is a dense block of order the smaller
// factor's levels), the minibatch route.
const logitMaxFlops = 4e6

// logitFlopsPerDatum is a datum's cost in multiply-adds in the logistic
// sweep's count (logitMaxFlops): a Pólya–Gamma draw costs about what a
// hundred multiply-adds do.
const logitFlopsPerDatum = 100

// chooseAugment is the automatic default's choice on a probit or
// logistic multilevel model with N < augmentMaxN: GroupGibbs's
// augmentation sweep, started at the Laplace-EM centre, where the factor
// of P has at most augmentMaxFill entries and, logistic, the sweep's
// counted cost is at most logitMaxFlops (false otherwise: the minibatch
// route). It reads every datum a sweep but moves every location parameter
// jointly and each τ in both forms, so no pilot is run. Every count is of
// the model's structure (N, the factor's pattern), never of a clock, so
// the choice is deterministic.
func chooseAugment(ctx context.Context, c *exactmh.Choice, p *exactmh.Posterior, t *exactmh.Target, lay Layout, pe augGLM, logit bool) (bool, error) {
	if p.Len() >= augmentMaxN {
		return false, nil
	}
	// The factor's pattern, and so its fill and cost, is P's whatever θ:
	// counted at θ = 0 before the centre is sought.
	ch, err := startAugment("GroupGibbs", t, lay, pe, logit, make([]float64, p.Dim()), nil, 0, augHooks{})
	if err != nil {
		return false, nil
	}
	sym := ch.chol.Symbolic()
	fill := sym.FactorNNZ()
	if fill > augmentMaxFill {
		return false, nil
	}
	moves := 0
	for _, a := range ch.asis {
		moves += a.rounds
	}
	cost := sym.FactorFlops() + ch.integrateCost()*float64(moves) + logitFlopsPerDatum*float64(p.Len())
	if logit && cost > logitMaxFlops {
		return false, nil
	}
	c.Progress(ctx, "finding the multilevel centre (Laplace-EM, N = %d, d = %d)", p.Len(), p.Dim())
	centre, sd, err := multilevelCenter(ctx, t, lay)
	if err != nil {
		if ctx.Err() != nil {
			return true, ctx.Err()
		}
		centre, sd = nil, nil // the chain's own start: the augmentation needs no centre
	}
	k := GroupGibbs{Center: centre, Augment: true}
	init := centre
	if init == nil {
		init = make([]float64, p.Dim())
	}
	ch0, err := startAugment(k.Name(), t, lay, pe, logit, init, centre, 0, augHooks{})
	if err != nil {
		return false, nil
	}
	pilot, indep := ch0.choosePilot(p.Len())
	if indep {
		k.Independence = -indepMoves
	}
	c.Name, c.Kernel, c.Posterior, c.Center, c.CenterSD = k.Name(), k, p, centre, sd
	if indep {
		c.Reason = fmt.Sprintf("a logistic multilevel model of N = %d < %d whose Laplace approximation fits: GroupGibbs's Laplace independence move (%d a transition: every log τ and every fixed and group effect proposed together from a t about the joint Laplace point, kept by the exact likelihood, one pass over the data each; the counted pilot's %d draws from the proposal have an effective fraction %.3g ≥ %.3g)", p.Len(), augmentMaxN, indepMoves, indepPilotDraws, pilot, indepPilotMin)
		return true, nil
	}
	if logit {
		how := "each τ centred, then interwoven with the non-centred form"
		if moves > 0 {
			how = fmt.Sprintf("%d integrated scale moves a sweep (a log τ moved with every effect integrated out, %.3g multiply-adds each); each τ centred, then interwoven with the non-centred form", moves, ch.integrateCost())
		}
		c.Reason = fmt.Sprintf("a logistic multilevel model of N = %d < %d: GroupGibbs's Pólya–Gamma augmentation sweep (ω_i ~ PG(n_i, η_i); every fixed and group effect drawn jointly from its Gaussian conditional through the sparse Cholesky factor, %d entries; %s%s), a sweep's counted cost %.3g multiply-adds ≤ %.3g (a factorisation of %.3g, the moves and %d a datum)", p.Len(), augmentMaxN, fill, how, ch.corrReason(), cost, float64(logitMaxFlops), sym.FactorFlops(), logitFlopsPerDatum)
		if math.IsNaN(pilot) {
			c.Reason += "; no pilot needed"
		} else {
			c.Reason += fmt.Sprintf("; not the Laplace independence move, whose counted pilot's %d draws have an effective fraction %.3g < %.3g", indepPilotDraws, pilot, indepPilotMin)
		}
		return true, nil
	}
	c.Reason = fmt.Sprintf("a probit multilevel model of N = %d < %d: GroupGibbs's data-augmentation sweep (Albert–Chib latent variables; every fixed and group effect drawn jointly from its Gaussian conditional through the sparse Cholesky factor, %d entries; each τ centred, then interwoven with the non-centred form, then moved under the probit likelihood with the fixed effects along the attenuation by an overrelaxed Newton proposal%s), reading every datum about twice a term a sweep", p.Len(), augmentMaxN, fill, ch.corrReason())
	if s := ch.schur; s != nil {
		c.Reason += fmt.Sprintf("; the joint draw factored by eliminating one term's %d small levels (the other %d effects drawn from their Schur complement, each eliminated level then given them: the same Gaussian draw, a factor of %d entries instead of %d), and updates 1–4 made in %d rounds a sweep", len(s.elim), len(s.red), s.chol.Symbolic().FactorNNZ(), fill, ch.gibbsN)
	}
	c.Reason += "; no pilot needed"
	return true, nil
}

// termNNZ is the number of the rows' entries in term a's columns: the
// data its levels hold in all.
func (c *augChain) termNNZ(a *asisTerm) int {
	var nnz int
	for _, j := range c.rows.col {
		if a.has(int(j)) {
			nnz++
		}
	}
	return nnz
}
