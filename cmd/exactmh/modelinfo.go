// Copyright ©2026 The exactmh Authors. All rights reserved.
// Use of this source code is governed by a BSD-style
// license that can be found in the LICENSE file.

package main

import (
	"strconv"
	"strings"
)

// priorScale says on which scale the prior is put: the coefficients of the
// design's columns, which the design standardises (mean 0, sd 1) unless
// --no-standardize.
func (m *fitted) priorScale() string {
	if strings.EqualFold(strings.TrimSpace(m.fp.Prior), "flat") {
		return ""
	}
	if m.fp.Standardize {
		return "on the coefficients of the standardised features (each numeric feature scaled to mean 0, sd 1)"
	}
	return "on the coefficients of the features as they are (--no-standardize)"
}

// info is what the Stan CSV files say of the model in their "# model_info"
// configuration comments (stancsv.Options.Model): the family, the prior
// and its scale, the response, the terms, the data file and its
// fingerprint, and the design's columns with their standardisation, so
// that a file alone says what was sampled.
func (m *fitted) info(dataPath string) [][2]string {
	fp := &m.fp
	family := fp.Family
	switch family {
	case "gaussian":
		if fp.Sigma > 0 {
			family += " (sigma " + strconv.FormatFloat(fp.Sigma, 'g', -1, 64) + ")"
		} else {
			family += " (sigma estimated: log_sigma sampled)"
		}
	case "binomial":
		family += " (trials " + fp.Trials + ", link " + fp.Link + ")"
	case "negbinomial":
		family += " (NB2, log link, shape estimated: log_shape sampled"
		if fp.Offset != "" {
			family += "; offset " + fp.Offset
		}
		family += ")"
	case "ordinal":
		family += " (cumulative logit: P(y <= k) = logistic(Intercept[k] - eta), no intercept column; cut_1 and log_cut_diff_k sampled)"
	case "studentt":
		family += " (nu " + strconv.FormatFloat(fp.Nu, 'g', -1, 64)
		if fp.Sigma > 0 {
			family += ", sigma " + strconv.FormatFloat(fp.Sigma, 'g', -1, 64) + ")"
		} else {
			family += ", sigma estimated: log_sigma sampled)"
		}
	}
	prior := fp.Prior
	if s := m.priorScale(); s != "" {
		prior += " " + s
	}
	if m.tau != "" {
		prior += "; each random-effect scale tau: " + m.tau
	}
	if fp.SigmaPrior != "" && fp.Family != "negbinomial" && fp.Family != "ordinal" {
		prior += "; sigma: " + fp.SigmaPrior
	} else if fp.SigmaPrior != "" && fp.Family == "ordinal" {
		prior += "; cutpoints: " + fp.SigmaPrior
	} else if fp.SigmaPrior != "" {
		prior += "; shape: " + fp.SigmaPrior
	}
	d := m.design
	num := func(v []float64) string {
		s := make([]string, len(v))
		for j, x := range v {
			s[j] = strconv.FormatFloat(x, 'g', 10, 64)
		}
		return strings.Join(s, ",")
	}
	return [][2]string{
		{"family", family},
		{"prior", prior},
		{"beta", strconv.FormatFloat(fp.Beta, 'g', -1, 64)},
		{"response", fp.Response},
		{"terms", strings.Join(fp.Terms, ", ")},
		{"intercept", strconv.FormatBool(fp.Intercept)},
		{"standardize", strconv.FormatBool(fp.Standardize)},
		{"drop_missing", strconv.FormatBool(fp.DropMissing)},
		{"data_file", dataPath},
		{"data_rows", strconv.Itoa(fp.N)},
		{"data_dropped", strconv.Itoa(fp.Dropped)},
		{"data_fingerprint", "sha256:" + fp.DataHash},
		{"design_columns", strings.Join(fp.Names, " | ")},
		{"design_center", num(d.Center)},
		{"design_scale", num(d.Scale)},
	}
}
