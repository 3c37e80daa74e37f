// Copyright ©2026 The exactmh Authors. All rights reserved.
// Use of this source code is governed by a BSD-style
// license that can be found in the LICENSE file.

package exactmh

import (
	"context"
	"fmt"
	"strings"
)

// sparseChoice is the automatic default on a posterior whose Laplace
// approximation is sparse (la.SparseFactor: a SparseHessianer energy and
// prior): it pilots MH with the sparse Crank–Nicolson proposal ("MH-CN"),
// TunaMH on a tempered posterior with a DiffBound, and NUTS, and takes the
// fastest. The posterior is taken as unimodal (each dispersed search would
// be an L-BFGS run over all the data in d dimensions), and no control
// variates are built (they need the dense approximation).
func sparseChoice(ctx context.Context, p *Posterior, la *LaplaceApprox, seed uint64) (*Choice, error) {
	cn, err := la.CrankNicolson()
	if err != nil {
		return nil, err
	}
	var cands []autoCand
	for _, ki := range withRole(autoCN) {
		k, _ := withStep(ki.New(nil), cn, func(float64) float64 { return 1 })
		cands = append(cands, autoCand{name: ki.Name + "-CN", post: p, k: k, passes: ki.passes})
	}
	if p.beta() != 1 {
		if _, err := p.diffBound(); err == nil {
			for _, ki := range withRole(autoBounded) {
				cands = append(cands, autoCand{name: ki.Name, post: p, k: ki.New(nil)})
			}
		}
	}
	for _, ki := range withRole(autoFull) {
		cands = append(cands, autoCand{name: ki.Name, post: p, k: ki.New(nil), passes: ki.passes})
	}
	choice := &Choice{Laplace: la}
	best, _, err := runPilots(ctx, choice, cands, la.Mean, seed, false)
	if err != nil {
		return nil, err
	}
	c := cands[best]
	choice.Name, choice.Kernel, choice.Posterior = c.name, c.k, c.post
	choice.fromLaplace = strings.HasSuffix(c.name, "-CN")
	choice.Reason = fmt.Sprintf("%s of %d pilots (sparse MAP and Laplace approximation, d = %d, nnz(L) = %d, after %d passes over the data; no control variates: they need the dense approximation)",
		choice.Reason, len(cands), len(la.Mean), la.SparseFactor.Symbolic().FactorNNZ(), la.Passes)
	sortCandidates(choice.Candidates)
	return choice, nil
}
