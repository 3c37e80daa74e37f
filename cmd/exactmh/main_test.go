// Copyright ©2026 The exactmh Authors. All rights reserved.
// Use of this source code is governed by a BSD-style
// license that can be found in the LICENSE file.

package main

import (
	"bytes"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/exactmh/exactmh"
	"github.com/exactmh/exactmh/stancsv"
)

// bin is the exactmh binary built by TestMain; flights is a small data
// file with the flights' columns (date, delay, distance, origin,
// destination) and a few more (x1, y, count).
var bin, flights, flights2, scratch string

func TestMain(m *testing.M) {
	os.Exit(testMain(m))
}

func testMain(m *testing.M) int {
	var err error
	scratch, err = os.MkdirTemp("", "exactmh-cli-test")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer os.RemoveAll(scratch)
	bin = filepath.Join(scratch, "exactmh")
	out, err := exec.Command("go", "build", "-o", bin, ".").CombinedOutput()
	if err != nil {
		fmt.Fprintf(os.Stderr, "go build: %v\n%s", err, out)
		return 1
	}
	flights = filepath.Join(scratch, "flights.csv")
	flights2 = filepath.Join(scratch, "flights2.csv")
	if err := writeFlights(flights, 3000, 1); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	if err := writeFlights(flights2, 3000, 2); err != nil { // same columns and size, other values
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	return m.Run()
}

// writeFlights writes n rows of synthetic flights with seed.
func writeFlights(path string, n int, seed uint64) error {
	rng := rand.New(rand.NewPCG(seed, 99))
	airports := []string{"ORD", "DFW", "ATL", "LAX", "PHX", "STL", "DTW", "MSP", "LAS", "DEN", "SEA", "BOS"}
	var b bytes.Buffer
	b.WriteString("date,delay,distance,origin,destination,x1,y,count\n")
	start := time.Date(2001, 1, 1, 0, 0, 0, 0, time.UTC)
	for range n {
		t := start.Add(time.Duration(rng.Int64N(int64(365 * 24 * time.Hour))))
		dist := 100 + rng.IntN(2500)
		o := airports[min(rng.IntN(len(airports)), rng.IntN(len(airports)))]
		d := airports[rng.IntN(len(airports))]
		x1 := rng.NormFloat64()
		z := -1.4 + 0.3*math.Log(float64(dist)/500) + 0.5*math.Sin(2*math.Pi*float64(t.Hour())/24) + 0.6*x1
		delay := int(15 + 20*z + 15*rng.NormFloat64())
		y := 1 + 2*x1 + rng.NormFloat64()
		count := poisson(rng, math.Exp(0.3+0.4*x1))
		fmt.Fprintf(&b, "%s,%d,%d,%s,%s,%.6f,%.6f,%d\n", t.Format("2006-01-02 15:04:05"), delay, dist, o, d, x1, y, count)
	}
	return os.WriteFile(path, b.Bytes(), 0o644)
}

func poisson(rng *rand.Rand, mean float64) int {
	l, k, p := math.Exp(-mean), 0, 1.0
	for {
		p *= rng.Float64()
		if p <= l {
			return k
		}
		k++
	}
}

// flightsModel is the flights model of the docs' scripts.
var flightsModel = []string{"--response", "delay>15", "--terms",
	"log(distance),hour(date),dow(date),month(date),cat(origin;top=8),cat(destination;top=8)"}

// result is a finished exactmh process.
type result struct {
	stdout, stderr string
	code           int
}

// cli runs the binary in dir and waits for it.
func cli(t *testing.T, dir string, args ...string) result {
	t.Helper()
	cmd := exec.Command(bin, args...)
	cmd.Dir = dir
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	code := 0
	if err != nil {
		var ee *exec.ExitError
		if !errors.As(err, &ee) {
			t.Fatalf("exactmh %s: %v", strings.Join(args, " "), err)
		}
		code = ee.ExitCode()
	}
	return result{out.String(), errb.String(), code}
}

// mustRun runs the binary and fails the test unless it exits 0.
func mustRun(t *testing.T, dir string, args ...string) result {
	t.Helper()
	r := cli(t, dir, args...)
	if r.code != 0 {
		t.Fatalf("exactmh %s: exit %d: %s", strings.Join(args, " "), r.code, r.stderr)
	}
	return r
}

// sampleArgs is a fast sample command on the flights file.
func sampleArgs(extra ...string) []string {
	args := append([]string{"sample", "--data", flights}, flightsModel...)
	args = append(args, "--warmup", "200", "--draws", "300", "--seed", "7", "--sig-figs", "17", "--quiet")
	return append(args, extra...)
}

// readCSV reads a Stan CSV file.
func readCSV(t *testing.T, path string) *stancsv.File {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	s, err := stancsv.Read(f)
	if err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	return s
}

// sameDraws fails unless the two sets of files (prefix_1.csv …) hold the
// same columns and draws, bit for bit.
func sameDraws(t *testing.T, prefixA, prefixB string, chains int) {
	t.Helper()
	for k := 1; k <= chains; k++ {
		sameFile(t, fmt.Sprintf("%s_%d.csv", prefixA, k), fmt.Sprintf("%s_%d.csv", prefixB, k))
	}
}

// sameFile fails unless two Stan CSV files hold the same columns and
// draws, bit for bit.
func sameFile(t *testing.T, pathA, pathB string) {
	t.Helper()
	a, b := readCSV(t, pathA), readCSV(t, pathB)
	if !reflect.DeepEqual(a.Columns, b.Columns) {
		t.Fatalf("%s, %s: columns differ:\n%v\n%v", pathA, pathB, a.Columns, b.Columns)
	}
	if len(a.Draws) == 0 || len(a.Draws) != len(b.Draws) {
		t.Fatalf("%s, %s: %d draws against %d", pathA, pathB, len(a.Draws), len(b.Draws))
	}
	for i := range a.Draws {
		for j := range a.Draws[i] {
			x, y := a.Draws[i][j], b.Draws[i][j]
			if x != y && !(math.IsNaN(x) && math.IsNaN(y)) {
				t.Fatalf("%s, %s: draw %d, column %s: %v against %v", pathA, pathB, i, a.Columns[j], x, y)
			}
		}
	}
}

// TestSample runs a sample and checks the files: one per chain, named
// columns from the design, the kept draws, the chain ids, the summary on
// stdout.
func TestSample(t *testing.T) {
	dir := t.TempDir()
	r := mustRun(t, dir, sampleArgs("--kernel", "tunamh-cv-cn", "--chains", "2", "--out", "run", "--thin", "2")...)
	_ = r
	r = mustRun(t, dir, append(sampleArgs("--kernel", "tfmh-cv-cn", "--chains", "2", "--out", "run2"), "--quiet=false", "--progress", "0")...)
	for _, want := range []string{"mean", "rhat", "Intercept", "log_distance", "origin_", "date_hour_sin"} {
		if !strings.Contains(r.stdout, want) {
			t.Errorf("summary on stdout lacks %q:\n%s", want, r.stdout)
		}
	}
	for k := 1; k <= 2; k++ {
		f := readCSV(t, filepath.Join(dir, fmt.Sprintf("run_%d.csv", k)))
		if len(f.Draws) != 300 {
			t.Errorf("chain %d: %d draws, want 300", k, len(f.Draws))
		}
		params := f.ParamNames()
		if params[0] != "Intercept" || params[1] != "log_distance" || params[2] != "date_hour_sin" {
			t.Errorf("chain %d: parameter columns %v", k, params)
		}
		if id, _ := f.ConfigValue("id"); id != fmt.Sprint(k) {
			t.Errorf("chain %d: id = %s", k, id)
		}
		if th, _ := f.ConfigValue("thin"); th != "2" {
			t.Errorf("chain %d: thin = %s", k, th)
		}
		if alg, _ := f.ConfigValue("algorithm"); alg != "TunaMH" {
			t.Errorf("chain %d: algorithm = %s", k, alg)
		}
	}
	if _, err := os.Stat(filepath.Join(dir, "run_3.csv")); err == nil {
		t.Error("a third file for two chains")
	}
}

// TestChainIDProcessesEqualInProcess runs 4 processes with --chain-id
// 0…3 at once and checks that their files hold the draws of one
// in-process 4-chain run, bit for bit (17 significant digits).
func TestChainIDProcessesEqualInProcess(t *testing.T) {
	dir := t.TempDir()
	for _, kernel := range []string{"tunamh-cv-cn", "mh"} {
		mustRun(t, dir, sampleArgs("--kernel", kernel, "--chains", "4", "--out", "whole-"+kernel)...)
		var wg sync.WaitGroup
		res := make([]result, 4)
		for k := range 4 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				res[k] = cli(t, dir, sampleArgs("--kernel", kernel, "--chains", "4", "--chain-id", fmt.Sprint(k), "--out", "split-"+kernel)...)
			}()
		}
		wg.Wait()
		for k, r := range res {
			if r.code != 0 {
				t.Fatalf("%s: chain %d: exit %d: %s", kernel, k, r.code, r.stderr)
			}
		}
		sameDraws(t, filepath.Join(dir, "whole-"+kernel), filepath.Join(dir, "split-"+kernel), 4)
		for k := 1; k <= 4; k++ {
			f := readCSV(t, filepath.Join(dir, fmt.Sprintf("split-%s_%d.csv", kernel, k)))
			if id, _ := f.ConfigValue("id"); id != fmt.Sprint(k) {
				t.Errorf("%s: file %d has id %s", kernel, k, id)
			}
		}
	}
}

