// Copyright ©2026 The exactmh Authors. All rights reserved.
// Use of this source code is governed by a BSD-style
// license that can be found in the LICENSE file.

// Package stanplot draws the plots of a Bayesian workflow — trace plots,
// rank histograms and interval (forest) plots — of the draws of any Stan
// CSV files (exactmh's, CmdStan's or rstan's, read by package stancsv) or
// of an [exactmh.Result], to PNG or SVG files with gonum/plot. The command
// line's "exactmh plot" is built on it.
//
//   - [Trace]: each variable's draws against the iteration, one line per
//     chain: chains that mix overlap and wander over the same band.
//   - [Ranks]: rank histograms (Vehtari, Gelman, Simpson, Carpenter and
//     Bürkner 2021, §4.3; bayesplot's mcmc_rank_overlay): all draws of a
//     variable are ranked together, and each chain's ranks are binned;
//     chains that sample the same distribution give flat histograms near
//     the dashed uniform count, and a chain stuck high or low shows as a
//     slope.
//   - [Intervals]: each variable's median, central 50% and 90% intervals
//     (bayesplot's mcmc_intervals), one row per variable, with a dashed
//     line at 0.
//
// It is a package of its own rather than part of package diagnostics so
// that the diagnostics (numbers only, imported by the root package) and
// programs that only sample do not link gonum/plot's font and image
// packages.
package stanplot

import (
	"errors"
	"fmt"
	"image/color"
	"io"
	"math"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/plotutil"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/vgimg"
	"gonum.org/v1/plot/vg/vgsvg"

	"github.com/exactmh/exactmh"
	"github.com/exactmh/exactmh/stancsv"
)

// Draws are the draws to plot: Chains[c][j] holds the draws of variable
// Names[j] in chain c, every chain as long as the others.
type Draws struct {
	Names  []string
	Chains [][][]float64
}

// FromFiles collects the draws of Stan CSV files, one chain each, cut to
// the shortest file: the named columns, or without names every parameter
// column (those not ending in "__"; lp__ is a name to ask for).
func FromFiles(files []*stancsv.File, names ...string) (*Draws, error) {
	if len(files) == 0 {
		return nil, errors.New("stanplot: no files")
	}
	if len(names) == 0 {
		names = files[0].ParamNames()
		if len(names) == 0 {
			return nil, fmt.Errorf("stanplot: file 1 has no parameter columns (only %v)", files[0].Columns)
		}
	}
	n := -1
	for _, f := range files {
		if n < 0 || len(f.Draws) < n {
			n = len(f.Draws)
		}
	}
	d := &Draws{Names: slices.Clone(names)}
	for i, f := range files {
		// The columns by name, once: linear in the columns.
		index := make(map[string]int, len(f.Columns))
		for j, c := range f.Columns {
			index[c] = j
		}
		ch := make([][]float64, len(names))
		for k, name := range names {
			j, ok := index[name]
			if !ok {
				return nil, fmt.Errorf("stanplot: file %d: no column %q (%d columns: %s)", i+1, name, len(f.Columns), nameSample(f.Columns, 6))
			}
			col := make([]float64, n)
			for r := range col {
				col[r] = f.Draws[r][j]
			}
			ch[k] = col
		}
		d.Chains = append(d.Chains, ch)
	}
	return d, d.check()
}

// FromResult collects the draws of every chain of res that has some, cut
// to the shortest, named as res.Summary names them.
func FromResult(res *exactmh.Result) (*Draws, error) {
	if res == nil {
		return nil, errors.New("stanplot: nil Result")
	}
	s := res.Summary()
	d := &Draws{}
	for _, p := range s.Params {
		d.Names = append(d.Names, p.Name)
	}
	for c := range res.Chains {
		if res.Chains[c].Len() < s.Draws || s.Draws == 0 {
			continue
		}
		var ch [][]float64
		for j := range res.Dim {
			ch = append(ch, res.Samples(j)[c][:s.Draws])
		}
		d.Chains = append(d.Chains, ch)
	}
	return d, d.check()
}

