// Copyright ©2026 The exactmh Authors. All rights reserved.
// Use of this source code is governed by a BSD-style
// license that can be found in the LICENSE file.

// Command multilevel-real runs the exactmh command's automatic default on
// real grouped data sets from Debian's R packages (lme4, mlmRev), as a new
// user would, and measures it against lme4::glmer: the kernel the default
// chose, the CPU time of the whole command (user + system, reading the
// file, the centre, pilots, warmup and sampling: the child process's
// rusage), the largest R-hat and the smallest bulk and tail ESS over every
// parameter — fixed effects, group effects and scales — and the posterior
// means of the fixed effects against glmer's estimates in glmer's standard
// errors.
//
// The data (data/*.csv, written from the R packages by data/export.R) and
// glmer's fits (figures/bench/multilevel_real_glmer.txt, written by
// glmer.R) are committed, so the runner needs neither R nor a network:
//
//	go run ./examples/multilevel-real                  # every set, 4 × (1000 + 1000)
//	go run ./examples/multilevel-real -sets verbagg -pin 1 -write
//	go run ./examples/multilevel-real -quick -quiet    # CI's smoke run
//
// It builds cmd/exactmh into a temporary directory (or runs -exactmh
// BINARY) and goes through the command line only, so it measures whatever
// the default is. -pin CPU runs the command under taskset with GOMAXPROCS=1;
// -cpu-limit stops a run (SIGINT) whose CPU time passes it and reports the
// draws made so far. -write merges the sets' rows into
// figures/bench/multilevel_real.txt (machine, date, commit, command, load)
// and regenerates the summary section of examples/README.md from it.
package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"log"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/exactmh/exactmh/diagnostics"
	"github.com/exactmh/exactmh/stancsv"
)

// dataset is one model of the suite: the exactmh command's flags and the
// name of glmer's fit of the same model (glmer.R's list, same name).
type dataset struct {
	name     string
	file     string // under examples/multilevel-real/data
	family   string // --family
	response string // --response
	terms    string // --terms
	covers   string // what the set stands for in the suite
}

// sets are the suite. References of the categorical terms are R's first
// levels, so that the coefficients are glmer's.
var sets = []dataset{
	{"insteval", "insteval.csv", "logistic", "y>3",
		"cat(service;ref=0),(1|s),(1|d),(1|dept)",
		"lme4::InstEval, rating ≥ 4: 73,421 ratings, students × lecturers crossed (2,972 × 1,128), lecturers in 14 departments, one binary covariate"},
	{"chem97", "chem97.csv", "logistic", "score>5",
		"gcsecnt,(1|lea),(1|school)",
		"mlmRev::Chem97, A-level score ≥ 6: 31,022 pupils in 2,410 schools in 131 LEAs, a strong covariate (centred GCSE)"},
	{"verbagg", "verbagg.csv", "logistic", "r2",
		"Anger,cat(Gender;ref=F),cat(btype;ref=curse),cat(situ;ref=other),cat(mode;ref=do),(1|id),(1|item)",
		"lme4::VerbAgg, r2 = Y: 7,584 answers, 316 persons × 24 items crossed, item-level covariates btype, situ, mode"},
	{"grouseticks", "grouseticks.csv", "poisson", "TICKS",
		"cat(YEAR;ref=95),HEIGHT,(1|INDEX),(1|BROOD),(1|LOCATION)",
		"lme4::grouseticks, Poisson: 403 chicks in 118 broods in 63 locations, an observation-level effect (groups of one)"},
	{"guimmun", "guimmun.csv", "probit", "immun",
		"cat(kid2p;ref=N),cat(mom25p;ref=N),cat(ord;ref=01),cat(ethn;ref=L),cat(momEd;ref=N),cat(husEd;ref=N),cat(momWork;ref=N),cat(rural;ref=N),pcInd81,(1|mom),(1|comm)",
		"mlmRev::guImmun, probit: 2,159 children of 1,595 mothers (1.35 each) in 161 communities"},
	{"contraception", "contraception.csv", "logistic", "use",
		"cat(livch;ref=0),cat(urban;ref=0),age,age2,(1|district)",
		"mlmRev::Contraception: 1,934 women in 60 districts"},
}

