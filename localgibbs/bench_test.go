// Copyright ©2026 The exactmh Authors. All rights reserved.
// Use of this source code is governed by a BSD-style
// license that can be found in the LICENSE file.

//go:build unix

package localgibbs

import (
	"context"
	"math/rand/v2"
	"syscall"
	"testing"

	"github.com/exactmh/exactmh"
)

// BenchmarkSweep times a sampling transition (one global move over all
// the data, then the local sweep) on issue 43's custom row (N = 10⁵, 5
// fixed effects, 500 groups), from the Laplace mean: the kernel's own work
// beside the user's energy, which two passes a transition cost.
func BenchmarkSweep(b *testing.B) {
	p := customPosterior(b, 100000, 5, 500)
	la, err := exactmh.FindLaplace(context.Background(), p, make([]float64, p.Dim()), &exactmh.MAPSettings{Tol: exactmh.AutoMAPTol})
	if err != nil {
		b.Fatal(err)
	}
	tgt, err := exactmh.NewTarget(p)
	if err != nil {
		b.Fatal(err)
	}
	ch, err := Kernel{Laplace: la, NoRecentre: true}.Start(tgt, la.Mean)
	if err != nil {
		b.Fatal(err)
	}
	rng := rand.New(rand.NewPCG(1, 2))
	b.ReportAllocs()
	cpu0 := cpuNanos()
	for b.Loop() {
		if _, err := ch.Step(rng); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(cpuNanos()-cpu0)/float64(b.N), "cpu-ns/op")
}

// cpuNanos is the process's user and system CPU time: on a shared machine
// a benchmark's wall time counts the waits for the core.
func cpuNanos() int64 {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return ru.Utime.Nano() + ru.Stime.Nano()
}
