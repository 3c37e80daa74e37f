package mnist

import (
	"bytes"
	"compress/gzip"
	"encoding/binary"
	"math"
	"slices"
	"strings"
	"sync"
	"testing"
)

// defaultSplit loads DefaultOptions once for the tests that only read it
// (PCA on 784 pixels is the slow part, especially under -race).
var defaultSplit = sync.OnceValues(func() (*Split, error) { return Load(DefaultOptions()) })

func TestCountsAndSplit(t *testing.T) {
	for _, c := range []struct{ pos, neg, total int }{{7, 9, 2048}, {3, 5, 1895}} {
		opt := DefaultOptions()
		opt.Positive, opt.Negative = c.pos, c.neg
		s, err := defaultSplit()
		if c.pos != 7 {
			s, err = Load(opt)
		}
		if err != nil {
			t.Fatal(err)
		}
		if s.NTrain()+s.NTest() != c.total {
			t.Errorf("%d vs %d: %d images, want %d", c.pos, c.neg, s.NTrain()+s.NTest(), c.total)
		}
		if want := int(math.Round(0.2 * float64(c.total))); s.NTest() != want {
			t.Errorf("%d test images, want %d", s.NTest(), want)
		}
		if len(s.TrainX) != s.NTrain()*s.D || len(s.TestX) != s.NTest()*s.D || s.D != 50 {
			t.Errorf("shapes: D=%d, train %d values for %d rows", s.D, len(s.TrainX), s.NTrain())
		}
		for name, y := range map[string][]float64{"train": s.TrainY, "test": s.TestY} {
			var ones int
			for _, v := range y {
				if v != 0 && v != 1 {
					t.Fatalf("%s label %v", name, v)
				}
				ones += int(v)
			}
			if ones == 0 || ones == len(y) {
				t.Errorf("%s: %d positives of %d", name, ones, len(y))
			}
		}
	}
}

func TestComponents(t *testing.T) {
	opt := DefaultOptions()
	opt.Whiten = true
	s, err := Load(opt)
	if err != nil {
		t.Fatal(err)
	}
	plain, err := defaultSplit()
	if err != nil {
		t.Fatal(err)
	}
	// Unwhitened: centred scores with variance = eigenvalue, scale as in the
	// TunaMH experiments (mean ‖x_i‖ ≈ 5.87 on the full 7-vs-9 set).
	var norm float64
	for r := 0; r < plain.NTrain(); r++ {
		var sq float64
		for c := 0; c < plain.D; c++ {
			v := plain.TrainX[r*plain.D+c]
			sq += v * v
			if w := s.TrainX[r*s.D+c] * math.Sqrt(s.Variance[c]); math.Abs(w-v) > 1e-9 {
				t.Fatalf("row %d component %d: whitened×sd %g, plain %g", r, c, w, v)
			}
		}
		norm += math.Sqrt(sq) / float64(plain.NTrain())
	}
	t.Logf("mean ‖x_i‖ = %.3f", norm)
	if norm < 4.5 || norm > 7.5 {
		t.Errorf("mean row norm %g, want ≈ 6", norm)
	}
	n := float64(s.NTrain())
	for c := 0; c < s.D; c++ {
		var m, v float64
		for r := 0; r < s.NTrain(); r++ {
			m += s.TrainX[r*s.D+c] / n
		}
		for r := 0; r < s.NTrain(); r++ {
			d := s.TrainX[r*s.D+c] - m
			v += d * d / (n - 1)
		}
		if math.Abs(m) > 1e-9 || math.Abs(v-1) > 1e-9 {
			t.Errorf("component %d: mean %g, variance %g", c, m, v)
		}
	}
	if !slices.IsSortedFunc(s.Variance, func(a, b float64) int {
		switch {
		case a > b:
			return -1
		case a < b:
			return 1
		}
		return 0
	}) {
		t.Error("components not in decreasing order of variance")
	}
}

