// Copyright ©2026 The exactmh Authors. All rights reserved.
// Use of this source code is governed by a BSD-style
// license that can be found in the LICENSE file.

package diagnostics

// The limits behind the warnings of exactmh's Summary and stancsv's
// summaries.
const (
	// RHatThreshold and MinESSPerChain: Vehtari et al. 2021 recommend
	// R-hat < 1.01 and ESS > 100 per chain.
	RHatThreshold  = 1.01
	MinESSPerChain = 100
	// TailRatioWarn is the ratio of tail to bulk ESS below which a summary
	// warns that a chain may stick in a tail: a kernel whose proposal
	// reaches part of a tail too rarely (an independence-like
	// Crank–Nicolson proposal whose Gaussian tails are lighter than a
	// skewed posterior's) stays there for many transitions once it gets
	// in, which costs the tail quantiles' indicators far more effective
	// draws than the mean.
	TailRatioWarn = 0.5
	// StayWarn is the number of consecutive transitions at one point
	// beyond which a summary reports a chain's longest stay.
	StayWarn = 50
)
