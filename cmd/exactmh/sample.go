// Copyright ©2026 The exactmh Authors. All rights reserved.
// Use of this source code is governed by a BSD-style
// license that can be found in the LICENSE file.

package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"reflect"
	"strings"
	"syscall"
	"time"

	"github.com/exactmh/exactmh"
	"github.com/exactmh/exactmh/progress"
	"github.com/exactmh/exactmh/stancsv"
)

// sampleUsage is the help of exactmh sample; the kernel lists come from the
// registry (exactmh.Kernels).
var sampleUsage = strings.NewReplacer("{kernels}", wrapList(baseKernels()),
	"{cnkernels}", wrapList(proposalKernels()), "{nckernels}", strings.Join(ncKernels(), " and ")).Replace(sampleUsageText)

const sampleUsageText = `Usage: exactmh sample --data FILE --response SPEC [--terms LIST] [flags]
       exactmh sample --data FILE --formula 'y ~ TERM + TERM …' [flags]

Samples the posterior of a generalised linear model of the data and writes
one Stan CSV file per chain, PREFIX_1.csv … PREFIX_<chains>.csv (--out),
with the design's column names as parameter names; a summary table goes to
stdout, progress to stderr.

TERMS (--response and --terms; --terms is a comma-separated list):
  y                 column y as it is (Num; standardised as a feature)
  num(y)            the same
  y>T, above(y;T)   1 where y > T, else 0 (Above), e.g. --response 'delay>15'
  log(y), log1p(y)  log(y), log(1 + y) (standardised as features)
  cat(c)            one-hot levels of c, the most frequent the reference
  cat(c;top=K;ref=L)  keep the K most frequent levels (the rest "other");
                    reference level L (both optional, ';'-separated)
  cat(c;sd=S)       every level of c its own effect, no reference, each
                    with the prior normal(0, S) (b_c[LEVEL]): sampled in a
                    sparse design, like (1|c) with tau fixed at S
  hour(t)           sin and cos of the hour of day of time column t
  dow(t), month(t)  one-hot day of week (Monday the reference) and month
                    (January the reference) of time column t
  .                 every column not used by the response or another term:
                    numbers as num(c), text as cat(c;top=20), times as
                    hour(c), dow(c), month(c) (R's y ~ .)
  a:b               the interaction of two or more of the terms above:
                    every product of their columns (x1:x2, cat(c):x,
                    cat(a):cat(b)), standardised unless 0/1
  (1|g)             a random intercept per level of column g; (1 + x||g)
                    with a random slope on x, (0 + x||g) the slope alone;
                    (1|a:b) the interaction, (1|a/b) b nested in a;
                    effects N(0, τ²) per term, --tau-prior on τ, the
                    effects of one term independent (lme4's ||);
                    (1 + x|g) with one '|' correlated as in lme4 and
                    brms: N(0, Σ), Σ = diag(τ)·Ω·diag(τ), --lkj on Ω
  Functions are case-insensitive. Column names are used as written; a
  name containing ( ) , ; or > cannot be used (rename the column).
  Example: --response 'delay>15' --terms
    'log(distance),hour(date),dow(date),month(date),cat(origin;top=8),num(x1)'

FORMULA (--formula, instead of --response, --terms and --no-intercept):
  R's notation, y ~ x1 + log(x2) + cat(c) + x1:x2 + (1 + x1 || g) + (1|h),
  with the terms above joined by '+': a*b is a + b + a:b; "- x" removes a
  term; 0 or -1 drops the intercept; "." is every other column;
  factor(c), and a text column named bare, is R's factor: a column per
  level but the first by name (integers numerically), R's treatment
  contrasts (cat(c) leaves out the most frequent level instead);
  offset(x) or offset(log(x)) adds x with coefficient 1 (with random
  effects); ` + "`name with spaces`" + ` a column in backquotes. (1 + x | g) has
  correlated effects, as in lme4 and brms, and (1 + x || g) independent
  ones. k | trials(n) ~ …, cbind(k, n - k) ~ … and cbind(k, f) ~ …
  (columns of successes, trials or failures) are --family binomial with
  --trials (--family probit: the probit link). Errors name the column of
  the formula at fault.
  Example: --formula 'delay>15 ~ log(distance) + hour(date) + (1|origin)'

KERNELS (--kernel): auto (default: MAP, Laplace approximation, control
  variates, pilots of the candidates priced by counted costs, never timed,
  so a seed fixes the choice and the draws on any load; the fastest kept),
  or one of
  {kernels}.
  Suffixes as the automatic default names its candidates: -cv samples the
  control-variate rewrite of the posterior around the MAP, -cn moves with
  the Crank–Nicolson proposal around the Laplace approximation, for
  {cnkernels}.
  Examples: tunamh-cv-cn, tfmh-cv-cn, mh-cn. On a model with random-effect
  terms ((1|g) in --terms): groupgibbs and groupsmh, which need one, and
  -nc for {nckernels}, moving in the non-centred parametrisation (each
  effect u = τ·z, z sampled; draws reported as u), which groups with few
  data need (their centred posterior is a funnel). The Poisson kernels need a
  bounded prior (--prior box:R or ball:R). The chains of a kernel built on the
  Laplace approximation (any -cv or -cn form, smh1, smh2, flymc; auto when
  it chooses one) start at draws of it, one per chain (chain k's the same
  under --chain-id); other kernels' chains start at the origin.

SCALE-OUT: --chain-id k runs chain k (0-based) of a --chains run alone,
  drawing from the same random stream as chain k of one in-process run
  (file PREFIX_<k+1>.csv): separate processes make the same draws, bit for
  bit. The automatic kernel is chosen by pilots that every process would
  pay for again (and machines of other architectures may round
  differently), so --chain-id needs an explicit --kernel or
  --choice FILE, written once by
    exactmh sample [model flags] --choose-only --choice FILE

CHECKPOINTS: with --checkpoint FILE, SIGINT or SIGTERM stops the chains,
  writes the checkpoint (FILE, with the model's fingerprint in FILE.json)
  and the CSV rows so far, and exits with code 4; the same command with
  --resume continues it to the end, the files equal to those of an
  uninterrupted run. A finished run writes its checkpoint too; --resume
  with a larger --draws extends it. --checkpoint-every DURATION writes it
  periodically too, so that a process killed without warning resumes from
  the last one.

Exit codes: 0 done; 1 other failure; 2 bad input (refused before
sampling); 3 bound violation; 4 interrupted with a checkpoint written;
5 interrupted with no checkpoint (run the same command again).

Flags:
`

