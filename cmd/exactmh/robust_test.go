// Copyright ©2026 The exactmh Authors. All rights reserved.
// Use of this source code is governed by a BSD-style
// license that can be found in the LICENSE file.

package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"github.com/exactmh/exactmh"
)

// Shared machines and hostile files (issue 31): each test reproduces a
// defect of sample and checks its fix.

// quickArgs is a short explicit-kernel run on the flights file.
func quickArgs(extra ...string) []string {
	a := append([]string{"sample", "--data", flights}, flightsModel...)
	a = append(a, "--kernel", "mh", "--chains", "2", "--warmup", "20", "--draws", "30", "--seed", "3", "--quiet")
	return append(a, extra...)
}

// TestTwoWritersOneOutput is item 6: two runs with the same --out both
// exited 0 with interleaved files. The second is refused while the first
// holds its lock (held here by the test, as another process would).
func TestTwoWritersOneOutput(t *testing.T) {
	dir := t.TempDir()
	for _, c := range []struct{ lock, flag, val string }{
		{"o_2.csv.lock", "--out", "o"},
		{"c.ckpt.lock", "--checkpoint", "c.ckpt"},
	} {
		f, err := os.OpenFile(filepath.Join(dir, c.lock), os.O_RDWR|os.O_CREATE, 0o666)
		if err != nil {
			t.Fatal(err)
		}
		if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
			t.Skipf("flock: %v", err)
		}
		r := cli(t, dir, quickArgs("--out", "o", c.flag, c.val)...)
		wantError(t, r, exitBadInput, "is being written by another exactmh process")
		f.Close()
	}
	if _, err := os.Stat(filepath.Join(dir, "o_1.csv")); err == nil {
		t.Error("the refused run wrote o_1.csv")
	}
	// Released, the run goes ahead; --chain-id runs of one prefix lock
	// only their own file.
	mustRun(t, dir, quickArgs("--out", "o")...)
	f, _ := os.OpenFile(filepath.Join(dir, "o_1.csv.lock"), os.O_RDWR, 0)
	defer f.Close()
	syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB)
	mustRun(t, dir, quickArgs("--out", "o", "--chain-id", "1")...)
}

// TestCheckpointDirectoryFirst is item 10: a --checkpoint in a missing
// directory was found only after the whole run.
func TestCheckpointDirectoryFirst(t *testing.T) {
	dir := t.TempDir()
	r := cli(t, dir, quickArgs("--out", "o", "--checkpoint", "missing/c.ckpt")...)
	wantError(t, r, exitBadInput, "--checkpoint missing/c.ckpt: directory missing does not exist")
	if _, err := os.Stat(filepath.Join(dir, "o_1.csv")); err == nil {
		t.Error("the run sampled before refusing its checkpoint")
	}
}

// TestStaleCheckpointTemporaries is item 14: a kill while writing the
// checkpoint left checkpoint-sized temporaries that were never removed.
func TestStaleCheckpointTemporaries(t *testing.T) {
	dir := t.TempDir()
	stale := []string{"c.ckpt.tmp123", "c.ckpt.json.tmp456"}
	for _, s := range stale {
		os.WriteFile(filepath.Join(dir, s), []byte("half a checkpoint"), 0o644)
	}
	os.WriteFile(filepath.Join(dir, "other.tmp1"), []byte("not ours"), 0o644)
	mustRun(t, dir, quickArgs("--out", "o", "--checkpoint", "c.ckpt")...)
	for _, s := range stale {
		if _, err := os.Stat(filepath.Join(dir, s)); err == nil {
			t.Errorf("%s is still there", s)
		}
	}
	if _, err := os.Stat(filepath.Join(dir, "other.tmp1")); err != nil {
		t.Errorf("a file not the checkpoint's was removed: %v", err)
	}
	if _, err := os.Stat(filepath.Join(dir, "c.ckpt")); err != nil {
		t.Error(err)
	}
}

// TestOutputSymlinkRefused is item 16: the Stan CSV outputs followed a
// symbolic link planted at PREFIX_k.csv and overwrote its target.
func TestOutputSymlinkRefused(t *testing.T) {
	dir := t.TempDir()
	target := filepath.Join(dir, "precious.txt")
	os.WriteFile(target, []byte("precious\n"), 0o644)
	if err := os.Symlink(target, filepath.Join(dir, "o_1.csv")); err != nil {
		t.Skipf("symlink: %v", err)
	}
	r := cli(t, dir, quickArgs("--out", "o")...)
	if r.code == 0 || !strings.Contains(r.stderr, "o_1.csv is a symbolic link") {
		t.Errorf("exit %d, stderr %q", r.code, r.stderr)
	}
	if b, _ := os.ReadFile(target); string(b) != "precious\n" {
		t.Errorf("the link's target was overwritten: %q", b)
	}
}

