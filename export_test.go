package exactmh

// Test hooks: deliberately wrong kernel variants the exactness tests must
// catch (mutation tests).

// TunaMHEjectWithNew is TunaMH whose ejection probability uses φ_new in
// place of φ_old.
func TunaMHEjectWithNew(k TunaMH) TunaMH { k.mutation = mutationEjectNew; return k }

// PoissonMHFlippedThinning is PoissonMH that keeps draws with probability
// (a + M_i − φ_i)/(a + M_i) instead of (a + φ_i)/(a + M_i).
func PoissonMHFlippedThinning(k PoissonMH) PoissonMH { k.mutation = mutationPoissonFlip; return k }

// TunaMHUniformDraws is TunaMH that draws data uniformly instead of ∝ c_i.
func TunaMHUniformDraws(k TunaMH) TunaMH { k.mutation = mutationUniformDraws; return k }

// PoissonMHUniformDraws is PoissonMH that draws data uniformly instead of
// ∝ M_i.
func PoissonMHUniformDraws(k PoissonMH) PoissonMH { k.mutation = mutationUniformDraws; return k }
