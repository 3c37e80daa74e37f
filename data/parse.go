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

// ParseTerm parses one term of the term language the exactmh command
// writes: name (Num), name>T (Above), num(name), log(name), log1p(name),
// above(name;T), hour(name), dow(name), month(name),
// cat(name[;top=K][;ref=LEVEL][;sd=S]), and a:b:… (Interaction) of
// those. Random-effect terms, which may expand to several terms, are
// ParseTerms' and ParseFormula's.
func ParseTerm(s string) (Term, error) {
	if parts := splitTop(s, ':'); len(parts) > 1 {
		var ts []Term
		for _, p := range parts {
			t, err := parseAtom(p)
			if err != nil {
				return nil, fmt.Errorf("interaction %q: %w", strings.TrimSpace(s), err)
			}
			ts = append(ts, t)
		}
		return Interaction(ts...), nil
	}
	return parseAtom(s)
}

// Columns returns the columns a term reads, in order, each once.
func Columns(t Term) []string {
	var out []string
	add := func(c string) {
		if !slices.Contains(out, c) {
			out = append(out, c)
		}
	}
	var walk func(t Term)
	walk = func(t Term) {
		if t == nil {
			return
		}
		s := t.spec()
		switch s.kind {
		case kindRandom:
			for _, sl := range s.slopes {
				walk(sl)
			}
			for _, by := range s.by {
				add(by)
			}
		case kindInter:
			for _, p := range s.parts {
				walk(p)
			}
		default:
			add(s.col)
		}
	}
	walk(t)
	return out
}

// ParseTerms parses a comma-separated list of terms (options inside a
// term are separated by ';'): ParseTerm's terms and random-effect terms
// in lme4's notation, (1 | g), (1 + x + log(z) | g), (0 + x | g) without
// the intercept, (1 | a:b) for the interaction of a and b and (1 | a/b)
// for b nested in a, which is (1 | a) + (1 | a:b). As in lme4 and brms,
// a term written with one '|' and more than one effect has correlated
// effects (Correlated), and one written with '||' independent ones. It
// returns the terms and every column they read; warnings is for what
// the syntax reads otherwise than lme4 (none today).
func ParseTerms(s string) (terms []Term, cols []string, warnings []string, err error) {
	if strings.TrimSpace(s) == "" {
		return nil, nil, nil, nil
	}
	for _, part := range strings.Split(s, ",") {
		var ts []Term
		if isRandom(part) {
			ts, _, err = parseRandom(part)
			if err != nil {
				return nil, nil, nil, err
			}
		} else {
			t, err := ParseTerm(part)
			if err != nil {
				return nil, nil, nil, err
			}
			ts = []Term{t}
		}
		for _, t := range ts {
			terms = append(terms, t)
			for _, c := range Columns(t) {
				if !slices.Contains(cols, c) {
					cols = append(cols, c)
				}
			}
		}
	}
	return terms, cols, warnings, nil
}

// effects is the number of effects per level of a random-effect term.
func effects(t Term) int {
	s := t.spec()
	n := len(s.slopes)
	if !s.noInt {
		n++
	}
	return n
}

// splitTop splits s on sep outside parentheses.
func splitTop(s string, sep byte) []string {
	var out []string
	depth, start := 0, 0
	for i := 0; i < len(s); i++ {
		switch s[i] {
		case '(':
			depth++
		case ')':
			depth--
		case sep:
			if depth == 0 {
				out = append(out, s[start:i])
				start = i + 1
			}
		}
	}
	return append(out, s[start:])
}

