// Copyright ©2026 The exactmh Authors. All rights reserved.
// Use of this source code is governed by a BSD-style
// license that can be found in the LICENSE file.

package main

import (
	"encoding/csv"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"math"
	"runtime"
	"slices"

	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"text/tabwriter"
	"time"

	"github.com/exactmh/exactmh"
	"github.com/exactmh/exactmh/diagnostics"
	"github.com/exactmh/exactmh/stancsv"
)

// reportFlags say how a summary is reported: sample's table and
// summary's table, CSV or JSON.
type reportFlags struct {
	format       string
	percentiles  string
	sigFigs      int
	standardized bool
	// verbatim: the run's own names (summary --verbatim-names), restored
	// from the files' parameter_names block.
	verbatim bool
	// sigFigsSet reports --sig-figs given on the command line: 0 is then
	// an error, not the default.
	sigFigsSet bool
}

// register adds the flags; withFormat adds --format, --percentiles and
// --sig-figs too (summary's; sample's --sig-figs is the files' digits).
func (r *reportFlags) register(fs *flag.FlagSet, withFormat bool) {
	fs.BoolVar(&r.standardized, "standardized", false, "report the coefficients of the standardised features, as sampled (default: on the original scale of each feature)")
	r.format, r.percentiles = "table", "5,50,95"
	if withFormat {
		fs.StringVar(&r.format, "format", "table", "output `format`: table, csv or json")
		fs.StringVar(&r.percentiles, "percentiles", "5,50,95", "the `list` of percentiles reported, comma-separated, each in [0, 100]")
		fs.IntVar(&r.sigFigs, "sig-figs", 0, "significant `digits` of the numbers, 1–17 (default: 4 in the table, 6 in csv and json)")
		fs.BoolVar(&r.verbatim, "verbatim-names", false, "name the variables as the run did (u_g[Zürich]), from the files' parameter_names comments, instead of the CSV columns as rstan shows them (u_g_Z_rich, Intercept[1])")
	}
}

// check checks the flags and returns the percentiles.
func (r *reportFlags) check() ([]float64, error) {
	switch r.format {
	case "table", "csv", "json":
	default:
		return nil, usageErr("--format %s: want table, csv or json", r.format)
	}
	if r.sigFigs == 0 && r.sigFigsSet {
		return nil, usageErr("--sig-figs 0: want in [1, 17] (leave it out for the default: 4 in the table, 6 in csv and json)")
	}
	if r.sigFigs == 0 {
		r.sigFigs = 4
		if r.format != "table" {
			r.sigFigs = 6
		}
	}
	if r.sigFigs < 1 || r.sigFigs > 17 {
		return nil, usageErr("--sig-figs %d: want in [1, 17]", r.sigFigs)
	}
	var ps []float64
	for _, f := range strings.Split(r.percentiles, ",") {
		p, err := strconv.ParseFloat(strings.TrimSpace(f), 64)
		if err != nil || !(p >= 0 && p <= 100) {
			return nil, usageErr("--percentiles %s: %q is not a number in [0, 100]", r.percentiles, f)
		}
		if slices.Contains(ps, p) {
			return nil, usageErr("--percentiles %s: %v twice (the columns would share a name)", r.percentiles, p)
		}
		ps = append(ps, p)
	}
	return ps, nil
}

// draws are a run's draws to report: x[j][c] is variable j's draws in
// chain c, all chains cut to the same length.
type draws struct {
	names []string
	x     [][][]float64
}

// resultDraws are the draws of res's chains with draws, cut to the
// summary's length.
//
// The draws are transposed in one pass over each chain's rows (each row's
// values go to the coordinates' columns, whose current cache lines the
// next row writes on), not by Result.Samples per coordinate, which reads
// every row once per coordinate.
func resultDraws(res *exactmh.Result, s *exactmh.Summary) *draws {
	d := &draws{names: make([]string, res.Dim), x: make([][][]float64, res.Dim)}
	var used []*exactmh.ChainResult
	for _, c := range res.Chains {
		if c.Len() >= s.Draws && c.Len() > 0 {
			used = append(used, c)
		}
	}
	m, n := len(used), s.Draws
	flats := make([][]float64, res.Dim) // variable j's draws, chain after chain
	for j := range res.Dim {
		d.names[j] = s.Params[j].Name
		if m == 0 {
			continue
		}
		flats[j] = make([]float64, m*n)
		d.x[j] = make([][]float64, m)
		for i := range m {
			d.x[j][i] = flats[j][i*n : (i+1)*n : (i+1)*n]
		}
	}
	for i, c := range used {
		for k := range n {
			at := i*n + k
			for j, v := range c.Draws[k*res.Dim : (k+1)*res.Dim] {
				flats[j][at] = v
			}
		}
	}
	return d
}

