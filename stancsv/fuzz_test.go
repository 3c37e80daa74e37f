// Copyright ©2026 The exactmh Authors. All rights reserved.
// Use of this source code is governed by a BSD-style
// license that can be found in the LICENSE file.

package stancsv_test

import (
	"bytes"
	"context"
	"errors"
	"math"
	"os"
	"testing"

	"github.com/exactmh/exactmh"
	"github.com/exactmh/exactmh/stancsv"
)

// FuzzReadStanCSV feeds Read arbitrary files cut at an arbitrary point,
// seeded with files of exactmh (Write), CmdStan and rstan. Read must never
// panic; what it reads must be rectangular; strict and DropPartial reads
// of a file Read accepts must agree; and the rows DropPartial recovers from
// a cut file must be a prefix of the whole file's — a cut never changes a
// value.
//
//	go test -run '^$' -fuzz FuzzReadStanCSV -fuzztime 10s ./stancsv
func FuzzReadStanCSV(f *testing.F) {
	g := boxed(f, 60, 1)
	res, err := exactmh.Sample(context.Background(), g.Posterior, exactmh.MH{}, &exactmh.Settings{Chains: 1, Warmup: 20, Draws: 8, Thin: 2, Seed: 1, Init: g.Mean})
	if err != nil {
		f.Fatal(err)
	}
	var buf bytes.Buffer
	if err := stancsv.Write(&buf, res, 0, nil); err != nil {
		f.Fatal(err)
	}
	seeds := [][]byte{buf.Bytes(), []byte("a__,b\n0.1,0.25\n0.2,-0.451625\n"), []byte("# seed=1\n# save_warmup=1\n# warmup=2\nx\n1\n2\n3\n")}
	for _, name := range []string{"testdata/bernoulli_cmdstan.csv", "testdata/logreg_rstan_1.csv"} {
		b, err := os.ReadFile(name)
		if err != nil {
			f.Fatal(err)
		}
		seeds = append(seeds, b)
	}
	for _, s := range seeds {
		f.Add(s, uint16(len(s)))
		f.Add(s, uint16(len(s)*2/3))
	}
	f.Fuzz(func(t *testing.T, file []byte, cut uint16) {
		whole, err := stancsv.Read(bytes.NewReader(file))
		if err == nil {
			rectangular(t, whole)
			again, err := stancsv.ReadOptions{DropPartial: true}.Read(bytes.NewReader(file))
			if err != nil || !sameRows(rows(whole), rows(again)) || len(again.Warnings) != 0 {
				t.Fatalf("DropPartial reads a file Read accepts differently: %v", err)
			}
		} else if !errors.Is(err, stancsv.ErrPartialLine) {
			return
		} else if whole, err = (stancsv.ReadOptions{DropPartial: true}).Read(bytes.NewReader(file)); err != nil {
			return
		}
		part, err := stancsv.ReadOptions{DropPartial: true}.Read(bytes.NewReader(file[:int(cut)%(len(file)+1)]))
		if err != nil {
			return
		}
		rectangular(t, part)
		all, some := rows(whole), rows(part)
		if len(some) > len(all) || !sameRows(some, all[:len(some)]) {
			t.Fatalf("a cut file's rows are not a prefix of the whole file's:\n%v\n%v", some, all)
		}
	})
}

func rectangular(t *testing.T, f *stancsv.File) {
	t.Helper()
	if len(f.Columns) == 0 {
		t.Fatal("no columns")
	}
	for _, r := range rows(f) {
		if len(r) != len(f.Columns) {
			t.Fatalf("row of %d values, %d columns", len(r), len(f.Columns))
		}
	}
}

// rows returns the warmup rows and the draws, in file order.
func rows(f *stancsv.File) [][]float64 {
	return append(append([][]float64(nil), f.Warmup...), f.Draws...)
}

func sameRows(a, b [][]float64) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if len(a[i]) != len(b[i]) {
			return false
		}
		for j := range a[i] {
			if math.Float64bits(a[i][j]) != math.Float64bits(b[i][j]) {
				return false
			}
		}
	}
	return true
}
