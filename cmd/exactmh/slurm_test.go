// Copyright ©2026 The exactmh Authors. All rights reserved.
// Use of this source code is governed by a BSD-style
// license that can be found in the LICENSE file.

package main

import (
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"
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

// freePort returns a TCP port on loopback that was free a moment ago.
func freePort(t *testing.T) int {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}

// TestSlurmReal runs docs/slurm.sh on a real single-node Slurm cluster
// (munged, slurmctld and slurmd started by testdata/slurm-single-node.sh
// and stopped at the end): "submit" submits the array of 4 chain tasks —
// on a node with fewer cores they queue — and the summary job; every task
// and the summary finish, each chain's file equals an in-process run's
// draw for draw, the summary is written, and every task wrote its log. It
// skips, saying why, where Slurm or munge is not installed or the process
// is not root (.ci/run installs them; CI runs as root).
func TestSlurmReal(t *testing.T) {
	for _, p := range []string{"slurmctld", "slurmd", "munged", "sbatch", "squeue", "sinfo"} {
		if _, err := exec.LookPath(p); err != nil {
			t.Skipf("%s is not installed (Debian's slurmctld, slurmd, slurm-client and munge; .ci/run installs them)", p)
		}
	}
	if os.Geteuid() != 0 {
		t.Skip("a single-node Slurm needs root (slurmd runs jobs as their user)")
	}
	if testing.Short() {
		t.Skip("-short: the real Slurm run takes about a minute")
	}
	slurm, err := filepath.Abs("../../docs/slurm.sh")
	if err != nil {
		t.Fatal(err)
	}
	helper, err := filepath.Abs("testdata/slurm-single-node.sh")
	if err != nil {
		t.Fatal(err)
	}
	cluster, err := os.MkdirTemp("", "exactmh-slurm") // short: Unix socket paths are limited
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		exec.Command("bash", helper, "stop", cluster).Run()
		os.RemoveAll(cluster)
	})
	out, err := exec.Command("bash", helper, "start", cluster, strconv.Itoa(freePort(t)), strconv.Itoa(freePort(t))).Output()
	if err != nil {
		var stderr []byte
		if ee, ok := err.(*exec.ExitError); ok {
			stderr = ee.Stderr
		}
		t.Fatalf("starting Slurm: %v: %s", err, stderr)
	}
	conf := strings.TrimSpace(string(out))

	dir := t.TempDir()
	prefix := filepath.Join(dir, "run", "chain")
	env := []string{"SLURM_CONF=" + conf, "EXACTMH=" + bin, "DATA=" + flights, "OUT=" + prefix, "CHAINS=4", "SEED=2026",
		"WARMUP=200", "DRAWS=300"}
	r := script(t, dir, slurm, []string{"submit"}, env...)
	if r.code != 0 {
		t.Fatalf("docs/slurm.sh submit: exit %d: %s%s", r.code, r.stdout, r.stderr)
	}
	job := regexp.MustCompile(`array job (\d+)`).FindStringSubmatch(r.stdout)
	if job == nil {
		t.Fatalf("submit printed %q", r.stdout)
	}
	deadline := time.Now().Add(5 * time.Minute)
	for {
		q := exec.Command("squeue", "-h", "-o", "%i %T %r")
		q.Env = append(os.Environ(), "SLURM_CONF="+conf)
		b, err := q.Output()
		if err != nil {
			t.Fatalf("squeue: %v", err)
		}
		if strings.TrimSpace(string(b)) == "" {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the jobs did not finish in 5 minutes:\n%s", b)
		}
		time.Sleep(time.Second)
	}
	args := append([]string{"sample", "--data", flights}, flightsModel...)
	args = append(args, "--kernel", "tunamh-cv-cn", "--chains", "4", "--seed", "2026", "--warmup", "200", "--draws", "300", "--quiet", "--out", "ref")
	mustRun(t, dir, args...)
	sameDraws(t, filepath.Join(dir, "ref"), prefix, 4)
	if b, err := os.ReadFile(prefix + "-summary.txt"); err != nil || !strings.Contains(string(b), "4 chains × 300 draws") {
		t.Errorf("the summary job's table %s: %v\n%s", prefix+"-summary.txt", err, b)
	}
	for k := range 4 {
		log := filepath.Join(dir, fmt.Sprintf("exactmh-%s_%d.log", job[1], k))
		if _, err := os.Stat(log); err != nil {
			t.Errorf("task %d's log: %v", k, err)
		}
	}
}
