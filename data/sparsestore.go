// Copyright ©2026 The exactmh Authors. All rights reserved.
// Use of this source code is governed by a BSD-style
// license that can be found in the LICENSE file.

package data

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"math"
	"math/bits"
	"os"
	"runtime/debug"
	"strconv"
	"sync"
	"unsafe"
)

// SparseStoreMagic is the first eight bytes of a sparse store file.
const SparseStoreMagic = "EXMHSPRS"

// SparseStoreVersion is the layout version CreateSparseStore writes and
// OpenSparseStore reads: 2, with a CRC-32C checksum of each section after
// the layout description. Version 1 stores, without checksums, are
// refused with an error saying to write them again.
const SparseStoreVersion = 2

// sparseSections is the number of checksummed sections of a sparse store:
// y, offset, RowPtr, Col, Val and the layout description.
const sparseSections = 6

// castagnoli is the CRC-32C table (hardware-accelerated on amd64 and
// arm64: the checksums cost a fraction of a pass over the file).
var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// MaxSparseMeta is the largest layout description (JSON) a sparse store
// may hold: 64 MiB, room for millions of level names.
const MaxSparseMeta = 1 << 26

// sparseFlagOffset marks a store with an offset section.
const sparseFlagOffset = 1

// sparseLayout is what a sparse store's header declares, checked and in
// ints: the sections' offsets, each aligned to 64 bytes, the last (the
// layout description) ending the file.
type sparseLayout struct {
	n, d, nnz, metaLen                 int
	dtype                              DType
	offset                             bool
	yOff, oOff, pOff, cOff, vOff, mOff int
	kOff                               int // the checksums, sparseSections uint32
	size                               int
}

// sections returns the name, offset and length in bytes of each
// checksummed section, in the order of the checksums.
func (l sparseLayout) sections() [sparseSections]struct {
	name     string
	off, len int
} {
	es := l.dtype.Size()
	oLen := 0
	if l.offset {
		oLen = 8 * l.n
	}
	return [sparseSections]struct {
		name     string
		off, len int
	}{{"y", l.yOff, 8 * l.n}, {"offset", l.oOff, oLen}, {"RowPtr", l.pOff, 8 * (l.n + 1)},
		{"Col", l.cOff, 4 * l.nnz}, {"Val", l.vOff, es * l.nnz}, {"layout description", l.mOff, l.metaLen}}
}

// align64 rounds x up to a multiple of 64.
func align64(x uint64) uint64 { return (x + sectionAlig - 1) / sectionAlig * sectionAlig }

// sparseLayoutFor returns the layout of a store of n rows of d columns
// with nnz entries, or an error naming the numbers that do not fit.
func sparseLayoutFor(n, d, nnz, metaLen uint64, dtype DType, offset bool) (sparseLayout, error) {
	es := uint64(dtype.Size())
	switch {
	case es == 0:
		return sparseLayout{}, fmt.Errorf("dtype %d, want 1 (float32) or 2 (float64)", uint32(dtype))
	case strconv.IntSize != 64:
		return sparseLayout{}, errors.New("sparse stores need a 64-bit platform (the row pointers are int64)")
	case n == 0:
		return sparseLayout{}, errors.New("N = 0, want ≥ 1")
	case d == 0 || d > MaxStoreDim:
		return sparseLayout{}, fmt.Errorf("D = %d, want in [1, %d]", d, MaxStoreDim)
	case metaLen > MaxSparseMeta:
		return sparseLayout{}, fmt.Errorf("layout description of %d bytes, more than %d", metaLen, MaxSparseMeta)
	}
	const limit = math.MaxInt64 / 4
	if hi, nd := bits.Mul64(n, d); hi != 0 || nnz > nd {
		return sparseLayout{}, fmt.Errorf("%d entries in N = %d rows of D = %d columns: more than N·D", nnz, n, d)
	}
	if n > limit/32 || nnz > limit/16 {
		return sparseLayout{}, fmt.Errorf("N = %d, %d entries: the file would overflow", n, nnz)
	}
	l := sparseLayout{n: int(n), d: int(d), nnz: int(nnz), metaLen: int(metaLen), dtype: dtype, offset: offset}
	pos := uint64(headerSize)
	l.yOff = int(pos)
	pos = align64(pos + 8*n)
	if offset {
		l.oOff = int(pos)
		pos = align64(pos + 8*n)
	}
	l.pOff = int(pos)
	pos = align64(pos + 8*(n+1))
	l.cOff = int(pos)
	pos = align64(pos + 4*nnz)
	l.vOff = int(pos)
	pos = align64(pos + es*nnz)
	l.mOff = int(pos)
	l.kOff = int(pos + metaLen)
	l.size = l.kOff + 4*sparseSections
	return l, nil
}

// header returns the 64 header bytes of l.
func (l sparseLayout) header() []byte {
	h := make([]byte, headerSize)
	copy(h, SparseStoreMagic)
	ne := binary.NativeEndian
	ne.PutUint32(h[8:], SparseStoreVersion)
	ne.PutUint32(h[12:], endianCheck)
	ne.PutUint32(h[16:], uint32(l.dtype))
	if l.offset {
		ne.PutUint32(h[20:], sparseFlagOffset)
	}
	ne.PutUint64(h[24:], uint64(l.n))
	ne.PutUint64(h[32:], uint64(l.d))
	ne.PutUint64(h[40:], uint64(l.nnz))
	ne.PutUint64(h[48:], uint64(l.metaLen))
	ne.PutUint64(h[56:], uint64(l.size))
	return h
}

