// Copyright ©2026 The exactmh Authors. All rights reserved.
// Use of this source code is governed by a BSD-style
// license that can be found in the LICENSE file.

package main

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"syscall"
	"testing"

	"github.com/exactmh/exactmh"
	// The inexact comparators, which the command does not offer (no
	// --kernel name), are in the registry docs/kernels.md is checked
	// against.
	_ "github.com/exactmh/exactmh/inexact"
)

// The scale-out recipes in docs/: run as the schedulers would run them,
// with the schedulers' commands stubbed.

// script runs a shell script (bash or sh) with env added to the
// environment and the exactmh binary first on PATH (before env's PATH, if
// it sets one).
func script(t *testing.T, dir, shell string, args []string, env ...string) result {
	t.Helper()
	cmd := exec.Command(shell, args...)
	cmd.Dir = dir
	path := os.Getenv("PATH")
	for _, kv := range env {
		if p, ok := strings.CutPrefix(kv, "PATH="); ok {
			path = p
		}
	}
	cmd.Env = append(append(os.Environ(), env...), "PATH="+filepath.Dir(bin)+string(os.PathListSeparator)+path)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	code := 0
	if err != nil {
		ee, ok := err.(*exec.ExitError)
		if !ok {
			t.Fatal(err)
		}
		code = ee.ExitCode()
	}
	return result{out.String(), errb.String(), code}
}