// nameSample lists at most k of names, saying how many more there are.
func nameSample(names []string, k int) string {
	if len(names) <= k {
		return strings.Join(names, ", ")
	}
	return strings.Join(names[:k], ", ") + fmt.Sprintf(", … (%d more)", len(names)-k)
}

// Select returns the draws of the named variables only, in that order.
// An unknown name is an error listing a few of the names there are.
func (d *Draws) Select(names ...string) (*Draws, error) {
	out := &Draws{Names: slices.Clone(names), Chains: make([][][]float64, len(d.Chains))}
	index := make(map[string]int, len(d.Names))
	for j, n := range d.Names {
		if _, ok := index[n]; !ok {
			index[n] = j
		}
	}
	for _, name := range names {
		j, ok := index[name]
		if !ok {
			return nil, fmt.Errorf("stanplot: no variable %q (%d variables: %s)", name, len(d.Names), nameSample(d.Names, 6))
		}
		for c := range d.Chains {
			out.Chains[c] = append(out.Chains[c], d.Chains[c][j])
		}
	}
	return out, out.check()
}

// check checks the shape of the draws.
func (d *Draws) check() error {
	if len(d.Names) == 0 {
		return errors.New("stanplot: no variables")
	}
	if len(d.Chains) == 0 {
		return errors.New("stanplot: no chains with draws")
	}
	n := -1
	for c, ch := range d.Chains {
		if len(ch) != len(d.Names) {
			return fmt.Errorf("stanplot: chain %d has %d variables, want %d", c+1, len(ch), len(d.Names))
		}
		for j, x := range ch {
			if n < 0 {
				n = len(x)
			}
			if len(x) != n {
				return fmt.Errorf("stanplot: chain %d, %s: %d draws, want %d as the others", c+1, d.Names[j], len(x), n)
			}
		}
	}
	if n == 0 {
		return errors.New("stanplot: no draws")
	}
	return nil
}

// MaxPanels is the most variables one trace or rank plot draws (one panel
// each); select fewer with Draws.Select.
const MaxPanels = 64

// MaxIntervals is the most variables one interval plot draws (a row
// each, 0.24 inch high: at 200,000 rows the picture alone would take
// tens of gigabytes); Caterpillar draws thousands of levels in one
// picture, and Draws.Select picks fewer.
const MaxIntervals = 1000

// Options shape a plot. The zero value (or nil) works.
type Options struct {
	// Title is written above the plot (Intervals) or prepended to each
	// panel's variable name (Trace, Ranks).
	Title string
	// Columns is the number of panels per row (0: 3, fewer if there are
	// fewer variables).
	Columns int
	// Bins is the number of rank bins (0: 20, fewer for chains of fewer
	// than 200 draws: about 10 draws a bin, at least 5 bins).
	Bins int
}

func (o *Options) columns(n int) int {
	c := 3
	if o != nil && o.Columns > 0 {
		c = o.Columns
	}
	return max(1, min(c, n))
}

// bins is the number of rank bins for n draws a chain: Options.Bins, or
// 20, fewer for short chains (about 10 draws a bin, at least 5 bins).
func (o *Options) bins(n int) int {
	if o != nil && o.Bins > 0 {
		return max(1, min(o.Bins, n))
	}
	return max(1, min(20, max(5, n/10), n))
}

func (o *Options) title(name string) string {
	if o == nil || o.Title == "" {
		return name
	}
	return o.Title + ": " + name
}

// chainStyle is chain c's line colour and width.
func chainStyle(l *plotter.Line, c int) {
	l.Color = plotutil.Color(c)
	l.Width = vg.Points(0.8)
}

// panelSize is the width and height of one panel.
const (
	panelW = 3.2 * vg.Inch
	panelH = 1.9 * vg.Inch
)

