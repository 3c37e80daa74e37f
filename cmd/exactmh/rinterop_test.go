// Copyright ©2026 The exactmh Authors. All rights reserved.
// Use of this source code is governed by a BSD-style
// license that can be found in the LICENSE file.

package main

import (
	"encoding/csv"
	"fmt"
	"math"
	"math/rand/v2"
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

// needR skips t under -short and where R or one of its packages is
// missing, saying why, unless EXACTMH_REQUIRE_R is set (as CI, which
// installs R, sets it): then a missing R fails the test.
func needR(t *testing.T) {
	t.Helper()
	if testing.Short() {
		t.Skip("-short: the R interop runs (R, rstan and sampling runs) belong to the full suite, go test ./...")
	}
	if why := rReady(); why != "" {
		if os.Getenv("EXACTMH_REQUIRE_R") != "" {
			t.Fatalf("EXACTMH_REQUIRE_R is set, but %s", why)
		}
		t.Skip(why)
	}
}

// TestRInterop writes every kind of file the command and package stancsv
// write — a full-batch kernel (MH, which knows lp__), a minibatch kernel
// (TunaMH, whose lp__ is 0), control variates with the Crank–Nicolson
// proposal (TunaMH-CV-CN), chains run as separate --chain-id processes
// from one --choice file, and the quickstart's -out files (stancsv.Write
// from the Go API) — and reads each run in R as its users would
// (checkInR). It skips, saying why, where R or a package is missing, and
// under -short (a dozen sampling runs and R: minutes on 2 cores).
func TestRInterop(t *testing.T) {
	needR(t)
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
			sf := checkInR(t, dir, files, name != "quickstart")
			if name == "chain-id" {
				if v, _ := sf[0].ConfigValue("auto"); !strings.Contains(v, "pilot") {
					t.Errorf("a --choice run's file does not carry the choice and its reason: auto = %q", v)
				}
			}
		})
	}
}

// TestRInteropMultilevel reads in R, as TestRInterop does (checkInR), the
// files of the multilevel families' runs with their natural-scale
// parameters, each on simulated data (writeMixedCSV: 1,200 rows, 12
// groups, a correlated random intercept and slope) with the automatic
// kernel, 2 chains × 300 draws: gaussian with σ estimated (no --sigma)
// and (1 + x | g) as a --formula, sigma, sd_g__Intercept, sd_g__x and
// cor_g__Intercept__x; negative binomial with (1 + x | g) in --terms,
// shape, the sds and the correlation; binomial with trials as
// k | trials(n) and a random intercept, sd_g__Intercept; ordinal with a
// random intercept, the cutpoints Intercept.1 … Intercept.3 (Stan's
// spelling of an array, which rstan reads as Intercept[1] …). Each named
// parameter must be a column of the files, one of rstan's parameters and
// a row of exactmh summary (text and JSON) spelt as rstan shows it
// (rstanName), and R must read the files with no error or warning
// (issue 42's output names).
func TestRInteropMultilevel(t *testing.T) {
	needR(t)
	dir := t.TempDir()
	data := writeMixedCSV(t, dir, 1200, 12)
	for _, c := range []struct {
		name  string
		model []string
		named []string
	}{
		{"gaussian", []string{"--family", "gaussian", "--formula", "y ~ x + (1 + x | g)"},
			[]string{"sigma", "sd_g__Intercept", "sd_g__x", "cor_g__Intercept__x"}},
		{"negbinomial", []string{"--family", "negbinomial", "--response", "c", "--terms", "x,(1+x|g)"},
			[]string{"shape", "sd_g__Intercept", "sd_g__x", "cor_g__Intercept__x"}},
		{"binomial", []string{"--family", "binomial", "--formula", "k | trials(n) ~ x + (1 | g)"},
			[]string{"sd_g__Intercept"}},
		{"ordinal", []string{"--family", "ordinal", "--formula", "r ~ x + (1 | g)"},
			[]string{"Intercept.1", "Intercept.2", "Intercept.3", "sd_g__Intercept"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			args := append([]string{"sample", "--data", data, "--chains", "2", "--warmup", "200", "--draws", "300",
				"--seed", "3", "--sig-figs", "6", "--quiet", "--out", c.name}, c.model...)
			mustRun(t, dir, args...)
			files := []string{filepath.Join(dir, c.name+"_1.csv"), filepath.Join(dir, c.name+"_2.csv")}
			sf := checkInR(t, dir, files, true)
			js, _ := summaryJSON(t, dir, files...)
			inJSON := map[string]bool{}
			for _, v := range js.Variables {
				inJSON[v.Variable] = true
			}
			text := strings.Split(mustRun(t, dir, append([]string{"summary"}, files...)...).stdout, "\n")
			params := sf[0].ParamNames()
			for _, n := range c.named {
				if !slices.Contains(params, n) {
					t.Errorf("%s is not a parameter column of the files: %v", n, params)
				}
				_, shown := rstanName(n)
				if !inJSON[shown] {
					t.Errorf("%s is not a variable of exactmh summary --format json", shown)
				}
				if !slices.ContainsFunc(text, func(l string) bool { return strings.HasPrefix(strings.TrimSpace(l), shown+" ") }) {
					t.Errorf("%s is not a row of exactmh summary:\n%s", shown, strings.Join(text, "\n"))
				}
			}
		})
	}
}

