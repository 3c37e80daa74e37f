// Copyright ©2026 The exactmh Authors. All rights reserved.
// Use of this source code is governed by a BSD-style
// license that can be found in the LICENSE file.

// Package stancsv writes and reads Stan CSV, the per-chain output format of
// CmdStan, read by stansummary, ArviZ, cmdstanpy and the R package
// posterior. [Write] writes one chain of a finished [exactmh.Result];
// [Recorder], made by [NewFiles], is an [exactmh.Recorder] that streams
// every chain to its file during the run, and continues it across
// [exactmh.Resume] and [exactmh.LoadCheckpoint]; [Read] reads files written
// by either, by CmdStan or by rstan into a [File].
//
// A file holds comment lines with the run's configuration (the library
// version, the kernel and every hyperparameter, the settings, seed and
// chain id), a header row, an adaptation comment, one row per kept draw and
// a timing trailer. The configuration uses CmdStan's names and meanings, so
// that rstan, cmdstanpy and stansummary read the files: num_samples is the
// number of sampling iterations before thinning (Draws·Thin; the file has
// num_samples/thin rows), num_warmup the warmup iterations; model =
// exactmh, metric and max_depth = 10 are the keys cmdstanpy requires of a
// sampler's file. metric is the chain's inverse mass matrix as CmdStan
// names it (unit_e, diag_e or dense_e: [exactmh.ChainResult].Metric); a
// diagonal or dense one is written after the step size in CmdStan's
// layout, "Diagonal elements of inverse mass matrix:" and one row, or
// "Elements of inverse mass matrix:" and d rows, and Read returns it in
// File.InvMetric.
//
// The sampler columns are Stan's own, which every reader (rstan's
// read_stan_csv, cmdstanpy, ArviZ, stansummary) files as sampler
// diagnostics, never as parameters: lp__, always first as the readers
// require (the exact log posterior up to a constant where the kernel
// reports it for every draw — full-batch MH, MALA, HMC, NUTS; the
// minibatch kernels never evaluate it, and the column then holds 0, as
// CmdStan's fixed_param sampler writes, with the configuration key
// output.lp__ saying which), accept_stat__ ([exactmh.Info].AcceptProb: for
// minibatch kernels the acceptance probability given the auxiliary
// minibatch; where the kernel's exact test gives none — SMH's and TFMH's
// minibatch tests, a Gibbs sweep — whether the draw was accepted, 0 or 1,
// whose mean is the acceptance rate: no sampler column holds nan, which
// bayesplot refuses), stepsize__ (the chain's step scale, 0 for a kernel
// without one; for
// a kernel whose proposal is [exactmh.CrankNicolson], whose scale is
// ρ = e^{−scale} and can reach 10⁹⁷ where ρ = 0, the root-mean-square
// move per whitened coordinate √(2(1 − ρ)) instead, which reads as a
// random walk's step size in posterior sds: near 0 for small moves, √2 for
// independent draws; the configuration key stepsize_is says so, and the
// "Step size" comment after the header is the same), treedepth__ (and for NUTS
// n_leapfrog__) and divergent__ — NUTS's Info.TreeDepth and Info.GradEvals/N,
// 0 for the kernels that build no trajectory tree (cmdstanpy requires both
// columns), and every kernel's Info.Divergent (NUTS's and HMC's). exactmh's own per-draw diagnostics —
// accepted, batch_size (Info.Batch), n_energy and n_grad (datum
// evaluations of the transition) — are averaged over the kept draws in a
// comment after the timing trailer (File.Diagnostics), or written as the
// columns accepted__ … n_grad__ with Options.DiagnosticColumns, which
// rstan then reads as parameters (it knows only Stan's sampler columns).
//
// Parameters follow as theta.1 … theta.d unless named: CmdStan's CSV
// flattening of theta[1] … theta[d], the names [exactmh.Result.Summary]
// gives them. Both count from 1, as Stan does: coordinate j of θ (0-based
// in Go) is theta[j+1] in the summary and the column theta.(j+1) here.
// Given names are written as [SafeNames] makes them, which the readers'
// name parsers take ("(Intercept)" is written "Intercept").
//
// [Options].Model adds a "# model_info" section to the configuration
// comments (what was sampled: the command line writes its family, prior,
// response, terms, data file and fingerprint), and Options.Choice the
// automatic default's choice for a run that was given it.
//
// [Read] refuses a file whose last line is not terminated — the stream of
// a killed process, cut perhaps inside a number, whose value would be read
// wrong — with an error wrapping [ErrPartialLine];
// ReadOptions{DropPartial: true} recovers the complete rows and says what
// it dropped in File.Warnings.
package stancsv

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"math"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/exactmh/exactmh"
)

// Options configure the Stan CSV writers. The zero value works.
type Options struct {
	// Names are the parameter column names (nil: the run's
	// Posterior.Names, and without those theta.1 … theta.d).
	Names []string
	// SigFigs is the number of significant digits (0: 6, CmdStan's default;
	// 17 round-trips float64 exactly, and more is 17). Negative is an
	// error.
	SigFigs int
	// Model describes what was sampled, as key = value pairs written in
	// order under the configuration comment "# model_info" (the command
	// line's family, prior and its scale, response, terms, data file and
	// the data's fingerprint). A key is one word of letters, digits and
	// '_'; other characters are replaced by '_', and line breaks in a
	// value by spaces.
	Model [][2]string
	// DiagnosticColumns adds exactmh's per-draw diagnostics as the columns
	// accepted__, batch_size__, n_energy__ and n_grad__. rstan's
	// read_stan_csv knows only Stan's own sampler columns and reads any
	// other column, these too, as a parameter, so by default they are left
	// out and only their means over the kept draws are written, in the
	// trailer's "Diagnostics" comment (File.Diagnostics).
	DiagnosticColumns bool
	// Choice is the automatic default's choice and its reason, written as
	// the "auto" configuration key when the run itself made no choice (a
	// run given the kernel an earlier choice named: exactmh sample
	// --choice FILE). A run's own exactmh.Choice is written otherwise.
	Choice string
	// Generated are columns computed from each draw and written after
	// the parameters, as a Stan program's generated quantities: the
	// natural-scale rows a reader looks for beside the sampled ones,
	// such as a random effect's sd_g__Intercept = exp(log_tau_g). Their
	// names are made safe as Names are.
	Generated []Generated
}

