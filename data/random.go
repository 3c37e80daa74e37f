// Copyright ©2026 The exactmh Authors. All rights reserved.
// Use of this source code is governed by a BSD-style
// license that can be found in the LICENSE file.

package data

import (
	"cmp"
	"fmt"
	"slices"
	"strings"
)

// randomTerm is a random-effect term being built: the term, where it is
// in the Spec, and the index of its first column in Build's list of
// terms (its grouping columns, then its slopes).
type randomTerm struct {
	t     *term
	where string
	first int
}

// randomTerm checks a random-effect term's form (before any column is
// read): grouping columns named, slopes numeric, something to vary, and
// no second term on the same factor (their parameters would share
// names: put the slopes into one term).
func (b *builder) randomTerm(t *term, where string, prev []randomTerm) (randomTerm, error) {
	if t.optErr != "" {
		return randomTerm{}, fmt.Errorf("data: %s: %s: %s", b.src, where, t.optErr)
	}
	for _, by := range t.by {
		if by == "" {
			return randomTerm{}, fmt.Errorf("data: %s: %s: an empty grouping column in %q (want a column, or columns joined by ':')", b.src, where, t.col)
		}
	}
	if t.noInt && len(t.slopes) == 0 {
		return randomTerm{}, fmt.Errorf("data: %s: %s: neither a random intercept nor a slope", b.src, where)
	}
	for j, sl := range t.slopes {
		if sl == nil {
			return randomTerm{}, fmt.Errorf("data: %s: %s: slope %d is nil", b.src, where, j)
		}
		if !sl.spec().numeric() {
			return randomTerm{}, fmt.Errorf("data: %s: %s: slope %s is not numeric: a random slope is one column (Num, Log, Log1p or Above); give a categorical or calendar term its own factor, e.g. Random(%q)", b.src, where, sl, sl.spec().col+":"+strings.Join(t.by, ":"))
		}
		for _, other := range t.slopes[:j] {
			if numName(other.spec()) == numName(sl.spec()) {
				return randomTerm{}, fmt.Errorf("data: %s: %s: slope %s appears twice", b.src, where, sl)
			}
		}
	}
	name := strings.Join(t.by, ":")
	for _, r := range prev {
		if strings.Join(r.t.by, ":") == name {
			return randomTerm{}, fmt.Errorf("data: %s: %s and %s both group by %q: write one term with all its slopes, e.g. (1 + x + z | %s)", b.src, r.where, where, name, name)
		}
	}
	return randomTerm{t: t, where: where}, nil
}

// group builds a random-effect term's Group: each row's level of the
// grouping factor (the interaction of its columns), the levels sorted by
// name, and the slopes' values.
func (b *builder) group(r randomTerm, terms []*term, cols []*column, where []string) (Group, error) {
	t := r.t
	g := Group{Name: strings.Join(t.by, ":"), Term: t.String(), Intercept: !t.noInt, FixedSD: t.fixedSD, Correlated: t.corr}
	var index []int32
	var levels []level // names and counts; num orders Int and Bool levels
	var keys [][]int   // an interaction level's rank in each column
	for j := range t.by {
		k := r.first + j
		codes, lv := b.levelCodes(cols[k])
		sortLevels(codes, lv, cols[k].typ != String)
		if j == 0 {
			index, levels = codes, lv
			keys = make([][]int, len(lv))
			for l := range lv {
				keys[l] = []int{l}
			}
			continue
		}
		// The interaction: the pairs present, numbered in order of
		// appearance, then sorted.
		pair := make(map[[2]int32]int32)
		var next []level
		var nextKeys [][]int
		for i, a := range index {
			p := [2]int32{a, codes[i]}
			l, ok := pair[p]
			if !ok {
				l = int32(len(next))
				pair[p] = l
				next = append(next, level{name: levels[a].name + ":" + lv[codes[i]].name})
				nextKeys = append(nextKeys, append(slices.Clone(keys[a]), int(codes[i])))
			}
			next[l].count++
			index[i] = l
		}
		order := make([]int32, len(next))
		for l := range order {
			order[l] = int32(l)
		}
		slices.SortFunc(order, func(x, y int32) int { return slices.Compare(nextKeys[x], nextKeys[y]) })
		levels, keys = make([]level, len(next)), make([][]int, len(next))
		renum := make([]int32, len(next))
		for to, from := range order {
			levels[to], keys[to] = next[from], nextKeys[from]
			renum[from] = int32(to)
		}
		for i, l := range index {
			index[i] = renum[l]
		}
	}
	g.Index = index
	for _, lv := range levels {
		g.Levels = append(g.Levels, lv.name)
		g.Counts = append(g.Counts, lv.count)
	}
	for j := range t.slopes {
		k := r.first + len(t.by) + j
		p, err := b.numPlan(terms[k], cols[k], where[k])
		if err != nil {
			return Group{}, err
		}
		v := make([]float64, b.n)
		p.fill(v, 1, 0, 0, b.n)
		g.SlopeNames = append(g.SlopeNames, p.names[0])
		g.Slopes = append(g.Slopes, v)
		g.SlopeCenter = append(g.SlopeCenter, p.center[0])
		g.SlopeScale = append(g.SlopeScale, p.scale[0])
	}
	return g, nil
}

// sortLevels renumbers levels into the order of their names (numeric:
// of their values), rewriting codes.
func sortLevels(codes []int32, levels []level, numeric bool) {
	order := make([]int, len(levels))
	for k := range order {
		order[k] = k
	}
	slices.SortFunc(order, func(i, j int) int {
		if numeric {
			return cmp.Compare(levels[i].num, levels[j].num)
		}
		return strings.Compare(levels[i].name, levels[j].name)
	})
	sorted := make([]level, len(levels))
	renum := make([]int32, len(levels))
	for to, from := range order {
		sorted[to] = levels[from]
		renum[from] = int32(to)
	}
	copy(levels, sorted)
	for i, c := range codes {
		codes[i] = renum[c]
	}
}
