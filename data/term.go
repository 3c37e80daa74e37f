// Copyright ©2026 The exactmh Authors. All rights reserved.
// Use of this source code is governed by a BSD-style
// license that can be found in the LICENSE file.

package data

import (
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
)

// Term is one piece of a design: the response, a group of feature
// columns computed from one column of a Frame, or a random-effect term.
// Terms are built by Num, Log, Log1p, Above, Categorical, HourOfDay,
// DayOfWeek, Month, Random and RandomSlopes; the interface is sealed.
type Term interface {
	// String describes the term as written, e.g. `Log("distance")`.
	String() string
	spec() *term
}

type termKind uint8

const (
	kindNum termKind = iota
	kindLog
	kindLog1p
	kindAbove
	kindCat
	kindHour
	kindDow
	kindMonth
	kindRandom
	kindInter
)

// term is every Term.
type term struct {
	kind   termKind
	col    string
	thr    float64 // Above
	ref    string  // Categorical: the reference level, if hasRef
	hasRef bool
	// Categorical: the reference is the first level in the columns'
	// order (FirstReference), not the most frequent.
	refFirst bool
	// Num: written as a bare column name in a formula, which Formula.Spec
	// reads as Factor where the column holds text (R's reading).
	bare bool
	// Categorical: made by Formula.Spec from a bare text column (Factor),
	// whose levels maxAutoLevels caps.
	auto   bool
	topK   int    // Categorical: 0 for all levels
	optErr string // an invalid option, reported by Build
	// Random: the grouping columns (their interaction if several), the
	// slope terms and whether the term has a random intercept.
	by     []string
	slopes []Term
	noInt  bool
	corr   bool // the term's effects correlated (Correlated)
	// Categorical with NormalLevels: the prior sd of each level's effect
	// (the term is then built as a Group, as Random's are).
	fixedSD float64
	// Interaction: the terms multiplied, in order.
	parts []Term
}

func (t *term) spec() *term { return t }

func (t *term) String() string {
	q := strconv.Quote(t.col)
	switch t.kind {
	case kindNum:
		return "Num(" + q + ")"
	case kindLog:
		return "Log(" + q + ")"
	case kindLog1p:
		return "Log1p(" + q + ")"
	case kindAbove:
		return "Above(" + q + ", " + formatFloat(t.thr) + ")"
	case kindCat:
		s := "Categorical(" + q
		if t.hasRef {
			s += ", Reference(" + strconv.Quote(t.ref) + ")"
		}
		if t.refFirst {
			s += ", FirstReference()"
		}
		if t.topK != 0 {
			s += ", TopK(" + strconv.Itoa(t.topK) + ")"
		}
		return s + ")"
	case kindHour:
		return "HourOfDay(" + q + ")"
	case kindDow:
		return "DayOfWeek(" + q + ")"
	case kindMonth:
		return "Month(" + q + ")"
	case kindRandom:
		if t.fixedSD != 0 {
			return "Categorical(" + q + ", NormalLevels(" + formatFloat(t.fixedSD) + "))"
		}
		return t.lme4()
	case kindInter:
		ps := make([]string, len(t.parts))
		for k, p := range t.parts {
			ps[k] = "<nil>"
			if p != nil {
				ps[k] = p.String()
			}
		}
		return "Interaction(" + strings.Join(ps, ", ") + ")"
	}
	return "Term(" + q + ")"
}

// numeric reports whether the term reads its column as a number.
func (t *term) numeric() bool { return t.kind <= kindAbove }

// Num is a numeric column (Float, Int, or Bool as 0 and 1) as it is:
// one feature column named after the column, standardised unless
// Spec.NoStandardize; as the response, y as it is.
func Num(col string) Term { return &term{kind: kindNum, col: col} }

// Log is log(x) of a numeric column, named "log(col)"; a value x ≤ 0 in
// a row used is an error naming the row. As a feature it is standardised
// unless Spec.NoStandardize.
func Log(col string) Term { return &term{kind: kindLog, col: col} }

// Log1p is log(1 + x) of a numeric column, named "log1p(col)", for
// counts with zeros; a value x ≤ −1 is an error naming the row.
func Log1p(col string) Term { return &term{kind: kindLog1p, col: col} }

// Above is 1 where the numeric column is greater than threshold and 0
// elsewhere, named "col>threshold": a binary response such as
// Above("delay", 15), or an indicator feature (never standardised).
func Above(col string, threshold float64) Term {
	return &term{kind: kindAbove, col: col, thr: threshold}
}