// Trace writes trace plots of every variable of d to path (.png or .svg):
// one panel per variable, the draws against the iteration (1-based, after
// warmup), one line per chain in the colours of the legend.
func Trace(path string, d *Draws, opt *Options) error {
	if err := d.check(); err != nil {
		return err
	}
	if len(d.Names) > MaxPanels {
		return fmt.Errorf("stanplot: Trace: %d variables, more than %d panels: select some (Draws.Select)", len(d.Names), MaxPanels)
	}
	plots := make([]*plot.Plot, len(d.Names))
	for j, name := range d.Names {
		p := plot.New()
		p.Title.Text = opt.title(name)
		p.X.Label.Text = "iteration"
		p.Y.Tick.Marker = distinctTicks{}
		for c, ch := range d.Chains {
			pts := make(plotter.XYs, 0, len(ch[j]))
			for i, v := range ch[j] {
				if !math.IsNaN(v) && !math.IsInf(v, 0) {
					pts = append(pts, plotter.XY{X: float64(i + 1), Y: v})
				}
			}
			if len(pts) == 0 {
				continue
			}
			l, err := plotter.NewLine(pts)
			if err != nil {
				return fmt.Errorf("stanplot: Trace: %s: %w", name, err)
			}
			chainStyle(l, c)
			p.Add(l)
		}
		plots[j] = p
	}
	return saveGrid(path, plots, opt.columns(len(plots)), len(d.Chains))
}

// Ranks writes rank histograms of every variable of d to path (.png or
// .svg): the draws of all chains are ranked together (ties by their
// average rank), each chain's ranks are counted in Options.Bins bins, and
// each chain's counts are drawn as a step line over the bins, with the
// count a uniform distribution gives (draws per chain / bins) dashed.
func Ranks(path string, d *Draws, opt *Options) error {
	if err := d.check(); err != nil {
		return err
	}
	if len(d.Names) > MaxPanels {
		return fmt.Errorf("stanplot: Ranks: %d variables, more than %d panels: select some (Draws.Select)", len(d.Names), MaxPanels)
	}
	n := len(d.Chains[0][0])
	total := n * len(d.Chains)
	bins := opt.bins(n)
	plots := make([]*plot.Plot, len(d.Names))
	for j, name := range d.Names {
		p := plot.New()
		p.Title.Text = opt.title(name)
		p.X.Label.Text = "rank (all chains)"
		p.Y.Min = 0
		p.Y.Tick.Marker = distinctTicks{}
		ranks := rankAll(d, j)
		for c := range d.Chains {
			counts := make([]float64, bins)
			for _, r := range ranks[c] {
				b := min(int(r/float64(total)*float64(bins)), bins-1)
				counts[b]++
			}
			pts := make(plotter.XYs, 0, 2*bins)
			for b, k := range counts {
				lo, hi := float64(b)*float64(total)/float64(bins), float64(b+1)*float64(total)/float64(bins)
				pts = append(pts, plotter.XY{X: lo, Y: k}, plotter.XY{X: hi, Y: k})
			}
			l, err := plotter.NewLine(pts)
			if err != nil {
				return fmt.Errorf("stanplot: Ranks: %s: %w", name, err)
			}
			chainStyle(l, c)
			l.Width = vg.Points(1.2)
			p.Add(l)
		}
		uniform := float64(n) / float64(bins)
		ref, err := plotter.NewLine(plotter.XYs{{X: 0, Y: uniform}, {X: float64(total), Y: uniform}})
		if err != nil {
			return err
		}
		ref.Dashes = []vg.Length{vg.Points(4), vg.Points(3)}
		ref.Color = color.Gray{Y: 100}
		p.Add(ref)
		plots[j] = p
	}
	return saveGrid(path, plots, opt.columns(len(plots)), len(d.Chains))
}

// distinctTicks are gonum's default ticks, each labelled in fixed point
// with the fewest decimals that give every tick's value to within a
// millionth of the tick spacing (the default labels a narrow band about
// -2.2 as -2.2, -2.2, -2.2, and counts as 25.00, 50.00); very large or
// finely spaced values keep six significant digits.
type distinctTicks struct{}