// TestDiscardDraws is item 15: the draws-memory error advised
// Settings.DiscardDraws, which the command could not set.
func TestDiscardDraws(t *testing.T) {
	dir := t.TempDir()
	a := append([]string{"sample", "--data", flights}, flightsModel...)
	a = append(a, "--kernel", "mh", "--chains", "2", "--warmup", "20", "--draws", "30", "--seed", "3", "--progress", "0", "--out", "d", "--discard-draws")
	r := mustRun(t, dir, a...)
	if !strings.Contains(r.stdout, "log_distance") || !strings.Contains(r.stdout, "rhat") || !strings.Contains(r.stdout, "2 chains × 30 draws") ||
		!strings.Contains(r.stdout, "coefficients on the original scale") {
		t.Errorf("no summary from the files:\n%s", r.stdout)
	}
	if f := readCSV(t, filepath.Join(dir, "d_2.csv")); len(f.Draws) != 30 {
		t.Errorf("d_2.csv has %d draws, want 30", len(f.Draws))
	}
	wantError(t, cli(t, dir, quickArgs("--discard-draws", "--checkpoint", "c.ckpt")...), exitBadInput, "--discard-draws and --checkpoint")
}

// TestMaxRows is item 3's flag: the command could not bound the rows a
// file is read to.
func TestMaxRows(t *testing.T) {
	dir := t.TempDir()
	mustRun(t, dir, quickArgs("--out", "m", "--max-rows", "500", "--checkpoint", "m.ckpt")...)
	b, err := os.ReadFile(filepath.Join(dir, "m.ckpt.json"))
	if err != nil {
		t.Fatal(err)
	}
	var meta checkpointMeta
	if err := json.Unmarshal(b, &meta); err != nil || meta.Fingerprint.N != 500 {
		t.Errorf("N = %d with --max-rows 500 (%v)", meta.Fingerprint.N, err)
	}
	wantError(t, cli(t, dir, quickArgs("--max-rows", "-1")...), exitBadInput, "--max-rows -1: want ≥ 0")
}

// TestResumeChangedData is item 2: --resume fingerprinted at most 1,024
// sampled rows, so a change elsewhere (a response value, the row order)
// was accepted and the chain continued on another posterior.
func TestResumeChangedData(t *testing.T) {
	dir := t.TempDir()
	b, err := os.ReadFile(flights)
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSuffix(string(b), "\n"), "\n")
	mustRun(t, dir, quickArgs("--out", "o", "--checkpoint", "c.ckpt")...)
	// Design row 1001 (0-based; not among the 1,024 rows the sampled hash
	// read, every second from row 0) gets its delay moved across 15; then
	// rows 1001 and 1003 swap.
	flip := slicesClone(lines)
	cells := strings.Split(flip[1002], ",")
	if v, _ := strconv.Atoi(cells[1]); v > 15 {
		cells[1] = "-5"
	} else {
		cells[1] = "99"
	}
	flip[1002] = strings.Join(cells, ",")
	swap := slicesClone(lines)
	swap[1002], swap[1004] = swap[1004], swap[1002]
	for name, l := range map[string][]string{"flip.csv": flip, "swap.csv": swap} {
		path := filepath.Join(dir, name)
		os.WriteFile(path, []byte(strings.Join(l, "\n")+"\n"), 0o644)
		a := append([]string{"sample", "--data", path}, flightsModel...)
		a = append(a, "--kernel", "mh", "--chains", "2", "--warmup", "20", "--draws", "60", "--seed", "3", "--quiet", "--out", "o", "--checkpoint", "c.ckpt", "--resume")
		wantError(t, cli(t, dir, a...), exitBadInput, "different values or row order")
	}
}

func slicesClone(s []string) []string { return append([]string(nil), s...) }

// failAfter is a Recorder that fails at the n-th kept draw, as a full
// disk would.
type failAfter struct{ n, seen int }

func (f *failAfter) Init(exactmh.RunInfo) error { return nil }
func (f *failAfter) Record(e *exactmh.Event) error {
	if e.Draw < 0 {
		return nil
	}
	if f.seen++; f.seen >= f.n {
		return errors.New("no space left on device")
	}
	return nil
}

