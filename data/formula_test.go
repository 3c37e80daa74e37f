// Copyright ©2026 The exactmh Authors. All rights reserved.
// Use of this source code is governed by a BSD-style
// license that can be found in the LICENSE file.

package data

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
)

// termStrings writes terms as their String does.
func termStrings(ts []Term) []string {
	var out []string
	for _, t := range ts {
		out = append(out, t.String())
	}
	return out
}

// TestParseFormula parses formulas as lme4 and brms write them into the
// terms of the comma form (ParseTerms) that mean the same design.
func TestParseFormula(t *testing.T) {
	for _, c := range []struct {
		formula, terms string // terms: ParseTerms' list of the same design
		noInt, dot     bool
		offset         string
		cols           []string
	}{
		{formula: "y ~ x1 + log(x2) + cat(c) + (1 || g) + (1 | h)", terms: "x1,log(x2),cat(c),(1|g),(1|h)", cols: []string{"y", "x1", "x2", "c", "g", "h"}},
		{formula: "y~x1", terms: "x1", cols: []string{"y", "x1"}},
		{formula: "delay>15 ~ 1", terms: "", cols: []string{"delay"}},
		{formula: "y ~ -1 + x1", terms: "x1", noInt: true, cols: []string{"y", "x1"}},
		{formula: "y ~ x1 - 1", terms: "x1", noInt: true, cols: []string{"y", "x1"}},
		{formula: "y ~ 0 + x1", terms: "x1", noInt: true, cols: []string{"y", "x1"}},
		{formula: "y ~ x1 + 0", terms: "x1", noInt: true, cols: []string{"y", "x1"}},
		{formula: "y ~ 1 + x1", terms: "x1", cols: []string{"y", "x1"}},
		{formula: "y ~ x1:x2", terms: "x1:x2", cols: []string{"y", "x1", "x2"}},
		{formula: "y ~ x1*cat(c)", terms: "x1,cat(c),x1:cat(c)", cols: []string{"y", "x1", "c"}},
		{formula: "y ~ a*b*c", terms: "a,b,c,a:b,a:c,b:c,a:b:c", cols: []string{"y", "a", "b", "c"}},
		{formula: "y ~ a*b:c", terms: "a,b:c,a:b:c", cols: []string{"y", "a", "b", "c"}},
		{formula: "y ~ a*b + a", terms: "a,b,a:b", cols: []string{"y", "a", "b"}},
		{formula: "y ~ a*b - a:b", terms: "a,b", cols: []string{"y", "a", "b"}},
		{formula: "y ~ . - x3", terms: "", dot: true, cols: []string{"y"}},
		{formula: "y ~ offset(log(t)) + x1", terms: "x1", offset: `Log("t")`, cols: []string{"y", "x1", "t"}},
		{formula: "y ~ x>-1 + x2>1e-3", terms: "x>-1,x2>1e-3", cols: []string{"y", "x", "x2"}},
		{formula: "y ~ (1 | g/h) + (0 + x || g)", terms: "(1|g/h)", cols: []string{"y", "g", "h", "x"}},
		{formula: "y ~ (1 + x + log(z) || g) + (1|s) + (1|d)", terms: "(1 + x + log(z)||g),(1|s),(1|d)", cols: []string{"y", "x", "z", "g", "s", "d"}},
		{formula: "y ~ `my col` + x", terms: "my col,x", cols: []string{"y", "my col", "x"}},
	} {
		fm, err := ParseFormula(c.formula)
		if err != nil {
			t.Errorf("%s: %v", c.formula, err)
			continue
		}
		want, _, _, err := ParseTerms(c.terms)
		if err != nil {
			t.Fatalf("%s: %v", c.terms, err)
		}
		got := termStrings(fm.Terms)
		ws := termStrings(want)
		if c.formula == "y ~ (1 | g/h) + (0 + x || g)" {
			// (1|g/h) is (1|g) and (1|g:h); (0 + x || g) a third term.
			ws = append(ws, RandomSlopes("g", Num("x")).String())
		}
		if !slices.Equal(got, ws) {
			t.Errorf("%s: terms\n%q\nwant %q", c.formula, got, ws)
		}
		if fm.NoIntercept != c.noInt || fm.Dot != c.dot {
			t.Errorf("%s: NoIntercept %v Dot %v, want %v %v", c.formula, fm.NoIntercept, fm.Dot, c.noInt, c.dot)
		}
		if off := ""; fm.Offset != nil {
			off = fm.Offset.String()
			if off != c.offset {
				t.Errorf("%s: offset %s, want %s", c.formula, off, c.offset)
			}
		} else if c.offset != "" {
			t.Errorf("%s: no offset, want %s", c.formula, c.offset)
		}
		if !slices.Equal(fm.Columns, c.cols) {
			t.Errorf("%s: columns %q, want %q", c.formula, fm.Columns, c.cols)
		}
	}
	fm, err := ParseFormula("y ~ . - x3")
	if err != nil || !slices.Equal(fm.Exclude, []string{"x3"}) {
		t.Errorf("y ~ . - x3: Exclude %q (%v), want [x3]", fm.Exclude, err)
	}
	for _, c := range []struct{ formula, trials, failures string }{
		{"k | trials(n) ~ x", `Num("n")`, ""},
		{"cbind(k, n - k) ~ x", `Num("n")`, ""},
		{"cbind(k, f) ~ x", "", `Num("f")`},
	} {
		fm, err := ParseFormula(c.formula)
		if err != nil {
			t.Errorf("%s: %v", c.formula, err)
			continue
		}
		str := func(t Term) string {
			if t == nil {
				return ""
			}
			return t.String()
		}
		if fm.Response.String() != `Num("k")` || str(fm.Trials) != c.trials || str(fm.Failures) != c.failures {
			t.Errorf("%s: response %s trials %q failures %q, want k %q %q", c.formula, fm.Response, str(fm.Trials), str(fm.Failures), c.trials, c.failures)
		}
	}
}

