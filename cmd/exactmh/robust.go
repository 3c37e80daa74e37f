// Copyright ©2026 The exactmh Authors. All rights reserved.
// Use of this source code is governed by a BSD-style
// license that can be found in the LICENSE file.

package main

import (
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"strings"

	"github.com/exactmh/exactmh/data"
	"github.com/exactmh/exactmh/stancsv"
)

// This file holds what keeps sample safe on a shared machine: one writer
// per output (locks), a checkpoint directory checked before the run,
// checkpoints written durably, and the summary of a run that kept no
// draws.

// lockName is the lock file of an output path: path + ".lock", left in
// place (removing it would race another process taking it).
func lockName(path string) string { return path + ".lock" }

// outputLocks takes an exclusive lock on each file this process will
// write — the Stan CSV file of every chain it runs and the checkpoint —
// so that a second sample with the same --out (or the same --chain-id and
// prefix) or --checkpoint is refused before it writes anything, instead of
// both writing interleaved files. The locks are advisory (flock) and go
// with the process, however it ends. It returns a function releasing
// them.
func outputLocks(sf *sampleFlags, chainID int) (release func(), err error) {
	var paths []string
	first, n := 0, sf.chains
	if chainID >= 0 {
		first, n = chainID, 1
	}
	for c := first; c < first+n; c++ {
		paths = append(paths, fmt.Sprintf("%s_%d.csv", sf.out, c+1))
	}
	if sf.checkpoint != "" {
		paths = append(paths, sf.checkpoint)
	}
	var held []*os.File
	release = func() {
		for _, f := range held {
			unlockFile(f)
			f.Close()
		}
	}
	for _, p := range paths {
		f, err := os.OpenFile(lockName(p), os.O_RDWR|os.O_CREATE, 0o666)
		if err != nil {
			release()
			return nil, usageErr("cannot create the lock %s for %s: %v", lockName(p), p, err)
		}
		if err := lockFile(f); err != nil {
			f.Close()
			release()
			return nil, usageErr("%s is being written by another exactmh process (its lock %s is held: %v); give this run another --out, --chain-id or --checkpoint, or wait for the other to end", p, lockName(p), err)
		}
		held = append(held, f)
	}
	return release, nil
}

// checkCheckpointDir checks, before the run, that the checkpoint's
// directory exists and takes a file, rather than after the whole run.
func checkCheckpointDir(path string) error {
	dir := filepath.Dir(path)
	st, err := os.Stat(dir)
	if err != nil || !st.IsDir() {
		return usageErr("--checkpoint %s: directory %s does not exist", path, dir)
	}
	f, err := os.CreateTemp(dir, filepath.Base(path)+".tmp*")
	if err != nil {
		return usageErr("--checkpoint %s: cannot write in %s: %v", path, dir, err)
	}
	f.Close()
	os.Remove(f.Name())
	return nil
}

// removeStaleTemps removes the temporaries of path and path.json that a
// process killed while writing a checkpoint left (writeAtomic's
// path.tmp*), each as large as the checkpoint. The caller holds path's
// lock, so no other process is writing them.
func removeStaleTemps(path string) {
	for _, base := range []string{path, path + ".json"} {
		matches, _ := filepath.Glob(globQuote(base) + ".tmp*")
		for _, m := range matches {
			os.Remove(m)
		}
	}
}