// TestRecorderFailureCheckpointed is item 10's second half: a run that
// failed only in its recorder (a full disk) was not checkpointed, though
// its chains are intact.
func TestRecorderFailureCheckpointed(t *testing.T) {
	dir := t.TempDir()
	mf := modelFlags{data: flights, response: "delay>15", terms: "log(distance)", family: "logistic", prior: "flat", beta: 1}
	m, err := mf.build()
	if err != nil {
		t.Fatal(err)
	}
	var kf kernelFlags
	fs := flag.NewFlagSet("k", flag.ContinueOnError)
	kf.register(fs)
	fs.Parse(nil)
	ks, err := parseKernel("mh")
	if err != nil {
		t.Fatal(err)
	}
	kern, post, _, err := kf.build(context.Background(), ks, m.post)
	if err != nil {
		t.Fatal(err)
	}
	res, err := exactmh.Sample(context.Background(), post, kern, &exactmh.Settings{Chains: 1, Warmup: 10, Draws: 50, Seed: 1, Recorder: &failAfter{n: 20}})
	if res == nil || res.Status != exactmh.Failed {
		t.Fatalf("the failing recorder did not fail the run: %v", err)
	}
	sf := &sampleFlags{checkpoint: filepath.Join(dir, "c.ckpt"), out: filepath.Join(dir, "o"), chains: 1, warmup: 10, thin: 1, seed: 1}
	err = finish(res, err, sf, m, "mh", "", 0, -1, io.Discard)
	if err == nil || !strings.Contains(err.Error(), "the chains are intact and the checkpoint is written") || exitCode(err) != exitFailure {
		t.Errorf("finish: %v (exit %d)", err, exitCode(err))
	}
	if _, err := os.Stat(sf.checkpoint); err != nil {
		t.Errorf("no checkpoint: %v", err)
	}
}

// TestSummaryRefuses is item 11: a plain data CSV was summarised with exit
// 0, and duplicate or empty column names all showed the first column's
// statistics.
func TestSummaryRefuses(t *testing.T) {
	dir := t.TempDir()
	write := func(name, body string) string {
		p := filepath.Join(dir, name)
		os.WriteFile(p, []byte(body), 0o644)
		return p
	}
	wantError(t, cli(t, dir, "summary", write("data.csv", "a,b\n1,2\n3,4\n5,7\n")), exitBadInput, "data.csv is not a Stan CSV file")
	wantError(t, cli(t, dir, "summary", write("dup.csv", "lp__,a,a\n1,2,3\n3,4,5\n5,7,1\n")), exitBadInput, `columns 2 and 3 are both named "a"`)
	wantError(t, cli(t, dir, "summary", write("empty.csv", "lp__,a,\n1,2,3\n3,4,5\n5,7,1\n")), exitBadInput, "column 3 has no name")
	r := mustRun(t, dir, "summary", write("ok.csv", "lp__,a,b\n1,2,3\n3,4,5\n5,7,1\n2,2,2\n"))
	if !strings.Contains(r.stdout, "lp__") {
		t.Errorf("summary of a Stan CSV file:\n%s", r.stdout)
	}
}

// TestIdentifiabilityWarnings is item 17: collinear terms, a response
// used as its own feature and perfectly separable data under the flat
// prior ran without a word.
func TestIdentifiabilityWarnings(t *testing.T) {
	dir := t.TempDir()
	var b strings.Builder
	b.WriteString("y,a,b,c,late\n")
	for i := range 200 {
		a := float64(i%17) - 8
		c := float64((i*7)%13) - 6
		y := 0.5*a - 0.2*c + float64(i%5) - 2
		late := 0
		if c > 0 {
			late = 1
		}
		b.WriteString(strconv.FormatFloat(y, 'g', -1, 64) + "," + strconv.FormatFloat(a, 'g', -1, 64) + "," +
			strconv.FormatFloat(2*a+1, 'g', -1, 64) + "," + strconv.FormatFloat(c, 'g', -1, 64) + "," + strconv.Itoa(late) + "\n")
	}
	path := filepath.Join(dir, "w.csv")
	os.WriteFile(path, []byte(b.String()), 0o644)
	run := func(args ...string) string {
		a := append([]string{"sample", "--data", path}, args...)
		a = append(a, "--kernel", "mh", "--chains", "1", "--warmup", "10", "--draws", "10", "--quiet", "--out", "w")
		return mustRun(t, dir, a...).stderr
	}
	if s := run("--family", "gaussian", "--response", "y", "--terms", "a,b,c"); !strings.Contains(s, "collinear") || !strings.Contains(s, `"a"`) || !strings.Contains(s, `"b"`) {
		t.Errorf("collinear a and b: %q", s)
	}
	if s := run("--family", "gaussian", "--response", "y", "--terms", "num(y),a"); !strings.Contains(s, `column "y" equals the response`) {
		t.Errorf("the response as a feature: %q", s)
	}
	if s := run("--response", "late", "--terms", "c"); !strings.Contains(s, `column "c" separates the response`) {
		t.Errorf("separation: %q", s)
	}
	if s := run("--response", "late", "--terms", "c", "--prior", "normal:2"); strings.Contains(s, "separates") {
		t.Errorf("separation under a proper prior: %q", s)
	}
	if s := run("--family", "gaussian", "--response", "y", "--terms", "a,c"); strings.Contains(s, "warning") {
		t.Errorf("an identified model: %q", s)
	}
}