// CatOption modifies a Categorical term. Each option may be given once: a
// repeated one (TopK twice, say) is an error naming it, rather than the
// last one silently winning.
type CatOption struct {
	name  string
	apply func(*term)
}

// Reference sets the reference level of a Categorical term: the level
// without a column of its own, which the intercept stands for. The
// default is the most frequent level in the rows used (ties broken by
// name), counting "other" as a level under TopK. A level the column does
// not have in the rows used is an error listing the most frequent ones.
func Reference(level string) CatOption {
	return CatOption{"Reference", func(t *term) { t.ref, t.hasRef = level, true }}
}

// FirstReference makes the reference level of a Categorical term the
// first in the order of its columns (names; integers numerically; false
// before true) instead of the most frequent: R's treatment contrasts for
// factor(), so that each level's coefficient is its difference from the
// level R would leave out. Under TopK "other" is never the reference.
// Reference and FirstReference together are an error.
func FirstReference() CatOption {
	return CatOption{"FirstReference", func(t *term) { t.refFirst = true }}
}

// Factor is Categorical(col, FirstReference()): a formula's factor(col),
// and what a formula reads a bare text column as.
func Factor(col string) Term { return Categorical(col, FirstReference()) }

// TopK keeps the k most frequent levels of a Categorical term (ties broken
// by name) and pools the rest into one level named "other" ("(other)" if
// the column has a level called other among the k). k < 1 is an error.
func TopK(k int) CatOption {
	return CatOption{"TopK", func(t *term) {
		if k < 1 {
			t.optErr = fmt.Sprintf("TopK(%d): want k ≥ 1", k)
		}
		t.topK = k
	}}
}

// Categorical is a one-hot encoding of a String, Int or Bool column: one
// 0/1 column per level in the rows used except the reference, named
// "col=level", in the order of the levels' names (integers in numeric
// order, false before true), "other" last; never standardised. A Float
// column is an error: its distinct values are not categories (round
// them into an integer column, or use Num or Above), and so is a Time
// column (use HourOfDay, DayOfWeek or Month). A column with a single level
// in the rows used is an error: its only column would be constant.
func Categorical(col string, opts ...CatOption) Term {
	t := &term{kind: kindCat, col: col}
	for j, o := range opts {
		if o.apply == nil {
			continue
		}
		if k := slices.IndexFunc(opts[:j], func(p CatOption) bool { return p.name == o.name }); k >= 0 && t.optErr == "" {
			t.optErr = fmt.Sprintf("option %s given twice (options %d and %d): give it once", o.name, k+1, j+1)
		}
		o.apply(t)
	}
	if t.hasRef && t.refFirst && t.optErr == "" {
		t.optErr = "Reference and FirstReference both choose the reference level: give one"
	}
	if t.fixedSD != 0 {
		if t.hasRef || t.topK != 0 {
			t.optErr = "NormalLevels keeps every level, without a reference: TopK and Reference do not apply"
		} else if t.refFirst {
			t.optErr = "NormalLevels keeps every level, without a reference: FirstReference does not apply"
		}
		t.kind, t.by = kindRandom, []string{strings.TrimSpace(col)}
	}
	return t
}

// NormalLevels makes a Categorical term a fixed effect of every level —
// no reference level, no TopK — each level's effect with the normal prior
// N(0, sd²): a high-cardinality categorical (every airport) without a
// dense column per level. Build puts it into Design.Groups with
// Group.FixedSD = sd, as it does a random intercept, never into X; the
// model samples it with the random effects' machinery, its scale fixed
// at sd (model.Factor.FixedTau). sd must be finite and > 0.
func NormalLevels(sd float64) CatOption {
	return CatOption{"NormalLevels", func(t *term) {
		if !(sd > 0) || math.IsInf(sd, 0) {
			t.optErr = fmt.Sprintf("NormalLevels(%v): want a finite sd > 0", sd)
			sd = math.NaN() // still a Group, to report the error
		}
		t.fixedSD = sd
	}}
}

// HourOfDay is the time of day of a Time column on the circle: two
// columns, "col.hour.sin" and "col.hour.cos", sin and cos of 2π·h/24 with
// h the hour of the wall clock including minutes, seconds and
// microseconds as fractions (h = 13.5 at 13:30). Not standardised.
func HourOfDay(col string) Term { return &term{kind: kindHour, col: col} }

// DayOfWeek is a one-hot encoding of the weekday of a Time column:
// columns "col.dow=Tue" … "col.dow=Sun" with Monday the reference. Only
// weekdays present in the rows used get a column; without a Monday the
// first day present (in Monday … Sunday order) is the reference.
func DayOfWeek(col string) Term { return &term{kind: kindDow, col: col} }

