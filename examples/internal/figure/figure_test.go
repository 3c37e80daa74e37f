package figure

import (
	"image"
	"image/png"
	"math"
	"os"
	"path/filepath"
	"testing"

	"gonum.org/v1/plot/vg"
)

// decode reads a PNG and returns it with the number of distinct colours.
func decode(t *testing.T, path string) (image.Image, int) {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	img, err := png.Decode(f)
	if err != nil {
		t.Fatal(err)
	}
	colours := map[[4]uint32]bool{}
	b := img.Bounds()
	for y := b.Min.Y; y < b.Max.Y; y += 3 {
		for x := b.Min.X; x < b.Max.X; x += 3 {
			r, g, bl, a := img.At(x, y).RGBA()
			colours[[4]uint32{r, g, bl, a}] = true
		}
	}
	return img, len(colours)
}

func TestHeatmaps(t *testing.T) {
	const n = 20
	bump := make([]float64, n*n)
	for i := range n {
		for j := range n {
			bump[i*n+j] = math.Exp(-float64((i-5)*(i-5)+(j-12)*(j-12)) / 8)
		}
	}
	panels := []Grid{
		{Title: "bump", NX: n, NY: n, X0: -1, X1: 1, Y0: -1, Y1: 1, Values: bump},
		{Title: "empty", NX: n, NY: n, X0: -1, X1: 1, Y0: -1, Y1: 1, Values: make([]float64, n*n)},
	}
	path := filepath.Join(t.TempDir(), "sub", "h.png")
	if err := Heatmaps(path, "x", "y", 3*vg.Inch, panels); err != nil {
		t.Fatal(err)
	}
	img, colours := decode(t, path)
	if w, h := img.Bounds().Dx(), img.Bounds().Dy(); w != 2*h {
		t.Errorf("image is %d×%d, want two square panels side by side", w, h)
	}
	// Six panels wrap into two rows of four.
	path6 := filepath.Join(t.TempDir(), "h6.png")
	if err := Heatmaps(path6, "x", "y", vg.Inch, append(append(panels, panels...), panels...)); err != nil {
		t.Fatal(err)
	}
	if img6, _ := decode(t, path6); img6.Bounds().Dx() != 2*img6.Bounds().Dy() {
		t.Errorf("six panels: image is %d×%d, want 4 × 2 panels", img6.Bounds().Dx(), img6.Bounds().Dy())
	}
	if colours < 20 {
		t.Errorf("only %d colours: the heat map was not drawn", colours)
	}
}

func TestHeatmapsErrors(t *testing.T) {
	dir := t.TempDir()
	bad := []Grid{
		{Title: "size", NX: 2, NY: 2, X0: 0, X1: 1, Y0: 0, Y1: 1, Values: []float64{1, 2, 3}},
		{Title: "extent", NX: 1, NY: 1, X0: 1, X1: 1, Y0: 0, Y1: 1, Values: []float64{1}},
		{Title: "negative", NX: 1, NY: 1, X0: 0, X1: 1, Y0: 0, Y1: 1, Values: []float64{-1}},
		{Title: "nan", NX: 1, NY: 1, X0: 0, X1: 1, Y0: 0, Y1: 1, Values: []float64{math.NaN()}},
	}
	for _, g := range bad {
		if err := Heatmaps(filepath.Join(dir, g.Title+".png"), "", "", vg.Inch, []Grid{g}); err == nil {
			t.Errorf("%s: no error", g.Title)
		}
	}
	if err := Heatmaps(filepath.Join(dir, "none.png"), "", "", vg.Inch, nil); err == nil {
		t.Error("no panels: no error")
	}
}

func TestLines(t *testing.T) {
	path := filepath.Join(t.TempDir(), "l.png")
	s := []Series{
		{Name: "a", X: []float64{1, 2, 4, 8}, Y: []float64{0.5, 0.7, 0.8, 0.85}},
		{Name: "b", X: []float64{1, 2, 4, 8}, Y: []float64{0.2, math.NaN(), 0.6, 0.9}},
	}
	if err := Lines(path, Layout{Title: "accuracy", XLabel: "seconds", YLabel: "accuracy", LogX: true, Width: 4 * vg.Inch, Height: 3 * vg.Inch}, s); err != nil {
		t.Fatal(err)
	}
	if _, colours := decode(t, path); colours < 4 {
		t.Errorf("only %d colours: the lines were not drawn", colours)
	}
	if err := Lines(path, Layout{Title: "t", LogY: true}, []Series{{Name: "neg", X: []float64{1}, Y: []float64{-1}}}); err == nil {
		t.Error("nothing drawable on a log axis: no error")
	}
	if err := Lines(path, Layout{Title: "t"}, []Series{{Name: "len", X: []float64{1}, Y: nil}}); err == nil {
		t.Error("length mismatch: no error")
	}
}

func TestIntervals(t *testing.T) {
	dir := t.TempDir()
	rows := []Interval{{"a", 1, 0.8, 1.3}, {"b", 0.5, 0.4, 0.7}, {"c", 2, 1.5, 2.5}}
	path := filepath.Join(dir, "forest.png")
	if err := Intervals(path, "odds ratios", "odds ratio", rows, 1, true); err != nil {
		t.Fatal(err)
	}
	if fi, err := os.Stat(path); err != nil || fi.Size() < 1000 {
		t.Fatalf("no figure written: %v, %v", fi, err)
	}
	if err := Intervals(path, "bad", "x", []Interval{{"a", 1, 2, 3}}, math.NaN(), false); err == nil {
		t.Error("an interval not around its point was drawn")
	}
	if err := Intervals(path, "empty", "x", nil, 1, false); err == nil {
		t.Error("no rows: no error")
	}
}