// parseSparseHeader checks the header b of a file of fileSize bytes.
func parseSparseHeader(path string, b []byte, fileSize int64) (sparseLayout, error) {
	if len(b) >= headerSize && bytes.Equal(b[:8], []byte(SparseStoreMagic)) && binary.NativeEndian.Uint32(b[8:]) == 1 {
		return sparseLayout{}, fmt.Errorf("data: sparse store %s: version 1, written without checksums: write it again with CreateSparseStore (this reader knows version %d, whose sections carry CRC-32C checksums)", path, SparseStoreVersion)
	}
	if err := checkHeaderStart("sparse store", path, b, SparseStoreMagic, SparseStoreVersion); err != nil {
		return sparseLayout{}, err
	}
	ne := binary.NativeEndian
	flags := ne.Uint32(b[20:])
	if flags&^sparseFlagOffset != 0 {
		return sparseLayout{}, fmt.Errorf("data: sparse store %s: flags %#x, want 0 or 1 (an offset section)", path, flags)
	}
	l, err := sparseLayoutFor(ne.Uint64(b[24:]), ne.Uint64(b[32:]), ne.Uint64(b[40:]), ne.Uint64(b[48:]), DType(ne.Uint32(b[16:])), flags != 0)
	if err != nil {
		return sparseLayout{}, fmt.Errorf("data: sparse store %s: header: %w", path, err)
	}
	if s := ne.Uint64(b[56:]); s != uint64(l.size) {
		return sparseLayout{}, fmt.Errorf("data: sparse store %s: declared size %d bytes, want %d for N = %d, D = %d, %d entries of %v", path, s, l.size, l.n, l.d, l.nnz, l.dtype)
	}
	if fileSize != int64(l.size) {
		what := "truncated"
		if fileSize > int64(l.size) {
			what = "longer than its layout"
		}
		return sparseLayout{}, fmt.Errorf("data: sparse store %s: file is %d bytes, header declares %d (N = %d, %d entries): %s", path, fileSize, l.size, l.n, l.nnz, what)
	}
	return l, nil
}

// SparseLayout describes the columns of a sparse store written for a
// multilevel model (model.NewMultilevelRows): Fixed names columns 0 …
// p−1, the fixed effects; then each factor in turn holds, level by
// level, its terms (the intercept first if Intercept, then the Slopes),
// len(Levels)·(q) columns with q the number of terms.
type SparseLayout struct {
	Fixed   []string       `json:"fixed"`
	Factors []SparseFactor `json:"factors"`
}

// SparseFactor is a grouping factor of a SparseLayout.
type SparseFactor struct {
	Name      string   `json:"name"`
	Levels    []string `json:"levels"`
	Intercept bool     `json:"intercept"`
	Slopes    []string `json:"slopes,omitempty"`
}

// Columns returns the number of columns the layout describes, or an error
// naming the factor whose counts overflow MaxStoreDim or that has no term.
func (l *SparseLayout) Columns() (int, error) {
	d := len(l.Fixed)
	for k, f := range l.Factors {
		q := len(f.Slopes)
		if f.Intercept {
			q++
		}
		if q == 0 {
			return 0, fmt.Errorf("factor %d (%q) has neither an intercept nor a slope", k, f.Name)
		}
		if len(f.Levels) > (MaxStoreDim-d)/q {
			return 0, fmt.Errorf("factor %d (%q): %d levels × %d terms take the columns past %d", k, f.Name, len(f.Levels), q, MaxStoreDim)
		}
		d += len(f.Levels) * q
	}
	return d, nil
}

// secWriter buffers one section of a file being written at a fixed
// position.
type secWriter struct {
	f   *os.File
	pos int64
	buf []byte
}

// flush writes the buffer at its position.
func (s *secWriter) flush() error {
	if len(s.buf) == 0 {
		return nil
	}
	if _, err := s.f.WriteAt(s.buf, s.pos); err != nil {
		return err
	}
	s.pos += int64(len(s.buf))
	s.buf = s.buf[:0]
	return nil
}

// grow flushes the buffer when it is nearly full.
func (s *secWriter) grow() error {
	if len(s.buf) < writerBuf-64 {
		return nil
	}
	return s.flush()
}

// SparseStoreWriter writes a sparse store row by row (CreateSparseStore):
// WriteRow N times, then Close. The values are written to a side file
// until Close knows their number; the store is written under path +
// ".partial" and renamed to path by a successful Close, so an interrupted
// build never leaves a file OpenSparseStore accepts. It holds one buffer
// per section, never the data. It is not safe for concurrent use.
type SparseStoreWriter struct {
	f, vf         *os.File
	path, tmp     string
	l             sparseLayout
	meta          []byte
	rows, nnz     int
	y, o, p, c, v secWriter
	err           error
}

