// Copyright ©2026 The exactmh Authors. All rights reserved.
// Use of this source code is governed by a BSD-style
// license that can be found in the LICENSE file.

package main

import (
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/exactmh/exactmh"
	store "github.com/exactmh/exactmh/data"
	"github.com/exactmh/exactmh/examples/internal/memstat"
	"github.com/exactmh/exactmh/examples/internal/report"
	"github.com/exactmh/exactmh/model"
)

// The crossed mode (-crossed G1,G2 with -store DIR): a logistic regression
// with two crossed grouping factors, "user" (G1 levels) and "item" (G2
// levels), a random intercept for each, and an intercept and three fixed
// covariates:
//
//	y_i ~ Bernoulli(σ(β₀ + x_iᵀβ + a_{user(i)} + b_{item(i)})),
//	a ~ N(0, τ_a²), b ~ N(0, τ_b²), τ ~ half-normal(1), β ~ N(0, 5²),
//
// τ_a = 0.5, τ_b = 0.3. Each factor's level sizes follow a rank-size law
// (groupSizes) from mean/50 to 50·mean data a level (mean N/G), so a few
// users and items have many rows and many have few. The rows are written
// user by user (a user's rows are consecutive), each row's item drawn
// independently with probability proportional to the item sizes: the
// items' counts are then multinomial around the rank-size law. A row has
// 4 fixed entries and 2 random ones (its user's and its item's intercept
// columns); no N-sized array is held while the store is written.

// crossedCovariates is the number of fixed covariates beside the
// intercept in the crossed mode.
const crossedCovariates = 3

// crossedTruth is the truth of the crossed data set.
type crossedTruth struct {
	n, g1, g2 int
	sizes1    []int     // rows a user, largest first
	cum2      []float64 // cumulative item probabilities (rank-size)
	beta      []float64 // intercept, x1 … x3
	tau       [2]float64
	a, b      []float64 // user and item effects
}

// parseCrossed parses -crossed "G1,G2".
func parseCrossed(s string) (g1, g2 int, err error) {
	f := strings.Split(s, ",")
	if len(f) == 2 {
		g1, err = strconv.Atoi(strings.TrimSpace(f[0]))
		if err == nil {
			g2, err = strconv.Atoi(strings.TrimSpace(f[1]))
		}
		if err == nil && g1 >= 1 && g2 >= 1 {
			return g1, g2, nil
		}
	}
	return 0, 0, fmt.Errorf("-crossed %q: want two level counts G1,G2 ≥ 1", s)
}

// crossedRange returns the smallest and largest level size of a factor
// of g levels over n data: mean/50 and 50·mean (mean n/g), kept inside
// [1, n] and apart enough for groupSizes to reach the sum n.
func crossedRange(n, g int) (lo, hi int) {
	mean := float64(n) / float64(g)
	lo = max(1, int(mean/50))
	hi = min(n, max(lo+1, int(math.Ceil(50*mean))))
	return lo, hi
}

// newCrossedTruth draws the truth of the crossed data set of n rows and
// returns it with the random stream the rows are drawn from next.
func newCrossedTruth(n, g1, g2 int, seed uint64) (*crossedTruth, *rand.Rand) {
	rng := rand.New(rand.NewPCG(seed, 45))
	t := &crossedTruth{n: n, g1: g1, g2: g2, tau: [2]float64{0.5, 0.3}}
	lo, hi := crossedRange(n, g1)
	t.sizes1 = groupSizes(n, g1, lo, hi)
	lo, hi = crossedRange(n, g2)
	sizes2 := groupSizes(n, g2, lo, hi)
	t.cum2 = make([]float64, g2)
	var s float64
	for j, v := range sizes2 {
		s += float64(v)
		t.cum2[j] = s
	}
	for j := range t.cum2 {
		t.cum2[j] /= s
	}
	t.beta = make([]float64, 1+crossedCovariates)
	t.beta[0] = -1
	for j := 1; j < len(t.beta); j++ {
		t.beta[j] = 0.3 * rng.NormFloat64()
	}
	t.a, t.b = make([]float64, g1), make([]float64, g2)
	for j := range t.a {
		t.a[j] = t.tau[0] * rng.NormFloat64()
	}
	for j := range t.b {
		t.b[j] = t.tau[1] * rng.NormFloat64()
	}
	return t, rng
}

// item draws an item from the rank-size probabilities.
func (t *crossedTruth) item(rng *rand.Rand) int {
	return min(sort.SearchFloat64s(t.cum2, rng.Float64()), t.g2-1)
}

// rows draws the data set user by user, handing each row's user, item,
// covariates (a buffer reused for the next row) and label to row.
func (t *crossedTruth) rows(rng *rand.Rand, row func(user, item int, x []float64, y float64) error) error {
	x := make([]float64, crossedCovariates)
	for u, s := range t.sizes1 {
		for range s {
			it := t.item(rng)
			z := t.beta[0] + t.a[u] + t.b[it]
			for j := range x {
				x[j] = rng.NormFloat64()
				z += t.beta[j+1] * x[j]
			}
			var y float64
			if rng.Float64() < 1/(1+math.Exp(-z)) {
				y = 1
			}
			if err := row(u, it, x, y); err != nil {
				return err
			}
		}
	}
	return nil
}

// crossedLayout returns the crossed model's columns: the intercept and
// x1 … x3, then each user's intercept, then each item's.
func crossedLayout(g1, g2 int) *store.SparseLayout {
	l := &store.SparseLayout{Fixed: []string{"Intercept"}}
	for j := range crossedCovariates {
		l.Fixed = append(l.Fixed, fmt.Sprintf("x%d", j+1))
	}
	for _, f := range []struct {
		name string
		g    int
	}{{"user", g1}, {"item", g2}} {
		sf := store.SparseFactor{Name: f.name, Intercept: true, Levels: make([]string, f.g)}
		for j := range sf.Levels {
			sf.Levels[j] = strconv.Itoa(j + 1)
		}
		l.Factors = append(l.Factors, sf)
	}
	return l
}

