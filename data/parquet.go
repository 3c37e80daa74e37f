// Copyright ©2026 The exactmh Authors. All rights reserved.
// Use of this source code is governed by a BSD-style
// license that can be found in the LICENSE file.

package data

import (
	"encoding/binary"
	"fmt"
	"io"
	"math"
	"path/filepath"
	"runtime"
	"sync"

	"github.com/exactmh/exactmh/data/internal/colbuf"
	"github.com/exactmh/exactmh/internal/prefault"
)

// readSource is what the readers read from: an *os.File, or a
// *bytes.Reader in the fuzz tests.
type readSource interface {
	io.Reader
	io.ReaderAt
	io.Seeker
}

// batchRows is how many rows a Parquet read decodes at a time.
const batchRows = 1 << 16

// ReadParquet reads a Parquet file with the package's own reader
// (parquet.go, parquet_meta.go, parquet_page.go): flat columns of the
// physical types BOOLEAN, INT32, INT64, INT96, FLOAT, DOUBLE, BYTE_ARRAY
// (strings) and FIXED_LEN_BYTE_ARRAY(2) (Float16), in data pages of
// version 1 and 2, PLAIN or dictionary encoded (numbers also
// DELTA_BINARY_PACKED or BYTE_STREAM_SPLIT), compressed with Snappy,
// gzip or zstd or not at all. Other codecs (Brotli, LZ4) are read once
// registered with RegisterParquetCodec (the exactmh command registers
// them); a file using one that is not registered is an error naming the
// codec and the import that reads it. Nulls are missing values. With
// opt.Columns nil, columns of types the package does not read (lists,
// structs, binary, decimals…) are left out; named in opt.Columns they
// are an error saying why. Two columns of one name are an error. A
// truncated or corrupted file is an error, never a panic; a file that
// declares more rows than memory holds is refused before any is read.
func ReadParquet(path string, opt *ReadOptions) (*Frame, error) {
	src := filepath.Base(path)
	if err := opt.check(src); err != nil {
		return nil, err
	}
	f, err := openRegular(path, src, false)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return readParquet(f, src, opt)
}

// parquetKind is how a Parquet column's values become a column's.
type parquetKind int

const (
	pqBool      parquetKind = iota // BOOLEAN
	pqInt32                        // INT32, signed (any width)
	pqUint32                       // INT32, unsigned
	pqDate                         // INT32 days since 1970-01-01
	pqInt64                        // INT64, signed
	pqUint64                       // INT64, unsigned
	pqTimestamp                    // INT64 in the unit of mul/div
	pqInt96                        // INT96 timestamp (Julian day, nanoseconds of the day)
	pqFloat32                      // FLOAT
	pqFloat64                      // DOUBLE
	pqFloat16                      // FIXED_LEN_BYTE_ARRAY(2), Float16
	pqString                       // BYTE_ARRAY, String
)

// parquetColumnKind maps a leaf column onto a column type and a kind; ok
// is false for what the package does not read (times of day, decimals,
// binary, JSON, intervals…). A logical type in the schema wins over a
// converted type, as in arrow-go's reading of the same schema.
func parquetColumnKind(e *pqElement) (typ ColumnType, kind parquetKind, mul, div int64, ok bool) {
	lt := e.logical()
	switch e.typ {
	case pqTypeBoolean:
		return Bool, pqBool, 0, 0, lt.kind == ltNone
	case pqTypeInt32:
		switch lt.kind {
		case ltInteger:
			if lt.signed {
				return Int, pqInt32, 0, 0, true
			}
			return Int, pqUint32, 0, 0, true
		case ltDate:
			return Time, pqDate, 0, 0, true
		}
		return Int, pqInt32, 0, 0, lt.kind == ltNone
	case pqTypeInt64:
		switch lt.kind {
		case ltInteger:
			if lt.signed {
				return Int, pqInt64, 0, 0, true
			}
			return Int, pqUint64, 0, 0, true
		case ltTimestamp:
			switch lt.unit {
			case unitMillis:
				return Time, pqTimestamp, 1e3, 1, true
			case unitMicros:
				return Time, pqTimestamp, 1, 1, true
			case unitNanos:
				return Time, pqTimestamp, 1, 1e3, true
			}
			return 0, 0, 0, 0, false
		}
		return Int, pqInt64, 0, 0, lt.kind == ltNone
	case pqTypeInt96:
		return Time, pqInt96, 0, 0, lt.kind == ltNone
	case pqTypeFloat:
		return Float, pqFloat32, 0, 0, lt.kind == ltNone
	case pqTypeDouble:
		return Float, pqFloat64, 0, 0, lt.kind == ltNone
	case pqTypeFixed:
		if lt.kind == ltFloat16 && e.typeLength == 2 {
			return Float, pqFloat16, 0, 0, true
		}
	case pqTypeByteArray:
		if lt.kind == ltString {
			return String, pqString, 0, 0, true
		}
	}
	return 0, 0, 0, 0, false
}

