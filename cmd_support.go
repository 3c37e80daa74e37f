// Copyright ©2026 The exactmh Authors. All rights reserved.
// Use of this source code is governed by a BSD-style
// license that can be found in the LICENSE file.

package exactmh

import (
	"errors"
	"fmt"
	"strings"
)

// WithLaplace returns kernel k in the forms the automatic default's
// candidate names describe (see Choice.Name), built as Choose builds its
// candidates: with cv, on p's ControlVariates rewrite around la ("-CV");
// with cn, moved by the Crank–Nicolson proposal around la, N(θ̂, H⁻¹),
// with initial step scale 1 unless k sets one ("-CN"). It returns the
// kernel, the posterior it samples (p itself without cv) and the name,
// e.g. "TunaMH-CV-CN": WithLaplace(p, la, TunaMH{}, true, true) is the
// candidate of that name that Choose pilots, so a program (the exactmh
// command, say) can run the kernel a Choice named in another process
// without pilots. la is the Laplace approximation from FindLaplace (Choose
// starts it at Settings.Init, the origin by default, with MAPSettings Tol
// AutoMAPTol); it may be nil when neither cv nor cn is asked for.
//
// cn applies to the exact kernels that declare WithProposal and WithScale
// (capabilities.go): MH, TunaMH, TFMH, SMH, FlyMC and PoissonMH; another
// kernel is an error, as is cv on an energy that is not a GLM (ControlVariates' error).
func WithLaplace(p *Posterior, la *LaplaceApprox, k Kernel, cv, cn bool) (Kernel, *Posterior, string, error) {
	if k == nil {
		return nil, nil, "", errors.New("exactmh: WithLaplace: nil Kernel")
	}
	name := k.Name()
	if (cv || cn) && la == nil {
		return nil, nil, "", errors.New("exactmh: WithLaplace: -CV and -CN need a Laplace approximation (FindLaplace)")
	}
	post := p
	if cv {
		var err error
		if post, err = ControlVariates(p, la); err != nil {
			return nil, nil, "", err
		}
		name += "-CV"
	}
	if cn {
		prop, err := la.Proposal()
		if err != nil {
			return nil, nil, "", err
		}
		scale := func(s float64) float64 {
			if s == 0 {
				return 1
			}
			return s
		}
		var ok bool
		if k, ok = withStep(k, prop, scale); !ok {
			return nil, nil, "", fmt.Errorf("exactmh: WithLaplace: kernel %s takes no proposal, so it has no Crank–Nicolson form (-CN): only %s do", k.Name(), strings.Join(proposalKernels(), ", "))
		}
		name += "-CN"
	}
	return k, post, name, nil
}

// withStep returns k with its Proposal set to prop (left as it is when
// prop is nil) and its initial step scale to scale(k's InitialScale), and
// true: for any kernel that declares a step scale (WithScale) when prop is
// nil, and for the exact kernels that also declare WithProposal (MH,
// TunaMH, TFMH, SMH, FlyMC, PoissonMH; capabilities.go) when it is not.
// Any other kernel is returned as it is, with false.
func withStep(k Kernel, prop Proposal, scale func(float64) float64) (Kernel, bool) {
	if _, ok := k.(scaleTaker); !ok || prop != nil && !takesProposal(k) {
		return k, false
	}
	if prop != nil {
		k = k.(proposalTaker).WithProposal(prop)
	}
	s := k.(scaleTaker)
	return s.WithScale(scale(s.InitialScale())), true
}

// proposalKernels returns the names of the registered kernels that take a
// Proposal.
func proposalKernels() []string {
	var names []string
	for _, ki := range registry {
		if ki.TakesProposal() {
			names = append(names, ki.Name)
		}
	}
	return names
}