// CreateSparseStore starts a sparse store of n rows of d columns whose
// values are stored in dtype, with an offset per row if offset, and the
// layout description layout (nil for none; otherwise it must describe d
// columns) at path.
func CreateSparseStore(path string, n, d int, dtype DType, offset bool, layout *SparseLayout) (*SparseStoreWriter, error) {
	var meta []byte
	if layout != nil {
		cols, err := layout.Columns()
		if err != nil {
			return nil, fmt.Errorf("data: CreateSparseStore %s: layout: %w", path, err)
		}
		if cols != d {
			return nil, fmt.Errorf("data: CreateSparseStore %s: the layout describes %d columns, want D = %d", path, cols, d)
		}
		if meta, err = json.Marshal(layout); err != nil {
			return nil, fmt.Errorf("data: CreateSparseStore %s: layout: %w", path, err)
		}
	}
	if n < 0 || d < 0 {
		return nil, fmt.Errorf("data: CreateSparseStore %s: N = %d, D = %d, want ≥ 1", path, n, d)
	}
	// The sections up to the columns depend on N alone.
	l, err := sparseLayoutFor(uint64(n), uint64(d), 0, uint64(len(meta)), dtype, offset)
	if err != nil {
		return nil, fmt.Errorf("data: CreateSparseStore %s: %w", path, err)
	}
	tmp := path + ".partial"
	f, err := os.OpenFile(tmp, os.O_RDWR|os.O_CREATE|os.O_TRUNC, 0o644)
	if err != nil {
		return nil, fmt.Errorf("data: CreateSparseStore: %w", err)
	}
	vf, err := os.CreateTemp(dirOf(path), ".sparse-values-*")
	if err != nil {
		f.Close()
		os.Remove(tmp)
		return nil, fmt.Errorf("data: CreateSparseStore: %w", err)
	}
	w := &SparseStoreWriter{f: f, vf: vf, path: path, tmp: tmp, l: l, meta: meta}
	w.y = secWriter{f: f, pos: int64(l.yOff), buf: make([]byte, 0, writerBuf)}
	if offset {
		w.o = secWriter{f: f, pos: int64(l.oOff), buf: make([]byte, 0, writerBuf)}
	}
	w.p = secWriter{f: f, pos: int64(l.pOff), buf: make([]byte, 0, writerBuf)}
	w.c = secWriter{f: f, pos: int64(l.cOff), buf: make([]byte, 0, writerBuf)}
	w.v = secWriter{f: vf, buf: make([]byte, 0, writerBuf)}
	w.p.buf = binary.NativeEndian.AppendUint64(w.p.buf, 0)
	return w, nil
}

// dirOf returns the directory of path ("." for a bare name).
func dirOf(path string) string {
	for i := len(path) - 1; i >= 0; i-- {
		if os.IsPathSeparator(path[i]) {
			return path[:i+1]
		}
	}
	return "."
}

// Rows returns the number of rows written so far.
func (w *SparseStoreWriter) Rows() int { return w.rows }

// WriteRow appends row i: its entries vals in the columns cols, strictly
// ascending in [0, D), every value finite (zeros are stored as given),
// the response y and the offset o (ignored without an offset section).
// After N rows it fails.
func (w *SparseStoreWriter) WriteRow(cols []int32, vals []float64, y, o float64) error {
	if w.err != nil {
		return w.err
	}
	at := func(format string, a ...any) error {
		return fmt.Errorf("data: sparse store %s: row %d: %s", w.path, w.rows, fmt.Sprintf(format, a...))
	}
	switch {
	case w.rows >= w.l.n:
		return fmt.Errorf("data: sparse store %s: row %d is one more than N = %d", w.path, w.rows, w.l.n)
	case len(cols) != len(vals):
		return at("%d columns and %d values", len(cols), len(vals))
	case math.IsNaN(y) || math.IsInf(y, 0):
		return at("y = %v is not finite", y)
	case w.l.offset && (math.IsNaN(o) || math.IsInf(o, 0)):
		return at("offset %v is not finite", o)
	}
	prev := int32(-1)
	for k, c := range cols {
		if c <= prev || int(c) >= w.l.d {
			return at("column %d after %d, want strictly ascending in [0, D = %d)", c, prev, w.l.d)
		}
		prev = c
		v := vals[k]
		if math.IsNaN(v) || math.IsInf(v, 0) {
			return at("column %d: value %v is not finite", c, v)
		}
		if w.l.dtype == Float32 && math.Abs(v) > math.MaxFloat32 {
			return at("column %d: value %v overflows float32", c, v)
		}
	}
	ne := binary.NativeEndian
	w.y.buf = ne.AppendUint64(w.y.buf, math.Float64bits(y))
	if w.l.offset {
		w.o.buf = ne.AppendUint64(w.o.buf, math.Float64bits(o))
	}
	w.nnz += len(cols)
	w.p.buf = ne.AppendUint64(w.p.buf, uint64(w.nnz))
	for k, c := range cols {
		w.c.buf = ne.AppendUint32(w.c.buf, uint32(c))
		if w.l.dtype == Float32 {
			w.v.buf = ne.AppendUint32(w.v.buf, math.Float32bits(float32(vals[k])))
		} else {
			w.v.buf = ne.AppendUint64(w.v.buf, math.Float64bits(vals[k]))
		}
		if err := errors.Join(w.c.grow(), w.v.grow()); err != nil {
			w.err = fmt.Errorf("data: sparse store %s: %w", w.path, err)
			return w.err
		}
	}
	w.rows++
	if err := errors.Join(w.y.grow(), w.o.grow(), w.p.grow()); err != nil {
		w.err = fmt.Errorf("data: sparse store %s: %w", w.path, err)
	}
	return w.err
}

// Close flushes the rows, appends the values and the layout description,
// writes the header and renames the file to its path. It fails, and
// removes the partial files, unless exactly N rows were written.
func (w *SparseStoreWriter) Close() error {
	if w.f == nil {
		return fmt.Errorf("data: sparse store %s: closed twice", w.path)
	}
	defer func() { w.f, w.vf = nil, nil }()
	defer os.Remove(w.vf.Name())
	if w.err == nil && w.rows != w.l.n {
		w.err = fmt.Errorf("data: sparse store %s: %d rows written, header declares N = %d", w.path, w.rows, w.l.n)
	}
	if w.err == nil {
		w.err = w.finish()
	}
	err := errors.Join(w.vf.Close(), w.f.Close())
	if w.err == nil && err != nil {
		w.err = fmt.Errorf("data: sparse store %s: %w", w.path, err)
	}
	w.err = renameOrRemove("sparse store", w.tmp, w.path, w.err)
	return w.err
}