func main() {
	log.SetFlags(0)
	var (
		only     = flag.String("sets", "", "comma-separated data sets to run (default: all)")
		quick    = flag.Bool("quick", false, "smoke run: contraception alone, 2 × (100 + 100), nothing written")
		quiet    = flag.Bool("quiet", false, "no progress lines on stderr")
		chains   = flag.Int("chains", 4, "chains")
		warmup   = flag.Int("warmup", 1000, "warmup transitions per chain")
		draws    = flag.Int("draws", 1000, "kept draws per chain")
		seed     = flag.Uint64("seed", 1, "the command's --seed")
		kernel   = flag.String("kernel", "auto", "the command's --kernel")
		bin      = flag.String("exactmh", "", "the exactmh binary (default: go build ./cmd/exactmh into a temporary directory)")
		pin      = flag.String("pin", "", "run the command under taskset -c CPU with GOMAXPROCS=1")
		cpuLimit = flag.Duration("cpu-limit", 15*time.Minute, "stop a run (SIGINT) past this CPU time (user + system)")
		commit   = flag.String("commit", "", "the commit -exactmh BINARY was built from, for the figures (default: the repository's HEAD)")
		reuse    = flag.Bool("reuse", false, "do not run: read the runs kept in -keep DIR by an earlier run (tables against a newer glmer file)")
		keep     = flag.String("keep", "", "write the command's CSV files and stderr here (default: a temporary directory, removed)")
		write    = flag.Bool("write", false, "merge the rows into figures/bench/multilevel_real.txt and regenerate examples/README.md's section")
		nutsF    = flag.String("nuts", "", "rstan NUTS references (default: figures/bench/multilevel_real_nuts.txt, where present)")
		glmerF   = flag.String("glmer", "", "glmer's fits (default: figures/bench/multilevel_real_glmer.txt)")
	)
	flag.Parse()
	root, err := repoRoot()
	if err != nil {
		log.Fatal(err)
	}
	run := sets
	if *quick {
		run = pick(sets, "contraception")
		*chains, *warmup, *draws = 2, 100, 100
		*write = false
	} else if *only != "" {
		run = nil
		for _, s := range strings.Split(*only, ",") {
			p := pick(sets, strings.TrimSpace(s))
			if p == nil {
				log.Fatalf("-sets: no data set %q (have %s)", s, names(sets))
			}
			run = append(run, p...)
		}
	}
	if *reuse && *keep == "" {
		log.Fatal("-reuse needs -keep DIR, where the earlier run kept its files")
	}
	if *glmerF == "" {
		*glmerF = filepath.Join(root, "figures", "bench", "multilevel_real_glmer.txt")
	}
	ref, err := readGlmer(*glmerF)
	if err != nil {
		log.Printf("no glmer reference: %v", err)
	}
	if *nutsF == "" {
		*nutsF = filepath.Join(root, "figures", "bench", "multilevel_real_nuts.txt")
	}
	nuts, err := readNUTS(*nutsF)
	if err != nil && !os.IsNotExist(err) {
		log.Fatal(err)
	}
	tmp, err := os.MkdirTemp("", "multilevel-real")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(tmp)
	if *bin == "" && !*reuse {
		*bin = filepath.Join(tmp, "exactmh")
		if !*quiet {
			log.Printf("building %s", *bin)
		}
		cmd := exec.Command("go", "build", "-o", *bin, "./cmd/exactmh")
		cmd.Dir, cmd.Stderr = root, os.Stderr
		if err := cmd.Run(); err != nil {
			log.Fatalf("go build ./cmd/exactmh: %v", err)
		}
	}
	outDir := *keep
	if outDir == "" {
		outDir = tmp
	} else if err := os.MkdirAll(outDir, 0o755); err != nil {
		log.Fatal(err)
	}
	if *commit == "" {
		*commit = gitCommit(root)
	}
	cfg := runConfig{commit: *commit, bin: *bin, root: root, out: outDir, chains: *chains, warmup: *warmup, draws: *draws,
		seed: *seed, kernel: *kernel, pin: *pin, cpuLimit: *cpuLimit, quiet: *quiet, reuse: *reuse}
	var blocks []block
	for i := range run {
		ds := &run[i]
		r, err := cfg.run(ds)
		if err != nil {
			log.Fatalf("%s: %v", ds.name, err)
		}
		rate, agree := references(nuts, ds.name)
		b := r.block(ds, ref[ds.name], rate, agree, &cfg)
		fmt.Println(b.text())
		blocks = append(blocks, b)
	}
	if *write {
		fig := filepath.Join(root, "figures", "bench", "multilevel_real.txt")
		if err := mergeFigures(fig, blocks, root); err != nil {
			log.Fatal(err)
		}
		if err := writeReadme(filepath.Join(root, "examples", "README.md"), fig); err != nil {
			log.Fatal(err)
		}
	}
}

func pick(all []dataset, name string) []dataset {
	for _, d := range all {
		if d.name == name {
			return []dataset{d}
		}
	}
	return nil
}

func names(all []dataset) string {
	var s []string
	for _, d := range all {
		s = append(s, d.name)
	}
	return strings.Join(s, ", ")
}

// repoRoot is the directory of the go.mod of module
// github.com/exactmh/exactmh at or above the working directory.
func repoRoot() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for {
		b, err := os.ReadFile(filepath.Join(dir, "go.mod"))
		if err == nil && bytes.HasPrefix(b, []byte("module github.com/exactmh/exactmh\n")) {
			return dir, nil
		}
		up := filepath.Dir(dir)
		if up == dir {
			return "", errors.New("run from inside the exactmh repository: no go.mod of github.com/exactmh/exactmh above the working directory")
		}
		dir = up
	}
}

type runConfig struct {
	bin, root, out        string
	chains, warmup, draws int
	seed                  uint64
	kernel, pin           string
	cpuLimit              time.Duration
	quiet, reuse          bool
	commit                string
}

// result is one run of the command.
type result struct {
	runInfo
	kernel string // the default's choice (the CSV's "auto" key), or the explicit kernel
	reason string
	files  []*stancsv.File
}

// runInfo is what a run measured beyond its CSV files, kept beside them
// as PREFIX.run.json, which -reuse reads instead of running again.
type runInfo struct {
	Args      []string      `json:"args"`
	CPU       time.Duration `json:"cpu"` // user + system of the command
	User      time.Duration `json:"user"`
	Sys       time.Duration `json:"sys"`
	Exit      string        `json:"exit"`    // "0", or the exit status and the command's last error line
	Stopped   bool          `json:"stopped"` // stopped at -cpu-limit
	CPULimit  time.Duration `json:"cpu_limit"`
	LastLine  string        `json:"last_line"`
	Commit    string        `json:"commit"` // of the exactmh source run
	LoadStart string        `json:"load_start"`
	LoadEnd   string        `json:"load_end"`
	When      time.Time     `json:"when"`
}

