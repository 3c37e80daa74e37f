// Copyright ©2026 The exactmh Authors. All rights reserved.
// Use of this source code is governed by a BSD-style
// license that can be found in the LICENSE file.

package data

import (
	"cmp"
	"context"
	"fmt"
	"math"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"

	"github.com/exactmh/exactmh/internal/prefault"
)

// Spec says how to build a Design from a Frame.
type Spec struct {
	// Response is y: Num, Log, Log1p or Above of a numeric column (never
	// standardised).
	Response Term
	// Terms are the features, in the order of their columns.
	Terms []Term
	// NoIntercept leaves out the intercept; by default the first column
	// is "Intercept", all ones.
	NoIntercept bool
	// DropMissing drops the rows with a missing or non-finite value in
	// any column the Spec uses (Design.Dropped counts them). By default
	// such a row is an error naming the file, the row and the column.
	DropMissing bool
	// NoStandardize keeps Num, Log and Log1p features as they are. By
	// default each is standardised to mean 0 and standard deviation 1 in
	// the rows used (the sample standard deviation, n − 1), the transform
	// recorded in Design.Center and Design.Scale. Without an intercept a
	// feature is only scaled (Center 0), so that the model stays the same
	// and Unstandardize stays exact.
	NoStandardize bool
	// Offset, if not nil, is a numeric term (Num, Log, Log1p) whose
	// values enter each row's linear predictor with coefficient 1, as
	// R's offset(): Design.Offset, e.g. Log("exposure") for a Poisson
	// rate. It is never standardised.
	Offset Term
}

// Design is a design matrix and response, ready for
// model.NewLogisticRegression(d.X, d.Y, d.D), model.NewGLM and the
// other energies.
type Design struct {
	// X is the N×D design, row-major.
	X []float64
	// Y is the response, one per row of X.
	Y []float64
	// N is the number of rows (after dropping), D of columns.
	N, D int
	// Names are the D column names, e.g. "Intercept", "log(distance)",
	// "origin=ATL", "date.hour.sin": valid parameter names for
	// stancsv.Options.Names.
	Names []string
	// YName names the response, e.g. "delay>15".
	YName string
	// Center and Scale give each column's standardisation: the column
	// holds (x − Center)/Scale of the feature x; 0 and 1 for columns not
	// standardised.
	Center, Scale []float64
	// Dropped is the number of rows Spec.DropMissing dropped.
	Dropped int
	// Rows are the 0-based rows of the Frame that X's rows come from
	// (nil when none was dropped: row i is the Frame's row i).
	Rows []int
	// Source names the file the Frame was read from, for messages.
	Source string
	// Intercept reports whether column 0 is the intercept.
	Intercept bool
	// Groups are the random-effect terms (Random, RandomSlopes), in the
	// order of Spec.Terms; X holds the fixed effects alone.
	Groups []Group
	// Offset holds Spec.Offset's value in each row (nil without one).
	Offset []float64
}

// Group is a random-effect term of a Design: a grouping factor, every
// row's level, and the columns whose effects vary by level (the
// intercept, the slopes). It holds O(N) values, never an N × G matrix:
// model.Multilevel's Factor takes Index, Levels and the slopes as they
// are.
type Group struct {
	// Name names the factor: its column, or the columns joined by ':'
	// for an interaction ("origin:destination").
	Name string
	// Term is the term as written, in lme4's notation.
	Term string
	// Index holds each row's level, in [0, len(Levels)).
	Index []int32
	// Levels names the levels present in the rows used, in the order of
	// their names (integers in numeric order, false before true; an
	// interaction's by its columns' orders in turn).
	Levels []string
	// Counts holds the number of rows of each level.
	Counts []int
	// Intercept reports whether the term has a random intercept.
	Intercept bool
	// Correlated reports whether the term's effects are correlated
	// (Correlated, lme4's (1 + x | g)); they are independent otherwise
	// (lme4's (1 + x || g)).
	Correlated bool
	// SlopeNames name the slopes' columns ("log(distance)"); Slopes hold
	// their N values each, standardised as features are, the transform
	// in SlopeCenter and SlopeScale (0 and 1 when not standardised).
	SlopeNames              []string
	Slopes                  [][]float64
	SlopeCenter, SlopeScale []float64
	// FixedSD, if positive, makes the term a categorical fixed effect
	// (Categorical with NormalLevels) rather than a random effect: each
	// level's effect has the prior N(0, FixedSD²) and no scale is sampled
	// (model.Factor.FixedTau). Term is then its Categorical(…) form.
	FixedSD float64
}

