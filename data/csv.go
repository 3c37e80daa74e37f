// Copyright ©2026 The exactmh Authors. All rights reserved.
// Use of this source code is governed by a BSD-style
// license that can be found in the LICENSE file.

package data

import (
	"bufio"
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"math"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
)

// ReadCSV reads a comma-separated file with a header row (RFC 4180 quoting;
// a UTF-8 byte-order mark is skipped; an empty header cell is named
// "column<j>", j counted from 1). Each column's type is inferred from all
// its values: Int if every value is an integer, else Float if every value
// is a number ("Inf" included: Build refuses it), else Bool if every value
// is true or false (any case), else Time if every value is a timestamp in
// one of the layouts RFC 3339 ("2006-01-02T15:04:05Z07:00", fractional
// seconds allowed), "2006-01-02 15:04:05" (optionally with fractional
// seconds or an offset), "2006-01-02T15:04:05", "2006-01-02 15:04" or a
// date "2006-01-02" — the wall clock as written, an offset dropped —, else
// String. An empty cell, NA, N/A, NaN, nan, null or NULL (after trimming
// spaces) is a missing value; a column of nothing but missing values is
// Float. A row with a different number of cells from the header is an
// error naming its line.
func ReadCSV(path string, opt *ReadOptions) (*Frame, error) {
	src := filepath.Base(path)
	if err := opt.check(src); err != nil {
		return nil, err
	}
	f, err := openRegular(path, src, opt.special())
	if err != nil {
		return nil, err
	}
	defer f.Close()
	if st, err := f.Stat(); err == nil && st.Mode().IsRegular() {
		// The cells held take at least the file's bytes.
		if err := fits(src, float64(st.Size()), fmt.Sprintf("holding the cells of this %d-byte CSV file", st.Size()),
			"read fewer rows (ReadOptions.Limit, the command's --max-rows) or columns (ReadOptions.Columns), or convert the file to Parquet"); err != nil {
			return nil, err
		}
	}
	return readCSV(f, src, opt)
}

// readCSV reads CSV from r; src names it in messages.
func readCSV(r io.Reader, src string, opt *ReadOptions) (*Frame, error) {
	return readCSVLines(r, src, opt, maxLine)
}

// readCSVLines is readCSV with lines capped at maxLine bytes.
func readCSVLines(r io.Reader, src string, opt *ReadOptions, maxLine int) (*Frame, error) {
	guard := &lineGuard{r: r, max: maxLine}
	cr := csv.NewReader(bufio.NewReaderSize(guard, 1<<16))
	cr.ReuseRecord = true
	header, err := cr.Read()
	if errors.Is(err, io.EOF) {
		return nil, fmt.Errorf("data: %s: empty file: no header row", src)
	}
	if err != nil {
		return nil, fmt.Errorf("data: %s: header: %v", src, err)
	}
	lastLine := 1
	names := make([]string, len(header))
	for j, h := range header {
		if j == 0 {
			h = strings.TrimPrefix(h, "\ufeff")
		}
		h = strings.TrimSpace(h)
		if h == "" {
			h = "column" + strconv.Itoa(j+1)
		}
		for k := range j {
			if names[k] == h {
				return nil, fmt.Errorf("data: %s: header cells %d and %d are both %q", src, k+1, j+1, h)
			}
		}
		names[j] = h
	}
	sel, err := selectColumns(src, names, opt.columns())
	if err != nil {
		return nil, err
	}
	raw := make([][]string, len(sel))
	limit := opt.limit()
	n := 0
	for n < limit {
		if n%1024 == 0 {
			if err := opt.stopped(); err != nil {
				return nil, fmt.Errorf("data: %s: stopped at row %d: %w", src, n+1, err)
			}
		}
		rec, err := cr.Read()
		if errors.Is(err, io.EOF) {
			if guard.last != '\n' {
				return nil, fmt.Errorf("data: %s: row %d (line %d): %v", src, n, lastLine, errPartialLine)
			}
			break
		}
		if errors.Is(err, errLongLine) {
			return nil, fmt.Errorf("data: %s: near row %d: %v", src, n+1, err)
		}
		if err != nil {
			var pe *csv.ParseError
			if errors.As(err, &pe) {
				return nil, fmt.Errorf("data: %s: row %d (line %d): %v", src, n+1, pe.StartLine, pe.Err)
			}
			return nil, fmt.Errorf("data: %s: row %d: %v", src, n+1, err)
		}
		// The cells are substrings of the record's one string, which
		// encoding/csv makes afresh for every record (ReuseRecord reuses
		// only the slice): no copy per cell.
		for k, j := range sel {
			raw[k] = append(raw[k], strings.TrimSpace(rec[j]))
		}
		lastLine, _ = cr.FieldPos(0)
		n++
	}
	out := &Frame{source: src, n: n}
	for k, j := range sel {
		if err := opt.stopped(); err != nil {
			return nil, fmt.Errorf("data: %s: stopped at column %q: %w", src, names[j], err)
		}
		out.cols = append(out.cols, inferColumn(names[j], raw[k]))
		raw[k] = nil
	}
	return out, nil
}

