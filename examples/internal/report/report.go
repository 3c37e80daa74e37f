// Package report writes the examples' -json rows: one JSON object per
// kernel run with the fields every example shares (kernel, exact,
// accept_rate, mean_batch, evals_per_step, ess_bulk_min, ess_per_sec,
// seconds, status, steps) and the experiment's own; and the flags and
// Stan CSV output every example shares (Common).
package report

import (
	"bufio"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"log"
	"math"
	"os"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"runtime/pprof"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/exactmh/exactmh"
	"github.com/exactmh/exactmh/diagnostics"
	"github.com/exactmh/exactmh/progress"
	"github.com/exactmh/exactmh/stancsv"
)

// Row returns the shared fields of a run, measured over its sampling phase:
// ESS is the smallest bulk ESS over coordinates, ESS/s divides it by the
// sampling wall time summed over chains (per chain-second), and seconds is the
// run's wall time. extra adds or overrides fields.
func Row(res *exactmh.Result, extra map[string]any) map[string]any {
	return RowOf(res, res.Summary(), extra)
}

// RowOf is Row given the run's Summary, for callers that have it already
// (summarising long chains takes a while).
func RowOf(res *exactmh.Result, s *exactmh.Summary, extra map[string]any) map[string]any {
	row := map[string]any{
		"kernel":         res.Kernel,
		"exact":          res.Exact,
		"status":         res.Status.String(),
		"accept_rate":    OrNull(s.AcceptRate),
		"mean_batch":     OrNull(s.MeanBatch),
		"evals_per_step": OrNull(s.EvalsPerStep),
		"ess_bulk_min":   OrNull(s.MinESSBulk()),
		"ess_per_sec":    OrNull(s.MinESSPerSecond()),
		"seconds":        res.Elapsed.Seconds(),
		"steps":          res.Sampling().Steps,
	}
	for k, v := range extra {
		row[k] = v
	}
	return row
}

// Write prints row as one line of JSON, the first time after a Header
// line.
func Write(w io.Writer, row map[string]any) error {
	var err error
	headerOnce.Do(func() { err = json.NewEncoder(w).Encode(Header()) })
	if err != nil {
		return err
	}
	return json.NewEncoder(w).Encode(row)
}

// headerOnce writes the Header before a process's first row.
var headerOnce sync.Once

// OrNull turns NaN and ±Inf, which JSON cannot carry, into null.
func OrNull(v float64) any {
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return nil
	}
	return v
}

// ESSPerSecond returns the smallest, median and largest bulk ESS over the
// coordinates, per second of sampling (summed over chains).
func ESSPerSecond(res *exactmh.Result) (lo, median, hi float64) {
	secs := res.Sampling().Time.Seconds()
	e := make([]float64, res.Dim)
	for j := range e {
		e[j] = diagnostics.ESSBulk(res.Samples(j)) / secs
		if math.IsNaN(e[j]) {
			e[j] = 0
		}
	}
	slices.Sort(e)
	d := len(e)
	return e[0], (e[(d-1)/2] + e[d/2]) / 2, e[d-1]
}

// Common holds the flags every example accepts.
type Common struct {
	Seed   uint64
	Chains int
	Draws  int
	JSON   bool
	Quick  bool
	Quiet  bool
	Out    string
}

// RegisterCommon defines -seed, -chains, -draws, -json, -quick, -quiet and
// -out on the default flag set, with the example's defaults for chains and
// draws (draws 0: the example's own budget decides). Call before
// flag.Parse.
func RegisterCommon(chains, draws int) *Common {
	c := &Common{}
	flag.Uint64Var(&c.Seed, "seed", 1, "seed of the data and the chains")
	flag.IntVar(&c.Chains, "chains", chains, "chains per kernel run")
	flag.IntVar(&c.Draws, "draws", draws, "draws per chain (0: as many as the time budget allows)")
	flag.BoolVar(&c.JSON, "json", false, "print one JSON object per kernel run instead of tables")
	flag.BoolVar(&c.Quick, "quick", false, "a short smoke run")
	flag.BoolVar(&c.Quiet, "quiet", false, "no progress on stderr")
	flag.StringVar(&c.Out, "out", "", "write Stan CSV files (one per chain and run) and PNG figures to this directory")
	return c
}

// Progress returns the stock progress printer on stderr, or nil with -quiet.
func (c *Common) Progress() exactmh.Recorder {
	if c.Quiet {
		return nil
	}
	return progress.New(os.Stderr, 2*time.Second)
}

// SaveStanCSV writes every chain of res to DIR/<name>_<chain>.csv when -out
// is set (name should identify the run: kernel and setting).
func (c *Common) SaveStanCSV(res *exactmh.Result, name string, names []string) error {
	if c.Out == "" {
		return nil
	}
	if err := os.MkdirAll(c.Out, 0o755); err != nil {
		return err
	}
	for ch := range res.Chains {
		path := filepath.Join(c.Out, fmt.Sprintf("%s_%d.csv", fileName(name), ch+1))
		f, err := os.Create(path)
		if err != nil {
			return err
		}
		err = stancsv.Write(f, res, ch, &stancsv.Options{Names: names})
		if cerr := f.Close(); err == nil {
			err = cerr
		}
		if err != nil {
			return fmt.Errorf("%s: %w", path, err)
		}
	}
	return nil
}

