// Copyright ©2026 The exactmh Authors. All rights reserved.
// Use of this source code is governed by a BSD-style
// license that can be found in the LICENSE file.

package data

import (
	"bytes"
	"os"
	"path/filepath"
	"runtime"
	"testing"
)

// The readers take any bytes: a Frame or an error, never a panic, a hang
// or a crash of the process. The seeds are the files in testdata.

func addSeeds(f *testing.F, pattern string) {
	files, err := filepath.Glob(filepath.Join("testdata", pattern))
	if err != nil || len(files) == 0 {
		f.Fatalf("no seed files %s: %v", pattern, err)
	}
	for _, name := range files {
		b, err := os.ReadFile(name)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
}

// fuzzAllocCap is the most a fuzzed input of n bytes may allocate in
// all, reading and building included: the readers' cap on a single
// allocation (cappedAllocator: 64 MiB plus 64 times the file's size)
// plus room for the 5,000 rows fuzzOpts lets through and the designs
// exercise builds from them. An input that allocates more is a failure
// even if the machine could afford it.
func fuzzAllocCap(n int) uint64 { return 256<<20 + 128*uint64(n) }

// checkAllocs runs read and fails if it allocated more than fuzzAllocCap.
func checkAllocs(t *testing.T, n int, read func()) {
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	read()
	runtime.ReadMemStats(&after)
	if got := after.TotalAlloc - before.TotalAlloc; got > fuzzAllocCap(n) {
		t.Fatalf("a %d-byte input allocated %d bytes, more than the cap %d", n, got, fuzzAllocCap(n))
	}
}

// fuzzOpts bounds the rows a fuzzed file may decode to: a few bytes of
// run-length encoding can stand for billions of rows.
var fuzzOpts = &ReadOptions{Limit: 5000}

// exercise checks a Frame's invariants and builds designs from its
// columns, each in every way its type allows.
func exercise(t *testing.T, f *Frame) {
	for _, c := range f.cols {
		var n int
		switch c.typ {
		case Float:
			n = len(c.f)
		case Int, Bool, Time:
			n = len(c.i)
		case String:
			n = len(c.codes)
			for _, k := range c.codes {
				if k < 0 || int(k) >= len(c.levels) {
					t.Fatalf("column %q: code %d of %d levels", c.name, k, len(c.levels))
				}
			}
		}
		if n != f.n || c.miss != nil && len(c.miss) != f.n {
			t.Fatalf("column %q has %d values (%d missing flags), the Frame %d rows", c.name, n, len(c.miss), f.n)
		}
	}
	cols := f.Columns()
	for _, resp := range cols {
		if resp.Type == String || resp.Type == Time {
			continue
		}
		for _, c := range cols {
			var terms []Term
			switch c.Type {
			case Float, Int, Bool:
				terms = []Term{Num(c.Name), Log(c.Name), Log1p(c.Name), Above(c.Name, 0)}
				if c.Type != Float {
					terms = append(terms, Categorical(c.Name, TopK(2)))
				}
			case String:
				terms = []Term{Categorical(c.Name), Categorical(c.Name, TopK(1), Reference("other"))}
			case Time:
				terms = []Term{HourOfDay(c.Name), DayOfWeek(c.Name), Month(c.Name)}
			}
			for _, term := range terms {
				for _, drop := range []bool{false, true} {
					d, err := Spec{Response: Num(resp.Name), Terms: []Term{term}, DropMissing: drop}.Build(f)
					if err != nil {
						continue
					}
					if len(d.X) != d.N*d.D || len(d.Y) != d.N || len(d.Names) != d.D || d.N+d.Dropped != f.n {
						t.Fatalf("%s: N %d D %d len(X) %d len(Y) %d Dropped %d", term, d.N, d.D, len(d.X), len(d.Y), d.Dropped)
					}
				}
			}
		}
		break // one response is enough
	}
}

func FuzzReadParquet(f *testing.F) {
	addSeeds(f, "*.parquet")
	f.Fuzz(func(t *testing.T, b []byte) {
		checkAllocs(t, len(b), func() {
			fr, err := readParquet(bytes.NewReader(b), "fuzz.parquet", fuzzOpts)
			if err == nil {
				exercise(t, fr)
			}
		})
	})
}

func FuzzReadArrow(f *testing.F) {
	addSeeds(f, "*.arrow*")
	f.Fuzz(func(t *testing.T, b []byte) {
		checkAllocs(t, len(b), func() {
			fr, err := readArrow(bytes.NewReader(b), "fuzz.arrow", fuzzOpts)
			if err == nil {
				exercise(t, fr)
			}
		})
	})
}

func FuzzReadCSV(f *testing.F) {
	addSeeds(f, "*.csv")
	f.Add([]byte("a,b\n1,x\n2,\n\"3\",NA\n"))
	f.Add([]byte("t,y\n2024-01-01T10:00:00Z,1\n2024-01-02,0\n"))
	f.Fuzz(func(t *testing.T, b []byte) {
		checkAllocs(t, len(b), func() {
			fr, err := readCSV(bytes.NewReader(b), "fuzz.csv", fuzzOpts)
			if err == nil {
				exercise(t, fr)
			}
		})
	})
}