// Month is a one-hot encoding of the month of a Time column: columns
// "col.month=Feb" … "col.month=Dec" with January the reference. As for
// DayOfWeek, only months present get a column, and without a January the
// first month present is the reference.
func Month(col string) Term { return &term{kind: kindMonth, col: col} }

// Random is a random-effect term in lme4's notation (1 + x | g): a random
// intercept and a random slope on each of slopes per level of the
// grouping factor by, the effects of a factor's levels drawn from one
// normal law per term whose scale τ is a parameter of the model. by is
// one column (String, Int or Bool), or several joined by ':' for their
// interaction, lme4's (1 | a:b), whose levels are the combinations
// present, named "ATL:JFK"; a nested factor (1 | a/b) is the two terms
// Random("a") and Random("a:b"). Every level present in the rows used
// is a level (no pooling, no reference level). The slopes are numeric
// terms (Num, Log, Log1p, Above), standardised as features are.
//
// Build puts the term into Design.Groups, never into X: a datum's row
// of the model holds one block per term at its level, so no N × G matrix
// is built. String writes the term as lme4 does, e.g.
// "(1 + log(distance) | origin)".
func Random(by string, slopes ...Term) Term {
	return &term{kind: kindRandom, col: by, by: splitBy(by), slopes: slopes}
}

// RandomSlopes is Random without the random intercept, lme4's
// (0 + x | g).
func RandomSlopes(by string, slopes ...Term) Term {
	t := Random(by, slopes...).spec()
	t.noInt = true
	return t
}

// Correlated returns the random-effect term t (Random or RandomSlopes)
// with its effects at each level correlated, as lme4 and brms read
// (1 + x | g): jointly normal with an LKJ prior on their correlation
// matrix (model.Factor.Correlated), where Random's are independent,
// lme4's (1 + x || g). Of another term it returns a term whose Build
// fails with the reason.
func Correlated(t Term) Term {
	s, ok := t.(*term)
	if !ok || s == nil || s.kind != kindRandom {
		c := &term{kind: kindRandom, optErr: fmt.Sprintf("Correlated(%v): not a random-effect term (Random or RandomSlopes)", t)}
		return c
	}
	c := *s
	c.corr = true
	return &c
}

// Interaction is the product of terms, R's a:b: one column per
// combination of the parts' columns, named by joining their names with
// ':' — "x1:x2" for two numbers, "origin=ATL:x1" for a categorical and a
// number (one column per level but the reference), "origin=ATL:month=Feb"
// for two one-hot terms. Each part is any fixed-effect term (Num, Log,
// Log1p, Above, Categorical without NormalLevels, HourOfDay, DayOfWeek,
// Month), multiplied on its own scale (never standardised); the product
// is then standardised as Num is, unless every value is 0 or 1 (an
// indicator), as Above is not. Main effects are not implied (write them
// as terms of their own: R's a*b is a, b and Interaction(a, b)). A
// product column constant in the rows used — a pair of levels that never
// occurs together — is an error naming it. At least two parts.
func Interaction(parts ...Term) Term {
	t := &term{kind: kindInter, parts: parts}
	if len(parts) < 2 {
		t.optErr = fmt.Sprintf("Interaction of %d terms: want at least two", len(parts))
	}
	return t
}

// splitBy splits a grouping factor "a:b" into its columns, trimmed.
func splitBy(by string) []string {
	parts := strings.Split(by, ":")
	for i, p := range parts {
		parts[i] = strings.TrimSpace(p)
	}
	return parts
}

// lme4 writes a random-effect term in lme4's notation.
func (t *term) lme4() string {
	var parts []string
	if t.noInt {
		parts = append(parts, "0")
	} else {
		parts = append(parts, "1")
	}
	for _, s := range t.slopes {
		if s == nil {
			parts = append(parts, "<nil>")
			continue
		}
		parts = append(parts, numName(s.spec()))
	}
	bar := " | " // one effect, or correlated effects
	if !t.corr && effects(t) > 1 {
		bar = " || " // independent effects
	}
	return "(" + strings.Join(parts, " + ") + bar + strings.Join(t.by, ":") + ")"
}

// formatFloat formats a threshold for names and messages.
func formatFloat(v float64) string { return strconv.FormatFloat(v, 'g', -1, 64) }

var weekdayNames = [7]string{"Mon", "Tue", "Wed", "Thu", "Fri", "Sat", "Sun"}

var monthNames = [12]string{"Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"}