// Generated is a column computed from each draw θ.
type Generated struct {
	Name string
	// Of returns the column's value at θ; it must not keep or change θ.
	Of func(theta []float64) float64
}

func (o *Options) sigFigs() int {
	if o == nil || o.SigFigs <= 0 {
		return 6
	}
	return min(o.SigFigs, 17)
}

// names checks the options and returns the d column names of θ.
func (o *Options) names(d int) ([]string, error) {
	if o != nil && o.SigFigs < 0 {
		return nil, fmt.Errorf("stancsv: Options.SigFigs = %d, want ≥ 0 (0: 6)", o.SigFigs)
	}
	if o != nil && o.Names == nil && len(o.Generated) > 0 {
		return nil, fmt.Errorf("stancsv: Options.Generated needs Options.Names (or the run's Posterior.Names)")
	}
	if o == nil || o.Names == nil {
		names := make([]string, d)
		for j := range names {
			names[j] = "theta." + strconv.Itoa(j+1)
		}
		return names, nil
	}
	if len(o.Names) != d {
		return nil, fmt.Errorf("stancsv: Options.Names has %d names for %d parameters", len(o.Names), d)
	}
	all := slices.Clone(o.Names)
	for k, g := range o.Generated {
		if g.Of == nil {
			return nil, fmt.Errorf("stancsv: Options.Generated[%d] %q has no function", k, g.Name)
		}
		all = append(all, g.Name)
	}
	return SafeNames(all), nil
}

// stanWriter writes one chain's file.
type stanWriter struct {
	w       *bufio.Writer
	sig     int
	lp      bool // whether the lp__ column holds the log posterior (else 0)
	opt     *Options
	tree    bool // whether NUTS's treedepth__, n_leapfrog__ and divergent__ are
	n       int  // N, the data per leapfrog step
	adapted bool // whether the adaptation comment is written
	// orig are the run's parameter names, verbatim, for the
	// parameter_names comment (nil: none written).
	orig []string
	// metric is the chain's inverse mass matrix, written as the header's
	// metric and after the step size.
	metric exactmh.Metric
	buf    []byte
	// diag sums the per-draw diagnostics of the rows written, for the
	// trailer: accepted, batch, datum and gradient evaluations; rows
	// counts them.
	diag [4]float64
	rows int
	// cn is the kernel's Crank–Nicolson proposal, if it has one: the step
	// scale is then written as stepSize makes it.
	cn *exactmh.CrankNicolson
}

// stepSize returns what the stepsize__ column and the "Step size"
// comment show for step scale scale: the scale itself, or for a
// Crank–Nicolson proposal θ′ = μ + ρ(θ − μ) + √(1 − ρ²)·Lz,
// ρ = CrankNicolson.Rho(scale), the root-mean-square move per whitened
// coordinate from a draw of N(μ, Σ), √(2(1 − ρ)) — the step a Gaussian
// random walk shaped by Σ would need to move as far: near 0 for small
// moves, and at most √2, independent draws (a scale of 10⁹⁷, which
// warmup can reach there, is ρ = 0 and the step size √2).
func (s *stanWriter) stepSize(scale float64) float64 {
	if math.IsNaN(scale) {
		return 0 // a kernel without a step (a Gibbs sweep): no NaN in the file
	}
	if s.cn == nil || !(scale > 0) {
		return scale
	}
	return math.Sqrt(2 * (1 - s.cn.Rho(scale)))
}

// cnProposal returns kernel k's proposal (the Proposer it declares) if it
// is a Crank–Nicolson proposal.
func cnProposal(k exactmh.Kernel) *exactmh.CrankNicolson {
	p, ok := k.(interface{ Proposer() exactmh.Proposal })
	if !ok {
		return nil
	}
	cn, _ := p.Proposer().(*exactmh.CrankNicolson)
	return cn
}

// diagNames are the diagnostics, as the trailer and the optional columns
// (with "__") name them.
var diagNames = [4]string{"accepted", "batch_size", "n_energy", "n_grad"}

// columns reports whether the per-draw diagnostics are columns.
func (s *stanWriter) columns() bool { return s.opt != nil && s.opt.DiagnosticColumns }