// run runs the exactmh command on ds and reads its CSV files.
func (c *runConfig) run(ds *dataset) (*result, error) {
	prefix := filepath.Join(c.out, ds.name)
	args := []string{"sample",
		"--data", filepath.Join("examples", "multilevel-real", "data", ds.file),
		"--family", ds.family, "--response", ds.response, "--terms", ds.terms,
		"--chains", strconv.Itoa(c.chains), "--warmup", strconv.Itoa(c.warmup), "--draws", strconv.Itoa(c.draws),
		"--seed", strconv.FormatUint(c.seed, 10), "--kernel", c.kernel, "--out", prefix, "--progress", "30s"}
	r := &result{runInfo: runInfo{Args: args, LoadStart: loadavg(), When: time.Now().UTC()}}
	if c.reuse {
		b, err := os.ReadFile(prefix + ".run.json")
		if err != nil {
			return nil, fmt.Errorf("-reuse: %v", err)
		}
		if err := json.Unmarshal(b, &r.runInfo); err != nil {
			return nil, fmt.Errorf("-reuse: %s.run.json: %v", prefix, err)
		}
		return c.read(r, prefix)
	}
	name := c.bin
	full := args
	if c.pin != "" {
		name = "taskset"
		full = append([]string{"-c", c.pin, c.bin}, args...)
	}
	cmd := exec.Command(name, full...)
	cmd.Dir = c.root
	if c.pin != "" {
		cmd.Env = append(os.Environ(), "GOMAXPROCS=1")
	}
	logf, err := os.Create(prefix + ".stderr")
	if err != nil {
		return nil, err
	}
	defer logf.Close()
	var tail tailWriter
	var errw io.Writer = io.MultiWriter(logf, &tail)
	if !c.quiet {
		errw = io.MultiWriter(errw, os.Stderr)
		log.Printf("%s: exactmh %s", ds.name, quoteArgs(args))
	}
	cmd.Stderr = errw
	cmd.Stdout = logf
	r.LoadStart, r.When, r.Commit, r.CPULimit = loadavg(), time.Now().UTC(), c.commit, c.cpuLimit
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	done := make(chan struct{})
	go func() {
		// The CPU limit: the process's (and, under taskset, its child's:
		// taskset execs the command) user + system time from /proc.
		t := time.NewTicker(2 * time.Second)
		defer t.Stop()
		for {
			select {
			case <-done:
				return
			case <-t.C:
				if cpu, ok := procCPU(cmd.Process.Pid); ok && cpu > c.cpuLimit {
					r.Stopped = true
					cmd.Process.Signal(os.Interrupt)
					return
				}
			}
		}
	}()
	werr := cmd.Wait()
	close(done)
	r.LoadEnd = loadavg()
	st := cmd.ProcessState
	r.User, r.Sys = st.UserTime(), st.SystemTime()
	r.CPU = r.User + r.Sys
	r.Exit = strconv.Itoa(st.ExitCode())
	if werr != nil {
		r.Exit += ": " + tail.last()
	}
	r.LastLine = tail.last()
	if b, err := json.MarshalIndent(&r.runInfo, "", "  "); err == nil {
		if err := os.WriteFile(prefix+".run.json", b, 0o644); err != nil {
			return nil, err
		}
	}
	return c.read(r, prefix)
}

// read reads the run's CSV files and the default's choice from them.
func (c *runConfig) read(r *result, prefix string) (*result, error) {
	for k := 1; k <= c.chains; k++ {
		f, err := os.Open(fmt.Sprintf("%s_%d.csv", prefix, k))
		if err != nil {
			continue // a run stopped before sampling wrote nothing
		}
		sf, err := stancsv.ReadOptions{DropPartial: true}.Read(f)
		f.Close()
		if err != nil {
			if r.Exit != "0" || r.Stopped {
				continue // a chain queued behind the others when the run ended: an empty file
			}
			return nil, fmt.Errorf("%s_%d.csv: %v", prefix, k, err)
		}
		r.files = append(r.files, sf)
	}
	r.kernel, r.reason = c.kernel, ""
	if len(r.files) > 0 {
		for k, v := range r.files[0].Config {
			if k == "auto" || strings.HasSuffix(k, ".auto") {
				r.reason = v
				r.kernel, _, _ = strings.Cut(v, ":")
			}
		}
	}
	if r.reason == "" {
		// No CSV (stopped or failed before sampling): the command's last
		// words on its choice.
		r.reason = r.LastLine
	}
	return r, nil
}

// procCPU is the user + system time of process pid from /proc/pid/stat
// (false where there is no /proc).
func procCPU(pid int) (time.Duration, bool) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0, false
	}
	// Fields after the command name in parentheses: utime and stime are
	// fields 14 and 15 (1-based), in clock ticks (USER_HZ, 100 on Linux).
	i := bytes.LastIndexByte(b, ')')
	if i < 0 {
		return 0, false
	}
	f := strings.Fields(string(b[i+1:]))
	if len(f) < 13 {
		return 0, false
	}
	u, err1 := strconv.ParseInt(f[11], 10, 64)
	s, err2 := strconv.ParseInt(f[12], 10, 64)
	if err1 != nil || err2 != nil {
		return 0, false
	}
	return time.Duration(u+s) * 10 * time.Millisecond, true
}

func loadavg() string {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return "?"
	}
	f := strings.Fields(string(b))
	if len(f) < 3 {
		return "?"
	}
	return strings.Join(f[:3], " ")
}

// tailWriter keeps the last complete non-progress line written to it.
type tailWriter struct {
	buf  []byte
	line string
}

func (t *tailWriter) Write(p []byte) (int, error) {
	t.buf = append(t.buf, p...)
	for {
		i := bytes.IndexByte(t.buf, '\n')
		if i < 0 {
			break
		}
		l := strings.TrimSpace(string(t.buf[:i]))
		if l != "" && !strings.Contains(l, " | chain ") && !strings.HasPrefix(l, "read ") {
			t.line = l
		}
		t.buf = t.buf[i+1:]
	}
	return len(p), nil
}

