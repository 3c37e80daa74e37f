// Copyright ©2026 The exactmh Authors. All rights reserved.
// Use of this source code is governed by a BSD-style
// license that can be found in the LICENSE file.

package data

import (
	"os"
	"slices"
	"testing"
	"time"
)

// flightsPath is the shared 3-million-row file, beside the repository.
const flightsPath = "../../shared/data/flights/flights-3m.parquet"

var flightsSpec = Spec{
	Response: Above("delay", 15),
	Terms: []Term{
		Log("distance"), HourOfDay("date"), DayOfWeek("date"), Month("date"),
		Categorical("origin", TopK(10)), Categorical("destination", TopK(10)),
	},
}

func flightsFile(tb testing.TB) {
	tb.Helper()
	if _, err := os.Stat(flightsPath); err != nil {
		tb.Skipf("no flights file: %v", err)
	}
}

// TestFlights loads the real file and checks the figures of its README:
// 3,000,000 rows, about 20.0% delayed by more than 15 minutes, the
// busiest origins ORD 166,341 and DFW 157,162.
func TestFlights(t *testing.T) {
	if testing.Short() {
		t.Skip("the 3-million-row file takes seconds and a gigabyte")
	}
	flightsFile(t)
	t0 := time.Now()
	f, err := ReadParquet(flightsPath, nil)
	if err != nil {
		t.Fatal(err)
	}
	t1 := time.Now()
	d, err := flightsSpec.Build(f)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("read %v, build %v: N = %d, D = %d", t1.Sub(t0).Round(time.Millisecond), time.Since(t1).Round(time.Millisecond), d.N, d.D)
	if f.Len() != 3_000_000 || d.N != 3_000_000 || d.Dropped != 0 {
		t.Fatalf("Len %d, N %d, Dropped %d", f.Len(), d.N, d.Dropped)
	}
	want := []Column{{"date", Time}, {"delay", Int}, {"distance", Int}, {"origin", String}, {"destination", String}}
	if !slices.Equal(f.Columns(), want) {
		t.Errorf("Columns %v", f.Columns())
	}
	var late float64
	for _, y := range d.Y {
		late += y
	}
	if share := late / float64(d.N); share < 0.1995 || share >= 0.2005 {
		t.Errorf("share delayed > 15 min: %.4f, want 20.0%%", share)
	}
	counts := map[string]int{}
	for i := range d.N {
		for _, k := range []string{"ORD", "DFW", "ATL"} {
			counts[k] += int(d.X[i*d.D+slices.Index(d.Names, "origin="+k)])
		}
	}
	if counts["ORD"] != 166341 || counts["DFW"] != 157162 || counts["ATL"] != 124711 {
		t.Errorf("origins %v, want ORD 166341, DFW 157162, ATL 124711", counts)
	}
	// 1 + 1 + 2 + 6 weekdays + 5 or 6 months (the last row is 2001-07-01 00:00) + 10 + 10.
	if d.D != 35 && d.D != 36 {
		t.Errorf("D = %d: %q", d.D, d.Names)
	}
	if d.Names[0] != "Intercept" || d.Names[1] != "log(distance)" || d.Names[2] != "date.hour.sin" {
		t.Errorf("Names %q", d.Names)
	}
}

// BenchmarkFlightsLoad reads the flights file and builds the design.
func BenchmarkFlightsLoad(b *testing.B) {
	flightsFile(b)
	for b.Loop() {
		f, err := ReadParquet(flightsPath, nil)
		if err != nil {
			b.Fatal(err)
		}
		if _, err := flightsSpec.Build(f); err != nil {
			b.Fatal(err)
		}
	}
}