// TestParseFormulaErrors checks that a formula's errors say what is
// wrong and at which column.
func TestParseFormulaErrors(t *testing.T) {
	for _, c := range []struct {
		formula string
		col     int
		want    string
	}{
		{"y x1", 0, "no '~'"},
		{"y ~ x1 + sqrt(x2)", 10, `unknown function "sqrt"`},
		{"y ~ x1 + + x2", 10, "empty term"},
		{"y ~ x1 +", 9, "empty term"},
		{"y ~ log(x1", 5, "'(' without its ')'"},
		{"y ~ x1)", 7, "')' without its '('"},
		{"y ~ x1 ~ x2", 8, "second '~'"},
		{" ~ x1", 2, "no response"},
		{"y ~ ", 3, "no terms"},
		{"y ~ x1 * (1|g)", 10, "cannot be multiplied"},
		{"y ~ (x1 + x2)", 5, "parentheses group only random-effect terms"},
		{"y ~ x1 - x2", 10, "not a term of the formula"},
		{"y ~ offset(x) + offset(z)", 17, "second offset"},
		{"y ~ offset(cat(c))", 5, "offset takes a column"},
		{"cbind(k, n - j) ~ x", 1, "not the successes"},
		{"k | n ~ x", 5, "trials(n)"},
		{"y ~ x1:.", 0, "part of an interaction"},
		{"y ~ (1|g|h)", 5, "more than one '|'"},
	} {
		_, err := ParseFormula(c.formula)
		if err == nil {
			t.Errorf("%s: no error, want %q", c.formula, c.want)
			continue
		}
		if !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: error %q, want %q", c.formula, err, c.want)
		}
		if c.col > 0 && !strings.Contains(err.Error(), fmt.Sprintf("at column %d ", c.col)) {
			t.Errorf("%s: error %q, want it at column %d", c.formula, err, c.col)
		}
	}
}

// TestParseCorrelated checks that the comma form and the formula read
// (1 + x | g) as lme4 and brms do, correlated effects (Correlated), and
// (1 + z || k) as independent ones, with no warning, the same terms
// both ways; a single effect has no correlation either way, and a
// nested (1 + x | a/b) is correlated at both levels.
func TestParseCorrelated(t *testing.T) {
	terms, _, w, err := ParseTerms("(1 + x | g),(1|h),(1 + z || k),(0 + x + z | m),(1 + x | a/b)")
	if err != nil || len(w) != 0 {
		t.Fatalf("warnings %q (%v), want none", w, err)
	}
	want := []string{"(1 + x | g)", "(1 | h)", "(1 + z || k)", "(0 + x + z | m)", "(1 + x | a)", "(1 + x | a:b)"}
	corr := []bool{true, false, false, true, true, true}
	if len(terms) != len(want) {
		t.Fatalf("%d terms %v, want %d", len(terms), terms, len(want))
	}
	for k, tm := range terms {
		if tm.String() != want[k] || tm.spec().corr != corr[k] {
			t.Errorf("term %d: %s (correlated %t), want %s (%t)", k, tm, tm.spec().corr, want[k], corr[k])
		}
	}
	fm, err := ParseFormula("y ~ (1 + x | g) + (1 | h) + (1 + z || k) + (0 + x + z | m) + (1 + x | a/b)")
	if err != nil || len(fm.Warnings) != 0 {
		t.Fatalf("ParseFormula: %v, warnings %q", err, fm.Warnings)
	}
	var got []string
	for _, tm := range fm.Terms {
		got = append(got, tm.String())
	}
	if !slices.Equal(got, want) {
		t.Errorf("ParseFormula's terms %q, want %q", got, want)
	}
	if c := Correlated(Num("x")); !strings.Contains(c.spec().optErr, "not a random-effect term") {
		t.Errorf("Correlated(Num) has no error: %q", c.spec().optErr)
	}
}