// parquetBuilder accumulates one column from a Parquet leaf column.
type parquetBuilder struct {
	src      string
	col      *column
	elem     *pqElement
	leaf     int // the leaf column's index in the file's schema
	kind     parquetKind
	mul, div int64 // pqTimestamp: to microseconds
	maxDef   int   // 0 (required) or 1 (optional)
	n        int   // rows so far
	total    int   // rows reserved (more may come)
	index    map[string]int32
}

// readParquet reads Parquet from r; src names it in messages.
func readParquet(r readSource, src string, opt *ReadOptions) (fr *Frame, err error) {
	size, err := r.Seek(0, io.SeekEnd)
	if err != nil {
		return nil, fmt.Errorf("data: %s: %v", src, err)
	}
	md, err := readParquetFooter(r, size)
	if err != nil {
		return nil, fmt.Errorf("data: %s: not a readable Parquet file: %v", src, err)
	}
	fields := md.fields
	names := make([]string, len(fields))
	for j, f := range fields {
		names[j] = f.name
	}
	sel, err := selectColumns(src, names, opt.columns())
	if err != nil {
		return nil, err
	}
	// Leave out what cannot be read unless it was asked for by name.
	var builders []*parquetBuilder
	for _, j := range sel {
		e := fields[j]
		if k := duplicate(names, j); k >= 0 {
			return nil, fmt.Errorf("data: %s: columns %d and %d are both named %q: which one a term means is ambiguous", src, min(j, k)+1, max(j, k)+1, names[j])
		}
		var (
			typ      ColumnType
			kind     parquetKind
			mul, div int64
			ok       bool
		)
		flat := e.leaf >= 0 && e.rep != repRepeated
		if flat {
			typ, kind, mul, div, ok = parquetColumnKind(e)
		}
		if !ok {
			if opt.columns() == nil {
				continue
			}
			what := "a nested column"
			if flat {
				what = e.describe()
			}
			return nil, fmt.Errorf("data: %s: column %q is %s, which this package does not read (want integers, floats, booleans, timestamps, dates or strings)", src, e.name, what)
		}
		b := &parquetBuilder{src: src, col: &column{name: e.name, typ: typ}, elem: e, leaf: e.leaf, kind: kind, mul: mul, div: div}
		if e.rep == repOptional {
			b.maxDef = 1
		}
		if typ == String {
			b.index = make(map[string]int32)
		}
		builders = append(builders, b)
	}
	out := &Frame{source: src}
	if len(builders) == 0 {
		return out, nil
	}
	// The rows the file declares, checked against its row groups and
	// against memory before anything is allocated for them.
	limit := opt.limit()
	var groups []*pqRowGroup
	var declared int64
	for g := 0; g < len(md.groups) && declared < int64(limit); g++ {
		rg := &md.groups[g]
		rows := rg.rows
		if rows < 0 || rows > math.MaxInt64-declared {
			return nil, fmt.Errorf("data: %s: row group %d declares %d rows", src, g, rows)
		}
		if err := checkChunks(rg, builders, size, md.leaves); err != nil {
			return nil, fmt.Errorf("data: %s: row group %d: %v", src, g, err)
		}
		groups = append(groups, rg)
		declared += rows
	}
	total := int(min(declared, int64(limit)))
	if err := checkRowsFit(src, total, len(builders)); err != nil {
		return nil, err
	}
	// Room for the declared rows, up to what a file of this size can
	// plausibly hold (memory then grows with the rows actually decoded).
	hint := int(min(int64(total), 64*size+1<<16))
	for _, b := range builders {
		b.reserve(hint)
	}
	// A page decompresses to at most about a thousand times its size
	// (gzip's limit is 1,032:1), and no page is larger than the file, so
	// a page declaring more than 1,024 times the file's size (at least
	// 1 MiB) is refused before its buffer is allocated; nor may a page
	// be larger than 64 MiB plus 64 times the file's size, the cap on
	// any single allocation the package's readers make.
	pageCap := min(max(1<<20, 1024*size), 64<<20+64*size, maxPageSize)
	// Each column is read on its own, the columns in parallel.
	errs := make([]error, len(builders))
	sem := make(chan struct{}, runtime.GOMAXPROCS(0))
	var wg sync.WaitGroup
	for k := range builders {
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer wg.Done()
			defer func() { <-sem }()
			pr := &pageReader{r: r, pageCap: pageCap}
			errs[k] = builders[k].read(pr, groups, total, opt.stopped)
		}()
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			return nil, err // the first column's
		}
	}
	out.n = total
	for _, b := range builders {
		if b.n != total {
			return nil, fmt.Errorf("data: %s: column %q has %d rows, the metadata says %d", src, b.col.name, b.n, total)
		}
		c := b.col
		if c.typ == String && len(c.levels) == 0 && len(c.codes) > 0 {
			c.levels = []string{""}
		}
		out.cols = append(out.cols, c)
	}
	return out, nil
}