// TestChooseOnlyThenChainID writes the automatic default's choice once
// and runs two chains from it in separate processes, equal to the
// in-process run of the same choice; the choice file is refused for other
// data.
func TestChooseOnlyThenChainID(t *testing.T) {
	dir := t.TempDir()
	r := mustRun(t, dir, append(sampleArgs("--choose-only", "--choice", "choice.json"), "--quiet=false")...)
	if !strings.Contains(r.stdout, "ESS per 10⁶ evaluations") {
		t.Errorf("--choose-only printed %q", r.stdout)
	}
	mustRun(t, dir, sampleArgs("--choice", "choice.json", "--chains", "2", "--out", "whole")...)
	for k := range 2 {
		mustRun(t, dir, sampleArgs("--choice", "choice.json", "--chains", "2", "--chain-id", fmt.Sprint(k), "--out", "split")...)
	}
	sameDraws(t, filepath.Join(dir, "whole"), filepath.Join(dir, "split"), 2)

	args := sampleArgs("--choice", "choice.json", "--chain-id", "0", "--out", "other")
	args[2] = flights2
	r = cli(t, dir, args...)
	wantError(t, r, exitBadInput, "different model or data")
}

// waitForRows waits until the file has at least n lines of draws (or the
// process ended).
func waitForRows(path string, n int, done <-chan struct{}) bool {
	for {
		select {
		case <-done:
			return false
		case <-time.After(10 * time.Millisecond):
		}
		b, err := os.ReadFile(path)
		if err == nil && bytes.Count(b, []byte("\n")) > 60+n {
			return true
		}
	}
}

