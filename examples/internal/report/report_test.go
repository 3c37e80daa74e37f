package report

import (
	"bytes"
	"context"
	"encoding/json"
	"math"
	"testing"

	"github.com/exactmh/exactmh"
	"github.com/exactmh/exactmh/model"
	"gonum.org/v1/gonum/mat"
)

func TestRow(t *testing.T) {
	e, err := model.NewGaussianMean([]float64{1, 2, 3, 4, 0.5, 1.5}, 2, mat.NewSymDense(2, []float64{1, 0, 0, 1}))
	if err != nil {
		t.Fatal(err)
	}
	res, err := exactmh.Sample(context.Background(), &exactmh.Posterior{Energy: e}, exactmh.MH{},
		&exactmh.Settings{Chains: 2, Draws: 500, Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	if err := Write(&buf, Row(res, map[string]any{"tv": 0.5, "kernel": "renamed"})); err != nil {
		t.Fatal(err)
	}
	// The first row a process writes is its Header.
	var hdr, got map[string]any
	dec := json.NewDecoder(&buf)
	if err := dec.Decode(&hdr); err != nil {
		t.Fatal(err)
	}
	if !IsHeader(hdr) || hdr["machine"] == "" || hdr["date"] == "" || hdr["commit"] == "" || hdr["command"] == "" {
		t.Errorf("header %v", hdr)
	}
	if err := dec.Decode(&got); err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{"kernel", "exact", "accept_rate", "mean_batch", "evals_per_step", "ess_bulk_min", "ess_per_sec", "seconds", "tv"} {
		if _, ok := got[k]; !ok {
			t.Errorf("row lacks %q: %s", k, buf.String())
		}
	}
	if got["kernel"] != "renamed" || got["mean_batch"].(float64) != 3 {
		t.Errorf("row %s", buf.String())
	}
	lo, med, hi := ESSPerSecond(res)
	if !(lo > 0 && lo <= med && med <= hi) {
		t.Errorf("ESS/s %v, %v, %v", lo, med, hi)
	}
	if OrNull(math.NaN()) != nil || OrNull(math.Inf(1)) != nil || OrNull(2) != 2.0 {
		t.Error("OrNull")
	}
}
