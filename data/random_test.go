// Copyright ©2026 The exactmh Authors. All rights reserved.
// Use of this source code is governed by a BSD-style
// license that can be found in the LICENSE file.

package data

import (
	"math"
	"slices"
	"testing"
)

// TestRandomTerms builds random intercepts, a random slope, crossed and
// interaction factors from the small table and checks every row's level,
// the level names and counts, the slope's standardisation and that X
// holds the fixed effects alone.
func TestRandomTerms(t *testing.T) {
	for _, name := range smallFiles {
		t.Run(name, func(t *testing.T) {
			f := read(t, name, nil)
			d, err := Spec{
				Response: Above("delay", 15),
				Terms: []Term{
					Log("distance"),
					Random("origin", Log("distance")),
					Random("destination"),
					RandomSlopes("origin : destination", Num("load")),
				},
			}.Build(f)
			if err != nil {
				t.Fatal(err)
			}
			if d.D != 2 || !slices.Equal(d.Names, []string{"Intercept", "log(distance)"}) {
				t.Fatalf("fixed columns %v, want the intercept and log(distance)", d.Names)
			}
			if len(d.Groups) != 3 {
				t.Fatalf("%d groups, want 3", len(d.Groups))
			}
			origin, dest, inter := d.Groups[0], d.Groups[1], d.Groups[2]
			if origin.Term != "(1 + log(distance) || origin)" || origin.Correlated || inter.Term != "(0 + load | origin:destination)" {
				t.Errorf("terms %q, %q", origin.Term, inter.Term)
			}
			if !slices.Equal(origin.Levels, []string{"ATL", "BOS", "DFW", "ORD", "SEA"}) {
				t.Errorf("origin levels %v", origin.Levels)
			}
			if !slices.Equal(dest.Levels, []string{"ATL", "BOS", "DFW", "ORD", "SEA"}) {
				t.Errorf("destination levels %v", dest.Levels)
			}
			if !origin.Intercept || inter.Intercept {
				t.Errorf("intercepts %v %v", origin.Intercept, inter.Intercept)
			}
			pairs := map[string]int{}
			for _, r := range small {
				pairs[r.origin+":"+r.destination]++
			}
			if len(inter.Levels) != len(pairs) || !slices.IsSorted(inter.Levels) {
				t.Errorf("interaction levels %v, want the %d pairs present, sorted", inter.Levels, len(pairs))
			}
			for i, r := range small {
				if got := origin.Levels[origin.Index[i]]; got != r.origin {
					t.Errorf("row %d: origin %s, want %s", i+1, got, r.origin)
				}
				if got := dest.Levels[dest.Index[i]]; got != r.destination {
					t.Errorf("row %d: destination %s, want %s", i+1, got, r.destination)
				}
				if got := inter.Levels[inter.Index[i]]; got != r.origin+":"+r.destination {
					t.Errorf("row %d: interaction %s", i+1, got)
				}
				if got, want := inter.Counts[inter.Index[i]], pairs[r.origin+":"+r.destination]; got != want {
					t.Errorf("row %d: count %d, want %d", i+1, got, want)
				}
				// The slope is log(distance) standardised as the fixed column.
				if got, want := origin.Slopes[0][i], d.X[i*d.D+1]; math.Abs(got-want) > 1e-12 {
					t.Errorf("row %d: slope %v, want the fixed column's %v", i+1, got, want)
				}
				if got, want := inter.Slopes[0][i], (r.load-inter.SlopeCenter[0])/inter.SlopeScale[0]; math.Abs(got-want) > 1e-12 {
					t.Errorf("row %d: load slope %v, want %v", i+1, got, want)
				}
			}
			if origin.SlopeNames[0] != "log(distance)" || origin.SlopeCenter[0] != d.Center[1] || origin.SlopeScale[0] != d.Scale[1] {
				t.Errorf("slope %s centre %v scale %v, want the fixed column's %v %v", origin.SlopeNames[0], origin.SlopeCenter[0], origin.SlopeScale[0], d.Center[1], d.Scale[1])
			}
			if c := d.Column(1); len(c) != d.N || c[3] != d.X[3*d.D+1] {
				t.Errorf("Column(1) = %v", c)
			}
		})
	}
}

// TestRandomTermsOnly builds a design whose only terms are random: X
// has no columns, and Build does not refuse it.
func TestRandomTermsOnly(t *testing.T) {
	f := read(t, "small.parquet", nil)
	d, err := Spec{Response: Above("delay", 15), NoIntercept: true, Terms: []Term{Random("late")}}.Build(f)
	if err != nil {
		t.Fatal(err)
	}
	if d.D != 0 || len(d.Groups) != 1 || !slices.Equal(d.Groups[0].Levels, []string{"false", "true"}) {
		t.Fatalf("D = %d, groups %+v", d.D, d.Groups)
	}
}

