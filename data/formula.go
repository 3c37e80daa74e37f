// Copyright ©2026 The exactmh Authors. All rights reserved.
// Use of this source code is governed by a BSD-style
// license that can be found in the LICENSE file.

package data

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"
)

// Formula is a model formula as lme4 and brms write it, parsed by
// ParseFormula: the response, the terms and what else the formula says.
// Spec turns it into the Spec of the same design.
type Formula struct {
	// Text is the formula as given.
	Text string
	// Response is the left of '~' (for cbind and trials, the successes).
	Response Term
	// Trials, if not nil, is the number of trials of a binomial
	// response, from k | trials(n) or cbind(k, n - k); Failures, if not
	// nil, the failures' column of cbind(k, f) (the trials are k + f).
	Trials, Failures Term
	// Terms are the right's terms in order, "." not yet expanded, a*b
	// expanded to a, b and a:b, repeats dropped.
	Terms []Term
	// NoIntercept is set by -1 or 0 on the right.
	NoIntercept bool
	// Dot reports a "." on the right: every column not otherwise used,
	// expanded by Spec; Exclude are the columns "- col" removes from it.
	Dot     bool
	Exclude []string
	// Offset is offset(x) or offset(log(x)), nil without one.
	Offset Term
	// Columns are the columns the formula names (not those "." adds).
	Columns []string
	// Warnings say what the formula is read as where lme4 would read it
	// otherwise (none today).
	Warnings []string
}

// ParseFormula parses a model formula in R's notation:
//
//	y ~ x1 + log(x2) + cat(c) + x1:x2 + (1 | g) + (1 + x1 || h)
//
// The left is a term of ParseTerm's language (y, y>T, log(y), log1p(y)),
// cbind(k, n - k) or cbind(k, f), or k | trials(n). The right is terms
// of ParseTerm's language joined by '+': a:b is their Interaction, a*b
// is a + b + a:b (a*b*c all the interactions, ':' binding tighter than
// '*'), "." every other column (as the exactmh command's --terms "."),
// "- x" removes a term (or, with ".", a column), -1 or 0 drops the
// intercept and 1 keeps it, offset(x) and offset(log(x)) give an offset
// (Spec.Offset), and (…|g) is a random-effect term as ParseTerms reads
// it, (1 | g/h) nesting included. A term repeated is kept once, as R
// does. factor(c) is Factor(c), R's factor with its treatment contrasts
// (the first level by name is the reference), and so is a column named
// bare that holds text (Spec reads it so: the parser does not see the
// data); cat(c) is Categorical, whose reference is the most frequent
// level.
//
// (1 + x | g), with one '|' and more than one effect, has correlated
// effects, as in lme4 and brms (Correlated); (1 + x || g) independent
// ones. An error names the column of the formula (1-based, in bytes) where the
// fault is, and the text there.
func ParseFormula(s string) (*Formula, error) {
	fp := &formulaParser{src: s}
	fm := &Formula{Text: s}
	tilde := fp.topIndex(0, len(s), '~')
	if tilde < 0 {
		return nil, fmt.Errorf("formula %q: no '~' (want response ~ terms, e.g. y ~ x1 + log(x2) + (1 | g))", s)
	}
	if err := fp.lhs(fm, 0, tilde); err != nil {
		return nil, err
	}
	if t2 := fp.topIndex(tilde+1, len(s), '~'); t2 >= 0 {
		return nil, fp.errAt(t2, t2+1, "a second '~'")
	}
	if err := fp.rhs(fm, tilde+1, len(s)); err != nil {
		return nil, err
	}
	add := func(t Term) {
		if t == nil {
			return
		}
		for _, c := range Columns(t) {
			if !slices.Contains(fm.Columns, c) {
				fm.Columns = append(fm.Columns, c)
			}
		}
	}
	add(fm.Response)
	add(fm.Trials)
	add(fm.Failures)
	for _, t := range fm.Terms {
		add(t)
	}
	add(fm.Offset)
	return fm, nil
}