func (distinctTicks) Ticks(lo, hi float64) []plot.Tick {
	ts := plot.DefaultTicks{}.Ticks(lo, hi)
	var vals []float64
	for _, t := range ts {
		if t.Label != "" {
			vals = append(vals, t.Value)
		}
	}
	spacing := math.Inf(1)
	for i := 1; i < len(vals); i++ {
		spacing = math.Min(spacing, math.Abs(vals[i]-vals[i-1]))
	}
	if len(vals) < 2 || !(spacing > 0) || math.IsInf(spacing, 0) {
		return ts
	}
	big := 0.0
	for _, v := range vals {
		big = math.Max(big, math.Abs(v))
	}
	label := func(v float64) string { return strconv.FormatFloat(v, 'g', 6, 64) }
	if big < 1e6 && spacing >= 1e-4 {
		// Fixed point with the fewest decimals that give every tick.
		dec := 0
		for ; dec < 6; dec++ {
			ok := true
			for _, v := range vals {
				r, _ := strconv.ParseFloat(strconv.FormatFloat(v, 'f', dec, 64), 64)
				ok = ok && math.Abs(r-v) <= 1e-6*spacing
			}
			if ok {
				break
			}
		}
		label = func(v float64) string { return strconv.FormatFloat(v, 'f', dec, 64) }
	}
	for i := range ts {
		if ts[i].Label != "" {
			ts[i].Label = label(ts[i].Value)
		}
	}
	return ts
}

// rankAll ranks variable j's draws across all chains (0-based, ties by
// average rank; NaN last) and returns them chain by chain.
func rankAll(d *Draws, j int) [][]float64 {
	type obs struct {
		v    float64
		c, i int
	}
	var all []obs
	for c, ch := range d.Chains {
		for i, v := range ch[j] {
			all = append(all, obs{v, c, i})
		}
	}
	sort.SliceStable(all, func(a, b int) bool {
		x, y := all[a].v, all[b].v
		if math.IsNaN(y) {
			return !math.IsNaN(x)
		}
		return x < y
	})
	out := make([][]float64, len(d.Chains))
	for c := range out {
		out[c] = make([]float64, len(d.Chains[c][j]))
	}
	for a := 0; a < len(all); {
		b := a + 1
		for b < len(all) && (all[b].v == all[a].v || math.IsNaN(all[b].v) && math.IsNaN(all[a].v)) {
			b++
		}
		r := float64(a+b-1) / 2
		for k := a; k < b; k++ {
			out[all[k].c][all[k].i] = r
		}
		a = b
	}
	return out
}

