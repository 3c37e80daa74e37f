// Package figure draws the examples' PNG figures with gonum/plot: density
// panels side by side (Heatmaps) and line plots (Lines). It lives under
// examples/ so that the exactmh package itself does not depend on
// gonum/plot and its font and image packages.
package figure

import (
	"errors"
	"fmt"
	"image/color"
	"math"
	"os"
	"path/filepath"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/palette/moreland"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/plotutil"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/vgimg"
)

// Grid is a density on a regular 2-D grid over [X0, X1] × [Y0, Y1]:
// Values[i*NY+j] is the mass of cell i along x and j along y. Only relative
// values matter; each panel is scaled to its own maximum.
type Grid struct {
	Title          string
	NX, NY         int
	X0, X1, Y0, Y1 float64
	Values         []float64
}

func (g Grid) check() error {
	if g.NX < 1 || g.NY < 1 || len(g.Values) != g.NX*g.NY {
		return fmt.Errorf("figure: grid %q is %d×%d with %d values", g.Title, g.NX, g.NY, len(g.Values))
	}
	if !(g.X1 > g.X0) || !(g.Y1 > g.Y0) {
		return fmt.Errorf("figure: grid %q has empty extent [%g, %g] × [%g, %g]", g.Title, g.X0, g.X1, g.Y0, g.Y1)
	}
	return nil
}

// gridXYZ adapts a Grid to plotter.GridXYZ (column c along x, row r along
// y, at cell centres), with values divided by their maximum.
type gridXYZ struct {
	g   Grid
	top float64
}

func (x gridXYZ) Dims() (c, r int)   { return x.g.NX, x.g.NY }
func (x gridXYZ) Z(c, r int) float64 { return x.g.Values[c*x.g.NY+r] / x.top }
func (x gridXYZ) X(c int) float64 {
	return x.g.X0 + (float64(c)+0.5)*(x.g.X1-x.g.X0)/float64(x.g.NX)
}
func (x gridXYZ) Y(r int) float64 {
	return x.g.Y0 + (float64(r)+0.5)*(x.g.Y1-x.g.Y0)/float64(x.g.NY)
}

// maxCols is the number of Heatmaps panels per row.
const maxCols = 4

// Heatmaps writes the panels side by side, four to a row, each panelSize wide and tall, to
// the PNG file path, under the axis labels xlabel and ylabel. A panel whose
// values are all zero (no draws yet) is drawn empty.
func Heatmaps(path, xlabel, ylabel string, panelSize vg.Length, panels []Grid) error {
	if len(panels) == 0 {
		return errors.New("figure: no panels")
	}
	row := make([]*plot.Plot, len(panels))
	for k, g := range panels {
		if err := g.check(); err != nil {
			return err
		}
		p := plot.New()
		p.Title.Text = g.Title
		p.X.Label.Text, p.Y.Label.Text = xlabel, ylabel
		p.X.Min, p.X.Max, p.Y.Min, p.Y.Max = g.X0, g.X1, g.Y0, g.Y1
		top := 0.0
		for _, v := range g.Values {
			if !(v >= 0) || math.IsInf(v, 1) {
				return fmt.Errorf("figure: grid %q has value %v", g.Title, v)
			}
			top = math.Max(top, v)
		}
		if top > 0 {
			h := plotter.NewHeatMap(gridXYZ{g, top}, moreland.ExtendedBlackBody().Palette(255))
			h.Min, h.Max = 0, 1
			h.Rasterized = true // one image, not cells with seams between them
			p.Add(h)
		}
		row[k] = p
	}
	// Rows of at most four panels; empty plots pad the last row.
	cols := min(len(row), maxCols)
	var grid [][]*plot.Plot
	for lo := 0; lo < len(row); lo += cols {
		r := row[lo:min(lo+cols, len(row))]
		for len(r) < cols {
			blank := plot.New()
			blank.HideAxes()
			r = append(r, blank)
		}
		grid = append(grid, r)
	}
	return save(path, grid, vg.Length(cols)*panelSize, vg.Length(len(grid))*panelSize)
}

// Series is one line of a Lines plot.
type Series struct {
	Name string
	X, Y []float64
}

// Layout describes a Lines plot.
type Layout struct {
	Title, XLabel, YLabel string
	// LogX and LogY make an axis logarithmic; non-positive points are then
	// left out.
	LogX, LogY bool
	// Width and Height are the image size (default 5 × 3.5 inches).
	Width, Height vg.Length
	// LegendTop and LegendLeft place the legend in that corner (default
	// bottom right); choose the corner the curves leave empty.
	LegendTop, LegendLeft bool
}

