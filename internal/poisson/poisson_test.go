package poisson

import (
	"math"
	"math/big"
	"math/rand/v2"
	"testing"

	"gonum.org/v1/gonum/stat/distuv"
)

// Sample mean and variance within 5 standard errors of μ (the variance's
// standard error uses the Poisson fourth central moment μ + 3μ², so
// Var(s²) ≈ (μ + 2μ²)/n). Deviations from μ are accumulated, not raw
// squares, so the check keeps its precision at μ = 10¹².
func TestMoments(t *testing.T) {
	means := []float64{0, 0.001, 0.5, 3, 9.99, 10, 10.5, 50, 1000, 1e5, 1e7, 1e11, MaxMean}
	for i, mean := range means {
		rng := rand.New(rand.NewPCG(uint64(i), 7))
		const n = 200000
		var s, s2 float64
		for range n {
			k := Draw(rng, mean)
			if k < 0 {
				t.Fatalf("μ = %g: negative draw %d", mean, k)
			}
			d := float64(k) - mean
			s += d
			s2 += d * d
		}
		if mean == 0 {
			if s != 0 {
				t.Errorf("mean 0 gave nonzero draws")
			}
			continue
		}
		dm := s / n // sample mean − μ
		m := mean + dm
		v := (s2 - n*dm*dm) / (n - 1)
		seMean := math.Sqrt(mean / n)
		seVar := math.Sqrt((mean + 2*mean*mean) / n)
		if math.Abs(dm) > 5*seMean {
			t.Errorf("μ = %g: sample mean %.10g, %.2f standard errors off", mean, m, dm/seMean)
		}
		if math.Abs(v-mean) > 5*seVar {
			t.Errorf("μ = %g: sample variance %.10g, %.2f standard errors off", mean, v, (v-mean)/seVar)
		}
	}
}

// Chi-square goodness of fit against the exact pmf (from math.Lgamma),
// consecutive counts pooled greedily so that every cell, the open upper
// tail included, expects at least 5.
func TestChiSquare(t *testing.T) {
	for i, mean := range []float64{0.5, 3, 9.99, 10, 25, 500} {
		rng := rand.New(rand.NewPCG(uint64(i), 11))
		const n = 100000
		counts := map[int]float64{}
		for range n {
			counts[Draw(rng, mean)]++
		}
		pmf := func(k int) float64 {
			lg, _ := math.Lgamma(float64(k) + 1)
			return math.Exp(-mean + float64(k)*math.Log(mean) - lg)
		}
		// Cell j is [starts[j], starts[j+1]), the last one [start, ∞).
		var starts, exps []float64
		start, cell, cum := 0, 0.0, 0.0
		for k := 0; ; k++ {
			p := pmf(k)
			cell += p
			cum += p
			if (1-cum)*n < 5 {
				break // the rest joins the current cell as the open tail
			}
			if cell*n >= 5 {
				starts = append(starts, float64(start))
				exps = append(exps, cell*n)
				start, cell = k+1, 0
			}
		}
		tailExp := float64(n)
		for _, e := range exps {
			tailExp -= e
		}
		starts = append(starts, float64(start))
		exps = append(exps, tailExp)
		obs := make([]float64, len(exps))
		for k, c := range counts {
			j := len(starts) - 1
			for float64(k) < starts[j] {
				j--
			}
			obs[j] += c
		}
		var stat float64
		for j, e := range exps {
			if e < 5 {
				t.Fatalf("μ = %g: cell %d expects %g < 5", mean, j, e)
			}
			stat += (obs[j] - e) * (obs[j] - e) / e
		}
		df := float64(len(exps) - 1)
		limit := distuv.ChiSquared{K: df}.Quantile(0.999)
		if stat > limit {
			t.Errorf("μ = %g: chi-square %.1f > %.1f (df %g)", mean, stat, limit, df)
		}
	}
}

// exactLogPMF returns log P(K = k) for K ~ Poisson(μ), μ a positive
// integer, from e^{−μ}μ^k/k! evaluated in 512-bit arithmetic; only the final
// logarithm of a mantissa in [½, 1) is taken in float64.
func exactLogPMF(k, mu int64) float64 {
	const prec = 512
	e, term := new(big.Float).SetPrec(prec).SetInt64(1), new(big.Float).SetPrec(prec).SetInt64(1)
	for n := int64(1); n < 200; n++ {
		term.Quo(term, new(big.Float).SetPrec(prec).SetInt64(n))
		e.Add(e, term)
	}
	eMu := new(big.Float).SetPrec(prec).SetInt64(1)
	for b, x := mu, e; b > 0; b >>= 1 {
		if b&1 == 1 {
			eMu.Mul(eMu, x)
		}
		x = new(big.Float).SetPrec(prec).Mul(x, x)
	}
	num := new(big.Float).SetPrec(prec).SetInt(new(big.Int).Exp(big.NewInt(mu), big.NewInt(k), nil))
	den := new(big.Float).SetPrec(prec).SetInt(new(big.Int).MulRange(1, max(k, 1)))
	den.Mul(den, eMu)
	p := new(big.Float).SetPrec(prec).Quo(num, den)
	mant := new(big.Float)
	exp := p.MantExp(mant)
	m, _ := mant.Float64()
	return math.Log(m) + float64(exp)*math.Ln2
}

