// Copyright ©2026 The exactmh Authors. All rights reserved.
// Use of this source code is governed by a BSD-style
// license that can be found in the LICENSE file.

package data

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/float16"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/arrow-go/v18/parquet"
	"github.com/apache/arrow-go/v18/parquet/compress"
	"github.com/apache/arrow-go/v18/parquet/file"
	"github.com/apache/arrow-go/v18/parquet/metadata"
	"github.com/apache/arrow-go/v18/parquet/pqarrow"
	"github.com/apache/arrow-go/v18/parquet/schema"
	"github.com/exactmh/exactmh/data/internal/colbuf"
	"github.com/exactmh/exactmh/internal/prefault"
)

// agKind is how a Parquet column's values become a column's.
type agKind int

const (
	agBool      agKind = iota // BOOLEAN
	agInt32                   // INT32, signed (any width)
	agUint32                  // INT32, unsigned
	agDate                    // INT32 days since 1970-01-01
	agInt64                   // INT64, signed
	agUint64                  // INT64, unsigned
	agTimestamp               // INT64 in the unit of mul/div
	agInt96                   // INT96 timestamp (Julian day, nanoseconds of the day)
	agFloat32                 // FLOAT
	agFloat64                 // DOUBLE
	agFloat16                 // FIXED_LEN_BYTE_ARRAY(2), Float16
	agString                  // BYTE_ARRAY, String
)

// agColumnKind maps a leaf column onto a column type and a kind; ok
// is false for what the package does not read (times of day, decimals,
// binary, JSON, intervals…), the types arrow-go's pqarrow reads as Arrow
// types arrowColumnType refuses.
func agColumnKind(c *schema.Column) (typ ColumnType, kind agKind, mul, div int64, ok bool) {
	lt := c.LogicalType()
	switch c.PhysicalType() {
	case parquet.Types.Boolean:
		return Bool, agBool, 0, 0, agIsPlain(lt)
	case parquet.Types.Int32:
		switch t := lt.(type) {
		case schema.IntLogicalType:
			if t.IsSigned() {
				return Int, agInt32, 0, 0, true
			}
			return Int, agUint32, 0, 0, true
		case schema.DateLogicalType:
			return Time, agDate, 0, 0, true
		}
		return Int, agInt32, 0, 0, agIsPlain(lt)
	case parquet.Types.Int64:
		switch t := lt.(type) {
		case schema.IntLogicalType:
			if t.IsSigned() {
				return Int, agInt64, 0, 0, true
			}
			return Int, agUint64, 0, 0, true
		case schema.TimestampLogicalType:
			switch t.TimeUnit() {
			case schema.TimeUnitMillis:
				return Time, agTimestamp, 1e3, 1, true
			case schema.TimeUnitMicros:
				return Time, agTimestamp, 1, 1, true
			case schema.TimeUnitNanos:
				return Time, agTimestamp, 1, 1e3, true
			}
			return 0, 0, 0, 0, false
		}
		return Int, agInt64, 0, 0, agIsPlain(lt)
	case parquet.Types.Int96:
		return Time, agInt96, 0, 0, agIsPlain(lt)
	case parquet.Types.Float:
		return Float, agFloat32, 0, 0, agIsPlain(lt)
	case parquet.Types.Double:
		return Float, agFloat64, 0, 0, agIsPlain(lt)
	case parquet.Types.FixedLenByteArray:
		if _, ok := lt.(schema.Float16LogicalType); ok && c.TypeLength() == 2 {
			return Float, agFloat16, 0, 0, true
		}
	case parquet.Types.ByteArray:
		if _, ok := lt.(schema.StringLogicalType); ok {
			return String, agString, 0, 0, true
		}
	}
	return 0, 0, 0, 0, false
}

// agIsPlain reports a logical type that leaves the physical type's meaning
// alone.
func agIsPlain(lt schema.LogicalType) bool {
	switch lt.(type) {
	case nil, schema.NoLogicalType:
		return true
	}
	return false
}

