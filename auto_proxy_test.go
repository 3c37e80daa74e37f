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
// whole choice at most 15 passes (a count, not a time). The same choice
// made twice with the seed is the same (String, which holds every pilot's
// counted cost and rate). Mutant: no proxy (autoProxyMin beyond N, the
// pilots on the full data) — caught by the count.
func TestAutoProxyPasses(t *testing.T) {
	if testing.Short() {
		t.Skip("a wide choice, about 10 CPU-s: the full run takes it")
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
	proxied := 0
	for _, k := range c.Candidates {
		full := k.Name == "NUTS" || strings.HasPrefix(k.Name, "MH-CN")
		if k.Cost > 0 && full != (k.Subsample > 0) {
			t.Errorf("%s: Subsample %g: want the full-batch pilots, and only they, on the proxy", k.Name, k.Subsample)
		}
		if k.Cost > 0 && full {
			proxied++
		}
	}
	if proxied == 0 {
		t.Fatalf("no full-batch pilot ran: the row does not test the proxy (%v)", c)
	}
	for _, ph := range c.Phases {
		for _, k := range c.Candidates {
			if ph.Name == "pilot "+k.Name && ph.Passes != k.Cost/float64(p.Len())/max(k.Subsample, 1) {
				t.Errorf("%s: %v passes, want its priced cost over N·Subsample", ph.Name, ph.Passes)
			}
		}
	}
	if got := c.Passes(); got > 15 {
		t.Errorf("the choice read %.3g passes over the data, want ≤ 15", got)
	}
	if again := choose(); again.String() != c.String() {
		t.Errorf("the same seed chose differently:\n%s\n%s", c, again)
	}

	defer func(m int) { autoProxyMin = m }(autoProxyMin)
	autoProxyMin = p.Len()
	if m := choose(); m.Passes() <= 15 {
		t.Errorf("mutant (no proxy) not caught: %.3g passes", m.Passes())
	} else {
		t.Logf("mutant (no proxy): %.3g passes, %s", m.Passes(), m.Name)
	}
}
