// Copyright ©2026 The exactmh Authors. All rights reserved.
// Use of this source code is governed by a BSD-style
// license that can be found in the LICENSE file.

package main

import (
	"encoding/csv"
	"fmt"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/exactmh/exactmh/stancsv"
)

// rReady reports why R cannot run the interop test ("" if it can): the
// test needs Rscript with the packages rstan, posterior and bayesplot
// (Debian's r-cran-rstan, r-cran-posterior and r-cran-bayesplot, which
// .ci/run installs).
func rReady() string {
	if _, err := exec.LookPath("Rscript"); err != nil {
		return "Rscript is not installed (apt-get install r-cran-rstan r-cran-posterior r-cran-bayesplot; .ci/run does)"
	}
	out, err := exec.Command("Rscript", "-e",
		`for (p in c("rstan", "posterior", "bayesplot")) if (!requireNamespace(p, quietly = TRUE)) { cat(p); quit(status = 3) }`).Output()
	if err != nil {
		return fmt.Sprintf("R package %s is not installed (apt-get install r-cran-%s; .ci/run does)", out, out)
	}
	return ""
}

// rRow is what R made of one variable of a run's files.
type rRow struct {
	essBulk, essTail, rhat float64
}

// rRead runs testdata/rinterop.R on files: rstan's read_stan_csv must read
// them with no error or warning; it returns posterior's ESS and R-hat per
// variable, the sampler columns rstan filed apart from the parameters, and
// rstan's parameter names (model_pars), and checks the bayesplot trace
// plot was drawn.
func rRead(t *testing.T, dir string, files []string) (rows map[string]rRow, sampler, pars []string) {
	t.Helper()
	script, err := filepath.Abs("testdata/rinterop.R")
	if err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(dir, "r.csv")
	png := filepath.Join(dir, "trace.png")
	cmd := exec.Command("Rscript", append([]string{"--vanilla", script, out, png}, files...)...)
	cmd.Dir = dir
	msg, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("Rscript rinterop.R %s: %v\n%s", strings.Join(files, " "), err, msg)
	}
	if strings.Contains(string(msg), "Warning") {
		t.Errorf("R warned:\n%s", msg)
	}
	if st, err := os.Stat(png); err != nil || st.Size() < 5000 {
		t.Errorf("bayesplot trace plot %s: %v (size %d)", png, err, sizeOf(st))
	}
	f, err := os.Open(out)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	recs, err := csv.NewReader(f).ReadAll()
	if err != nil {
		t.Fatalf("%s: %v", out, err)
	}
	rows = map[string]rRow{}
	num := func(s string) float64 {
		v, err := strconv.ParseFloat(s, 64)
		if err != nil {
			return math.NaN() // NA
		}
		return v
	}
	for _, r := range recs[1:] {
		switch {
		case strings.HasPrefix(r[0], "sampler:"):
			sampler = append(sampler, strings.TrimPrefix(r[0], "sampler:"))
		case strings.HasPrefix(r[0], "model_pars:"):
			pars = strings.Fields(strings.TrimPrefix(r[0], "model_pars:"))
		default:
			rows[r[0]] = rRow{num(r[1]), num(r[2]), num(r[3])}
		}
	}
	return rows, sampler, pars
}

// num is a JSON number of the summary, NaN for null.
func num(v *float64) float64 {
	if v == nil {
		return math.NaN()
	}
	return *v
}

func sizeOf(st os.FileInfo) int64 {
	if st == nil {
		return 0
	}
	return st.Size()
}

// sameTo3 reports whether a and b agree to 3 significant digits: within
// half a unit of b's third digit (both NaN, R's NA, also agree).
func sameTo3(a, b float64) bool {
	if math.IsNaN(a) || math.IsNaN(b) {
		return math.IsNaN(a) && math.IsNaN(b)
	}
	if b == 0 {
		return a == 0
	}
	unit := math.Pow(10, math.Floor(math.Log10(math.Abs(b)))-2)
	return math.Abs(a-b) <= unit/2+1e-12*math.Abs(b)
}