// agBuilder accumulates one column from a Parquet leaf column.
type agBuilder struct {
	src      string
	col      *column
	leaf     int // the leaf column's index in the file's schema
	kind     agKind
	mul, div int64 // agTimestamp: to microseconds
	maxDef   int16
	n        int              // rows so far
	total    int              // rows reserved (more may come)
	index    map[string]int32 // String: level → code
}

// readParquet reads Parquet from r; src names it in messages. Every call
// into arrow-go is guarded: a panic on malformed input becomes an error.
func readParquetArrowGo(r readSource, src string, opt *ReadOptions) (fr *Frame, err error) {
	defer func() {
		if p := recover(); p != nil {
			fr, err = nil, fmt.Errorf("data: %s: not a readable Parquet file (arrow-go: %v)", src, p)
		}
	}()
	size, err := r.Seek(0, io.SeekEnd)
	if err != nil {
		return nil, fmt.Errorf("data: %s: %v", src, err)
	}
	mem := memory.DefaultAllocator
	props := parquet.NewReaderProperties(mem)
	// Column chunks are read through a buffer rather than into one slice
	// of the size the footer declares (which a corrupted footer sets to
	// gigabytes), and no page may be larger than the file or the cap.
	props.BufferedStreamEnabled = true
	props.BufferSize = 1 << 20
	props.MaxCompressedPageSize = max(1, min(size, parquet.DefaultMaxCompressedPageSize))
	// A page decompresses to at most about a thousand times its size
	// (gzip's limit is 1,032:1), and no page is larger than the file, so
	// a page declaring more than 1,024 times the file's size (at least
	// 1 MiB) is refused before its buffer is allocated: a few kilobytes of
	// pages each declaring 64 MiB would otherwise allocate gigabytes in
	// all.
	props.MaxUncompressedPageSize = min(max(1<<20, 1024*size), 64<<20+64*size, parquet.DefaultMaxUncompressedPageSize)
	pf, err := file.NewParquetReader(r, file.WithReadProps(props))
	if err != nil {
		return nil, fmt.Errorf("data: %s: not a readable Parquet file: %v", src, err)
	}
	defer pf.Close()
	md := pf.MetaData()
	sch := md.Schema
	root := sch.Root()
	names := make([]string, root.NumFields())
	for j := range names {
		names[j] = root.Field(j).Name()
	}
	sel, err := selectColumns(src, names, opt.columns())
	if err != nil {
		return nil, err
	}
	// Leave out what cannot be read unless it was asked for by name.
	var builders []*agBuilder
	for _, j := range sel {
		node := root.Field(j)
		if k := duplicate(names, j); k >= 0 {
			return nil, fmt.Errorf("data: %s: columns %d and %d are both named %q: which one a term means is ambiguous", src, min(j, k)+1, max(j, k)+1, names[j])
		}
		leaf := -1
		if _, prim := node.(*schema.PrimitiveNode); prim && node.RepetitionType() != parquet.Repetitions.Repeated {
			leaf = sch.ColumnIndexByNode(node)
		}
		var (
			typ      ColumnType
			kind     agKind
			mul, div int64
			ok       bool
		)
		if leaf >= 0 {
			typ, kind, mul, div, ok = agColumnKind(sch.Column(leaf))
		}
		if !ok {
			if opt.columns() == nil {
				continue
			}
			what := "a nested column"
			if leaf >= 0 {
				what = sch.Column(leaf).String()
			}
			return nil, fmt.Errorf("data: %s: column %q is %s, which this package does not read (want integers, floats, booleans, timestamps, dates or strings)", src, node.Name(), what)
		}
		b := &agBuilder{src: src, col: &column{name: node.Name(), typ: typ}, leaf: leaf, kind: kind, mul: mul, div: div, maxDef: sch.Column(leaf).MaxDefinitionLevel()}
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
	var groups []int
	var declared int64
	for g := 0; g < pf.NumRowGroups() && declared < int64(limit); g++ {
		rows := md.RowGroup(g).NumRows()
		if rows < 0 || rows > math.MaxInt64-declared {
			return nil, fmt.Errorf("data: %s: row group %d declares %d rows", src, g, rows)
		}
		if err := agCheckChunks(md.RowGroup(g), builders, size); err != nil {
			return nil, fmt.Errorf("data: %s: row group %d: %v", src, g, err)
		}
		groups = append(groups, g)
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
	// Each column is read on its own, the columns in parallel, each
	// goroutine with its own recover.
	errs := make([]error, len(builders))
	sem := make(chan struct{}, runtime.GOMAXPROCS(0))
	var wg sync.WaitGroup
	for k := range builders {
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer wg.Done()
			defer func() { <-sem }()
			errs[k] = builders[k].read(pf, groups, total)
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

// agCheckChunks checks the column chunks of the builders' leaves in one row
// group against the file: their pages must lie inside it. arrow-go would
// otherwise seek to, and size buffers by, whatever the footer says.
func agCheckChunks(rg *metadata.RowGroupMetaData, builders []*agBuilder, size int64) error {
	for _, b := range builders {
		cc, err := rg.ColumnChunk(b.leaf)
		if err != nil {
			return err
		}
		start := cc.DataPageOffset()
		if cc.HasDictionaryPage() && cc.DictionaryPageOffset() > 0 && cc.DictionaryPageOffset() < start {
			start = cc.DictionaryPageOffset()
		}
		n := cc.TotalCompressedSize()
		if start < 0 || n < 0 || start > size || n > size-start {
			return fmt.Errorf("column %q: a chunk of %d bytes at byte %d of a %d-byte file", b.col.name, n, start, size)
		}
		if cc.NumValues() < 0 {
			return fmt.Errorf("column %q: %d values", b.col.name, cc.NumValues())
		}
	}
	return nil
}

// reserve allocates room for n rows; more grow by appending.
func (b *agBuilder) reserve(n int) {
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
func (b *agBuilder) read(pf *file.Reader, groups []int, limit int) (err error) {
	defer func() {
		if p := recover(); p != nil {
			err = fmt.Errorf("data: %s: column %q near row %d: not a readable Parquet file (arrow-go: %v)", b.src, b.col.name, b.n+1, p)
		}
	}()
	batch := min(batchRows, max(limit, 1))
	var defs []int16
	if b.maxDef > 0 {
		defs = make([]int16, batch)
	}
	var (
		i32 []int32
		i64 []int64
		i96 []parquet.Int96
		f32 []float32
		f64 []float64
		bl  []bool
		ba  []parquet.ByteArray
		fl  []parquet.FixedLenByteArray
	)
	switch b.kind {
	case agBool:
		bl = make([]bool, batch)
	case agInt32, agUint32, agDate:
		i32 = make([]int32, batch)
	case agInt64, agUint64, agTimestamp:
		i64 = make([]int64, batch)
	case agInt96:
		i96 = make([]parquet.Int96, batch)
	case agFloat32:
		f32 = make([]float32, batch)
	case agFloat64:
		f64 = make([]float64, batch)
	case agFloat16:
		fl = make([]parquet.FixedLenByteArray, batch)
	case agString:
		ba = make([]parquet.ByteArray, batch)
	}
	for _, g := range groups {
		if b.n >= limit {
			break
		}
		cr, err := pf.RowGroup(g).Column(b.leaf)
		if err != nil {
			return fmt.Errorf("data: %s: column %q, row group %d: %v", b.src, b.col.name, g, err)
		}
		for b.n < limit {
			want := int64(min(batch, limit-b.n))
			var rows int64
			var vals int
			switch cr := cr.(type) {
			case *file.BooleanColumnChunkReader:
				rows, vals, err = cr.ReadBatch(want, bl, defs, nil)
			case *file.Int32ColumnChunkReader:
				rows, vals, err = cr.ReadBatch(want, i32, defs, nil)
			case *file.Int64ColumnChunkReader:
				rows, vals, err = cr.ReadBatch(want, i64, defs, nil)
			case *file.Int96ColumnChunkReader:
				rows, vals, err = cr.ReadBatch(want, i96, defs, nil)
			case *file.Float32ColumnChunkReader:
				rows, vals, err = cr.ReadBatch(want, f32, defs, nil)
			case *file.Float64ColumnChunkReader:
				rows, vals, err = cr.ReadBatch(want, f64, defs, nil)
			case *file.FixedLenByteArrayColumnChunkReader:
				rows, vals, err = cr.ReadBatch(want, fl, defs, nil)
			case *file.ByteArrayColumnChunkReader:
				rows, vals, err = cr.ReadBatch(want, ba, defs, nil)
			default:
				return fmt.Errorf("data: %s: column %q: unexpected column reader %T", b.src, b.col.name, cr)
			}
			if err != nil {
				return fmt.Errorf("data: %s: column %q near row %d: %v", b.src, b.col.name, b.n+1, err)
			}
			if rows == 0 {
				break
			}
			if rows > want || vals < 0 || int64(vals) > rows {
				return fmt.Errorf("data: %s: column %q near row %d: %d values in %d rows, %d asked for", b.src, b.col.name, b.n+1, vals, rows, want)
			}
			if err := b.append(int(rows), vals, defs, i32, i64, i96, f32, f64, bl, ba, fl); err != nil {
				return err
			}
		}
	}
	return nil
}

// append appends rows rows, of which vals are present: the values are
// dense (nulls take no slot), the definition levels say which rows have
// one.
func (b *agBuilder) append(rows, vals int, defs []int16, i32 []int32, i64 []int64, i96 []parquet.Int96, f32 []float32, f64 []float64, bl []bool, ba []parquet.ByteArray, fl []parquet.FixedLenByteArray) error {
	c := b.col
	start := b.n
	if b.maxDef > 0 {
		present := 0
		for _, d := range defs[:rows] {
			if d == b.maxDef {
				present++
			}
		}
		if present != vals {
			return fmt.Errorf("data: %s: column %q near row %d: %d values for %d present rows", b.src, c.name, start+1, vals, present)
		}
	} else if vals != rows {
		return fmt.Errorf("data: %s: column %q near row %d: %d values for %d rows of a required column", b.src, c.name, start+1, vals, rows)
	}
	v, nulls := 0, 0 // the next value; the rows without one
	for r := 0; r < rows; r++ {
		if b.maxDef > 0 && defs[r] != b.maxDef {
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
		case agBool:
			var x int64
			if bl[v] {
				x = 1
			}
			c.i = append(c.i, x)
		case agInt32:
			c.i = append(c.i, int64(i32[v]))
		case agUint32:
			c.i = append(c.i, int64(uint32(i32[v])))
		case agDate:
			c.i = append(c.i, int64(i32[v])*86400e6)
		case agInt64:
			c.i = append(c.i, i64[v])
		case agUint64:
			if i64[v] < 0 {
				return fmt.Errorf("data: %s: row %d, column %q: %d does not fit in an int64", b.src, start+r+1, c.name, uint64(i64[v]))
			}
			c.i = append(c.i, i64[v])
		case agTimestamp:
			c.i = append(c.i, colbuf.ScaleMicros(i64[v], b.mul, b.div))
		case agInt96:
			us, err := agInt96Micros(i96[v])
			if err != nil {
				return fmt.Errorf("data: %s: row %d, column %q: %v", b.src, start+r+1, c.name, err)
			}
			c.i = append(c.i, us)
		case agFloat32:
			c.f = append(c.f, float64(f32[v]))
		case agFloat64:
			c.f = append(c.f, f64[v])
		case agFloat16:
			if len(fl[v]) != 2 {
				return fmt.Errorf("data: %s: row %d, column %q: a float16 of %d bytes", b.src, start+r+1, c.name, len(fl[v]))
			}
			c.f = append(c.f, float64(float16.FromBits(binary.LittleEndian.Uint16(fl[v])).Float32()))
		case agString:
			c.codes = append(c.codes, b.code(ba[v]))
		}
		v++
	}
	if nulls > 0 || c.miss != nil {
		if c.miss == nil {
			c.miss = make([]bool, start, max(b.total, start+rows))
		}
		for _, d := range defs[:rows] {
			c.miss = append(c.miss, d != b.maxDef)
		}
	}
	b.n = start + rows
	return nil
}

// code returns the code of level s, adding it if new; s aliases the
// reader's memory and a new level is copied.
func (b *agBuilder) code(s []byte) int32 {
	if k, ok := b.index[string(s)]; ok {
		return k
	}
	str := string(s)
	k := int32(len(b.col.levels))
	b.col.levels = append(b.col.levels, str)
	b.index[str] = k
	return k
}

// agInt96Micros converts an INT96 timestamp (nanoseconds of the day, then
// the Julian day, little-endian) to microseconds since the epoch, as
// arrow-go's conversion to a nanosecond timestamp would, floored.
func agInt96Micros(v parquet.Int96) (int64, error) {
	nanos := binary.LittleEndian.Uint64(v[:8])
	if nanos >= 86400e9 {
		return 0, fmt.Errorf("INT96 timestamp with %d nanoseconds in its day", nanos)
	}
	days := int64(binary.LittleEndian.Uint32(v[8:])) - julianUnixEpoch
	return days*86400e6 + int64(nanos/1000), nil
}

// TestParquetOracle reads Parquet files written by arrow-go in every way
// the package's reader decodes (both data page versions, without a
// dictionary, with one, and with one that overflows so that later pages
// fall back to PLAIN, DELTA_BINARY_PACKED and BYTE_STREAM_SPLIT, every
// built-in codec, optional and required
// columns, small pages and row groups) with the package's reader and
// with arrow-go's column chunk readers, the reader the package used
// before its own: the Frames must be identical.
func TestParquetOracle(t *testing.T) {
	files := map[string][]byte{}
	for _, name := range []string{"small.parquet", "missing.parquet"} {
		b, err := os.ReadFile(filepath.Join("testdata", name))
		if err != nil {
			t.Fatal(err)
		}
		files[name] = b
	}
	for _, null := range []map[int]bool{nil, {0: true, 3: true, 11: true}} {
		rec := smallRecord(t, null)
		for _, c := range []compress.Compression{compress.Codecs.Uncompressed, compress.Codecs.Snappy, compress.Codecs.Gzip, compress.Codecs.Zstd} {
			for _, v2 := range []bool{false, true} {
				for _, dict := range []bool{false, true} {
					version := parquet.DataPageV1
					if v2 {
						version = parquet.DataPageV2
					}
					props := parquet.NewWriterProperties(parquet.WithCompression(c), parquet.WithDictionaryDefault(dict),
						parquet.WithDataPageVersion(version), parquet.WithDataPageSize(64), parquet.WithBatchSize(3))
					var buf bytes.Buffer
					tbl := array.NewTableFromRecords(rec.Schema(), []arrow.RecordBatch{rec})
					if err := pqarrow.WriteTable(tbl, &buf, 5, props, pqarrow.DefaultWriterProps()); err != nil {
						t.Fatal(err)
					}
					tbl.Release()
					files[fmt.Sprintf("nulls=%v %v v2=%v dict=%v", null != nil, c, v2, dict)] = buf.Bytes()
				}
			}
		}
		rec.Release()
	}
	// Dictionaries that overflow their page's limit: the first pages are
	// dictionary-encoded, the later ones PLAIN (arrow-go's fallback, as
	// parquet-mr's and pyarrow's).
	fb := fallbackRecord(2000)
	defer fb.Release()
	for _, v2 := range []bool{false, true} {
		version := parquet.DataPageV1
		if v2 {
			version = parquet.DataPageV2
		}
		props := parquet.NewWriterProperties(parquet.WithDictionaryDefault(true), parquet.WithDictionaryPageSizeLimit(512),
			parquet.WithDataPageVersion(version), parquet.WithDataPageSize(256), parquet.WithBatchSize(100))
		var buf bytes.Buffer
		tbl := array.NewTableFromRecords(fb.Schema(), []arrow.RecordBatch{fb})
		if err := pqarrow.WriteTable(tbl, &buf, 2000, props, pqarrow.DefaultWriterProps()); err != nil {
			t.Fatal(err)
		}
		tbl.Release()
		files[fmt.Sprintf("dictionary fallback v2=%v", v2)] = buf.Bytes()
	}
	// The encodings of version 2 writers for numbers: DELTA_BINARY_PACKED
	// (blocks of 128 values in 4 miniblocks, negative deltas) and
	// BYTE_STREAM_SPLIT.
	for _, v2 := range []bool{false, true} {
		version := parquet.DataPageV1
		if v2 {
			version = parquet.DataPageV2
		}
		for _, rec := range []arrow.RecordBatch{fb, smallRecord(t, map[int]bool{2: true})} {
			props := parquet.NewWriterProperties(parquet.WithDictionaryDefault(false), parquet.WithDataPageVersion(version),
				parquet.WithDataPageSize(512), parquet.WithBatchSize(100),
				parquet.WithEncodingFor("i", parquet.Encodings.DeltaBinaryPacked),
				parquet.WithEncodingFor("delay", parquet.Encodings.DeltaBinaryPacked),
				parquet.WithEncodingFor("date", parquet.Encodings.DeltaBinaryPacked),
				parquet.WithEncodingFor("distance", parquet.Encodings.ByteStreamSplit),
				parquet.WithEncodingFor("load", parquet.Encodings.ByteStreamSplit))
			var buf bytes.Buffer
			tbl := array.NewTableFromRecords(rec.Schema(), []arrow.RecordBatch{rec})
			if err := pqarrow.WriteTable(tbl, &buf, 2000, props, pqarrow.DefaultWriterProps()); err != nil {
				t.Fatal(err)
			}
			tbl.Release()
			files[fmt.Sprintf("delta and split, %d rows, v2=%v", rec.NumRows(), v2)] = buf.Bytes()
		}
	}
	// The other types: TestArrowTypes' (timestamps of every unit and with
	// a zone, dates, 32-bit integers and floats, unsigned integers), as
	// INT64 timestamps and as the deprecated INT96, and Float16.
	types := typesRecord()
	defer types.Release()
	six := array.NewRecordBatch(arrow.NewSchema(types.Schema().Fields()[:6], nil), types.Columns()[:6], types.NumRows())
	defer six.Release()
	for _, int96 := range []bool{false, true} {
		var buf bytes.Buffer
		tbl := array.NewTableFromRecords(six.Schema(), []arrow.RecordBatch{six})
		if err := pqarrow.WriteTable(tbl, &buf, 10, parquet.NewWriterProperties(), pqarrow.NewArrowWriterProperties(pqarrow.WithDeprecatedInt96Timestamps(int96))); err != nil {
			t.Fatal(err)
		}
		tbl.Release()
		files[fmt.Sprintf("types int96=%v", int96)] = buf.Bytes()
	}
	hb := array.NewFloat16Builder(memory.DefaultAllocator)
	for _, x := range []float32{1.5, -0.25, 65504, 6e-8, float32(math.Inf(1))} {
		hb.Append(float16.New(x))
	}
	hb.AppendNull()
	half := hb.NewArray()
	hb.Release()
	hrec := array.NewRecordBatch(arrow.NewSchema([]arrow.Field{{Name: "h", Type: arrow.FixedWidthTypes.Float16, Nullable: true}}, nil), []arrow.Array{half}, int64(half.Len()))
	half.Release()
	defer hrec.Release()
	{
		var buf bytes.Buffer
		tbl := array.NewTableFromRecords(hrec.Schema(), []arrow.RecordBatch{hrec})
		if err := pqarrow.WriteTable(tbl, &buf, 10, parquet.NewWriterProperties(), pqarrow.DefaultWriterProps()); err != nil {
			t.Fatal(err)
		}
		tbl.Release()
		files["float16"] = buf.Bytes()
	}
	for name, b := range files {
		for _, opt := range []*ReadOptions{nil, {Limit: 7}, {Columns: []string{"late", "load"}}} {
			want, err := readParquetArrowGo(bytes.NewReader(b), "oracle.parquet", opt)
			if err != nil && opt != nil && opt.Columns != nil {
				continue // the fallback files have other columns
			}
			if err != nil {
				t.Fatalf("%s: arrow-go: %v", name, err)
			}
			got, err := readParquet(bytes.NewReader(b), "oracle.parquet", opt)
			if err != nil {
				t.Errorf("%s, %+v: %v", name, opt, err)
				continue
			}
			if g, w := frameDigest(got), frameDigest(want); g != w {
				t.Errorf("%s, %+v: digest %s, arrow-go's %s", name, opt, g, w)
			}
		}
	}
}

// FuzzParquetOracle compares the package's reader with arrow-go's on
// fuzzed files: where both read a file, the Frames must be identical.
// (Where one refuses a corrupted file the other reads, nothing is
// compared: the package's reader checks more.)
func FuzzParquetOracle(f *testing.F) {
	addSeeds(f, "*.parquet")
	f.Fuzz(func(t *testing.T, b []byte) {
		got, err := readParquet(bytes.NewReader(b), "fuzz.parquet", fuzzOpts)
		if err != nil {
			return
		}
		want, err := readParquetArrowGo(bytes.NewReader(b), "fuzz.parquet", fuzzOpts)
		if err != nil {
			return
		}
		if g, w := frameDigest(got), frameDigest(want); g != w {
			t.Fatalf("digest %s, arrow-go's %s", g, w)
		}
	})
}

// TestParquetUnregisteredCodec reads a Brotli file without the codec
// registered (package data/parquetcodecs registers it): an error naming
// the codec and the import.
func TestParquetUnregisteredCodec(t *testing.T) {
	rec := smallRecord(t, nil)
	defer rec.Release()
	var buf bytes.Buffer
	tbl := array.NewTableFromRecords(rec.Schema(), []arrow.RecordBatch{rec})
	defer tbl.Release()
	props := parquet.NewWriterProperties(parquet.WithCompression(compress.Codecs.Brotli))
	if err := pqarrow.WriteTable(tbl, &buf, 5, props, pqarrow.DefaultWriterProps()); err != nil {
		t.Fatal(err)
	}
	_, err := readParquet(bytes.NewReader(buf.Bytes()), "brotli.parquet", nil)
	if err == nil || !strings.Contains(err.Error(), "BROTLI") || !strings.Contains(err.Error(), `import _ "github.com/exactmh/exactmh/data/parquetcodecs"`) {
		t.Errorf("a Brotli file without the codec registered: %v", err)
	}
}

// fallbackRecord is n rows of a nullable string column and an integer
// column with a few hundred distinct values each: enough for a small
// dictionary page limit to overflow.
func fallbackRecord(n int) arrow.RecordBatch {
	sch := arrow.NewSchema([]arrow.Field{{Name: "s", Type: arrow.BinaryTypes.String, Nullable: true}, {Name: "i", Type: arrow.PrimitiveTypes.Int64}}, nil)
	b := array.NewRecordBuilder(memory.DefaultAllocator, sch)
	defer b.Release()
	for r := range n {
		if r%7 == 3 {
			b.Field(0).(*array.StringBuilder).AppendNull()
		} else {
			b.Field(0).(*array.StringBuilder).Append(fmt.Sprintf("s%d", (r*r)%301))
		}
		b.Field(1).(*array.Int64Builder).Append(int64((r * 7919) % 997))
	}
	return b.NewRecordBatch()
}