// finish writes the buffered sections, the values at their place (now
// that their number is known), the description and the header.
func (w *SparseStoreWriter) finish() error {
	wrap := func(err error) error { return fmt.Errorf("data: sparse store %s: %w", w.path, err) }
	if err := errors.Join(w.y.flush(), w.o.flush(), w.p.flush(), w.c.flush(), w.v.flush()); err != nil {
		return wrap(err)
	}
	l, err := sparseLayoutFor(uint64(w.l.n), uint64(w.l.d), uint64(w.nnz), uint64(len(w.meta)), w.l.dtype, w.l.offset)
	if err != nil {
		return wrap(err)
	}
	if err := w.f.Truncate(int64(l.size)); err != nil {
		return wrap(err)
	}
	if _, err := w.vf.Seek(0, io.SeekStart); err != nil {
		return wrap(err)
	}
	if _, err := io.Copy(io.NewOffsetWriter(w.f, int64(l.vOff)), w.vf); err != nil {
		return wrap(err)
	}
	if _, err := w.f.WriteAt(w.meta, int64(l.mOff)); err != nil {
		return wrap(err)
	}
	// The checksums, from the sections as written (read back: one more
	// streaming pass over the file).
	sums := make([]byte, 0, 4*sparseSections)
	for _, sec := range l.sections() {
		h := crc32.New(castagnoli)
		if _, err := io.Copy(h, io.NewSectionReader(w.f, int64(sec.off), int64(sec.len))); err != nil {
			return wrap(fmt.Errorf("checksum of %s: %w", sec.name, err))
		}
		sums = binary.NativeEndian.AppendUint32(sums, h.Sum32())
	}
	if _, err := w.f.WriteAt(sums, int64(l.kOff)); err != nil {
		return wrap(err)
	}
	if _, err := w.f.WriteAt(l.header(), 0); err != nil {
		return wrap(fmt.Errorf("header: %w", err))
	}
	w.l = l
	return nil
}

// Abort abandons the store and removes its partial files.
func (w *SparseStoreWriter) Abort() error {
	if w.f == nil {
		return nil
	}
	w.f.Close()
	w.vf.Close()
	os.Remove(w.vf.Name())
	w.f, w.vf = nil, nil
	return os.Remove(w.tmp)
}

// SparseStore is an opened sparse row store (OpenSparseStore): N rows in
// compressed sparse row form — the entries of row i are Val[RowPtr[i]:
// RowPtr[i+1]] in the columns Col[RowPtr[i]:RowPtr[i+1]] — with a
// response y_i, optionally an offset o_i, and optionally a SparseLayout
// naming the columns of a multilevel model. Its slices point into the
// read-only mapping of the file, valid until Close: model.SparseRows and
// model.NewMultilevelRows take them as they are, so a multilevel model of
// 10⁷ rows is sampled without its rows ever being copied to the heap, and
// the operating system keeps in RAM the pages that are read. It is safe
// for concurrent reads.
//
// # Layout
//
// Integers and floats are in the writer's byte order (see Store), offsets
// in bytes from the start of the file, each section starting at a
// multiple of 64 (the gaps are zero):
//
//	offset size field
//	0      8    magic "EXMHSPRS"
//	8      4    version, uint32 = 2
//	12     4    endianness check, uint32 0x01020304 in the writer's order
//	16     4    dtype of the values, uint32: 1 = float32, 2 = float64
//	20     4    flags, uint32: 1 = an offset section, other bits 0
//	24     8    N, uint64, rows ≥ 1
//	32     8    D, uint64, columns, 1 ≤ D ≤ MaxStoreDim
//	40     8    nnz, uint64, entries ≤ N·D
//	48     8    length of the layout description, uint64 ≤ MaxSparseMeta
//	56     8    file size, uint64 (the end of the description)
//	64          y: N float64
//	            offset: N float64 (flag 1 only)
//	            RowPtr: N + 1 int64, RowPtr[0] = 0, RowPtr[N] = nnz
//	            Col: nnz int32
//	            Val: nnz values of dtype
//	            the layout description, JSON of a SparseLayout (empty: none)
//	            checksums: 6 uint32, the CRC-32C (Castagnoli) of y, offset
//	            (empty without flag 1), RowPtr, Col, Val and the description
//
// OpenSparseStore checks the header, the file's size and the layout
// description with its checksum (O(1) in N, a corrupted header or
// description is an error naming the file, the field and the numbers);
// Validate checks every section's checksum and every row pointer, column
// and value in one pass — a flipped byte of a value, which is still a
// valid value, is found only by its checksum — and model.NewSparseGLM of
// the rows checks all but the checksums. EndFullPasses and EvictCache act as Store's do.
type SparseStore struct {
	path   string
	l      sparseLayout
	layout *SparseLayout
	mem    []byte
	mmap   bool
	ra     io.ReaderAt // the file, for RowReader (nil once closed)
	f      *os.File    // the file kept open, nil for an in-memory store
	idxMu  sync.Mutex
	idx    *rowIndex // the row readers' index, built at the first read
	y, off []float64
	rowPtr []int
	col    []int32
	v32    []float32
	v64    []float64
}