func (t *tailWriter) last() string {
	l := t.line
	if len(l) > 300 {
		l = l[:300] + "…"
	}
	return l
}

func quoteArgs(args []string) string {
	var b strings.Builder
	for i, a := range args {
		if i > 0 {
			b.WriteByte(' ')
		}
		if strings.ContainsAny(a, " |()>;,") {
			a = "'" + a + "'"
		}
		b.WriteString(a)
	}
	return b.String()
}

// param is one parameter's summary over the chains.
type param struct {
	name             string
	kind             string // fixed, effect, scale
	mean, sd         float64
	rhat, bulk, tail float64
}

// summarize computes each parameter's mean, sd, R-hat and ESS from the
// chains' draws. A stopped or failed run's chains have different lengths
// (chains queued behind others may have none): the chains with at least
// half the longest one's draws are used, cut to the shortest of them.
// Scales are reported as τ (exp of a log_tau_ column, or the command's
// sd_<factor>__Intercept column as it is). It returns the parameters, the
// draws per chain and the chains used.
func summarize(files []*stancsv.File) ([]param, int, int) {
	if len(files) == 0 {
		return nil, 0, 0
	}
	longest := 0
	for _, f := range files {
		longest = max(longest, len(f.Draws))
	}
	var used []*stancsv.File
	n := math.MaxInt
	for _, f := range files {
		if len(f.Draws) >= (longest+1)/2 {
			used = append(used, f)
			n = min(n, len(f.Draws))
		}
	}
	files = used
	if n < 4 {
		return nil, n, len(files)
	}
	sc := fileScaling(files[0])
	var ps []param
	x := make([][]float64, len(files))
	for j, col := range files[0].Columns {
		if strings.HasSuffix(col, "__") {
			continue
		}
		p := param{name: col, kind: "fixed"}
		scale := false
		switch {
		case strings.HasPrefix(col, "log_tau_"):
			p.name, p.kind, scale = "tau_"+strings.TrimPrefix(col, "log_tau_"), "scale", true
		case strings.HasPrefix(col, "sd_") && strings.HasSuffix(col, "__Intercept"):
			// The command's natural-scale name of a random intercept's τ.
			p.name, p.kind = "tau_"+strings.TrimSuffix(strings.TrimPrefix(col, "sd_"), "__Intercept"), "scale"
		case strings.HasPrefix(col, "u_"):
			p.kind = "effect"
		}
		for c, f := range files {
			x[c] = make([]float64, n)
			for i := range n {
				v := f.Draws[i][j]
				if sc != nil && j < sc.first+len(sc.scale) && j >= sc.first {
					v = sc.original(f.Draws[i], j)
				}
				if scale {
					v = math.Exp(v)
				}
				x[c][i] = v
			}
		}
		st := diagnostics.Summarize(x)
		p.mean, p.sd = meanSD(x)
		p.rhat, p.bulk, p.tail = st.RHat, st.ESSBulk, st.ESSTail
		ps = append(ps, p)
	}
	return ps, n, len(files)
}

// scaling maps the sampled coefficients of the standardised features onto
// the original scale of each feature, as the command's summary does for a
// flat model (data.Design.Unstandardize): b_j = θ_j/scale_j, and the
// intercept θ_0 − Σ_j θ_j·center_j/scale_j. The files' model_info gives
// center and scale for the fixed-effect columns, which come first.
type scaling struct {
	center, scale []float64
	intercept     bool
	first         int // the column of the first coefficient
}

// fileScaling reads the scaling from a file's model_info (nil if the
// features were not standardised).
func fileScaling(f *stancsv.File) *scaling {
	if f.Config["model_info.standardize"] != "true" {
		return nil
	}
	nums := func(key string) []float64 {
		var out []float64
		for _, s := range strings.Split(f.Config["model_info."+key], ",") {
			v, err := strconv.ParseFloat(strings.TrimSpace(s), 64)
			if err != nil || v == 0 && key == "design_scale" {
				return nil
			}
			out = append(out, v)
		}
		return out
	}
	sc := &scaling{center: nums("design_center"), scale: nums("design_scale"), intercept: f.Config["model_info.intercept"] == "true"}
	sc.first = slices.IndexFunc(f.Columns, func(c string) bool { return !strings.HasSuffix(c, "__") })
	if sc.center == nil || len(sc.center) != len(sc.scale) || sc.first < 0 || sc.first+len(sc.scale) > len(f.Columns) {
		return nil
	}
	return sc
}

// original is coefficient column j of draw row on the original scale.
func (sc *scaling) original(row []float64, j int) float64 {
	k := j - sc.first
	if k > 0 || !sc.intercept {
		return row[j] / sc.scale[k]
	}
	v := row[j]
	for i := 1; i < len(sc.scale); i++ {
		v -= row[sc.first+i] / sc.scale[i] * sc.center[i]
	}
	return v
}

// meanSD is the mean and sample sd of all the draws of x.
func meanSD(x [][]float64) (mean, sd float64) {
	n, s := 0, 0.0
	for _, c := range x {
		for _, v := range c {
			s += v
			n++
		}
	}
	mean = s / float64(n)
	ss := 0.0
	for _, c := range x {
		for _, v := range c {
			ss += (v - mean) * (v - mean)
		}
	}
	return mean, math.Sqrt(ss / float64(n-1))
}

// longSuffix names a set's longer NUTS reference in the references file
// (stan/run.R's option draws=D with D ≠ 1000 writes its block as "SET-long"):
// where present, the agreement is checked against it — its means and sds
// carry less Monte Carlo error — while the ESS per CPU-second ratio stays
// against the set's own block, run at the suite's lengths, 4 × (1000 +
// 1000), as the exactmh runs are (a longer run spreads NUTS's warmup over
// more draws).
const longSuffix = "-long"