// TestRInterop writes every kind of file the command and package stancsv
// write — a full-batch kernel (MH, which knows lp__), a minibatch kernel
// (TunaMH, whose lp__ is 0), control variates with the Crank–Nicolson
// proposal (TunaMH-CV-CN), chains run as separate --chain-id processes
// from one --choice file, and the quickstart's -out files (stancsv.Write
// from the Go API) — and reads each run in R as its users would:
// rstan::read_stan_csv with no error or warning, the parameters exactly
// the design's (Stan-safe) names and every sampler column apart from them,
// posterior's bulk and tail ESS and R-hat equal to those of exactmh
// summary --standardized --format json (the coefficients as sampled, as
// the files hold them) to 3 significant digits, and a bayesplot trace plot
// drawn to a PNG. It skips, saying why, where R or a package is missing,
// and under -short (a dozen sampling runs and R: minutes on 2 cores).
func TestRInterop(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: the R interop run (R, rstan and a dozen sampling runs) belongs to the full suite, go test ./...")
	}
	if why := rReady(); why != "" {
		if os.Getenv("EXACTMH_REQUIRE_R") != "" { // CI, which installs R
			t.Fatalf("EXACTMH_REQUIRE_R is set, but %s", why)
		}
		t.Skip(why)
	}
	dir := t.TempDir()
	runs := map[string][]string{} // run → its files
	for _, kernel := range []string{"mh", "tunamh", "tunamh-cv-cn"} {
		mustRun(t, dir, sampleArgs("--kernel", kernel, "--chains", "3", "--prior", "normal:2.5", "--sig-figs", "6", "--out", kernel)...)
		for k := 1; k <= 3; k++ {
			runs[kernel] = append(runs[kernel], filepath.Join(dir, fmt.Sprintf("%s_%d.csv", kernel, k)))
		}
	}
	mustRun(t, dir, sampleArgs("--prior", "normal:2.5", "--choose-only", "--choice", "choice.json")...)
	for k := range 3 {
		mustRun(t, dir, sampleArgs("--prior", "normal:2.5", "--choice", "choice.json", "--chains", "3", "--chain-id", fmt.Sprint(k), "--out", "split")...)
		runs["chain-id"] = append(runs["chain-id"], filepath.Join(dir, fmt.Sprintf("split_%d.csv", k+1)))
	}
	{
		qs := filepath.Join(dir, "quickstart")
		cmd := exec.Command("go", "run", "./examples/quickstart", "-quick", "-quiet", "-compare=false", "-rows", "50000", "-chains", "2", "-out", qs)
		cmd.Dir = filepath.Join("..", "..")
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("go run ./examples/quickstart: %v\n%s", err, out)
		}
		runs["quickstart"] = []string{filepath.Join(qs, "quickstart_1.csv"), filepath.Join(qs, "quickstart_2.csv")}
	}
	for name, files := range runs {
		t.Run(name, func(t *testing.T) {
			var sf []*stancsv.File
			for _, p := range files {
				f := readCSV(t, p)
				sf = append(sf, f)
				if f.Columns[0] != "lp__" {
					t.Errorf("%s: first column %s, want lp__", p, f.Columns[0])
				}
			}
			if name == "chain-id" {
				if v, _ := sf[0].ConfigValue("auto"); !strings.Contains(v, "pilot") {
					t.Errorf("a --choice run's file does not carry the choice and its reason: auto = %q", v)
				}
			}
			if name != "quickstart" {
				for _, key := range []string{"family", "prior", "response", "terms", "data_file", "data_fingerprint"} {
					if v, ok := sf[0].Config["model_info."+key]; !ok || v == "" {
						t.Errorf("%s: no model_info.%s in the configuration comments", files[0], key)
					}
				}
			}
			// exactmh summary's figures, as sampled (--standardized: the
			// files hold the sampled coefficients, which R reads).
			js, _ := summaryJSON(t, dir, append([]string{"--standardized"}, files...)...)
			sum := map[string][3]float64{}
			for _, v := range js.Variables {
				sum[v.Variable] = [3]float64{num(v.ESSBulk), num(v.ESSTail), num(v.RHat)}
			}
			rows, sampler, pars := rRead(t, t.TempDir(), files)
			params := sf[0].ParamNames()
			if want := append(slices.Clone(params), "lp__"); !slices.Equal(pars, want) {
				t.Errorf("rstan's parameters %v, want the files' %v and lp__", pars, want)
			}
			for _, c := range sf[0].Columns {
				if strings.HasSuffix(c, "__") && c != "lp__" && !slices.Contains(sampler, c) {
					t.Errorf("rstan did not file %s as a sampler column (sampler columns %v)", c, sampler)
				}
			}
			if len(sf[0].Diagnostics) != 4 {
				t.Errorf("%s: trailer's diagnostics %v, want the means of accepted, batch_size, n_energy, n_grad", files[0], sf[0].Diagnostics)
			}
			checked := 0
			for name, g := range sum {
				r, ok := rows[name]
				if !ok {
					t.Errorf("R has no variable %s (has %d)", name, len(rows))
					continue
				}
				checked++
				for i, c := range []struct {
					what string
					rv   float64
				}{{"ess_bulk", r.essBulk}, {"ess_tail", r.essTail}, {"rhat", r.rhat}} {
					if !sameTo3(g[i], c.rv) {
						t.Errorf("%s %s: exactmh summary %.6g, posterior %.6g", name, c.what, g[i], c.rv)
					}
				}
			}
			if checked != len(params) && checked != len(params)+1 {
				t.Errorf("compared %d variables with R, want the %d parameters (and lp__)", checked, len(params))
			}
		})
	}
}