// parseAtom parses one term that is not an interaction.
func parseAtom(s string) (Term, error) {
	s = strings.TrimSpace(s)
	if s == "" {
		return nil, fmt.Errorf("empty term")
	}
	if strings.HasPrefix(s, "`") {
		if len(s) < 2 || !strings.HasSuffix(s, "`") || strings.Count(s, "`") != 2 {
			return nil, fmt.Errorf("term %s: want `column name` between two backquotes", s)
		}
		return &term{kind: kindNum, col: s[1 : len(s)-1], bare: true}, nil
	}
	open := strings.IndexByte(s, '(')
	if open < 0 {
		if strings.ContainsAny(s, ");") {
			return nil, fmt.Errorf("term %q: unbalanced parentheses", s)
		}
		if col, thr, ok := strings.Cut(s, ">"); ok {
			col = strings.TrimSpace(col)
			t, err := strconv.ParseFloat(strings.TrimSpace(thr), 64)
			if err != nil || math.IsNaN(t) || math.IsInf(t, 0) || col == "" {
				return nil, fmt.Errorf("term %q: want column>number", s)
			}
			return Above(col, t), nil
		}
		return &term{kind: kindNum, col: s, bare: true}, nil
	}
	if !strings.HasSuffix(s, ")") || strings.Count(s, "(") != 1 || strings.Count(s, ")") != 1 {
		return nil, fmt.Errorf("term %q: want fn(column) with one pair of parentheses", s)
	}
	fn := strings.ToLower(strings.TrimSpace(s[:open]))
	args := strings.Split(s[open+1:len(s)-1], ";")
	col := strings.TrimSpace(args[0])
	if col == "" {
		return nil, fmt.Errorf("term %q: no column", s)
	}
	opts := args[1:]
	switch fn {
	case "num", "log", "log1p", "hour", "dow", "month":
		if len(opts) > 0 {
			return nil, fmt.Errorf("term %q: %s takes no options", s, fn)
		}
		switch fn {
		case "num":
			return Num(col), nil
		case "log":
			return Log(col), nil
		case "log1p":
			return Log1p(col), nil
		case "hour":
			return HourOfDay(col), nil
		case "dow":
			return DayOfWeek(col), nil
		}
		return Month(col), nil
	case "above":
		if len(opts) != 1 {
			return nil, fmt.Errorf("term %q: want above(column;threshold)", s)
		}
		t, err := strconv.ParseFloat(strings.TrimSpace(opts[0]), 64)
		if err != nil || math.IsNaN(t) || math.IsInf(t, 0) {
			return nil, fmt.Errorf("term %q: threshold %q is not a finite number", s, opts[0])
		}
		return Above(col, t), nil
	case "cat":
		var co []CatOption
		seen := map[string]bool{}
		for _, o := range opts {
			k, v, ok := strings.Cut(strings.TrimSpace(o), "=")
			key := strings.TrimSpace(k)
			if seen[key] {
				return nil, fmt.Errorf("term %q: option %s given twice: give it once", s, key)
			}
			seen[key] = true
			switch key {
			case "top":
				n, err := strconv.Atoi(strings.TrimSpace(v))
				if !ok || err != nil || n < 1 {
					return nil, fmt.Errorf("term %q: want top=K with K ≥ 1", s)
				}
				co = append(co, TopK(n))
			case "ref":
				if !ok || v == "" {
					return nil, fmt.Errorf("term %q: want ref=LEVEL", s)
				}
				co = append(co, Reference(v))
			case "sd":
				sd, err := strconv.ParseFloat(strings.TrimSpace(v), 64)
				if !ok || err != nil || !(sd > 0) || math.IsInf(sd, 0) {
					return nil, fmt.Errorf("term %q: want sd=S with S a finite number > 0", s)
				}
				co = append(co, NormalLevels(sd))
			default:
				return nil, fmt.Errorf("term %q: unknown option %q (cat takes top=K, ref=LEVEL and sd=S)", s, o)
			}
		}
		return Categorical(col, co...), nil
	case "factor":
		if len(opts) > 0 {
			return nil, fmt.Errorf("term %q: factor takes no options (cat(%s;top=K;ref=LEVEL) takes them)", s, col)
		}
		return Factor(col), nil
	}
	return nil, fmt.Errorf("term %q: unknown function %q (want num, log, log1p, above, cat, factor, hour, dow or month)", s, fn)
}

// isRandom reports whether a term is written as a random-effect term,
// (… | g).
func isRandom(s string) bool {
	s = strings.TrimSpace(s)
	return strings.HasPrefix(s, "(") && strings.Contains(s, "|")
}

// parseRandom parses a random-effect term (see ParseTerms) and reports
// whether it was written with a single '|': its effects, if more than
// one, are then Correlated.
func parseRandom(s string) (terms []Term, single bool, err error) {
	s = strings.TrimSpace(s)
	if !strings.HasSuffix(s, ")") {
		return nil, false, fmt.Errorf("random-effect term %q: want (1 + x | group) with the closing parenthesis last", s)
	}
	body := s[1 : len(s)-1]
	lhs, rhs, _ := strings.Cut(body, "|")
	single = !strings.HasPrefix(rhs, "|")
	rhs = strings.TrimPrefix(rhs, "|") // lme4's ||: independent effects
	if strings.Contains(rhs, "|") {
		return nil, false, fmt.Errorf("random-effect term %q: more than one '|'", s)
	}
	rhs = strings.TrimSpace(rhs)
	if rhs == "" || strings.ContainsAny(rhs, "()+;>") {
		return nil, false, fmt.Errorf("random-effect term %q: the grouping factor %q is not a column, a:b (their interaction) or a/b (b nested in a)", s, rhs)
	}
	intercept, seen := true, false
	var slopes []Term
	for _, part := range splitTop(lhs, '+') {
		part = strings.TrimSpace(part)
		switch part {
		case "1", "0", "-1":
			if seen {
				return nil, false, fmt.Errorf("random-effect term %q: the intercept (1 or 0) is given twice", s)
			}
			seen, intercept = true, part == "1"
			continue
		case "":
			return nil, false, fmt.Errorf("random-effect term %q: an empty term before '|' (want 1 + x + …)", s)
		}
		t, err := parseAtom(part)
		if err != nil {
			return nil, false, fmt.Errorf("random-effect term %q: slope %w", s, err)
		}
		slopes = append(slopes, t)
	}
	if !intercept && len(slopes) == 0 {
		return nil, false, fmt.Errorf("random-effect term %q: neither an intercept nor a slope", s)
	}
	mk := func(by string) Term {
		if intercept {
			return Random(by, slopes...)
		}
		return RandomSlopes(by, slopes...)
	}
	nest := strings.Split(rhs, "/")
	for k := range nest {
		for _, c := range strings.Split(nest[k], ":") {
			if strings.TrimSpace(c) == "" {
				return nil, false, fmt.Errorf("random-effect term %q: an empty column in the grouping factor %q", s, rhs)
			}
		}
		t := mk(strings.Join(nest[:k+1], ":"))
		if single && effects(t) > 1 {
			t = Correlated(t)
		}
		terms = append(terms, t)
	}
	return terms, single, nil
}