// nutsRef is rstan's NUTS run on one set (stan/run.R): every parameter's
// posterior mean, sd and ESS.
type nutsRef struct {
	header        string
	mean, sd, ess map[string]float64
	cpu, bulkMin  float64
}

// readNUTS reads stan/run.R's output: "## set: ..." lines, then rows
// "set kind name mean sd rhat ess_bulk ess_tail" (tab-separated).
func readNUTS(path string) (map[string]*nutsRef, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	out := map[string]*nutsRef{}
	for _, l := range strings.Split(string(b), "\n") {
		if strings.HasPrefix(l, "## ") {
			name, rest, _ := strings.Cut(strings.TrimPrefix(l, "## "), ":")
			out[name] = &nutsRef{header: strings.TrimSpace(rest), mean: map[string]float64{}, sd: map[string]float64{}, ess: map[string]float64{},
				cpu: math.NaN(), bulkMin: math.Inf(1)}
			continue
		}
		if l == "" || strings.HasPrefix(l, "#") {
			continue
		}
		c := strings.Split(l, "\t")
		if len(c) != 8 || out[c[0]] == nil {
			return nil, fmt.Errorf("%s: %q: want 8 tab-separated fields after the set's ## line", path, l)
		}
		r := out[c[0]]
		v := make([]float64, 5)
		for i := range v {
			v[i], _ = strconv.ParseFloat(c[3+i], 64)
		}
		if c[1] == "cpu" {
			r.cpu = v[0]
			continue
		}
		r.mean[c[2]], r.sd[c[2]], r.ess[c[2]] = v[0], v[1], v[3]
		r.bulkMin = min(r.bulkMin, v[3])
	}
	return out, nil
}

// agreement is the exactmh draws against NUTS's over every parameter.
type agreement struct {
	n, missing               int
	maxZ, shareZ, maxMCSE    float64 // |Δmean|/sd_NUTS: max, share > 0.1; max |Δmean|/(combined MCSE)
	sdrMin, sdrMax, shareSDR float64 // sd ratio exactmh/NUTS: range, share outside [0.9, 1.1]
	worstZ, worstSDR         string
	zm                       [4]float64
	worstSDRv                float64
}

func compareNUTS(ps []param, nr *nutsRef) agreement {
	a := agreement{sdrMin: math.Inf(1), sdrMax: math.Inf(-1)}
	nz, nsd := 0, 0
	for _, p := range ps {
		m, ok := nr.mean[p.name]
		if !ok {
			a.missing++
			continue
		}
		sd, ess := nr.sd[p.name], nr.ess[p.name]
		if !(sd > 0) || math.IsNaN(p.mean) {
			continue
		}
		a.n++
		z := math.Abs(p.mean-m) / sd
		if z > 0.1 {
			nz++
		}
		if z > a.maxZ {
			a.maxZ, a.worstZ, a.zm = z, p.name, [4]float64{p.mean, p.sd, m, sd}
		}
		mcse := math.Sqrt(p.sd*p.sd/p.bulk + sd*sd/ess)
		a.maxMCSE = max(a.maxMCSE, math.Abs(p.mean-m)/mcse)
		r := p.sd / sd
		a.sdrMin, a.sdrMax = min(a.sdrMin, r), max(a.sdrMax, r)
		if r < 0.9 || r > 1.1 {
			nsd++
		}
		if math.Abs(math.Log(r)) > math.Abs(math.Log(a.worstSDRv)) || a.worstSDRv == 0 {
			a.worstSDR, a.worstSDRv = p.name, r
		}
	}
	if a.n > 0 {
		a.shareZ, a.shareSDR = float64(nz)/float64(a.n), float64(nsd)/float64(a.n)
	} else {
		a.maxZ, a.maxMCSE, a.sdrMin, a.sdrMax, a.shareZ, a.shareSDR = math.NaN(), math.NaN(), math.NaN(), math.NaN(), math.NaN(), math.NaN()
	}
	return a
}

// glmerFit is one set's glmer fit.
type glmerFit struct {
	header string // the "## set: formula, ..." line
	est    map[string]float64
	se     map[string]float64
	order  []string
	cpu    float64
}

// readGlmer reads glmer.R's output: "## set: ..." lines, then rows "set
// kind name estimate se" (tab-separated).
func readGlmer(path string) (map[string]*glmerFit, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	out := map[string]*glmerFit{}
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		l := sc.Text()
		if strings.HasPrefix(l, "## ") {
			name, _, _ := strings.Cut(strings.TrimPrefix(l, "## "), ":")
			g := out[name]
			if g == nil {
				g = &glmerFit{est: map[string]float64{}, se: map[string]float64{}, cpu: math.NaN()}
				out[name] = g
			}
			g.header = l
			continue
		}
		if l == "" || strings.HasPrefix(l, "#") {
			continue
		}
		c := strings.Split(l, "\t")
		if len(c) != 5 {
			return nil, fmt.Errorf("%s: %q: want 5 tab-separated fields", path, l)
		}
		g := out[c[0]]
		if g == nil {
			return nil, fmt.Errorf("%s: row %q before its set's ## line", path, l)
		}
		est, err := strconv.ParseFloat(c[3], 64)
		if err != nil {
			return nil, fmt.Errorf("%s: %q: %v", path, l, err)
		}
		switch c[1] {
		case "fixed", "sd":
			g.est[c[2]] = est
			g.order = append(g.order, c[2])
			g.se[c[2]] = math.NaN()
			if se, err := strconv.ParseFloat(c[4], 64); err == nil {
				g.se[c[2]] = se
			}
		case "cpu":
			g.cpu = est
		}
	}
	return out, sc.Err()
}

