// Copyright ©2026 The exactmh Authors. All rights reserved.
// Use of this source code is governed by a BSD-style
// license that can be found in the LICENSE file.

package stanplot

import (
	"bytes"
	"context"
	"fmt"
	"image"
	"image/color"
	"image/png"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/exactmh/exactmh"
	"github.com/exactmh/exactmh/model"
	"github.com/exactmh/exactmh/stancsv"
)

func readFiles(t *testing.T, paths ...string) []*stancsv.File {
	t.Helper()
	var out []*stancsv.File
	for _, p := range paths {
		f, err := os.Open(p)
		if err != nil {
			t.Fatal(err)
		}
		s, err := stancsv.Read(f)
		f.Close()
		if err != nil {
			t.Fatalf("%s: %v", p, err)
		}
		out = append(out, s)
	}
	return out
}

// checkPNG decodes a PNG and checks it has the size asked for and draws
// in colour: chain 1's (the first of plotutil's colours) or the interval
// plot's orange points.
func checkPNG(t *testing.T, path string) image.Image {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	img, err := png.Decode(bytes.NewReader(b))
	if err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	r := img.Bounds()
	if r.Dx() < 400 || r.Dy() < 150 {
		t.Errorf("%s: %v, too small", path, r)
	}
	coloured := 0
	for y := r.Min.Y; y < r.Max.Y; y += 2 {
		for x := r.Min.X; x < r.Max.X; x += 2 {
			c := color.RGBAModel.Convert(img.At(x, y)).(color.RGBA)
			if max(c.R, c.G, c.B)-min(c.R, c.G, c.B) > 60 {
				coloured++
			}
		}
	}
	if coloured < 20 {
		t.Errorf("%s: %d coloured pixels: nothing drawn?", path, coloured)
	}
	return img
}

// Every plot draws from the files of rstan, CmdStan and exactmh, and
// from an exactmh.Result, to PNG and SVG.
func TestPlotsOfEveryFile(t *testing.T) {
	g := rand.New(rand.NewPCG(1, 2))
	post := &exactmh.Posterior{Energy: gaussian(g, 200), Prior: model.Flat{}, Names: []string{"(Intercept)", "slope"}}
	res, err := exactmh.Sample(context.Background(), post, exactmh.MH{}, &exactmh.Settings{Chains: 3, Warmup: 200, Draws: 300, Seed: 4})
	if err != nil {
		t.Fatal(err)
	}
	fromRes, err := FromResult(res)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(fromRes.Names, []string{"(Intercept)", "slope"}) || len(fromRes.Chains) != 3 || len(fromRes.Chains[0][1]) != 300 {
		t.Fatalf("FromResult: %v, %d chains", fromRes.Names, len(fromRes.Chains))
	}
	rstan, err := FromFiles(readFiles(t, "../stancsv/testdata/logreg_rstan_1.csv", "../stancsv/testdata/logreg_rstan_2.csv"))
	if err != nil {
		t.Fatal(err)
	}
	cmdstan, err := FromFiles(readFiles(t, "../stancsv/testdata/bernoulli_cmdstan.csv"), "theta", "lp__")
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	for name, d := range map[string]*Draws{"result": fromRes, "rstan": rstan, "cmdstan": cmdstan} {
		for kind, f := range map[string]func(string, *Draws, *Options) error{"trace": Trace, "rank": Ranks, "intervals": Intervals} {
			base := filepath.Join(dir, name+"_"+kind)
			if err := f(base+".png", d, &Options{Title: name}); err != nil {
				t.Fatalf("%s %s: %v", name, kind, err)
			}
			checkPNG(t, base+".png")
			if err := f(base+".svg", d, nil); err != nil {
				t.Fatalf("%s %s svg: %v", name, kind, err)
			}
			svg, err := os.ReadFile(base + ".svg")
			if err != nil || !bytes.Contains(svg, []byte("<svg")) || !bytes.Contains(svg, []byte("<path")) {
				t.Errorf("%s %s: not an SVG with paths (%v)", name, kind, err)
			}
			if kind != "intervals" && !bytes.Contains(svg, []byte(d.Names[0])) {
				t.Errorf("%s %s: the SVG does not name %s", name, kind, d.Names[0])
			}
		}
	}
}

// gaussian is a GLM energy of a line y = 1 + 2x + noise.
func gaussian(g *rand.Rand, n int) exactmh.Energy {
	x := make([]float64, 2*n)
	y := make([]float64, n)
	for i := range n {
		x[2*i], x[2*i+1] = 1, g.NormFloat64()
		y[i] = 1 + 2*x[2*i+1] + g.NormFloat64()
	}
	e, err := model.NewGLM(x, y, 2, model.GaussianFamily{Sigma: 1})
	if err != nil {
		panic(err)
	}
	return e
}

