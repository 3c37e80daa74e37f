// Copyright ©2026 The exactmh Authors. All rights reserved.
// Use of this source code is governed by a BSD-style
// license that can be found in the LICENSE file.

package data

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"math"
	"path/filepath"
	"strings"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/ipc"
	"github.com/exactmh/exactmh/internal/prefault"
)

// arrowColumnType maps an Arrow type onto a column type; ok is false for
// types the package does not read (nested, binary, decimal, intervals…).
func arrowColumnType(dt arrow.DataType) (ColumnType, bool) {
	switch dt.ID() {
	case arrow.INT8, arrow.INT16, arrow.INT32, arrow.INT64,
		arrow.UINT8, arrow.UINT16, arrow.UINT32, arrow.UINT64:
		return Int, true
	case arrow.FLOAT16, arrow.FLOAT32, arrow.FLOAT64:
		return Float, true
	case arrow.BOOL:
		return Bool, true
	case arrow.TIMESTAMP, arrow.DATE32, arrow.DATE64:
		return Time, true
	case arrow.STRING, arrow.LARGE_STRING, arrow.STRING_VIEW:
		return String, true
	case arrow.DICTIONARY:
		switch dt.(*arrow.DictionaryType).ValueType.ID() {
		case arrow.STRING, arrow.LARGE_STRING, arrow.STRING_VIEW:
			return String, true
		}
	}
	return 0, false
}

// arrowBuilder accumulates one column from Arrow arrays (record batches or
// chunks).
type arrowBuilder struct {
	src   string // file name, for messages
	col   *column
	dt    arrow.DataType
	n     int              // rows so far
	index map[string]int32 // String: level → code
	remap []int32          // String, dictionary arrays: dictionary index → code
	loc   *time.Location   // Time: the zone whose wall clock is kept (nil: UTC)
}

// newArrowBuilder starts a column of the given field; capacity is a hint.
func newArrowBuilder(src string, field arrow.Field, capacity int) (*arrowBuilder, error) {
	typ, ok := arrowColumnType(field.Type)
	if !ok {
		return nil, fmt.Errorf("data: %s: column %q has Arrow type %s, which this package does not read (want integers, floats, booleans, timestamps, dates or strings)", src, field.Name, field.Type)
	}
	b := &arrowBuilder{src: src, col: &column{name: field.Name, typ: typ}, dt: field.Type}
	capacity = max(0, min(capacity, 1<<26)) // a hint from the file: do not trust it with memory
	switch typ {
	case Float:
		b.col.f = make([]float64, 0, capacity)
		prefault.Populate(b.col.f[:capacity])
	case Int, Bool, Time:
		b.col.i = make([]int64, 0, capacity)
		prefault.Populate(b.col.i[:capacity])
	case String:
		b.col.codes = make([]int32, 0, capacity)
		prefault.Populate(b.col.codes[:capacity])
		b.index = make(map[string]int32)
	}
	if ts, ok := field.Type.(*arrow.TimestampType); ok && ts.TimeZone != "" {
		loc, err := ts.GetZone()
		if err != nil {
			return nil, fmt.Errorf("data: %s: column %q: time zone %q: %v", src, field.Name, ts.TimeZone, err)
		}
		if loc != time.UTC {
			b.loc = loc
		}
	}
	return b, nil
}