// Column returns a copy of column j of X (N values).
func (d *Design) Column(j int) []float64 {
	if d == nil || j < 0 || j >= d.D {
		return nil
	}
	out := make([]float64, d.N)
	for i := range out {
		out[i] = d.X[i*d.D+j]
	}
	return out
}

// Unstandardize maps coefficients θ of the standardised design onto the
// original scale of each feature: slope θ_j/Scale_j, and the intercept
// θ_0 − Σ_j θ_j·Center_j/Scale_j when the design has one, so that
// x_raw·β equals x_std·θ for every row. theta may also hold several
// row-major vectors of D values each (draws, one per row), each mapped
// on its own. The result is a new slice; nil when len(theta) is not a
// positive multiple of D.
func (d *Design) Unstandardize(theta []float64) []float64 {
	if d == nil || d.D == 0 || len(theta) == 0 || len(theta)%d.D != 0 {
		return nil
	}
	out := make([]float64, len(theta))
	for s := 0; s < len(theta); s += d.D {
		th, b := theta[s:s+d.D], out[s:s+d.D]
		var shift float64
		for j, v := range th {
			b[j] = v / d.Scale[j]
			shift += b[j] * d.Center[j]
		}
		if d.Intercept {
			b[0] = th[0] - (shift - b[0]*d.Center[0])
		}
	}
	return out
}

// plan is one term's columns: their names and standardisation and how to
// fill them for rows lo ≤ i < hi of the design.
type plan struct {
	names         []string
	center, scale []float64
	fill          func(x []float64, stride, off, lo, hi int)
}

// builder holds what Build works on.
type builder struct {
	f    *Frame
	spec *Spec
	src  string
	rows []int // the Frame's rows used, nil: all
	n    int
	ctx  context.Context
}

// stopped returns an error wrapping the build's context's once it is
// cancelled, else nil.
func (b *builder) stopped(at string) error {
	if err := b.ctx.Err(); err != nil {
		return fmt.Errorf("data: %s: building the design stopped at %s: %w", b.src, at, err)
	}
	return nil
}

// row is the Frame's 1-based row of design row i, for messages.
func (b *builder) row(i int) int {
	if b.rows == nil {
		return i + 1
	}
	return b.rows[i] + 1
}

// Build builds the design and response from f: it checks every column
// the Spec names (missing columns, types), drops or refuses rows with
// missing or non-finite values, computes the terms' columns and
// standardises them. Every error names the file and, where one is at
// fault, the row (1-based, counting data rows) and column and the value.
func (s Spec) Build(f *Frame) (*Design, error) {
	return s.BuildContext(context.Background(), f)
}

