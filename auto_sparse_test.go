// Copyright ©2026 The exactmh Authors. All rights reserved.
// Use of this source code is governed by a BSD-style
// license that can be found in the LICENSE file.

package exactmh_test

import (
	"context"
	"math"
	"math/rand/v2"
	"runtime"
	"strings"
	"testing"

	"github.com/exactmh/exactmh"
)

// FindLaplace takes the sparse path for an energy and prior with sparse
// Hessians: no dense matrix, and SD, Covariance, LogProb and LogEvidence
// agree with the dense approximation that L-BFGS and the dense Hessian
// give (MAPLBFGS forces the dense path).
func TestFindLaplaceSparsePath(t *testing.T) {
	post := riPosterior(7, 3000, 3, 60)
	d := post.Dim()
	ctx := context.Background()
	la, err := exactmh.FindLaplace(ctx, post, make([]float64, d), nil)
	if err != nil {
		t.Fatal(err)
	}
	if la.SparseFactor == nil || la.Precision != nil || la.CovChol != nil || !la.ExactHessian {
		t.Fatalf("FindLaplace: SparseFactor %v, Precision %v, CovChol %v, ExactHessian %v; want the sparse approximation alone", la.SparseFactor != nil, la.Precision != nil, la.CovChol != nil, la.ExactHessian)
	}
	dense, err := exactmh.FindLaplace(ctx, post, make([]float64, d), &exactmh.MAPSettings{Method: exactmh.MAPLBFGS})
	if err != nil {
		t.Fatal(err)
	}
	if dense.SparseFactor != nil {
		t.Fatal("MAPLBFGS took the sparse path")
	}
	sd, dsd := la.SD(), dense.SD()
	cov, dcov := la.Covariance(), dense.Covariance()
	for j := range d {
		if math.Abs(la.Mean[j]-dense.Mean[j]) > 1e-4*dsd[j] {
			t.Errorf("mode[%d] = %.8g, dense %.8g", j, la.Mean[j], dense.Mean[j])
		}
		if math.Abs(sd[j]-dsd[j]) > 1e-5*dsd[j] {
			t.Errorf("SD[%d] = %.8g, dense %.8g", j, sd[j], dsd[j])
		}
		for k := range d {
			if math.Abs(cov.At(j, k)-dcov.At(j, k)) > 1e-5*dsd[j]*dsd[k] {
				t.Fatalf("Covariance[%d][%d] = %.8g, dense %.8g", j, k, cov.At(j, k), dcov.At(j, k))
			}
		}
	}
	if math.Abs(la.LogEvidence-dense.LogEvidence) > 1e-6*math.Abs(dense.LogEvidence) {
		t.Errorf("LogEvidence %.10g, dense %.10g", la.LogEvidence, dense.LogEvidence)
	}
	x := la.Rand(rand.New(rand.NewPCG(1, 1)), nil)
	if a, b := la.LogProb(x), dense.LogProb(x); math.Abs(a-b) > 1e-5*(1+math.Abs(b)) {
		t.Errorf("LogProb %.10g, dense %.10g", a, b)
	}
	if at, err := exactmh.LaplaceAt(post, la.Mean); err != nil {
		t.Errorf("LaplaceAt at the mode: %v", err)
	} else if at.SparseFactor == nil || at.LogDetCov != la.LogDetCov || at.LogEvidence != la.LogEvidence {
		t.Errorf("LaplaceAt at the mode: sparse %v, LogDetCov %v, LogEvidence %v; want %v, %v", at.SparseFactor != nil, at.LogDetCov, at.LogEvidence, la.LogDetCov, la.LogEvidence)
	}
	if cn, err := la.CrankNicolson(); err != nil || !strings.Contains(cn.String(), "nnzL=") {
		t.Errorf("sparse CrankNicolson(): %v, %v; want the proposal through the sparse factor", cn, err)
	}
	if prop, err := la.Proposal(); err != nil {
		t.Error(err)
	} else if cn, ok := prop.(*exactmh.CrankNicolson); !ok || !strings.Contains(cn.String(), "nnzL=") {
		t.Errorf("Proposal() is %v, want a sparse *CrankNicolson", prop)
	}
	if prop, err := dense.Proposal(); err != nil {
		t.Error(err)
	} else if _, ok := prop.(*exactmh.CrankNicolson); !ok {
		t.Errorf("dense Proposal() is %T, want *CrankNicolson", prop)
	}
	if _, err := exactmh.ControlVariates(post, la); err == nil {
		t.Error("ControlVariates accepted a sparse approximation")
	}
	k, _, name, err := exactmh.WithLaplace(post, la, exactmh.MH{}, false, true)
	if err != nil || name != "MH-CN" {
		t.Fatalf("WithLaplace: %v, name %q", err, name)
	}
	if cn, ok := k.(exactmh.MH).Proposal.(*exactmh.CrankNicolson); !ok || !strings.Contains(cn.String(), "nnzL=") {
		t.Errorf("WithLaplace's MH-CN proposal is %v", k.(exactmh.MH).Proposal)
	}
	s := exactmh.LaplaceInits(&exactmh.Settings{Chains: 3, Seed: 4}, la, post)
	if len(s.Inits) != 3 {
		t.Fatalf("LaplaceInits: %d inits, want 3", len(s.Inits))
	}
	for c, x := range s.Inits {
		var z float64
		for j := range d {
			z = math.Max(z, math.Abs(x[j]-la.Mean[j])/sd[j])
		}
		if z == 0 || z > 6 {
			t.Errorf("chain %d starts %.2f sds from the mode at most, want a draw of the approximation", c, z)
		}
	}
}