// TestInteractionOffset builds x1:x2, cat(c):x1 and an offset on a
// small file and checks every column against its definition: products
// of the raw values, standardised unless 0/1.
func TestInteractionOffset(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	var b strings.Builder
	b.WriteString("y,x1,x2,c,t\n")
	n := 60
	type row struct {
		x1, x2, t float64
		c         string
	}
	rows := make([]row, n)
	for i := range rows {
		r := row{rng.NormFloat64(), 1 + rng.Float64(), 0.5 + rng.Float64(), []string{"a", "b", "c"}[i%3]}
		rows[i] = r
		fmt.Fprintf(&b, "%d,%g,%g,%s,%g\n", i%2, r.x1, r.x2, r.c, r.t)
	}
	f, err := ReadCSV(writeTemp(t, "f.csv", b.String()), nil)
	if err != nil {
		t.Fatal(err)
	}
	fm, err := ParseFormula("y ~ x1*log(x2) + cat(c):x1 + offset(log(t))")
	if err != nil {
		t.Fatal(err)
	}
	d, err := fm.Spec(f).Build(f)
	if err != nil {
		t.Fatal(err)
	}
	wantNames := []string{"Intercept", "x1", "log(x2)", "x1:log(x2)", "c=b:x1", "c=c:x1"}
	if !slices.Equal(d.Names, wantNames) {
		t.Fatalf("names %q, want %q", d.Names, wantNames)
	}
	raw := func(j, i int) float64 {
		r := rows[i]
		switch j {
		case 3:
			return r.x1 * math.Log(r.x2)
		case 4:
			return r.x1 * b2f(r.c == "b")
		case 5:
			return r.x1 * b2f(r.c == "c")
		}
		return math.NaN()
	}
	for j := 3; j < 6; j++ {
		var mean, ss float64
		for i := range n {
			mean += raw(j, i)
		}
		mean /= float64(n)
		for i := range n {
			ss += (raw(j, i) - mean) * (raw(j, i) - mean)
		}
		sd := math.Sqrt(ss / float64(n-1))
		if math.Abs(d.Center[j]-mean) > 1e-12 || math.Abs(d.Scale[j]-sd) > 1e-12 {
			t.Errorf("%s: center %v scale %v, want %v %v", d.Names[j], d.Center[j], d.Scale[j], mean, sd)
		}
		for i := range n {
			if got, want := d.X[i*d.D+j], (raw(j, i)-mean)/sd; math.Abs(got-want) > 1e-12 {
				t.Fatalf("%s row %d: %v, want %v", d.Names[j], i, got, want)
			}
		}
	}
	for i, r := range rows {
		if d.Offset[i] != math.Log(r.t) {
			t.Fatalf("offset row %d: %v, want log(%v)", i, d.Offset[i], r.t)
		}
	}
	// An indicator product stays 0/1; a pair never seen is an error.
	d, err = Spec{Response: Num("y"), Terms: []Term{Interaction(Above("x1", 0), Categorical("c"))}}.Build(f)
	if err != nil {
		t.Fatal(err)
	}
	for j := 1; j < d.D; j++ {
		if d.Center[j] != 0 || d.Scale[j] != 1 {
			t.Errorf("%s: standardised (%v, %v), want 0/1 kept", d.Names[j], d.Center[j], d.Scale[j])
		}
	}
	_, err = Spec{Response: Num("y"), Terms: []Term{Interaction(Num("x1"))}}.Build(f)
	wantErr(t, err, "at least two")
	_, err = Spec{Response: Num("y"), Terms: []Term{Interaction(Num("x1"), Random("c"))}}.Build(f)
	wantErr(t, err, "random-effect")
}

// TestFormulaErrorQuotesWindow checks that an error in a generated formula
// of thousands of terms quotes the text around the fault, not the whole
// formula, and still names its column.
func TestFormulaErrorQuotesWindow(t *testing.T) {
	var b strings.Builder
	b.WriteString("y ~ ")
	for i := range 3000 {
		fmt.Fprintf(&b, "x%d + ", i)
	}
	col := b.Len() + 1
	b.WriteString("x1) + z")
	_, err := ParseFormula(b.String())
	if err == nil {
		t.Fatal("no error for a ')' without its '('")
	}
	msg := err.Error()
	if len(msg) > 400 || !strings.Contains(msg, "x1)") || !strings.Contains(msg, "…") {
		t.Errorf("error of %d bytes, want the fault quoted in a short window: %.500s", len(msg), msg)
	}
	if !strings.Contains(msg, fmt.Sprintf("at column %d ", col+2)) {
		t.Errorf("error %q, want column %d", msg, col+2)
	}
}

