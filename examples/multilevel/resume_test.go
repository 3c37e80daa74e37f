// Copyright ©2026 The exactmh Authors. All rights reserved.
// Use of this source code is governed by a BSD-style
// license that can be found in the LICENSE file.

package main

import (
	"bytes"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestMain runs the command itself when MULTILEVEL_ARGS is set (its
// arguments, separated by \x1f): TestResumeNewProcess runs every segment
// of a run in a process of its own.
func TestMain(m *testing.M) {
	if args := os.Getenv("MULTILEVEL_ARGS"); args != "" {
		os.Args = append([]string{"multilevel"}, strings.Split(args, "\x1f")...)
		resumeMutant = os.Getenv("MULTILEVEL_MUTANT")
		main()
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// command runs the command in a new process with the crossed run's
// arguments (the automatic default on a small crossed data set in store,
// its checkpoint and spool in dir) and extra ones; it returns stdout,
// stderr and the exit status.
func command(t *testing.T, store, dir, mutant string, extra ...string) (stdout, stderr string, status int) {
	t.Helper()
	args := []string{"-store", store, "-float32", "-crossed", "30,8", "-n", "3000", "-chains", "2", "-warmup", "40",
		"-draws", "30", "-seed", "3", "-spool", dir, "-checkpoint", filepath.Join(dir, "run.ckpt")}
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), "MULTILEVEL_ARGS="+strings.Join(append(args, extra...), "\x1f"), "MULTILEVEL_MUTANT="+mutant)
	var o, e bytes.Buffer
	cmd.Stdout, cmd.Stderr = &o, &e
	err := cmd.Run()
	var ee *exec.ExitError
	switch {
	case errors.As(err, &ee):
		status = ee.ExitCode()
	case err != nil:
		t.Fatal(err)
	}
	return o.String(), e.String(), status
}

// results returns what a finished run in dir printed and spooled: its
// stdout but for the lines of times and memory, the automatic default's
// line as a fresh run prints it, and the chains' spool files.
func results(t *testing.T, dir, stdout string) (string, [][]byte) {
	t.Helper()
	var keep []string
	for _, l := range strings.Split(stdout, "\n") {
		if strings.HasPrefix(l, "wall ") || strings.HasPrefix(l, "memory:") {
			continue
		}
		keep = append(keep, strings.Replace(l, "automatic default (chosen in the run -resume continues):", "automatic default:", 1))
	}
	var files [][]byte
	for _, name := range spoolNames(dir, filepath.Join(dir, "run.ckpt"), 2) {
		b, err := os.ReadFile(name)
		if err != nil {
			t.Fatal(err)
		}
		files = append(files, b)
	}
	return strings.Join(keep, "\n"), files
}

// snapshot copies dir's files to memory; restore writes them back and
// removes any other.
func snapshot(t *testing.T, dir string) map[string][]byte {
	t.Helper()
	out := map[string][]byte{}
	ents, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range ents {
		b, err := os.ReadFile(filepath.Join(dir, e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		out[e.Name()] = b
	}
	return out
}

func restore(t *testing.T, dir string, snap map[string][]byte) {
	t.Helper()
	ents, _ := os.ReadDir(dir)
	for _, e := range ents {
		os.Remove(filepath.Join(dir, e.Name()))
	}
	for name, b := range snap {
		if err := os.WriteFile(filepath.Join(dir, name), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// TestResumeNewProcess runs the crossed model's automatic default (N =
// 3000, 30 × 8 levels, 2 chains × (40 + 30)) with -checkpoint once to the
// end, and again cut by kills (-kill-after: the process exits at once,
// as under SIGKILL) and continued with -resume, each segment in a new
// process: killed before its first checkpoint (the choice saved alone),
// and killed after checkpoints taken in warmup and then in sampling (the
// second kill after 15 more transitions, whose draws the spool files hold
// beyond their marks). Each resumed run must print the same summary and
// leave the same spool files, byte for byte, as the uninterrupted run,
// and no resumed process may run the choice again. A spool file changed
// after its checkpoint must be refused. Mutants (resumeMutant): a resume
// that chooses again, a spool that forgets its counts, a resume that does
// not check the spool files — each must be caught.
func TestResumeNewProcess(t *testing.T) {
	if testing.Short() {
		t.Skip("six processes running the automatic default's set-up: not with -short")
	}
	store := t.TempDir()
	ref := t.TempDir()
	out, errOut, st := command(t, store, ref, "")
	if st != 0 {
		t.Fatalf("uninterrupted run: status %d\n%s", st, errOut)
	}
	if !strings.Contains(errOut, "choice: ") {
		t.Fatalf("the uninterrupted run printed no choice progress:\n%s", errOut)
	}
	wantOut, wantFiles := results(t, ref, out)
	same := func(dir, out string) bool {
		gotOut, gotFiles := results(t, dir, out)
		for c := range gotFiles {
			if !bytes.Equal(gotFiles[c], wantFiles[c]) {
				return false
			}
		}
		return gotOut == wantOut
	}
	check := func(name, dir, out string) {
		t.Helper()
		gotOut, gotFiles := results(t, dir, out)
		if gotOut != wantOut {
			t.Errorf("%s: the printed summary differs:\n%s\nwant\n%s", name, gotOut, wantOut)
		}
		for c := range gotFiles {
			if !bytes.Equal(gotFiles[c], wantFiles[c]) {
				t.Errorf("%s: chain %d's spool file differs (%d bytes, want %d)", name, c+1, len(gotFiles[c]), len(wantFiles[c]))
			}
		}
	}

	// Killed before the first checkpoint: the run file holds the choice.
	early := t.TempDir()
	if _, errOut, st := command(t, store, early, "", "-kill-after", "10"); st != 3 {
		t.Fatalf("killed run: status %d, want 3\n%s", st, errOut)
	}
	snap := snapshot(t, early)
	for _, mutant := range []string{"", "repeat choice"} {
		restore(t, early, snap)
		out, errOut, st := command(t, store, early, mutant, "-resume")
		chose := strings.Contains(errOut, "choice: ")
		switch {
		case mutant == "" && (st != 0 || chose):
			t.Fatalf("resumed before any checkpoint: status %d, chose again %v\n%s", st, chose, errOut)
		case mutant == "":
			check("killed before its first checkpoint", early, out)
		case st == 0 && !chose:
			t.Errorf("mutant %q not caught", mutant)
		default:
			t.Logf("mutant %q caught: status %d, chose again %v", mutant, st, chose)
		}
	}

	// Checkpoints every 25 transitions, killed at 50: resumed from the
	// one taken in warmup (about 12 of each chain's 40 warmup transitions).
	cut := t.TempDir()
	if _, errOut, st := command(t, store, cut, "", "-checkpoint-every", "25", "-kill-after", "50"); st != 3 {
		t.Fatalf("killed run: status %d, want 3\n%s", st, errOut)
	}
	// Resumed with a checkpoint 60 transitions on (in sampling: each chain
	// near transition 42) and killed 15 transitions after it.
	if _, errOut, st := command(t, store, cut, "", "-resume", "-checkpoint-every", "60", "-kill-after", "75"); st != 3 || strings.Contains(errOut, "choice: ") {
		t.Fatalf("resumed and killed run: status %d, want 3, or it chose again\n%s", st, errOut)
	}
	head, err := readRunFile(filepath.Join(cut, "run.ckpt"))
	if err != nil {
		t.Fatal(err)
	}
	if head.State == nil || head.Spool[0].Draws+head.Spool[1].Draws == 0 {
		t.Fatalf("the last checkpoint is not in sampling: %+v", head.Spool)
	}
	// The chain whose spool the checkpoint marks with the more draws: how
	// far each chain had run when the other took the checkpoint depends on
	// the scheduler, and a change past a spool's mark is truncated away on
	// resume, not refused.
	k := 0
	if head.Spool[1].Draws > head.Spool[0].Draws {
		k = 1
	}
	snap = snapshot(t, cut)
	for _, mutant := range []string{"", "spool count", "no spool check"} {
		restore(t, cut, snap)
		if mutant != "" {
			// The corruption the spool check must catch: a draw of chain
			// k+1 changed after the checkpoint that marks it.
			name := spoolNames(cut, filepath.Join(cut, "run.ckpt"), 2)[k]
			b := snap[filepath.Base(name)]
			b = bytes.Clone(b)
			b[0] ^= 1
			os.WriteFile(name, b, 0o644)
			out, errOut, st := command(t, store, cut, mutant, "-resume")
			if mutant == "spool count" {
				// Its spool's count mutant is judged on intact files.
				restore(t, cut, snap)
				out, errOut, st = command(t, store, cut, mutant, "-resume")
			}
			if st == 0 && same(cut, out) {
				t.Errorf("mutant %q not caught: the same summary and spool files as the uninterrupted run", mutant)
			} else if st == 0 {
				t.Logf("mutant %q caught: the summary or the spool files differ from the uninterrupted run's", mutant)
			} else {
				t.Logf("mutant %q caught: status %d: %s", mutant, st, lastLine(errOut))
			}
			continue
		}
		// The real resume refuses the corrupted file, then continues the
		// intact one.
		name := spoolNames(cut, filepath.Join(cut, "run.ckpt"), 2)[k]
		b := bytes.Clone(snap[filepath.Base(name)])
		b[0] ^= 1
		os.WriteFile(name, b, 0o644)
		if _, errOut, st := command(t, store, cut, "", "-resume"); st == 0 || !strings.Contains(errOut, "CRC") {
			t.Errorf("a spool file changed after its checkpoint: status %d, want a refusal naming the CRC\n%s", st, lastLine(errOut))
		}
		restore(t, cut, snap)
		out, errOut, st := command(t, store, cut, "", "-resume")
		if st != 0 || strings.Contains(errOut, "choice: ") {
			t.Fatalf("resumed run: status %d, or it chose again\n%s", st, errOut)
		}
		check("killed after checkpoints in warmup and in sampling", cut, out)
	}
}

// lastLine returns the last non-empty line of s.
func lastLine(s string) string {
	l := strings.Split(strings.TrimSpace(s), "\n")
	return l[len(l)-1]
}