// OpenSparseStore maps the sparse store at path read-only, after checking
// its header, size and layout description (not its rows: see
// SparseStore).
func OpenSparseStore(path string) (*SparseStore, error) {
	if err := regularPath(path, "OpenSparseStore: "+path, ""); err != nil {
		return nil, err
	}
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("data: OpenSparseStore: %w", err)
	}
	keep := false
	defer func() {
		if !keep {
			f.Close()
		}
	}()
	fi, err := f.Stat()
	if err != nil {
		return nil, fmt.Errorf("data: OpenSparseStore: %w", err)
	}
	h := make([]byte, headerSize)
	if k, _ := f.ReadAt(h, 0); k < headerSize {
		return nil, fmt.Errorf("data: sparse store %s: %d bytes, shorter than the %d-byte header (truncated, or not a store)", path, fi.Size(), headerSize)
	}
	l, err := parseSparseHeader(path, h, fi.Size())
	if err != nil {
		return nil, err
	}
	s := &SparseStore{path: path, l: l}
	if s.mem, s.mmap, err = mapFile(f, l.size); err != nil {
		return nil, fmt.Errorf("data: OpenSparseStore %s: %w", path, err)
	}
	if err := s.slice(); err != nil {
		s.Close()
		return nil, err
	}
	s.f, s.ra, keep = f, f, true
	return s, nil
}

// alignedBytes returns size zero bytes, 8-byte aligned.
func alignedBytes(size int) []byte {
	w := make([]float64, (size+7)/8)
	return unsafe.Slice((*byte)(unsafe.Pointer(unsafe.SliceData(w))), size)
}

// openSparseBytes is OpenSparseStore of an in-memory file, for the tests.
func openSparseBytes(path string, b []byte) (*SparseStore, error) {
	l, err := parseSparseHeader(path, b, int64(len(b)))
	if err != nil {
		return nil, err
	}
	s := &SparseStore{path: path, l: l, mem: alignedBytes(len(b))}
	copy(s.mem, b)
	if err := s.slice(); err != nil {
		return nil, err
	}
	s.ra = bytes.NewReader(s.mem)
	return s, nil
}

// slice points the sections into mem and parses the layout description.
func (s *SparseStore) slice() (err error) {
	defer guardFault(s.path, &err)
	defer debug.SetPanicOnFault(debug.SetPanicOnFault(true))
	l, m := s.l, s.mem
	s.y = unsafe.Slice((*float64)(unsafe.Pointer(&m[l.yOff])), l.n)
	if l.offset {
		s.off = unsafe.Slice((*float64)(unsafe.Pointer(&m[l.oOff])), l.n)
	}
	s.rowPtr = unsafe.Slice((*int)(unsafe.Pointer(&m[l.pOff])), l.n+1)
	if l.nnz > 0 {
		s.col = unsafe.Slice((*int32)(unsafe.Pointer(&m[l.cOff])), l.nnz)
		if l.dtype == Float32 {
			s.v32 = unsafe.Slice((*float32)(unsafe.Pointer(&m[l.vOff])), l.nnz)
		} else {
			s.v64 = unsafe.Slice((*float64)(unsafe.Pointer(&m[l.vOff])), l.nnz)
		}
	} else if l.dtype == Float32 {
		s.col, s.v32 = []int32{}, []float32{}
	} else {
		s.col, s.v64 = []int32{}, []float64{}
	}
	if err := s.verify(sparseSections - 1); err != nil { // the description: small, checked at open
		return err
	}
	if l.metaLen == 0 {
		return nil
	}
	var lay SparseLayout
	dec := json.NewDecoder(bytes.NewReader(m[l.mOff : l.mOff+l.metaLen]))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&lay); err != nil {
		return fmt.Errorf("data: sparse store %s: layout description: %w", s.path, err)
	}
	cols, err := lay.Columns()
	if err != nil {
		return fmt.Errorf("data: sparse store %s: layout description: %w", s.path, err)
	}
	if cols != l.d {
		return fmt.Errorf("data: sparse store %s: the layout description names %d columns, the header D = %d", s.path, cols, l.d)
	}
	s.layout = &lay
	return nil
}

// Path returns the file the store was opened from.
func (s *SparseStore) Path() string { return s.path }

// N returns the number of rows.
func (s *SparseStore) N() int { return s.l.n }

// D returns the number of columns.
func (s *SparseStore) D() int { return s.l.d }

// NNZ returns the number of stored entries.
func (s *SparseStore) NNZ() int { return s.l.nnz }

// DType returns the storage type of the values.
func (s *SparseStore) DType() DType { return s.l.dtype }

// Size returns the file's size in bytes.
func (s *SparseStore) Size() int64 { return int64(s.l.size) }

// Mapped reports whether the store is memory-mapped.
func (s *SparseStore) Mapped() bool { return s.mmap }

// Layout returns the layout description, or nil if the store has none.
func (s *SparseStore) Layout() *SparseLayout { return s.layout }

// Y returns the N responses. The caller must not modify them.
func (s *SparseStore) Y() []float64 { return s.y }

// Offset returns the N offsets, or nil without an offset section.
func (s *SparseStore) Offset() []float64 { return s.off }

// RowPtr returns the N + 1 row pointers. The caller must not modify them.
func (s *SparseStore) RowPtr() []int { return s.rowPtr }

// Col returns the nnz column indices. The caller must not modify them.
func (s *SparseStore) Col() []int32 { return s.col }

// Val32 returns the nnz values if the store is Float32, nil otherwise.
func (s *SparseStore) Val32() []float32 { return s.v32 }