// stubs writes fake sbatch and scontrol commands into a directory that
// log their arguments, one call a line, to calls.log there; sbatch
// answers job ids 1234, 1235, …
func stubs(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	log := filepath.Join(dir, "calls.log")
	sbatch := fmt.Sprintf(`#!/bin/sh
echo "sbatch $*" >> %q
n=$(grep -c '^sbatch' %q)
echo $((1233 + n))
`, log, log)
	scontrol := fmt.Sprintf("#!/bin/sh\necho \"scontrol $*\" >> %q\n", log)
	for name, body := range map[string]string{"sbatch": sbatch, "scontrol": scontrol} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(body), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// TestSlurmScript runs docs/slurm.sh: "submit" submits a job array of
// CHAINS tasks and a summary job that depends on it; "chain" with
// SLURM_ARRAY_TASK_ID = k runs chain k (four of them at once here), and the
// files equal an in-process run's, draw for draw; "summary" summarises
// them. A task sent SIGTERM passes it on to exactmh, which writes its
// checkpoint; the task requeues itself, and run again it resumes and ends
// with the uninterrupted chain's file.
func TestSlurmScript(t *testing.T) {
	if _, err := exec.LookPath("bash"); err != nil {
		t.Skip("no bash")
	}
	slurm, err := filepath.Abs("../../docs/slurm.sh")
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	st := stubs(t)
	out := filepath.Join(dir, "run", "chain")
	env := []string{"EXACTMH=" + bin, "DATA=" + flights, "OUT=" + out, "CHAINS=4", "SEED=2026",
		"WARMUP=200", "DRAWS=300", "SLURM_ARRAY_JOB_ID=77"}

	// submit: the array 0-3 running "chain", then "summary" after it.
	r := script(t, dir, "bash", []string{slurm, "submit"}, append(env, "PATH="+st+":"+os.Getenv("PATH"))...)
	if r.code != 0 {
		t.Fatalf("submit: exit %d: %s", r.code, r.stderr)
	}
	calls, _ := os.ReadFile(filepath.Join(st, "calls.log"))
	lines := strings.Split(strings.TrimSpace(string(calls)), "\n")
	if len(lines) != 2 ||
		!regexp.MustCompile(`^sbatch --parsable --array=0-3 \S+/slurm\.sh chain$`).MatchString(lines[0]) ||
		!regexp.MustCompile(`^sbatch --parsable --dependency=afterok:1234 .*\S+/slurm\.sh summary$`).MatchString(lines[1]) {
		t.Fatalf("submit made the calls\n%s", calls)
	}

	// chain: task k runs chain k.
	var wg sync.WaitGroup
	res := make([]result, 4)
	for k := range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			res[k] = script(t, dir, "bash", []string{slurm, "chain"}, append(env, fmt.Sprintf("SLURM_ARRAY_TASK_ID=%d", k))...)
		}()
	}
	wg.Wait()
	for k, r := range res {
		if r.code != 0 {
			t.Fatalf("task %d: exit %d: %s", k, r.code, r.stderr)
		}
	}
	args := append([]string{"sample", "--data", flights}, flightsModel...)
	args = append(args, "--kernel", "tunamh-cv-cn", "--chains", "4", "--seed", "2026", "--warmup", "200", "--draws", "300", "--quiet")
	mustRun(t, dir, append(args, "--out", "ref")...)
	sameDraws(t, filepath.Join(dir, "ref"), out, 4)

	// summary.
	r = script(t, dir, "bash", []string{slurm, "summary"}, env...)
	if r.code != 0 || !strings.Contains(r.stdout, "4 chains × 300 draws") || !strings.Contains(r.stdout, "log_distance") {
		t.Fatalf("summary: exit %d:\n%s%s", r.code, r.stdout, r.stderr)
	}
	if b, err := os.ReadFile(out + "-summary.txt"); err != nil || string(b) != r.stdout {
		t.Errorf("summary file: %v", err)
	}

	// Pre-emption: SIGTERM to the task's shell.
	intOut := filepath.Join(dir, "int", "chain")
	os.MkdirAll(filepath.Dir(intOut), 0o755)
	ienv := []string{"EXACTMH=" + bin, "DATA=" + flights, "OUT=" + intOut, "CHAINS=4", "SEED=2026",
		"KERNEL=mh", "WARMUP=100", "DRAWS=6000", "SLURM_ARRAY_JOB_ID=77", "SLURM_ARRAY_TASK_ID=1",
		"PATH=" + st + ":" + os.Getenv("PATH")}
	cmd := exec.Command("bash", slurm, "chain")
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), ienv...)
	errb, done, _ := startBackground(t, cmd)
	if !waitForRows(intOut+"_2.csv", 50, done) {
		t.Fatalf("the task ended before it could be interrupted: %s", errb.String())
	}
	cmd.Process.Signal(syscall.SIGTERM)
	<-done
	if code := cmd.ProcessState.ExitCode(); code != 0 {
		t.Fatalf("interrupted task: exit %d, want 0 after requeueing: %s", code, errb.String())
	}
	calls, _ = os.ReadFile(filepath.Join(st, "calls.log"))
	if !strings.Contains(string(calls), "scontrol requeue 77_1\n") {
		t.Fatalf("the interrupted task did not requeue itself: calls\n%s\nstderr %s", calls, errb.String())
	}
	if _, err := os.Stat(intOut + ".chain1.ckpt"); err != nil {
		t.Fatalf("no checkpoint: %v", err)
	}
	cmd2 := exec.Command("bash", slurm, "chain") // the requeued task
	cmd2.Dir = dir
	cmd2.Env = append(os.Environ(), ienv...)
	if b, err := cmd2.CombinedOutput(); err != nil {
		t.Fatalf("requeued task: %v: %s", err, b)
	}
	ref := append([]string{"sample", "--data", flights}, flightsModel...)
	ref = append(ref, "--kernel", "mh", "--chains", "4", "--chain-id", "1", "--seed", "2026", "--warmup", "100", "--draws", "6000", "--quiet", "--out", "intref")
	mustRun(t, dir, ref...)
	sameFile(t, filepath.Join(dir, "intref_2.csv"), intOut+"_2.csv")
}

// manifestScript returns the shell script between the lines "# NAME" and
// "# end NAME" of the manifest, dedented.
func manifestScript(t *testing.T, manifest, name string) string {
	t.Helper()
	lines := strings.Split(manifest, "\n")
	start, end := -1, -1
	for i, l := range lines {
		switch strings.TrimSpace(l) {
		case "# " + name:
			start = i
		case "# end " + name:
			end = i
		}
	}
	if start < 0 || end < start {
		t.Fatalf("the manifest has no %q block", name)
	}
	indent := len(lines[start]) - len(strings.TrimLeft(lines[start], " "))
	var b strings.Builder
	for _, l := range lines[start : end+1] {
		if len(l) >= indent {
			l = l[indent:]
		}
		b.WriteString(l + "\n")
	}
	return b.String()
}