func TestDeterministicAndIntercept(t *testing.T) {
	if testing.Short() {
		t.Skip("three more PCA fits; skipped in -short mode")
	}
	a, _ := defaultSplit()
	b, _ := Load(DefaultOptions())
	if !slices.Equal(a.TrainX, b.TrainX) || !slices.Equal(a.TestY, b.TestY) {
		t.Error("same seed, different data")
	}
	opt := DefaultOptions()
	opt.Seed = 2
	c, _ := Load(opt)
	if slices.Equal(a.TrainY, c.TrainY) {
		t.Error("different seeds, same shuffle")
	}
	opt = DefaultOptions()
	opt.Intercept, opt.Components = true, 10
	s, err := Load(opt)
	if err != nil {
		t.Fatal(err)
	}
	if s.D != 11 || s.TrainX[10] != 1 || s.TestX[s.D*3+10] != 1 {
		t.Errorf("intercept column missing: D = %d", s.D)
	}
}

// The projection carries the signal: classifying by the nearer class mean
// in the 50-component space gets most test digits right, whitened or not.
func TestNearestMeanClassifier(t *testing.T) {
	s, err := defaultSplit()
	if err != nil {
		t.Fatal(err)
	}
	acc := nearestMeanAccuracy(s)
	t.Logf("nearest-mean test accuracy on 7 vs 9: %.3f", acc)
	if acc < 0.85 {
		t.Errorf("nearest-mean accuracy %.3f < 0.85", acc)
	}
	opt := DefaultOptions()
	opt.Whiten = true
	if s, err = Load(opt); err != nil {
		t.Fatal(err)
	}
	acc = nearestMeanAccuracy(s)
	t.Logf("nearest-mean test accuracy on 7 vs 9, whitened: %.3f", acc)
	if acc < 0.85 {
		t.Errorf("whitened nearest-mean accuracy %.3f < 0.85", acc)
	}
}

func nearestMeanAccuracy(s *Split) float64 {
	means := [2][]float64{make([]float64, s.D), make([]float64, s.D)}
	var counts [2]float64
	for r, y := range s.TrainY {
		counts[int(y)]++
		for j := 0; j < s.D; j++ {
			means[int(y)][j] += s.TrainX[r*s.D+j]
		}
	}
	for k := range means {
		for j := range means[k] {
			means[k][j] /= counts[k]
		}
	}
	correct := 0
	for r, y := range s.TestY {
		var d0, d1 float64
		for j := 0; j < s.D; j++ {
			x := s.TestX[r*s.D+j]
			d0 += (x - means[0][j]) * (x - means[0][j])
			d1 += (x - means[1][j]) * (x - means[1][j])
		}
		if (d1 < d0) == (y == 1) {
			correct++
		}
	}
	return float64(correct) / float64(s.NTest())
}

func TestBadOptions(t *testing.T) {
	for name, mod := range map[string]func(*Options){
		"positive":   func(o *Options) { o.Positive = 10 },
		"negative":   func(o *Options) { o.Negative = -1 },
		"same digit": func(o *Options) { o.Negative = o.Positive },
		"components": func(o *Options) { o.Components = 0 },
		"too many":   func(o *Options) { o.Components = 785 },
		"test 0":     func(o *Options) { o.TestFraction = 0 },
		"test 1":     func(o *Options) { o.TestFraction = 1 },
		"test NaN":   func(o *Options) { o.TestFraction = math.NaN() },
	} {
		opt := DefaultOptions()
		mod(&opt)
		if _, err := Load(opt); err == nil {
			t.Errorf("%s: no error", name)
		} else if !strings.Contains(err.Error(), "Options.") {
			t.Errorf("%s: error %q does not name the field", name, err)
		}
	}
	// Past the ~519 components with positive variance, whitening would
	// divide by zero.
	opt := DefaultOptions()
	opt.Components, opt.Whiten = Pixels, true
	if _, err := Load(opt); err == nil || !strings.Contains(err.Error(), "Components") {
		t.Errorf("784 whitened components: error %v", err)
	}
	if _, err := Load(Options{}); err == nil {
		t.Error("zero Options: no error (digits 0 and 0)")
	}
}

