// Copyright ©2026 The exactmh Authors. All rights reserved.
// Use of this source code is governed by a BSD-style
// license that can be found in the LICENSE file.

package arrowipc

import (
	"fmt"
	"math"
	"strings"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/exactmh/exactmh/data/internal/colbuf"
	"github.com/exactmh/exactmh/internal/prefault"
)

// arrowColumnType maps an Arrow type onto a column type; ok is false for
// types the package does not read (nested, binary, decimal, intervals…).
func arrowColumnType(dt arrow.DataType) (int, bool) {
	switch dt.ID() {
	case arrow.INT8, arrow.INT16, arrow.INT32, arrow.INT64,
		arrow.UINT8, arrow.UINT16, arrow.UINT32, arrow.UINT64:
		return colbuf.Int, true
	case arrow.FLOAT16, arrow.FLOAT32, arrow.FLOAT64:
		return colbuf.Float, true
	case arrow.BOOL:
		return colbuf.Bool, true
	case arrow.TIMESTAMP, arrow.DATE32, arrow.DATE64:
		return colbuf.Time, true
	case arrow.STRING, arrow.LARGE_STRING, arrow.STRING_VIEW:
		return colbuf.String, true
	case arrow.DICTIONARY:
		switch dt.(*arrow.DictionaryType).ValueType.ID() {
		case arrow.STRING, arrow.LARGE_STRING, arrow.STRING_VIEW:
			return colbuf.String, true
		}
	}
	return 0, false
}

// arrowBuilder accumulates one column from Arrow arrays (record batches or
// chunks).
type arrowBuilder struct {
	src   string // file name, for messages
	col   *colbuf.Column
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
	b := &arrowBuilder{src: src, col: &colbuf.Column{Name: field.Name, Type: typ}, dt: field.Type}
	capacity = max(0, min(capacity, 1<<26)) // a hint from the file: do not trust it with memory
	switch typ {
	case colbuf.Float:
		b.col.F = make([]float64, 0, capacity)
		prefault.Populate(b.col.F[:capacity])
	case colbuf.Int, colbuf.Bool, colbuf.Time:
		b.col.I = make([]int64, 0, capacity)
		prefault.Populate(b.col.I[:capacity])
	case colbuf.String:
		b.col.Codes = make([]int32, 0, capacity)
		prefault.Populate(b.col.Codes[:capacity])
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
		return fmt.Errorf("data: %s: column %q changes type from %s to %s at row %d", b.src, b.col.Name, b.dt, arr.DataType(), b.n+1)
	}
	m = min(m, arr.Len())
	c := b.col
	start := b.n
	switch a := arr.(type) {
	case *array.Int8:
		appendInts(&c.I, a.Int8Values()[:m])
	case *array.Int16:
		appendInts(&c.I, a.Int16Values()[:m])
	case *array.Int32:
		appendInts(&c.I, a.Int32Values()[:m])
	case *array.Int64:
		c.I = append(c.I, a.Int64Values()[:m]...)
	case *array.Uint8:
		appendInts(&c.I, a.Uint8Values()[:m])
	case *array.Uint16:
		appendInts(&c.I, a.Uint16Values()[:m])
	case *array.Uint32:
		appendInts(&c.I, a.Uint32Values()[:m])
	case *array.Uint64:
		for r, v := range a.Uint64Values()[:m] {
			if v > math.MaxInt64 && a.IsValid(r) {
				return fmt.Errorf("data: %s: row %d, column %q: %d does not fit in an int64", b.src, start+r+1, c.Name, v)
			}
			c.I = append(c.I, int64(v))
		}
	case *array.Float16:
		for r := 0; r < m; r++ {
			c.F = append(c.F, float64(a.Value(r).Float32()))
		}
	case *array.Float32:
		for _, v := range a.Float32Values()[:m] {
			c.F = append(c.F, float64(v))
		}
	case *array.Float64:
		c.F = append(c.F, a.Float64Values()[:m]...)
	case *array.Boolean:
		for r := 0; r < m; r++ {
			var v int64
			if a.Value(r) {
				v = 1
			}
			c.I = append(c.I, v)
		}
	case *array.Timestamp:
		mul, div := unitToMicros(b.dt.(*arrow.TimestampType).Unit)
		for _, v := range a.TimestampValues()[:m] {
			c.I = append(c.I, colbuf.ScaleMicros(int64(v), mul, div))
		}
		if b.loc != nil {
			for r := start; r < start+m; r++ {
				_, off := time.UnixMicro(c.I[r]).In(b.loc).Zone()
				c.I[r] += int64(off) * 1e6
			}
		}
	case *array.Date32:
		for _, v := range a.Date32Values()[:m] {
			c.I = append(c.I, int64(v)*86400e6)
		}
	case *array.Date64:
		for _, v := range a.Date64Values()[:m] {
			c.I = append(c.I, int64(v)*1000)
		}
	case *array.String:
		for r := 0; r < m; r++ {
			c.Codes = append(c.Codes, b.code(a.Value(r)))
		}
	case *array.LargeString:
		for r := 0; r < m; r++ {
			c.Codes = append(c.Codes, b.code(a.Value(r)))
		}
	case *array.StringView:
		for r := 0; r < m; r++ {
			c.Codes = append(c.Codes, b.code(a.Value(r)))
		}
	case *array.Dictionary:
		if err := b.appendDictionary(a, m); err != nil {
			return err
		}
	default:
		return fmt.Errorf("data: %s: column %q: unexpected Arrow array %T for type %s", b.src, c.Name, arr, b.dt)
	}
	if c.Miss != nil || arr.NullN() > 0 {
		if c.Miss == nil {
			c.Miss = make([]bool, start, start+m)
		}
		c.Miss = append(c.Miss, make([]bool, m)...)
		if arr.NullN() > 0 {
			for r := 0; r < m; r++ {
				if arr.IsNull(r) {
					c.Miss[start+r] = true
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
			return fmt.Errorf("data: %s: column %q: unexpected dictionary %T", b.src, b.col.Name, dict)
		}
		b.remap = append(b.remap, b.code(s))
	}
	for r := 0; r < m; r++ {
		if a.IsNull(r) {
			b.col.Codes = append(b.col.Codes, 0)
			continue
		}
		k := a.GetValueIndex(r)
		if k < 0 || k >= len(b.remap) {
			return fmt.Errorf("data: %s: row %d, column %q: dictionary index %d out of range [0, %d)", b.src, b.n+r+1, b.col.Name, k, len(b.remap))
		}
		b.col.Codes = append(b.col.Codes, b.remap[k])
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
	k := int32(len(b.col.Levels))
	b.col.Levels = append(b.col.Levels, s)
	b.index[s] = k
	return k
}

// finish returns the column; a String column without values gets one
// level so that codes of missing rows (0) stay in range.
func (b *arrowBuilder) finish() *colbuf.Column {
	c := b.col
	if c.Type == colbuf.String && len(c.Levels) == 0 && len(c.Codes) > 0 {
		c.Levels = []string{""}
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