// globQuote escapes the pattern characters of a path.
func globQuote(s string) string {
	r := strings.NewReplacer(`\`, `\\`, `*`, `\*`, `?`, `\?`, `[`, `\[`)
	return r.Replace(s)
}

// writeAtomic writes path through a temporary file in its directory,
// synced and renamed into place, then syncs the directory: a kill or a
// crash of the machine leaves the previous file or the new one, whole.
func writeAtomic(path string, write func(io.Writer) error) error {
	tmp, err := os.CreateTemp(filepath.Dir(path), filepath.Base(path)+".tmp*")
	if err != nil {
		return err
	}
	fail := func(err error) error {
		tmp.Close()
		os.Remove(tmp.Name())
		return err
	}
	if err := write(tmp); err != nil {
		return fail(fmt.Errorf("writing %s: %w", path, err))
	}
	if err := tmp.Sync(); err != nil {
		return fail(fmt.Errorf("writing %s: %w", path, err))
	}
	if err := tmp.Close(); err != nil {
		os.Remove(tmp.Name())
		return err
	}
	if err := os.Rename(tmp.Name(), path); err != nil {
		os.Remove(tmp.Name())
		return err
	}
	if d, err := os.Open(filepath.Dir(path)); err == nil {
		d.Sync() // not every file system syncs a directory; the rename is done either way
		d.Close()
	}
	return nil
}

// summaryFromFiles prints the summary of a run that kept no draws
// (--discard-draws) from the Stan CSV files it streamed them to.
func summaryFromFiles(sf *sampleFlags, chainID int, stdout io.Writer) error {
	first, n := 0, sf.chains
	if chainID >= 0 {
		first, n = chainID, 1
	}
	var files []*stancsv.File
	for c := first; c < first+n; c++ {
		path := fmt.Sprintf("%s_%d.csv", sf.out, c+1)
		f, err := os.Open(path)
		if err != nil {
			return failure(fmt.Errorf("the summary from the output files: %v", err))
		}
		sf, err := stancsv.ReadOptions{}.Read(f)
		f.Close()
		if err != nil {
			return failure(fmt.Errorf("the summary from %s: %v", path, err))
		}
		files = append(files, sf)
	}
	s, err := stancsv.Summarize(files)
	if err != nil {
		return failure(fmt.Errorf("the summary from the output files: %v", err))
	}
	// The same report as a run that kept its draws: coefficients on the
	// original scale (the files' model_info), the prior and its scale.
	ps, err := sf.report.check()
	if err != nil {
		return err
	}
	rp, err := filesReport(files, s, &sf.report, ps, nil)
	if err != nil {
		return failure(fmt.Errorf("the summary from the output files: %v", err))
	}
	return rp.write(stdout, "table", 4)
}

// dataHash is a SHA-256 of every row of the design and the response, in
// order: one pass, so that --resume and --choice refuse data changed
// anywhere (a response value, a level, a value under --no-standardize, the
// row order), not only in sampled rows. It takes about as long as reading
// X once (on the order of a second for the 3-million-row flights design).
func dataHash(d *data.Design) string {
	h := sha256.New()
	buf := make([]byte, 0, 1<<16)
	put := func(v float64) {
		buf = binary.LittleEndian.AppendUint64(buf, math.Float64bits(v))
		if len(buf) == cap(buf) {
			h.Write(buf)
			buf = buf[:0]
		}
	}
	for i := range d.N {
		for _, v := range d.X[i*d.D : (i+1)*d.D] {
			put(v)
		}
		put(d.Y[i])
	}
	h.Write(buf)
	return hex.EncodeToString(h.Sum(nil))
}

// groupsHash extends a design's hash with its random-effect terms:
// every row's level and slope values, and the levels' names, so that a
// resume refuses data whose grouping changed.
func groupsHash(base string, groups []data.Group) string {
	if len(groups) == 0 {
		return base
	}
	h := sha256.New()
	h.Write([]byte(base))
	var buf []byte
	for _, g := range groups {
		buf = append(buf[:0], g.Term...)
		for _, l := range g.Levels {
			buf = append(append(buf, 0), l...)
		}
		h.Write(buf)
		buf = buf[:0]
		for _, k := range g.Index {
			buf = binary.LittleEndian.AppendUint32(buf, uint32(k))
		}
		for _, s := range g.Slopes {
			for _, v := range s {
				buf = binary.LittleEndian.AppendUint64(buf, math.Float64bits(v))
			}
		}
		h.Write(buf)
	}
	return hex.EncodeToString(h.Sum(nil))
}

// checkStanFile refuses a file read as Stan CSV that is not one: a plain
// data CSV has neither the "#" configuration comments of CmdStan's,
// rstan's and exactmh's files nor a sampler column (lp__, accept_stat__,
// …), and summarising its columns as chains would be meaningless.
func checkStanFile(path string, f *stancsv.File) error {
	if len(f.Config) > 0 {
		return nil
	}
	for _, c := range f.Columns {
		if strings.HasSuffix(c, "__") {
			return nil
		}
	}
	return usageErr("summary: %s is not a Stan CSV file: no '#' configuration comments and no sampler column such as lp__ (a data file?)", path)
}