// Spec returns the Spec of the formula's design on f (f's columns are
// needed for "." and to read a bare text column as Factor; f may be nil
// without either): the response, the terms with "." expanded by
// DotTerms, the intercept and the offset. Set
// DropMissing and NoStandardize on it as wanted. Trials and Failures are
// not part of a Spec: the model takes them.
func (fm *Formula) Spec(f *Frame) Spec {
	terms := slices.Clone(fm.Terms)
	if f != nil {
		text := map[string]bool{}
		for _, c := range f.Columns() {
			text[c.Name] = c.Type == String
		}
		for k, t := range terms {
			terms[k] = factorText(t, text)
		}
	}
	if fm.Dot && f != nil {
		terms = append(terms, DotTerms(f, append(slices.Clone(fm.Columns), fm.Exclude...))...)
	}
	return Spec{Response: fm.Response, Terms: terms, NoIntercept: fm.NoIntercept, Offset: fm.Offset}
}

// factorText returns t with every column it names bare (x, not num(x))
// that holds text read as Factor, in an interaction's parts too: R reads
// a character column in a formula as a factor with treatment contrasts,
// and so does a formula here. t itself is not changed.
func factorText(t Term, text map[string]bool) Term {
	tt, ok := t.(*term)
	if !ok {
		return t
	}
	switch tt.kind {
	case kindNum:
		if tt.bare && text[tt.col] {
			f := Factor(tt.col).(*term)
			f.auto = true
			return f
		}
	case kindInter:
		var parts []Term
		for k, p := range tt.parts {
			if q := factorText(p, text); q != p {
				if parts == nil {
					parts = slices.Clone(tt.parts)
				}
				parts[k] = q
			}
		}
		if parts != nil {
			c := *tt
			c.parts = parts
			return &c
		}
	}
	return t
}

// DotTopK is the number of levels "." keeps of a text column (the rest
// are "other"), so that an identifier column does not make thousands of
// coefficients.
const DotTopK = 20

// DotTerms are the terms "." stands for: every column of f not in used,
// each as its type suggests — a number (float, int, bool) as Num, text as
// Categorical with TopK(DotTopK), a time as HourOfDay, DayOfWeek and
// Month.
func DotTerms(f *Frame, used []string) []Term {
	var out []Term
	for _, c := range f.Columns() {
		if slices.Contains(used, c.Name) {
			continue
		}
		switch c.Type {
		case Float, Int, Bool:
			out = append(out, Num(c.Name))
		case String:
			out = append(out, Categorical(c.Name, TopK(DotTopK)))
		case Time:
			out = append(out, HourOfDay(c.Name), DayOfWeek(c.Name), Month(c.Name))
		}
	}
	return out
}

// formulaParser parses one formula, its errors naming positions in src.
type formulaParser struct{ src string }

// errAt is an error at src[lo:hi].
func (p *formulaParser) errAt(lo, hi int, format string, args ...any) error {
	text := strings.TrimSpace(p.src[lo:hi])
	// Point at the first byte of the text, not at the space before it.
	for lo < hi && (p.src[lo] == ' ' || p.src[lo] == '\t') {
		lo++
	}
	return fmt.Errorf("formula %s: at column %d (%s): %s", quoteWindow(p.src, lo, hi), lo+1, quoteWindow(text, 0, len(text)), fmt.Sprintf(format, args...))
}

// formulaQuoteMax is how many bytes of a formula an error quotes: a
// generated formula of thousands of terms would otherwise make a line of
// tens of kilobytes.
const formulaQuoteMax = 80

// quoteWindow quotes s whole when it is short, else about formulaQuoteMax
// bytes around s[lo:hi] with "…" where it was cut (at rune boundaries).
func quoteWindow(s string, lo, hi int) string {
	if len(s) <= formulaQuoteMax {
		return strconv.Quote(s)
	}
	from := max(0, min(lo, hi-formulaQuoteMax/2)-formulaQuoteMax/4)
	to := min(len(s), from+formulaQuoteMax)
	for from > 0 && !utf8.RuneStart(s[from]) {
		from--
	}
	for to < len(s) && !utf8.RuneStart(s[to]) {
		to++
	}
	q := strconv.Quote(s[from:to])
	if from > 0 {
		q = "…" + q
	}
	if to < len(s) {
		q += "…"
	}
	return q
}