// Ranks are taken over all chains together, ties by their average, so a
// chain whose draws are all above the others' has the top ranks.
func TestRankAll(t *testing.T) {
	d := &Draws{Names: []string{"x"}, Chains: [][][]float64{{{1, 5, 3}}, {{3, 0, 9}}}}
	got := rankAll(d, 0)
	want := [][]float64{{1, 4, 2.5}, {2.5, 0, 5}}
	for c := range want {
		if !slices.Equal(got[c], want[c]) {
			t.Errorf("chain %d ranks %v, want %v", c+1, got[c], want[c])
		}
	}
	// A chain stuck above the others: its ranks are the top half.
	d = &Draws{Names: []string{"x"}, Chains: [][][]float64{{make([]float64, 100)}, {make([]float64, 100)}}}
	for i := range 100 {
		d.Chains[0][0][i] = float64(i)
		d.Chains[1][0][i] = 1000 + float64(i)
	}
	r := rankAll(d, 0)
	if slices.Min(r[1]) != 100 || slices.Max(r[0]) != 99 {
		t.Errorf("stuck chain's ranks %v…, the other's …%v", r[1][:3], r[0][97:])
	}
}

// Bad input is an error that says what, never a panic or an empty file.
func TestPlotErrors(t *testing.T) {
	dir := t.TempDir()
	ok := &Draws{Names: []string{"a"}, Chains: [][][]float64{{{1, 2, 3}}}}
	for _, c := range []struct {
		what string
		d    *Draws
		path string
		want string
	}{
		{"extension", ok, "x.gif", "want a .png or .svg"},
		{"ragged", &Draws{Names: []string{"a"}, Chains: [][][]float64{{{1, 2}}, {{1}}}}, "x.png", "draws, want 2"},
		{"no chains", &Draws{Names: []string{"a"}}, "x.png", "no chains"},
		{"names", &Draws{Names: []string{"a", "b"}, Chains: [][][]float64{{{1, 2}}}}, "x.png", "has 1 variables, want 2"},
		{"empty", &Draws{Names: []string{"a"}, Chains: [][][]float64{{{}}}}, "x.png", "no draws"},
		{"nan", &Draws{Names: []string{"a"}, Chains: [][][]float64{{{math.NaN()}}}}, "x.png", "no finite draws"},
	} {
		err := Intervals(filepath.Join(dir, c.path), c.d, nil)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v, want an error with %q", c.what, err, c.want)
		}
	}
	many := &Draws{Chains: [][][]float64{{}}}
	for j := range MaxPanels + 1 {
		many.Names = append(many.Names, "v"+string(rune('a'+j%26)))
		many.Chains[0] = append(many.Chains[0], []float64{1, 2})
	}
	if err := Trace(filepath.Join(dir, "m.png"), many, nil); err == nil || !strings.Contains(err.Error(), "select some") {
		t.Errorf("%d panels: %v", MaxPanels+1, err)
	}
	rows := &Draws{Chains: [][][]float64{{}}}
	for j := range MaxIntervals + 1 {
		rows.Names = append(rows.Names, fmt.Sprintf("v%d", j))
		rows.Chains[0] = append(rows.Chains[0], []float64{1, 2})
	}
	if err := Intervals(filepath.Join(dir, "r.png"), rows, nil); err == nil || !strings.Contains(err.Error(), "Draws.Select picks some") {
		t.Errorf("%d interval rows: %v", MaxIntervals+1, err)
	}
	if _, err := ok.Select("b"); err == nil || !strings.Contains(err.Error(), `no variable "b"`) {
		t.Errorf("Select of a missing variable: %v", err)
	}
}

// Tick labels have the digits that tell the ticks apart, and no more.
func TestDistinctTicks(t *testing.T) {
	for _, c := range []struct {
		lo, hi float64
		want   []string
	}{
		{-2.245, -2.158, []string{"-2.24", "-2.20", "-2.16"}},
		{0, 60, []string{"0", "30", "60"}},
	} {
		var got []string
		for _, tk := range (distinctTicks{}).Ticks(c.lo, c.hi) {
			if tk.Label != "" {
				got = append(got, tk.Label)
			}
		}
		seen := map[string]bool{}
		for _, l := range got {
			if seen[l] {
				t.Errorf("[%v, %v]: label %s repeated in %v", c.lo, c.hi, l, got)
			}
			seen[l] = true
		}
		for _, w := range c.want {
			if !seen[w] {
				t.Errorf("[%v, %v]: labels %v, want %s among them", c.lo, c.hi, got, w)
			}
		}
	}
}