// TestFormulaFactor checks R's reading of text columns: factor(c) and a
// bare text column c are Categorical with the first level in the
// columns' order as the reference (R's treatment contrasts), whatever
// the most frequent level, in interactions too; cat(c) keeps its most
// frequent reference; a bare numeric column stays numeric; num(c) of a
// text column is an error that names factor(c); factor takes no options.
func TestFormulaFactor(t *testing.T) {
	var b strings.Builder
	b.WriteString("y,x,c,k\n")
	// c: "b" is the most frequent level, "a" the first by name; k: integer
	// codes, 3 the most frequent, 1 the smallest.
	cs := []string{"b", "b", "b", "a", "c", "b", "a", "c", "b", "b"}
	ks := []int{3, 3, 1, 2, 3, 3, 2, 1, 3, 10}
	for i := range cs {
		fmt.Fprintf(&b, "%d,%g,%s,%d\n", i%2, float64(i)/3, cs[i], ks[i])
	}
	f, err := ReadCSV(writeTemp(t, "f.csv", b.String()), nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct{ formula, names string }{
		{"y ~ x + c", "Intercept,x,c=b,c=c"},
		{"y ~ x + factor(c)", "Intercept,x,c=b,c=c"},
		{"y ~ x + cat(c)", "Intercept,x,c=a,c=c"},
		{"y ~ x + factor(k)", "Intercept,x,k=2,k=3,k=10"},
		{"y ~ x + cat(k)", "Intercept,x,k=1,k=2,k=10"},
		{"y ~ k", "Intercept,k"},
		{"y ~ x:c", "Intercept,x:c=b,x:c=c"},
		{"y ~ x*c", "Intercept,x,c=b,c=c,x:c=b,x:c=c"},
		{"y ~ `c` + x", "Intercept,c=b,c=c,x"},
	} {
		fm, err := ParseFormula(c.formula)
		if err != nil {
			t.Fatalf("%s: %v", c.formula, err)
		}
		sp := fm.Spec(f)
		sp.NoStandardize = true
		d, err := sp.Build(f)
		if err != nil {
			t.Fatalf("%s: %v", c.formula, err)
		}
		if got := strings.Join(d.Names, ","); got != c.names {
			t.Errorf("%s: columns %s, want %s", c.formula, got, c.names)
		}
	}
	// The formula's own terms are not changed by Spec.
	fm, err := ParseFormula("y ~ c")
	if err != nil {
		t.Fatal(err)
	}
	_ = fm.Spec(f)
	if got := fm.Terms[0].String(); got != `Num("c")` {
		t.Errorf("Spec changed the formula's term to %s", got)
	}
	if got := fm.Spec(f).Terms[0].String(); got != `Categorical("c", FirstReference())` {
		t.Errorf("y ~ c: term %s, want Categorical(\"c\", FirstReference())", got)
	}
	for _, c := range []struct{ formula, want string }{
		{"y ~ num(c)", "factor(c)"},
		{"y ~ factor(c;top=2)", "factor takes no options"},
	} {
		fm, err := ParseFormula(c.formula)
		if err == nil {
			_, err = fm.Spec(f).Build(f)
		}
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: error %v, want one saying %q", c.formula, err, c.want)
		}
	}
	// A bare text identifier is refused before its one-hot columns are
	// made; factor() written out is not capped here.
	b.Reset()
	b.WriteString("y,id\n")
	for i := range 1500 {
		fmt.Fprintf(&b, "%d,row%d\n", i%2, i)
	}
	fi, err := ReadCSV(writeTemp(t, "ids.csv", b.String()), nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		formula string
		refused bool
	}{{"y ~ id", true}, {"y ~ factor(id)", false}} {
		fm, err := ParseFormula(c.formula)
		if err != nil {
			t.Fatal(err)
		}
		_, err = fm.Spec(fi).Build(fi)
		if refused := err != nil && strings.Contains(err.Error(), "(1 | id)"); refused != c.refused {
			t.Errorf("%s: error %v, want refused %t", c.formula, err, c.refused)
		}
	}
	if _, err := (Spec{Response: Num("y"), Terms: []Term{Categorical("c", Reference("a"), FirstReference())}}).Build(f); err == nil || !strings.Contains(err.Error(), "FirstReference") {
		t.Errorf("Reference and FirstReference together: error %v", err)
	}
}
