// Copyright ©2026 The exactmh Authors. All rights reserved.
// Use of this source code is governed by a BSD-style
// license that can be found in the LICENSE file.

//go:build unix

package diagnostics

import (
	"syscall"
	"testing"
	"time"
)

// cpuLoop runs f b.N times and reports the process's CPU time (user +
// system, getrusage) per op beside the wall time.
func cpuLoop(b *testing.B, f func()) {
	var r0, r1 syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_SELF, &r0)
	for b.Loop() {
		f()
	}
	syscall.Getrusage(syscall.RUSAGE_SELF, &r1)
	cpu := func(r *syscall.Rusage) time.Duration {
		return time.Duration(r.Utime.Nano() + r.Stime.Nano())
	}
	b.ReportMetric((cpu(&r1)-cpu(&r0)).Seconds()/float64(b.N), "cpu-s/op")
}

// BenchmarkSummarizeTable is the summary table of a run of guimmun's
// size: 1,776 quantities × 4 chains × 1,000 draws, AR(1) chains at φ = 0,
// 0.3, 0.6 or 0.9 in turn (bulk ESS from about the draws down to a
// twentieth), one op the whole table by Summarize, then Sort of each
// quantity's pooled draws, as the command's report sorts them.
func BenchmarkSummarizeTable(b *testing.B) {
	const params = 1776
	xs := make([][][]float64, params)
	for j := range xs {
		xs[j] = ar1(4, 1000, []float64{0, 0.3, 0.6, 0.9}[j%4], 0, uint64(j))
	}
	pool := make([]float64, 4000)
	b.Run("Summarize", func(b *testing.B) {
		cpuLoop(b, func() {
			for _, x := range xs {
				Summarize(x)
			}
		})
	})
	b.Run("Sort", func(b *testing.B) {
		cpuLoop(b, func() {
			for _, x := range xs {
				pool = append(append(append(append(pool[:0], x[0]...), x[1]...), x[2]...), x[3]...)
				Sort(pool)
			}
		})
	})
}
