// Copyright ©2026 The exactmh Authors. All rights reserved.
// Use of this source code is governed by a BSD-style
// license that can be found in the LICENSE file.

package progress

import (
	"bytes"
	"strings"
	"testing"
	"time"

	"github.com/exactmh/exactmh"
)

// The time left counts the chains still queued for a worker: 4 chains of
// 100 transitions on 2 workers, the first two halfway after 1 s (20 ms a
// transition), have 1 s left each and 2 s of work each queued behind
// them: 3 s in all, not the 1 s of the running chains alone. The line
// numbers chains from Settings.FirstChain+1 and says which are queued.
func TestProgressQueuedChains(t *testing.T) {
	var buf bytes.Buffer
	p := New(&buf, time.Hour)
	now := time.Now()
	if err := p.Init(exactmh.RunInfo{Kernel: "MH", Chains: 4, Warmup: 50, Draws: 50, Steps: 100, StartTime: now.Add(-time.Second),
		Settings: exactmh.Settings{FirstChain: 4}}); err != nil {
		t.Fatal(err)
	}
	for c := range 2 {
		p.chains[c].start.Store(now.Add(-time.Second).UnixNano())
		p.chains[c].steps.Store(50)
	}
	if got, want := p.timeLeft(now), 3*time.Second; got < want-time.Millisecond || got > want+time.Millisecond {
		t.Errorf("time left %v, want %v", got, want)
	}
	for c := range 4 { // all running, halfway: their own pace
		p.chains[c].start.Store(now.Add(-time.Second).UnixNano())
		p.chains[c].steps.Store(50)
	}
	if got, want := p.timeLeft(now), time.Second; got < want-time.Millisecond || got > want+time.Millisecond {
		t.Errorf("time left, no chain queued: %v, want %v", got, want)
	}
	p.chains[3].start.Store(0)
	p.chains[3].steps.Store(0)
	if err := p.print(now, nil); err != nil {
		t.Fatal(err)
	}
	line := buf.String()
	for _, want := range []string{"chain 5 sampling", "chain 8 queued", "left"} {
		if !strings.Contains(line, want) {
			t.Errorf("progress line %q lacks %q", line, want)
		}
	}
}
