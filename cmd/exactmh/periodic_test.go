// Copyright ©2026 The exactmh Authors. All rights reserved.
// Use of this source code is governed by a BSD-style
// license that can be found in the LICENSE file.

package main

import (
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"testing"
	"time"
)

// TestCheckpointEveryKill9 runs with --checkpoint-every, kills the process
// with SIGKILL at a random moment after its first checkpoint (no signal
// it could catch, as a lost node), and resumes the run with --resume: the
// files equal those of an uninterrupted run, draw for draw. It repeats
// this at two random moments.
func TestCheckpointEveryKill9(t *testing.T) {
	if testing.Short() {
		t.Skip("two killed runs and their resumptions")
	}
	dir := t.TempDir()
	args := func(extra ...string) []string {
		a := append([]string{"sample", "--data", flights}, flightsModel...)
		a = append(a, "--kernel", "hmc", "--steps", "20", "--chains", "2", "--warmup", "100", "--draws", "300",
			"--seed", "9", "--sig-figs", "17", "--quiet")
		return append(a, extra...)
	}
	mustRun(t, dir, args("--out", "ref")...)
	rng := rand.New(rand.NewPCG(uint64(time.Now().UnixNano()), 1)) // the moment is random on purpose
	for k := range 2 {
		out := filepath.Join(dir, "kill")
		ckpt := out + ".ckpt"
		for _, f := range []string{ckpt, ckpt + ".json"} {
			os.Remove(f)
		}
		cmd := exec.Command(bin, args("--out", "kill", "--checkpoint", "kill.ckpt", "--checkpoint-every", "20ms")...)
		cmd.Dir = dir
		errb, done, waitErr := startBackground(t, cmd)
		first := false
		for !first {
			select {
			case <-done:
				t.Fatalf("run %d ended before its first checkpoint: %v: %s", k, *waitErr, errb.String())
			case <-time.After(5 * time.Millisecond):
			}
			_, err := os.Stat(ckpt)
			first = err == nil
		}
		wait := time.Duration(rng.IntN(300)) * time.Millisecond
		time.Sleep(wait)
		cmd.Process.Signal(syscall.SIGKILL)
		<-done
		t.Logf("run %d: SIGKILL %v after the first checkpoint: %v", k, wait, cmd.ProcessState)
		mustRun(t, dir, args("--out", "kill", "--checkpoint", "kill.ckpt", "--resume")...)
		sameDraws(t, filepath.Join(dir, "ref"), out, 2)
	}
}
