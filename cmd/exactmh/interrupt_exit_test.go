// Copyright ©2026 The exactmh Authors. All rights reserved.
// Use of this source code is governed by a BSD-style
// license that can be found in the LICENSE file.

package main

import (
	"bytes"
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// waitForHeader waits until the file at path holds the Stan CSV header row
// (false if the process ended first).
func waitForHeader(path string, done <-chan struct{}) bool {
	for {
		select {
		case <-done:
			return false
		case <-time.After(10 * time.Millisecond):
		}
		b, err := os.ReadFile(path)
		if err == nil && bytes.Contains(b, []byte("\nlp__,")) {
			return true
		}
	}
}

// TestInterruptedExitCodes checks the exit of an interrupted run: 4 only
// if the checkpoint exists, 5 — run the same command again, without
// --resume — otherwise, both before sampling (interrupted) and after
// (finish without --checkpoint); and, end to end, that a run interrupted
// as soon as its files have their header (at Init, before the first draw)
// exits 5 without --checkpoint and 4 with it (and its checkpoint),
// leaving files that parse.
func TestInterruptedExitCodes(t *testing.T) {
	dir := t.TempDir()
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	ckpt := filepath.Join(dir, "x.ckpt")
	for _, c := range []struct {
		sf   sampleFlags
		make bool // the checkpoint file exists
		want int
	}{
		{sampleFlags{}, false, exitInterruptedAfresh},
		{sampleFlags{checkpoint: ckpt}, false, exitInterruptedAfresh},
		{sampleFlags{checkpoint: ckpt}, true, exitInterrupted},
	} {
		if c.make {
			if err := os.WriteFile(ckpt, []byte("x"), 0o644); err != nil {
				t.Fatal(err)
			}
		}
		if got := exitCode(interrupted(ctx, &c.sf, context.Canceled)); got != c.want {
			t.Errorf("interrupted before sampling, --checkpoint %q (exists: %v): exit %d, want %d", c.sf.checkpoint, c.make, got, c.want)
		}
	}
	if got := exitCode(interrupted(context.Background(), &sampleFlags{}, errors.New("x"))); got != exitFailure {
		t.Errorf("an error without a signal: exit %d, want %d", got, exitFailure)
	}

	args := func(extra ...string) []string {
		a := append([]string{"sample", "--data", flights}, flightsModel...)
		a = append(a, "--kernel", "hmc", "--steps", "200", "--chains", "1", "--warmup", "1000", "--draws", "1000",
			"--seed", "5", "--sig-figs", "17", "--quiet")
		return append(a, extra...)
	}
	for _, c := range []struct {
		out  string
		ckpt bool
		want int
	}{{"plain", false, exitInterruptedAfresh}, {"ck", true, exitInterrupted}} {
		extra := []string{"--out", c.out}
		if c.ckpt {
			extra = append(extra, "--checkpoint", c.out+".ckpt")
		}
		cmd := exec.Command(bin, args(extra...)...)
		cmd.Dir = dir
		errb, done, waitErr := startBackground(t, cmd)
		if !waitForHeader(filepath.Join(dir, c.out+"_1.csv"), done) {
			t.Fatalf("%s: the run ended before its header was written: %v: %s", c.out, *waitErr, errb.String())
		}
		cmd.Process.Signal(syscall.SIGINT)
		<-done
		if code := cmd.ProcessState.ExitCode(); code != c.want {
			t.Fatalf("%s: exit code %d after SIGINT, want %d: %s", c.out, code, c.want, errb.String())
		}
		f := readCSVPartial(t, filepath.Join(dir, c.out+"_1.csv"))
		if len(f.Columns) == 0 || f.Columns[0] != "lp__" {
			t.Errorf("%s: interrupted file's columns %q", c.out, f.Columns)
		}
		if c.ckpt {
			if _, err := os.Stat(filepath.Join(dir, c.out+".ckpt")); err != nil {
				t.Errorf("%s: exit 4 without a checkpoint: %v", c.out, err)
			}
		}
	}
}

// TestTermRepeatedOption checks that a term's option given twice
// (cat(g;sd=1;sd=2), which took sd = 2 without a word) is an error naming
// the term and the option.
func TestTermRepeatedOption(t *testing.T) {
	for _, s := range []string{"cat(g;sd=1;sd=2)", "cat(g;top=2;top=3)", "cat(g; ref=a; ref=b)"} {
		_, _, err := parseTerms(s)
		if err == nil || !strings.Contains(err.Error(), "given twice") || !strings.Contains(err.Error(), "cat(g") {
			t.Errorf("--terms %s: error %v, want one naming the term and the repeated option", s, err)
		}
	}
}
