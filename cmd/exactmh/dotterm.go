// Copyright ©2026 The exactmh Authors. All rights reserved.
// Use of this source code is governed by a BSD-style
// license that can be found in the LICENSE file.

package main

import (
	"strings"

	"github.com/exactmh/exactmh/data"
)

// splitDot parses a term list that may hold ".", R's "all other columns",
// and reports whether it did: "." is left out of the terms returned, to
// be expanded by dotTerms once the file's columns are known.
func splitDot(s string) (terms []data.Term, cols []string, dot bool, warnings []string, err error) {
	var rest []string
	for _, part := range strings.Split(s, ",") {
		if strings.TrimSpace(part) == "." {
			dot = true
			continue
		}
		rest = append(rest, part)
	}
	terms, cols, warnings, err = parseTermsWarn(strings.Join(rest, ","))
	return terms, cols, dot, warnings, err
}

// dotTerms are the terms "." stands for (data.DotTerms): every column
// of f not already used (the response's and the named terms' columns,
// used), each as its type suggests — a number (float, int, bool) as
// num(c), text as cat(c;top=20), a time as hour(c), dow(c) and month(c).
func dotTerms(f *data.Frame, used []string) []data.Term { return data.DotTerms(f, used) }