// fileDraws are the draws of the variables s summarised, from the files.
// Each file's columns are looked up in a map, once: linear in the
// columns (File.Column's search per name made it quadratic).
func fileDraws(files []*stancsv.File, s *exactmh.Summary) (*draws, error) {
	d := &draws{names: make([]string, 0, len(s.Params)), x: make([][][]float64, 0, len(s.Params))}
	index := make([]map[string]int, len(files))
	for i, f := range files {
		index[i] = make(map[string]int, len(f.Columns))
		for j, c := range f.Columns {
			index[i][c] = j
		}
	}
	for _, p := range s.Params {
		x := make([][]float64, len(files))
		for i, f := range files {
			j, ok := index[i][p.Name]
			if !ok {
				return nil, fmt.Errorf("file %d has no column %q", i+1, p.Name)
			}
			c := make([]float64, s.Draws)
			for k := range c {
				c[k] = f.Draws[k][j]
			}
			x[i] = c
		}
		d.names = append(d.names, p.Name)
		d.x = append(d.x, x)
	}
	return d, nil
}

// scaling is how the sampled coefficients map onto the original scale of
// the features (data.Design.Unstandardize): b_j = θ_j/scale_j, and the
// intercept θ_0 − Σ_j θ_j·center_j/scale_j.
type scaling struct {
	center, scale []float64
	intercept     bool
	// multilevel reports parameters after the design's columns (random
	// effects and their scales), which stay as sampled.
	multilevel bool
}

// fileScaling reads the scaling from a file's model_info comments (nil if
// the file has none, or the features were not standardised).
func fileScaling(f *stancsv.File) *scaling {
	if f.Config["model_info.standardize"] != "true" {
		return nil
	}
	nums := func(key string) []float64 {
		var out []float64
		for _, s := range strings.Split(f.Config["model_info."+key], ",") {
			v, err := strconv.ParseFloat(strings.TrimSpace(s), 64)
			if err != nil || v == 0 && key == "design_scale" {
				return nil
			}
			out = append(out, v)
		}
		return out
	}
	sc := &scaling{center: nums("design_center"), scale: nums("design_scale"), intercept: f.Config["model_info.intercept"] == "true"}
	// The design's columns are the first parameters: all of them in a
	// flat model, the fixed effects of a multilevel one.
	if sc.center == nil || len(sc.center) != len(sc.scale) || len(sc.center) > len(f.ParamNames()) {
		return nil
	}
	sc.multilevel = len(sc.center) < len(f.ParamNames())
	if terms, ok := f.Config["model_info.terms"]; ok {
		// A flat model's parameters after the design's are its family's
		// (log_sigma, log_shape, the cutpoints): random effects come only
		// with a random-effect term, written (1 | g) or as NormalLevels.
		sc.multilevel = sc.multilevel && (strings.Contains(terms, "|") || strings.Contains(terms, "NormalLevels("))
	}
	return sc
}

// apply maps the draws of the coefficients (the len(sc.scale) variables
// after lp__, if it is first) onto the original scale, in place.
func (sc *scaling) apply(d *draws) error {
	off := 0
	if len(d.names) > 0 && d.names[0] == "lp__" {
		off = 1
	}
	if len(d.x)-off < len(sc.scale) {
		return fmt.Errorf("%d coefficients, but the design's standardisation has %d", len(d.x)-off, len(sc.scale))
	}
	coef := d.x[off : off+len(sc.scale)]
	if len(coef) == 0 {
		return nil
	}
	for c := range coef[0] {
		for i := range coef[0][c] {
			var shift, th0 float64
			th0 = coef[0][c][i]
			for j := range coef {
				b := coef[j][c][i] / sc.scale[j]
				coef[j][c][i] = b
				shift += b * sc.center[j]
			}
			if sc.intercept {
				coef[0][c][i] = th0 - (shift - coef[0][c][i]*sc.center[0])
			}
		}
	}
	return nil
}

