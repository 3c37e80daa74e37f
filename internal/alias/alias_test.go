package alias

import (
	"math"
	"math/rand/v2"
	"slices"
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

func TestUniform(t *testing.T) {
	w := []float64{2.5, 2.5, 2.5, 2.5, 2.5, 2.5, 2.5}
	tab, err := New(w)
	if err != nil {
		t.Fatal(err)
	}
	for i := range w {
		if tab.col[i].prob != 1 || tab.Prob(i) != 1.0/7 {
			t.Errorf("column %d: prob %g, Prob %g", i, tab.col[i].prob, tab.Prob(i))
		}
	}
	chiSquare(t, w, 100000, 2)
}

func TestSingleWeight(t *testing.T) {
	for _, w := range [][]float64{{5}, {1e-300}, {0, 0, 3, 0}} {
		tab, err := New(w)
		if err != nil {
			t.Fatal(err)
		}
		want := len(w) - 1
		if len(w) > 1 {
			want = 2
		}
		rng := rand.New(rand.NewPCG(3, 3))
		for range 10000 {
			if i := tab.Draw(rng); i != want {
				t.Fatalf("weights %v: drew %d, want always %d", w, i, want)
			}
		}
		if tab.Prob(want) != 1 || tab.Total() != w[want] {
			t.Errorf("weights %v: Prob %g Total %g", w, tab.Prob(want), tab.Total())
		}
	}
}

// Zero weights are never drawn, by construction: a column keeps itself
// only with prob > 0, which needs a positive weight, and yields its alias
// only with prob < 1, whose alias must then have positive weight. Checked
// on adversarial tables (tiny, huge and zero weights mixed) and by drawing.
func TestZeroWeightsNeverDrawn(t *testing.T) {
	tables := [][]float64{
		{0, 1e-300, 0, 1},
		{0, 1},
		{1, 0},
		{0, 0, 0, 1e-300},
		{0, 5e-324, 1, 0, 1e300},
		{1e-300, 1e300, 0},
	}
	rng := rand.New(rand.NewPCG(4, 4))
	for range 300 {
		w := make([]float64, 1+rng.IntN(500))
		for i := range w {
			switch rng.IntN(5) {
			case 0:
				// zero
			case 1:
				w[i] = math.Ldexp(rng.Float64(), -rng.IntN(1000))
			case 2:
				w[i] = math.Ldexp(1+rng.Float64(), rng.IntN(900))
			default:
				w[i] = rng.ExpFloat64()
			}
		}
		w[rng.IntN(len(w))] = 1 // at least one positive
		tables = append(tables, w)
	}
	for _, w := range tables {
		tab, err := New(w)
		if err != nil {
			t.Fatalf("weights %v: %v", w, err)
		}
		for k := range w {
			if tab.col[k].prob > 0 && w[k] == 0 {
				t.Fatalf("weights %v: column %d of weight 0 keeps itself with prob %g", w, k, tab.col[k].prob)
			}
			if a := tab.col[k].alias; tab.col[k].prob < 1 && (a < 0 || int(a) >= len(w) || w[a] == 0) {
				t.Fatalf("weights %v: column %d (prob %g) aliases %d of weight 0", w, k, tab.col[k].prob, a)
			}
		}
	}
	for _, w := range tables[:6] {
		tab, _ := New(w)
		for range 100000 {
			if i := tab.Draw(rng); w[i] == 0 {
				t.Fatalf("weights %v: drew index %d of weight 0", w, i)
			}
		}
	}
}

// The probability the table implies for each index, (prob_i + Σ_{k: alias
// k = i} (1 − prob_k))/n, equals w_i/Σw up to rounding.
func TestImpliedProbabilities(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 7))
	tables := [][]float64{{1, 3, 0}, {1, 2, 3, 4, 0, 10}}
	for range 50 {
		w := make([]float64, 1+rng.IntN(2000))
		for i := range w {
			if rng.IntN(3) > 0 {
				w[i] = math.Exp(10 * rng.NormFloat64())
			}
		}
		w[0] = 1
		tables = append(tables, w)
	}
	for _, w := range tables {
		tab, err := New(w)
		if err != nil {
			t.Fatal(err)
		}
		n := float64(tab.Len())
		implied := make([]float64, len(w))
		for k := range w {
			implied[k] += tab.col[k].prob / n
			if tab.col[k].prob < 1 {
				implied[tab.col[k].alias] += (1 - tab.col[k].prob) / n
			}
		}
		for i := range w {
			if d := math.Abs(implied[i] - tab.Prob(i)); d > 1e-13 {
				t.Fatalf("n = %d, index %d: table gives %g, want %g", len(w), i, implied[i], tab.Prob(i))
			}
		}
	}
}