// Val64 returns the nnz values if the store is Float64, nil otherwise.
func (s *SparseStore) Val64() []float64 { return s.v64 }

// Validate reads the whole file and returns an error naming the first
// row pointer, column or value that is not what the layout says, or then
// the first section whose CRC-32C checksum differs from the one written
// with it (a second streaming pass over the file, which CRC-32C hashes at
// memory speed on amd64 and arm64), or nil:
// RowPtr ascending from 0 to nnz, each row's columns strictly ascending in
// [0, D), every y, offset and value finite. A file truncated while mapped
// is an error too, not a crash.
func (s *SparseStore) Validate() (err error) {
	defer guardFault(s.path, &err)
	defer debug.SetPanicOnFault(debug.SetPanicOnFault(true))
	for _, v := range [2]struct {
		name string
		s    []float64
	}{{"y", s.y}, {"offset", s.off}} {
		for i, f := range v.s {
			if math.IsNaN(f) || math.IsInf(f, 0) {
				return fmt.Errorf("data: sparse store %s: %s[%d] = %v is not finite", s.path, v.name, i, f)
			}
		}
	}
	p := s.rowPtr
	if p[0] != 0 || p[s.l.n] != s.l.nnz {
		return fmt.Errorf("data: sparse store %s: RowPtr[0] = %d, RowPtr[N] = %d, want 0 and nnz = %d", s.path, p[0], p[s.l.n], s.l.nnz)
	}
	for i := range s.l.n {
		lo, hi := p[i], p[i+1]
		if hi < lo || hi > s.l.nnz {
			return fmt.Errorf("data: sparse store %s: row %d spans [%d, %d), want ascending within [0, %d]", s.path, i, lo, hi, s.l.nnz)
		}
		prev := int32(-1)
		for k := lo; k < hi; k++ {
			c := s.col[k]
			if c <= prev || int(c) >= s.l.d {
				return fmt.Errorf("data: sparse store %s: row %d, entry %d: column %d after %d, want strictly ascending in [0, D = %d)", s.path, i, k-lo, c, prev, s.l.d)
			}
			prev = c
			var v float64
			if s.v32 != nil {
				v = float64(s.v32[k])
			} else {
				v = s.v64[k]
			}
			if math.IsNaN(v) || math.IsInf(v, 0) {
				return fmt.Errorf("data: sparse store %s: row %d, column %d: value %v is not finite", s.path, i, c, v)
			}
		}
	}
	// Last, the checksums: a damaged byte the checks above let pass (a
	// value still finite, a column still in range).
	for k := range sparseSections {
		if err := s.verify(k); err != nil {
			return err
		}
	}
	return nil
}

// Close unmaps the store; its slices must not be used afterwards.
func (s *SparseStore) Close() error {
	if s.mem == nil {
		return nil
	}
	var err error
	if s.mmap {
		err = unmap(s.mem)
	}
	if s.f != nil {
		if cerr := s.f.Close(); err == nil && cerr != nil {
			err = cerr
		}
	}
	s.f, s.ra = nil, nil
	s.idxMu.Lock()
	s.idx = nil
	s.idxMu.Unlock()
	s.mem, s.y, s.off, s.rowPtr, s.col, s.v32, s.v64 = nil, nil, nil, nil, nil, nil, nil
	if err != nil {
		return fmt.Errorf("data: sparse store %s: close: %w", s.path, err)
	}
	return nil
}

// DropPages drops the mapping's pages from the process's resident set
// (madvise MADV_DONTNEED) and leaves read-ahead on: called now and then
// during the full passes of set-up, it keeps the resident set to the rows
// read since the last call instead of the whole file (the pages stay in
// the page cache, so nothing is re-read from disk while memory allows).
// Safe while other goroutines read the rows: a dropped page is mapped
// again on its next read.
func (s *SparseStore) DropPages() error {
	if !s.mmap || s.mem == nil {
		return nil
	}
	if err := advise(s.mem, adviceDontNeed); err != nil {
		return fmt.Errorf("data: sparse store %s: madvise(MADV_DONTNEED): %w", s.path, err)
	}
	return nil
}

// EndFullPasses drops the mapping's pages from the process's resident set
// and turns off read-ahead, as Store.EndFullPasses does, once the passes
// over every row (the centre, the Hessian, the kernel's tables) are over.
func (s *SparseStore) EndFullPasses() error {
	return endFullPasses("sparse store "+s.path, s.mem, s.mmap)
}

// SparseRowReader reads single rows of a SparseStore with pread
// (io.ReaderAt on the open file) into its own buffers, instead of through
// the mapping: a row read this way leaves nothing in the process's
// resident set (the file's pages stay in the page cache, which is not the
// process's memory), where a read of the mapping keeps the pages the
// kernel maps around it (its fault-around: 16 pages for each row at a
// random place). A kernel that draws a few rows at random places per step
// from a file larger than memory — GroupGibbs's thinned data — reads them
// through one reader per chain (model.SparseGLM.SetRowReaders). A row
// costs two pread calls, its columns and its values: the row pointers, y
// and the offsets are read from an index the store's readers share
// (rowIndex, 8 B a row for a float32-exact response and fewer than 2³²
// entries), built at the first read. It is not safe for concurrent use
// (one per goroutine; the store's file and index are shared), and reads
// nothing once the store is closed.
type SparseRowReader struct {
	s   *SparseStore
	ix  *rowIndex // the store's, once read
	buf []uint64  // 8-byte aligned scratch for the entries
}

// RowReader returns a new reader of the store's rows.
func (s *SparseStore) RowReader() *SparseRowReader { return &SparseRowReader{s: s} }