// TestResumeAfterSIGTERM interrupts a run with SIGTERM: exit code 4, a
// checkpoint and its metadata written, the CSV rows so far flushed; the
// same command with --resume completes it, and the files then equal those
// of an uninterrupted run. The checkpoint is refused for other data and
// for another model.
func TestResumeAfterSIGTERM(t *testing.T) {
	dir := t.TempDir()
	args := func(extra ...string) []string {
		a := append([]string{"sample", "--data", flights}, flightsModel...)
		a = append(a, "--kernel", "mh", "--chains", "2", "--warmup", "100", "--draws", "6000",
			"--seed", "3", "--sig-figs", "17", "--quiet")
		return append(a, extra...)
	}
	mustRun(t, dir, args("--out", "ref")...)

	cmd := exec.Command(bin, args("--out", "int", "--checkpoint", "int.ckpt")...)
	cmd.Dir = dir
	errb, done, waitErr := startBackground(t, cmd)
	if !waitForRows(filepath.Join(dir, "int_1.csv"), 50, done) {
		t.Fatalf("the run ended before it could be interrupted: %v: %s", *waitErr, errb.String())
	}
	cmd.Process.Signal(syscall.SIGTERM)
	<-done
	if code := cmd.ProcessState.ExitCode(); code != exitInterrupted {
		t.Fatalf("exit code %d after SIGTERM, want %d: %s", code, exitInterrupted, errb.String())
	}
	if lines := strings.Split(strings.TrimSpace(errb.String()), "\n"); len(lines) != 1 || !strings.Contains(lines[0], "--resume") {
		t.Errorf("stderr after SIGTERM: %q", errb.String())
	}
	for _, f := range []string{"int.ckpt", "int.ckpt.json"} {
		if _, err := os.Stat(filepath.Join(dir, f)); err != nil {
			t.Fatalf("no %s after SIGTERM: %v", f, err)
		}
	}
	part := readCSVPartial(t, filepath.Join(dir, "int_1.csv"))
	if len(part.Draws) == 0 || len(part.Draws) >= 6000 {
		t.Fatalf("the interrupted file has %d draws", len(part.Draws))
	}

	// Another model or other data: refused, one line, code 2.
	other := args("--out", "int", "--checkpoint", "int.ckpt", "--resume")
	other[2] = flights2
	wantError(t, cli(t, dir, other...), exitBadInput, "different model or data")
	wantError(t, cli(t, dir, args("--out", "int", "--checkpoint", "int.ckpt", "--resume", "--family", "probit")...),
		exitBadInput, "--family: the file has logistic, this command probit")
	wantError(t, cli(t, dir, args("--out", "int", "--checkpoint", "int.ckpt", "--resume", "--seed", "4")...),
		exitBadInput, "--seed")

	mustRun(t, dir, args("--out", "int", "--checkpoint", "int.ckpt", "--resume")...)
	sameDraws(t, filepath.Join(dir, "ref"), filepath.Join(dir, "int"), 2)
}