// header writes the configuration comments and the header row.
func (s *stanWriter) header(k exactmh.Kernel, name string, exact bool, set exactmh.Settings, n, chain int, names []string, choice *exactmh.Choice) {
	w := s.w
	fmt.Fprintf(w, "# exactmh_version = %s\n# model = exactmh\n", exactmh.Version)
	fmt.Fprintf(w, "# method = sample\n#   sample\n")
	// CmdStan's num_samples counts sampling iterations, before thinning.
	fmt.Fprintf(w, "#     num_samples = %d\n#     num_warmup = %d\n#     save_warmup = 0\n#     thin = %d\n",
		set.Draws*set.Thin, set.Warmup, set.Thin)
	if set.Duration > 0 {
		fmt.Fprintf(w, "#     duration = %s\n", set.Duration)
	}
	fmt.Fprintf(w, "#     adapt\n#       engaged = %d\n#       target_accept = %g\n", boolInt(!set.NoAdapt && set.Warmup > 0), set.TargetAccept)
	fmt.Fprintf(w, "#     algorithm = %s\n#       %s\n#         exact = %d\n", name, name, boolInt(exact))
	// What CmdStan's readers require of an HMC file: the metric (unit_e
	// for the kernels without one) and the maximum depth (CmdStan's
	// default; no tree reaches it in treedepth__'s zeros).
	fmt.Fprintf(w, "#         metric = %s_e\n#         max_depth = 10\n", s.metric.Kind())
	for _, kv := range kernelFields(k) {
		fmt.Fprintf(w, "#         %s = %s\n", kv[0], kv[1])
	}
	if s.cn = cnProposal(k); s.cn != nil {
		fmt.Fprintf(w, "#         stepsize_is = sqrt(2*(1-rho)) with rho = exp(-min(scale, max_scale)) of the Crank-Nicolson proposal: the rms move per whitened coordinate (0: none; sqrt(2): independent draws)\n")
	}
	switch {
	case choice != nil:
		// The automatic default: what it chose and why, on one line.
		fmt.Fprintf(w, "#         auto = %s\n", oneLine(choice.String()))
	case s.opt != nil && s.opt.Choice != "":
		fmt.Fprintf(w, "#         auto = %s\n", oneLine(s.opt.Choice))
	}
	fmt.Fprintf(w, "#     num_chains = %d\n# id = %d\n# data\n#   N = %d\n#   dim = %d\n# random\n#   seed = %d\n",
		set.Chains, set.FirstChain+chain+1, n, len(names), set.Seed)
	if s.opt != nil && len(s.opt.Model) > 0 {
		fmt.Fprintf(w, "# model_info\n")
		for _, kv := range s.opt.Model {
			fmt.Fprintf(w, "#   %s = %s\n", nonAlnum.ReplaceAllString(kv[0], "_"), oneLine(kv[1]))
		}
	}
	s.nameMap(names)
	fmt.Fprintf(w, "# output\n#   sig_figs = %d\n", s.sig)
	if s.lp {
		fmt.Fprintf(w, "#   lp__ = %s\n", lpExact)
	} else {
		fmt.Fprintf(w, "#   lp__ = %s\n", lpZero)
	}
	cols := []string{"accept_stat__", "stepsize__", "treedepth__", "divergent__"}
	if s.columns() {
		for _, n := range diagNames {
			cols = append(cols, n+"__")
		}
	}
	s.n = n
	switch k.(type) {
	case exactmh.NUTS, *exactmh.NUTS:
		s.tree = true
		cols = slices.Insert(cols, 3, "n_leapfrog__") // treedepth__, n_leapfrog__, divergent__ as CmdStan
	}
	cols = append([]string{"lp__"}, cols...)
	w.WriteString(strings.Join(append(cols, names...), ","))
	w.WriteByte('\n')
}

// nameMap writes, as the comment block "parameter_names", each column
// name that SafeNames changed with the run's name verbatim ("u_g_2 =
// u_g[Zürich]"; File.Config's "parameter_names.u_g_2"), so that a reader
// can restore the names a Stan CSV header cannot hold
// (TestNameMapVerbatim). A name with a line break keeps it as a space.
func (s *stanWriter) nameMap(names []string) {
	if len(s.orig) > len(names) {
		return
	}
	// The parameters' names come first; generated quantities'
	// (Options.Generated) follow, named by the caller.
	head := false
	for j, n := range names[:len(s.orig)] {
		if s.orig[j] == n {
			continue
		}
		if !head {
			fmt.Fprintf(s.w, "# parameter_names\n")
			head = true
		}
		fmt.Fprintf(s.w, "#   %s = %s\n", n, oneLine(s.orig[j]))
	}
}

// adaptation writes the comment CmdStan puts between header and draws:
// the step size, and a diagonal or dense inverse mass matrix as CmdStan's
// diag_e and dense_e metrics write theirs.
func (s *stanWriter) adaptation(scale float64) {
	if s.adapted {
		return
	}
	s.adapted = true
	fmt.Fprintf(s.w, "# Adaptation terminated\n# Step size = %s\n", s.format(s.stepSize(scale)))
	d := s.metric.Dim()
	switch s.metric.Kind() {
	case exactmh.MetricDiag:
		fmt.Fprintf(s.w, "# Diagonal elements of inverse mass matrix:\n")
		s.metricRow(s.metric.InvMassDiag())
	case exactmh.MetricDense:
		fmt.Fprintf(s.w, "# Elements of inverse mass matrix:\n")
		m := s.metric.InvMass()
		for i := range d {
			s.metricRow(m.RawSymmetric().Data[i*d : (i+1)*d])
		}
	}
}

// metricRow writes one comment row of the inverse mass matrix.
func (s *stanWriter) metricRow(v []float64) {
	b := append(s.buf[:0], "# "...)
	for j, x := range v {
		if j > 0 {
			b = append(b, ", "...)
		}
		b = s.appendFloat(b, x)
	}
	s.buf = append(b, '\n')
	s.w.Write(s.buf)
}

// row writes one draw.
func (s *stanWriter) row(info *exactmh.Info, scale float64, theta []float64) {
	b := s.buf[:0]
	add := func(v float64) {
		if len(b) > 0 {
			b = append(b, ',')
		}
		b = s.appendFloat(b, v)
	}
	if s.lp {
		add(info.LogDensity)
	} else {
		add(0)
	}
	// No NaN in a sampler column (bayesplot refuses a draws object with
	// one): where the kernel's exact test gives no acceptance probability
	// (the minibatch tests of SMH and TFMH, Gibbs sweeps), accept_stat__
	// is whether the draw was accepted, 0 or 1, whose mean is the
	// acceptance rate.
	if ap := info.AcceptProb; math.IsNaN(ap) {
		add(float64(boolInt(info.Accepted)))
	} else {
		add(ap)
	}
	add(s.stepSize(scale))
	if s.tree {
		add(float64(info.TreeDepth))
		add(float64(info.GradEvals / max(s.n, 1)))
		add(float64(boolInt(info.Divergent)))
	} else {
		add(0) // treedepth__
		add(float64(boolInt(info.Divergent)))
	}
	d := [4]float64{float64(boolInt(info.Accepted)), float64(info.Batch), float64(info.Evals), float64(info.GradEvals)}
	for i, v := range d {
		s.diag[i] += v
		if s.columns() {
			add(v)
		}
	}
	s.rows++
	for _, v := range theta {
		add(v)
	}
	if s.opt != nil {
		for _, g := range s.opt.Generated {
			add(g.Of(theta))
		}
	}
	b = append(b, '\n')
	s.w.Write(b)
	s.buf = b
}