// rowIndex is what the row readers of a store keep in memory so that a row
// costs two pread calls instead of four or five (row pointers, y, the
// offset, columns, values: the sections are apart in the file): the row
// pointers — none when every row has the same number of entries (pointer
// i is i·width: a model whose rows are fixed effects and one level of
// each factor), else as uint32 (p32) when every one is in [0, nnz] and
// nnz < 2³², else as stored (p64) — and y and the offsets (indexColumn).
// A 0/1 response takes 1 bit a row, a count 4 B, so with 10⁸ rows of 6
// entries and 0/1 labels the index holds 12.5 MB. err is the read error
// of its build, reported by every read.
type rowIndex struct {
	uniform bool
	width   int64
	p32     []uint32
	p64     []int64
	y, off  indexColumn
	err     error
}

// indexColumn holds a float64 section of the store: as bits when every
// value is 0 or 1 (labels: y of 10⁸ rows in 12.5 MB, not 400), as float32
// when every value is a float32 exactly (counts below 2²⁴), else as
// float64; empty for an absent section (0).
type indexColumn struct {
	bits []uint64
	f32  []float32
	f64  []float64
}

// at returns the i-th value.
func (c *indexColumn) at(i int) float64 {
	switch {
	case c.f64 != nil:
		return c.f64[i]
	case c.f32 != nil:
		return float64(c.f32[i])
	case c.bits != nil:
		return float64(c.bits[i>>6] >> (i & 63) & 1)
	}
	return 0
}

// put sets the i-th of n values, turning the column from bits to float32
// at the first value that is not 0 or 1 (+0: a −0 is not stored as a
// bit), and to float64 at the first that is not a float32 exactly.
func (c *indexColumn) put(i, n int, v float64) {
	if c.bits != nil && v != 1 && math.Float64bits(v) != 0 {
		c.f32 = make([]float32, n)
		for k := range i {
			c.f32[k] = float32(c.bits[k>>6] >> (k & 63) & 1)
		}
		c.bits = nil
	}
	if c.bits != nil {
		if v == 1 {
			c.bits[i>>6] |= 1 << (i & 63)
		}
		return
	}
	if c.f64 == nil && float64(float32(v)) != v && v == v {
		c.f64 = make([]float64, n)
		for k, w := range c.f32[:i] {
			c.f64[k] = float64(w)
		}
		c.f32 = nil
	}
	if c.f64 != nil {
		c.f64[i] = v
		return
	}
	c.f32[i] = float32(v)
}

// index returns the store's row index, building it at the first call
// (safe for concurrent readers); nil once the store is closed.
func (s *SparseStore) index() *rowIndex {
	s.idxMu.Lock()
	defer s.idxMu.Unlock()
	if s.idx == nil && s.ra != nil {
		s.idx = s.buildIndex()
	}
	return s.idx
}

// buildIndex reads the row pointers, y and the offsets with pread, a
// chunk at a time: the mapping's pages are not touched.
func (s *SparseStore) buildIndex() *rowIndex {
	l := s.l
	ix := &rowIndex{}
	buf := make([]byte, 8<<16)
	ne := binary.NativeEndian
	// section calls put(i, raw) for the n 8-byte words at off.
	section := func(off, n int, what string, put func(i int, w uint64)) error {
		for i := 0; i < n; {
			m := min(n-i, len(buf)/8)
			b := buf[:8*m]
			k, err := s.ra.ReadAt(b, int64(off+8*i))
			if k < len(b) {
				if err == nil || err == io.EOF {
					err = io.ErrUnexpectedEOF
				}
				return fmt.Errorf("the row index: %s: read %d of %d bytes at offset %d (file of %d bytes declared): %w", what, k, len(b), off+8*i, l.size, err)
			}
			for q := range m {
				put(i+q, ne.Uint64(b[8*q:]))
			}
			i += m
		}
		return nil
	}
	// Rows of one width: a pass that keeps nothing.
	ix.uniform = l.n == 0 || l.nnz%l.n == 0
	if ix.uniform && l.n > 0 {
		ix.width = int64(l.nnz / l.n)
		if err := section(l.pOff, l.n+1, "row pointers", func(i int, w uint64) {
			ix.uniform = ix.uniform && w == uint64(i)*uint64(ix.width)
		}); err != nil {
			return &rowIndex{err: err}
		}
	}
	var err error
	if !ix.uniform {
		if uint64(l.nnz) < math.MaxUint32 {
			ix.p32 = make([]uint32, l.n+1)
		} else {
			ix.p64 = make([]int64, l.n+1)
		}
		err = section(l.pOff, l.n+1, "row pointers", func(i int, w uint64) {
			if ix.p32 != nil && w > uint64(l.nnz) {
				// A pointer out of range: keep them as stored, for ReadRow's
				// error to name it.
				ix.p64 = make([]int64, l.n+1)
				for k, p := range ix.p32[:i] {
					ix.p64[k] = int64(p)
				}
				ix.p32 = nil
			}
			if ix.p32 != nil {
				ix.p32[i] = uint32(w)
			} else {
				ix.p64[i] = int64(w)
			}
		})
	}
	if err == nil {
		ix.y.bits = make([]uint64, (l.n+63)/64)
		err = section(l.yOff, l.n, "y", func(i int, w uint64) { ix.y.put(i, l.n, math.Float64frombits(w)) })
	}
	if err == nil && l.offset {
		ix.off.f32 = make([]float32, l.n)
		err = section(l.oOff, l.n, "offset", func(i int, w uint64) { ix.off.put(i, l.n, math.Float64frombits(w)) })
	}
	if err != nil {
		return &rowIndex{err: err}
	}
	return ix
}