// scan calls at(i) for each i in [lo, hi) whose byte src[i] lies
// outside backquotes and parentheses (the parentheses themselves left
// out), until at returns false. It returns the index of the first ')'
// without its '(' (−1 if none) and whether a '(' or a '`' is still open
// at hi: the one paren-depth scanner of topIndex, rhs's '+' and '-'
// splitter and product's '*' and ':' splitter.
func (p *formulaParser) scan(lo, hi int, at func(i int) bool) (stray int, open, quoted bool) {
	depth, stray := 0, -1
	for i := lo; i < hi; i++ {
		switch b := p.src[i]; {
		case b == '`':
			quoted = !quoted
		case quoted:
		case b == '(':
			depth++
		case b == ')':
			if depth--; depth < 0 && stray < 0 {
				stray = i
			}
		case depth == 0 && !at(i):
			return stray, false, false
		}
	}
	return stray, depth > 0, quoted
}

// topIndex is the index of the first c in src[lo:hi] outside
// parentheses and backquotes, or −1.
func (p *formulaParser) topIndex(lo, hi int, c byte) int {
	found := -1
	p.scan(lo, hi, func(i int) bool {
		if p.src[i] == c {
			found = i
		}
		return found < 0
	})
	return found
}

// lhs parses the response in src[lo:hi].
func (p *formulaParser) lhs(fm *Formula, lo, hi int) error {
	s := p.src[lo:hi]
	if strings.TrimSpace(s) == "" {
		return p.errAt(lo, hi+1, "no response before '~'")
	}
	if bar := p.topIndex(lo, hi, '|'); bar >= 0 { // k | trials(n)
		r := strings.TrimSpace(p.src[bar+1 : hi])
		inner, ok := call(r, "trials")
		if !ok {
			return p.errAt(bar+1, hi, "after '|' on the left want trials(n), as brms writes k | trials(n)")
		}
		k, err := p.term(lo, bar)
		if err != nil {
			return err
		}
		n, err := parseAtom(inner)
		if err != nil {
			return p.errAt(bar+1, hi, "trials: %v", err)
		}
		fm.Response, fm.Trials = k, n
		return nil
	}
	if inner, ok := call(strings.TrimSpace(s), "cbind"); ok {
		args := splitTop(inner, ',')
		if len(args) != 2 {
			return p.errAt(lo, hi, "cbind takes two arguments, successes and failures: cbind(k, n - k)")
		}
		k, err := parseAtom(args[0])
		if err != nil {
			return p.errAt(lo, hi, "cbind: %v", err)
		}
		fm.Response = k
		// n - k: the trials; otherwise a column of failures.
		if a, b, ok := strings.Cut(args[1], "-"); ok {
			if strings.TrimSpace(b) != strings.TrimSpace(args[0]) {
				return p.errAt(lo, hi, "cbind(k, n - k): the second argument %q subtracts %q, not the successes %q", strings.TrimSpace(args[1]), strings.TrimSpace(b), strings.TrimSpace(args[0]))
			}
			if fm.Trials, err = parseAtom(a); err != nil {
				return p.errAt(lo, hi, "cbind: %v", err)
			}
			return nil
		}
		if fm.Failures, err = parseAtom(args[1]); err != nil {
			return p.errAt(lo, hi, "cbind: %v", err)
		}
		return nil
	}
	t, err := p.term(lo, hi)
	if err != nil {
		return err
	}
	if t.spec().kind == kindInter {
		return p.errAt(lo, hi, "the response is one column (y, y>T, log(y) or log1p(y))")
	}
	fm.Response = t
	return nil
}