// Intervals writes an interval (forest) plot of every variable of d to
// path (.png or .svg): per variable, top to bottom in d's order, a point
// at the median of all draws, a thick bar over the central 50% interval
// and a thin one over the central 90%, with a dashed line at 0.
func Intervals(path string, d *Draws, opt *Options) error {
	if err := d.check(); err != nil {
		return err
	}
	p := plot.New()
	if opt != nil {
		p.Title.Text = opt.Title
	}
	p.X.Label.Text = "median, 50% and 90% intervals"
	k := len(d.Names)
	if k > MaxIntervals {
		return fmt.Errorf("stanplot: Intervals: %d variables, more than the %d rows an interval plot draws (Draws.Select picks some; Caterpillar draws a factor's levels)", k, MaxIntervals)
	}
	mid := make(plotter.XYs, k)
	inner := make(plotter.XErrors, k)
	outer := make(plotter.XErrors, k)
	names := make([]string, k)
	lo, hi := math.Inf(1), math.Inf(-1)
	for j, name := range d.Names {
		var pool []float64
		for _, ch := range d.Chains {
			for _, v := range ch[j] {
				if !math.IsNaN(v) && !math.IsInf(v, 0) {
					pool = append(pool, v)
				}
			}
		}
		if len(pool) == 0 {
			return fmt.Errorf("stanplot: Intervals: %s has no finite draws", name)
		}
		sort.Float64s(pool)
		q := func(p float64) float64 { return quantile(pool, p) }
		y := float64(k - 1 - j)
		names[k-1-j] = name
		m := q(0.5)
		mid[j] = plotter.XY{X: m, Y: y}
		inner[j] = struct{ Low, High float64 }{m - q(0.25), q(0.75) - m}
		outer[j] = struct{ Low, High float64 }{m - q(0.05), q(0.95) - m}
		lo, hi = math.Min(lo, q(0.05)), math.Max(hi, q(0.95))
	}
	bars := func(e plotter.XErrors, w vg.Length) (*plotter.XErrorBars, error) {
		b, err := plotter.NewXErrorBars(struct {
			plotter.XYer
			plotter.XErrorer
		}{mid, e})
		if err != nil {
			return nil, err
		}
		b.LineStyle.Width = w
		b.LineStyle.Color = color.RGBA{R: 0x1f, G: 0x4e, B: 0x79, A: 0xff}
		b.CapWidth = 0
		return b, nil
	}
	thin, err := bars(outer, vg.Points(1))
	if err != nil {
		return fmt.Errorf("stanplot: Intervals: %w", err)
	}
	thick, err := bars(inner, vg.Points(4))
	if err != nil {
		return fmt.Errorf("stanplot: Intervals: %w", err)
	}
	dots, err := plotter.NewScatter(mid)
	if err != nil {
		return fmt.Errorf("stanplot: Intervals: %w", err)
	}
	dots.Shape = draw.CircleGlyph{}
	dots.Radius = vg.Points(3)
	dots.Color = color.RGBA{R: 0xd9, G: 0x5f, B: 0x02, A: 0xff}
	if lo <= 0 && hi >= 0 {
		zero, err := plotter.NewLine(plotter.XYs{{X: 0, Y: -0.5}, {X: 0, Y: float64(k) - 0.5}})
		if err != nil {
			return err
		}
		zero.Dashes = []vg.Length{vg.Points(4), vg.Points(3)}
		zero.Color = color.Gray{Y: 128}
		p.Add(zero)
	}
	p.Add(plotter.NewGrid(), thin, thick, dots)
	p.NominalY(names...)
	p.Y.Min, p.Y.Max = -0.7, float64(k)-0.3
	pad := 0.04 * (hi - lo)
	if pad == 0 {
		pad = 0.5
	}
	p.X.Min, p.X.Max = min(lo, 0)-pad, max(hi, 0)+pad
	if lo > 0 || hi < 0 { // 0 is not in the picture: no need to stretch to it
		p.X.Min, p.X.Max = lo-pad, hi+pad
	}
	width := 6 * vg.Inch
	if w := vg.Length(maxLen(names)) * 0.075 * vg.Inch; w > 2*vg.Inch {
		width += w - 2*vg.Inch
	}
	return saveWith(path, [][]*plot.Plot{{p}}, width, vg.Length(k)*0.24*vg.Inch+1.1*vg.Inch, nil)
}

func maxLen(s []string) int {
	m := 0
	for _, x := range s {
		m = max(m, len(x))
	}
	return m
}

// quantile is the type-7 quantile of sorted x.
func quantile(x []float64, p float64) float64 {
	h := p * float64(len(x)-1)
	lo := int(math.Floor(h))
	if lo >= len(x)-1 {
		return x[len(x)-1]
	}
	return x[lo] + (h-float64(lo))*(x[lo+1]-x[lo])
}

