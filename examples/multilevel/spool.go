// Copyright ©2026 The exactmh Authors. All rights reserved.
// Use of this source code is governed by a BSD-style
// license that can be found in the LICENSE file.

package main

import (
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"math"
	"os"
	"sync"
	"unsafe"

	"github.com/exactmh/exactmh"
	"github.com/exactmh/exactmh/diagnostics"
)

// spool keeps a run's draws in files instead of the Result (the scale
// mode runs with Settings.DiscardDraws): one file a chain, each kept draw
// of all d coordinates as float32 at k·4d bytes, and summary reads them
// back a group of coordinates at a time. The crossed model at N = 10⁸
// has d = 110,006 coordinates: 4 × 1000 draws kept in the Result take
// 8·d B a draw, 3.5 GB, where the heap is the kernel's tables; here they
// take 1.8 GB of disk and at most spoolChunk bytes of memory. float32
// keeps 7 digits: a posterior's mean, sd, quantiles and ranks (the ESS
// and R-hat) are not changed at the digits printed.
//
// With names (the -checkpoint mode, resume.go) the files are those paths
// and stay; a chain's draws are written in order, and the spool keeps
// their count and CRC-32C (mark), which a checkpoint records and a
// resumed run checks the file against before truncating it back to them
// (InitResume). Without, they are temporary files, unlinked at once.
type spool struct {
	inner         exactmh.Recorder
	dir           string
	names         []string // the chains' files (nil: temporary ones)
	f             []*os.File
	d, draws      int
	chains, first int
	mu            sync.Mutex // Record is called from every chain's goroutine
	buf           []float32  // under mu
	err           error      // under mu
	n             []int      // draws written, per chain
	crc           []uint32   // their CRC-32C, per chain
	verify        []spoolMark
	unlinked      bool
}

// spoolMark is what a checkpoint records of a chain's spool file: its path,
// the draws it holds and their CRC-32C.
type spoolMark struct {
	Path  string
	Draws int
	CRC   uint32
}

// spoolCRC is the CRC-32C table (hardware-assisted on amd64 and arm64).
var spoolCRC = crc32.MakeTable(crc32.Castagnoli)

// spoolChunk is the most memory summary holds at once: the draws of a
// group of coordinates as float64, chains × draws × group × 8 bytes.
const spoolChunk = 64 << 20

// newSpool returns a spool writing to temporary files in dir (removed by
// Close) that passes every event on to inner (nil: none).
func newSpool(dir string, inner exactmh.Recorder) *spool {
	return &spool{inner: inner, dir: dir}
}

// Init creates the chains' files (truncating named ones) and passes the
// run on to inner.
func (s *spool) Init(run exactmh.RunInfo) error {
	if err := s.open(run, true); err != nil {
		return err
	}
	if s.inner != nil {
		return s.inner.Init(run)
	}
	return nil
}

// open sizes the spool for run and opens its files: new (truncated) with
// fresh, else as they are.
func (s *spool) open(run exactmh.RunInfo, fresh bool) error {
	s.d, s.draws, s.chains, s.first = run.Dim, run.Draws, run.Chains, run.Settings.FirstChain
	if s.names != nil && len(s.names) != s.chains {
		return fmt.Errorf("spool: %d files for %d chains", len(s.names), s.chains)
	}
	s.closeFiles()
	s.f, s.n, s.crc = make([]*os.File, s.chains), make([]int, s.chains), make([]uint32, s.chains)
	s.unlinked = true
	for c := range s.chains {
		var f *os.File
		var err error
		switch {
		case s.names == nil:
			f, err = os.CreateTemp(s.dir, "draws-*.f32")
			// Unlinked now where the system allows (the open file stays
			// readable): nothing is left behind if the run exits without Close.
			if err == nil {
				s.unlinked = s.unlinked && os.Remove(f.Name()) == nil
			}
		case fresh:
			f, err = os.Create(s.names[c])
		default:
			f, err = os.OpenFile(s.names[c], os.O_RDWR, 0)
		}
		if err != nil {
			return err
		}
		s.f[c] = f
	}
	s.buf = make([]float32, s.d)
	return nil
}

// InitResume continues the files of the run res: on the first call after
// the spool was given the checkpoint's marks (resume), each chain's file
// must hold the draws the chain streamed (ChainResult.Streamed) with the
// recorded CRC, and is truncated back to them (a run killed after its
// checkpoint wrote more); on later calls (a resumed segment in this
// process) the files are as the spool left them. It then passes the run
// on to inner (InitResume if it is a ResumeRecorder, else Init).
func (s *spool) InitResume(run exactmh.RunInfo, res *exactmh.Result) error {
	s.mu.Lock()
	err := s.resume(run, res)
	s.mu.Unlock()
	if err != nil {
		return err
	}
	if rr, ok := s.inner.(exactmh.ResumeRecorder); ok {
		return rr.InitResume(run, res)
	}
	if s.inner != nil {
		return s.inner.Init(run)
	}
	return nil
}