// row is one variable's line of the report.
type row struct {
	Name               string
	Mean, SD, MCSE     float64
	Percentiles        []float64
	ESSBulk, ESSTail   float64
	ESSPerSecond, RHat float64
}

// rows computes the report's rows: the summary's figures of each
// variable's draws and the percentiles (type-7 quantiles, as R's default
// and Summary's 5%, 50%, 95%). known, if not nil, gives the figures of
// the variables whose draws are as summarised (known(j) false: compute
// them), so that they are not computed twice. The variables are shared
// among GOMAXPROCS goroutines; progress, if not nil, is told every few
// seconds how many are done (a summary of 10⁵ variables takes a while).
func rows(d *draws, ps []float64, secs float64, known func(j int) (exactmh.ParamSummary, bool), progress io.Writer) []row {
	out := make([]row, len(d.names))
	var done atomic.Int64
	one := func(j int) {
		name := d.names[j]
		p, ok := exactmh.ParamSummary{}, false
		if known != nil {
			p, ok = known(j)
		}
		if !ok {
			p = exactmh.SummarizeParam(name, d.x[j], secs)
		}
		r := row{Name: name, Mean: p.Mean, SD: p.SD, MCSE: p.MCSE, ESSBulk: p.ESSBulk, ESSTail: p.ESSTail,
			ESSPerSecond: p.ESSPerSecond, RHat: p.RHat}
		var pool []float64 // the pooled draws, sorted, once a percentile needs them
		for _, q := range ps {
			if v, got := summaryQuantile(p, ok, q); got {
				r.Percentiles = append(r.Percentiles, v)
				continue
			}
			if pool == nil {
				n := 0
				for _, c := range d.x[j] {
					n += len(c)
				}
				pool = make([]float64, 0, n)
				for _, c := range d.x[j] {
					pool = append(pool, c...)
				}
				diagnostics.Sort(pool) // sort.Float64s bit for bit, in linear time
			}
			r.Percentiles = append(r.Percentiles, quantile7(pool, q/100))
		}
		out[j] = r
		done.Add(1)
	}
	workers := min(runtime.GOMAXPROCS(0), max(1, len(d.names)/64))
	var wg sync.WaitGroup
	for w := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for j := w; j < len(d.names); j += workers {
				one(j)
			}
		}()
	}
	if progress != nil {
		finished := make(chan struct{})
		go func() { wg.Wait(); close(finished) }()
		tick := time.NewTicker(3 * time.Second)
		defer tick.Stop()
	wait:
		for {
			select {
			case <-finished:
				break wait
			case <-tick.C:
				fmt.Fprintf(progress, "summarising: %d of %d variables\n", done.Load(), len(d.names))
			}
		}
	}
	wg.Wait()
	return out
}

// quantile7 is the type-7 quantile of sorted x (NaN if x is empty), in
// R's arithmetic form (1−h)·x_lo + h·x_hi as Summarize computes its
// quantiles, so that a percentile read from the Summary (summaryQuantile)
// and one computed here are the same function of the draws.
func quantile7(x []float64, p float64) float64 {
	if len(x) == 0 {
		return math.NaN()
	}
	h := p * float64(len(x)-1)
	lo := int(math.Floor(h))
	if lo >= len(x)-1 {
		return x[len(x)-1]
	}
	q := x[lo]
	if f := h - float64(lo); f > 0 && x[lo+1] != x[lo] {
		q = (1-f)*x[lo] + f*x[lo+1]
	}
	return q
}

// summaryQuantile returns the percentile q of a coordinate whose Summary
// figures p serve the report (known): Summarize's 5 %, 50 % and 95 %
// quantiles, the same as quantile7 on the same draws (TestReportQuantiles),
// without sorting them again.
func summaryQuantile(p exactmh.ParamSummary, known bool, q float64) (float64, bool) {
	if !known || p.NotAvailable {
		return 0, false
	}
	switch q {
	case 5:
		return p.Q5, true
	case 50:
		return p.Q50, true
	case 95:
		return p.Q95, true
	}
	return 0, false
}

// percentName labels percentile p as the table's column ("5%", "97.5%").
func percentName(p float64) string { return strconv.FormatFloat(p, 'g', -1, 64) + "%" }