// TestRandomTermErrors checks that each malformed random-effect term is
// refused with a message naming the term and the column.
func TestRandomTermErrors(t *testing.T) {
	f := read(t, "small.parquet", nil)
	for _, c := range []struct {
		terms []Term
		parts []string
	}{
		{[]Term{Random("airport")}, []string{`no column "airport"`, "(1 | airport)", "grouping column"}},
		{[]Term{Random("load")}, []string{`column "load" is float`, "(1 | load)"}},
		{[]Term{Random("date")}, []string{`column "date" is time`}},
		{[]Term{Random("origin", Num("origin"))}, []string{`column "origin" is string`, "slope"}},
		{[]Term{Random("origin", Categorical("destination"))}, []string{"slope", "not numeric", "Random(\"destination:origin\")"}},
		{[]Term{RandomSlopes("origin")}, []string{"neither a random intercept nor a slope"}},
		{[]Term{Random("origin:")}, []string{"empty grouping column"}},
		{[]Term{Random("origin"), Random("origin", Num("load"))}, []string{`both group by "origin"`}},
		{[]Term{Random("origin", Num("load"), Num("load"))}, []string{"appears twice"}},
		{[]Term{Random("origin", nil)}, []string{"slope 0 is nil"}},
	} {
		_, err := Spec{Response: Above("delay", 15), Terms: c.terms}.Build(f)
		wantErr(t, err, c.parts...)
	}
}

// TestNormalLevels builds a categorical of every level with a normal
// prior (Categorical with NormalLevels): a Group with FixedSD and every
// level, no column in X, written as the Categorical it is; and refuses a
// non-positive sd, TopK and Reference with it.
func TestNormalLevels(t *testing.T) {
	f := read(t, "small.parquet", nil)
	d, err := Spec{Response: Above("delay", 15), Terms: []Term{Log("distance"), Categorical("origin", NormalLevels(1.5))}}.Build(f)
	if err != nil {
		t.Fatal(err)
	}
	if d.D != 2 || len(d.Groups) != 1 {
		t.Fatalf("D = %d (%v), %d groups: want the intercept and log(distance) in X and one group", d.D, d.Names, len(d.Groups))
	}
	g := d.Groups[0]
	if g.FixedSD != 1.5 || !g.Intercept || g.Name != "origin" || g.Term != `Categorical("origin", NormalLevels(1.5))` || len(g.Slopes) != 0 {
		t.Errorf("group %+v", g)
	}
	if !slices.Equal(g.Levels, []string{"ATL", "BOS", "DFW", "ORD", "SEA"}) {
		t.Errorf("levels %v, want every origin", g.Levels)
	}
	for i, r := range small {
		if got := g.Levels[g.Index[i]]; got != r.origin {
			t.Errorf("row %d: origin %s, want %s", i+1, got, r.origin)
		}
	}
	for _, c := range []struct {
		term  Term
		parts []string
	}{
		{Categorical("origin", NormalLevels(0)), []string{"NormalLevels(0): want a finite sd > 0"}},
		{Categorical("origin", NormalLevels(math.Inf(1))), []string{"NormalLevels(+Inf)"}},
		{Categorical("origin", NormalLevels(1), TopK(2)), []string{"TopK and Reference do not apply", `Categorical("origin"`}},
		{Categorical("origin", Reference("ATL"), NormalLevels(1)), []string{"TopK and Reference do not apply"}},
		{Categorical("load", NormalLevels(1)), []string{`column "load" is float`}},
	} {
		_, err := Spec{Response: Above("delay", 15), Terms: []Term{c.term}}.Build(f)
		wantErr(t, err, c.parts...)
	}
}

// TestRandomCorrelated builds (1 + log(distance) | origin) from a formula
// and from Correlated(Random(…)) and checks that its Group is Correlated
// with the term written with one '|', and (1 + log(distance) || origin)
// is not.
func TestRandomCorrelated(t *testing.T) {
	f := read(t, smallFiles[0], nil)
	fm, err := ParseFormula("delay > 15 ~ (1 + log(distance) | origin) + (1 + log(distance) || destination)")
	if err != nil {
		t.Fatal(err)
	}
	for _, spec := range []Spec{fm.Spec(f), {Response: Above("delay", 15),
		Terms: []Term{Correlated(Random("origin", Log("distance"))), Random("destination", Log("distance"))}}} {
		d, err := spec.Build(f)
		if err != nil {
			t.Fatal(err)
		}
		o, g := d.Groups[0], d.Groups[1]
		if !o.Correlated || o.Term != "(1 + log(distance) | origin)" || g.Correlated || g.Term != "(1 + log(distance) || destination)" {
			t.Errorf("groups %q (correlated %t), %q (%t): want the first correlated alone", o.Term, o.Correlated, g.Term, g.Correlated)
		}
	}
}