// TestSIGINTMidTransition interrupts HMC runs whose transitions each
// take a few hundred thousand data-chunk reads (3,000 leapfrog steps over
// the design): SIGINT stops the process within a chunk of data, not at
// the end of the transition, with exit code 4 and a checkpoint, and
// --resume then gives the files of an uninterrupted run, byte for byte.
func TestSIGINTMidTransition(t *testing.T) {
	if testing.Short() {
		t.Skip("seconds of HMC transitions")
	}
	dir := t.TempDir()
	args := func(extra ...string) []string {
		a := append([]string{"sample", "--data", flights}, flightsModel...)
		a = append(a, "--kernel", "hmc", "--steps", "3000", "--chains", "1", "--warmup", "0", "--draws", "6",
			"--seed", "5", "--sig-figs", "17", "--quiet")
		return append(a, extra...)
	}
	start := time.Now()
	mustRun(t, dir, args("--out", "ref")...)
	perDraw := time.Since(start) / 6
	for _, wait := range []time.Duration{perDraw / 2, 2*perDraw + perDraw/3} {
		out := fmt.Sprintf("int%d", wait.Milliseconds())
		ckpt := out + ".ckpt"
		cmd := exec.Command(bin, args("--out", out, "--checkpoint", ckpt)...)
		cmd.Dir = dir
		errb, done, _ := startBackground(t, cmd)
		time.Sleep(wait)
		cmd.Process.Signal(syscall.SIGINT)
		sent := time.Now()
		<-done
		took := time.Since(sent)
		t.Logf("a transition takes about %v; SIGINT after %v stopped the process in %v", perDraw, wait, took)
		if code := cmd.ProcessState.ExitCode(); code != exitInterrupted {
			t.Fatalf("exit code %d after SIGINT, want %d: %s", code, exitInterrupted, errb.String())
		}
		if took > perDraw/3 {
			t.Errorf("SIGINT stopped the process %v later; a transition takes %v", took, perDraw)
		}
		mustRun(t, dir, args("--out", out, "--checkpoint", ckpt, "--resume")...)
		sameDraws(t, filepath.Join(dir, "ref"), filepath.Join(dir, out), 1)
	}
}

// startBackground starts cmd with its stderr kept; done is closed when it
// has ended, and *waitErr is then its Wait's error.
func startBackground(t *testing.T, cmd *exec.Cmd) (errb *bytes.Buffer, done <-chan struct{}, waitErr *error) {
	t.Helper()
	errb, waitErr = new(bytes.Buffer), new(error)
	cmd.Stderr = errb
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	ch := make(chan struct{})
	go func() { *waitErr = cmd.Wait(); close(ch) }()
	return errb, ch, waitErr
}

