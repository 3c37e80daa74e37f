// Copyright ©2026 The exactmh Authors. All rights reserved.
// Use of this source code is governed by a BSD-style
// license that can be found in the LICENSE file.

package exactmh

import (
	"fmt"
	"unsafe"

	"github.com/exactmh/exactmh/internal/memavail"
)

// DrawBytes is the memory r holds per kept draw: θ (8·d bytes), the
// transition's Info and its time — 896 bytes at d = 100. Sample reserves
// the room for every draw before the chains start, so a run's draws take
// Chains·Draws·DrawBytes bytes and no more (no append growth), and it
// refuses a run whose draws would not fit in the memory available (see
// Settings.DiscardDraws for runs that keep more draws than memory holds).
func (r *Result) DrawBytes() int { return drawBytes(r.Dim) }

// drawBytes is Result.DrawBytes at dimension d.
func drawBytes(d int) int { return 8*d + int(unsafe.Sizeof(Info{})) + 8 }

// memoryHeadroom is the share of the available memory the kept draws may
// take (memavail.Headroom, which the data's loaders take too): the rest is
// for the data, the kernels and the garbage collector.
const memoryHeadroom = memavail.Headroom

// availableMemory returns the bytes this process may still allocate
// (memavail.Available); a variable so that tests can set it.
var availableMemory = memavail.Available

// checkDrawsFit returns an error if keeping draws more draws in each of
// chains chains at dimension d would take more than memoryHeadroom of the
// memory available; fits says whether the check ran and passed (Sample
// then reserves room for every draw at once).
func checkDrawsFit(chains, draws, d int) (fits bool, err error) {
	need := float64(chains) * float64(draws) * float64(drawBytes(d))
	avail, ok := availableMemory()
	if !ok {
		return false, nil
	}
	if need > memoryHeadroom*avail {
		return false, fmt.Errorf("exactmh: keeping %d draws × %d chains at d = %d takes %s (%d bytes per draw: Result.DrawBytes), more than %.0f%% of the %s of memory available: thin the chain (Settings.Thin), keep fewer draws, or stream them to a file without keeping them (Settings.DiscardDraws with a stancsv.Recorder)",
			draws, chains, d, memavail.ByteSize(need), drawBytes(d), 100*memoryHeadroom, memavail.ByteSize(avail))
	}
	return true, nil
}
