// Copyright ©2026 The exactmh Authors. All rights reserved.
// Use of this source code is governed by a BSD-style
// license that can be found in the LICENSE file.

//go:build unix

package stancsv

import (
	"bufio"
	"io"
	"math"
	"math/rand/v2"
	"syscall"
	"testing"
	"time"

	"github.com/exactmh/exactmh"
)

// BenchmarkRowTable writes guimmun's draws file without the disk: 1,000
// rows of 1,776 values (normal draws at scales 10⁻² … 10²) at the files'
// 6 digits to io.Discard; one op the whole file, with its CPU-s
// (getrusage, user + system).
func BenchmarkRowTable(b *testing.B) {
	r := rand.New(rand.NewPCG(41, 42))
	rows := make([][]float64, 1000)
	for i := range rows {
		rows[i] = make([]float64, 1776)
		for j := range rows[i] {
			rows[i][j] = r.NormFloat64() * math.Pow(10, float64(j%5-2))
		}
	}
	s := &stanWriter{w: bufio.NewWriter(io.Discard), sig: 6, lp: true}
	info := exactmh.Info{LogDensity: -1234.5, AcceptProb: 0.8, Accepted: true}
	var r0, r1 syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_SELF, &r0)
	for b.Loop() {
		for _, th := range rows {
			s.row(&info, 0.1, th)
		}
	}
	syscall.Getrusage(syscall.RUSAGE_SELF, &r1)
	cpu := func(r *syscall.Rusage) time.Duration { return time.Duration(r.Utime.Nano() + r.Stime.Nano()) }
	b.ReportMetric((cpu(&r1)-cpu(&r0)).Seconds()/float64(b.N), "cpu-s/op")
}
