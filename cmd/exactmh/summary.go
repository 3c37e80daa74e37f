// Copyright ©2026 The exactmh Authors. All rights reserved.
// Use of this source code is governed by a BSD-style
// license that can be found in the LICENSE file.

package main

import (
	"flag"
	"io"
	"os"
	"strings"

	"github.com/exactmh/exactmh/stancsv"
)

const summaryUsage = `Usage: exactmh summary FILE...

Summarises Stan CSV files — exactmh's, CmdStan's or rstan's — as the chains
of one run, as CmdStan's stansummary does: for lp__ (if every file has it)
and each parameter, mean, sd, MCSE, 5%, 50% and 95% quantiles, bulk and
tail ESS, ESS per second of sampling and R-hat across the files, then
warnings. Files of different lengths are cut to the shortest; a last line
cut mid-row (a killed writer) is dropped with a warning.

The coefficients of exactmh sample's files are reported on the original
scale of each feature (the files' model_info says how the features were
standardised; --standardized reports them as sampled), with the prior and
the scale it is on; in a multilevel model the fixed effects are, and the
random effects stay as sampled, each scale's sd (sd_g__Intercept,
sd_g__x = exp(log_tau_…)) a row of its own, as in the files. Every
variable is spelt as rstan shows it after read_stan_csv: the files' column,
an array's Intercept.1 as Intercept[1]. --format csv or json writes the
same figures for programs; --percentiles and --sig-figs choose the
quantiles and digits.

`

func cmdSummary(args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("summary", flag.ContinueOnError)
	var rf reportFlags
	rf.register(fs, true)
	vars := fs.String("vars", "", "report only these variables, comma-separated (as the summary and R show them, u_g_L or Intercept[1], as the files' columns, Intercept.1, or as the run named them, u_g[L])")
	set, err := parseFlags(fs, args, summaryUsage, stdout)
	if err != nil {
		return err
	}
	rf.sigFigsSet = set["sig-figs"]
	ps, err := rf.check()
	if err != nil {
		return err
	}
	if fs.NArg() == 0 {
		return usageErr("summary: no files (usage: exactmh summary FILE...)")
	}
	var files []*stancsv.File
	for _, path := range fs.Args() {
		f, err := os.Open(path)
		if err != nil {
			return usageErr("summary: %v", err)
		}
		sf, err := stancsv.ReadOptions{DropPartial: true}.Read(f)
		f.Close()
		if err != nil {
			return usageErr("summary: %s: %v", path, err)
		}
		if err := checkStanFile(path, sf); err != nil {
			return err
		}
		files = append(files, sf)
	}
	s, err := stancsv.Summarize(files)
	if err != nil {
		return usageErr("summary: %v", err)
	}
	rp, err := filesReport(files, s, &rf, ps, stderr)
	if err != nil {
		return usageErr("summary: %v", err)
	}
	if *vars != "" {
		have := rp.cols
		at := make(map[string]int, len(have))
		for j, c := range have {
			at[c] = j
		}
		var names []string
		for _, v := range strings.Split(*vars, ",") {
			names = append(names, strings.TrimSpace(v))
		}
		if names, err = resolveVars(names, have); err != nil {
			return usageErr("--vars: %v", err)
		}
		keep := make([]row, len(names))
		for k, n := range names {
			keep[k] = rp.rows[at[n]]
		}
		rp.rows = keep
	}
	return rp.write(stdout, rf.format, rf.sigFigs)
}