// sampleFlags are sample's own flags.
type sampleFlags struct {
	chains, warmup, draws, thin int
	seed                        uint64
	chainID                     int
	choice                      string
	chooseOnly                  bool
	out                         string
	sigFigs                     int
	checkpoint                  string
	checkpointEvery             time.Duration
	resume                      bool
	progress                    time.Duration
	quiet                       bool
	discardDraws                bool
	report                      reportFlags
	choiceNote                  string // what --choice FILE chose and why
	choiceName                  string // and its name
}

// parseFlags parses args into fs; -h prints the usage to stdout.
func parseFlags(fs *flag.FlagSet, args []string, usage string, stdout io.Writer) (map[string]bool, error) {
	fs.SetOutput(io.Discard)
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			fmt.Fprint(stdout, usage)
			fs.SetOutput(stdout)
			fs.PrintDefaults()
			return nil, errHelp
		}
		return nil, usageErr("%v (see exactmh %s -h)", err, fs.Name())
	}
	set := map[string]bool{}
	fs.Visit(func(f *flag.Flag) { set[f.Name] = true })
	return set, nil
}

func cmdSample(args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("sample", flag.ContinueOnError)
	var mf modelFlags
	var kf kernelFlags
	var sf sampleFlags
	mf.register(fs)
	kf.register(fs)
	fs.IntVar(&sf.chains, "chains", 4, "number of chains (with --chain-id: of the whole run)")
	fs.IntVar(&sf.warmup, "warmup", 1000, "warmup transitions per chain (0: none)")
	fs.IntVar(&sf.draws, "draws", 1000, "kept draws per chain")
	fs.IntVar(&sf.thin, "thin", 1, "keep every thin-th transition")
	fs.Uint64Var(&sf.seed, "seed", 1, "random seed: chain k draws from PCG(seed, k)")
	fs.IntVar(&sf.chainID, "chain-id", -1, "run only chain `k` (0-based) of the --chains run (see SCALE-OUT; -1: all chains)")
	fs.StringVar(&sf.choice, "choice", "", "the automatic default's choice `file` (written by --choose-only, read otherwise)")
	fs.BoolVar(&sf.chooseOnly, "choose-only", false, "run the automatic default's choice, write it to --choice FILE and exit")
	fs.StringVar(&sf.out, "out", "output", "output `prefix`: chain k goes to PREFIX_<k+1>.csv")
	fs.IntVar(&sf.sigFigs, "sig-figs", 6, "significant digits in the CSV files (17: exact)")
	fs.StringVar(&sf.checkpoint, "checkpoint", "", "checkpoint `file`, written on SIGINT/SIGTERM and at the end")
	fs.DurationVar(&sf.checkpointEvery, "checkpoint-every", 0, "also write the --checkpoint FILE every `duration` (atomically: a temporary file renamed), so that a process killed without warning (SIGKILL, a lost node) resumes from the last one; each rewrites the CSV files from the draws so far")
	fs.BoolVar(&sf.resume, "resume", false, "continue the run saved in --checkpoint FILE")
	fs.DurationVar(&sf.progress, "progress", time.Second, "time between progress lines on stderr")
	fs.BoolVar(&sf.quiet, "quiet", false, "no progress lines and no summary table")
	fs.BoolVar(&sf.discardDraws, "discard-draws", false, "keep no draws in memory, only in the CSV files (for runs whose draws exceed memory; the summary is read back from the files; not with --checkpoint)")
	sf.report.register(fs, false)
	set, err := parseFlags(fs, args, sampleUsage, stdout)
	if err != nil {
		return err
	}
	kf.set = set
	if fs.NArg() > 0 {
		return usageErr("sample: unexpected argument %q (flags only; see exactmh sample -h)", fs.Arg(0))
	}

	// Flags alone.
	switch {
	case sf.chains < 1 || sf.chains > exactmh.MaxChains:
		return usageErr("--chains %d: want in [1, %d]", sf.chains, exactmh.MaxChains)
	case sf.warmup < 0:
		return usageErr("--warmup %d: want ≥ 0", sf.warmup)
	case sf.draws < 1:
		return usageErr("--draws %d: want ≥ 1", sf.draws)
	case sf.thin < 1:
		return usageErr("--thin %d: want ≥ 1", sf.thin)
	case sf.sigFigs < 1 || sf.sigFigs > 17:
		return usageErr("--sig-figs %d: want in [1, 17]", sf.sigFigs)
	case set["chain-id"] && (sf.chainID < 0 || sf.chainID >= sf.chains):
		return usageErr("--chain-id %d: want in [0, --chains = %d)", sf.chainID, sf.chains)
	case sf.resume && sf.checkpoint == "":
		return usageErr("--resume needs --checkpoint FILE")
	case sf.checkpointEvery < 0:
		return usageErr("--checkpoint-every %v: want > 0", sf.checkpointEvery)
	case sf.checkpointEvery > 0 && sf.checkpoint == "":
		return usageErr("--checkpoint-every needs --checkpoint FILE")
	case sf.chooseOnly && sf.choice == "":
		return usageErr("--choose-only needs --choice FILE to write the choice to")
	case sf.chooseOnly && (set["kernel"] && strings.ToLower(kf.kernel) != "auto"):
		return usageErr("--choose-only runs the automatic default; leave out --kernel %s", kf.kernel)
	case sf.choice != "" && !sf.chooseOnly && set["kernel"]:
		return usageErr("--choice and --kernel both name the kernel: give one")
	case sf.progress < 0:
		return usageErr("--progress %v: want ≥ 0", sf.progress)
	case sf.discardDraws && sf.checkpoint != "":
		return usageErr("--discard-draws and --checkpoint: a run that keeps no draws cannot be resumed in another process (its CSV files cannot be rewritten from the checkpoint); leave out one")
	}
	auto := strings.ToLower(strings.TrimSpace(kf.kernel)) == "auto" && (sf.choice == "" || sf.chooseOnly)
	if auto {
		for _, h := range []string{"scale", "chi", "steps", "q", "lambda"} {
			if set[h] {
				return usageErr("--%s needs an explicit --kernel: the automatic default chooses its own", h)
			}
		}
	}
	if auto && !sf.chooseOnly && set["chain-id"] {
		return usageErr("--chain-id needs --kernel or --choice FILE: the automatic kernel is chosen by pilots each process would run again, which other architectures may round differently (write one choice for all with --choose-only --choice FILE)")
	}
	// Signals stay caught until the command returns: a scheduler may send
	// SIGTERM twice (to the process and through a wrapper script), and a
	// second one must not kill the process while it writes its checkpoint.
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGINT, syscall.SIGTERM)
	defer stop()
	var choiceReport func(string)
	if !sf.quiet && sf.progress > 0 {
		choiceReport = choiceLogger(stderr)
	}

	t0 := time.Now()
	m, err := mf.buildContext(ctx) // reading the data and building the design stop on a signal
	if err != nil {
		return interrupted(ctx, &sf, err)
	}
	if !sf.quiet && sf.progress > 0 {
		fmt.Fprintf(stderr, "read %s: %d rows (%d dropped), %d parameters, in %v\n", mf.data, m.design.N, m.design.Dropped, m.post.Dim(), time.Since(t0).Round(10*time.Millisecond))
	}
	if set["lkj"] && m.fp.LKJ == 0 {
		return usageErr("--lkj %v: the model has no correlated random-effect term, (1 + x | g), whose correlations an LKJ prior would be on", mf.lkj)
	}
	warnIdentifiability(stderr, m, &mf)
	if ctx.Err() != nil {
		return interrupted(ctx, &sf, ctx.Err())
	}

	if sf.chooseOnly {
		return chooseOnly(ctx, m, &sf, choiceReport, stdout)
	}

	// The kernel: explicit, from a choice file, from the checkpoint's
	// metadata (a resumed automatic run), or the automatic default.
	var meta *checkpointMeta
	if sf.resume {
		if meta, err = readMeta(sf.checkpoint); err != nil {
			return err
		}
		if d := m.fp.diff(&meta.Fingerprint); d != "" {
			return usageErr("--resume: checkpoint %s is of a different model or data: %s", sf.checkpoint, d)
		}
	}
	kernelName := kf.kernel
	choiceReason := ""
	if sf.choice != "" {
		c, err := readChoice(sf.choice)
		if err != nil {
			return err
		}
		if d := m.fp.diff(&c.Fingerprint); d != "" {
			return usageErr("--choice %s was made for a different model or data: %s", sf.choice, d)
		}
		kernelName, choiceReason = c.Name, c.Reason
		sf.choiceNote = fmt.Sprintf("%s, as chosen in %s: %s", c.Name, sf.choice, c.Reason)
		sf.choiceName = c.Name
		if !set["scale"] && c.Scale > 0 {
			kf.scale = c.Scale // the step scale the choice's pilot adapted, where Sample starts it
		}
		kf.maxScale = c.MaxScale
	}
	if auto && meta != nil {
		if meta.Chosen == "" {
			return usageErr("--resume: checkpoint %s is of --kernel %s, not of the automatic default", sf.checkpoint, meta.Kernel)
		}
		kernelName = meta.Chosen
		kf.maxScale = meta.ChosenMaxScale
	}
	var kern exactmh.Kernel
	post := m.post
	var ks *kernelSpec
	var la *exactmh.LaplaceApprox // the approximation a -cv, -cn, SMH or FlyMC kernel is built on
	rechosen := false
	if auto && meta != nil && choosesOwn(meta.Chosen) {
		// A kernel chosen by its own package's path (GroupGibbs on a
		// multilevel model) carries settings its name does not (the
		// small-N mode, repeats, shears, the settled warmup): the
		// choice, counted and never timed, is made again and must name
		// the same kernel (TestResumeExtendsAutoMultilevel).
		cs := &exactmh.Settings{Chains: sf.chains, Warmup: sf.warmup, Draws: sf.draws, Thin: sf.thin, Seed: sf.seed}
		if sf.warmup == 0 {
			cs.Warmup = exactmh.NoWarmup
		}
		c, err := exactmh.Choose(ctx, m.post, cs)
		if err != nil {
			return interrupted(ctx, &sf, fmt.Errorf("--resume: the automatic choice made again: %w", err))
		}
		if c.Name != meta.Chosen {
			return usageErr("--resume: checkpoint %s is of the automatic default's %s, but the choice made again is %s", sf.checkpoint, meta.Chosen, c.Name)
		}
		kern, post, rechosen = c.Kernel, c.Posterior, true
		if post == nil {
			post = m.post
		}
	}
	if (!auto || meta != nil) && !rechosen {
		if ks, err = parseKernel(kernelName); err != nil {
			return err
		}
		if kern, post, la, err = kf.build(ctx, ks, m.post); err != nil {
			return interrupted(ctx, &sf, err)
		}
	}
	desc := "auto"
	if !auto {
		desc = kf.describe(ks)
	}
	chainID := -1
	if set["chain-id"] {
		chainID = sf.chainID
	}
	if meta != nil {
		want := checkpointMeta{Kernel: desc, Seed: sf.seed, Chains: sf.chains, ChainID: chainID, Warmup: sf.warmup, Thin: sf.thin}
		if d := meta.runDiff(&want); d != "" {
			return usageErr("--resume: checkpoint %s is of another run: %s", sf.checkpoint, d)
		}
	}

	files := stancsv.NewFiles(sf.out, &stancsv.Options{SigFigs: sf.sigFigs, Model: m.info(mf.data), Choice: choiceReason, Generated: m.generated()})
	if dir := filepath.Dir(sf.out); dir != "" {
		if st, err := os.Stat(dir); err != nil || !st.IsDir() {
			return usageErr("--out %s: directory %s does not exist", sf.out, dir)
		}
	}
	if sf.checkpoint != "" {
		if err := checkCheckpointDir(sf.checkpoint); err != nil {
			return err
		}
	}
	release, err := outputLocks(&sf, chainID)
	if err != nil {
		return err
	}
	defer release()
	if sf.checkpoint != "" {
		removeStaleTemps(sf.checkpoint) // with the lock held, no other process is writing them
	}
	var printer exactmh.Recorder
	if !sf.quiet && sf.progress > 0 {
		printer = progress.New(stderr, sf.progress)
	}
	var tick *checkpointTicker
	var ticker exactmh.Recorder // nil unless --checkpoint-every (a nil *checkpointTicker is not a nil Recorder)
	if sf.checkpointEvery > 0 {
		tick = &checkpointTicker{every: sf.checkpointEvery}
		ticker = tick
	}
	rec := exactmh.MultiRecorder(files, printer, ticker)
	// save writes a periodic checkpoint, with the metadata finish writes.
	save := func(res *exactmh.Result) error {
		meta := checkpointMeta{Format: metaFormat, Fingerprint: m.fp, Kernel: desc, Seed: sf.seed, Chains: sf.chains, ChainID: chainID, Warmup: sf.warmup, Thin: sf.thin}
		if res.Choice != nil {
			meta.Chosen = res.Choice.Name
			if cn := cnProposal(res.Choice.Kernel); cn != nil {
				meta.ChosenMaxScale = cn.MaxScale
			}
		}
		if err := writeCheckpoint(sf.checkpoint, res, &meta); err != nil {
			return failure(fmt.Errorf("periodic checkpoint: %v", err))
		}
		return nil
	}
	set0 := &exactmh.Settings{Chains: sf.chains, Warmup: sf.warmup, Draws: sf.draws, Thin: sf.thin, Seed: sf.seed, Recorder: rec, DiscardDraws: sf.discardDraws, ChoiceProgress: choiceReport}
	if sf.warmup == 0 {
		set0.Warmup = exactmh.NoWarmup
	}
	if chainID >= 0 {
		set0.Chains, set0.FirstChain = 1, chainID
	}
	// A kernel built on the Laplace approximation starts its chains from
	// draws of it, as the automatic default's run does.
	set0 = exactmh.LaplaceInits(set0, la, post)

	var res *exactmh.Result
	if meta != nil {
		f, err := os.Open(sf.checkpoint)
		if err != nil {
			return usageErr("--resume: %v", err)
		}
		res, err = exactmh.LoadCheckpoint(f, post, kern, rec)
		f.Close()
		if err != nil {
			return usageErr("--resume: %s: %v", sf.checkpoint, err)
		}
		more := max(0, sf.draws-res.Settings.Draws)
		loaded := res
		res, err = runSegments(ctx, tick, func(ctx context.Context) (*exactmh.Result, error) { return exactmh.Resume(ctx, loaded, more) }, save)
		if res == nil {
			return failure(err)
		}
		return finish(res, err, &sf, m, desc, meta.Chosen, meta.ChosenMaxScale, chainID, stdout)
	}
	res, err = runSegments(ctx, tick, func(ctx context.Context) (*exactmh.Result, error) { return exactmh.Sample(ctx, post, kern, set0) }, save)
	chosen, chosenMax := "", 0.0
	if res != nil && res.Choice != nil {
		chosen = res.Choice.Name
		if cn := cnProposal(res.Choice.Kernel); cn != nil {
			chosenMax = cn.MaxScale
		}
	}
	if res == nil {
		// Refused before any chain ran: the configuration.
		if ctx.Err() != nil {
			return interrupted(ctx, &sf, err)
		}
		return inputErr(err)
	}
	return finish(res, err, &sf, m, desc, chosen, chosenMax, chainID, stdout)
}

