// Copyright ©2026 The exactmh Authors. All rights reserved.
// Use of this source code is governed by a BSD-style
// license that can be found in the LICENSE file.

package main

import (
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestScalingOriginal checks the map of the sampled coefficients onto the
// original scale against the model it inverts: the linear predictor of
// the standardised features, θ_0 + Σ θ_j (x_j − c_j)/s_j, must equal
// b_0 + Σ b_j x_j at every x.
func TestScalingOriginal(t *testing.T) {
	sc := &scaling{center: []float64{0, 3, -2}, scale: []float64{1, 0.5, 4}, intercept: true, first: 2}
	row := []float64{7, 7, 0.3, -1.2, 2.5} // two sampler columns, then θ
	b := []float64{sc.original(row, 2), sc.original(row, 3), sc.original(row, 4)}
	for _, x := range [][2]float64{{0, 0}, {1, 2}, {-3, 5}} {
		want := row[2] + row[3]*(x[0]-3)/0.5 + row[4]*(x[1]+2)/4
		got := b[0] + b[1]*x[0] + b[2]*x[1]
		if math.Abs(got-want) > 1e-12 {
			t.Errorf("x = %v: original-scale predictor %g, sampled %g", x, got, want)
		}
	}
}

// TestGlmerFileCoversSets checks that the committed glmer fits name every
// fixed effect the way the exactmh command names its columns, for every
// set of the suite: an Intercept, a tau_ per grouping factor of the terms,
// and a CPU time.
func TestGlmerFileCoversSets(t *testing.T) {
	ref, err := readGlmer(filepath.Join("..", "..", "figures", "bench", "multilevel_real_glmer.txt"))
	if err != nil {
		t.Fatal(err)
	}
	for _, ds := range sets {
		g := ref[ds.name]
		if g == nil {
			t.Errorf("%s: no glmer fit", ds.name)
			continue
		}
		if _, ok := g.est["Intercept"]; !ok {
			t.Errorf("%s: no Intercept in glmer's fit", ds.name)
		}
		for _, term := range strings.Split(ds.terms, ",") {
			if strings.HasPrefix(term, "(1|") {
				name := "tau_" + strings.TrimSuffix(strings.TrimPrefix(term, "(1|"), ")")
				if _, ok := g.est[name]; !ok {
					t.Errorf("%s: no %s in glmer's fit", ds.name, name)
				}
			}
		}
		if !(g.cpu > 0) {
			t.Errorf("%s: glmer CPU %v", ds.name, g.cpu)
		}
	}
}

// TestMergeFigures checks that writing one set's block keeps the others
// and the suite's order, and that the README's section is regenerated
// from the file.
func TestMergeFigures(t *testing.T) {
	dir := t.TempDir()
	fig := filepath.Join(dir, "fig.txt")
	a := block{name: "verbagg", kv: [][2]string{{"kernel", "A"}, {"status", "completed"}}, lines: []string{"# a"}}
	b := block{name: "insteval", kv: [][2]string{{"kernel", "B"}}, lines: []string{"# b"}}
	if err := mergeFigures(fig, []block{a}, dir); err != nil {
		t.Fatal(err)
	}
	if err := mergeFigures(fig, []block{b}, dir); err != nil {
		t.Fatal(err)
	}
	a.kv[0][1] = "C"
	if err := mergeFigures(fig, []block{a}, dir); err != nil {
		t.Fatal(err)
	}
	s, err := os.ReadFile(fig)
	if err != nil {
		t.Fatal(err)
	}
	got := string(s)
	i, j := strings.Index(got, "## insteval kernel=B"), strings.Index(got, "## verbagg kernel=C")
	if i < 0 || j < 0 || j < i || strings.Contains(got, "kernel=A") {
		t.Fatalf("merged file:\n%s", got)
	}
	readme := filepath.Join(dir, "README.md")
	if err := os.WriteFile(readme, []byte("top\n"+readmeBegin+"\nold\n"+readmeEnd+"\nbottom\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := writeReadme(readme, fig); err != nil {
		t.Fatal(err)
	}
	r, _ := os.ReadFile(readme)
	if strings.Contains(string(r), "old") || !strings.Contains(string(r), "| verbagg | missed: R-hat, ESS, CPU | C | completed |") ||
		!strings.HasPrefix(string(r), "top\n") || !strings.HasSuffix(string(r), "bottom\n") {
		t.Fatalf("README:\n%s", r)
	}
}

// TestDoneWhen checks the README's done-when column on figures lines: the
// issue's four limits, each reported where it is missed, and a NUTS chosen
// for small N told from a fallback from GroupGibbs.
func TestDoneWhen(t *testing.T) {
	line := func(kv ...string) *block {
		b := &block{name: "x"}
		for i := 0; i < len(kv); i += 2 {
			b.kv = append(b.kv, [2]string{kv[i], kv[i+1]})
		}
		return b
	}
	for _, c := range []struct {
		b    *block
		want string
	}{
		{line("status", "completed", "rhat_max", "1.004", "ess_bulk_min", "1188", "cpu_s", "23.8", "glmer_cpu_s", "0.79", "nuts_fallback", "false"), "met"},
		{line("status", "completed", "rhat_max", "1.004", "ess_bulk_min", "1188", "cpu_s", "150", "glmer_cpu_s", "176", "nuts_fallback", "false"), "met"},
		{line("status", "completed", "rhat_max", "1.081", "ess_bulk_min", "43.5", "cpu_s", "133", "glmer_cpu_s", "17.6"), "missed: R-hat, ESS, CPU"},
		{line("status", "completed", "rhat_max", "1.01008", "ess_bulk_min", "467", "cpu_s", "107", "glmer_cpu_s", "176", "nuts_fallback", "false"), "missed: R-hat"},
		{line("status", "stopped", "rhat_max", "1.0", "ess_bulk_min", "500", "cpu_s", "20", "glmer_cpu_s", "5", "nuts_fallback", "true"), "missed: stopped, NUTS fallback"},
		{line("status", "completed", "rhat_max", "NaN", "ess_bulk_min", "500", "cpu_s", "20", "glmer_cpu_s", "5"), "missed: R-hat"},
	} {
		if got := doneWhen(c.b); got != c.want {
			t.Errorf("%v: doneWhen %q, want %q", c.b.kv, got, c.want)
		}
	}
	for _, c := range []struct {
		kernel, reason string
		want           bool
	}{
		{"NUTS", "NUTS: N = 1934 < 2000 on a multilevel model: a full pass over the data is cheap", false},
		{"NUTS-NC", "NUTS-NC: a multilevel model on which GroupGibbs grinds: its probe read 1.01e+04 data", true},
		{"NUTS-NC", "exactmh: interrupted", true},
		{"GroupGibbs", "GroupGibbs: GroupGibbs (0.36 ESS/s)", false},
	} {
		if got := isFallback(c.kernel, c.reason); got != c.want {
			t.Errorf("isFallback(%q, %q) = %v, want %v", c.kernel, c.reason, got, c.want)
		}
	}
}

// TestNUTSLongReference checks that a set's "SET-long" block (stan/run.R's
// draws=D) is the agreement's reference while the ESS per CPU-second ratio
// stays against the set's own block, and that a long block alone is no
// reference.
func TestNUTSLongReference(t *testing.T) {
	path := filepath.Join(t.TempDir(), "nuts.txt")
	text := "# header\n" +
		"## a: 4 chains x (1000 + 1000); CPU-s 10\n" +
		"a\tfixed\tx\t1\t2\t1.001\t400\t500\n" +
		"a\tcpu\tuser+sys\t10\tNA\tNA\tNA\tNA\n" +
		"## a-long: 4 chains x (1000 + 4000); CPU-s 30\n" +
		"a-long\tfixed\tx\t1.5\t2\t1.001\t1600\t2000\n" +
		"a-long\tcpu\tuser+sys\t30\tNA\tNA\tNA\tNA\n" +
		"## b-long: 4 chains x (1000 + 4000)\n" +
		"b-long\tfixed\tx\t0\t1\t1.001\t1600\t2000\n"
	if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	nuts, err := readNUTS(path)
	if err != nil {
		t.Fatal(err)
	}
	rate, agree := references(nuts, "a")
	if rate == nil || agree == nil || rate.cpu != 10 || rate.bulkMin != 400 || agree.cpu != 30 || agree.mean["x"] != 1.5 {
		t.Fatalf("a: rate %+v, agree %+v: want the 1000-draw block's rate and the long block's means", rate, agree)
	}
	a := compareNUTS([]param{{name: "x", mean: 1.5, sd: 2, bulk: 1000}}, agree)
	if a.maxZ != 0 {
		t.Errorf("agreement against the long block: max |Δmean|/sd %g, want 0", a.maxZ)
	}
	if rate, agree := references(nuts, "b"); rate != nil || agree != nil {
		t.Errorf("b (a long block alone): got references %v, %v, want none", rate, agree)
	}
	if rate, agree := references(nuts, "c"); rate != nil || agree != nil {
		t.Errorf("c (no block): got references %v, %v, want none", rate, agree)
	}
}