// writeCrossedStore draws the crossed data set and writes it to path,
// row by row.
func writeCrossedStore(path string, n, g1, g2 int, seed uint64, dtype store.DType) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	t, rng := newCrossedTruth(n, g1, g2, seed)
	p := 1 + crossedCovariates
	w, err := store.CreateSparseStore(path, n, p+g1+g2, dtype, false, crossedLayout(g1, g2))
	if err != nil {
		return err
	}
	cols := make([]int32, p+2)
	vals := make([]float64, p+2)
	for j := range p {
		cols[j] = int32(j)
	}
	vals[0], vals[p], vals[p+1] = 1, 1, 1
	err = t.rows(rng, func(user, item int, x []float64, y float64) error {
		copy(vals[1:p], x)
		cols[p], cols[p+1] = int32(p+user), int32(p+g1+item)
		return w.WriteRow(cols, vals, y, 0)
	})
	if err != nil {
		w.Abort()
		return err
	}
	return w.Close()
}

// crossedSpec returns the crossed model without its data.
func crossedSpec(l *store.SparseLayout, y []float64) *model.Multilevel {
	m := &model.Multilevel{
		Family:    model.LogisticFamily{},
		Y:         y,
		Intercept: true,
		FixedSD:   make([]float64, len(l.Fixed)),
	}
	for j := range m.FixedSD {
		m.FixedSD[j] = 5
	}
	for _, name := range l.Fixed[1:] {
		m.Fixed = append(m.Fixed, model.Covariate{Name: name})
	}
	for _, f := range l.Factors {
		m.Factors = append(m.Factors, model.Factor{Name: f.Name, Levels: f.Levels, Tau: model.HalfNormal(1)})
	}
	return m
}

// crossedFromStore opens (writing it first if absent) the store of the
// crossed data set and returns its truth, the posterior over the mapped
// rows, the store and the stop of its page drops.
func crossedFromStore(dir string, n, g1, g2 int, seed uint64, f32 bool, say func(string, ...any)) (_ *crossedTruth, _ *exactmh.Posterior, _ *store.SparseStore, stop func(), _ error) {
	dtype := store.Float64
	if f32 {
		dtype = store.Float32
	}
	path := filepath.Join(dir, fmt.Sprintf("crossed_n%d_g%d_%d_seed%d.%v.sparse", n, g1, g2, seed, dtype))
	if _, err := os.Stat(path); err != nil {
		t0, cpu0 := time.Now(), report.CPUTime()
		if err := writeCrossedStore(path, n, g1, g2, seed, dtype); err != nil {
			return nil, nil, nil, nil, err
		}
		say("store %s written in %.1fs (%.1f CPU-s)", path, time.Since(t0).Seconds(), (report.CPUTime() - cpu0).Seconds())
	}
	t, _ := newCrossedTruth(n, g1, g2, seed)
	st, err := store.OpenSparseStore(path)
	if err != nil {
		return nil, nil, nil, nil, err
	}
	stop = dropPages(st)
	l := st.Layout()
	if l == nil || len(l.Factors) != 2 || len(l.Fixed) != 1+crossedCovariates || len(l.Factors[0].Levels) != g1 || len(l.Factors[1].Levels) != g2 {
		stop()
		st.Close()
		return nil, nil, nil, nil, fmt.Errorf("store %s: not a crossed data set of this example (layout has %d factors)", path, len(l.Factors))
	}
	m := crossedSpec(l, st.Y())
	readers := func() model.RowReader { return st.RowReader() }
	var post *exactmh.Posterior
	if f32 {
		post, err = model.NewMultilevelRows(m, model.SparseRows[float32]{N: st.N(), D: st.D(), RowPtr: st.RowPtr(), Col: st.Col(), Val: st.Val32()})
		if err == nil {
			post.Energy.(*model.SparseGLM[float32]).SetRowReaders(readers)
		}
	} else {
		post, err = model.NewMultilevelRows(m, model.SparseRows[float64]{N: st.N(), D: st.D(), RowPtr: st.RowPtr(), Col: st.Col(), Val: st.Val64()})
		if err == nil {
			post.Energy.(*model.SparseGLM[float64]).SetRowReaders(readers)
		}
	}
	if err != nil {
		stop()
		st.Close()
		return nil, nil, nil, nil, err
	}
	say("store %s: %s (N = %d, %d entries, %.1f bytes a row), mapped %v", path, memstat.GB(st.Size()), st.N(), st.NNZ(), float64(st.Size())/float64(st.N()), st.Mapped())
	return t, post, st, stop, nil
}

// show returns the truth of the parameters the crossed mode prints: the
// fixed effects, both log scales and the largest, middle and smallest
// level of each factor.
func (t *crossedTruth) show() map[string]float64 {
	s := map[string]float64{"Intercept": t.beta[0], "log_tau_user": math.Log(t.tau[0]), "log_tau_item": math.Log(t.tau[1])}
	for j := 1; j < len(t.beta); j++ {
		s[fmt.Sprintf("x%d", j)] = t.beta[j]
	}
	for _, g := range []int{0, t.g1 / 2, t.g1 - 1} {
		s[fmt.Sprintf("u_user[%d]", g+1)] = t.a[g]
	}
	for _, g := range []int{0, t.g2 / 2, t.g2 - 1} {
		s[fmt.Sprintf("u_item[%d]", g+1)] = t.b[g]
	}
	return s
}