func TestProbAndTotal(t *testing.T) {
	tab, err := New([]float64{1, 3, 0})
	if err != nil {
		t.Fatal(err)
	}
	if tab.Len() != 3 || tab.Total() != 4 || tab.Prob(0) != 0.25 || tab.Prob(1) != 0.75 || tab.Prob(2) != 0 {
		t.Errorf("Len %d Total %g Prob %g %g %g", tab.Len(), tab.Total(), tab.Prob(0), tab.Prob(1), tab.Prob(2))
	}
}

func TestErrors(t *testing.T) {
	for name, w := range map[string][]float64{
		"nil":      nil,
		"empty":    {},
		"negative": {1, -1},
		"-0 only":  {math.Copysign(0, -1)},
		"NaN":      {1, math.NaN()},
		"+Inf":     {1, math.Inf(1)},
		"-Inf":     {1, math.Inf(-1)},
		"zero sum": {0, 0},
		"overflow": {math.MaxFloat64, math.MaxFloat64},
	} {
		if _, err := New(w); err == nil {
			t.Errorf("%s: no error", name)
		}
	}
}

func TestDrawAllocatesNothing(t *testing.T) {
	tab, _ := New([]float64{1, 2, 3, 0})
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

// twoStackColumns is Vose's build with its small and large stacks in two
// arrays, as New built it before its stacks shared one: the reference New
// must equal column for column.
func twoStackColumns(w []float64) []column {
	n := len(w)
	total := 0.0
	for _, v := range w {
		total += v
	}
	col := make([]column, n)
	var small, large []int32
	for i, v := range w {
		col[i].prob = v / total * float64(n)
		if col[i].prob < 1 {
			small = append(small, int32(i))
		} else {
			large = append(large, int32(i))
		}
	}
	for len(small) > 0 && len(large) > 0 {
		s, l := small[len(small)-1], large[len(large)-1]
		small = small[:len(small)-1]
		col[s].alias = l
		col[l].prob -= 1 - col[s].prob
		if col[l].prob < 1 {
			large = large[:len(large)-1]
			small = append(small, l)
		}
	}
	anyPositive := int32(-1)
	for i, v := range w {
		if v > 0 {
			anyPositive = int32(i)
			break
		}
	}
	for _, rest := range [][]int32{large, small} {
		for _, i := range rest {
			if w[i] > 0 {
				col[i].prob = 1
			} else {
				col[i] = column{prob: 0, alias: anyPositive}
			}
		}
	}
	return col
}

// TestSharedStacksBitForBit: New's stacks in one array give every column
// the threshold and alias of the two-array build, bit for bit, on skewed,
// uniform, sparse (many zeros), single-heavy and rounding-prone weights.
func TestSharedStacksBitForBit(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 8))
	gens := map[string]func(i int) float64{
		"exponential": func(int) float64 { return rng.ExpFloat64() },
		"uniform":     func(int) float64 { return 1 },
		"sparse":      func(int) float64 { return float64(rng.IntN(3)/2) * rng.Float64() },
		"one heavy":   func(i int) float64 { return map[bool]float64{true: 1e6, false: 1e-3}[i == 17] },
		"tenths":      func(int) float64 { return 0.1 },
		"lognormal":   func(int) float64 { return math.Exp(3 * rng.NormFloat64()) },
	}
	for name, gen := range gens {
		for _, n := range []int{1, 2, 3, 10, 1000, 100_003} {
			w := make([]float64, n)
			for i := range w {
				w[i] = gen(i)
			}
			w[n-1] += 0.5 // never all zero
			tab, err := New(w)
			if err != nil {
				t.Fatalf("%s, n = %d: %v", name, n, err)
			}
			want := twoStackColumns(w)
			for i := range want {
				if math.Float64bits(tab.col[i].prob) != math.Float64bits(want[i].prob) || tab.col[i].alias != want[i].alias {
					t.Fatalf("%s, n = %d: column %d = %+v, two-stack build %+v", name, n, i, tab.col[i], want[i])
				}
			}
		}
	}
}