func (s *spool) resume(run exactmh.RunInfo, res *exactmh.Result) error {
	if s.f == nil || s.verify != nil {
		if err := s.open(run, s.names == nil); err != nil {
			return err
		}
	}
	if len(res.Chains) != s.chains {
		return fmt.Errorf("spool: %d chains resumed, %d spooled", len(res.Chains), s.chains)
	}
	for c, ch := range res.Chains {
		if ch.Len() != 0 {
			return fmt.Errorf("spool: chain %d kept %d draws in the Result, not streamed", c, ch.Len())
		}
		if s.verify == nil {
			if s.n[c] != ch.Streamed {
				return fmt.Errorf("spool: chain %d streamed %d draws, its file holds %d", c, ch.Streamed, s.n[c])
			}
			continue
		}
		m := s.verify[c]
		if m.Draws != ch.Streamed {
			return fmt.Errorf("spool: chain %d streamed %d draws, the checkpoint's mark of %s says %d", c, ch.Streamed, m.Path, m.Draws)
		}
		size := int64(m.Draws) * int64(4*s.d)
		h := crc32.New(spoolCRC)
		if n, err := io.Copy(h, io.NewSectionReader(s.f[c], 0, size)); err != nil || n != size {
			return fmt.Errorf("spool: %s holds %d of the %d bytes of chain %d's %d draws (%v)", m.Path, n, size, c, m.Draws, err)
		}
		if h.Sum32() != m.CRC && resumeMutant != "no spool check" {
			return fmt.Errorf("spool: %s: chain %d's %d draws have CRC %08x, the checkpoint says %08x: not the draws of this run", m.Path, c, m.Draws, h.Sum32(), m.CRC)
		}
		if err := s.f[c].Truncate(size); err != nil {
			return err
		}
		s.n[c], s.crc[c] = m.Draws, m.CRC
		if resumeMutant == "spool count" {
			s.n[c] = 0
		}
	}
	s.verify, s.err = nil, nil
	return nil
}

// marks returns each chain's file, draws and CRC, after writing the files
// to disk (a checkpoint that records them must not outlive them).
func (s *spool) marks() ([]spoolMark, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.err != nil {
		return nil, s.err
	}
	out := make([]spoolMark, len(s.f))
	for c, f := range s.f {
		if err := f.Sync(); err != nil {
			return nil, err
		}
		out[c] = spoolMark{Path: f.Name(), Draws: s.n[c], CRC: s.crc[c]}
	}
	return out, nil
}

func (s *spool) Record(e *exactmh.Event) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if e.Draw >= 0 && s.err == nil {
		c := e.Chain - s.first
		if c < 0 || c >= s.chains || e.Draw >= s.draws || len(e.Theta) != s.d || e.Draw != s.n[c] {
			s.err = fmt.Errorf("spool: draw %d of chain %d outside %d × %d draws of %d coordinates, or not the chain's next (%d)", e.Draw, e.Chain, s.chains, s.draws, s.d, s.n[max(0, min(c, s.chains-1))])
		} else {
			for j, v := range e.Theta {
				s.buf[j] = float32(v)
			}
			b := unsafe.Slice((*byte)(unsafe.Pointer(unsafe.SliceData(s.buf))), 4*s.d)
			if _, s.err = s.f[c].WriteAt(b, int64(e.Draw)*int64(4*s.d)); s.err == nil {
				s.n[c]++
				s.crc[c] = crc32.Update(s.crc[c], spoolCRC, b)
			}
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
				off := int64(k)*int64(4*s.d) + int64(4*j0)
				if _, err := s.f[c].ReadAt(b[:4*w], off); err != nil {
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

// closeFiles closes the chains' files, removing temporary ones the system
// did not let Init unlink.
func (s *spool) closeFiles() error {
	var err error
	for _, f := range s.f {
		if cerr := f.Close(); err == nil {
			err = cerr
		}
		if s.names == nil && !s.unlinked {
			if rerr := os.Remove(f.Name()); err == nil && !errors.Is(rerr, os.ErrNotExist) {
				err = rerr
			}
		}
	}
	s.f = nil
	return err
}

// Close closes the spool's files, removing temporary ones; named ones stay.
func (s *spool) Close() error {
	if s.f == nil {
		return nil
	}
	return s.closeFiles()
}
