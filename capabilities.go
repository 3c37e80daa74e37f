// Copyright ©2026 The exactmh Authors. All rights reserved.
// Use of this source code is governed by a BSD-style
// license that can be found in the LICENSE file.

package exactmh

// A kernel declares what it accepts by its methods, each a typed setter
// that returns a copy of the kernel value with one field set (and, for the
// step scale and the proposal, a getter of that field), beside the kernel
// in its own file:
//
//	InitialScale() float64, WithScale(float64) Kernel     an initial step scale
//	Proposer() Proposal, WithProposal(Proposal) Kernel    a Proposal (exact kernels: a -CN form)
//	WithChi(float64) Kernel                               TunaMH's χ
//	WithSteps(int) Kernel                                 HMC's leapfrog steps
//	WithQ(float64) Kernel                                 FlyMC's q
//	WithLambda(float64) Kernel                            the Poisson kernels' λ
//	WithNonCentred(bool) Kernel                           a non-centred form (-NC)
//
// WithLaplace, the automatic default and the exactmh command (its --scale,
// --chi, --steps, --q, --lambda and -cn/-nc) ask a kernel for these and
// nothing else; a kernel written outside the package (package multilevel's
// GroupSMH) takes part by having the methods. TestKernelCapabilities
// checks, for every registered kernel, that each setter it declares sets
// the field it names and that the getter reads it back.

// scaleTaker is a kernel with an initial step scale.
type scaleTaker interface {
	Kernel
	InitialScale() float64
	WithScale(s float64) Kernel
}

// proposalTaker is a kernel moved by a Proposal.
type proposalTaker interface {
	Kernel
	Proposer() Proposal
	WithProposal(p Proposal) Kernel
}

// takesProposal reports whether k has a Crank–Nicolson form: an exact
// kernel moved by a Proposal, with a step scale.
func takesProposal(k Kernel) bool {
	_, ok := k.(proposalTaker)
	_, sok := k.(scaleTaker)
	return ok && sok && k.Exact()
}

// kernelProposal returns k's Proposal, nil if it has none.
func kernelProposal(k Kernel) Proposal {
	if p, ok := k.(proposalTaker); ok {
		return p.Proposer()
	}
	return nil
}