// TestDrawIntoIsDraw: DrawInto's indices, and those of DrawColumns
// resolved through Column as its documentation says, and the generator's
// state after either, are those of as many calls of Draw, on skewed
// weights with zeros.
func TestDrawIntoIsDraw(t *testing.T) {
	w := make([]float64, 1000)
	rng := rand.New(rand.NewPCG(9, 10))
	for i := range w {
		w[i] = float64(rng.IntN(4)) * rng.ExpFloat64()
	}
	tab, err := New(w)
	if err != nil {
		t.Fatal(err)
	}
	routes := map[string]func(rng *rand.Rand, idx []int, u []float64){
		"DrawInto": tab.DrawInto,
		"DrawColumns and Column": func(rng *rand.Rand, idx []int, u []float64) {
			DrawColumns(rng, tab.Len(), idx, u)
			for j, k := range idx {
				if prob, alias := tab.Column(k); !(u[j] < prob) {
					idx[j] = alias
				}
			}
		},
	}
	for name, draw := range routes {
		a, b := rand.New(rand.NewPCG(1, 2)), rand.New(rand.NewPCG(1, 2))
		for _, n := range []int{0, 1, 7, 256} {
			idx, u := make([]int, n), make([]float64, n)
			draw(a, idx, u)
			for j, got := range idx {
				if want := tab.Draw(b); got != want {
					t.Fatalf("%s, n = %d: index %d = %d, Draw gives %d", name, n, j, got, want)
				}
				if w[got] == 0 {
					t.Fatalf("%s: drew %d of weight 0", name, got)
				}
			}
			if a.Uint64() != b.Uint64() {
				t.Fatalf("%s, n = %d: the generators differ after the draws", name, n)
			}
		}
	}
}

// TestBuild checks that Build makes New's columns and total bit for bit,
// in place, for weights with zeros, ties and a wide range, and New's
// errors.
func TestBuild(t *testing.T) {
	rng := rand.New(rand.NewPCG(4, 4))
	for _, n := range []int{1, 2, 7, 64, 65, 1000} {
		for trial := range 5 {
			w := make([]float64, n)
			for i := range w {
				switch rng.IntN(4) {
				case 0:
					w[i] = 0
				case 1:
					w[i] = 1
				default:
					w[i] = math.Exp(10 * rng.NormFloat64())
				}
			}
			if trial == 0 {
				w[rng.IntN(n)] = 3
			}
			tab, err := New(slices.Clone(w))
			if err != nil {
				continue
			}
			a := make([]int32, n)
			total, err := Build(w, a)
			if err != nil {
				t.Fatal(err)
			}
			if total != tab.Total() {
				t.Fatalf("n %d: total %v, want %v", n, total, tab.Total())
			}
			for k := range n {
				if p, al := tab.Column(k); p != w[k] || int32(al) != a[k] {
					t.Fatalf("n %d: column %d (%v, %d), want (%v, %d)", n, k, w[k], a[k], p, al)
				}
			}
		}
	}
	for _, w := range [][]float64{nil, {0, 0}, {1, -1}, {math.NaN()}, {math.Inf(1)}} {
		_, e1 := New(slices.Clone(w))
		c := slices.Clone(w)
		_, e2 := Build(c, make([]int32, len(w)))
		if e1 == nil || e2 == nil || e1.Error() != e2.Error() || !slices.Equal(c, w) && len(w) > 0 && !math.IsNaN(w[0]) {
			t.Errorf("weights %v: Build %v, New %v", w, e2, e1)
		}
	}
}

// BenchmarkNew and BenchmarkBuild time a build of 10⁶ weights (a quarter
// of them zero, the rest log-normal), by New and in place by Build.
func BenchmarkNew(b *testing.B) {
	w := benchWeights(1e6)
	for b.Loop() {
		if _, err := New(w); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkBuild(b *testing.B) {
	w := benchWeights(1e6)
	c, a := make([]float64, len(w)), make([]int32, len(w))
	for b.Loop() {
		copy(c, w)
		if _, err := Build(c, a); err != nil {
			b.Fatal(err)
		}
	}
}

func benchWeights(n int) []float64 {
	rng := rand.New(rand.NewPCG(8, 8))
	w := make([]float64, n)
	for i := range w {
		if rng.IntN(4) > 0 {
			w[i] = math.Exp(2 * rng.NormFloat64())
		}
	}
	return w
}