// trailer writes the timing comments, in CmdStan's layout, and the means
// of the per-draw diagnostics over the kept draws, one line after them
// (rstan reads the first two timing lines and no further).
func (s *stanWriter) trailer(warmup, samp time.Duration) {
	fmt.Fprintf(s.w, "# \n#  Elapsed Time: %s seconds (Warm-up)\n#                %s seconds (Sampling)\n#                %s seconds (Total)\n# \n",
		strconv.FormatFloat(warmup.Seconds(), 'g', 6, 64), strconv.FormatFloat(samp.Seconds(), 'g', 6, 64),
		strconv.FormatFloat((warmup+samp).Seconds(), 'g', 6, 64))
	if s.rows == 0 {
		return
	}
	b := append(s.buf[:0], diagPrefix...)
	for i, n := range diagNames {
		if i > 0 {
			b = append(b, ',')
		}
		b = append(b, ' ')
		b = append(b, n...)
		b = append(b, " = "...)
		b = strconv.AppendFloat(b, s.diag[i]/float64(s.rows), 'g', 6, 64)
	}
	s.buf = append(b, '\n')
	s.w.Write(s.buf)
}

// diagPrefix starts the trailer's diagnostics comment.
const diagPrefix = "# Diagnostics (means over the kept draws):"

func (s *stanWriter) format(v float64) string { return string(s.appendFloat(nil, v)) }

// appendFloat writes v with the file's significant digits, and NaN and
// infinities as CmdStan does (nan, inf, -inf).
func (s *stanWriter) appendFloat(b []byte, v float64) []byte {
	switch {
	case math.IsNaN(v):
		return append(b, "nan"...)
	case math.IsInf(v, 1):
		return append(b, "inf"...)
	case math.IsInf(v, -1):
		return append(b, "-inf"...)
	}
	return appendG(b, v, s.sig) // strconv.AppendFloat(b, v, 'g', s.sig, 64)
}

// The values of the "lp__" configuration key (under "output"): the lp__
// column holds the exact log posterior, up to a constant, or 0 — the value
// CmdStan's fixed_param sampler writes, which rstan, posterior, cmdstanpy
// and ArviZ read as a constant column — because the kernel never
// evaluates the log posterior (the minibatch kernels: evaluating it would
// cost a pass over all N data per draw). Summarize leaves a zero lp__ out.
const (
	lpExact = "log_posterior"
	lpZero  = "0 (not evaluated by this kernel)"
)

// oneLine joins the lines of s with spaces.
func oneLine(s string) string {
	return strings.Join(strings.FieldsFunc(s, func(r rune) bool { return r == '\n' || r == '\r' }), " ")
}

func boolInt(b bool) int {
	if b {
		return 1
	}
	return 0
}

// kernelFields lists the exported scalar fields of a kernel struct as
// name = value pairs, for the configuration comments.
func kernelFields(k exactmh.Kernel) [][2]string {
	if k == nil {
		return nil
	}
	v := reflect.ValueOf(k)
	for v.Kind() == reflect.Pointer {
		if v.IsNil() {
			return nil
		}
		v = v.Elem()
	}
	if v.Kind() != reflect.Struct {
		return nil
	}
	var out [][2]string
	t := v.Type()
	for i := range t.NumField() {
		f := t.Field(i)
		if !f.IsExported() {
			continue
		}
		fv := v.Field(i)
		var s string
		switch fv.Kind() {
		case reflect.Float32, reflect.Float64:
			s = strconv.FormatFloat(fv.Float(), 'g', -1, 64)
		case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
			s = strconv.FormatInt(fv.Int(), 10)
		case reflect.Bool:
			s = strconv.Itoa(boolInt(fv.Bool()))
		case reflect.String:
			s = fv.String()
		case reflect.Slice:
			if fv.IsNil() {
				s = "nil"
			} else {
				s = fmt.Sprintf("[%d values]", fv.Len())
			}
		case reflect.Interface, reflect.Pointer:
			if fv.IsNil() {
				s = "nil"
			} else if st, ok := fv.Interface().(fmt.Stringer); ok {
				s = st.String() // a configuration that describes itself (CrankNicolson's walk fraction)
			} else {
				s = fmt.Sprintf("%T", fv.Interface())
			}
		default:
			continue
		}
		out = append(out, [2]string{f.Name, s})
	}
	return out
}

