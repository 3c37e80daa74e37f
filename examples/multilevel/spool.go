// Copyright ©2026 The exactmh Authors. All rights reserved.
// Use of this source code is governed by a BSD-style
// license that can be found in the LICENSE file.

package main

import (
	"errors"
	"fmt"
	"math"
	"os"
	"sync"
	"unsafe"

	"github.com/exactmh/exactmh"
	"github.com/exactmh/exactmh/diagnostics"
)

// spool keeps a run's draws in a file instead of the Result (the scale
// mode runs with Settings.DiscardDraws): each kept draw of all d
// coordinates as float32 at (chain·draws + k)·4d bytes, and summary reads
// them back a group of coordinates at a time. The crossed model at N = 10⁸
// has d = 110,006 coordinates: 4 × 1000 draws kept in the Result take
// 8·d B a draw, 3.5 GB, where the heap is the kernel's tables; here they
// take 1.8 GB of disk and at most spoolChunk bytes of memory. float32
// keeps 7 digits: a posterior's mean, sd, quantiles and ranks (the ESS
// and R-hat) are not changed at the digits printed.
type spool struct {
	inner         exactmh.Recorder
	dir           string
	f             *os.File
	d, draws      int
	chains, first int
	mu            sync.Mutex // Record is called from every chain's goroutine
	buf           []float32  // under mu
	err           error      // under mu
	unlinked      bool
}

// spoolChunk is the most memory summary holds at once: the draws of a
// group of coordinates as float64, chains × draws × group × 8 bytes.
const spoolChunk = 64 << 20

// newSpool returns a spool writing to a temporary file in dir (removed by
// Close) that passes every event on to inner (nil: none).
func newSpool(dir string, inner exactmh.Recorder) *spool {
	return &spool{inner: inner, dir: dir}
}

func (s *spool) Init(run exactmh.RunInfo) error {
	s.d, s.draws, s.chains, s.first = run.Dim, run.Draws, run.Chains, run.Settings.FirstChain
	f, err := os.CreateTemp(s.dir, "draws-*.f32")
	if err != nil {
		return err
	}
	s.f = f
	// Unlinked now where the system allows (the open file stays readable):
	// nothing is left behind if the run exits without Close.
	s.unlinked = os.Remove(f.Name()) == nil
	s.buf = make([]float32, s.d)
	if s.inner != nil {
		return s.inner.Init(run)
	}
	return nil
}

func (s *spool) Record(e *exactmh.Event) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if e.Draw >= 0 && s.err == nil {
		c := e.Chain - s.first
		if c < 0 || c >= s.chains || e.Draw >= s.draws || len(e.Theta) != s.d {
			s.err = fmt.Errorf("spool: draw %d of chain %d outside %d × %d draws of %d coordinates", e.Draw, e.Chain, s.chains, s.draws, s.d)
		} else {
			for j, v := range e.Theta {
				s.buf[j] = float32(v)
			}
			b := unsafe.Slice((*byte)(unsafe.Pointer(unsafe.SliceData(s.buf))), 4*s.d)
			_, s.err = s.f.WriteAt(b, int64(c*s.draws+e.Draw)*int64(4*s.d))
		}
		if s.err != nil {
			return s.err
		}
	}
	if s.inner != nil {
		return s.inner.Record(e)
	}
	return nil
}

// Finish passes the end of the run on to inner.
func (s *spool) Finish(res *exactmh.Result) error {
	if f, ok := s.inner.(exactmh.RunFinisher); ok {
		return f.Finish(res)
	}
	return nil
}

// summary returns the summary of the spooled draws: for each coordinate
// (named by names) its mean, sd, quantiles, MCSE, bulk and tail ESS and
// R-hat (diagnostics.Summarize over the chains' draws), the first drawn
// of chains that each kept draws draws.
func (s *spool) summary(names []string, draws int) (*exactmh.Summary, error) {
	return s.summaryIn(names, draws, spoolChunk)
}

// summaryIn is summary holding at most chunk bytes of draws at once.
func (s *spool) summaryIn(names []string, draws, chunk int) (*exactmh.Summary, error) {
	if s.f == nil {
		return nil, errors.New("spool: no run")
	}
	if s.err != nil {
		return nil, s.err
	}
	draws = min(draws, s.draws)
	out := &exactmh.Summary{Chains: s.chains, Draws: draws}
	if draws == 0 {
		return out, nil
	}
	group := max(1, min(s.d, chunk/(8*s.chains*draws)))
	raw := make([]float32, group)
	x := make([][][]float64, group) // x[j][c]: coordinate j's draws in chain c
	for j := range x {
		x[j] = make([][]float64, s.chains)
		for c := range x[j] {
			x[j][c] = make([]float64, draws)
		}
	}
	b := unsafe.Slice((*byte)(unsafe.Pointer(unsafe.SliceData(raw))), 4*group)
	for j0 := 0; j0 < s.d; j0 += group {
		w := min(group, s.d-j0)
		for c := range s.chains {
			for k := range draws {
				off := int64(c*s.draws+k)*int64(4*s.d) + int64(4*j0)
				if _, err := s.f.ReadAt(b[:4*w], off); err != nil {
					return nil, fmt.Errorf("spool: draw %d of chain %d: %w", k, c, err)
				}
				for j := range w {
					x[j][c][k] = float64(raw[j])
				}
			}
		}
		for j := range w {
			p := exactmh.ParamSummary{Name: fmt.Sprint(j0 + j)}
			if j0+j < len(names) {
				p.Name = names[j0+j]
			}
			var sum, sq float64
			for _, ch := range x[j] {
				for _, v := range ch {
					sum += v
				}
			}
			n := float64(s.chains * draws)
			p.Mean = sum / n
			for _, ch := range x[j] {
				for _, v := range ch {
					sq += (v - p.Mean) * (v - p.Mean)
				}
			}
			p.SD = math.Sqrt(sq / max(1, n-1))
			st := diagnostics.Summarize(x[j])
			p.Q5, p.Q50, p.Q95, p.MCSE = st.Q5, st.Q50, st.Q95, st.MCSEMean
			p.ESSBulk, p.ESSTail, p.RHat = st.ESSBulk, st.ESSTail, st.RHat
			p.NotAvailable = math.IsNaN(st.ESSBulk)
			out.Params = append(out.Params, p)
		}
	}
	return out, nil
}

// Close removes the spool's file.
func (s *spool) Close() error {
	if s.f == nil {
		return nil
	}
	err := s.f.Close()
	if !s.unlinked {
		if rerr := os.Remove(s.f.Name()); err == nil {
			err = rerr
		}
	}
	s.f = nil
	return err
}