// Lines writes the series as lines with points to the PNG file path.
func Lines(path string, l Layout, series []Series) error {
	p := plot.New()
	p.Title.Text = l.Title
	p.X.Label.Text, p.Y.Label.Text = l.XLabel, l.YLabel
	logX, logY := l.LogX, l.LogY
	if logX {
		p.X.Scale, p.X.Tick.Marker = plot.LogScale{}, plot.LogTicks{}
	}
	if logY {
		p.Y.Scale, p.Y.Tick.Marker = plot.LogScale{}, plot.LogTicks{}
	}
	p.Legend.Top, p.Legend.Left = l.LegendTop, l.LegendLeft
	drawn := 0
	for k, s := range series {
		if len(s.X) != len(s.Y) {
			return fmt.Errorf("figure: series %q has %d x and %d y values", s.Name, len(s.X), len(s.Y))
		}
		var pts plotter.XYs
		for i := range s.X {
			x, y := s.X[i], s.Y[i]
			if math.IsNaN(x) || math.IsNaN(y) || math.IsInf(x, 0) || math.IsInf(y, 0) ||
				(logX && x <= 0) || (logY && y <= 0) {
				continue
			}
			pts = append(pts, plotter.XY{X: x, Y: y})
		}
		if len(pts) == 0 {
			continue
		}
		line, points, err := plotter.NewLinePoints(pts)
		if err != nil {
			return fmt.Errorf("figure: series %q: %w", s.Name, err)
		}
		c := plotutil.Color(k)
		line.Color, points.Color = c, c
		points.Shape = plotutil.Shape(k)
		points.Radius = vg.Points(2)
		line.Width = vg.Points(1.2)
		p.Add(line, points)
		p.Legend.Add(s.Name, line, points)
		drawn++
	}
	if drawn == 0 {
		return fmt.Errorf("figure: %q has no finite points to draw", l.Title)
	}
	p.Add(plotter.NewGrid())
	width, height := l.Width, l.Height
	if width == 0 {
		width = 5 * vg.Inch
	}
	if height == 0 {
		height = 3.5 * vg.Inch
	}
	return save(path, [][]*plot.Plot{{p}}, width, height)
}

// save tiles the plots on one canvas and writes it as PNG.
func save(path string, plots [][]*plot.Plot, width, height vg.Length) error {
	img := vgimg.New(width, height)
	dc := draw.New(img)
	dc.SetColor(color.White)
	dc.Fill(dc.Rectangle.Path())
	tiles := draw.Tiles{Rows: len(plots), Cols: len(plots[0]), PadX: vg.Millimeter * 4, PadY: vg.Millimeter * 4,
		PadLeft: vg.Millimeter * 2, PadRight: vg.Millimeter * 4, PadTop: vg.Millimeter * 2, PadBottom: vg.Millimeter * 2}
	canvases := plot.Align(plots, tiles, dc)
	for i := range plots {
		for j, p := range plots[i] {
			p.Draw(canvases[i][j])
		}
	}
	if dir := filepath.Dir(path); dir != "" {
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return fmt.Errorf("figure: %w", err)
		}
	}
	f, err := os.Create(path)
	if err != nil {
		return fmt.Errorf("figure: %w", err)
	}
	if _, err := (vgimg.PngCanvas{Canvas: img}).WriteTo(f); err != nil {
		f.Close()
		return fmt.Errorf("figure: writing %s: %w", path, err)
	}
	return f.Close()
}

// Interval is one row of an Intervals plot: a point estimate and an
// interval around it.
type Interval struct {
	Name           string
	Mid, Low, High float64
}

// Intervals writes a forest plot to the PNG file path: one row per
// interval, top to bottom in the given order, a point at Mid and a bar
// from Low to High, with a dashed vertical reference line at ref (NaN:
// none). LogX draws the x axis on a log scale (odds ratios).
func Intervals(path, title, xlabel string, rows []Interval, ref float64, logX bool) error {
	if len(rows) == 0 {
		return fmt.Errorf("figure: %q has no intervals", title)
	}
	p := plot.New()
	p.Title.Text = title
	p.X.Label.Text = xlabel
	if logX {
		p.X.Scale, p.X.Tick.Marker = plot.LogScale{}, plot.LogTicks{}
	}
	names := make([]string, len(rows))
	pts := make(plotter.XYs, len(rows))
	errs := make(plotter.XErrors, len(rows))
	lo, hi := math.Inf(1), math.Inf(-1)
	for i, r := range rows {
		if !(r.Low <= r.Mid && r.Mid <= r.High) || math.IsInf(r.Low, 0) || math.IsInf(r.High, 0) || logX && r.Low <= 0 {
			return fmt.Errorf("figure: interval %q = %v [%v, %v] is not an ordered finite interval", r.Name, r.Mid, r.Low, r.High)
		}
		y := float64(len(rows) - 1 - i)
		names[len(rows)-1-i] = r.Name
		pts[i] = plotter.XY{X: r.Mid, Y: y}
		errs[i] = struct{ Low, High float64 }{r.Mid - r.Low, r.High - r.Mid}
		lo, hi = math.Min(lo, r.Low), math.Max(hi, r.High)
	}
	bars, err := plotter.NewXErrorBars(struct {
		plotter.XYer
		plotter.XErrorer
	}{pts, errs})
	if err != nil {
		return fmt.Errorf("figure: %q: %w", title, err)
	}
	bars.LineStyle.Width = vg.Points(1.5)
	dots, err := plotter.NewScatter(pts)
	if err != nil {
		return fmt.Errorf("figure: %q: %w", title, err)
	}
	dots.Shape = draw.CircleGlyph{}
	dots.Radius = vg.Points(2.5)
	if !math.IsNaN(ref) {
		line, err := plotter.NewLine(plotter.XYs{{X: ref, Y: -0.5}, {X: ref, Y: float64(len(rows)) - 0.5}})
		if err != nil {
			return err
		}
		line.Dashes = []vg.Length{vg.Points(4), vg.Points(3)}
		line.Color = color.Gray{Y: 128}
		p.Add(line)
	}
	p.Add(plotter.NewGrid(), bars, dots)
	p.NominalY(names...)
	height := vg.Length(len(rows))*0.22*vg.Inch + 1.2*vg.Inch
	return save(path, [][]*plot.Plot{{p}}, 6*vg.Inch, height)
}
