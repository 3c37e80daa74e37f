// Copyright ©2026 The exactmh Authors. All rights reserved.
// Use of this source code is governed by a BSD-style
// license that can be found in the LICENSE file.

package data

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"

	"github.com/exactmh/exactmh/internal/memavail"
)

// availableMemory is memavail.Available; a variable so that tests can set
// it.
var availableMemory = memavail.Available

// fits returns an error if need bytes are more than memavail.Headroom of
// the memory available; what says what needs them, remedy what to do.
func fits(src string, need float64, what, remedy string) error {
	avail, ok := availableMemory()
	if !ok || need <= memavail.Headroom*avail {
		return nil
	}
	return fmt.Errorf("data: %s: %s takes %s, more than %.0f%% of the %s of memory available: %s", src, what, memavail.ByteSize(need), 100*memavail.Headroom, memavail.ByteSize(avail), remedy)
}

// checkRowsFit refuses, before anything is allocated for them, rows rows
// of cols columns (8 bytes a value, and a missing flag) that would not fit
// in memory: a few kilobytes of Parquet run-length encoding can declare
// billions of rows.
func checkRowsFit(src string, rows, cols int) error {
	need := float64(rows) * float64(cols) * 9
	return fits(src, need, fmt.Sprintf("reading the %d rows × %d columns the file declares", rows, cols),
		"read fewer rows (ReadOptions.Limit, the command's --max-rows) or fewer columns (ReadOptions.Columns)")
}

// openRegular opens a file for reading, refusing what is not a regular
// file (a device such as /dev/zero, a named pipe, a directory) unless
// special: such a file has no size to check and may never end. The path is
// checked before it is opened, since opening a named pipe blocks until a
// writer opens it — for ever, if none does (TestReadRefusesFIFO) — and
// the opened file again, in case the path changed in between.
func openRegular(path, src string, special bool) (*os.File, error) {
	if !special {
		if err := regularPath(path, src, "; ReadOptions.Special reads a pipe or device as CSV"); err != nil {
			return nil, err
		}
	}
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("data: %w", err)
	}
	st, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, fmt.Errorf("data: %w", err)
	}
	if !st.Mode().IsRegular() && !special {
		f.Close()
		return nil, fmt.Errorf("data: %s: not a regular file (%s): refused, since it may never end; ReadOptions.Special reads a pipe or device as CSV", src, st.Mode().Type())
	}
	return f, nil
}

// maxLine is the longest line ReadCSV reads, the cap stancsv has too: a
// line without end (a device, a file without newlines) would otherwise
// grow until memory is exhausted.
const maxLine = 64 << 20

// errLongLine is the error of a line longer than maxLine.
var errLongLine = errors.New("a line longer than 64 MiB (no data file needs one): not a CSV file?")

// lineGuard passes a reader's bytes on, failing on a line longer than max,
// and remembers the last byte, to tell a file whose last line was cut.
type lineGuard struct {
	r    io.Reader
	max  int
	line int  // bytes since the last newline
	last byte // the last byte read
	read int64
}

func (g *lineGuard) Read(p []byte) (int, error) {
	n, err := g.r.Read(p)
	g.read += int64(n)
	if n > 0 {
		g.last = p[n-1]
	}
	for rest := p[:n]; ; {
		k := bytes.IndexByte(rest, '\n')
		if k < 0 {
			g.line += len(rest)
			break
		}
		if g.line+k > g.max {
			return n, errLongLine
		}
		g.line, rest = 0, rest[k+1:]
	}
	if g.line > g.max {
		return n, errLongLine
	}
	return n, err
}

// errPartialLine is the error of a file whose last line has no newline:
// the file may have been cut mid-row (a copy interrupted, a disk full),
// and a number cut short ("2.246979" read as "2.246") is still a number.
var errPartialLine = errors.New("the last line is not terminated by a newline, so the file may have been cut mid-row; if the line is complete, end it with a newline")

// regularPath refuses a path that is not a regular file (following
// symbolic links), without opening it; hint ends the message.
func regularPath(path, src, hint string) error {
	st, err := os.Stat(path)
	if err != nil {
		return fmt.Errorf("data: %w", err)
	}
	if !st.Mode().IsRegular() {
		return fmt.Errorf("data: %s: not a regular file (%s): refused, since it may never end%s", src, st.Mode().Type(), hint)
	}
	return nil
}

// maxAutoLevels is the most one-hot columns a text column named bare in a
// formula (read as Factor) may make: past it the column is likely an
// identifier, whose dense columns would swamp the design and every
// sampler's d (TestFormulaFactor); factor(c) and cat(c) written out are
// not capped here (the design's size is, by fits).
const maxAutoLevels = 1000