// writeMixedCSV writes n rows of simulated grouped data to dir/mixed.csv
// and returns its path: a covariate x ~ N(0, 1) and a group g of the
// given number of levels, each level's intercept and slope effects
// (u₀, u₁) drawn with sds 0.6 and 0.3 and correlation 0.5; the responses
// y = 1 + 0.5·x + u₀ + u₁·x + 1.3·ε (gaussian), k successes out of
// n ∈ 1…10 trials with logit P = −0.3 + 0.8·x + u₀ + u₁·x (binomial), an
// NB2 count c of log mean 0.5 + 0.6·x + u₀ + u₁·x and shape 2.5, and a
// rating r ∈ 1…4 of cumulative logit P(r ≤ k) = F(c_k − 0.6·x − u₀ − u₁·x)
// with cutpoints c = (−1, 0.5, 2) (ordinal).
func writeMixedCSV(t *testing.T, dir string, n, groups int) string {
	t.Helper()
	rng := rand.New(rand.NewPCG(53, 42))
	u0, u1 := make([]float64, groups), make([]float64, groups)
	for j := range groups {
		z0, z1 := rng.NormFloat64(), rng.NormFloat64()
		u0[j], u1[j] = 0.6*z0, 0.3*(0.5*z0+math.Sqrt(0.75)*z1)
	}
	var b strings.Builder
	b.WriteString("y,k,n,c,r,x,g\n")
	for i := range n {
		j, x := i%groups, rng.NormFloat64()
		eta := u0[j] + u1[j]*x
		y := 1 + 0.5*x + eta + 1.3*rng.NormFloat64()
		trials := 1 + rng.IntN(10)
		k := binomial(rng, trials, 1/(1+math.Exp(-(-0.3+0.8*x+eta))))
		c := negBinomial(rng, math.Exp(0.5+0.6*x+eta), 2.5)
		u := rng.Float64()
		r, z := 1, 0.6*x+eta+math.Log(u/(1-u))
		for _, cut := range []float64{-1, 0.5, 2} {
			if cut < z {
				r++
			}
		}
		fmt.Fprintf(&b, "%s,%d,%d,%d,%d,%s,g%d\n", strconv.FormatFloat(y, 'g', -1, 64), k, trials, c, r, strconv.FormatFloat(x, 'g', -1, 64), j)
	}
	path := filepath.Join(dir, "mixed.csv")
	if err := os.WriteFile(path, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// rstanName is what rstan's read_stan_csv makes of column col of a Stan
// CSV file: Stan writes an array's elements as name.1, name.2, … (name.i.j
// for a matrix), which rstan reads as the parameter name with the flat
// names name[1], name[i,j]; other names stay as they are.
func rstanName(col string) (par, flat string) {
	parts := strings.Split(col, ".")
	k := len(parts)
	for k > 1 && parts[k-1] != "" && strings.Trim(parts[k-1], "0123456789") == "" {
		k--
	}
	if k == len(parts) {
		return col, col
	}
	par = strings.Join(parts[:k], ".")
	return par, par + "[" + strings.Join(parts[k:], ",") + "]"
}

// checkInR reads one run's files in R as its users would and fails t
// unless: rstan::read_stan_csv reads them with no error or warning
// (rRead); lp__ is the first column; rstan's parameters are exactly the
// files' (Stan-safe) parameter names and lp__ (an array's elements
// name.k as one parameter, rstanName), and every sampler column
// is filed apart from them; the trailer holds the four diagnostics;
// exactmh summary --standardized --format json (the coefficients as
// sampled, as the files hold them) has exactly the files' parameters and
// lp__ as its variables, and its bulk and tail ESS and R-hat equal
// posterior's to 3 significant digits; and bayesplot drew a trace plot.
// With modelInfo the files' configuration comments must carry the model
// (family, prior, response, terms, data file and fingerprint), as the
// command writes them. It returns the files as read.
func checkInR(t *testing.T, dir string, files []string, modelInfo bool) []*stancsv.File {
	t.Helper()
	var sf []*stancsv.File
	for _, p := range files {
		f := readCSV(t, p)
		sf = append(sf, f)
		if f.Columns[0] != "lp__" {
			t.Errorf("%s: first column %s, want lp__", p, f.Columns[0])
		}
	}
	if modelInfo {
		for _, key := range []string{"family", "prior", "response", "terms", "data_file", "data_fingerprint"} {
			if v, ok := sf[0].Config["model_info."+key]; !ok || v == "" {
				t.Errorf("%s: no model_info.%s in the configuration comments", files[0], key)
			}
		}
	}
	js, _ := summaryJSON(t, dir, append([]string{"--standardized"}, files...)...)
	sum := map[string][3]float64{}
	for _, v := range js.Variables {
		sum[v.Variable] = [3]float64{num(v.ESSBulk), num(v.ESSTail), num(v.RHat)}
	}
	rows, sampler, pars := rRead(t, t.TempDir(), files)
	params := sf[0].ParamNames()
	var want []string
	for _, p := range params {
		if par, _ := rstanName(p); !slices.Contains(want, par) {
			want = append(want, par)
		}
	}
	if want = append(want, "lp__"); !slices.Equal(pars, want) {
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
	for _, p := range params {
		_, flat := rstanName(p)
		if _, ok := sum[flat]; !ok {
			t.Errorf("exactmh summary has no variable %s (as R shows the column %s)", flat, p)
		}
	}
	checked := 0
	for name, g := range sum {
		_, flat := rstanName(name)
		r, ok := rows[flat]
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
	return sf
}