// maxPageSize is the largest uncompressed page the reader accepts: 1 GiB,
// the largest a page can be in arrow-go and parquet-mr.
const maxPageSize = 1 << 30

// duplicate returns the index of another column named as names[j], or -1.
func duplicate(names []string, j int) int {
	for k, name := range names {
		if k != j && name == names[j] {
			return k
		}
	}
	return -1
}

// checkChunks checks the column chunks of the builders' leaves in one row
// group against the file: their pages must lie inside it.
func checkChunks(rg *pqRowGroup, builders []*parquetBuilder, size int64, leaves int) error {
	if len(rg.chunks) != leaves {
		return fmt.Errorf("%d column chunks for %d columns", len(rg.chunks), leaves)
	}
	for _, b := range builders {
		cc := &rg.chunks[b.leaf]
		if !cc.hasMeta {
			return fmt.Errorf("column %q: a chunk without metadata", b.col.name)
		}
		start, n := cc.span()
		if start < 0 || n < 0 || start > size || n > size-start {
			return fmt.Errorf("column %q: a chunk of %d bytes at byte %d of a %d-byte file", b.col.name, n, start, size)
		}
		if cc.numValues < 0 {
			return fmt.Errorf("column %q: %d values", b.col.name, cc.numValues)
		}
		if cc.typ != b.elem.typ {
			return fmt.Errorf("column %q: a chunk of physical type %s in a column of type %s", b.col.name, pqTypeName(cc.typ), pqTypeName(b.elem.typ))
		}
	}
	return nil
}

// reserve allocates room for n rows; more grow by appending.
func (b *parquetBuilder) reserve(n int) {
	b.total = n
	c := b.col
	switch c.typ {
	case Float:
		c.f = make([]float64, 0, n)
		prefault.Populate(c.f[:n])
	case Int, Bool, Time:
		c.i = make([]int64, 0, n)
		prefault.Populate(c.i[:n])
	case String:
		c.codes = make([]int32, 0, n)
		prefault.Populate(c.codes[:n])
	}
}

// read reads the builder's column from the row groups, up to limit rows.
func (b *parquetBuilder) read(pr *pageReader, groups []*pqRowGroup, limit int, stopped func() error) error {
	cr := newChunkReader(b, pr)
	for g, rg := range groups {
		if b.n >= limit {
			break
		}
		if err := stopped(); err != nil {
			return fmt.Errorf("data: %s: column %q: stopped at row group %d: %w", b.src, b.col.name, g, err)
		}
		cc := &rg.chunks[b.leaf]
		want := int(min(rg.rows, int64(limit-b.n)))
		short, err := cr.readChunk(cc, rg.rows, want)
		if err != nil {
			return fmt.Errorf("data: %s: column %q, row group %d, near row %d: %v", b.src, b.col.name, g, b.n+1, err)
		}
		if short {
			break // the rows missing are reported by readParquet
		}
	}
	return nil
}

// values is one batch of a column's values as stored, dense (nulls take
// no slot): the slice of the column's physical type is used, or, for a
// dictionary-encoded string column, idx into the dictionary.
type values struct {
	i32 []int32
	i64 []int64
	i96 [][12]byte
	f32 []float32
	f64 []float64
	bl  []bool
	ba  [][]byte // BYTE_ARRAY and FIXED_LEN_BYTE_ARRAY
	idx []uint32 // dictionary indices
}