// manifestValues returns the values of "key: value" lines of the
// manifest, in order.
func manifestValues(manifest, key string) []string {
	re := regexp.MustCompile(`(?m)^\s*-?\s*` + regexp.QuoteMeta(key) + `:\s*"?([^"#\s]+)"?`)
	var out []string
	for _, m := range re.FindAllStringSubmatch(manifest, -1) {
		out = append(out, m[1])
	}
	return out
}

// TestK8sIndexedJob checks docs/k8s-indexed-job.yaml: an Indexed Job
// whose completions and parallelism equal CHAINS, and whose container
// script, run with JOB_COMPLETION_INDEX = k (four at once here, with the
// manifest's environment), writes chain k's file, equal to an in-process
// run's; the summary Job's script summarises them.
func TestK8sIndexedJob(t *testing.T) {
	b, err := os.ReadFile("../../docs/k8s-indexed-job.yaml")
	if err != nil {
		t.Fatal(err)
	}
	manifest := string(b)
	if got := manifestValues(manifest, "completionMode"); len(got) != 1 || got[0] != "Indexed" {
		t.Errorf("completionMode %v", got)
	}
	completions, parallelism := manifestValues(manifest, "completions"), manifestValues(manifest, "parallelism")
	var chains, seeds []string
	for _, m := range regexp.MustCompile(`name: (CHAINS|SEED)\n\s*value: "(\d+)"`).FindAllStringSubmatch(manifest, -1) {
		if m[1] == "CHAINS" {
			chains = append(chains, m[2])
		} else {
			seeds = append(seeds, m[2])
		}
	}
	if len(completions) != 1 || len(parallelism) != 1 || len(chains) != 2 ||
		completions[0] != "4" || parallelism[0] != "4" || chains[0] != "4" || chains[1] != "4" || len(seeds) != 1 {
		t.Fatalf("completions %v, parallelism %v, CHAINS %v, SEED %v: want all 4 and one seed", completions, parallelism, chains, seeds)
	}
	chain := manifestScript(t, manifest, "chain script")
	if !strings.Contains(chain, "exec exactmh sample") || !strings.Contains(chain, `--chain-id "$k"`) {
		t.Errorf("the chain script does not exec exactmh with --chain-id:\n%s", chain)
	}

	dir := t.TempDir()
	out := filepath.Join(dir, "runs", "flights", "chain")
	env := []string{"DATA=" + flights, "OUT=" + out, "CHAINS=" + chains[0], "SEED=" + seeds[0]}
	var wg sync.WaitGroup
	res := make([]result, 4)
	for k := range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			res[k] = script(t, dir, "sh", []string{"-c", chain}, append(env, fmt.Sprintf("JOB_COMPLETION_INDEX=%d", k))...)
		}()
	}
	wg.Wait()
	for k, r := range res {
		if r.code != 0 {
			t.Fatalf("pod %d: exit %d: %s", k, r.code, r.stderr)
		}
	}
	args := append([]string{"sample", "--data", flights}, flightsModel...)
	args = append(args, "--kernel", "tunamh-cv-cn", "--chains", "4", "--seed", seeds[0], "--quiet", "--out", "ref")
	mustRun(t, dir, args...)
	sameDraws(t, filepath.Join(dir, "ref"), out, 4)

	sum := manifestScript(t, manifest, "summary script")
	r := script(t, dir, "sh", []string{"-c", sum}, env...)
	if r.code != 0 || !strings.Contains(r.stdout, "4 chains × 1000 draws") {
		t.Fatalf("summary: exit %d:\n%s%s", r.code, r.stdout, r.stderr)
	}
}

// TestKernelsDocNamesEveryKernel holds docs/kernels.md to the registry:
// every kernel the binary registers (the root's and the sub-packages' the
// command imports) has its name, in backquotes, in a row of the kernels
// table, so the page that says it lists every kernel does.
func TestKernelsDocNamesEveryKernel(t *testing.T) {
	b, err := os.ReadFile(filepath.Join("..", "..", "docs", "kernels.md"))
	if err != nil {
		t.Fatal(err)
	}
	var table strings.Builder
	for line := range strings.Lines(string(b)) {
		if strings.HasPrefix(line, "| `") {
			table.WriteString(line)
		}
	}
	for _, ki := range exactmh.Kernels() {
		if !strings.Contains(table.String(), "`"+ki.Name+"`") {
			t.Errorf("docs/kernels.md: no table row names the registered kernel `%s`", ki.Name)
		}
	}
}