// readCSVPartial reads a file that may end mid-row.
func readCSVPartial(t *testing.T, path string) *stancsv.File {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	s, err := stancsv.ReadOptions{DropPartial: true}.Read(f)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// TestSummary summarises our files and the CmdStan and rstan fixtures: the
// table of Result.Summary, with lp__ where the files have it.
func TestSummary(t *testing.T) {
	dir := t.TempDir()
	mustRun(t, dir, sampleArgs("--kernel", "mh", "--chains", "3", "--out", "mh")...)
	r := mustRun(t, dir, "summary", "mh_1.csv", "mh_2.csv", "mh_3.csv")
	for _, want := range []string{"MH (exact), 3 chains × 300 draws", "ess_bulk", "rhat", "lp__", "Intercept", "log_distance"} {
		if !strings.Contains(r.stdout, want) {
			t.Errorf("summary of our files lacks %q:\n%s", want, r.stdout)
		}
	}
	// The same numbers as stancsv.Summarize computes for the files.
	var files []*stancsv.File
	for k := 1; k <= 3; k++ {
		files = append(files, readCSV(t, filepath.Join(dir, fmt.Sprintf("mh_%d.csv", k))))
	}
	s, err := stancsv.Summarize(files)
	if err != nil {
		t.Fatal(err)
	}
	// As sampled (--standardized), less the lines on scale and prior.
	r = mustRun(t, dir, "summary", "--standardized", "mh_1.csv", "mh_2.csv", "mh_3.csv")
	var kept []string
	for _, l := range strings.SplitAfter(r.stdout, "\n") {
		if !strings.HasPrefix(l, "coefficients ") && !strings.HasPrefix(l, "prior: ") {
			kept = append(kept, l)
		}
	}
	if got, printed := s.String(), strings.Join(kept, ""); got != printed {
		t.Errorf("exactmh summary --standardized printed\n%s\nstancsv.Summarize gives\n%s", printed, got)
	}

	fixtures := []string{"../../stancsv/testdata/logreg_rstan_1.csv", "../../stancsv/testdata/logreg_rstan_2.csv"}
	if _, err := os.Stat("/work/shared/fixtures/stancsv/logreg_rstan_1.csv"); err == nil {
		fixtures = []string{"/work/shared/fixtures/stancsv/logreg_rstan_1.csv", "/work/shared/fixtures/stancsv/logreg_rstan_2.csv"}
	}
	wd, _ := os.Getwd()
	for i, f := range fixtures {
		if !filepath.IsAbs(f) {
			fixtures[i] = filepath.Join(wd, f)
		}
	}
	r = mustRun(t, dir, append([]string{"summary"}, fixtures...)...)
	// The columns theta.1 … as rstan shows them.
	for _, want := range []string{"NUTS(diag_e)", "2 chains × 50 draws", "lp__", "theta[1] ", "theta[3] ", "rhat"} {
		if !strings.Contains(r.stdout, want) {
			t.Errorf("summary of the rstan fixtures lacks %q:\n%s", want, r.stdout)
		}
	}
	r = mustRun(t, dir, "summary", filepath.Join(wd, "../../stancsv/testdata/bernoulli_cmdstan.csv"))
	for _, want := range []string{"hmc/nuts", "1 chains × 20 draws", "theta", "lp__"} {
		if !strings.Contains(r.stdout, want) {
			t.Errorf("summary of the CmdStan fixture lacks %q:\n%s", want, r.stdout)
		}
	}

	// A file cut mid-row (a killed writer) is read to its last full row.
	b, _ := os.ReadFile(filepath.Join(dir, "mh_1.csv"))
	cut := b[:bytes.LastIndex(b[:len(b)/2], []byte("\n"))+10]
	os.WriteFile(filepath.Join(dir, "cut.csv"), cut, 0o644)
	r = mustRun(t, dir, "summary", "cut.csv", "mh_2.csv")
	if !strings.Contains(r.stdout, "not terminated") || !strings.Contains(r.stdout, "cut to the shortest") {
		t.Errorf("summary of a cut file:\n%s", r.stdout)
	}
}

// TestCheck checks the bounds of the flights model: all hold, with
// predicted batches; with a box prior the energy range too.
func TestCheck(t *testing.T) {
	dir := t.TempDir()
	base := append([]string{"check", "--data", flights}, flightsModel...)
	r := mustRun(t, dir, append(base, "--points", "20")...)
	for _, want := range []string{"N = 3000", "difference bound   holds", "remainder bound    holds", "TunaMH-CV-CN ≈", "energy range       not available"} {
		if !strings.Contains(r.stdout, want) {
			t.Errorf("check lacks %q:\n%s", want, r.stdout)
		}
	}
	r = mustRun(t, dir, append(base, "--points", "20", "--prior", "box:4")...)
	if !strings.Contains(r.stdout, "energy range       holds") || !strings.Contains(r.stdout, "PoissonMH ≈") {
		t.Errorf("check with a box prior:\n%s", r.stdout)
	}
	r = mustRun(t, dir, "check", "--data", flights, "--response", "count", "--terms", "x1", "--family", "poisson", "--points", "10")
	if !strings.Contains(r.stdout, "difference bound   not available") {
		t.Errorf("check of a Poisson model on a flat prior:\n%s", r.stdout)
	}
}

// wantError checks a failed command: the exit code, one line on stderr
// starting "exactmh: " and containing want, no stack trace.
func wantError(t *testing.T, r result, code int, want string) {
	t.Helper()
	if r.code != code {
		t.Errorf("exit code %d, want %d (stderr %q)", r.code, code, r.stderr)
	}
	msg := strings.TrimSuffix(r.stderr, "\n")
	if strings.Contains(msg, "\n") || !strings.HasPrefix(msg, "exactmh: ") {
		t.Errorf("stderr is not one line \"exactmh: ...\": %q", r.stderr)
	}
	if strings.Contains(msg, "goroutine") || strings.Contains(msg, "panic") {
		t.Errorf("stderr has a stack trace: %q", r.stderr)
	}
	if !strings.Contains(msg, want) {
		t.Errorf("stderr %q lacks %q", msg, want)
	}
}

// TestErrors runs every kind of bad input: each a one-line error on
// stderr and a non-zero exit code.
func TestErrors(t *testing.T) {
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "garbage.ckpt"), []byte("not a checkpoint"), 0o644)
	os.WriteFile(filepath.Join(dir, "garbage.ckpt.json"), []byte(`{"Format":"exactmh-checkpoint-meta/1"}`), 0o644)
	base := func(extra ...string) []string {
		a := []string{"sample", "--data", flights, "--response", "delay>15", "--terms", "log(distance),x1",
			"--warmup", "20", "--draws", "20", "--quiet"}
		return append(a, extra...)
	}
	for _, c := range []struct {
		name string
		args []string
		code int
		want string
	}{
		{"no command", nil, exitBadInput, ""},
		{"unknown command", []string{"frobnicate"}, exitBadInput, `unknown command "frobnicate"`},
		{"unknown flag", base("--bogus"), exitBadInput, "flag provided but not defined: -bogus"},
		{"unknown flag of summary", []string{"summary", "--bogus", "x.csv"}, exitBadInput, "-bogus"},
		{"stray argument", base("extra"), exitBadInput, `unexpected argument "extra"`},
		{"no data", []string{"sample", "--response", "y"}, exitBadInput, "--data FILE is required"},
		{"no response", []string{"sample", "--data", flights}, exitBadInput, "--response is required"},
		{"missing data file", base("--data", "nope.parquet"), exitBadInput, "nope.parquet"},
		{"unknown extension", base("--data", "data.xlsx"), exitBadInput, "unknown extension"},
		{"missing column", base("--terms", "log(distance),altitude"), exitBadInput, `no column "altitude"`},
		{"missing response column", base("--response", "late>15"), exitBadInput, `no column "late"`},
		{"bad term", base("--terms", "cat(origin;top=0)"), exitBadInput, "top=K"},
		{"unknown term function", base("--terms", "sqrt(distance)"), exitBadInput, `unknown function "sqrt"`},
		{"unbalanced term", base("--terms", "log(distance"), exitBadInput, "parentheses"},
		{"categorical of a float", base("--terms", "cat(x1)"), exitBadInput, "x1"},
		{"logistic of a count", base("--response", "count"), exitBadInput, "0/1 response"},
		{"unknown family", base("--family", "gamma"), exitBadInput, "--family gamma"},
		{"bad prior", base("--prior", "normal:0"), exitBadInput, "--prior normal:0"},
		{"unknown prior", base("--prior", "cauchy:1"), exitBadInput, "unknown prior"},
		{"unknown kernel", base("--kernel", "sgld"), exitBadInput, "unknown kernel"},
		{"poissonmh needs a bounded prior", base("--kernel", "poissonmh"), exitBadInput, "needs a bounded prior"},
		{"poisson-mala needs a bounded prior", base("--kernel", "poisson-mala"), exitBadInput, "needs a bounded prior"},
		{"tunamh on a Poisson GLM needs a bounded prior", base("--family", "poisson", "--response", "count", "--kernel", "tunamh"), exitBadInput, "difference bound"},
		{"-cn without a proposal", base("--kernel", "nuts-cn"), exitBadInput, "no -cn form"},
		{"hyperparameter of another kernel", base("--kernel", "mh", "--chi", "2"), exitBadInput, "--chi applies to"},
		{"hyperparameter with auto", base("--scale", "0.5"), exitBadInput, "needs an explicit --kernel"},
		{"bad scale", base("--kernel", "mh", "--scale", "-1"), exitBadInput, "--scale"},
		{"chain-id with auto", base("--chain-id", "1"), exitBadInput, "--chain-id needs --kernel or --choice"},
		{"chain-id out of range", base("--kernel", "mh", "--chains", "2", "--chain-id", "2"), exitBadInput, "--chain-id 2"},
		{"bad draws", base("--kernel", "mh", "--draws", "0"), exitBadInput, "--draws 0"},
		{"resume without checkpoint", base("--kernel", "mh", "--resume"), exitBadInput, "--resume needs --checkpoint"},
		{"resume of a missing checkpoint", base("--kernel", "mh", "--resume", "--checkpoint", "none.ckpt"), exitBadInput, "no checkpoint none.ckpt"},
		{"resume of garbage", base("--kernel", "mh", "--resume", "--checkpoint", "garbage.ckpt"), exitBadInput, "different model or data"},
		{"missing choice file", base("--choice", "none.json"), exitBadInput, "--choice"},
		{"choice and kernel", base("--choice", "none.json", "--kernel", "mh"), exitBadInput, "give one"},
		{"choose-only without a file", base("--choose-only"), exitBadInput, "--choose-only needs --choice"},
		{"out directory missing", base("--kernel", "mh", "--out", "no/such/dir/x"), exitBadInput, "does not exist"},
		{"summary of a missing file", []string{"summary", "none.csv"}, exitBadInput, "none.csv"},
		{"summary of a data file", []string{"summary", flights}, exitBadInput, "flights.csv"},
		{"summary of nothing", []string{"summary"}, exitBadInput, "no files"},
		{"check of a missing column", []string{"check", "--data", flights, "--response", "delay>15", "--terms", "zz"}, exitBadInput, `no column "zz"`},
	} {
		t.Run(c.name, func(t *testing.T) {
			r := cli(t, dir, c.args...)
			if c.want == "" { // usage on stderr
				if r.code != c.code || r.stderr == "" {
					t.Errorf("exit %d, stderr %q", r.code, r.stderr)
				}
				return
			}
			wantError(t, r, c.code, c.want)
		})
	}
}

