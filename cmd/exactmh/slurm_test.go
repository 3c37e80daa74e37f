// Copyright ©2026 The exactmh Authors. All rights reserved.
// Use of this source code is governed by a BSD-style
// license that can be found in the LICENSE file.

package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// docs/slurm.sh runs as documented: it is executable ("docs/slurm.sh
// submit", not "bash docs/slurm.sh submit"), a requeued task appends to
// its log (--open-mode=append) rather than truncating it, the header says
// that Slurm holds a requeued task for about two minutes, and with CHOICE
// set "choose" writes the automatic default's choice and the tasks sample
// with --choice: task k's file equals that of "exactmh sample --choice
// FILE --chain-id k", and submit refuses a CHOICE not yet written.
func TestSlurmRecipe(t *testing.T) {
	slurm, err := filepath.Abs("../../docs/slurm.sh")
	if err != nil {
		t.Fatal(err)
	}
	st, err := os.Stat(slurm)
	if err != nil {
		t.Fatal(err)
	}
	if st.Mode().Perm()&0o111 != 0o111 {
		t.Errorf("docs/slurm.sh has mode %v: want it executable by all (git update-index --chmod=+x)", st.Mode().Perm())
	}
	if out, err := exec.Command("git", "ls-files", "-s", slurm).Output(); err == nil && len(out) > 0 && !strings.HasPrefix(string(out), "100755 ") {
		t.Errorf("git records docs/slurm.sh as %q: want mode 100755, or a fresh clone cannot run it", strings.Fields(string(out))[0])
	}
	b, err := os.ReadFile(slurm)
	if err != nil {
		t.Fatal(err)
	}
	text := string(b)
	for _, want := range []*regexp.Regexp{
		regexp.MustCompile(`(?m)^#SBATCH --open-mode=append$`),
		regexp.MustCompile(`(?m)^#SBATCH --requeue$`),
		regexp.MustCompile(`(?s)requeued task.*about\s+#?\s*two minutes`),
	} {
		if !want.MatchString(text) {
			t.Errorf("docs/slurm.sh lacks %v", want)
		}
	}
	if _, err := exec.LookPath("bash"); err != nil {
		t.Skip("no bash")
	}

	dir := t.TempDir()
	out := filepath.Join(dir, "run", "chain")
	choice := filepath.Join(dir, "run", "choice.json")
	env := []string{"EXACTMH=" + bin, "DATA=" + flights, "OUT=" + out, "CHAINS=3", "SEED=2026",
		"WARMUP=200", "DRAWS=300", "SLURM_ARRAY_JOB_ID=77", "CHOICE=" + choice}
	stub := stubs(t)
	if r := script(t, dir, slurm, []string{"submit"}, append(env, "PATH="+stub+":"+os.Getenv("PATH"))...); r.code != 2 || !strings.Contains(r.stderr, "choose") {
		t.Errorf("submit with no choice file yet: exit %d, %q; want 2 and a pointer to choose", r.code, r.stderr)
	}
	if r := script(t, dir, slurm, []string{"choose"}, env...); r.code != 0 {
		t.Fatalf("choose: exit %d: %s", r.code, r.stderr)
	}
	if r := script(t, dir, slurm, []string{"chain"}, append(env, "SLURM_ARRAY_TASK_ID=1")...); r.code != 0 {
		t.Fatalf("chain with CHOICE: exit %d: %s", r.code, r.stderr)
	}
	args := append([]string{"sample", "--data", flights}, flightsModel...)
	args = append(args, "--choice", choice, "--chains", "3", "--chain-id", "1", "--seed", "2026", "--warmup", "200", "--draws", "300", "--quiet", "--out", "ref")
	mustRun(t, dir, args...)
	sameFile(t, filepath.Join(dir, "ref_2.csv"), out+"_2.csv")
	f := readCSV(t, out+"_2.csv")
	if v, _ := f.ConfigValue("auto"); v == "" {
		t.Error("the task's file does not carry the choice")
	}
	if r := script(t, dir, slurm, []string{"submit"}, append(env, "PATH="+stub+":"+os.Getenv("PATH"))...); r.code != 0 {
		t.Errorf("submit with the choice written: exit %d: %s", r.code, r.stderr)
	}
}