// Write writes chain c of res to w in CmdStan's CSV layout (see the package
// documentation): configuration comments with the library version, the
// kernel and every hyperparameter, the settings, seed and chain id; the
// header; the adaptation comment; the draws; the timing trailer. opt may be
// nil.
func Write(w io.Writer, res *exactmh.Result, c int, opt *Options) error {
	if res == nil || c < 0 || c >= len(res.Chains) {
		return fmt.Errorf("stancsv: Write: no chain %d", c)
	}
	if res.Names != nil && (opt == nil || opt.Names == nil) {
		o := Options{Names: res.Names}
		if opt != nil {
			o = *opt
			o.Names = res.Names
		}
		opt = &o
	}
	names, err := opt.names(res.Dim)
	if err != nil {
		return err
	}
	ch := res.Chains[c]
	s := &stanWriter{w: bufio.NewWriter(w), sig: opt.sigFigs(), lp: len(ch.Infos) > 0, metric: ch.Metric, opt: opt}
	if opt != nil {
		s.orig = opt.Names
	}
	for k := range ch.Infos {
		if math.IsNaN(ch.Infos[k].LogDensity) {
			s.lp = false
			break
		}
	}
	set := res.Settings
	if set.Duration > 0 {
		set.Draws = ch.Len() // the draws a fixed-time run made, rather than its bound
	}
	s.header(res.Config, res.Kernel, res.Exact, set, res.N, c, names, res.Choice)
	s.adaptation(ch.Scale)
	for k := range ch.Infos {
		s.row(&ch.Infos[k], ch.Scale, res.Draw(c, k))
	}
	s.trailer(ch.Warmup.Time, ch.Sampling.Time)
	return s.w.Flush()
}

// Recorder is an [exactmh.Recorder] that streams every kept draw to one Stan
// CSV file per chain as it is made, so a crash loses at most the draws
// since the last flush. It opens the files at Init and writes the header and
// the adaptation comment with the first kept draw — whose Info tells whether
// the kernel reports the exact log posterior, and so what the lp__ column
// holds — and the timing trailer when the run finishes (it is an
// [exactmh.RunFinisher]); a cancelled run's files are flushed but left open.
// A writer that can be rewound (an *os.File: Seek and Truncate) gets a
// provisional header at Init, flushed at once — the configuration comments
// and the columns, with lp__ marked not evaluated and a unit metric — which
// the first kept draw replaces, so that a run interrupted or killed before
// it leaves a file that parses (TestRecorderHeaderAtInit).
//
// It is an [exactmh.ResumeRecorder]: when a run is resumed — cancelled or
// finished and extended in this process, or restored by
// [exactmh.LoadCheckpoint] in another (pass a new Recorder with the same
// Open) — InitResume closes the files still open, opens them again and
// rewrites each from the run so far: the header (with the extended
// num_samples), the adaptation comment and every draw already kept, exactly
// the rows the stream had written. Streaming then continues, so each file
// ends as that of one uninterrupted run, whatever a killed process left in
// it (a row cut in the middle, rows made after the checkpoint). Open must
// therefore return a writer for the whole file each time it is called
// (NewFiles truncates the file).
type Recorder struct {
	// Open returns the writer for chain c (0-based, counted from the run's
	// Settings.FirstChain: chain c of the run is chain FirstChain + c of
	// the whole). A returned io.Closer is closed when the run finishes.
	Open func(c int) (io.Writer, error)
	// Options are the column names and digits.
	Options Options
	// FlushEvery is the number of draws between flushes (0: 1, every draw).
	FlushEvery int

	mu      sync.Mutex
	writers []*recChain
}

type recChain struct {
	out     io.Writer
	s       *stanWriter
	pending int
	run     exactmh.RunInfo
	names   []string
	chain   int
	started bool // header written
	// provisional: the file holds the header Init wrote, which start
	// replaces (rewinding out, a rewinder).
	provisional bool
}

// rewinder is a writer the Recorder can empty and write again from the
// start: an *os.File.
type rewinder interface {
	io.Seeker
	Truncate(size int64) error
}

// provisionalHeader writes and flushes the header Init can write before any
// draw — lp__ not evaluated, a unit metric — if rc's writer can be rewound.
func (rc *recChain) provisionalHeader() error {
	if _, ok := rc.out.(rewinder); !ok {
		return nil
	}
	rc.provisional = true
	rc.s.lp, rc.s.metric = false, exactmh.Metric{}
	rc.s.header(rc.run.Config, rc.run.Kernel, rc.run.Exact, rc.run.Settings, rc.run.N, rc.chain, rc.names, rc.run.Choice)
	return rc.s.w.Flush()
}

// start writes the header, with an lp__ column if lp, for a chain whose
// inverse mass matrix is m, first emptying the file of a provisional
// header.
func (rc *recChain) start(lp bool, m exactmh.Metric) error {
	rc.started = true
	if rc.provisional {
		rc.provisional = false
		rw := rc.out.(rewinder)
		if err := rc.s.w.Flush(); err != nil {
			return err
		}
		if _, err := rw.Seek(0, io.SeekStart); err != nil {
			return err
		}
		if err := rw.Truncate(0); err != nil {
			return err
		}
		rc.s.w.Reset(rc.out)
	}
	rc.s.lp, rc.s.metric = lp, m
	rc.s.header(rc.run.Config, rc.run.Kernel, rc.run.Exact, rc.run.Settings, rc.run.N, rc.chain, rc.names, rc.run.Choice)
	return nil
}

// NewFiles returns a Recorder writing chain c to the file prefix_<c+1>.csv,
// CmdStan's naming. opt may be nil. A symbolic link at that name is an
// error rather than followed (createNoFollow): a link planted there would
// otherwise have its target overwritten.
func NewFiles(prefix string, opt *Options) *Recorder {
	r := &Recorder{Open: func(c int) (io.Writer, error) {
		return createNoFollow(fmt.Sprintf("%s_%d.csv", prefix, c+1))
	}}
	if opt != nil {
		r.Options = *opt
	}
	return r
}

// Init opens the files.
func (r *Recorder) Init(run exactmh.RunInfo) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.open(run)
}