// saveGrid tiles the panels, cols to a row, above a strip with the
// legend of the chains' colours, and writes them.
func saveGrid(path string, plots []*plot.Plot, cols, chains int) error {
	rows := (len(plots) + cols - 1) / cols
	grid := make([][]*plot.Plot, rows)
	for r := range grid {
		grid[r] = make([]*plot.Plot, cols)
		for c := range cols {
			if i := r*cols + c; i < len(plots) {
				grid[r][c] = plots[i]
			}
		}
	}
	var legends []plot.Legend
	for c := range chains {
		l, err := plotter.NewLine(plotter.XYs{{X: 0, Y: 0}, {X: 1, Y: 0}})
		if err != nil {
			return err
		}
		chainStyle(l, c)
		l.Width = vg.Points(3)
		leg := plot.NewLegend()
		leg.Left, leg.Top = true, true
		leg.Add(fmt.Sprintf("chain %d", c+1), l)
		legends = append(legends, leg)
	}
	return saveWith(path, grid, vg.Length(cols)*panelW, vg.Length(rows)*panelH, legends)
}

// canvas is a vg canvas that writes itself out.
type canvas interface {
	vg.CanvasSizer
	io.WriterTo
}

// legendH is the height of the strip of chain legends under the panels.
const legendH = 0.35 * vg.Inch

// saveWith draws the plots tiled on one canvas of width × height, and the
// legends side by side in a strip below them, in the file's format by its
// extension (.png or .svg), and writes it to path.
func saveWith(path string, plots [][]*plot.Plot, width, height vg.Length, legends []plot.Legend) error {
	if len(legends) > 0 {
		height += legendH
	}
	var c canvas
	switch ext := strings.ToLower(filepath.Ext(path)); ext {
	case ".png":
		c = vgimg.PngCanvas{Canvas: vgimg.NewWith(vgimg.UseWH(width, height), vgimg.UseDPI(96))}
	case ".svg":
		c = vgsvg.New(width, height)
	default:
		return fmt.Errorf("stanplot: %s: want a .png or .svg file name, not %q", path, ext)
	}
	dc := draw.New(c)
	dc.SetColor(color.White)
	dc.Fill(dc.Rectangle.Path())
	tiles := draw.Tiles{Rows: len(plots), Cols: len(plots[0]), PadX: vg.Millimeter * 4, PadY: vg.Millimeter * 4,
		PadLeft: vg.Millimeter * 2, PadRight: vg.Millimeter * 4, PadTop: vg.Millimeter * 2, PadBottom: vg.Millimeter * 2}
	area := dc
	if len(legends) > 0 {
		area = draw.Crop(dc, 0, 0, legendH, 0)
		const each = 1.1 * vg.Inch
		for i := range legends {
			x := vg.Millimeter*8 + vg.Length(i)*each
			legends[i].Draw(draw.Canvas{Canvas: dc.Canvas, Rectangle: vg.Rectangle{
				Min: vg.Point{X: x, Y: 0.05 * vg.Inch}, Max: vg.Point{X: x + each, Y: legendH - 0.05*vg.Inch}}})
		}
	}
	canvases := plot.Align(plots, tiles, area)
	for i := range plots {
		for j, p := range plots[i] {
			if p != nil {
				p.Draw(canvases[i][j])
			}
		}
	}
	f, err := os.Create(path)
	if err != nil {
		return fmt.Errorf("stanplot: %w", err)
	}
	if _, err := c.WriteTo(f); err != nil {
		f.Close()
		return fmt.Errorf("stanplot: writing %s: %w", path, err)
	}
	return f.Close()
}