// BuildContext is Build, stopped once ctx is cancelled with an error
// wrapping ctx's: it polls ctx before each column it checks and each term
// it plans, and every block of rows it fills (TestBuildContextStops).
func (s Spec) BuildContext(ctx context.Context, f *Frame) (*Design, error) {
	if f == nil {
		return nil, fmt.Errorf("data: Build: nil Frame")
	}
	b := &builder{f: f, spec: &s, src: f.source, ctx: ctx}
	if s.Response == nil {
		return nil, fmt.Errorf("data: %s: Spec.Response is nil: want Num, Log, Log1p or Above of the response column", b.src)
	}
	terms := make([]*term, 0, 1+len(s.Terms))
	where := make([]string, 0, 1+len(s.Terms))
	terms = append(terms, s.Response.spec())
	where = append(where, "Spec.Response "+s.Response.String())
	// The random-effect terms' columns (grouping columns and slopes) are
	// checked and filtered with the others but planned apart, after nFixed.
	var randoms []randomTerm
	var inters []int // the indices into terms of the interactions
	for j, t := range s.Terms {
		if t == nil {
			return nil, fmt.Errorf("data: %s: Spec.Terms[%d] is nil", b.src, j)
		}
		if t.spec().kind == kindInter {
			if err := b.interTerm(t.spec(), fmt.Sprintf("Spec.Terms[%d] %s", j, t)); err != nil {
				return nil, err
			}
			inters = append(inters, len(terms))
		}
		if t.spec().kind == kindRandom {
			r, err := b.randomTerm(t.spec(), fmt.Sprintf("Spec.Terms[%d] %s", j, t), randoms)
			if err != nil {
				return nil, err
			}
			randoms = append(randoms, r)
			continue
		}
		terms = append(terms, t.spec())
		where = append(where, fmt.Sprintf("Spec.Terms[%d] %s", j, t))
	}
	nFixed := len(terms)
	for k := range randoms {
		r := &randoms[k]
		r.first = len(terms)
		for _, by := range r.t.by {
			terms = append(terms, &term{kind: kindCat, col: by})
			where = append(where, fmt.Sprintf("%s, grouping column %q", r.where, by))
		}
		for _, sl := range r.t.slopes {
			terms = append(terms, sl.spec())
			where = append(where, fmt.Sprintf("%s, slope %s", r.where, sl))
		}
	}
	// An interaction's parts, after the random terms' columns: interFirst
	// maps the interaction's index in terms to its first part's.
	interFirst := make(map[int]int, len(inters))
	for _, k := range inters {
		interFirst[k] = len(terms)
		for _, p := range terms[k].parts {
			terms = append(terms, p.spec())
			where = append(where, fmt.Sprintf("%s, part %s", where[k], p))
		}
	}
	offset := -1 // Spec.Offset's index in terms
	if s.Offset != nil {
		if !s.Offset.spec().numeric() || s.Offset.spec().kind == kindAbove {
			return nil, fmt.Errorf("data: %s: Spec.Offset %s: want Num, Log or Log1p of a numeric column", b.src, s.Offset)
		}
		offset = len(terms)
		terms = append(terms, s.Offset.spec())
		where = append(where, "Spec.Offset "+s.Offset.String())
	}
	if !terms[0].numeric() {
		return nil, fmt.Errorf("data: %s: %s: the response must be Num, Log, Log1p or Above (one column)", b.src, where[0])
	}
	cols := make([]*column, len(terms))
	for k, t := range terms {
		if t.optErr != "" {
			return nil, fmt.Errorf("data: %s: %s: %s", b.src, where[k], t.optErr)
		}
		if t.kind == kindInter {
			continue // its parts have their columns
		}
		c, err := f.column(t.col)
		if err != nil {
			return nil, fmt.Errorf("%w, in %s", err, where[k])
		}
		if err := checkType(b.src, where[k], t, c); err != nil {
			return nil, err
		}
		cols[k] = c
	}
	if err := b.filter(terms, cols, where); err != nil {
		return nil, err
	}

	// Plans: the intercept, then each term's columns.
	var plans []plan
	if !s.NoIntercept {
		plans = append(plans, plan{
			names: []string{"Intercept"}, center: []float64{0}, scale: []float64{1},
			fill: func(x []float64, stride, off, lo, hi int) {
				for i := lo; i < hi; i++ {
					x[i*stride+off] = 1
				}
			},
		})
	}
	y, yname, err := b.response(terms[0], cols[0])
	if err != nil {
		return nil, err
	}
	widest, width := "", 0 // the term with the most columns, for the memory error
	for k := 1; k < nFixed; k++ {
		if err := b.stopped(where[k]); err != nil {
			return nil, err
		}
		var p plan
		var err error
		if first, ok := interFirst[k]; ok {
			n := len(terms[k].parts)
			p, err = b.interPlan(terms[first:first+n], cols[first:first+n], where[k])
		} else {
			p, err = b.plan(terms[k], cols[k], where[k])
		}
		if err != nil {
			return nil, err
		}
		if terms[k].auto && len(p.names) > maxAutoLevels {
			return nil, fmt.Errorf("data: %s: %s: text column %q, named bare in a formula, is R's factor: %d one-hot columns, more than the %d a bare text column may make (an identifier?): drop it, pool its levels with cat(%s;top=K), or write (1 | %s) for a random intercept",
				b.src, where[k], terms[k].col, len(p.names), maxAutoLevels, terms[k].col, terms[k].col)
		}
		plans = append(plans, p)
		if len(p.names) > width {
			widest, width = where[k], len(p.names)
		}
	}
	d := &Design{Y: y, N: b.n, YName: yname, Dropped: f.n - b.n, Rows: b.rows, Source: b.src, Intercept: !s.NoIntercept}
	if offset >= 0 {
		if d.Offset, err = b.values(terms[offset], cols[offset], where[offset]); err != nil {
			return nil, err
		}
	}
	for _, p := range plans {
		d.D += len(p.names)
	}
	// X is allocated in one request, which the runtime cannot refuse
	// gracefully: a categorical term on a per-row identifier asks for
	// N × N × 8 bytes. Refuse it first, by the draws' headroom rule, and
	// before anything that grows faster than the columns.
	if err := fits(b.src, float64(d.N)*float64(d.D)*8, fmt.Sprintf("the design's %d rows × %d columns (%d of them from %s)", d.N, d.D, width, widest),
		"pool a categorical term's levels (TopK), drop the term if it is an identifier, or model many levels as sparse random effects rather than one-hot columns"); err != nil {
		return nil, err
	}
	// Repeated names, through a map: linear in the columns
	// (TestBuildManyLevelsLinear).
	d.Names = make([]string, 0, d.D)
	seen := make(map[string]int, d.D)
	for _, p := range plans {
		for _, name := range p.names {
			if k, ok := seen[name]; ok {
				return nil, fmt.Errorf("data: %s: two columns are named %q (columns %d and %d): a term is repeated, and its coefficients would not be identifiable", b.src, name, k+1, len(d.Names)+1)
			}
			seen[name] = len(d.Names)
			d.Names = append(d.Names, name)
		}
		d.Center = append(d.Center, p.center...)
		d.Scale = append(d.Scale, p.scale...)
	}
	for _, r := range randoms {
		if err := b.stopped(r.where); err != nil {
			return nil, err
		}
		g, err := b.group(r, terms, cols, where)
		if err != nil {
			return nil, err
		}
		d.Groups = append(d.Groups, g)
	}
	if d.D == 0 && len(d.Groups) == 0 {
		return nil, fmt.Errorf("data: %s: the design has no columns: Spec.NoIntercept and no Spec.Terms", b.src)
	}
	d.X = prefault.Make[float64](d.N * d.D)
	if !fillParallel(b.ctx, d.X, d.N, d.D, plans) {
		return nil, b.stopped("filling the design's rows")
	}
	return d, nil
}

