// Copyright ©2026 The exactmh Authors. All rights reserved.
// Use of this source code is governed by a BSD-style
// license that can be found in the LICENSE file.

package main

import (
	"slices"
	"strings"

	"github.com/exactmh/exactmh/data"
)

// dotTopK is the number of levels "." keeps of a text column (the rest
// are "other"), so that an identifier column does not make thousands of
// coefficients.
const dotTopK = 20

// splitDot parses a term list that may hold ".", R's "all other columns",
// and reports whether it did: "." is left out of the terms returned, to
// be expanded by dotTerms once the file's columns are known.
func splitDot(s string) (terms []data.Term, cols []string, dot bool, err error) {
	var rest []string
	for _, part := range strings.Split(s, ",") {
		if strings.TrimSpace(part) == "." {
			dot = true
			continue
		}
		rest = append(rest, part)
	}
	terms, cols, err = parseTerms(strings.Join(rest, ","))
	return terms, cols, dot, err
}

// dotTerms are the terms "." stands for: every column of f not already
// used (the response's and the named terms' columns, used), each as its
// type suggests — a number (float, int, bool) as num(c), text as
// cat(c;top=20), a time as hour(c), dow(c) and month(c).
func dotTerms(f *data.Frame, used []string) []data.Term {
	var out []data.Term
	for _, c := range f.Columns() {
		if slices.Contains(used, c.Name) {
			continue
		}
		switch c.Type {
		case data.Float, data.Int, data.Bool:
			out = append(out, data.Num(c.Name))
		case data.String:
			out = append(out, data.Categorical(c.Name, data.TopK(dotTopK)))
		case data.Time:
			out = append(out, data.HourOfDay(c.Name), data.DayOfWeek(c.Name), data.Month(c.Name))
		}
	}
	return out
}