// interrupted turns an error after a signal, before sampling started,
// into the exit the scheduler should see: code 4 if the --checkpoint file
// exists (an earlier run's, intact: continue it with --resume), else 5
// (nothing to resume: run the same command again, without --resume).
// TestInterruptedExitCodes.
func interrupted(ctx context.Context, sf *sampleFlags, err error) error {
	if ctx.Err() == nil {
		return err
	}
	if sf.checkpoint != "" {
		if _, serr := os.Stat(sf.checkpoint); serr == nil {
			return &cliError{exitInterrupted, fmt.Errorf("interrupted before sampling started (the checkpoint %s is intact: continue it with --resume)", sf.checkpoint)}
		}
		return &cliError{exitInterruptedAfresh, fmt.Errorf("interrupted before sampling started, before any checkpoint was written: run the same command again, without --resume")}
	}
	return &cliError{exitInterruptedAfresh, fmt.Errorf("interrupted before sampling started (%v): run the same command again", err)}
}

// finish writes the checkpoint if asked, prints the summary and says how
// the run ended.
func finish(res *exactmh.Result, err error, sf *sampleFlags, m *fitted, desc, chosen string, chosenMax float64, chainID int, stdout io.Writer) error {
	saved := false
	// A run that failed only in its recorder (a full disk) has intact
	// chains: it is checkpointed too.
	var recErr *exactmh.RecorderError
	recorderOnly := res.Status == exactmh.Failed && errors.As(err, &recErr)
	if sf.checkpoint != "" && (res.Status == exactmh.Completed || res.Status == exactmh.Canceled || recorderOnly) {
		meta := checkpointMeta{Format: metaFormat, Fingerprint: m.fp, Kernel: desc, Chosen: chosen, ChosenMaxScale: chosenMax,
			Seed: sf.seed, Chains: sf.chains, ChainID: chainID, Warmup: sf.warmup, Thin: sf.thin}
		if cerr := writeCheckpoint(sf.checkpoint, res, &meta); cerr != nil {
			if err == nil {
				err = cerr
			} else {
				err = fmt.Errorf("%v; and the checkpoint could not be written: %v", err, cerr)
			}
			return failure(err)
		}
		saved = true
	}
	switch res.Status {
	case exactmh.Completed:
		if sf.discardDraws && !sf.quiet {
			return summaryFromFiles(sf, chainID, stdout)
		}
		if !sf.quiet {
			return printReport(res, m, sf, stdout)
		}
		return nil
	case exactmh.Canceled:
		if saved {
			return &cliError{exitInterrupted, fmt.Errorf("interrupted: checkpoint written to %s and the rows so far to %s_*.csv; run the same command with --resume to continue", sf.checkpoint, sf.out)}
		}
		return &cliError{exitInterruptedAfresh, fmt.Errorf("interrupted: the rows so far are in %s_*.csv; without --checkpoint the run cannot be resumed: run the same command again", sf.out)}
	}
	if saved && recorderOnly {
		return failure(fmt.Errorf("%v; the chains are intact and the checkpoint is written to %s: fix the output (free disk space) and run the same command with --resume", err, sf.checkpoint))
	}
	return failure(err)
}