// logPMF matches a 512-bit evaluation to near double precision, where the
// Lgamma form only matches it to the rounding of its own large terms; and
// it keeps the exact recursion log p(k+1) − log p(k) = log(μ/(k+1)) at
// means where the Lgamma form has lost all but a few digits.
func TestLogPMF(t *testing.T) {
	for _, mu := range []int64{1, 10, 400, 10000} {
		sd := math.Sqrt(float64(mu))
		for _, z := range []float64{-5, -2, -0.5, 0, 0.7, 3, 8} {
			k := max(0, int64(float64(mu)+z*sd))
			mean, kf := float64(mu), float64(k)
			want := exactLogPMF(k, mu)
			if got := logPMF(kf, mean); math.Abs(got-want) > 1e-14*math.Max(1, math.Abs(want)) {
				t.Errorf("logPMF(%d, %d) = %.17g, want %.17g (diff %.3g)", k, mu, got, want, got-want)
			}
			lg, _ := math.Lgamma(kf + 1)
			naive := -mean + kf*math.Log(mean) - lg
			if bound := 8 * 0x1p-52 * (mean + kf*math.Log(mean) + lg); math.Abs(naive-want) > math.Max(bound, 1e-14) {
				t.Errorf("Lgamma form at (%d, %d) = %.17g, want %.17g", k, mu, naive, want)
			}
		}
	}
	for _, mean := range []float64{0.3, 9.99, 37.5} {
		for k := 0.0; k < 3*mean+20; k++ {
			lg, _ := math.Lgamma(k + 1)
			want := -mean + k*math.Log(mean) - lg
			if got := logPMF(k, mean); math.Abs(got-want) > 1e-13*math.Max(1, math.Abs(want)) {
				t.Errorf("logPMF(%g, %g) = %.17g, want %.17g", k, mean, got, want)
			}
		}
	}
	for _, mean := range []float64{1e6, 1e9, MaxMean} {
		sd := math.Sqrt(mean)
		for _, z := range []float64{-30, -8, -1, -0.1, 0, 0.3, 2, 9, 40} {
			k := math.Floor(mean + z*sd)
			got := logPMF(k+1, mean) - logPMF(k, mean)
			want := math.Log(mean / (k + 1))
			if math.Abs(got-want) > 1e-9 {
				t.Errorf("μ = %g, k = %g: log p(k+1) − log p(k) = %.12g, want %.12g", mean, k, got, want)
			}
		}
		// Normal limit at the mode: log p(⌊μ⌋) ≈ −½ log(2πμ).
		if got, want := logPMF(math.Floor(mean), mean), -0.5*math.Log(2*math.Pi*mean); math.Abs(got-want) > 1e-5 {
			t.Errorf("μ = %g: log p(mode) = %.12g, want ≈ %.12g", mean, got, want)
		}
	}
}

func TestCheck(t *testing.T) {
	for _, bad := range []float64{-1, -1e-300, math.NaN(), math.Inf(1), math.Inf(-1), 2 * MaxMean} {
		if Check(bad) == nil {
			t.Errorf("Check(%v) = nil", bad)
		}
	}
	for _, good := range []float64{0, 1e-9, 9.99, 10, 1e7, MaxMean} {
		if err := Check(good); err != nil {
			t.Error(err)
		}
	}
}

func TestDrawPanicsOnBadMean(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 1))
	for _, bad := range []float64{-1, math.NaN(), math.Inf(1), 2 * MaxMean} {
		func() {
			defer func() {
				if recover() == nil {
					t.Errorf("Draw(%v) did not panic", bad)
				}
			}()
			Draw(rng, bad)
		}()
	}
}

func TestDrawAllocatesNothing(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 1))
	for _, mean := range []float64{0, 3, 10, 1e4, MaxMean} {
		if a := testing.AllocsPerRun(1000, func() { Draw(rng, mean) }); a != 0 {
			t.Errorf("Draw(%g) allocates %v times", mean, a)
		}
	}
}

func benchmarkDraw(b *testing.B, mean float64) {
	rng := rand.New(rand.NewPCG(1, 1))
	b.ReportAllocs()
	s := 0
	for b.Loop() {
		s += Draw(rng, mean)
	}
	_ = s
}

func BenchmarkDrawMean5(b *testing.B)    { benchmarkDraw(b, 5) }
func BenchmarkDrawMean1000(b *testing.B) { benchmarkDraw(b, 1000) }