// TestExitCodes checks the mapping of errors onto exit codes in process:
// a bound violation, wrapped as Sample wraps it, is code 3 (the built-in
// models' bounds hold, so no command line makes one).
func TestExitCodes(t *testing.T) {
	bv := &exactmh.BoundViolation{Datum: 3, Value: 2, Bound: 1, Ratio: 2, Theta: []float64{0}, ThetaNew: []float64{1}}
	for _, c := range []struct {
		err  error
		code int
	}{
		{failure(fmt.Errorf("exactmh: TunaMH: chain 0: %w", bv)), exitBound},
		{inputErr(fmt.Errorf("exactmh: chain 0: %w", bv)), exitBound},
		{inputErr(errors.New("no column")), exitBadInput},
		{failure(errors.New("disk full")), exitFailure},
		{&cliError{exitInterrupted, errors.New("interrupted")}, exitInterrupted},
	} {
		if got := exitCode(c.err); got != c.code {
			t.Errorf("%v: exit code %d, want %d", c.err, got, c.code)
		}
	}
	var out, errb bytes.Buffer
	if code := run([]string{"sample", "-h"}, &out, &errb); code != 0 || !strings.Contains(out.String(), "TERMS") || errb.Len() != 0 {
		t.Errorf("sample -h: exit %d, stdout %q, stderr %q", code, out.String(), errb.String())
	}
}