// metaFormat and choiceFormat mark the JSON files the command writes.
const (
	metaFormat   = "exactmh-checkpoint-meta/1"
	choiceFormat = "exactmh-choice/1"
)

// checkpointMeta is stored beside a checkpoint (FILE.json): what the run
// was, so that --resume refuses another model, data or run.
type checkpointMeta struct {
	Format      string
	Fingerprint fingerprint
	Kernel      string // the --kernel flags, "auto" for the automatic default
	Chosen      string `json:",omitempty"` // the automatic default's choice
	// ChosenMaxScale is the cap on the choice's Crank–Nicolson step scale
	// (exactmh.CrankNicolson.MaxScale, 0: none), which its name does not
	// carry: a resumed automatic run rebuilds the kernel with it.
	ChosenMaxScale float64 `json:",omitempty"`
	Seed           uint64
	Chains         int
	ChainID        int // −1: all chains in this process
	Warmup         int
	Thin           int
}

// runDiff says how the run settings of o differ from m's.
func (m *checkpointMeta) runDiff(o *checkpointMeta) string {
	var out []string
	if m.Kernel != o.Kernel {
		out = append(out, fmt.Sprintf("--kernel: the checkpoint has %s, this command %s", m.Kernel, o.Kernel))
	}
	if m.Seed != o.Seed {
		out = append(out, fmt.Sprintf("--seed %d, not %d", m.Seed, o.Seed))
	}
	if m.Chains != o.Chains {
		out = append(out, fmt.Sprintf("--chains %d, not %d", m.Chains, o.Chains))
	}
	if m.ChainID != o.ChainID {
		out = append(out, fmt.Sprintf("--chain-id %d, not %d", m.ChainID, o.ChainID))
	}
	if m.Warmup != o.Warmup {
		out = append(out, fmt.Sprintf("--warmup %d, not %d", m.Warmup, o.Warmup))
	}
	if m.Thin != o.Thin {
		out = append(out, fmt.Sprintf("--thin %d, not %d", m.Thin, o.Thin))
	}
	return strings.Join(out, "; ")
}

