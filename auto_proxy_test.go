// Copyright ©2026 The exactmh Authors. All rights reserved.
// Use of this source code is governed by a BSD-style
// license that can be found in the LICENSE file.

package exactmh

import (
	"context"
	"math"
	"math/rand/v2"
	"strings"
	"testing"
)

// proxyEnergy returns β·ΣU_i(θ) of p's energy over all its data.
func proxyEnergy(p *Posterior, theta []float64) float64 {
	n := p.Len()
	idx := make([]int, n)
	for i := range idx {
		idx[i] = i
	}
	dst := make([]float64, n)
	p.Energy.Energies(dst, theta, idx)
	var s float64
	for _, v := range dst {
		s += v
	}
	return p.beta() * s
}

// TestSubsampleProxy: the subsample proxy of a control-variate posterior
// (subsampleProxy) weighs its remainders N/n, so that its energy, an
// estimate of the whole remainder sum from n data, matches the whole
// one's (to 0.2 of its root mean square) where the remainders are large
// (at draws of the Laplace approximation 4 sds out);
// its prior is the control variates' own, the exact expansion. Mutants:
// the remainders unweighted (Beta not scaled: the sum n/N of the whole),
// and the weight w not N/n — both caught.
func TestSubsampleProxy(t *testing.T) {
	const n, d = 20000, 4
	_, cv, la := cvProblem(t, "logistic", n, d, 1)
	for _, mutant := range []string{"", "unweighted", "weight"} {
		proxy, w := subsampleProxy(cv)
		if proxy == nil {
			t.Fatalf("no proxy at N = %d, d = %d", n, d)
		}
		switch mutant {
		case "unweighted":
			proxy.Beta = cv.beta()
		case "weight":
			w *= 2
		}
		bad := ""
		if sub := proxy.Len(); sub < autoProxyMin || sub >= n/2 || math.Abs(w*float64(sub)-n) > 1e-9*n {
			bad = "size"
		}
		if proxy.Prior != cv.Prior {
			bad = "prior"
		}
		var worst, ms float64
		for k := range 8 {
			theta := la.Rand(rand.New(rand.NewPCG(uint64(k), 7)), nil)
			for j := range theta {
				theta[j] = la.Mean[j] + 4*(theta[j]-la.Mean[j])
			}
			full, est := proxyEnergy(cv, theta), proxyEnergy(proxy, theta)
			worst, ms = max(worst, math.Abs(est-full)), ms+full*full/8
		}
		if !(ms > 1e-6) {
			t.Fatalf("remainder sums of mean square %g: too small to test", ms)
		}
		if worst /= math.Sqrt(ms); worst > 0.2 {
			bad = "energy"
		}
		switch {
		case mutant == "" && bad != "":
			t.Fatalf("proxy (w = %g, n = %d): %s wrong; worst error over the remainder sums' root mean square %.3g", w, proxy.Len(), bad, worst)
		case mutant != "" && bad == "":
			t.Errorf("mutant %q not caught (worst relative error %.3g)", mutant, worst)
		}
		if mutant == "" {
			t.Logf("proxy of %d data, w = %g: worst error over the remainder sums' root mean square %.3g", proxy.Len(), w, worst)
		}
	}
	if p, _ := subsampleProxy(nil); p != nil {
		t.Error("a proxy without control variates")
	}
}

// TestAutoProxyPasses counts the passes over the data that the automatic
// choice reads on a wide logistic regression (d = 200, N = 2·10⁴), where
// the control-variate kernels' bound rules them out and the full-batch
// kernels, MH-CN with its capped variants and NUTS, are piloted: on the
// subsample proxy each pilot reads 1/Subsample of its priced cost, and the
// whole choice reads at most 2/Subsample of the passes of the same choice
// with its pilots on the full data (the mutant: autoProxyMin beyond N,
// caught by the count), prices MH-CN's pilot on the proxy as on the data
// (its rate within 4× of the data pilot's; mutant: the proxy's evaluations
// counted once, caught), and chooses the same kernel. The
// same choice made twice with the seed is the same (String, which holds
// every pilot's counted cost and rate). Counts, never times. The cap may
// differ: on this row the proxy's remainders, read on 2,000 data and
// weighted 10, roughen the posterior for the uncapped, independence-like
// kernel (2 chains × 2,000 draws: min tail ESS 222 on the proxy, 826 on the
// data) and not for the capped one (633 and 634), so the proxy keeps the
// cap ρ ≥ 0.22 where the data would not (figures/bench/default_table.txt).
func TestAutoProxyPasses(t *testing.T) {
	if testing.Short() {
		t.Skip("a wide choice, about 15 CPU-s: the full run takes it")
	}
	p := wideLogistic(t, 20000, 200)
	choose := func() *Choice {
		c, err := Choose(context.Background(), p, &Settings{Seed: 3})
		if err != nil {
			t.Fatal(err)
		}
		return c
	}
	c := choose()
	t.Logf("%v", c)
	var w float64
	for _, k := range c.Candidates {
		full := k.Name == "NUTS" || strings.HasPrefix(k.Name, "MH-CN")
		if k.Cost > 0 && full != (k.Subsample > 0) {
			t.Errorf("%s: Subsample %g: want the full-batch pilots, and only they, on the proxy", k.Name, k.Subsample)
		}
		if k.Cost > 0 && full {
			w = k.Subsample
		}
	}
	if !(w > 2) {
		t.Fatalf("no full-batch pilot ran on a proxy: the row does not test it (%v)", c)
	}
	for _, ph := range c.Phases {
		for _, k := range c.Candidates {
			if ph.Name == "pilot "+k.Name && ph.Passes != k.Cost/float64(p.Len())/max(k.Subsample, 1) {
				t.Errorf("%s: %v passes, want its priced cost over N·Subsample", ph.Name, ph.Passes)
			}
		}
	}
	if again := choose(); again.String() != c.String() {
		t.Errorf("the same seed chose differently:\n%s\n%s", c, again)
	}
	cap := func(c *Choice) float64 {
		if cn, ok := cnProposal(c.Kernel); ok {
			return cn.MaxScale
		}
		return -1
	}
	defer func(m int) { autoProxyMin = m }(autoProxyMin)
	autoProxyMin = p.Len()
	m := choose()
	t.Logf("pilots on the full data: %.4g passes, %s (cap %g); on the proxy (1/%.3g): %.4g passes, %s (cap %g)",
		m.Passes(), m.Name, cap(m), w, c.Passes(), c.Name, cap(c))
	few := func(c *Choice) bool { return c.Passes()*w/2 <= m.Passes() }
	if !few(c) {
		t.Errorf("the choice read %.4g passes, above 2/%.3g of the %.4g its pilots read on the full data", c.Passes(), w, m.Passes())
	}
	if few(m) {
		t.Error("mutant (no proxy) not caught")
	}
	// The proxy's transitions priced as full-batch ones (pricing.data):
	// the uncapped MH-CN's rate on the scale of its rate on the data
	// (unweighted, the proxy's would be N/n times higher: caught).
	rate := func(c *Choice) float64 {
		for _, k := range c.Candidates {
			if k.Name == "MH-CN" {
				return max(k.ESSPerCost, k.AtMost)
			}
		}
		return 0
	}
	if r := rate(c) / rate(m); !(r > 0.25 && r < 4) {
		t.Errorf("MH-CN's pilot: %.4g ESS per 10⁶ evaluations on the proxy, %.4g on the data: not priced as full-batch transitions", rate(c), rate(m))
	}
	if m.Name != c.Name {
		t.Errorf("on the proxy the choice is %s, on the full data %s", c.Name, m.Name)
	}
}