// block is one set's part of the figures file: a key=value line the
// README's table is made from, then the table.
type block struct {
	name  string
	kv    [][2]string
	lines []string
}

func (b *block) text() string {
	var s strings.Builder
	s.WriteString("## " + b.name)
	for _, kv := range b.kv {
		fmt.Fprintf(&s, " %s=%s", kv[0], kv[1])
	}
	s.WriteByte('\n')
	for _, l := range b.lines {
		s.WriteString(l + "\n")
	}
	return s.String()
}

func (b *block) get(k string) string {
	for _, kv := range b.kv {
		if kv[0] == k {
			return kv[1]
		}
	}
	return ""
}

// f6 is v to six significant digits ("NaN" for NaN).
func f6(v float64) string {
	if math.IsNaN(v) {
		return "NaN"
	}
	return strconv.FormatFloat(v, 'g', 6, 64)
}

func f3(v float64) string {
	if math.IsNaN(v) {
		return "NaN"
	}
	return strconv.FormatFloat(v, 'g', 4, 64)
}

// block makes the set's rows: the run's summary line and, per parameter
// of glmer's fit, the posterior mean and sd against glmer's estimate and
// se; then the worst parameters of each kind.
// references returns set's NUTS references: the one its ESS per
// CPU-second ratio is taken against (the suite's lengths) and the one its
// agreement is checked against (the longer "SET-long" block where there is
// one, else the same). Both nil where the set has no reference; a long
// block alone gives no ratio and no agreement (its rate is not the suite's).
func references(nuts map[string]*nutsRef, set string) (rate, agree *nutsRef) {
	rate = nuts[set]
	if rate == nil {
		return nil, nil
	}
	if long := nuts[set+longSuffix]; long != nil {
		return rate, long
	}
	return rate, rate
}

func (r *result) block(ds *dataset, g *glmerFit, nr, agree *nutsRef, c *runConfig) block {
	ps, n, used := summarize(r.files)
	b := block{name: ds.name}
	add := func(k, v string) { b.kv = append(b.kv, [2]string{k, strings.ReplaceAll(v, " ", "_")}) }
	status := "completed"
	switch {
	case r.Stopped:
		status = "stopped"
	case r.Exit != "0":
		status = "failed"
	}
	add("kernel", r.kernel)
	add("nuts_fallback", strconv.FormatBool(isFallback(r.kernel, r.reason)))
	add("status", status)
	add("cpu_s", fmt.Sprintf("%.1f", r.CPU.Seconds()))
	add("user_s", fmt.Sprintf("%.1f", r.User.Seconds()))
	add("sys_s", fmt.Sprintf("%.1f", r.Sys.Seconds()))
	add("chains", strconv.Itoa(used))
	add("draws_per_chain", strconv.Itoa(n))
	worst := map[string]*param{}
	rhatMax, bulkMin, tailMin := math.Inf(-1), math.Inf(1), math.Inf(1)
	nan := 0
	for i := range ps {
		p := &ps[i]
		if math.IsNaN(p.rhat) || math.IsNaN(p.bulk) {
			nan++
			continue
		}
		rhatMax = max(rhatMax, p.rhat)
		bulkMin = min(bulkMin, p.bulk)
		tailMin = min(tailMin, p.tail)
		for _, k := range []string{"rhat:" + p.kind, "bulk:" + p.kind} {
			w := worst[k]
			if w == nil || (strings.HasPrefix(k, "rhat") && p.rhat > w.rhat) || (strings.HasPrefix(k, "bulk") && p.bulk < w.bulk) {
				worst[k] = p
			}
		}
	}
	if len(ps) == 0 {
		rhatMax, bulkMin, tailMin = math.NaN(), math.NaN(), math.NaN()
	}
	add("rhat_max", f6(rhatMax)) // six digits: the bar (≤ 1.01) is judged on them, not on a rounding
	add("ess_bulk_min", f3(bulkMin))
	add("ess_tail_min", f3(tailMin))
	add("params", strconv.Itoa(len(ps)))
	add("params_nan", strconv.Itoa(nan))
	essPerCPU := math.NaN()
	if r.CPU > 0 && status == "completed" {
		essPerCPU = bulkMin / r.CPU.Seconds()
	}
	add("ess_bulk_min_per_cpu_s", f3(essPerCPU))
	gcpu := math.NaN()
	zMax, sdrMin, sdrMax := math.NaN(), math.NaN(), math.NaN()
	byName := map[string]*param{}
	for i := range ps {
		byName[ps[i].name] = &ps[i]
	}
	if g != nil {
		gcpu = g.cpu
		zMax, sdrMin, sdrMax = 0, math.Inf(1), math.Inf(-1)
		for _, name := range g.order {
			p := byName[name]
			if p == nil || math.IsNaN(g.se[name]) {
				continue
			}
			z := (p.mean - g.est[name]) / g.se[name]
			zMax = max(zMax, math.Abs(z))
			sdrMin, sdrMax = min(sdrMin, p.sd/g.se[name]), max(sdrMax, p.sd/g.se[name])
		}
		if math.IsInf(sdrMin, 0) {
			zMax, sdrMin, sdrMax = math.NaN(), math.NaN(), math.NaN()
		}
	}
	add("glmer_cpu_s", f3(gcpu))
	add("fixed_max_abs_z", f3(zMax))
	add("fixed_sd_ratio_min", f3(sdrMin))
	add("fixed_sd_ratio_max", f3(sdrMax))
	var nutsLines []string
	if nr != nil {
		a := compareNUTS(ps, agree)
		add("nuts_params", strconv.Itoa(a.n))
		add("nuts_missing", strconv.Itoa(a.missing))
		add("nuts_max_abs_dmean_over_sd", f3(a.maxZ))
		add("nuts_share_dmean_over_0.1sd", f3(a.shareZ))
		add("nuts_max_abs_dmean_over_mcse", f3(a.maxMCSE))
		add("nuts_sd_ratio_min", f3(a.sdrMin))
		add("nuts_sd_ratio_max", f3(a.sdrMax))
		add("nuts_share_sd_ratio_outside_0.9_1.1", f3(a.shareSDR))
		add("nuts_cpu_s", f3(nr.cpu))
		add("nuts_ess_bulk_min", f3(nr.bulkMin))
		ratio := math.NaN()
		if nr.cpu > 0 && nr.bulkMin > 0 {
			ratio = essPerCPU / (nr.bulkMin / nr.cpu)
		}
		add("ess_per_cpu_vs_nuts", f3(ratio))
		if agree != nr {
			nutsLines = append(nutsLines, "# ESS per CPU-second against rstan NUTS ("+nr.header+")")
		}
		nutsLines = append(nutsLines, "# against rstan NUTS ("+agree.header+"):",
			fmt.Sprintf("# worst mean: %s (exactmh %.4g ± %.3g, NUTS %.4g ± %.3g); worst sd ratio: %s (%.3f)", a.worstZ, a.zm[0], a.zm[1], a.zm[2], a.zm[3], a.worstSDR, a.worstSDRv))
	}
	add("load_start", r.LoadStart)
	add("load_end", r.LoadEnd)
	add("date", r.When.Format("2006-01-02T15:04Z"))
	add("commit", r.Commit)
	pin := "none"
	if c.pin != "" {
		pin = "taskset_-c_" + c.pin + "_GOMAXPROCS=1"
	}
	add("pin", pin)

	b.lines = append(b.lines,
		"# "+ds.covers,
		"# command: exactmh "+quoteArgs(r.Args),
		"# exit: "+r.Exit,
		"# choice: "+strings.ReplaceAll(r.reason, "\n", " "))
	if r.Stopped {
		b.lines = append(b.lines, fmt.Sprintf("# stopped by SIGINT at -cpu-limit %v; the figures below are of the draws made by then", r.CPULimit))
	}
	b.lines = append(b.lines, fmt.Sprintf("# %-28s %12s %10s %12s %10s %8s %8s %8s %8s", "parameter", "glmer", "glmer_se", "post_mean", "post_sd", "z", "sd/se", "rhat", "ess_bulk"))
	if g != nil {
		for _, name := range g.order {
			p := byName[name]
			if p == nil {
				b.lines = append(b.lines, fmt.Sprintf("  %-28s %12.5g %10.4g %12s", name, g.est[name], g.se[name], "(not in the draws)"))
				continue
			}
			z, sdr := (p.mean-g.est[name])/g.se[name], p.sd/g.se[name]
			b.lines = append(b.lines, fmt.Sprintf("  %-28s %12.5g %10.4g %12.5g %10.4g %8.2f %8.3f %8.3f %8.0f",
				name, g.est[name], g.se[name], p.mean, p.sd, z, sdr, p.rhat, p.bulk))
		}
	}
	keys := slices.Sorted(func(yield func(string) bool) {
		for k := range worst {
			if !yield(k) {
				return
			}
		}
	})
	for _, k := range keys {
		p := worst[k]
		what, kind, _ := strings.Cut(k, ":")
		b.lines = append(b.lines, fmt.Sprintf("# worst %-6s by %-4s: %-24s mean %.4g sd %.4g rhat %.3f ess_bulk %.0f ess_tail %.0f",
			kind, what, p.name, p.mean, p.sd, p.rhat, p.bulk, p.tail))
	}
	b.lines = append(b.lines, nutsLines...)
	b.lines = append(b.lines, "# The scales (tau_*) have no glmer se: their rows compare the posterior mean of τ with glmer's",
		"# estimate (z and sd/se NaN); the group effects and scales need a NUTS reference for a calibrated check.")
	return b
}

