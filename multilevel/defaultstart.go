// Copyright ©2026 The exactmh Authors. All rights reserved.
// Use of this source code is governed by a BSD-style
// license that can be found in the LICENSE file.

package multilevel

import "github.com/exactmh/exactmh"

// DefaultStart implements exactmh.DefaultStarter: a chain whose Settings
// give no Init starts from Center, or (Center nil) the Laplace-EM centre
// Start builds on, not the origin, where every effect is exactly 0 and a
// log scale's conditional is improper (GroupSMH's log-τ updates walked a
// chain to log τ ≈ −354; TestMultilevelDefaultStart).
func (k GroupSMH) DefaultStart(t *exactmh.Target) ([]float64, error) {
	return defaultStart(k.Name(), k.Center, t)
}

// DefaultStart implements exactmh.DefaultStarter, as GroupSMH's.
// On a Gaussian multilevel model with σ estimated (gaussgibbs.go) the
// centre is gaussCentre's EM one.
func (k GroupGibbs) DefaultStart(t *exactmh.Target) ([]float64, error) {
	if lay, gs, ok := gaussianOf(t.Energy(), t.Prior()); ok && k.Center == nil {
		c, _, err := sharedGaussCentre(t, lay, gs)
		return c, err
	}
	if nb, lay, base, ok := negBinOf(t.Energy(), t.Prior()); ok && k.Center == nil {
		c, _, err := negBinCentre(k.Name(), t, nb, lay, base)
		return c, err
	}
	return defaultStart(k.Name(), k.Center, t)
}

func defaultStart(name string, center []float64, t *exactmh.Target) ([]float64, error) {
	if center != nil {
		return center, nil
	}
	c, _, err := defaultMultilevelCenter(name, t)
	return c, err
}

var (
	_ exactmh.DefaultStarter = GroupSMH{}
	_ exactmh.DefaultStarter = GroupGibbs{}
)