// call reports whether s is fn(…) and returns what is inside.
func call(s, fn string) (string, bool) {
	s = strings.TrimSpace(s)
	if !strings.HasSuffix(s, ")") {
		return "", false
	}
	open := strings.IndexByte(s, '(')
	if open < 0 || !strings.EqualFold(strings.TrimSpace(s[:open]), fn) {
		return "", false
	}
	return s[open+1 : len(s)-1], true
}

// term parses a term of ParseTerm's language at src[lo:hi].
func (p *formulaParser) term(lo, hi int) (Term, error) {
	t, err := ParseTerm(p.src[lo:hi])
	if err != nil {
		return nil, p.errAt(lo, hi, "%v", err)
	}
	return t, nil
}

// span is a piece of the formula's right: a term between '+' or '-'.
type span struct {
	lo, hi int
	minus  bool
}

// rhs parses the terms in src[lo:hi].
func (p *formulaParser) rhs(fm *Formula, lo, hi int) error {
	if strings.TrimSpace(p.src[lo:hi]) == "" {
		return p.errAt(lo-1, hi, "no terms after '~' (write 1 for the intercept alone)")
	}
	// Split on '+' and '-' outside parentheses, backquotes and a
	// number's sign (x>-1, 1e-3).
	var spans []span
	start, minus := lo, false
	stray, open, quoted := p.scan(lo, hi, func(i int) bool {
		if b := p.src[i]; (b == '+' || b == '-') && !p.signOfNumber(start, i) {
			spans = append(spans, span{start, i, minus})
			start, minus = i+1, b == '-'
		}
		return true
	})
	if stray >= 0 {
		return p.errAt(stray, stray+1, "a ')' without its '('")
	}
	if open {
		return p.errAt(lo, hi, "a '(' without its ')'")
	}
	if quoted {
		return p.errAt(lo, hi, "a '`' without its closing '`'")
	}
	spans = append(spans, span{start, hi, minus})
	var seen []string
	keep := func(t Term) {
		if s := t.String(); !slices.Contains(seen, s) {
			seen = append(seen, s)
			fm.Terms = append(fm.Terms, t)
		}
	}
	var removed []span
	for k, sp := range spans {
		text := strings.TrimSpace(p.src[sp.lo:sp.hi])
		if text == "" {
			if k == 0 && sp.hi < hi && p.src[sp.hi] == '-' {
				continue // a leading '-', as in ~ -1 + x
			}
			return p.errAt(sp.lo, min(hi, sp.hi+1), "an empty term (two operators in a row, or one at the end)")
		}
		switch text {
		case "1", "0":
			fm.NoIntercept = text == "0" || sp.minus
			continue
		case ".":
			if sp.minus {
				return p.errAt(sp.lo, sp.hi, "'- .' removes everything")
			}
			fm.Dot = true
			continue
		}
		if sp.minus {
			removed = append(removed, sp)
			continue
		}
		if inner, ok := call(text, "offset"); ok {
			if fm.Offset != nil {
				return p.errAt(sp.lo, sp.hi, "a second offset()")
			}
			t, err := parseAtom(inner)
			if err != nil {
				return p.errAt(sp.lo, sp.hi, "offset: %v", err)
			}
			if k := t.spec().kind; k != kindNum && k != kindLog && k != kindLog1p {
				return p.errAt(sp.lo, sp.hi, "offset takes a column, log(column) or log1p(column)")
			}
			fm.Offset = t
			continue
		}
		ts, err := p.product(sp.lo, sp.hi)
		if err != nil {
			return err
		}
		for _, t := range ts {
			keep(t)
		}
	}
	for _, sp := range removed {
		ts, err := p.product(sp.lo, sp.hi)
		if err != nil {
			return err
		}
		for _, t := range ts {
			s := t.String()
			if i := slices.IndexFunc(fm.Terms, func(u Term) bool { return u.String() == s }); i >= 0 {
				fm.Terms = slices.Delete(fm.Terms, i, i+1)
				continue
			}
			if fm.Dot && t.spec().kind == kindNum {
				fm.Exclude = append(fm.Exclude, t.spec().col)
				continue
			}
			return p.errAt(sp.lo, sp.hi, "removes %s, which is not a term of the formula", t)
		}
	}
	return nil
}