// TestChoiceNameRebuildsTheKernel runs the automatic default in process and
// rebuilds its choice from the name alone (parseKernel, kernelFlags.build,
// exactmh.WithLaplace), as --choice and a resumed automatic run do: the
// draws are the same, bit for bit.
func TestChoiceNameRebuildsTheKernel(t *testing.T) {
	mf := modelFlags{data: flights, response: flightsModel[1], terms: flightsModel[3], family: "logistic", prior: "flat", beta: 1, sigma: 1, nu: 4}
	m, err := mf.build()
	if err != nil {
		t.Fatal(err)
	}
	set := func() *exactmh.Settings {
		return &exactmh.Settings{Chains: 2, Warmup: 100, Draws: 100, Seed: 11}
	}
	ctx := t.Context()
	auto, err := exactmh.Sample(ctx, m.post, nil, set())
	if err != nil {
		t.Fatal(err)
	}
	ks, err := parseKernel(auto.Choice.Name)
	if err != nil {
		t.Fatal(err)
	}
	// As a choice file carries them: the name, the start scale and the
	// Crank–Nicolson cap of a capped winner (tailPilots).
	kf := kernelFlags{set: map[string]bool{}, scale: chosenScale(auto.Choice)}
	if cn := cnProposal(auto.Choice.Kernel); cn != nil {
		kf.maxScale = cn.MaxScale
	}
	k, post, la, err := kf.build(ctx, ks, m.post)
	if err != nil {
		t.Fatal(err)
	}
	again, err := exactmh.Sample(ctx, post, k, exactmh.LaplaceInits(set(), la, post))
	if err != nil {
		t.Fatal(err)
	}
	if again.Kernel != auto.Kernel {
		t.Fatalf("%s rebuilt as %s", auto.Kernel, again.Kernel)
	}
	for c := range auto.Chains {
		if !slices.Equal(auto.Chains[c].Draws, again.Chains[c].Draws) {
			t.Fatalf("choice %s: chain %d's draws differ when rebuilt from the name", auto.Choice.Name, c)
		}
	}
	t.Logf("choice %s rebuilt", auto.Choice.Name)
}

// TestResumeExtendsAuto is TestResumeExtends for the automatic default:
// the resumed run rebuilds the chosen kernel from the checkpoint — its
// name, and the cap on its Crank–Nicolson step scale that the name does
// not carry — and the files equal those of one run of that length. The
// reference run makes its own choice: equal to the first run's, since the
// choice is counted, never timed (TestAutoSameFiles).
func TestResumeExtendsAuto(t *testing.T) {
	dir := t.TempDir()
	mustRun(t, dir, sampleArgs("--chains", "2", "--draws", "200", "--out", "ext", "--checkpoint", "ext.ckpt")...)
	mustRun(t, dir, sampleArgs("--chains", "2", "--draws", "450", "--out", "ext", "--checkpoint", "ext.ckpt", "--resume")...)
	mustRun(t, dir, sampleArgs("--chains", "2", "--draws", "450", "--out", "ref")...)
	sameDraws(t, filepath.Join(dir, "ref"), filepath.Join(dir, "ext"), 2)
}

