package alias

import (
	"math/rand/v2"
	"testing"

	"gonum.org/v1/gonum/stat/distuv"
)

// chiSquare draws n indices and tests the counts against w/Σw at level
// 0.001; it fails the test on a zero-weight draw.
func chiSquare(t *testing.T, w []float64, n int, seed uint64) {
	t.Helper()
	tab, err := New(w)
	if err != nil {
		t.Fatal(err)
	}
	rng := rand.New(rand.NewPCG(seed, 2))
	counts := make([]float64, len(w))
	for range n {
		i := tab.Draw(rng)
		if w[i] == 0 {
			t.Fatalf("weights %v: drew index %d of weight 0", w, i)
		}
		counts[i]++
	}
	stat, df := 0.0, -1
	for i, c := range counts {
		if w[i] == 0 {
			continue
		}
		e := tab.Prob(i) * float64(n)
		stat += (c - e) * (c - e) / e
		df++
	}
	if df == 0 {
		return
	}
	limit := distuv.ChiSquared{K: float64(df)}.Quantile(0.999)
	if stat > limit {
		t.Errorf("weights %v: chi-square %.1f > %.1f (df %d), counts %v", w, stat, limit, df, counts)
	}
}

func TestDistribution(t *testing.T) {
	chiSquare(t, []float64{1, 2, 3, 4, 0, 10}, 200000, 1)
	chiSquare(t, []float64{1, 1, 1, 1, 1, 1, 1}, 100000, 2)
	chiSquare(t, []float64{5}, 1000, 3)
	chiSquare(t, []float64{0, 1e-300, 0, 1}, 100000, 4)
	chiSquare(t, []float64{1e-3, 0.5, 0, 0, 2.5, 1e4, 7}, 200000, 5)
	// Many random weights with a quarter of zeros.
	rng := rand.New(rand.NewPCG(9, 9))
	w := make([]float64, 300)
	for i := range w {
		if rng.IntN(4) > 0 {
			w[i] = rng.ExpFloat64()
		}
	}
	chiSquare(t, w, 300000, 6)
}

func TestProbAndTotal(t *testing.T) {
	tab, err := New([]float64{1, 3, 0})
	if err != nil {
		t.Fatal(err)
	}
	if tab.Len() != 3 || tab.Total() != 4 || tab.Prob(1) != 0.75 || tab.Prob(2) != 0 {
		t.Errorf("Len %d Total %g Prob %g %g", tab.Len(), tab.Total(), tab.Prob(1), tab.Prob(2))
	}
	// Implied probability of every index from the table equals w/Σw.
	n := float64(tab.Len())
	for i := range 3 {
		p := tab.prob[i] / n
		for k := range tab.alias {
			if int(tab.alias[k]) == i && k != i {
				p += (1 - tab.prob[k]) / n
			}
		}
		if d := p - tab.Prob(i); d > 1e-15 || d < -1e-15 {
			t.Errorf("index %d: table gives %g, want %g", i, p, tab.Prob(i))
		}
	}
}

func TestErrors(t *testing.T) {
	for name, w := range map[string][]float64{
		"empty": nil, "negative": {1, -1}, "NaN": {1, nanf()}, "Inf": {1, inf()}, "zero sum": {0, 0},
	} {
		if _, err := New(w); err == nil {
			t.Errorf("%s: no error", name)
		}
	}
}

func nanf() float64 { z := 0.0; return z / z }
func inf() float64  { z := 0.0; return 1 / z }

func TestDrawAllocatesNothing(t *testing.T) {
	tab, _ := New([]float64{1, 2, 3})
	rng := rand.New(rand.NewPCG(1, 1))
	if a := testing.AllocsPerRun(1000, func() { tab.Draw(rng) }); a != 0 {
		t.Errorf("Draw allocates %v times", a)
	}
}

func BenchmarkDraw(b *testing.B) {
	w := make([]float64, 100000)
	rng := rand.New(rand.NewPCG(1, 1))
	for i := range w {
		w[i] = rng.ExpFloat64()
	}
	tab, _ := New(w)
	b.ReportAllocs()
	s := 0
	for b.Loop() {
		s += tab.Draw(rng)
	}
	_ = s
}