// append appends rows rows, of which vals are present, from v: defs
// (maxDef > 0) say which rows have a value. dict is the dictionary of a
// dictionary-encoded page (nil for PLAIN), whose string entries are
// coded through v.idx.
func (b *parquetBuilder) append(rows, vals int, defs []uint8, v *values, dict *pqDict) error {
	c := b.col
	start := b.n
	if b.maxDef > 0 {
		present := 0
		for _, d := range defs[:rows] {
			present += int(d)
		}
		if present != vals {
			return fmt.Errorf("%d values for %d present rows", vals, present)
		}
	} else if vals != rows {
		return fmt.Errorf("%d values for %d rows of a required column", vals, rows)
	}
	k, nulls := 0, 0 // the next value; the rows without one
	for r := 0; r < rows; r++ {
		if b.maxDef > 0 && defs[r] == 0 {
			switch c.typ {
			case Float:
				c.f = append(c.f, 0)
			case String:
				c.codes = append(c.codes, 0)
			default:
				c.i = append(c.i, 0)
			}
			nulls++
			continue
		}
		switch b.kind {
		case pqBool:
			var x int64
			if v.bl[k] {
				x = 1
			}
			c.i = append(c.i, x)
		case pqInt32:
			c.i = append(c.i, int64(v.i32[k]))
		case pqUint32:
			c.i = append(c.i, int64(uint32(v.i32[k])))
		case pqDate:
			c.i = append(c.i, int64(v.i32[k])*86400e6)
		case pqInt64:
			c.i = append(c.i, v.i64[k])
		case pqUint64:
			if v.i64[k] < 0 {
				return fmt.Errorf("row %d: %d does not fit in an int64", start+r+1, uint64(v.i64[k]))
			}
			c.i = append(c.i, v.i64[k])
		case pqTimestamp:
			c.i = append(c.i, colbuf.ScaleMicros(v.i64[k], b.mul, b.div))
		case pqInt96:
			us, err := int96Micros(v.i96[k])
			if err != nil {
				return fmt.Errorf("row %d: %v", start+r+1, err)
			}
			c.i = append(c.i, us)
		case pqFloat32:
			c.f = append(c.f, float64(v.f32[k]))
		case pqFloat64:
			c.f = append(c.f, v.f64[k])
		case pqFloat16:
			if len(v.ba[k]) != 2 {
				return fmt.Errorf("row %d: a float16 of %d bytes", start+r+1, len(v.ba[k]))
			}
			c.f = append(c.f, float64(float16To32(binary.LittleEndian.Uint16(v.ba[k]))))
		case pqString:
			if dict != nil {
				c.codes = append(c.codes, b.dictCode(dict, v.idx[k]))
			} else {
				c.codes = append(c.codes, b.code(v.ba[k]))
			}
		}
		k++
	}
	if nulls > 0 || c.miss != nil {
		if c.miss == nil {
			c.miss = make([]bool, start, max(b.total, start+rows))
		}
		for _, d := range defs[:rows] {
			c.miss = append(c.miss, d == 0)
		}
	}
	b.n = start + rows
	return nil
}

// code returns the code of level s, adding it if new; s aliases the
// reader's memory and a new level is copied.
func (b *parquetBuilder) code(s []byte) int32 {
	if k, ok := b.index[string(s)]; ok {
		return k
	}
	str := string(s)
	k := int32(len(b.col.levels))
	b.col.levels = append(b.col.levels, str)
	b.index[str] = k
	return k
}

// dictCode returns the code of dictionary entry i, looking it up on its
// first use, so that levels are numbered in order of first appearance in
// the rows, as without a dictionary.
func (b *parquetBuilder) dictCode(d *pqDict, i uint32) int32 {
	if k := d.codes[i]; k >= 0 {
		return k
	}
	k := b.code(d.v.ba[i])
	d.codes[i] = k
	return k
}

// julianUnixEpoch is the Julian day of 1970-01-01.
const julianUnixEpoch = 2440588

// int96Micros converts an INT96 timestamp (nanoseconds of the day, then
// the Julian day, little-endian) to microseconds since the epoch, as
// arrow-go's conversion to a nanosecond timestamp would, floored.
func int96Micros(v [12]byte) (int64, error) {
	nanos := binary.LittleEndian.Uint64(v[:8])
	if nanos >= 86400e9 {
		return 0, fmt.Errorf("INT96 timestamp with %d nanoseconds in its day", nanos)
	}
	days := int64(binary.LittleEndian.Uint32(v[8:])) - julianUnixEpoch
	return days*86400e6 + int64(nanos/1000), nil
}

// float16To32 converts IEEE half-precision bits to a float32 bit for bit
// as arrow-go's float16.Num.Float32 does (which is what the Arrow readers
// give): sign, exponent rebiased, fraction shifted; a zero exponent gives
// a zero exponent, so a subnormal half keeps its fraction bits.
func float16To32(h uint16) float32 {
	sign := uint32(h>>15) & 1
	exp := uint32(h>>10) & 0x1f
	res := exp + 127 - 15
	frac := uint32(h & 0x3ff)
	switch exp {
	case 0:
		res = 0
	case 0x1f:
		res = 0xff
	}
	return math.Float32frombits(sign<<31 | res<<23 | frac<<13)
}