// fileName makes a run name safe as a file name.
func fileName(s string) string {
	return strings.Map(func(r rune) rune {
		switch {
		case r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z', r >= '0' && r <= '9', r == '-', r == '_', r == '.':
			return r
		}
		return '_'
	}, s)
}

// Header returns the row that opens a file of -json rows: the machine (CPU
// model, cores, GOOS/GOARCH), the Go version, the date, the module's
// commit (from the build's VCS stamp; "unknown" under go run without
// one) and the command, so that every measured figure says where it came
// from. Readers skip it by its "header" field.
func Header() map[string]any {
	commit, modified := "unknown", false
	if bi, ok := debug.ReadBuildInfo(); ok {
		for _, s := range bi.Settings {
			switch s.Key {
			case "vcs.revision":
				commit = s.Value
			case "vcs.modified":
				modified = s.Value == "true"
			}
		}
	}
	return map[string]any{
		"header":   true,
		"machine":  fmt.Sprintf("%s, %d cores, %s/%s", cpuModel(), runtime.NumCPU(), runtime.GOOS, runtime.GOARCH),
		"go":       runtime.Version(),
		"date":     time.Now().UTC().Format(time.RFC3339),
		"commit":   commit,
		"modified": modified,
		"command":  strings.Join(os.Args, " "),
	}
}

// IsHeader reports whether a row read back from JSON is a Header.
func IsHeader(row map[string]any) bool { return row["header"] == true }

// cpuModel returns the CPU's model name from /proc/cpuinfo, or "unknown".
func cpuModel() string {
	b, err := os.ReadFile("/proc/cpuinfo")
	if err != nil {
		return "unknown"
	}
	for _, line := range strings.Split(string(b), "\n") {
		if k, v, ok := strings.Cut(line, ":"); ok && strings.TrimSpace(k) == "model name" {
			return strings.TrimSpace(v)
		}
	}
	return "unknown"
}

// ExportCSV writes the data of an example for its Stan program: dir/name.csv,
// the header cols and n rows that row appends (without the newline), and
// dir/name_constants.csv, rows "key,value": n, then the key–value pairs of
// consts. HexFloat appends a float64 exactly, as R reads it.
func ExportCSV(dir, name string, cols []string, n int, row func(b []byte, i int) []byte, consts ...string) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	f, err := os.Create(filepath.Join(dir, name+".csv"))
	if err != nil {
		return err
	}
	w := bufio.NewWriter(f)
	w.WriteString(strings.Join(cols, ",") + "\n")
	var b []byte
	for i := range n {
		b = append(row(b[:0], i), '\n')
		w.Write(b)
	}
	err = w.Flush()
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return err
	}
	c := fmt.Sprintf("key,value\nn,%d\n", n)
	for k := 0; k+1 < len(consts); k += 2 {
		c += consts[k] + "," + consts[k+1] + "\n"
	}
	return os.WriteFile(filepath.Join(dir, name+"_constants.csv"), []byte(c), 0o644)
}

// ExportRegression is ExportCSV of a regression's data: dir/name.csv with
// the header y,x1,…,xd and a row per datum (y as a decimal, the n×d
// row-major x in hexadecimal), and the constants n, d and consts.
func ExportRegression(dir, name string, x, y []float64, d int, consts ...string) error {
	cols := []string{"y"}
	for j := range d {
		cols = append(cols, fmt.Sprintf("x%d", j+1))
	}
	return ExportCSV(dir, name, cols, len(y), func(b []byte, i int) []byte {
		b = strconv.AppendFloat(b, y[i], 'g', -1, 64)
		for _, v := range x[i*d : (i+1)*d] {
			b = HexFloat(append(b, ','), v)
		}
		return b
	}, append([]string{"d", strconv.Itoa(d)}, consts...)...)
}

// HexFloat appends v in hexadecimal (strconv's 'x' format), exact.
func HexFloat(b []byte, v float64) []byte { return strconv.AppendFloat(b, v, 'x', -1, 64) }

// CPUTime returns the process's user and system CPU time so far (every
// thread's), for figures that must not depend on the machine's load.
func CPUTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// FindFlights returns the flights file: flagPath if set, else the bundled
// examples/data/flights-3m.parquet found from the working directory (the
// repository root, an example's directory or examples/).
func FindFlights(flagPath string) (string, error) {
	if flagPath != "" {
		return flagPath, nil
	}
	for _, p := range []string{
		filepath.Join("examples", "data", "flights-3m.parquet"),
		filepath.Join("..", "data", "flights-3m.parquet"),
		filepath.Join("data", "flights-3m.parquet"),
	} {
		if _, err := os.Stat(p); err == nil {
			return p, nil
		}
	}
	return "", errors.New("examples/data/flights-3m.parquet not found: run from the repository's root, or pass -data FILE")
}

// StartCPUProfile starts a CPU profile written to path (nothing where path
// is "", an example's -cpuprofile unset), exiting on an error, and returns
// the function that stops it and closes the file.
func StartCPUProfile(path string) (stop func()) {
	if path == "" {
		return func() {}
	}
	f, err := os.Create(path)
	if err != nil {
		log.Fatal(err)
	}
	if err := pprof.StartCPUProfile(f); err != nil {
		log.Fatal(err)
	}
	return func() {
		pprof.StopCPUProfile()
		if err := f.Close(); err != nil {
			log.Fatal(err)
		}
	}
}
