// Package report writes the examples' -json rows: one JSON object per
// kernel run with the fields every example shares (kernel, exact,
// accept_rate, mean_batch, evals_per_step, ess_bulk_min, ess_per_sec,
// seconds, status, steps) and the experiment's own; and the flags and
// Stan CSV output every example shares (Common).
package report

import (
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/exactmh/exactmh"
	"github.com/exactmh/exactmh/diagnostics"
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

// Write prints row as one line of JSON.
func Write(w io.Writer, row map[string]any) error {
	return json.NewEncoder(w).Encode(row)
}

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
	return exactmh.NewProgress(os.Stderr, 2*time.Second)
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