// bytes returns the first n bytes of the reader's scratch, grown as needed.
func (r *SparseRowReader) bytes(n int) []byte {
	if w := (n + 7) / 8; w > len(r.buf) {
		r.buf = make([]uint64, max(w, 2*len(r.buf)))
	}
	return unsafe.Slice((*byte)(unsafe.Pointer(unsafe.SliceData(r.buf))), n)
}

// readAt reads len(b) bytes at off, naming the row and the section on a
// short read or an I/O error.
func (r *SparseRowReader) readAt(b []byte, off, i int, what string) error {
	k, err := r.s.ra.ReadAt(b, int64(off))
	if k == len(b) {
		return nil
	}
	if err == nil || err == io.EOF {
		err = io.ErrUnexpectedEOF
	}
	return fmt.Errorf("data: sparse store %s: row %d: %s: read %d of %d bytes at offset %d (file of %d bytes declared): %w", r.s.path, i, what, k, len(b), off, r.s.l.size, err)
}

// ReadRow appends the columns and values of row i to cols and vals and
// returns them with y_i and the offset o_i (0 without an offset section).
// A short read or an I/O error (the file truncated or replaced while
// open), a row pointer out of order, or a column or value the layout does
// not allow is an error naming the row and the numbers; cols and vals are
// then returned as they were passed. It allocates only to grow its
// buffers or cols and vals (and the store's index at the first read of
// the store).
func (r *SparseRowReader) ReadRow(i int, cols []int32, vals []float64) (_ []int32, _ []float64, y, off float64, err error) {
	l := r.s.l
	if r.s.ra == nil {
		return cols, vals, 0, 0, fmt.Errorf("data: sparse store %s: row %d read after Close", r.s.path, i)
	}
	if i < 0 || i >= l.n {
		return cols, vals, 0, 0, fmt.Errorf("data: sparse store %s: row %d out of [0, %d)", r.s.path, i, l.n)
	}
	if r.ix == nil {
		if r.ix = r.s.index(); r.ix == nil {
			return cols, vals, 0, 0, fmt.Errorf("data: sparse store %s: row %d read after Close", r.s.path, i)
		}
	}
	ix := r.ix
	if ix.err != nil {
		return cols, vals, 0, 0, fmt.Errorf("data: sparse store %s: row %d: %w", r.s.path, i, ix.err)
	}
	var lo, hi int64
	if ix.uniform {
		lo = int64(i) * ix.width
		hi = lo + ix.width
	} else if ix.p32 != nil {
		lo, hi = int64(ix.p32[i]), int64(ix.p32[i+1])
	} else {
		lo, hi = ix.p64[i], ix.p64[i+1]
	}
	if lo < 0 || hi < lo || hi > int64(l.nnz) || hi-lo > int64(l.d) {
		return cols, vals, 0, 0, fmt.Errorf("data: sparse store %s: row %d spans [%d, %d), want ascending within [0, nnz = %d], at most D = %d entries", r.s.path, i, lo, hi, l.nnz, l.d)
	}
	k := int(hi - lo)
	y, off = ix.y.at(i), ix.off.at(i)
	if math.IsNaN(y+off) || math.IsInf(y+off, 0) {
		return cols, vals, 0, 0, fmt.Errorf("data: sparse store %s: row %d: y = %v, offset %v, want finite", r.s.path, i, y, off)
	}
	es := l.dtype.Size()
	b := r.bytes(4*k + es*k)
	if err := r.readAt(b[:4*k], l.cOff+4*int(lo), i, "columns"); err != nil {
		return cols, vals, 0, 0, err
	}
	if err := r.readAt(b[4*k:], l.vOff+es*int(lo), i, "values"); err != nil {
		return cols, vals, 0, 0, err
	}
	ne := binary.NativeEndian
	nc, nv, prev := len(cols), len(vals), int64(-1)
	for q := range k {
		c := int32(ne.Uint32(b[4*q:]))
		var v float64
		if es == 4 {
			v = float64(math.Float32frombits(ne.Uint32(b[4*k+4*q:])))
		} else {
			v = math.Float64frombits(ne.Uint64(b[4*k+8*q:]))
		}
		if int64(c) <= prev || int(c) >= l.d || math.IsNaN(v) || math.IsInf(v, 0) {
			return cols[:nc], vals[:nv], 0, 0, fmt.Errorf("data: sparse store %s: row %d, entry %d: column %d (after %d), value %v, want strictly ascending columns in [0, D = %d) and a finite value", r.s.path, i, q, c, prev, v, l.d)
		}
		prev = int64(c)
		cols, vals = append(cols, c), append(vals, v)
	}
	return cols, vals, y, off, nil
}

// verify checks section k's CRC-32C checksum against the mapping: an error
// naming the section and both checksums if a byte of it changed since the
// store was written (TestSparseStoreChecksums).
func (s *SparseStore) verify(k int) error {
	sec := s.l.sections()[k]
	want := binary.NativeEndian.Uint32(s.mem[s.l.kOff+4*k:])
	if got := crc32.Checksum(s.mem[sec.off:sec.off+sec.len], castagnoli); got != want {
		return fmt.Errorf("data: sparse store %s: the %s section (%d bytes at offset %d) has checksum %#08x, the store recorded %#08x: the file was changed or damaged after it was written", s.path, sec.name, sec.len, sec.off, got, want)
	}
	return nil
}
