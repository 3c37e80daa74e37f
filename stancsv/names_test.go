// Copyright ©2026 The exactmh Authors. All rights reserved.
// Use of this source code is governed by a BSD-style
// license that can be found in the LICENSE file.

package stancsv_test

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/exactmh/exactmh"
	"github.com/exactmh/exactmh/stancsv"
)

// Posterior.Names become the files' column names, streamed or written,
// and Summary's row labels; Options.Names still win when set.
func TestPosteriorNamesFlow(t *testing.T) {
	g := boxed(t, 100, 1)
	post := *g.Posterior
	post.Names = []string{"(Intercept)", "origin=ATL"}
	dir := t.TempDir()
	set := exactmh.Settings{Chains: 1, Draws: 20, Warmup: 20, Seed: 3, Init: g.Mean,
		Recorder: stancsv.NewFiles(filepath.Join(dir, "named"), nil)}
	res, err := exactmh.Sample(context.Background(), &post, exactmh.MH{}, &set)
	if err != nil {
		t.Fatal(err)
	}
	raw, err := os.ReadFile(filepath.Join(dir, "named_1.csv"))
	if err != nil {
		t.Fatal(err)
	}
	f, err := stancsv.Read(bytes.NewReader(raw))
	if err != nil {
		t.Fatal(err)
	}
	if got := f.ParamNames(); !slices.Equal(got, post.Names) {
		t.Errorf("streamed columns %v, want %v", got, post.Names)
	}
	var buf bytes.Buffer
	if err := stancsv.Write(&buf, res, 0, &stancsv.Options{SigFigs: 9}); err != nil {
		t.Fatal(err)
	}
	w, err := stancsv.Read(&buf)
	if err != nil {
		t.Fatal(err)
	}
	if got := w.ParamNames(); !slices.Equal(got, post.Names) {
		t.Errorf("written columns %v, want %v", got, post.Names)
	}
	buf.Reset()
	if err := stancsv.Write(&buf, res, 0, &stancsv.Options{Names: []string{"a", "b"}}); err != nil {
		t.Fatal(err)
	}
	if w, err = stancsv.Read(&buf); err != nil || !slices.Equal(w.ParamNames(), []string{"a", "b"}) {
		t.Errorf("Options.Names did not override: %v, %v", w.ParamNames(), err)
	}
	s := res.Summary().String()
	if !strings.Contains(s, "(Intercept)") || !strings.Contains(s, "origin=ATL") {
		t.Errorf("summary does not use the posterior's names:\n%s", s)
	}
}