// TestResumeExtendsAutoMultilevel is TestResumeExtendsAuto for a choice a
// registered kernel makes by its own path: GroupGibbs in its small-N mode
// on grouseticks (N = 403, three nested factors), whose settings — exact
// reading, repeats, shears, the settled warmup — its name does not carry.
// The resumed run makes the counted choice again, and the files equal
// those of one run of that length.
func TestResumeExtendsAutoMultilevel(t *testing.T) {
	data, err := filepath.Abs("../../examples/multilevel-real/data/grouseticks.csv")
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	args := func(extra ...string) []string {
		a := []string{"sample", "--data", data, "--family", "poisson", "--response", "TICKS",
			"--terms", "cat(YEAR;ref=95),HEIGHT,(1|INDEX),(1|BROOD),(1|LOCATION)",
			"--kernel", "auto", "--chains", "2", "--warmup", "200", "--seed", "3", "--sig-figs", "17", "--quiet"}
		return append(a, extra...)
	}
	mustRun(t, dir, args("--draws", "40", "--out", "ext", "--checkpoint", "ext.ckpt")...)
	mustRun(t, dir, args("--draws", "90", "--out", "ext", "--checkpoint", "ext.ckpt", "--resume")...)
	mustRun(t, dir, args("--draws", "90", "--out", "ref")...)
	sameDraws(t, filepath.Join(dir, "ref"), filepath.Join(dir, "ext"), 2)
}

// TestAutoSameFiles runs `exactmh sample … --seed 1 --kernel auto` twice,
// the second time with two goroutines of this process spinning beside the
// command: the files are the same byte for byte, but for the three lines
// of the timing trailer ("Elapsed Time: … seconds", wall times as
// CmdStan's). The automatic default's choice is priced by counted costs,
// never by a clock (exactmh.Choose), so this holds on any load; the test
// does not depend on how much the loops slow the command. .ci/run checks
// the same with two `yes` processes.
func TestAutoSameFiles(t *testing.T) {
	dir := t.TempDir()
	args := func(out string) []string {
		return sampleArgs("--kernel", "auto", "--seed", "1", "--chains", "2", "--warmup", "100", "--draws", "100", "--out", out)
	}
	mustRun(t, dir, args("alone")...)
	stop := make(chan struct{})
	for range 2 {
		go func() {
			x := 0
			for {
				select {
				case <-stop:
					return
				default:
					x++
				}
			}
		}()
	}
	mustRun(t, dir, args("loaded")...)
	close(stop)
	for k := 1; k <= 2; k++ {
		a, b := untimed(t, filepath.Join(dir, fmt.Sprintf("alone_%d.csv", k))), untimed(t, filepath.Join(dir, fmt.Sprintf("loaded_%d.csv", k)))
		if a != b {
			t.Errorf("chain %d: the files differ under load:\n%s\n---\n%s", k, a, b)
		}
		if !strings.Contains(a, "auto = ") {
			t.Errorf("chain %d: no automatic choice in the file", k)
		}
	}
}

// untimed returns the file at path without the lines of its timing
// trailer, the only wall times a Stan CSV file holds.
func untimed(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var keep []string
	for _, l := range strings.Split(string(b), "\n") {
		if !strings.Contains(l, " seconds (") {
			keep = append(keep, l)
		}
	}
	return strings.Join(keep, "\n")
}

// TestResumeExtends extends a finished run with --resume and a larger
// --draws: the files equal those of one run of that length.
func TestResumeExtends(t *testing.T) {
	dir := t.TempDir()
	mustRun(t, dir, sampleArgs("--kernel", "tunamh-cv-cn", "--chains", "2", "--draws", "200", "--out", "ext", "--checkpoint", "ext.ckpt")...)
	mustRun(t, dir, sampleArgs("--kernel", "tunamh-cv-cn", "--chains", "2", "--draws", "450", "--out", "ext", "--checkpoint", "ext.ckpt", "--resume")...)
	mustRun(t, dir, sampleArgs("--kernel", "tunamh-cv-cn", "--chains", "2", "--draws", "450", "--out", "ref")...)
	sameDraws(t, filepath.Join(dir, "ref"), filepath.Join(dir, "ext"), 2)
	if n, _ := readCSV(t, filepath.Join(dir, "ext_1.csv")).ConfigValue("num_samples"); n != "450" {
		t.Errorf("num_samples = %s after the extension", n)
	}
}

// TestFileFormats checks that the command reads every format package data
// reads, the Arrow IPC file and stream formats (registered by
// data/arrowipc, which the command imports) and Parquet with the codecs
// data/parquetcodecs adds, by checking the same model on each.
func TestFileFormats(t *testing.T) {
	dir := t.TempDir()
	wd, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	var want string
	for _, f := range []string{"small.parquet", "small.arrow", "small.arrows", "small.csv"} {
		path := filepath.Join(wd, "..", "..", "data", "testdata", f)
		r := mustRun(t, dir, "check", "--data", path, "--response", "delay>15", "--terms", "log(distance)", "--points", "5")
		if want == "" {
			want = r.stdout
		} else if r.stdout != want {
			t.Errorf("check on %s:\n%s\nwant as on small.parquet:\n%s", f, r.stdout, want)
		}
	}
}