// appendArray appends arr's first m values.
func (b *arrowBuilder) appendArray(arr arrow.Array, m int) error {
	if !arrow.TypeEqual(arr.DataType(), b.dt) {
		return fmt.Errorf("data: %s: column %q changes type from %s to %s at row %d", b.src, b.col.name, b.dt, arr.DataType(), b.n+1)
	}
	m = min(m, arr.Len())
	c := b.col
	start := b.n
	switch a := arr.(type) {
	case *array.Int8:
		appendInts(&c.i, a.Int8Values()[:m])
	case *array.Int16:
		appendInts(&c.i, a.Int16Values()[:m])
	case *array.Int32:
		appendInts(&c.i, a.Int32Values()[:m])
	case *array.Int64:
		c.i = append(c.i, a.Int64Values()[:m]...)
	case *array.Uint8:
		appendInts(&c.i, a.Uint8Values()[:m])
	case *array.Uint16:
		appendInts(&c.i, a.Uint16Values()[:m])
	case *array.Uint32:
		appendInts(&c.i, a.Uint32Values()[:m])
	case *array.Uint64:
		for r, v := range a.Uint64Values()[:m] {
			if v > math.MaxInt64 && a.IsValid(r) {
				return fmt.Errorf("data: %s: row %d, column %q: %d does not fit in an int64", b.src, start+r+1, c.name, v)
			}
			c.i = append(c.i, int64(v))
		}
	case *array.Float16:
		for r := 0; r < m; r++ {
			c.f = append(c.f, float64(a.Value(r).Float32()))
		}
	case *array.Float32:
		for _, v := range a.Float32Values()[:m] {
			c.f = append(c.f, float64(v))
		}
	case *array.Float64:
		c.f = append(c.f, a.Float64Values()[:m]...)
	case *array.Boolean:
		for r := 0; r < m; r++ {
			var v int64
			if a.Value(r) {
				v = 1
			}
			c.i = append(c.i, v)
		}
	case *array.Timestamp:
		mul, div := unitToMicros(b.dt.(*arrow.TimestampType).Unit)
		for _, v := range a.TimestampValues()[:m] {
			c.i = append(c.i, scaleMicros(int64(v), mul, div))
		}
		if b.loc != nil {
			for r := start; r < start+m; r++ {
				_, off := time.UnixMicro(c.i[r]).In(b.loc).Zone()
				c.i[r] += int64(off) * 1e6
			}
		}
	case *array.Date32:
		for _, v := range a.Date32Values()[:m] {
			c.i = append(c.i, int64(v)*86400e6)
		}
	case *array.Date64:
		for _, v := range a.Date64Values()[:m] {
			c.i = append(c.i, int64(v)*1000)
		}
	case *array.String:
		for r := 0; r < m; r++ {
			c.codes = append(c.codes, b.code(a.Value(r)))
		}
	case *array.LargeString:
		for r := 0; r < m; r++ {
			c.codes = append(c.codes, b.code(a.Value(r)))
		}
	case *array.StringView:
		for r := 0; r < m; r++ {
			c.codes = append(c.codes, b.code(a.Value(r)))
		}
	case *array.Dictionary:
		if err := b.appendDictionary(a, m); err != nil {
			return err
		}
	default:
		return fmt.Errorf("data: %s: column %q: unexpected Arrow array %T for type %s", b.src, c.name, arr, b.dt)
	}
	if c.miss != nil || arr.NullN() > 0 {
		if c.miss == nil {
			c.miss = make([]bool, start, start+m)
		}
		c.miss = append(c.miss, make([]bool, m)...)
		if arr.NullN() > 0 {
			for r := 0; r < m; r++ {
				if arr.IsNull(r) {
					c.miss[start+r] = true
				}
			}
		}
	}
	b.n = start + m
	return nil
}

// appendDictionary appends a dictionary-encoded string array's codes.
func (b *arrowBuilder) appendDictionary(a *array.Dictionary, m int) error {
	dict := a.Dictionary()
	b.remap = b.remap[:0]
	for k := 0; k < dict.Len(); k++ {
		var s string
		switch d := dict.(type) {
		case *array.String:
			s = d.Value(k)
		case *array.LargeString:
			s = d.Value(k)
		case *array.StringView:
			s = d.Value(k)
		default:
			return fmt.Errorf("data: %s: column %q: unexpected dictionary %T", b.src, b.col.name, dict)
		}
		b.remap = append(b.remap, b.code(s))
	}
	for r := 0; r < m; r++ {
		if a.IsNull(r) {
			b.col.codes = append(b.col.codes, 0)
			continue
		}
		k := a.GetValueIndex(r)
		if k < 0 || k >= len(b.remap) {
			return fmt.Errorf("data: %s: row %d, column %q: dictionary index %d out of range [0, %d)", b.src, b.n+r+1, b.col.name, k, len(b.remap))
		}
		b.col.codes = append(b.col.codes, b.remap[k])
	}
	return nil
}

// code returns the code of level s, adding it if new. s may alias Arrow
// memory; a new level is copied.
func (b *arrowBuilder) code(s string) int32 {
	if k, ok := b.index[s]; ok {
		return k
	}
	s = strings.Clone(s)
	k := int32(len(b.col.levels))
	b.col.levels = append(b.col.levels, s)
	b.index[s] = k
	return k
}

// finish returns the column; a String column without values gets one
// level so that codes of missing rows (0) stay in range.
func (b *arrowBuilder) finish() *column {
	c := b.col
	if c.typ == String && len(c.levels) == 0 && len(c.codes) > 0 {
		c.levels = []string{""}
	}
	return c
}

type integer interface {
	~int8 | ~int16 | ~int32 | ~uint8 | ~uint16 | ~uint32
}

func appendInts[T integer](dst *[]int64, src []T) {
	for _, v := range src {
		*dst = append(*dst, int64(v))
	}
}

// unitToMicros returns v·mul/div converting the unit to microseconds.
func unitToMicros(u arrow.TimeUnit) (mul, div int64) {
	switch u {
	case arrow.Second:
		return 1e6, 1
	case arrow.Millisecond:
		return 1e3, 1
	case arrow.Nanosecond:
		return 1, 1e3
	}
	return 1, 1
}

// scaleMicros converts, flooring nanoseconds toward −∞.
func scaleMicros(v, mul, div int64) int64 {
	if div != 1 {
		q := v / div
		if v%div < 0 {
			q--
		}
		return q
	}
	return v * mul
}

// finishArrow stores the builders' columns in the Frame.
func finishArrow(f *Frame, builders []*arrowBuilder, n int) *Frame {
	f.n = n
	for _, b := range builders {
		f.cols = append(f.cols, b.finish())
	}
	return f
}