// isFallback says whether the default's choice is a fallback to
// full-batch NUTS: a NUTS kernel chosen because GroupGibbs could not be
// used (it grinds, its fixed effects are stuck, it or the centre failed),
// not because N is below the automatic default's small-data threshold,
// where NUTS is its first choice ("N = … < 2000 …").
func isFallback(kernel, reason string) bool {
	if !strings.HasPrefix(kernel, "NUTS") {
		return false
	}
	_, why, _ := strings.Cut(reason, ":")
	return !strings.HasPrefix(strings.TrimSpace(why), "N = ")
}

// doneWhen is the done-when on a figures line's keys: max R-hat ≤
// 1.01, min bulk ESS ≥ 400 over every parameter, CPU no more than
// max(glmer's, 30 s), a completed run and no fallback to full-batch NUTS
// (nuts_fallback, where the line has it): "met", or "missed:" and what.
func doneWhen(b *block) string {
	num := func(k string) float64 {
		v, err := strconv.ParseFloat(b.get(k), 64)
		if err != nil {
			return math.NaN()
		}
		return v
	}
	var miss []string
	if b.get("status") != "completed" {
		miss = append(miss, b.get("status"))
	}
	if !(num("rhat_max") <= 1.01) {
		miss = append(miss, "R-hat")
	}
	if !(num("ess_bulk_min") >= 400) {
		miss = append(miss, "ESS")
	}
	if budget := math.Max(30, num("glmer_cpu_s")); !(num("cpu_s") <= budget) {
		miss = append(miss, "CPU")
	}
	if b.get("nuts_fallback") == "true" {
		miss = append(miss, "NUTS fallback")
	}
	if len(miss) == 0 {
		return "met"
	}
	return "missed: " + strings.Join(miss, ", ")
}

