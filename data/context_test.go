// Copyright ©2026 The exactmh Authors. All rights reserved.
// Use of this source code is governed by a BSD-style
// license that can be found in the LICENSE file.

package data_test

import (
	"context"
	"errors"
	"path/filepath"
	"strings"
	"testing"

	"github.com/exactmh/exactmh/data"
)

// TestReadFileContextStops reads the test files under a cancelled
// context: each read stops with an error wrapping context.Canceled, and
// under a live one reads the file.
func TestReadFileContextStops(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	for _, name := range []string{"small.csv", "small.parquet", "small.arrow"} {
		path := filepath.Join("testdata", name)
		if _, err := data.ReadFileContext(context.Background(), path, nil); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if _, err := data.ReadFileContext(ctx, path, nil); !errors.Is(err, context.Canceled) {
			t.Errorf("%s under a cancelled context: error %v, want context.Canceled", name, err)
		}
	}
}

// TestBuildContextStops builds a design under a cancelled context: it
// stops with an error wrapping context.Canceled; under a live one it is
// Build's.
func TestBuildContextStops(t *testing.T) {
	f, err := data.ReadFile(filepath.Join("testdata", "small.csv"), nil)
	if err != nil {
		t.Fatal(err)
	}
	cols := f.Columns()
	var num string
	for _, c := range cols {
		if c.Type == data.Float || c.Type == data.Int {
			num = c.Name
			break
		}
	}
	if num == "" {
		t.Fatalf("no numeric column in %v", cols)
	}
	s := data.Spec{Response: data.Num(num)}
	if _, err := s.BuildContext(context.Background(), f); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := s.BuildContext(ctx, f); !errors.Is(err, context.Canceled) {
		t.Errorf("BuildContext under a cancelled context: error %v, want context.Canceled", err)
	}
}

// TestCategoricalRepeatedOption gives a Categorical term an option twice
// (sd=1 then sd=2, which took sd = 2 without a word): Build refuses it,
// naming the term and the option.
func TestCategoricalRepeatedOption(t *testing.T) {
	f, err := data.ReadFile(filepath.Join("testdata", "small.csv"), nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, opts := range [][]data.CatOption{
		{data.NormalLevels(1), data.NormalLevels(2)},
		{data.TopK(2), data.TopK(3)},
		{data.Reference("ATL"), data.Reference("ORD")},
	} {
		_, err := data.Spec{Response: data.Num("delay"), Terms: []data.Term{data.Categorical("origin", opts...)}}.Build(f)
		if err == nil || !strings.Contains(err.Error(), "given twice") || !strings.Contains(err.Error(), `Categorical("origin"`) {
			t.Errorf("a repeated option: error %v, want one naming the term and the option", err)
		}
	}
}