// isMissing reports whether a trimmed CSV cell is a missing value.
func isMissing(s string) bool {
	switch s {
	case "", "NA", "N/A", "NaN", "nan", "null", "NULL":
		return true
	}
	return false
}

// inferColumn types a column of trimmed cells: int, float, bool, time,
// else string.
func inferColumn(name string, cells []string) *column {
	n := len(cells)
	c := &column{name: name}
	for r, s := range cells {
		if isMissing(s) {
			c.setMissing(r, n)
		}
	}
	if c.miss != nil && !slices.Contains(c.miss, false) {
		c.typ, c.f = Float, make([]float64, n)
		return c
	}
	// Int.
	c.typ, c.i = Int, make([]int64, n)
	ok := true
	for r, s := range cells {
		if c.miss != nil && c.miss[r] {
			continue
		}
		v, err := strconv.ParseInt(s, 10, 64)
		if err != nil {
			ok = false
			break
		}
		c.i[r] = v
	}
	if ok {
		return c
	}
	// Float.
	c.typ, c.i, c.f = Float, nil, make([]float64, n)
	ok = true
	for r, s := range cells {
		if c.miss != nil && c.miss[r] {
			continue
		}
		v, err := strconv.ParseFloat(s, 64)
		if err != nil && !errors.Is(err, strconv.ErrRange) {
			ok = false
			break
		}
		c.f[r] = v
		if math.IsNaN(v) {
			c.setMissing(r, n) // "nan" spelled otherwise, e.g. "NAN"
		}
	}
	if ok {
		return c
	}
	// Bool.
	c.typ, c.f, c.i = Bool, nil, make([]int64, n)
	ok = true
	for r, s := range cells {
		if c.miss != nil && c.miss[r] {
			continue
		}
		switch {
		case strings.EqualFold(s, "true"):
			c.i[r] = 1
		case strings.EqualFold(s, "false"):
			c.i[r] = 0
		default:
			ok = false
		}
		if !ok {
			break
		}
	}
	if ok {
		return c
	}
	// Time.
	c.typ = Time
	ok = true
	hint := 0
	for r, s := range cells {
		if c.miss != nil && c.miss[r] {
			continue
		}
		var v int64
		v, hint, ok = parseTime(s, hint)
		if !ok {
			break
		}
		c.i[r] = v
	}
	if ok {
		return c
	}
	// String.
	c.typ, c.i = String, nil
	c.codes = make([]int32, n)
	index := make(map[string]int32)
	for r, s := range cells {
		if c.miss != nil && c.miss[r] {
			continue
		}
		// The note names the first cell that is not a number: once it
		// is set, the cells are not parsed again.
		if c.note == "" {
			if _, err := strconv.ParseFloat(s, 64); err != nil {
				c.note = fmt.Sprintf("row %d has %q, which is not a number", r+1, s)
			}
		}
		k, seen := index[s]
		if !seen {
			// A copy: the cell is a substring of its whole record,
			// which the level would otherwise keep alive.
			s = strings.Clone(s)
			k = int32(len(c.levels))
			c.levels = append(c.levels, s)
			index[s] = k
		}
		c.codes[r] = k
	}
	if len(c.levels) == 0 {
		c.levels = []string{""}
	}
	return c
}