func gitCommit(root string) string {
	out, err := exec.Command("git", "-C", root, "rev-parse", "--short=12", "HEAD").Output()
	if err != nil {
		return "unknown"
	}
	c := strings.TrimSpace(string(out))
	if st, err := exec.Command("git", "-C", root, "status", "--porcelain", "--untracked-files=no").Output(); err == nil && len(bytes.TrimSpace(st)) > 0 {
		c += "+dirty"
	}
	return c
}

// figuresHeader is the figures file's header; machine and time are per
// block.
func figuresHeader() []string {
	host, _ := os.Hostname()
	cpu := "?"
	if b, err := os.ReadFile("/proc/cpuinfo"); err == nil {
		for _, l := range strings.Split(string(b), "\n") {
			if strings.HasPrefix(l, "model name") {
				_, cpu, _ = strings.Cut(l, ": ")
				break
			}
		}
	}
	return []string{
		"# examples/multilevel-real: the exactmh command's automatic default on real grouped data, against lme4::glmer",
		fmt.Sprintf("# machine: %s, %d cores (%s), %s/%s, %s", host, runtime.NumCPU(), cpu, runtime.GOOS, runtime.GOARCH, runtime.Version()),
		"# command: go run ./examples/multilevel-real [-sets SET,...] [-pin CPU] -write (from the repository root)",
		"# Per set: a line \"## set key=value ...\" (kernel chosen, status, CPU-s of the whole command: user + system",
		"# from its rusage, reading the file included; max R-hat and min bulk/tail ESS over every parameter:",
		"# fixed effects, group effects u_*, scales tau_* (τ = exp(log τ)); glmer's CPU-s; the largest |posterior",
		"# mean − glmer estimate| / glmer se over the fixed effects and the range of posterior sd / glmer se;",
		"# 1-minute load averages at the start and end; commit; pinning), then the per-parameter table.",
		"# glmer's fits: figures/bench/multilevel_real_glmer.txt (examples/multilevel-real/glmer.R).",
	}
}

// mergeFigures writes blocks into path, keeping the blocks of other sets
// already there, in the suite's order.
func mergeFigures(path string, blocks []block, root string) error {
	have := map[string][]string{}
	if b, err := os.ReadFile(path); err == nil {
		cur := ""
		for _, l := range strings.Split(strings.TrimRight(string(b), "\n"), "\n") {
			if strings.HasPrefix(l, "## ") {
				cur = strings.Fields(l)[1]
			}
			if cur != "" {
				have[cur] = append(have[cur], l)
			}
		}
	}
	for _, b := range blocks {
		have[b.name] = strings.Split(strings.TrimRight(b.text(), "\n"), "\n")
	}
	out := figuresHeader()
	for _, ds := range sets {
		if l, ok := have[ds.name]; ok {
			out = append(out, "")
			out = append(out, l...)
		}
	}
	return os.WriteFile(path, []byte(strings.Join(out, "\n")+"\n"), 0o644)
}

const (
	readmeBegin = "<!-- multilevel-real table: generated by go run ./examples/multilevel-real -write from figures/bench/multilevel_real.txt; do not edit -->"
	readmeEnd   = "<!-- end of multilevel-real table -->"
)

// writeReadme regenerates the summary table between readmeBegin and
// readmeEnd in the examples' README from the figures file.
func writeReadme(readme, fig string) error {
	fb, err := os.ReadFile(fig)
	if err != nil {
		return err
	}
	var rows []string
	rows = append(rows,
		"| data set | done when | kernel chosen | status | CPU-s (user + sys) | glmer CPU-s | max R-hat | min bulk ESS | min tail ESS | max \\|z\\| fixed vs glmer | sd / glmer se | vs rstan NUTS: max \\|Δmean\\|/sd, sd ratio, ESS/CPU-s ratio | commit, load |",
		"|---|---|---|---|---|---|---|---|---|---|---|---|---|")
	for _, l := range strings.Split(string(fb), "\n") {
		if !strings.HasPrefix(l, "## ") {
			continue
		}
		f := strings.Fields(l)
		b := block{name: f[1]}
		for _, kv := range f[2:] {
			k, v, _ := strings.Cut(kv, "=")
			b.kv = append(b.kv, [2]string{k, v})
		}
		vsNUTS := "—"
		if b.get("nuts_params") != "" {
			vsNUTS = fmt.Sprintf("%s; %s–%s; %s×", b.get("nuts_max_abs_dmean_over_sd"), b.get("nuts_sd_ratio_min"),
				b.get("nuts_sd_ratio_max"), b.get("ess_per_cpu_vs_nuts"))
		}
		rows = append(rows, fmt.Sprintf("| %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s–%s | %s | %s, %s |",
			b.name, doneWhen(&b), b.get("kernel"), b.get("status"), b.get("cpu_s"), b.get("glmer_cpu_s"), b.get("rhat_max"),
			b.get("ess_bulk_min"), b.get("ess_tail_min"), b.get("fixed_max_abs_z"),
			b.get("fixed_sd_ratio_min"), b.get("fixed_sd_ratio_max"), vsNUTS, b.get("commit"), strings.ReplaceAll(b.get("load_start"), "_", " ")))
	}
	section := readmeBegin + "\n\n" + strings.Join(rows, "\n") + "\n\n" + readmeEnd
	rb, err := os.ReadFile(readme)
	if err != nil {
		return err
	}
	s := string(rb)
	i, j := strings.Index(s, readmeBegin), strings.Index(s, readmeEnd)
	if i < 0 || j < i {
		return fmt.Errorf("%s: no %q … %q section to regenerate", readme, readmeBegin, readmeEnd)
	}
	s = s[:i] + section + s[j+len(readmeEnd):]
	return os.WriteFile(readme, []byte(s), 0o644)
}