// fillParallel fills x block by block (blocks of rows small enough for
// the cache, each term writing its columns in turn), on up to GOMAXPROCS
// goroutines. It returns false, leaving x part filled, if ctx was
// cancelled.
func fillParallel(ctx context.Context, x []float64, n, stride int, plans []plan) bool {
	const block = 2048
	blocks := (n + block - 1) / block
	workers := min(runtime.GOMAXPROCS(0), blocks, 8)
	if n < 1<<15 {
		workers = 1
	}
	var wg sync.WaitGroup
	for w := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for k := w; k < blocks; k += workers {
				if ctx.Err() != nil {
					return
				}
				lo, hi := k*block, min(n, (k+1)*block)
				off := 0
				for _, p := range plans {
					p.fill(x, stride, off, lo, hi)
					off += len(p.names)
				}
			}
		}()
	}
	wg.Wait()
	return ctx.Err() == nil
}

// checkType checks that term t can read column c.
func checkType(src, where string, t *term, c *column) error {
	switch {
	case t.numeric():
		switch c.typ {
		case Float, Int, Bool:
			return nil
		case String:
			why := ""
			if c.note != "" {
				why = ": " + c.note
			}
			return fmt.Errorf("data: %s: %s: column %q is string, not numeric%s (for its levels: Categorical or Factor, in a formula cat(%s) or factor(%s))", src, where, c.name, why, c.name, c.name)
		}
		return fmt.Errorf("data: %s: %s: column %q is time, not numeric: use HourOfDay, DayOfWeek or Month", src, where, c.name)
	case t.kind == kindCat:
		switch c.typ {
		case String, Int, Bool:
			return nil
		case Float:
			return fmt.Errorf("data: %s: %s: column %q is float, and Categorical takes string, int or bool columns (use Num or Above for a number)", src, where, c.name)
		}
		return fmt.Errorf("data: %s: %s: column %q is time: use HourOfDay, DayOfWeek or Month", src, where, c.name)
	default:
		if c.typ != Time {
			return fmt.Errorf("data: %s: %s: column %q is %s, not time", src, where, c.name, c.typ)
		}
	}
	return nil
}

// filter finds the rows to use: it drops (DropMissing) or refuses rows
// with a missing value in any used column or a non-finite value in a
// numeric one.
func (b *builder) filter(terms []*term, cols []*column, where []string) error {
	n := b.f.n
	var drop []bool
	mark := func(k, r int, what string) error {
		if !b.spec.DropMissing {
			return fmt.Errorf("data: %s: row %d, column %q: %s, in %s (Spec.DropMissing drops such rows)", b.src, r+1, cols[k].name, what, where[k])
		}
		if drop == nil {
			drop = make([]bool, n)
		}
		drop[r] = true
		return nil
	}
	for k, c := range cols {
		if c == nil || slices.Index(cols[:k], c) >= 0 {
			continue // checked already
		}
		if err := b.stopped(where[k]); err != nil {
			return err
		}
		for r, m := range c.miss {
			if m {
				if err := mark(k, r, "missing value"); err != nil {
					return err
				}
			}
		}
		if c.typ == Float && terms[k].numeric() {
			for r, v := range c.f {
				if math.IsNaN(v) || math.IsInf(v, 0) {
					if c.miss != nil && c.miss[r] {
						continue
					}
					if err := mark(k, r, "value "+formatFloat(v)); err != nil {
						return err
					}
				}
			}
		}
	}
	b.n = n
	if drop != nil {
		b.rows = make([]int, 0, n)
		for r, dr := range drop {
			if !dr {
				b.rows = append(b.rows, r)
			}
		}
		b.n = len(b.rows)
	}
	if n == 0 {
		return fmt.Errorf("data: %s: no rows", b.src)
	}
	if b.n == 0 {
		return fmt.Errorf("data: %s: all %d rows have a missing or non-finite value in the columns used (%s)", b.src, n, usedNames(cols))
	}
	return nil
}