// InitResume implements [exactmh.ResumeRecorder]: it closes the files still
// open, opens them again and writes each chain's header, adaptation
// comment and draws so far, as the stream wrote them.
//
// A run that streamed its draws without keeping them
// (exactmh.Settings.DiscardDraws) cannot be rewritten: its files must
// still be open (a run cancelled in this process), and streaming simply
// continues in them.
func (r *Recorder) InitResume(run exactmh.RunInfo, res *exactmh.Result) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	if run.Settings.DiscardDraws {
		if len(r.writers) != len(res.Chains) {
			return fmt.Errorf("stancsv: Recorder: the run streamed its draws without keeping them, and this recorder has %d of its %d chains' files: only the recorder that wrote them can continue", len(r.writers), len(res.Chains))
		}
		for c, rc := range r.writers {
			if rc == nil {
				return fmt.Errorf("stancsv: Recorder: chain %d's file is closed, and the run streamed its draws without keeping them (Settings.DiscardDraws), so they cannot be written again", c)
			}
		}
		return nil
	}
	var errs []error
	for c, rc := range r.writers {
		if rc == nil {
			continue
		}
		if cl, ok := rc.out.(io.Closer); ok {
			if err := cl.Close(); err != nil {
				errs = append(errs, fmt.Errorf("stancsv: Recorder: chain %d: %w", c, err))
			}
		}
		r.writers[c] = nil
	}
	if err := errors.Join(errs...); err != nil {
		return err
	}
	if len(res.Chains) != run.Chains {
		return fmt.Errorf("stancsv: Recorder: the result has %d chains, the run %d", len(res.Chains), run.Chains)
	}
	if err := r.open(run); err != nil {
		return err
	}
	for c, rc := range r.writers {
		ch := res.Chains[c]
		if ch.Len() == 0 {
			continue
		}
		if err := rc.start(!math.IsNaN(ch.Infos[0].LogDensity), ch.Metric); err != nil { // as Record decides from the first draw
			return fmt.Errorf("stancsv: Recorder: chain %d: %w", c, err)
		}
		rc.s.adaptation(ch.Scale)
		for k := range ch.Infos {
			rc.s.row(&ch.Infos[k], ch.Scale, res.Draw(c, k))
		}
		if err := rc.s.w.Flush(); err != nil {
			return fmt.Errorf("stancsv: Recorder: chain %d: %w", c, err)
		}
	}
	return nil
}

// open opens every chain's writer; r.mu is held.
func (r *Recorder) open(run exactmh.RunInfo) error {
	if r.Open == nil {
		return errors.New("stancsv: Recorder.Open is nil")
	}
	opt := r.Options
	if opt.Names == nil {
		opt.Names = run.Names
	}
	names, err := opt.names(run.Dim)
	if err != nil {
		return err
	}
	r.writers = make([]*recChain, run.Chains)
	for c := range r.writers {
		out, err := r.Open(run.Settings.FirstChain + c)
		if err != nil {
			return fmt.Errorf("stancsv: Recorder: chain %d: %w", c, err)
		}
		rc := &recChain{out: out, s: &stanWriter{w: bufio.NewWriter(out), sig: r.Options.sigFigs(), opt: &r.Options, orig: opt.Names},
			run: run, names: names, chain: c}
		r.writers[c] = rc
		if err := rc.provisionalHeader(); err != nil {
			return fmt.Errorf("stancsv: Recorder: chain %d: %w", c, err)
		}
	}
	return nil
}

// Record writes a kept draw; warmup transitions are not written.
func (r *Recorder) Record(e *exactmh.Event) error {
	if e.Draw < 0 {
		return nil
	}
	if e.Chain < 0 || e.Chain >= len(r.writers) {
		return fmt.Errorf("stancsv: Recorder: event of chain %d, but Init was told of %d chains", e.Chain, len(r.writers))
	}
	rc := r.writers[e.Chain]
	if rc == nil {
		return fmt.Errorf("stancsv: Recorder: chain %d's file is closed", e.Chain)
	}
	if !rc.started {
		if err := rc.start(!math.IsNaN(e.Info.LogDensity), e.Metric); err != nil {
			return fmt.Errorf("stancsv: Recorder: chain %d: %w", e.Chain, err)
		}
	}
	rc.s.adaptation(e.StepScale)
	rc.s.row(&e.Info, e.StepScale, e.Theta)
	rc.pending++
	if rc.pending >= max(1, r.FlushEvery) {
		rc.pending = 0
		return rc.s.w.Flush()
	}
	return nil
}

// Finish writes the trailers and closes the files, or only flushes them
// if the run was cancelled (so that Resume can continue them).
func (r *Recorder) Finish(res *exactmh.Result) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	var errs []error
	for c, rc := range r.writers {
		if rc == nil {
			continue
		}
		if res.Status != exactmh.Canceled {
			if !rc.started {
				if err := rc.start(false, res.Chains[c].Metric); err != nil { // no draws: a header without lp__
					errs = append(errs, fmt.Errorf("stancsv: Recorder: chain %d: %w", c, err))
					continue
				}
			}
			ch := res.Chains[c]
			rc.s.adaptation(ch.Scale)
			if ch.WarmupStop != "" {
				// The warmup transitions that ran, and why the rest were
				// skipped (exactmh.ChainResult.WarmupStop).
				fmt.Fprintf(rc.s.w, "# Warmup %s\n", oneLine(ch.WarmupStop))
			}
			rc.s.trailer(ch.Warmup.Time, ch.Sampling.Time)
		}
		if err := rc.s.w.Flush(); err != nil {
			errs = append(errs, err)
		}
		if res.Status == exactmh.Canceled {
			continue
		}
		if cl, ok := rc.out.(io.Closer); ok {
			if err := cl.Close(); err != nil {
				errs = append(errs, err)
			}
		}
		r.writers[c] = nil
	}
	return errors.Join(errs...)
}

var (
	_ exactmh.ResumeRecorder = (*Recorder)(nil)
	_ exactmh.RunFinisher    = (*Recorder)(nil)
)

