package exactmh

// MHBTRefreshOnReject returns an MHBT that, like the paper's reference
// code, moves to the new batch on rejection and re-evaluates θ on it.
func MHBTRefreshOnReject(k MHBT) MHBT { k.mutation = mhbtMutationRefreshOnReject; return k }

// MHBTNoNormaliser returns an MHBT whose RSGLD density omits the backward
// component's β^{−d} normaliser (the reference code's bug G18).
func MHBTNoNormaliser(k MHBT) MHBT { k.mutation = mhbtMutationNoNormaliser; return k }