// usedNames lists the distinct names of cols.
func usedNames(cols []*column) string {
	var names []string
	for _, c := range cols {
		if c != nil && !slices.Contains(names, c.name) {
			names = append(names, c.name)
		}
	}
	return nameList(names, 20)
}

// values returns the numeric term's values in the rows used, transformed
// (log, log1p, above); errors name the row and the value.
func (b *builder) values(t *term, c *column, where string) ([]float64, error) {
	v := prefault.Make[float64](b.n)
	switch c.typ {
	case Float:
		if b.rows == nil {
			copy(v, c.f)
		} else {
			for i, r := range b.rows {
				v[i] = c.f[r]
			}
		}
	default:
		if b.rows == nil {
			for i, x := range c.i {
				v[i] = float64(x)
			}
		} else {
			for i, r := range b.rows {
				v[i] = float64(c.i[r])
			}
		}
	}
	switch t.kind {
	case kindLog:
		for i, x := range v {
			if !(x > 0) {
				return nil, fmt.Errorf("data: %s: row %d, column %q: log of %s, in %s", b.src, b.row(i), c.name, formatFloat(x), where)
			}
			v[i] = math.Log(x)
		}
	case kindLog1p:
		for i, x := range v {
			if !(x > -1) {
				return nil, fmt.Errorf("data: %s: row %d, column %q: log1p of %s, in %s", b.src, b.row(i), c.name, formatFloat(x), where)
			}
			v[i] = math.Log1p(x)
		}
	case kindAbove:
		for i, x := range v {
			if x > t.thr {
				v[i] = 1
			} else {
				v[i] = 0
			}
		}
	}
	return v, nil
}

// numName is the name of a numeric term's column.
func numName(t *term) string {
	switch t.kind {
	case kindLog:
		return "log(" + t.col + ")"
	case kindLog1p:
		return "log1p(" + t.col + ")"
	case kindAbove:
		return t.col + ">" + formatFloat(t.thr)
	}
	return t.col
}

// response computes y.
func (b *builder) response(t *term, c *column) ([]float64, string, error) {
	y, err := b.values(t, c, "Spec.Response "+t.String())
	return y, numName(t), err
}

// plan computes a feature term's columns.
func (b *builder) plan(t *term, c *column, where string) (plan, error) {
	switch t.kind {
	case kindNum, kindLog, kindLog1p, kindAbove:
		return b.numPlan(t, c, where)
	case kindCat:
		return b.catPlan(t, c, where)
	case kindHour:
		return b.hourPlan(t, c, where)
	}
	return b.calendarPlan(t, c)
}

// numPlan is a numeric feature, standardised unless told otherwise.
func (b *builder) numPlan(t *term, c *column, where string) (plan, error) {
	v, err := b.values(t, c, where)
	if err != nil {
		return plan{}, err
	}
	name := numName(t)
	lo, hi := slices.Min(v), slices.Max(v)
	if lo == hi {
		return plan{}, fmt.Errorf("data: %s: column %q is constant (%s in all %d rows used), in %s: its coefficient is not identifiable", b.src, name, formatFloat(lo), b.n, where)
	}
	center, scale := 0.0, 1.0
	if !b.spec.NoStandardize && t.kind != kindAbove {
		var mean float64
		for _, x := range v {
			mean += x
		}
		mean /= float64(len(v))
		var ss float64
		for _, x := range v {
			ss += (x - mean) * (x - mean)
		}
		scale = math.Sqrt(ss / float64(len(v)-1))
		if !b.spec.NoIntercept {
			center = mean
		}
		if !(scale > 0) || math.IsInf(scale, 0) || math.IsInf(mean, 0) {
			return plan{}, fmt.Errorf("data: %s: column %q: cannot standardise (mean %g, standard deviation %g), in %s", b.src, name, mean, scale, where)
		}
	}
	inv := 1 / scale
	return plan{
		names: []string{name}, center: []float64{center}, scale: []float64{scale},
		fill: func(x []float64, stride, off, lo, hi int) {
			for i := lo; i < hi; i++ {
				x[i*stride+off] = (v[i] - center) * inv
			}
		},
	}, nil
}