// File is a Stan CSV file as read by Read.
type File struct {
	// Config holds the configuration comments as key = value, keys joined
	// by '.' along CmdStan's indentation ("random.seed",
	// "method.sample.num_samples"), values without " (Default)". rstan's
	// flat "# key=value" comments give plain keys ("seed", "iter");
	// ConfigValue finds a key in either layout.
	Config map[string]string
	// Columns are the header's column names.
	Columns []string
	// Draws holds one row per post-warmup draw, in the columns' order.
	Draws [][]float64
	// Warmup holds the warmup draws of a file written with save_warmup:
	// the rows before the adaptation comment (or, without one, the first
	// ⌈warmup/thin⌉ rows). Nil otherwise.
	Warmup [][]float64
	// StepSize is the adaptation comment's step size (NaN if absent).
	StepSize float64
	// InvMetric is the inverse mass matrix written after the step size
	// (CmdStan's diag_e and dense_e metrics, exactmh's adapted Metric):
	// one row, the diagonal, for "Diagonal elements of inverse mass
	// matrix:", d rows for "Elements of inverse mass matrix:"; nil if
	// absent (unit_e).
	InvMetric [][]float64
	// WarmupSeconds and SamplingSeconds are from the timing trailer (NaN if
	// absent).
	WarmupSeconds, SamplingSeconds float64
	// Diagnostics are the means over the kept draws of exactmh's per-draw
	// diagnostics — "accepted", "batch_size", "n_energy", "n_grad" — from
	// the trailer's "Diagnostics" comment (nil if absent).
	Diagnostics map[string]float64
	// Warnings says what the reader let pass: with
	// ReadOptions.DropPartial, the unterminated last line it dropped.
	Warnings []string
}

// Column returns the values of the named column (post-warmup draws).
func (s *File) Column(name string) ([]float64, error) {
	for j, c := range s.Columns {
		if c == name {
			out := make([]float64, len(s.Draws))
			for i, row := range s.Draws {
				out[i] = row[j]
			}
			return out, nil
		}
	}
	return nil, fmt.Errorf("stancsv: File: no column %q (have %v)", name, s.Columns)
}

// checkColumnNames refuses a header with an empty or a repeated column
// name: a column looked up by name would be another's.
func checkColumnNames(cols []string, line int) error {
	seen := make(map[string]int, len(cols))
	for j, c := range cols {
		if strings.TrimSpace(c) == "" {
			return fmt.Errorf("stancsv: Read: line %d: column %d has no name", line, j+1)
		}
		if k, dup := seen[c]; dup {
			return fmt.Errorf("stancsv: Read: line %d: columns %d and %d are both named %q", line, k+1, j+1, c)
		}
		seen[c] = j
	}
	return nil
}

// ParamNames returns the parameter columns: those not ending in "__".
func (s *File) ParamNames() []string {
	var out []string
	for _, c := range s.Columns {
		if !strings.HasSuffix(c, "__") {
			out = append(out, c)
		}
	}
	return out
}

// ConfigValue returns the value of the configuration key name, given as
// its last component ("num_samples", "seed", "save_warmup"), whether the
// file nests it (CmdStan: "method.sample.num_samples") or not (rstan:
// "seed"), and whether it was found.
func (s *File) ConfigValue(name string) (string, bool) {
	if v, ok := s.Config[name]; ok {
		return v, true
	}
	for k, v := range s.Config {
		if strings.HasSuffix(k, "."+name) {
			return v, true
		}
	}
	return "", false
}

// numberList parses a comment row of comma-separated numbers.
func numberList(s string) ([]float64, bool) {
	if s == "" {
		return nil, false
	}
	fields := strings.Split(s, ",")
	row := make([]float64, len(fields))
	for j, f := range fields {
		v, err := parseStanFloat(strings.TrimSpace(f))
		if err != nil {
			return nil, false
		}
		row[j] = v
	}
	return row, true
}

// ErrPartialLine is wrapped by Read's error when the file's last line has
// no terminating newline: the file was cut — a killed process's stream —
// possibly in the middle of a row or of a number, whose value would then
// be wrong. ReadOptions{DropPartial: true} reads the complete rows.
var ErrPartialLine = errors.New("the last line is not terminated by a newline: the file was cut, perhaps mid-row")

// ReadOptions configure how a Stan CSV file is read. The zero value reads
// as Read does.
type ReadOptions struct {
	// DropPartial drops an unterminated last line — the row a killed
	// process was writing — instead of failing, and records it in
	// File.Warnings: the complete rows are recovered.
	DropPartial bool
}

// Read reads a Stan CSV file: from exactmh, from CmdStan (nested
// configuration comments) or from rstan (flat "# key=value" comments). The
// rows of a file written with save_warmup go to File.Warmup, the rest to
// File.Draws. A file whose last line is not terminated by a newline is
// refused with an error wrapping ErrPartialLine; ReadOptions.DropPartial
// recovers its complete rows.
func Read(r io.Reader) (*File, error) { return ReadOptions{}.Read(r) }