// writeCheckpoint writes the checkpoint and its metadata, each to a
// temporary file renamed into place, so that a kill while writing leaves
// the previous pair.
func writeCheckpoint(path string, res *exactmh.Result, meta *checkpointMeta) error {
	b, err := json.MarshalIndent(meta, "", "  ")
	if err != nil {
		return err
	}
	if err := writeAtomic(path+".json", func(w io.Writer) error { _, err := w.Write(append(b, '\n')); return err }); err != nil {
		return err
	}
	return writeAtomic(path, res.Checkpoint)
}

// readMeta reads a checkpoint's metadata.
func readMeta(path string) (*checkpointMeta, error) {
	b, err := os.ReadFile(path + ".json")
	if err != nil {
		if _, serr := os.Stat(path); serr != nil {
			return nil, usageErr("--resume: no checkpoint %s", path)
		}
		return nil, usageErr("--resume: checkpoint %s has no metadata %s.json (written beside it by exactmh sample): %v", path, path, err)
	}
	var m checkpointMeta
	if err := json.Unmarshal(b, &m); err != nil || m.Format != metaFormat {
		return nil, usageErr("--resume: %s.json is not an exactmh checkpoint's metadata", path)
	}
	return &m, nil
}

// choiceFile is what --choose-only writes.
type choiceFile struct {
	Format      string
	Name        string  // the kernel, as --kernel takes it (case-insensitively)
	Scale       float64 `json:",omitempty"` // the step scale its pilot adapted (exactmh.Candidate.Scale)
	MaxScale    float64 `json:",omitempty"` // the cap on its Crank–Nicolson step scale (exactmh.CrankNicolson.MaxScale), if the choice set one
	Reason      string
	Seed        uint64
	Fingerprint fingerprint
}