// ReadArrow reads an Arrow IPC file: the file format (what .arrow and
// Feather version 2 files are, starting with "ARROW1") or the stream
// format, told apart by the magic bytes. Nulls are missing values. Columns
// of types the package does not read are left out unless named in
// opt.Columns (then an error). A truncated or corrupted file is an error,
// never a panic.
func ReadArrow(path string, opt *ReadOptions) (*Frame, error) {
	src := filepath.Base(path)
	if err := opt.check(src); err != nil {
		return nil, err
	}
	f, err := openRegular(path, src, false)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return readArrow(f, src, opt)
}

var arrowMagic = []byte("ARROW1")

// readArrow reads the IPC file or stream format from r.
func readArrow(r readSource, src string, opt *ReadOptions) (fr *Frame, err error) {
	defer func() {
		if p := recover(); p != nil {
			fr, err = nil, fmt.Errorf("data: %s: not a readable Arrow IPC file (arrow-go: %v)", src, p)
		}
	}()
	head := make([]byte, 8)
	k, _ := r.ReadAt(head, 0)
	head = head[:k]
	if bytes.HasPrefix(head, []byte("FEA1")) {
		return nil, fmt.Errorf("data: %s: a Feather version 1 file; only Feather version 2 (Arrow IPC) is read: rewrite it with pyarrow.feather.write_feather(…, version=2)", src)
	}
	size, err := r.Seek(0, io.SeekEnd)
	if err != nil {
		return nil, fmt.Errorf("data: %s: %v", src, err)
	}
	isFile := bytes.HasPrefix(head, arrowMagic)
	if err := checkIPC(r, size, isFile); err != nil {
		return nil, fmt.Errorf("data: %s: not a readable Arrow IPC file: %v", src, err)
	}
	if _, err := r.Seek(0, io.SeekStart); err != nil {
		return nil, fmt.Errorf("data: %w", err)
	}
	mem := newCappedAllocator(size)
	opts := []ipc.Option{ipc.WithAllocator(mem), ipc.WithMetadataSizeLimit(size), ipc.WithBodySizeLimit(size)}
	var (
		schema *arrow.Schema
		next   func() (arrow.RecordBatch, error) // nil, io.EOF at the end
	)
	if isFile {
		fr, err := ipc.NewFileReader(r, opts...)
		if err != nil {
			return nil, fmt.Errorf("data: %s: not a readable Arrow IPC file: %v", src, err)
		}
		defer fr.Close()
		schema = fr.Schema()
		i := 0
		next = func() (arrow.RecordBatch, error) {
			if i >= fr.NumRecords() {
				return nil, io.EOF
			}
			rec, err := fr.RecordBatch(i)
			i++
			return rec, err // owned by the reader
		}
	} else {
		sr, err := ipc.NewReader(bufio.NewReader(r), opts...)
		if err != nil {
			return nil, fmt.Errorf("data: %s: not a readable Arrow IPC file or stream: %v", src, err)
		}
		defer sr.Release()
		schema = sr.Schema()
		next = func() (arrow.RecordBatch, error) {
			if sr.Next() {
				return sr.RecordBatch(), nil
			}
			if err := sr.Err(); err != nil {
				return nil, err
			}
			return nil, io.EOF
		}
	}
	fields := schema.Fields()
	names := make([]string, len(fields))
	for j, fd := range fields {
		names[j] = fd.Name
	}
	sel, err := selectColumns(src, names, opt.columns())
	if err != nil {
		return nil, err
	}
	var idx []int
	var builders []*arrowBuilder
	for _, j := range sel {
		if k := duplicate(names, j); k >= 0 {
			return nil, fmt.Errorf("data: %s: columns %d and %d are both named %q: which one a term means is ambiguous", src, min(j, k)+1, max(j, k)+1, names[j])
		}
		if _, ok := arrowColumnType(fields[j].Type); !ok && opt.columns() == nil {
			continue
		}
		b, err := newArrowBuilder(src, fields[j], 0)
		if err != nil {
			return nil, err
		}
		idx = append(idx, j)
		builders = append(builders, b)
	}
	out := &Frame{source: src}
	limit := opt.limit()
	n := 0
	for n < limit {
		rec, err := next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, fmt.Errorf("data: %s: record batch after row %d: %v", src, n, err)
		}
		if rec.NumCols() != int64(len(fields)) {
			return nil, fmt.Errorf("data: %s: a record batch after row %d has %d columns, the schema %d", src, n, rec.NumCols(), len(fields))
		}
		m := int(min(rec.NumRows(), int64(limit-n)))
		for k, b := range builders {
			col := rec.Column(idx[k])
			if col.Len() < m {
				return nil, fmt.Errorf("data: %s: column %q has %d values in a record batch of %d rows after row %d", src, b.col.name, col.Len(), m, n)
			}
			if err := b.appendArray(col, m); err != nil {
				return nil, err
			}
		}
		n += m
	}
	return finishArrow(out, builders, n), nil
}