// Caterpillar writes a caterpillar plot of d's variables to path (.png or
// .svg): the effects of one factor's levels, sorted by their medians
// left to right, each a point at the median over a thick bar for the
// central 50% interval and a thin one for the 90%, with a dashed line at
// 0 — thousands of levels in one picture, where Intervals would need a
// row each. The x axis is the level's rank; the extreme levels are
// named in the caption.
func Caterpillar(path string, d *Draws, opt *Options) error {
	if err := d.check(); err != nil {
		return err
	}
	k := len(d.Names)
	type lv struct {
		name                  string
		m, q05, q25, q75, q95 float64
	}
	levels := make([]lv, 0, k)
	var pool []float64
	for j, name := range d.Names {
		pool = pool[:0]
		for _, ch := range d.Chains {
			for _, v := range ch[j] {
				if !math.IsNaN(v) && !math.IsInf(v, 0) {
					pool = append(pool, v)
				}
			}
		}
		if len(pool) == 0 {
			return fmt.Errorf("stanplot: Caterpillar: %s has no finite draws", name)
		}
		sort.Float64s(pool)
		levels = append(levels, lv{name, quantile(pool, 0.5), quantile(pool, 0.05), quantile(pool, 0.25), quantile(pool, 0.75), quantile(pool, 0.95)})
	}
	sort.SliceStable(levels, func(a, b int) bool { return levels[a].m < levels[b].m })
	mid := make(plotter.XYs, k)
	inner := make(plotter.YErrors, k)
	outer := make(plotter.YErrors, k)
	lo, hi := math.Inf(1), math.Inf(-1)
	for i, l := range levels {
		mid[i] = plotter.XY{X: float64(i + 1), Y: l.m}
		inner[i] = struct{ Low, High float64 }{l.m - l.q25, l.q75 - l.m}
		outer[i] = struct{ Low, High float64 }{l.m - l.q05, l.q95 - l.m}
		lo, hi = math.Min(lo, l.q05), math.Max(hi, l.q95)
	}
	p := plot.New()
	if opt != nil {
		p.Title.Text = opt.Title
	}
	// The levels' names without the prefix they share (u_origin_).
	pre := d.Names[0]
	for _, n := range d.Names[1:] {
		for !strings.HasPrefix(n, pre) {
			pre = pre[:len(pre)-1]
		}
	}
	if i := strings.LastIndexAny(pre, "_.["); i >= 0 {
		pre = pre[:i+1]
	} else {
		pre = ""
	}
	p.X.Label.Text = fmt.Sprintf("%d levels, sorted by median (lowest %s, highest %s)", k, levels[0].name[len(pre):], levels[k-1].name[len(pre):])
	p.Y.Label.Text = "median, 50% and 90% intervals"
	// Thinner marks the more levels there are, so that they stay apart.
	w := vg.Length(math.Max(0.3, math.Min(3, 600/float64(k))))
	bars := func(e plotter.YErrors, width vg.Length, c color.Color) (*plotter.YErrorBars, error) {
		b, err := plotter.NewYErrorBars(struct {
			plotter.XYer
			plotter.YErrorer
		}{mid, e})
		if err != nil {
			return nil, err
		}
		b.LineStyle.Width = width
		b.LineStyle.Color = c
		b.CapWidth = 0
		return b, nil
	}
	thin, err := bars(outer, w*0.5, color.RGBA{R: 0x9e, G: 0xb9, B: 0xd4, A: 0xff})
	if err != nil {
		return fmt.Errorf("stanplot: Caterpillar: %w", err)
	}
	thick, err := bars(inner, w, color.RGBA{R: 0x1f, G: 0x4e, B: 0x79, A: 0xff})
	if err != nil {
		return fmt.Errorf("stanplot: Caterpillar: %w", err)
	}
	dots, err := plotter.NewScatter(mid)
	if err != nil {
		return fmt.Errorf("stanplot: Caterpillar: %w", err)
	}
	dots.Shape = draw.CircleGlyph{}
	dots.Radius = vg.Length(math.Max(0.4, math.Min(2.5, 400/float64(k))))
	dots.Color = color.RGBA{R: 0xd9, G: 0x5f, B: 0x02, A: 0xff}
	if lo <= 0 && hi >= 0 {
		zero, err := plotter.NewLine(plotter.XYs{{X: 0.5, Y: 0}, {X: float64(k) + 0.5, Y: 0}})
		if err != nil {
			return err
		}
		zero.Dashes = []vg.Length{vg.Points(4), vg.Points(3)}
		zero.Color = color.Gray{Y: 128}
		p.Add(zero)
	}
	p.Add(plotter.NewGrid(), thin, thick, dots)
	p.X.Min, p.X.Max = 0.5, float64(k)+0.5
	return saveWith(path, [][]*plot.Plot{{p}}, 8*vg.Inch, 4.5*vg.Inch, nil)
}