// hourPlan is sin and cos of the hour of day.
func (b *builder) hourPlan(t *term, c *column, where string) (plan, error) {
	rows := b.rows
	at := func(i int) int64 {
		if rows == nil {
			return c.i[i]
		}
		return c.i[rows[i]]
	}
	_, first := splitMicros(at(0))
	constant := true
	for i := 1; i < b.n && constant; i++ {
		_, rem := splitMicros(at(i))
		constant = rem == first
	}
	if constant {
		return plan{}, fmt.Errorf("data: %s: column %q: every time of day in the %d rows used is %s, so %s.hour.sin and .cos are constant, in %s: their coefficients are not identifiable", b.src, c.name, b.n, formatHour(float64(first)/microsPerHour), t.col, where)
	}
	return plan{
		names:  []string{t.col + ".hour.sin", t.col + ".hour.cos"},
		center: []float64{0, 0}, scale: []float64{1, 1},
		fill: func(x []float64, stride, off, lo, hi int) {
			// Timestamps repeat (schedules): reuse the last sin and cos.
			last, s, co := int64(-1), 0.0, 0.0
			for i := lo; i < hi; i++ {
				_, rem := splitMicros(at(i))
				if rem != last {
					last = rem
					s, co = math.Sincos(2 * math.Pi * (float64(rem) / microsPerHour) / 24)
				}
				x[i*stride+off] = s
				x[i*stride+off+1] = co
			}
		},
	}, nil
}

// formatHour formats an hour of day h as hh:mm:ss.
func formatHour(h float64) string {
	s := int(math.Round(h * 3600))
	return fmt.Sprintf("%02d:%02d:%02d", s/3600, s/60%60, s%60)
}

// calendarPlan is the one-hot weekday or month.
func (b *builder) calendarPlan(t *term, c *column) (plan, error) {
	codes := make([]uint8, b.n)
	var counts [12]int
	for i := range b.n {
		r := i
		if b.rows != nil {
			r = b.rows[i]
		}
		day, _ := splitMicros(c.i[r])
		var k int
		if t.kind == kindDow {
			k = weekday(day)
		} else {
			k = civilMonth(day) - 1
		}
		codes[i] = uint8(k)
		counts[k]++
	}
	labels, prefix := weekdayNames[:], t.col+".dow="
	if t.kind == kindMonth {
		labels, prefix = monthNames[:], t.col+".month="
	}
	// The reference is the first level present; the rest get columns.
	var col [12]int8
	var p plan
	ref := true
	for k := range labels {
		col[k] = -1
		if counts[k] == 0 {
			continue
		}
		if ref {
			ref = false
			continue
		}
		col[k] = int8(len(p.names))
		p.names = append(p.names, prefix+labels[k])
		p.center = append(p.center, 0)
		p.scale = append(p.scale, 1)
	}
	p.fill = func(x []float64, stride, off, lo, hi int) {
		for i := lo; i < hi; i++ {
			if k := col[codes[i]]; k >= 0 {
				x[i*stride+off+int(k)] = 1
			}
		}
	}
	return p, nil
}

// level is a categorical level in the rows used.
type level struct {
	name  string
	num   int64 // Int and Bool columns: the value, for ordering
	count int
	code  int32 // output column, −1 for the reference
}

// catPlan is the one-hot encoding of a categorical column.
func (b *builder) catPlan(t *term, c *column, where string) (plan, error) {
	codes, levels := b.levelCodes(c)
	if len(levels) == 1 {
		return plan{}, fmt.Errorf("data: %s: column %q has the single level %q in all %d rows used, in %s: its one-hot columns would be constant", b.src, c.name, levels[0].name, b.n, where)
	}
	return b.catColumns(t, c, where, codes, levels)
}

// levelCodes returns the level of each row used of a String, Int or Bool
// column and the levels present, String levels in the column's order of
// codes and Int and Bool levels in order of first appearance.
func (b *builder) levelCodes(c *column) ([]int32, []level) {
	codes := make([]int32, b.n)
	var levels []level
	switch c.typ {
	case String:
		counts := make([]int, len(c.levels))
		for i := range b.n {
			r := i
			if b.rows != nil {
				r = b.rows[i]
			}
			k := c.codes[r]
			codes[i] = k
			counts[k]++
		}
		// Keep only levels present; renumber.
		renum := make([]int32, len(c.levels))
		for k, n := range counts {
			renum[k] = -1
			if n > 0 {
				renum[k] = int32(len(levels))
				levels = append(levels, level{name: c.levels[k], count: n})
			}
		}
		for i, k := range codes {
			codes[i] = renum[k]
		}
	default: // Int, Bool
		index := make(map[int64]int32)
		for i := range b.n {
			r := i
			if b.rows != nil {
				r = b.rows[i]
			}
			v := c.i[r]
			k, ok := index[v]
			if !ok {
				k = int32(len(levels))
				name := strconv.FormatInt(v, 10)
				if c.typ == Bool {
					name = strconv.FormatBool(v != 0)
				}
				levels = append(levels, level{name: name, num: v})
				index[v] = k
			}
			levels[k].count++
			codes[i] = k
		}
	}
	return codes, levels
}