func readChoice(path string) (*choiceFile, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, usageErr("--choice: %v", err)
	}
	var c choiceFile
	if err := json.Unmarshal(b, &c); err != nil || c.Format != choiceFormat {
		return nil, usageErr("--choice %s: not a choice file written by exactmh sample --choose-only", path)
	}
	return &c, nil
}

// chosenScale is the step scale the chosen kernel's pilot adapted, where
// Sample starts it (0 if none): the chosen kernel's Scale, which Choose
// sets to it, else its candidate's.
func chosenScale(c *exactmh.Choice) float64 {
	if v := reflect.ValueOf(c.Kernel); v.Kind() == reflect.Struct {
		if f := v.FieldByName("Scale"); f.IsValid() && f.Kind() == reflect.Float64 && f.Float() > 0 {
			return f.Float()
		}
	}
	for _, k := range c.Candidates {
		if k.Name == c.Name {
			return k.Scale
		}
	}
	return 0
}

// chooseOnly runs the automatic default's choice and writes it.
func chooseOnly(ctx context.Context, m *fitted, sf *sampleFlags, report func(string), stdout io.Writer) error {
	c, err := exactmh.Choose(ctx, m.post, &exactmh.Settings{Chains: 1, Seed: sf.seed, ChoiceProgress: report})
	if err != nil {
		return interrupted(ctx, sf, inputErr(err))
	}
	cf := choiceFile{Format: choiceFormat, Name: c.Name, Scale: chosenScale(c), Reason: c.String(), Seed: sf.seed, Fingerprint: m.fp}
	if cn := cnProposal(c.Kernel); cn != nil {
		cf.MaxScale = cn.MaxScale
	}
	b, err := json.MarshalIndent(&cf, "", "  ")
	if err != nil {
		return failure(err)
	}
	if err := writeAtomic(sf.choice, func(w io.Writer) error { _, err := w.Write(append(b, '\n')); return err }); err != nil {
		return failure(err)
	}
	if !sf.quiet {
		fmt.Fprintf(stdout, "%s\n", c)
	}
	return nil
}

// choosesOwn reports whether the registered kernel of this name makes the
// automatic choice by its own path (KernelInfo.Choose): its chosen
// configuration is then more than its name.
func choosesOwn(name string) bool {
	for _, ki := range exactmh.Kernels() {
		if ki.Name == name && ki.Choose != nil {
			return true
		}
	}
	return false
}