// The embedded files decode to 10,000 labelled images grouped by digit, with
// the per-digit counts of testdata/README.md.
func TestDigits(t *testing.T) {
	img, lab, err := Digits()
	if err != nil {
		t.Fatal(err)
	}
	if len(lab) != 10000 || len(img) != 10000*Pixels {
		t.Fatalf("%d labels, %d pixel bytes", len(lab), len(img))
	}
	var counts [10]int
	for _, l := range lab {
		counts[l]++
	}
	if want := [10]int{1001, 1127, 991, 1032, 980, 863, 1014, 1070, 944, 978}; counts != want {
		t.Errorf("counts %v, want %v", counts, want)
	}
}

func gz(t *testing.T, b []byte) []byte {
	var buf bytes.Buffer
	w := gzip.NewWriter(&buf)
	w.Write(b)
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// idx builds IDX bytes: a magic number, big-endian sizes, then the data.
func idx(magic uint32, sizes []uint32, data []byte) []byte {
	b := binary.BigEndian.AppendUint32(nil, magic)
	for _, s := range sizes {
		b = binary.BigEndian.AppendUint32(b, s)
	}
	return append(b, data...)
}

func TestParseIDXErrors(t *testing.T) {
	pix := make([]byte, 2*Pixels)
	goodImg := idx(0x803, []uint32{2, 28, 28}, pix)
	goodLab := idx(0x801, []uint32{2}, []byte{3, 5})
	if img, lab, err := parseIDX(gz(t, goodImg), gz(t, goodLab)); err != nil || len(img) != 2*Pixels || len(lab) != 2 {
		t.Fatalf("valid files: %d, %d, %v", len(img), len(lab), err)
	}
	for name, c := range map[string]struct{ img, lab []byte }{
		"not gzip":     {goodImg, gz(t, goodLab)},
		"image magic":  {gz(t, idx(0x801, []uint32{2, 28, 28}, pix)), gz(t, goodLab)},
		"image count":  {gz(t, idx(0x803, []uint32{3, 28, 28}, pix)), gz(t, goodLab)},
		"image size":   {gz(t, idx(0x803, []uint32{2, 28, 27}, pix)), gz(t, goodLab)},
		"short header": {gz(t, goodImg[:10]), gz(t, goodLab)},
		"label magic":  {gz(t, goodImg), gz(t, idx(0x803, []uint32{2}, []byte{3, 5}))},
		"label count":  {gz(t, goodImg), gz(t, idx(0x801, []uint32{1}, []byte{3}))},
		"label length": {gz(t, goodImg), gz(t, idx(0x801, []uint32{2}, []byte{3}))},
		"label 10":     {gz(t, goodImg), gz(t, idx(0x801, []uint32{2}, []byte{3, 10}))},
		"empty labels": {gz(t, goodImg), gz(t, nil)},
	} {
		if _, _, err := parseIDX(c.img, c.lab); err == nil {
			t.Errorf("%s: no error", name)
		}
	}
}

// Accuracy of a linear rule: the difference of the class means classifies
// well (the PCA scores are centred, so no intercept is needed), and the
// negated rule gets exactly the complement.
func TestAccuracy(t *testing.T) {
	s, err := defaultSplit()
	if err != nil {
		t.Fatal(err)
	}
	theta := make([]float64, s.D)
	for r, y := range s.TrainY {
		sign := 2*y - 1
		for j := range theta {
			theta[j] += sign * s.TrainX[r*s.D+j]
		}
	}
	acc := s.Accuracy(theta)
	neg := make([]float64, s.D)
	for j, v := range theta {
		neg[j] = -v
	}
	if acc < 0.8 || math.Abs(acc+s.Accuracy(neg)-1) > 1e-12 {
		t.Errorf("accuracy %.3f, negated %.3f", acc, s.Accuracy(neg))
	}
	t.Logf("mean-difference rule: %.3f", acc)
}
