// Copyright ©2026 The exactmh Authors. All rights reserved.
// Use of this source code is governed by a BSD-style
// license that can be found in the LICENSE file.

package stancsv

import (
	"regexp"
	"strconv"
	"strings"
)

// SafeNames returns parameter names every Stan CSV reader takes, one for
// each of names, in order: a Stan identifier (a letter, then letters,
// digits and underscores, not ending in '_': brms's "sd_g__Intercept" is
// kept), optionally followed by CmdStan's CSV
// indices ".1", ".2.3". Readers parse the names: rstan's read_stan_csv
// passes the header through R's make.names and splits a name at its first
// '.' into a parameter and its indices, so "(Intercept)" (which R makes
// "X.Intercept.") or "date.hour.sin" fail it; cmdstanpy and ArviZ group
// "name.1" columns the same way; a name ending in "__" is a sampler column
// to all of them.
//
// A name already of that form is kept. Stan's bracket form "beta[2,1]"
// becomes "beta.2.1". Any other name has each run of characters outside
// [A-Za-z0-9] replaced by one '_', leading and trailing '_' trimmed, and
// "x_" put before a leading digit or an empty result ("(Intercept)" →
// "Intercept", "log(distance)" → "log_distance", "origin=ATL" →
// "origin_ATL", "date.hour.sin" → "date_hour_sin", "if" → "if_"; R's
// reserved words would be renamed by make.names, so they gain a '_'
// too). Names made equal by this get "_2", "_3", … in order.
func SafeNames(names []string) []string {
	out := make([]string, len(names))
	seen := make(map[string]bool, len(names))
	// next[base] is the suffix to try next for base: the ones below it are
	// taken, and stay taken, so many names made equal cost linear time.
	next := make(map[string]int)
	for j, n := range names {
		s := safeName(n)
		if seen[s] {
			base := s
			k := max(next[base], 2)
			for s = base + "_" + strconv.Itoa(k); seen[s]; {
				k++
				s = base + "_" + strconv.Itoa(k)
			}
			next[base] = k + 1
		}
		seen[s] = true
		out[j] = s
	}
	return out
}

var (
	// stanIndexed is a Stan identifier with CmdStan's CSV indices.
	stanIndexed = regexp.MustCompile(`^[A-Za-z](?:[A-Za-z0-9]|_+[A-Za-z0-9])*(?:\.[0-9]+)*$`)
	// stanBracket is a Stan identifier with Stan's bracket indices.
	stanBracket = regexp.MustCompile(`^([A-Za-z](?:[A-Za-z0-9]|_[A-Za-z0-9])*)\[\s*([0-9]+(?:\s*,\s*[0-9]+)*)\s*\]$`)
	// nonAlnum is a run of characters that are not ASCII letters or digits.
	nonAlnum = regexp.MustCompile(`[^A-Za-z0-9]+`)
)

// rReserved are R's reserved words, which make.names renames.
var rReserved = map[string]bool{
	"if": true, "else": true, "repeat": true, "while": true, "function": true, "for": true,
	"next": true, "break": true, "TRUE": true, "FALSE": true, "NULL": true, "Inf": true,
	"NaN": true, "NA": true, "NA_integer_": true, "NA_real_": true, "NA_character_": true, "in": true,
}

func safeName(n string) string {
	if stanIndexed.MatchString(n) {
		base, _, _ := strings.Cut(n, ".")
		if !rReserved[base] {
			return n
		}
		return base + "_" + n[len(base):]
	}
	if m := stanBracket.FindStringSubmatch(n); m != nil && !rReserved[m[1]] {
		idx := strings.Split(m[2], ",")
		for i := range idx {
			idx[i] = strings.TrimSpace(idx[i])
		}
		return m[1] + "." + strings.Join(idx, ".")
	}
	s := strings.Trim(nonAlnum.ReplaceAllString(n, "_"), "_")
	if s == "" || s[0] >= '0' && s[0] <= '9' {
		s = "x_" + s
	}
	s = strings.TrimSuffix(s, "_")
	if rReserved[s] {
		s += "_"
	}
	return s
}

// stanArray is a column of a Stan array: a name and CmdStan's CSV indices.
var stanArray = regexp.MustCompile(`^([A-Za-z][A-Za-z0-9_]*)((?:\.[0-9]+)+)$`)

// RName returns the spelling rstan shows for the column name after
// read_stan_csv: a Stan array's column "name.k" or "name.2.1" (CmdStan's
// indices, as [SafeNames] writes an array) becomes "name[k]" or
// "name[2,1]"; any other name is returned as it is ("u_g_g0",
// "sd_g__Intercept"). Showing every name so lets a user read a summary
// and the same run in R with one spelling (TestSummaryNamesAsR).
func RName(name string) string {
	m := stanArray.FindStringSubmatch(name)
	if m == nil {
		return name
	}
	return m[1] + "[" + strings.ReplaceAll(m[2][1:], ".", ",") + "]"
}
