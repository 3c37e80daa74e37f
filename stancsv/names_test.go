// Copyright ©2026 The exactmh Authors. All rights reserved.
// Use of this source code is governed by a BSD-style
// license that can be found in the LICENSE file.

package stancsv_test

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/exactmh/exactmh"
	"github.com/exactmh/exactmh/stancsv"
)

// Posterior.Names become the files' column names, streamed or written,
// made Stan-safe (SafeNames), and Summary's row labels; Options.Names
// still win when set.
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
	safe := []string{"Intercept", "origin_ATL"}
	if got := f.ParamNames(); !slices.Equal(got, safe) {
		t.Errorf("streamed columns %v, want %v", got, safe)
	}
	var buf bytes.Buffer
	if err := stancsv.Write(&buf, res, 0, &stancsv.Options{SigFigs: 9}); err != nil {
		t.Fatal(err)
	}
	w, err := stancsv.Read(&buf)
	if err != nil {
		t.Fatal(err)
	}
	if got := w.ParamNames(); !slices.Equal(got, safe) {
		t.Errorf("written columns %v, want %v", got, safe)
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

// SafeNames keeps Stan's names, turns brackets into CmdStan's dots and
// everything else into identifiers that R's make.names leaves alone, each
// distinct.
func TestSafeNames(t *testing.T) {
	for _, c := range []struct{ in, want []string }{
		{[]string{"(Intercept)", "log(distance)", "date.hour.sin", "origin=ATL", "x1"},
			[]string{"Intercept", "log_distance", "date_hour_sin", "origin_ATL", "x1"}},
		{[]string{"theta.1", "theta.2", "beta[1,2]", "beta[ 2 , 1 ]", "mu"},
			[]string{"theta.1", "theta.2", "beta.1.2", "beta.2.1", "mu"}},
		{[]string{"a b", "a-b", "a_b", "", "()", "2x", "if", "TRUE.1", "w__", "_z_"},
			[]string{"a_b", "a_b_2", "a_b_3", "x", "x_2", "x_2x", "if_", "TRUE_.1", "w", "z"}},
		{[]string{"dow=Tue", "month=Feb", "log1p(n)", "delay>15"},
			[]string{"dow_Tue", "month_Feb", "log1p_n", "delay_15"}},
		{[]string{"sd_g__Intercept", "sd_g__log_x", "a___b.1"},
			[]string{"sd_g__Intercept", "sd_g__log_x", "a___b.1"}},
	} {
		got := stancsv.SafeNames(c.in)
		if !slices.Equal(got, c.want) {
			t.Errorf("SafeNames(%q) = %q, want %q", c.in, got, c.want)
		}
		seen := map[string]bool{}
		for _, n := range got {
			if seen[n] || strings.HasSuffix(n, "__") {
				t.Errorf("SafeNames(%q): %q repeated or a sampler name", c.in, n)
			}
			seen[n] = true
		}
	}
}

// TestRName checks the spelling rstan shows after read_stan_csv: a Stan
// array's column name.k (name.i.j) in brackets, every other name as it
// is; and that a column's RName is never another column's.
func TestRName(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{"Intercept.1", "Intercept[1]"}, {"Intercept.12", "Intercept[12]"},
		{"beta.2.1", "beta[2,1]"}, {"TRUE_.1", "TRUE_[1]"}, {"a___b.1", "a___b[1]"},
		{"u_g_g0", "u_g_g0"}, {"sd_g__Intercept", "sd_g__Intercept"}, {"lp__", "lp__"},
		{"x", "x"}, {"x.", "x."}, {"x.a", "x.a"}, {"x.1a", "x.1a"}, {"1.2", "1.2"}, {"", ""},
	} {
		if got := stancsv.RName(c.in); got != c.want {
			t.Errorf("RName(%q) = %q, want %q", c.in, got, c.want)
		}
		if got := stancsv.RName(c.want); got != c.want {
			t.Errorf("RName(%q) = %q, want it unchanged (RName of RName)", c.want, got)
		}
	}
	cols := stancsv.SafeNames([]string{"Intercept[1]", "Intercept_1", "Intercept.1", "u_g[g0]", "u_g_g0", "b[1,2]", "b.1.2"})
	seen := map[string]string{}
	for _, c := range cols {
		r := stancsv.RName(c)
		if o, ok := seen[r]; ok {
			t.Errorf("columns %q and %q are both shown as %q", o, c, r)
		}
		seen[r] = c
	}
}

// TestSafeNamesManyCollisions gives SafeNames 200,000 names that all
// flatten to the same one (non-ASCII level names): every result is
// distinct, in order, and the suffixes are found in linear time (each
// name used to try every suffix below its own; the guard fails the test
// after two minutes rather than hang it).
func TestSafeNamesManyCollisions(t *testing.T) {
	const n = 200000
	names := make([]string, n)
	for i := range names {
		names[i] = "u_g[ü]"
	}
	done := make(chan []string, 1)
	go func() { done <- stancsv.SafeNames(names) }()
	select {
	case out := <-done:
		seen := make(map[string]bool, n)
		for i, s := range out {
			if seen[s] {
				t.Fatalf("name %d: %q repeated", i, s)
			}
			seen[s] = true
		}
		if out[0] != "u_g" || out[1] != "u_g_2" || out[n-1] != fmt.Sprintf("u_g_%d", n) {
			t.Errorf("names %q, %q … %q", out[0], out[1], out[n-1])
		}
	case <-time.After(2 * time.Minute):
		t.Fatal("SafeNames still running after two minutes")
	}
}

// TestNameMapVerbatim writes a run whose parameter names a Stan CSV
// header cannot hold (levels with non-ASCII letters, which SafeNames
// flattens to u_g, u_g_2, …): the file maps each changed column name to
// the name verbatim in the "parameter_names" comments, which Read gives
// back in Config; names kept as they are get no entry.
func TestNameMapVerbatim(t *testing.T) {
	g := boxed(t, 100, 1)
	res, err := exactmh.Sample(context.Background(), g.Posterior, exactmh.MH{}, &exactmh.Settings{Chains: 1, Draws: 20, Warmup: 20, Seed: 1, Init: g.Mean})
	if err != nil {
		t.Fatal(err)
	}
	names := []string{"u_g[Zürich]", "beta"}
	var buf bytes.Buffer
	if err := stancsv.Write(&buf, res, 0, &stancsv.Options{Names: names}); err != nil {
		t.Fatal(err)
	}
	f, err := stancsv.Read(bytes.NewReader(buf.Bytes()))
	if err != nil {
		t.Fatal(err)
	}
	if got := f.ParamNames(); !slices.Equal(got, []string{"u_g_Z_rich", "beta"}) {
		t.Fatalf("columns %q", got)
	}
	if v, ok := f.ConfigValue("parameter_names.u_g_Z_rich"); !ok || v != names[0] {
		t.Errorf("parameter_names.u_g_Z_rich = %q (%v), want %q", v, ok, names[0])
	}
	if _, ok := f.ConfigValue("parameter_names.beta"); ok {
		t.Error("a name kept as it is has a parameter_names entry")
	}
}