// The automatic default recognises a posterior with sparse Hessians:
// the sparse Laplace approximation, MH with the sparse Crank–Nicolson
// proposal and NUTS piloted, the reason naming the sparse approximation;
// Sample with a nil kernel runs the choice from draws of it.
func TestChooseSparse(t *testing.T) {
	if testing.Short() {
		t.Skip("pilots")
	}
	post := riPosterior(8, 4000, 3, 100)
	ctx := context.Background()
	res, err := exactmh.Sample(ctx, post, nil, &exactmh.Settings{Chains: 2, Warmup: 300, Draws: 500, Seed: 3})
	if err != nil {
		t.Fatal(err)
	}
	c := res.Choice
	if c == nil || c.Laplace == nil || c.Laplace.SparseFactor == nil {
		t.Fatalf("Choice %v: want one built on the sparse Laplace approximation", c)
	}
	if !strings.Contains(c.Reason, "sparse MAP and Laplace approximation, d = 103") {
		t.Errorf("Reason %q does not name the sparse approximation", c.Reason)
	}
	names := map[string]bool{}
	for _, k := range c.Candidates {
		names[k.Name] = true
	}
	if !names["MH-CN"] || !names["NUTS"] {
		t.Errorf("candidates %v, want MH-CN and NUTS", c.Candidates)
	}
	t.Logf("%v", c)
	sum := res.Summary()
	sd := c.Laplace.SD()
	for j, ps := range sum.Params {
		if z := math.Abs(ps.Mean-c.Laplace.Mean[j]) / sd[j]; z > 1 {
			t.Errorf("θ[%d]: posterior mean %.4f is %.2f Laplace sds from the mode %.4f", j, ps.Mean, z, c.Laplace.Mean[j])
		}
	}
}

// At d = 20,003 (20,000 group intercepts) the sparse path never forms a
// d×d matrix: what FindLaplace's approximation and the sparse
// Crank–Nicolson proposal keep (heap in use after a collection, while they
// are live) is below a twentieth of one dense d×d matrix (3.2 GB). (The
// test energy's SparseHessian builds a triplet list of every datum's
// entries at each Newton iteration, which dominates the total allocated,
// logged.)
func TestFindLaplaceSparseLarge(t *testing.T) {
	if testing.Short() {
		t.Skip("d = 20,003")
	}
	const g = 20000
	post := riPosterior(9, 3*g, 3, g)
	d := post.Dim()
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	la, err := exactmh.FindLaplace(context.Background(), post, make([]float64, d), nil)
	if err != nil {
		t.Fatal(err)
	}
	if la.SparseFactor == nil {
		t.Fatal("FindLaplace did not take the sparse path")
	}
	sd := la.SD()
	x := la.Rand(rand.New(rand.NewPCG(1, 2)), nil)
	exactmh.LaplaceInits(&exactmh.Settings{Chains: 4}, la, post)
	prop, err := la.Proposal()
	if err != nil {
		t.Fatal(err)
	}
	next := make([]float64, d)
	rng := rand.New(rand.NewPCG(3, 4))
	for range 100 {
		prop.Propose(rng, next, x, 0.5)
	}
	runtime.GC()
	runtime.ReadMemStats(&after)
	kept := int64(after.HeapAlloc) - int64(before.HeapAlloc)
	dense := int64(8 * d * d)
	t.Logf("d = %d: nnz(H) = %d, nnz(L) = %d, %d passes; %.1f MB kept, %.0f MB allocated in all (a dense d×d: %.0f MB); sd[0] = %.3g",
		d, la.SparsePrecision.NNZ(), la.SparseFactor.Symbolic().FactorNNZ(), la.Passes, float64(kept)/1e6,
		float64(after.TotalAlloc-before.TotalAlloc)/1e6, float64(dense)/1e6, sd[0])
	if kept > dense/20 {
		t.Errorf("%d bytes kept, want below a twentieth of a dense d×d matrix (%d bytes)", kept, dense)
	}
	runtime.KeepAlive(la)
	runtime.KeepAlive(prop)
}