// Read reads a Stan CSV file as the package function Read does, with the
// options.
func (o ReadOptions) Read(r io.Reader) (*File, error) {
	out := &File{Config: map[string]string{}, StepSize: math.NaN(), WarmupSeconds: math.NaN(), SamplingSeconds: math.NaN()}
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 1<<16), 1<<26)
	partial := false // whether the last token returned had no newline
	sc.Split(func(data []byte, atEOF bool) (int, []byte, error) {
		adv, tok, err := bufio.ScanLines(data, atEOF)
		partial = atEOF && tok != nil && bytes.IndexByte(data, '\n') < 0
		return adv, tok, err
	})
	type level struct {
		indent int
		name   string
	}
	var stack []level
	var rows [][]float64 // before the adaptation comment
	adapted := false
	metricRows := 0 // inverse-metric rows still to read after its label (-1: until one does not parse)
	line := 0
	for sc.Scan() {
		line++
		text := sc.Text()
		if partial && strings.TrimSpace(text) != "" {
			if !o.DropPartial {
				return nil, fmt.Errorf("stancsv: Read: line %d: %w", line, ErrPartialLine)
			}
			out.Warnings = append(out.Warnings, fmt.Sprintf("line %d: %v; dropped (%d bytes)", line, ErrPartialLine, len(text)))
			break
		}
		if strings.HasPrefix(text, "#") {
			body := strings.TrimPrefix(text, "#")
			switch {
			case out.Columns == nil:
				trimmed := strings.TrimSpace(body)
				if trimmed == "" {
					continue
				}
				indent := len(body) - len(strings.TrimLeft(body, " "))
				for len(stack) > 0 && stack[len(stack)-1].indent >= indent {
					stack = stack[:len(stack)-1]
				}
				key, value, hasValue := strings.Cut(trimmed, "=")
				key = strings.TrimSpace(key)
				path := key
				if len(stack) > 0 {
					var parts []string
					for _, l := range stack {
						parts = append(parts, l.name)
					}
					path = strings.Join(parts, ".") + "." + key
				}
				if hasValue {
					out.Config[path] = strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(value), "(Default)"))
				}
				stack = append(stack, level{indent, key})
			default:
				trimmed := strings.TrimSpace(body)
				if trimmed == "Adaptation terminated" && !adapted {
					adapted = true
					out.Draws, rows = rows, nil
				}
				if metricRows != 0 {
					if row, ok := numberList(trimmed); ok {
						out.InvMetric = append(out.InvMetric, row)
						metricRows--
						continue
					}
					metricRows = 0
				}
				switch trimmed {
				case "Diagonal elements of inverse mass matrix:":
					out.InvMetric, metricRows = nil, 1
				case "Elements of inverse mass matrix:":
					out.InvMetric, metricRows = nil, -1
				}
				if v, ok := strings.CutPrefix("# "+trimmed, diagPrefix); ok {
					out.Diagnostics = map[string]float64{}
					for _, kv := range strings.Split(v, ",") {
						k, x, _ := strings.Cut(kv, "=")
						if f, err := parseStanFloat(x); err == nil {
							out.Diagnostics[strings.TrimSpace(k)] = f
						}
					}
				}
				if v, ok := strings.CutPrefix(trimmed, "Step size ="); ok {
					out.StepSize, _ = strconv.ParseFloat(strings.TrimSpace(v), 64)
				}
				if v, ok := strings.CutPrefix(trimmed, "Elapsed Time:"); ok {
					out.WarmupSeconds = leadingFloat(v)
				} else if strings.HasSuffix(trimmed, "(Sampling)") {
					out.SamplingSeconds = leadingFloat(trimmed)
				}
			}
			continue
		}
		if strings.TrimSpace(text) == "" {
			continue
		}
		if out.Columns == nil {
			out.Columns = strings.Split(text, ",")
			if err := checkColumnNames(out.Columns, line); err != nil {
				return nil, err
			}
			continue
		}
		fields := strings.Split(text, ",")
		if len(fields) != len(out.Columns) {
			return nil, fmt.Errorf("stancsv: Read: line %d has %d values, header has %d columns", line, len(fields), len(out.Columns))
		}
		row := make([]float64, len(fields))
		for j, f := range fields {
			v, err := parseStanFloat(f)
			if err != nil {
				return nil, fmt.Errorf("stancsv: Read: line %d, column %s: %w", line, out.Columns[j], err)
			}
			row[j] = v
		}
		rows = append(rows, row)
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("stancsv: Read: %w", err)
	}
	if out.Columns == nil {
		return nil, errors.New("stancsv: Read: no header row")
	}
	out.splitWarmup(adapted, rows)
	return out, nil
}

// splitWarmup files the rows read: with save_warmup, those before the
// adaptation comment are warmup (without the comment, the first
// ⌈warmup/thin⌉ rows are); the rest are draws.
func (s *File) splitWarmup(adapted bool, rows [][]float64) {
	v, _ := s.ConfigValue("save_warmup")
	if v != "1" && v != "true" {
		s.Draws = append(s.Draws, rows...)
		return
	}
	if adapted { // s.Draws holds the rows before the comment
		s.Warmup, s.Draws = s.Draws, rows
		if s.Warmup == nil {
			s.Warmup = [][]float64{}
		}
		return
	}
	warmup, ok := s.ConfigValue("num_warmup") // CmdStan
	if !ok {
		warmup, _ = s.ConfigValue("warmup") // rstan
	}
	nw, err := strconv.Atoi(warmup)
	if err != nil || nw < 0 {
		nw = 0
	}
	thin := 1
	if v, ok := s.ConfigValue("thin"); ok {
		if t, err := strconv.Atoi(v); err == nil && t > 0 {
			thin = t
		}
	}
	n := min((nw+thin-1)/thin, len(rows))
	s.Warmup, s.Draws = rows[:n:n], rows[n:]
}

// parseStanFloat parses a value, accepting CmdStan's nan, inf and -inf.
func parseStanFloat(s string) (float64, error) {
	switch strings.ToLower(strings.TrimSpace(s)) {
	case "nan", "-nan":
		return math.NaN(), nil
	case "inf", "+inf":
		return math.Inf(1), nil
	case "-inf":
		return math.Inf(-1), nil
	}
	return strconv.ParseFloat(strings.TrimSpace(s), 64)
}

// leadingFloat parses the first number of s ("0.004 seconds (Warm-up)").
func leadingFloat(s string) float64 {
	f := strings.Fields(s)
	if len(f) == 0 {
		return math.NaN()
	}
	v, err := strconv.ParseFloat(f[0], 64)
	if err != nil {
		return math.NaN()
	}
	return v
}