// catColumns is catPlan's columns for the rows' codes into levels.
func (b *builder) catColumns(t *term, c *column, where string, codes []int32, levels []level) (plan, error) {
	// By frequency, ties by name: for TopK and the default reference.
	byFreq := make([]int, len(levels))
	for k := range byFreq {
		byFreq[k] = k
	}
	slices.SortFunc(byFreq, func(i, j int) int {
		if d := cmp.Compare(levels[j].count, levels[i].count); d != 0 {
			return d
		}
		return cmp.Compare(levels[i].name, levels[j].name)
	})
	// group[k]: the level's group index into groups.
	var groups []catGroup
	group0 := make([]int32, len(levels))
	keep := len(levels)
	if t.topK > 0 && t.topK < len(levels) {
		keep = t.topK
	}
	otherName := "other"
	for _, k := range byFreq[:keep] {
		if levels[k].name == otherName {
			otherName = "(other)"
		}
	}
	for rank, k := range byFreq {
		if rank < keep {
			group0[k] = int32(len(groups))
			groups = append(groups, catGroup{name: levels[k].name, num: levels[k].num, count: levels[k].count})
			continue
		}
		if rank == keep {
			groups = append(groups, catGroup{name: otherName, other: true})
		}
		group0[k] = int32(len(groups) - 1)
		groups[len(groups)-1].count += levels[k].count
	}
	// The reference.
	ref := -1
	if t.hasRef {
		for g := range groups {
			if groups[g].name == t.ref {
				ref = g
			}
		}
		if ref < 0 {
			for _, lv := range levels {
				if lv.name == t.ref {
					return plan{}, fmt.Errorf("data: %s: %s: level %q of column %q is pooled into %q by TopK(%d); the reference must be one of the kept levels %s", b.src, where, t.ref, c.name, otherName, t.topK, groupList(groups, 10))
				}
			}
			return plan{}, fmt.Errorf("data: %s: %s: column %q has no level %q in the rows used (the most frequent: %s)", b.src, where, c.name, t.ref, groupList(groups, 10))
		}
	}
	// Columns in the order of the names (integers numerically), other last.
	numeric := c.typ != String
	byName := func(i, j int) int {
		gi, gj := groups[i], groups[j]
		if gi.other != gj.other {
			if gi.other {
				return 1
			}
			return -1
		}
		if numeric {
			return cmp.Compare(gi.num, gj.num)
		}
		return strings.Compare(gi.name, gj.name)
	}
	switch {
	case t.hasRef:
	case t.refFirst:
		ref = 0
		for g := range groups {
			if byName(g, ref) < 0 {
				ref = g
			}
		}
	default:
		ref = 0
		for g := range groups {
			if groups[g].count > groups[ref].count || groups[g].count == groups[ref].count && groups[g].name < groups[ref].name {
				ref = g
			}
		}
	}
	order := make([]int, 0, len(groups))
	for g := range groups {
		if g != ref {
			order = append(order, g)
		}
	}
	slices.SortFunc(order, byName)
	outCol := make([]int32, len(groups))
	for g := range outCol {
		outCol[g] = -1
	}
	var p plan
	for k, g := range order {
		outCol[g] = int32(k)
		p.names = append(p.names, c.name+"="+groups[g].name)
		p.center = append(p.center, 0)
		p.scale = append(p.scale, 1)
	}
	// Level code → output column.
	lut := make([]int32, len(levels))
	for k := range levels {
		lut[k] = outCol[group0[k]]
	}
	p.fill = func(x []float64, stride, off, lo, hi int) {
		for i := lo; i < hi; i++ {
			if k := lut[codes[i]]; k >= 0 {
				x[i*stride+off+int(k)] = 1
			}
		}
	}
	return p, nil
}

// catGroup is a level after pooling: a level, or "other".
type catGroup struct {
	name  string
	num   int64
	count int
	other bool
}