// report is a summary to print: the header line, the rows, the notes on
// scale and prior, and the warnings.
type report struct {
	s           *exactmh.Summary
	percentiles []float64
	rows        []row
	cols        []string // each row's Stan CSV column (exactmh summary's; --vars looks them up)
	scale       string   // which scale the coefficients are on ("" if not a GLM)
	prior       string   // the prior and its scale
}

// write prints the report in the format.
func (rp *report) write(w io.Writer, format string, sig int) error {
	switch format {
	case "csv":
		return rp.writeCSV(w, sig)
	case "json":
		return rp.writeJSON(w, sig)
	}
	return rp.writeTable(w, sig)
}

func (rp *report) header() string {
	s := rp.s
	exact := "exact"
	if !s.Exact {
		exact = "INEXACT"
	}
	var b strings.Builder
	fmt.Fprintf(&b, "%s (%s), %d chains × %d draws, %s: accept %.3f, %.1f evals/step", s.Kernel, exact, s.Chains, s.Draws, s.Status, s.AcceptRate, s.EvalsPerStep)
	if s.GradPerStep > 0 {
		fmt.Fprintf(&b, ", %.1f grads/step", s.GradPerStep)
	}
	if s.MeanBatch > 0 {
		fmt.Fprintf(&b, ", mean batch %.1f", s.MeanBatch)
	}
	fmt.Fprintf(&b, ", sampling %.3gs (summed over chains)", s.SamplingTime.Seconds())
	return b.String()
}

