package exactmh

// SMHNoControlVariate returns an SMH that skips the control-variate factor.
func SMHNoControlVariate(k SMH) SMH { k.mutation = smhMutationNoControlVariate; return k }

// SMHFlippedRemainder returns an SMH that thins with the remainder of the
// reverse move.
func SMHFlippedRemainder(k SMH) SMH { k.mutation = smhMutationFlipRemainder; return k }