// signOfNumber reports whether the '+' or '-' at src[i] is the sign of
// a number inside the term that starts at src[start]: after the '>' of
// x>-1, or in an exponent (x>1e-3).
func (p *formulaParser) signOfNumber(start, i int) bool {
	prev := strings.TrimRight(p.src[start:i], " \t")
	if prev == "" || !strings.Contains(prev, ">") {
		return false
	}
	if strings.HasSuffix(prev, ">") {
		return true
	}
	n := len(prev)
	return (prev[n-1] == 'e' || prev[n-1] == 'E') && n >= 2 && prev[n-2] >= '0' && prev[n-2] <= '9'
}

// product parses a*b:c… at src[lo:hi] into its terms: the '*'-separated
// factors' every non-empty combination, in R's order (single factors,
// then pairs, …), each factor a ':' interaction of atoms. A random-effect
// term stands alone.
func (p *formulaParser) product(lo, hi int) ([]Term, error) {
	s := p.src[lo:hi]
	if strings.HasPrefix(strings.TrimSpace(s), "(") && p.topIndex(lo, hi, '*') < 0 && p.topIndex(lo, hi, ':') < 0 {
		return p.random(lo, hi)
	}
	// The factors, each its atoms' spans.
	var factors [][][2]int
	var atoms [][2]int
	start := lo
	flush := func(i int) error {
		if strings.TrimSpace(p.src[start:i]) == "" {
			return p.errAt(start, min(hi, i+1), "an empty term beside '*' or ':'")
		}
		atoms = append(atoms, [2]int{start, i})
		start = i + 1
		return nil
	}
	var err error
	p.scan(lo, hi, func(i int) bool {
		switch b := p.src[i]; b {
		case ':', '*':
			if err = flush(i); err != nil {
				return false
			}
			if b == '*' {
				factors, atoms = append(factors, atoms), nil
			}
		}
		return true
	})
	if err != nil {
		return nil, err
	}
	if err := flush(hi); err != nil {
		return nil, err
	}
	factors = append(factors, atoms)
	parsed := make([][]Term, len(factors))
	for f, as := range factors {
		for _, a := range as {
			text := strings.TrimSpace(p.src[a[0]:a[1]])
			switch {
			case strings.HasPrefix(text, "("):
				return nil, p.errAt(a[0], a[1], "a random-effect term or parenthesised group cannot be multiplied: write (1 + x || g) for slopes, and the interaction a:b of plain terms")
			case text == "." || text == "1" || text == "0":
				return nil, p.errAt(a[0], a[1], "%q cannot be part of an interaction", text)
			}
			t, err := parseAtom(text)
			if err != nil {
				return nil, p.errAt(a[0], a[1], "%v", err)
			}
			parsed[f] = append(parsed[f], t)
		}
	}
	var out []Term
	n := len(parsed)
	for size := 1; size <= n; size++ {
		for mask := 1; mask < 1<<n; mask++ {
			if popcount(mask) != size {
				continue
			}
			var parts []Term
			for f := range n {
				if mask&(1<<f) != 0 {
					parts = append(parts, parsed[f]...)
				}
			}
			if len(parts) == 1 {
				out = append(out, parts[0])
			} else {
				out = append(out, Interaction(parts...))
			}
		}
	}
	return out, nil
}

// popcount is the number of bits set in m.
func popcount(m int) int {
	n := 0
	for ; m != 0; m &= m - 1 {
		n++
	}
	return n
}

// random parses a random-effect term at src[lo:hi].
func (p *formulaParser) random(lo, hi int) ([]Term, error) {
	text := strings.TrimSpace(p.src[lo:hi])
	if !strings.Contains(text, "|") {
		return nil, p.errAt(lo, hi, "parentheses group only random-effect terms, (1 + x || g)")
	}
	ts, _, err := parseRandom(text)
	if err != nil {
		return nil, p.errAt(lo, hi, "%v", err)
	}
	return ts, nil
}
