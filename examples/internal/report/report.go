// Package report writes the examples' -json rows: one JSON object per
// kernel run with the fields every example shares (kernel, exact,
// accept_rate, mean_batch, evals_per_step, ess_bulk_min, ess_per_sec,
// seconds, status) and the experiment's own.
package report

import (
	"encoding/json"
	"io"
	"math"
	"slices"

	"github.com/exactmh/exactmh"
)

// Row returns the shared fields of a run, measured over its sampling phase:
// ESS is the smallest bulk ESS over coordinates, ESS/s divides it by the
// sampling time summed over chains (per core-second), and seconds is the
// run's wall time. extra adds or overrides fields.
func Row(res *exactmh.Result, extra map[string]any) map[string]any {
	s := res.Summary()
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
		e[j] = exactmh.ESSBulk(res.Samples(j)) / secs
		if math.IsNaN(e[j]) {
			e[j] = 0
		}
	}
	slices.Sort(e)
	d := len(e)
	return e[0], (e[(d-1)/2] + e[d/2]) / 2, e[d-1]
}
