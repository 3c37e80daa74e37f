package exactmh

// TFMHFlippedSign returns a TFMH that rejects with probability
// max(0, −ΔU_i)/(c_iM): the per-datum factor of the reverse move.
func TFMHFlippedSign(k TFMH) TFMH { k.mutation = tfmhMutationFlipSign; return k }

// TFMHNoPriorFactor returns a TFMH that leaves out the prior-and-proposal
// factor.
func TFMHNoPriorFactor(k TFMH) TFMH { k.mutation = tfmhMutationNoPriorFactor; return k }
