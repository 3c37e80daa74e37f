// Copyright ©2026 The exactmh Authors. All rights reserved.
// Use of this source code is governed by a BSD-style
// license that can be found in the LICENSE file.

package exactmh_test

import (
	"context"
	"errors"
	"testing"

	"github.com/exactmh/exactmh"
)

// hiddenGradient hides the gradient of an energy.
type hiddenGradient struct{ exactmh.Energy }

// A kernel that needs gradients on a posterior without them fails before
// sampling with an error that errors.Is recognises as ErrNoGradient.
func TestErrNoGradient(t *testing.T) {
	p := logisticPosterior()
	bare := &exactmh.Posterior{Energy: hiddenGradient{p.Energy}, Prior: p.Prior}
	for _, k := range []exactmh.Kernel{exactmh.MALA{}, exactmh.HMC{}, exactmh.MHBT{RSGLD: true},
		exactmh.TunaMHSGLD{Chi: 0.01}, exactmh.PoissonMALA{}} {
		_, err := exactmh.Sample(context.Background(), bare, k, &exactmh.Settings{Chains: 1, Draws: 1})
		if !errors.Is(err, exactmh.ErrNoGradient) {
			t.Errorf("%s: error %v, want ErrNoGradient", k.Name(), err)
		}
	}
	if _, err := exactmh.FindMAP(context.Background(), bare, []float64{0, 0}, nil); !errors.Is(err, exactmh.ErrNoGradient) {
		t.Errorf("FindMAP: error %v, want ErrNoGradient", err)
	}
}