func (rp *report) writeTable(w io.Writer, sig int) error {
	fmt.Fprintln(w, rp.header())
	if rp.scale != "" {
		fmt.Fprintf(w, "coefficients %s\n", rp.scale)
	}
	if rp.prior != "" {
		fmt.Fprintf(w, "prior: %s\n", rp.prior)
	}
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	head := []string{"", "mean", "sd", "mcse"}
	for _, p := range rp.percentiles {
		head = append(head, percentName(p))
	}
	head = append(head, "ess_bulk", "ess_tail", "ess/s", "rhat")
	fmt.Fprint(tw, strings.Join(head, "\t")+"\t\n")
	width := 0
	for _, r := range rp.rows {
		width = max(width, len(r.Name))
	}
	g := func(v float64) string {
		if math.IsNaN(v) {
			return "NA"
		}
		return strconv.FormatFloat(v, 'g', sig, 64)
	}
	n := func(v float64) string {
		if math.IsNaN(v) {
			return "NA"
		}
		return strconv.FormatFloat(v, 'f', 0, 64)
	}
	// ESS per second: whole numbers from 100 on, 2 significant digits
	// below (0.39, not 0).
	rate := func(v float64) string {
		if math.IsNaN(v) || math.Abs(v) >= 100 {
			return n(v)
		}
		return strconv.FormatFloat(v, 'g', 2, 64)
	}
	for _, r := range rp.rows {
		f := []string{fmt.Sprintf("%-*s", width, r.Name), g(r.Mean), g(r.SD), g(r.MCSE)}
		for _, q := range r.Percentiles {
			f = append(f, g(q))
		}
		rh := "NA"
		if !math.IsNaN(r.RHat) {
			rh = strconv.FormatFloat(r.RHat, 'f', 3, 64)
		}
		f = append(f, n(r.ESSBulk), n(r.ESSTail), rate(r.ESSPerSecond), rh)
		fmt.Fprint(tw, strings.Join(f, "\t")+"\t\n")
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	for _, msg := range rp.s.Warnings {
		if _, err := fmt.Fprintf(w, "warning: %s\n", msg); err != nil {
			return err
		}
	}
	return nil
}

func (rp *report) writeCSV(w io.Writer, sig int) error {
	cw := csv.NewWriter(w)
	head := []string{"variable", "mean", "sd", "mcse"}
	for _, p := range rp.percentiles {
		head = append(head, percentName(p))
	}
	head = append(head, "ess_bulk", "ess_tail", "ess_per_second", "rhat")
	cw.Write(head)
	g := func(v float64) string {
		if math.IsNaN(v) {
			return "NA" // as R's write.csv
		}
		return strconv.FormatFloat(v, 'g', sig, 64)
	}
	for _, r := range rp.rows {
		f := []string{r.Name, g(r.Mean), g(r.SD), g(r.MCSE)}
		for _, q := range r.Percentiles {
			f = append(f, g(q))
		}
		f = append(f, g(r.ESSBulk), g(r.ESSTail), g(r.ESSPerSecond), g(r.RHat))
		cw.Write(f)
	}
	cw.Flush()
	return cw.Error()
}

// jsonNum is a number JSON can hold: NaN becomes null.
type jsonNum struct {
	v   float64
	sig int
}

func (n jsonNum) MarshalJSON() ([]byte, error) {
	if math.IsNaN(n.v) || math.IsInf(n.v, 0) {
		return []byte("null"), nil
	}
	return strconv.AppendFloat(nil, n.v, 'g', n.sig, 64), nil
}

func (rp *report) writeJSON(w io.Writer, sig int) error {
	type jrow struct {
		Variable     string             `json:"variable"`
		Mean         jsonNum            `json:"mean"`
		SD           jsonNum            `json:"sd"`
		MCSE         jsonNum            `json:"mcse"`
		Percentiles  map[string]jsonNum `json:"percentiles"`
		ESSBulk      jsonNum            `json:"ess_bulk"`
		ESSTail      jsonNum            `json:"ess_tail"`
		ESSPerSecond jsonNum            `json:"ess_per_second"`
		RHat         jsonNum            `json:"rhat"`
	}
	out := struct {
		Kernel       string   `json:"kernel"`
		Exact        bool     `json:"exact"`
		Chains       int      `json:"chains"`
		Draws        int      `json:"draws"`
		AcceptRate   jsonNum  `json:"accept_rate"`
		EvalsPerStep jsonNum  `json:"evals_per_step"`
		MeanBatch    jsonNum  `json:"mean_batch"`
		Seconds      jsonNum  `json:"sampling_seconds"`
		Scale        string   `json:"scale,omitempty"`
		Prior        string   `json:"prior,omitempty"`
		Variables    []jrow   `json:"variables"`
		Warnings     []string `json:"warnings"`
	}{Kernel: rp.s.Kernel, Exact: rp.s.Exact, Chains: rp.s.Chains, Draws: rp.s.Draws,
		AcceptRate: jsonNum{rp.s.AcceptRate, sig}, EvalsPerStep: jsonNum{rp.s.EvalsPerStep, sig},
		MeanBatch: jsonNum{rp.s.MeanBatch, sig}, Seconds: jsonNum{rp.s.SamplingTime.Seconds(), sig},
		Scale: rp.scale, Prior: rp.prior, Warnings: slices.Clip(append([]string{}, rp.s.Warnings...))}
	for _, r := range rp.rows {
		j := jrow{Variable: r.Name, Mean: jsonNum{r.Mean, sig}, SD: jsonNum{r.SD, sig}, MCSE: jsonNum{r.MCSE, sig},
			Percentiles: map[string]jsonNum{}, ESSBulk: jsonNum{r.ESSBulk, sig}, ESSTail: jsonNum{r.ESSTail, sig},
			ESSPerSecond: jsonNum{r.ESSPerSecond, sig}, RHat: jsonNum{r.RHat, sig}}
		for i, p := range rp.percentiles {
			j.Percentiles[percentName(p)] = jsonNum{r.Percentiles[i], sig}
		}
		out.Variables = append(out.Variables, j)
	}
	b, err := json.MarshalIndent(&out, "", "  ")
	if err != nil {
		return err
	}
	_, err = w.Write(append(b, '\n'))
	return err
}

// spell names the rows as rstan shows them after read_stan_csv: row k's
// Stan CSV column csv[k] (as stancsv.SafeNames writes it) through
// stancsv.RName — u_g_g0 for a level's effect, Intercept[1] for a
// cutpoint — so that the table, its CSV and JSON, the plots, the
// warnings and R agree (TestSummaryNamesAsR).
func (rp *report) spell(csv []string) {
	for k := range rp.rows {
		if k < len(csv) {
			rp.rows[k].Name = stancsv.RName(csv[k])
		}
	}
	rp.nameWarnings()
}

// nameWarnings names the variables in the warnings as the rows name them:
// row k shows Summary's coordinate k (resultDraws, fileDraws), so each
// warning on the coordinates' figures, exactmh.ParamWarnings of
// Summary's Params, is replaced by the same warning built from those
// Params under the rows' names (TestWarningNames).
func (rp *report) nameWarnings() {
	shown := slices.Clone(rp.s.Params)
	for k := range shown {
		if k < len(rp.rows) {
			shown[k].Name = rp.rows[k].Name
		}
	}
	was := exactmh.ParamWarnings(rp.s.Params, rp.s.Chains)
	now := exactmh.ParamWarnings(shown, rp.s.Chains)
	w := slices.Clone(rp.s.Warnings)
	for i, msg := range w {
		if k := slices.Index(was, msg); k >= 0 {
			w[i] = now[k]
		}
	}
	rp.s.Warnings = w
}

// scaleNote says which scale the coefficients are reported on; for a
// multilevel model, the fixed effects' (the random effects stay as
// sampled: a slope per sd of its covariate, and beside random slopes an
// intercept at the standardised features' 0, their means).
func scaleNote(original, multilevel bool) string {
	s := "of the standardised features (per sd of each numeric feature), as sampled"
	if original {
		s = "on the original scale of each feature (per unit of the feature; --standardized: per sd, as sampled)"
	}
	if multilevel {
		s = "(fixed effects) " + s + "; random effects as sampled: a random slope per sd of its covariate, and where a factor has random slopes its intercepts at the features' means (lme4's per unit and at 0: --no-standardize); each sd_<factor>__<term> = exp(log_tau_<factor>_<term>)"
	}
	return s
}

// filesReport is exactmh summary's report of the files: on the original
// scale when their model_info says how the features were standardised
// (and not --standardized).
func filesReport(files []*stancsv.File, s *exactmh.Summary, rf *reportFlags, ps []float64, progress io.Writer) (*report, error) {
	d, err := fileDraws(files, s)
	if err != nil {
		return nil, err
	}
	rescaled := make([]bool, len(d.names))
	rp := &report{s: s, percentiles: ps, prior: files[0].Config["model_info.prior"]}
	if sc := fileScaling(files[0]); sc != nil {
		if !rf.standardized {
			if err := sc.apply(d); err != nil {
				return nil, err
			}
			off := 0
			if len(d.names) > 0 && d.names[0] == "lp__" {
				off = 1
			}
			for j := off; j < off+len(sc.scale) && j < len(rescaled); j++ {
				rescaled[j] = true
			}
		}
		rp.scale = scaleNote(!rf.standardized, sc.multilevel)
	}
	// The figures Summarize computed serve the variables whose draws were
	// not rescaled (all but the coefficients on the original scale).
	known := func(j int) (exactmh.ParamSummary, bool) {
		if j >= len(s.Params) || s.Params[j].Name != d.names[j] || rescaled[j] {
			return exactmh.ParamSummary{}, false
		}
		return s.Params[j], true
	}
	secs := 0.0 // as Summarize sums it: NaN when a file has no timing
	for _, f := range files {
		secs += f.SamplingSeconds
	}
	rp.rows = rows(d, ps, secs, known, progress)
	rp.cols = slices.Clone(d.names)
	if !rf.verbatim {
		rp.spell(d.names)
	} else {
		for k := range rp.rows {
			if v, ok := files[0].ConfigValue("parameter_names." + rp.rows[k].Name); ok {
				rp.rows[k].Name = v
			}
		}
		rp.nameWarnings()
	}
	return rp, nil
}

// resultReport is exactmh sample's report of its run, on the original
// scale unless --standardized or the features were not standardised.
func resultReport(res *exactmh.Result, m *fitted, rf *reportFlags) (*report, error) {
	ps, err := rf.check()
	if err != nil {
		return nil, err
	}
	s := res.Summary()
	d := resultDraws(res, s)
	prior := m.fp.Prior
	if ps := m.priorScale(); ps != "" {
		prior += " " + ps
	}
	if m.tau != "" {
		prior += "; each random-effect scale τ: " + m.tau
	}
	if m.fp.SigmaPrior != "" && m.fp.Family != "negbinomial" && m.fp.Family != "ordinal" {
		prior += "; sigma: " + m.fp.SigmaPrior
	} else if m.fp.SigmaPrior != "" && m.fp.Family == "ordinal" {
		prior += "; cutpoints: " + m.fp.SigmaPrior
	} else if m.fp.SigmaPrior != "" {
		prior += "; shape: " + m.fp.SigmaPrior
	}
	rp := &report{s: s, percentiles: ps, prior: prior}
	// The natural-scale rows, as the files have them.
	nx := len(d.x)
	th := make([]float64, nx)
	for _, r := range m.natural {
		if max(r.from, r.last) >= nx {
			continue
		}
		x := make([][]float64, len(d.x[r.from]))
		for c, ch := range d.x[r.from] {
			x[c] = make([]float64, len(ch))
			for i, v := range ch {
				if r.of == nil {
					x[c][i] = math.Exp(v)
					continue
				}
				for j := range nx { // θ at this draw (a correlation reads several)
					th[j] = d.x[j][c][i]
				}
				x[c][i] = r.value(th)
			}
		}
		d.names = append(d.names, r.name)
		d.x = append(d.x, x)
	}
	rescaled := 0 // the leading coefficients put on the original scale
	if m.fp.Standardize && len(d.x) >= m.design.D && m.design.D > 0 && len(d.x[0]) > 0 {
		multilevel := len(m.design.Groups) > 0
		if !rf.standardized {
			sc := &scaling{center: m.design.Center, scale: m.design.Scale, intercept: m.design.Intercept}
			if err := sc.apply(d); err != nil {
				return nil, err
			}
			rescaled = len(sc.scale)
		}
		rp.scale = scaleNote(!rf.standardized, multilevel)
	}
	// The figures Summary computed serve the variables whose draws were
	// not rescaled: the same draws (resultDraws keeps the chains and the
	// length Summary used) and the same sampling time, so the same
	// numbers. On a multilevel model that is every effect and scale, whose
	// rank normalisation is most of the report's work
	// (TestResultReportReusesSummary).
	known := func(j int) (exactmh.ParamSummary, bool) {
		if j < rescaled || j >= len(s.Params) || s.Params[j].Name != d.names[j] {
			return exactmh.ParamSummary{}, false
		}
		return s.Params[j], true
	}
	rp.rows = rows(d, ps, s.SamplingTime.Seconds(), known, nil)
	// The files' columns: the parameters and natural rows named together
	// by SafeNames, as stancsv's writer names them.
	rp.spell(stancsv.SafeNames(d.names))
	return rp, nil
}

// printReport prints sample's account of its run: the kernel (and, for
// the automatic default, its choice and reason), then the summary table.
func printReport(res *exactmh.Result, m *fitted, sf *sampleFlags, stdout io.Writer) error {
	rp, err := resultReport(res, m, &sf.report)
	if err != nil {
		return failure(err)
	}
	switch {
	case res.Choice != nil:
		fmt.Fprintf(stdout, "exactmh chose %s\n", res.Choice)
		if ph := res.Choice.PhasesText(); ph != "" {
			fmt.Fprintf(stdout, "%s\n", ph)
		}
		fmt.Fprintln(stdout)
		rp.s.Kernel = res.Choice.Name // TunaMH-CV-CN, not the TunaMH it runs
	case sf.choiceNote != "":
		fmt.Fprintf(stdout, "kernel %s\n\n", sf.choiceNote)
		rp.s.Kernel = sf.choiceName
	}
	// A chain whose warmup had nothing left to adapt skipped the rest of
	// it (exactmh.ChainResult.WarmupStop); the files' trailers say so too.
	for _, ch := range res.Chains {
		if ch.WarmupStop != "" {
			fmt.Fprintf(stdout, "chain %d: warmup %s\n", res.Settings.FirstChain+ch.Chain+1, ch.WarmupStop)
		}
	}
	return rp.write(stdout, "table", 4)
}

// choiceLogger prints the automatic default's steps (MAP, Laplace
// approximation, pilots, then the choice and its reason, before warmup
// starts) to w as they happen, a long step wrapped into short lines (the
// whole reason is in the files' "auto" comment).
func choiceLogger(w io.Writer) func(string) {
	return func(step string) {
		for k, line := range wrapWords("choosing the kernel: "+step, 100) {
			if k > 0 {
				line = "    " + line
			}
			fmt.Fprintln(w, line)
		}
	}
}

// wrapWords splits s into lines of at most width bytes at spaces (a word
// longer than width is a line of its own).
func wrapWords(s string, width int) []string {
	var out []string
	var line strings.Builder
	for _, word := range strings.Fields(s) {
		if line.Len() > 0 && line.Len()+1+len(word) > width {
			out = append(out, line.String())
			line.Reset()
		}
		if line.Len() > 0 {
			line.WriteByte(' ')
		}
		line.WriteString(word)
	}
	if line.Len() > 0 {
		out = append(out, line.String())
	}
	return out
}