// groupList lists up to max groups, the most frequent first, with their
// counts.
func groupList(groups []catGroup, max int) string {
	g := slices.Clone(groups)
	slices.SortStableFunc(g, func(a, b catGroup) int { return cmp.Compare(b.count, a.count) })
	var sb strings.Builder
	for k, x := range g {
		if k == max {
			fmt.Fprintf(&sb, " … (%d more)", len(g)-max)
			break
		}
		if k > 0 {
			sb.WriteString(", ")
		}
		fmt.Fprintf(&sb, "%q (%d rows)", x.name, x.count)
	}
	return sb.String()
}

// interTerm checks an interaction's parts (before any column is read):
// each a fixed-effect term of one column, none random, none itself an
// interaction (write a:b:c as one Interaction of three).
func (b *builder) interTerm(t *term, where string) error {
	if t.optErr != "" {
		return fmt.Errorf("data: %s: %s: %s", b.src, where, t.optErr)
	}
	for j, p := range t.parts {
		if p == nil {
			return fmt.Errorf("data: %s: %s: part %d is nil", b.src, where, j)
		}
		switch k := p.spec(); {
		case k.kind == kindRandom:
			return fmt.Errorf("data: %s: %s: part %s is a random-effect or NormalLevels term; an interaction multiplies fixed-effect terms", b.src, where, p)
		case k.kind == kindInter:
			return fmt.Errorf("data: %s: %s: part %s is an interaction: write one Interaction of all the parts", b.src, where, p)
		}
		for _, q := range t.parts[:j] {
			if q != nil && q.String() == p.String() {
				return fmt.Errorf("data: %s: %s: part %s appears twice", b.src, where, p)
			}
		}
	}
	return nil
}

// interPlan is an interaction's columns: the products of its parts'
// columns, each part on its own scale, every combination in the order
// of the parts' columns (the first part's slowest). A product column is
// standardised as a Num feature is unless it holds only 0 and 1.
func (b *builder) interPlan(parts []*term, cols []*column, where string) (plan, error) {
	raw := *b.spec
	raw.NoStandardize = true
	rb := *b
	rb.spec = &raw
	names := []string{""}
	vals := [][]float64{nil} // nil: all ones
	for k, t := range parts {
		p, err := rb.plan(t, cols[k], where)
		if err != nil {
			return plan{}, err
		}
		w := len(p.names)
		m := make([]float64, b.n*w)
		p.fill(m, w, 0, 0, b.n)
		if err := fits(b.src, float64(len(names)*w)*float64(b.n)*8, fmt.Sprintf("the %d × %d columns of %s", len(names), w, where), "interact fewer levels (TopK)"); err != nil {
			return plan{}, err
		}
		nn := make([]string, 0, len(names)*w)
		nv := make([][]float64, 0, len(names)*w)
		for a := range names {
			for c := range w {
				v := make([]float64, b.n)
				for i := range v {
					x := m[i*w+c]
					if vals[a] != nil {
						x *= vals[a][i]
					}
					v[i] = x
				}
				name := p.names[c]
				if k > 0 {
					name = names[a] + ":" + name
				}
				nn = append(nn, name)
				nv = append(nv, v)
			}
		}
		names, vals = nn, nv
	}
	out := plan{names: names, center: make([]float64, len(names)), scale: make([]float64, len(names))}
	for j, v := range vals {
		lo, hi := slices.Min(v), slices.Max(v)
		if lo == hi {
			return plan{}, fmt.Errorf("data: %s: column %q is constant (%s in all %d rows used), in %s: its coefficient is not identifiable (a pair of levels never seen together?)", b.src, names[j], formatFloat(lo), b.n, where)
		}
		out.scale[j] = 1
		indicator := !slices.ContainsFunc(v, func(x float64) bool { return x != 0 && x != 1 })
		if b.spec.NoStandardize || indicator {
			continue
		}
		var mean, ss float64
		for _, x := range v {
			mean += x
		}
		mean /= float64(len(v))
		for _, x := range v {
			ss += (x - mean) * (x - mean)
		}
		scale := math.Sqrt(ss / float64(len(v)-1))
		if !(scale > 0) || math.IsInf(scale, 0) || math.IsInf(mean, 0) {
			return plan{}, fmt.Errorf("data: %s: column %q: cannot standardise (mean %g, standard deviation %g), in %s", b.src, names[j], mean, scale, where)
		}
		if !b.spec.NoIntercept {
			out.center[j] = mean
		}
		out.scale[j] = scale
	}
	out.fill = func(x []float64, stride, off, lo, hi int) {
		for j, v := range vals {
			c, inv := out.center[j], 1/out.scale[j]
			for i := lo; i < hi; i++ {
				x[i*stride+off+j] = (v[i] - c) * inv
			}
		}
	}
	return out, nil
}
