package exactmh

// MALAStaleReverse returns a MALA whose reverse proposal density uses the
// gradient at θ instead of θ′.
func MALAStaleReverse(k MALA) MALA { k.mutation = malaMutationStaleReverse; return k }

// HMCStaleGradient returns an HMC that never refreshes the gradient inside
// the trajectory (the reference code's bug G10, in the extreme).
func HMCStaleGradient(k HMC) HMC { k.mutation = hmcMutationStaleGradient; return k }

// HMCLeapfrog integrates (θ, p) with an HMC chain's leapfrog at step eps and
// returns the end point; ok is false if the path left the support.
func HMCLeapfrog(ch Chain, theta, p []float64, eps float64) (thetaEnd, pEnd []float64, ok bool, err error) {
	c := ch.(*hmcChain)
	copy(c.next, theta)
	copy(c.momentum, p)
	if err := c.gradient(c.gradNext, c.next); err != nil {
		return nil, nil, false, err
	}
	ok, err = c.leapfrog(eps)
	return append([]float64(nil), c.next...), append([]float64(nil), c.momentum...), ok, err
}

// PoissonMALAStaleReverse returns a Poisson-MALA whose reverse proposal
// uses the gradient estimate at θ instead of θ′.
func PoissonMALAStaleReverse(k PoissonMALA) PoissonMALA {
	k.mutation = gradMutationStaleReverse
	return k
}

// PoissonBarkerFlipped returns a Poisson-Barker with its proposal ratio
// oriented the wrong way.
func PoissonBarkerFlipped(k PoissonBarker) PoissonBarker {
	k.mutation = gradMutationFlipBarker
	return k
}

// TunaMHSGLDStaleReverse returns a TunaMH-SGLD whose reverse proposal mean
// reuses the drift computed at θ.
func TunaMHSGLDStaleReverse(k TunaMHSGLD) TunaMHSGLD { k.mutation = gradMutationStaleReverse; return k }
