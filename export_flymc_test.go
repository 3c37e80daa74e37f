package exactmh

// FlyMCBright reports whether datum i is bright in a FlyMC chain.
func FlyMCBright(ch Chain, i int) bool {
	c := ch.(*flyChain)
	return int(c.pos[i]) < c.nBright
}

// FlyMCNoBoundTerm returns a FlyMC that leaves the collapsed bound ratio
// Π B_i(θ′)/B_i(θ) out of the θ-step.
func FlyMCNoBoundTerm(k FlyMC) FlyMC { k.mutation = flyMutationNoBoundTerm; return k }

// FlyMCDarkenAlways returns a FlyMC whose z-step darkens every bright datum
// (as if q_{b→d} ignored ρ_i).
func FlyMCDarkenAlways(k FlyMC) FlyMC { k.mutation = flyMutationDarkenAlways; return k }
