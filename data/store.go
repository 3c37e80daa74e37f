package data

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"math"
	"math/bits"
	"os"
	"runtime/debug"
	"unsafe"
)

// DType is the storage type of a store's X: Float32 or Float64. y is
// always float64.
type DType uint32

// The storage types of X.
const (
	Float32 DType = 1 // 4 bytes per value; energies still compute in float64
	Float64 DType = 2 // 8 bytes per value
)

// String returns "float32" or "float64", or "DType(k)" for another value.
func (t DType) String() string {
	switch t {
	case Float32:
		return "float32"
	case Float64:
		return "float64"
	}
	return fmt.Sprintf("DType(%d)", uint32(t))
}

// Size returns the bytes per value of t, or 0 for an unknown DType.
func (t DType) Size() int {
	switch t {
	case Float32:
		return 4
	case Float64:
		return 8
	}
	return 0
}

// ParseDType returns the DType named "float32" or "float64".
func ParseDType(s string) (DType, error) {
	switch s {
	case "float32":
		return Float32, nil
	case "float64":
		return Float64, nil
	}
	return 0, fmt.Errorf("data: dtype %q, want float32 or float64", s)
}

// StoreMagic is the first eight bytes of a store file.
const StoreMagic = "EXMHROWS"

// StoreVersion is the layout version CreateStore writes and OpenStore
// reads: 2, with CRC-32C checksums of y and X after X. Version 1 stores,
// without them, are refused with an error saying to write them again.
const StoreVersion = 2

// MaxStoreDim is the largest d of a store, the exactmh.MaxDim of the
// energies the store feeds.
const MaxStoreDim = 1 << 26

const (
	headerSize  = 64
	endianCheck = 0x01020304
	sectionAlig = 64
)

// storeLayout is what the header declares, checked and in ints.
type storeLayout struct {
	n, d        int
	dtype       DType
	yOff, xOff  int
	size        int
	valuesBytes int // N·d·size
}

// layoutFor returns the layout of an N×d store of dtype, or an error naming
// the numbers when it does not fit in an int64 and an int.
func layoutFor(n, d uint64, dtype DType) (storeLayout, error) {
	es := uint64(dtype.Size())
	if es == 0 {
		return storeLayout{}, fmt.Errorf("dtype %d, want 1 (float32) or 2 (float64)", uint32(dtype))
	}
	if n == 0 {
		return storeLayout{}, errors.New("N = 0, want ≥ 1")
	}
	if d == 0 || d > MaxStoreDim {
		return storeLayout{}, fmt.Errorf("d = %d, want in [1, %d]", d, MaxStoreDim)
	}
	const limit = math.MaxInt64 / 2 // room for the offsets; and ≤ MaxInt on 64-bit
	hi, nd := bits.Mul64(n, d)
	if hi != 0 || nd > limit/es {
		return storeLayout{}, fmt.Errorf("N·d = %d·%d overflows (more than %d bytes of X)", n, d, uint64(limit))
	}
	if n > limit/8 {
		return storeLayout{}, fmt.Errorf("N = %d overflows (y alone more than %d bytes)", n, uint64(limit))
	}
	xOff := (headerSize + 8*n + sectionAlig - 1) / sectionAlig * sectionAlig
	size := xOff + nd*es + 8 // and the two checksums
	if size > limit || size > uint64(math.MaxInt) {
		return storeLayout{}, fmt.Errorf("N = %d, d = %d: file size %d bytes overflows", n, d, size)
	}
	return storeLayout{n: int(n), d: int(d), dtype: dtype, yOff: headerSize, xOff: int(xOff),
		size: int(size), valuesBytes: int(nd * es)}, nil
}

// sumsOff returns the offset of the checksums of y and X: after X.
func (l storeLayout) sumsOff() int { return l.xOff + l.valuesBytes }

// sections returns the name, offset and length in bytes of y and X, in
// the order of their checksums.
func (l storeLayout) sections() [2]struct {
	name     string
	off, len int
} {
	return [2]struct {
		name     string
		off, len int
	}{{"y", l.yOff, 8 * l.n}, {"X", l.xOff, l.valuesBytes}}
}

// header returns the 64 header bytes of l.
func (l storeLayout) header() []byte {
	h := make([]byte, headerSize)
	copy(h, StoreMagic)
	ne := binary.NativeEndian
	ne.PutUint32(h[8:], StoreVersion)
	ne.PutUint32(h[12:], endianCheck)
	ne.PutUint32(h[16:], uint32(l.dtype))
	ne.PutUint64(h[24:], uint64(l.n))
	ne.PutUint64(h[32:], uint64(l.d))
	ne.PutUint64(h[40:], uint64(l.yOff))
	ne.PutUint64(h[48:], uint64(l.xOff))
	ne.PutUint64(h[56:], uint64(l.size))
	return h
}

// checkHeaderStart checks what the headers of a store and a sparse store
// (what) share: the length, the magic, the byte order and the version.
func checkHeaderStart(what, path string, b []byte, magic string, version uint32) error {
	if len(b) < headerSize {
		return fmt.Errorf("data: %s %s: %d bytes, shorter than the %d-byte header (truncated, or not a store)", what, path, len(b), headerSize)
	}
	if !bytes.Equal(b[:8], []byte(magic)) {
		return fmt.Errorf("data: %s %s: magic %q, want %q (not a %s, or a build that did not finish)", what, path, b[:8], magic, what)
	}
	ne := binary.NativeEndian
	if e := ne.Uint32(b[12:]); e != endianCheck {
		if bits.ReverseBytes32(e) == endianCheck {
			return fmt.Errorf("data: %s %s: written on a machine of the other byte order (endianness field %#08x); rewrite it here", what, path, e)
		}
		return fmt.Errorf("data: %s %s: endianness field %#08x, want %#08x", what, path, e, endianCheck)
	}
	if v := ne.Uint32(b[8:]); v != version {
		return fmt.Errorf("data: %s %s: version %d, this reader knows %d", what, path, v, version)
	}
	return nil
}

// parseHeader checks the header b of a file of fileSize bytes.
func parseHeader(path string, b []byte, fileSize int64) (storeLayout, error) {
	if len(b) >= headerSize && bytes.Equal(b[:8], []byte(StoreMagic)) && binary.NativeEndian.Uint32(b[8:]) == 1 {
		return storeLayout{}, fmt.Errorf("data: store %s: version 1, written without checksums: write it again with CreateStore (this reader knows version %d, whose y and X carry CRC-32C checksums)", path, StoreVersion)
	}
	if err := checkHeaderStart("store", path, b, StoreMagic, StoreVersion); err != nil {
		return storeLayout{}, err
	}
	ne := binary.NativeEndian
	if r := ne.Uint32(b[20:]); r != 0 {
		return storeLayout{}, fmt.Errorf("data: store %s: reserved field %d, want 0", path, r)
	}
	n, d := ne.Uint64(b[24:]), ne.Uint64(b[32:])
	l, err := layoutFor(n, d, DType(ne.Uint32(b[16:])))
	if err != nil {
		return storeLayout{}, fmt.Errorf("data: store %s: header: %w", path, err)
	}
	if y := ne.Uint64(b[40:]); y != uint64(l.yOff) {
		return storeLayout{}, fmt.Errorf("data: store %s: offset of y %d, want %d", path, y, l.yOff)
	}
	if x := ne.Uint64(b[48:]); x != uint64(l.xOff) {
		return storeLayout{}, fmt.Errorf("data: store %s: offset of X %d, want %d for N = %d", path, x, l.xOff, l.n)
	}
	if s := ne.Uint64(b[56:]); s != uint64(l.size) {
		return storeLayout{}, fmt.Errorf("data: store %s: declared size %d bytes, want %d for N = %d, d = %d, %v", path, s, l.size, l.n, l.d, l.dtype)
	}
	if fileSize != int64(l.size) {
		what := "truncated"
		if fileSize > int64(l.size) {
			what = "longer than its layout"
		}
		return storeLayout{}, fmt.Errorf("data: store %s: file is %d bytes, header declares %d (N = %d, d = %d, %v): %s", path, fileSize, l.size, l.n, l.d, l.dtype, what)
	}
	return l, nil
}

// StoreWriter writes a store row by row (CreateStore), holding one buffer
// per section, never the data: WriteRow N times, then Close. The file is
// written under path + ".partial" and renamed to path by a successful
// Close, so an interrupted build never leaves a file OpenStore accepts.
// A StoreWriter is not safe for concurrent use.
type StoreWriter struct {
	f          *os.File
	path, tmp  string
	l          storeLayout
	rows       int
	ybuf, xbuf []byte
	yPos, xPos int64
	err        error
}

// writerBuf is the size of each section's buffer.
const writerBuf = 1 << 20

// CreateStore starts a store of n rows of d columns of dtype at path
// (replacing any file there when Close succeeds).
func CreateStore(path string, n, d int, dtype DType) (*StoreWriter, error) {
	if n < 0 || d < 0 {
		return nil, fmt.Errorf("data: CreateStore %s: N = %d, d = %d, want ≥ 1", path, n, d)
	}
	l, err := layoutFor(uint64(n), uint64(d), dtype)
	if err != nil {
		return nil, fmt.Errorf("data: CreateStore %s: %w", path, err)
	}
	tmp := path + ".partial"
	f, err := os.OpenFile(tmp, os.O_RDWR|os.O_CREATE|os.O_TRUNC, 0o644)
	if err != nil {
		return nil, fmt.Errorf("data: CreateStore: %w", err)
	}
	// The header is written last: until Close, the magic is zero.
	if err := f.Truncate(int64(l.size)); err != nil {
		f.Close()
		os.Remove(tmp)
		return nil, fmt.Errorf("data: CreateStore %s: reserving %d bytes: %w", path, l.size, err)
	}
	return &StoreWriter{f: f, path: path, tmp: tmp, l: l,
		ybuf: make([]byte, 0, writerBuf), xbuf: make([]byte, 0, writerBuf),
		yPos: int64(l.yOff), xPos: int64(l.xOff)}, nil
}

// Rows returns the number of rows written so far.
func (w *StoreWriter) Rows() int { return w.rows }

// WriteRow appends the row (x, y): len(x) = d, every value finite. After
// N rows it fails.
func (w *StoreWriter) WriteRow(x []float64, y float64) error {
	if w.err != nil {
		return w.err
	}
	if w.rows >= w.l.n {
		return fmt.Errorf("data: store %s: row %d is one more than N = %d", w.path, w.rows, w.l.n)
	}
	if len(x) != w.l.d {
		return fmt.Errorf("data: store %s: row %d has %d values, want d = %d", w.path, w.rows, len(x), w.l.d)
	}
	if math.IsNaN(y) || math.IsInf(y, 0) {
		return fmt.Errorf("data: store %s: row %d: y = %v is not finite", w.path, w.rows, y)
	}
	for j, v := range x {
		if math.IsNaN(v) || math.IsInf(v, 0) {
			return fmt.Errorf("data: store %s: row %d, column %d: x = %v is not finite", w.path, w.rows, j, v)
		}
		if w.l.dtype == Float32 && math.Abs(v) > math.MaxFloat32 {
			return fmt.Errorf("data: store %s: row %d, column %d: x = %v overflows float32", w.path, w.rows, j, v)
		}
	}
	ne := binary.NativeEndian
	w.ybuf = ne.AppendUint64(w.ybuf, math.Float64bits(y))
	if w.l.dtype == Float32 {
		for _, v := range x {
			w.xbuf = ne.AppendUint32(w.xbuf, math.Float32bits(float32(v)))
		}
	} else {
		for _, v := range x {
			w.xbuf = ne.AppendUint64(w.xbuf, math.Float64bits(v))
		}
	}
	w.rows++
	if len(w.ybuf) >= writerBuf-8 {
		w.flush(&w.ybuf, &w.yPos)
	}
	if len(w.xbuf) >= writerBuf-8*w.l.d {
		w.flush(&w.xbuf, &w.xPos)
	}
	return w.err
}

// flush writes *buf at *pos.
func (w *StoreWriter) flush(buf *[]byte, pos *int64) {
	if w.err != nil || len(*buf) == 0 {
		return
	}
	if _, err := w.f.WriteAt(*buf, *pos); err != nil {
		w.err = fmt.Errorf("data: store %s: %w", w.path, err)
	}
	*pos += int64(len(*buf))
	*buf = (*buf)[:0]
}

// Close flushes the rows, writes the header and renames the file to its
// path. It fails, and removes the partial file, unless exactly N rows were
// written.
func (w *StoreWriter) Close() error {
	if w.f == nil {
		return fmt.Errorf("data: store %s: closed twice", w.path)
	}
	defer func() { w.f = nil }()
	if w.err == nil && w.rows != w.l.n {
		w.err = fmt.Errorf("data: store %s: %d rows written, header declares N = %d", w.path, w.rows, w.l.n)
	}
	w.flush(&w.ybuf, &w.yPos)
	w.flush(&w.xbuf, &w.xPos)
	if w.err == nil {
		// The checksums, from the sections as written (read back: one more
		// streaming pass over the file).
		sums := make([]byte, 0, 8)
		for _, sec := range w.l.sections() {
			h := crc32.New(castagnoli)
			if _, err := io.Copy(h, io.NewSectionReader(w.f, int64(sec.off), int64(sec.len))); err != nil && w.err == nil {
				w.err = fmt.Errorf("data: store %s: checksum of %s: %w", w.path, sec.name, err)
			}
			sums = binary.NativeEndian.AppendUint32(sums, h.Sum32())
		}
		if _, err := w.f.WriteAt(sums, int64(w.l.sumsOff())); err != nil && w.err == nil {
			w.err = fmt.Errorf("data: store %s: checksums: %w", w.path, err)
		}
	}
	if w.err == nil {
		if _, err := w.f.WriteAt(w.l.header(), 0); err != nil {
			w.err = fmt.Errorf("data: store %s: header: %w", w.path, err)
		}
	}
	if err := w.f.Close(); err != nil && w.err == nil {
		w.err = fmt.Errorf("data: store %s: %w", w.path, err)
	}
	w.err = renameOrRemove("store", w.tmp, w.path, w.err)
	return w.err
}

// renameOrRemove ends the build of a file (what) written under tmp: it
// renames tmp to path if the build's error err is nil, and removes tmp
// if err or the rename's error is not.
func renameOrRemove(what, tmp, path string, err error) error {
	if err == nil {
		if rerr := os.Rename(tmp, path); rerr != nil {
			err = fmt.Errorf("data: %s %s: %w", what, path, rerr)
		}
	}
	if err != nil {
		os.Remove(tmp)
	}
	return err
}

// Abort abandons the store and removes its partial file.
func (w *StoreWriter) Abort() error {
	if w.f == nil {
		return nil
	}
	w.f.Close()
	w.f = nil
	return os.Remove(w.tmp)
}

// Store is an opened row store (OpenStore): its slices point into the
// read-only mapping of the file, valid until Close. Writing to them
// faults. A Store is safe for concurrent reads.
//
// A row store is a file of N rows (x_i, y_i), x_i ∈ R^d, laid out so that
// it can be memory-mapped and handed to the energies of package exactmh
// without being read into memory: OpenStore maps it read-only and Y, X64
// and X32 are slices of the mapping, so a minibatch kernel that draws 64
// rows touches only the pages holding those rows, and the operating system
// keeps in RAM what is used. 10^8 rows of d = 10 (8.8 GB with y in float64,
// 4.8 GB in float32) work on a machine with less memory than that.
//
// # Layout
//
// All integers and floats are in the byte order of the machine that wrote
// the file (every platform Go runs exactmh on today is little-endian); the
// endianness field lets a reader of the other order refuse the file instead
// of misreading it. Offsets are in bytes from the start of the file.
//
//	offset size field
//	0      8    magic "EXMHROWS"
//	8      4    version, uint32 = 2
//	12     4    endianness check, uint32 0x01020304 in the writer's order
//	16     4    dtype of X, uint32: 1 = float32, 2 = float64
//	20     4    reserved, 0
//	24     8    N, uint64, number of rows ≥ 1
//	32     8    d, uint64, columns of X, 1 ≤ d ≤ MaxStoreDim
//	40     8    offset of y, uint64 = 64
//	48     8    offset of X, uint64 = 64 + 8N rounded up to a multiple of 64
//	56     8    file size, uint64 = offset of X + N·d·sizeof(dtype) + 8
//	64          y: N float64
//	offX        X: N·d values of dtype, row-major (row i at offX + i·d·size)
//	            checksums: 2 uint32, the CRC-32C (Castagnoli) of y and of X
//
// The gaps between sections are zero. Every field is checked on opening:
// a file whose size differs from the declared one (truncated, or with bytes
// appended), whose offsets are not the ones above, or whose N·d overflows
// is refused with an error naming the file, the field and the numbers.
//
// # Values are checked by the reader of the data, not at open
//
// OpenStore checks the header and sizes only, in O(1): scanning 8 GB for
// NaNs would read the whole file from disk, which is what mapping avoids.
// StoreWriter refuses non-finite values, so a file it wrote is finite; for
// a file from elsewhere, the exactmh constructors (NewLogisticRegression,
// NewGLM, NewLogisticRegression32, NewGLM32) check every value they are
// given in one pass, as they do for in-memory slices, and Store.Validate
// does the same check on its own.
//
// # Resident memory
//
// Pages of the mapping that have been read count in the process's resident
// set (RssFile in /proc/self/status) until the kernel reclaims them. After
// the full passes over the data that set-up makes (the MAP, the Laplace
// approximation, bounds and control variates), Store.EndFullPasses advises
// the kernel (madvise MADV_DONTNEED, then MADV_RANDOM) to drop those pages
// from the process and to stop reading ahead, so the resident set shrinks
// back to the rows the kernel draws. The file's pages stay in the page
// cache while memory allows, so nothing is re-read from disk needlessly.
// Measured (examples/outofcore): RssFile drops at once to a few MB, but
// grows again faster than the rows drawn, because on every page fault
// Linux also maps up to 15 neighbouring pages that are in the page cache
// (fault-around; MADV_RANDOM does not turn it off), so once the file is in
// the page cache a long run maps most of the file again. Those pages are clean page cache
// that the kernel reclaims under memory pressure, not the process's own
// memory (RssAnon); with a cold cache (a file larger than RAM, or
// EvictCache), MADV_RANDOM keeps the disk reads to the pages drawn.
//
// On systems without mmap (build tags: everything but Linux, the BSDs and
// macOS), OpenStore reads the whole file into memory instead. The advice
// methods act on Linux only (the standard library's syscall.Madvise) and do
// nothing elsewhere.
type Store struct {
	path  string
	l     storeLayout
	mem   []byte    // the mapping (or the file's bytes, without mmap)
	words []float64 // backing store of mem when read into memory
	y     []float64
	x64   []float64
	x32   []float32
	mmap  bool
}

// OpenStore maps the store at path read-only, after checking its header
// and size (not its values: see Store).
func OpenStore(path string) (*Store, error) {
	if err := regularPath(path, "OpenStore: "+path, ""); err != nil {
		return nil, err
	}
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("data: OpenStore: %w", err)
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, fmt.Errorf("data: OpenStore: %w", err)
	}
	h := make([]byte, headerSize)
	k, err := f.ReadAt(h, 0)
	if k < headerSize {
		if err != nil && k == 0 && fi.Size() > 0 {
			return nil, fmt.Errorf("data: OpenStore %s: %w", path, err)
		}
		return nil, fmt.Errorf("data: store %s: %d bytes, shorter than the %d-byte header (truncated, or not a store)", path, fi.Size(), headerSize)
	}
	l, err := parseHeader(path, h, fi.Size())
	if err != nil {
		return nil, err
	}
	s := &Store{path: path, l: l}
	if err := s.load(f); err != nil {
		return nil, fmt.Errorf("data: OpenStore %s: %w", path, err)
	}
	s.slice()
	return s, nil
}

// openBytes is OpenStore of an in-memory file, for the fuzz test.
func openBytes(path string, b []byte) (*Store, error) {
	l, err := parseHeader(path, b, int64(len(b)))
	if err != nil {
		return nil, err
	}
	s := &Store{path: path, l: l}
	s.words = make([]float64, (len(b)+7)/8)
	s.mem = unsafe.Slice((*byte)(unsafe.Pointer(unsafe.SliceData(s.words))), len(b))
	copy(s.mem, b)
	s.slice()
	return s, nil
}

// readAll reads the file into 8-byte-aligned memory (no mmap).
func (s *Store) readAll(f *os.File) error {
	s.words = make([]float64, (s.l.size+7)/8)
	s.mem = unsafe.Slice((*byte)(unsafe.Pointer(unsafe.SliceData(s.words))), s.l.size)
	if _, err := f.ReadAt(s.mem, 0); err != nil {
		s.words, s.mem = nil, nil
		return err
	}
	return nil
}

// slice points y and X into mem.
func (s *Store) slice() {
	l := s.l
	s.y = unsafe.Slice((*float64)(unsafe.Pointer(&s.mem[l.yOff])), l.n)
	if l.dtype == Float64 {
		s.x64 = unsafe.Slice((*float64)(unsafe.Pointer(&s.mem[l.xOff])), l.n*l.d)
	} else {
		s.x32 = unsafe.Slice((*float32)(unsafe.Pointer(&s.mem[l.xOff])), l.n*l.d)
	}
}

// Path returns the file the store was opened from.
func (s *Store) Path() string { return s.path }

// N returns the number of rows.
func (s *Store) N() int { return s.l.n }

// D returns the number of columns of X.
func (s *Store) D() int { return s.l.d }

// DType returns the storage type of X.
func (s *Store) DType() DType { return s.l.dtype }

// Size returns the file's size in bytes.
func (s *Store) Size() int64 { return int64(s.l.size) }

// Mapped reports whether the store is memory-mapped (false where the
// platform has no mmap and the file was read into memory).
func (s *Store) Mapped() bool { return s.mmap }

// Y returns the N responses. The caller must not modify them.
func (s *Store) Y() []float64 { return s.y }

// X64 returns X, N·d values row-major, if the store is Float64, and nil
// otherwise. The caller must not modify it.
func (s *Store) X64() []float64 { return s.x64 }

// X32 returns X, N·d values row-major, if the store is Float32, and nil
// otherwise. The caller must not modify it.
func (s *Store) X32() []float32 { return s.x32 }

// Validate reads every value and returns an error naming the first that is
// not finite (its row and column), then checks the CRC-32C checksums of y
// and X (a second streaming pass, at memory speed on amd64 and arm64),
// or returns nil. It reads the whole file. A file
// truncated by another process while mapped is an error too (a read past
// its new end faults; guardFault), not a crash.
func (s *Store) Validate() (err error) {
	defer guardFault(s.path, &err)
	return s.validate()
}

// guardFault turns a memory fault in the calling function — a read of the
// mapping past the end of a file another process truncated, which raises
// SIGBUS — into an error in *err. It makes the runtime panic on such a
// fault (debug.SetPanicOnFault) for the goroutine until the caller
// returns.
func guardFault(path string, err *error) {
	if p := recover(); p != nil {
		*err = fmt.Errorf("data: store %s: a read of the mapped file faulted (%v): was the file truncated or replaced while open?", path, p)
	}
}

func (s *Store) validate() error {
	defer debug.SetPanicOnFault(debug.SetPanicOnFault(true))
	for i, v := range s.y {
		if math.IsNaN(v) || math.IsInf(v, 0) {
			return fmt.Errorf("data: store %s: y[%d] = %v is not finite", s.path, i, v)
		}
	}
	d := s.l.d
	for k, v := range s.x64 {
		if math.IsNaN(v) || math.IsInf(v, 0) {
			return fmt.Errorf("data: store %s: X[%d] (row %d, column %d) = %v is not finite", s.path, k, k/d, k%d, v)
		}
	}
	for k, v := range s.x32 {
		if f := float64(v); math.IsNaN(f) || math.IsInf(f, 0) {
			return fmt.Errorf("data: store %s: X[%d] (row %d, column %d) = %v is not finite", s.path, k, k/d, k%d, v)
		}
	}
	// Last, the checksums: a damaged byte the checks above let pass (a
	// value still finite; TestStoreChecksums).
	for k, sec := range s.l.sections() {
		want := binary.NativeEndian.Uint32(s.mem[s.l.sumsOff()+4*k:])
		if got := crc32.Checksum(s.mem[sec.off:sec.off+sec.len], castagnoli); got != want {
			return fmt.Errorf("data: store %s: %s (%d bytes at offset %d) has checksum %#08x, the store recorded %#08x: the file was changed or damaged after it was written", s.path, sec.name, sec.len, sec.off, got, want)
		}
	}
	return nil
}

// Close unmaps the store; its slices must not be used afterwards.
func (s *Store) Close() error {
	if s.mem == nil {
		return nil
	}
	var err error
	if s.mmap {
		err = unmap(s.mem)
	}
	s.mem, s.words, s.y, s.x64, s.x32 = nil, nil, nil, nil, nil
	if err != nil {
		return fmt.Errorf("data: store %s: munmap: %w", s.path, err)
	}
	return nil
}

// EndFullPasses tells the kernel that the passes over every row are over
// and that rows will now be read at random, a few at a time: it drops the
// mapping's pages from the process's resident set (MADV_DONTNEED; they stay
// in the page cache while memory allows, and the next read of a row maps
// its page again) and turns off read-ahead (MADV_RANDOM), so the resident
// set grows only by the pages of rows drawn. It does nothing where the
// store is not mapped.
func (s *Store) EndFullPasses() error { return endFullPasses("store "+s.path, s.mem, s.mmap) }

// endFullPasses advises the kernel that the passes over the mapping mem
// of the file what are over (see Store.EndFullPasses).
func endFullPasses(what string, mem []byte, mapped bool) error {
	if !mapped || mem == nil {
		return nil
	}
	if err := advise(mem, adviceDontNeed); err != nil {
		return fmt.Errorf("data: %s: madvise(MADV_DONTNEED): %w", what, err)
	}
	if err := advise(mem, adviceRandom); err != nil {
		return fmt.Errorf("data: %s: madvise(MADV_RANDOM): %w", what, err)
	}
	return nil
}

// EvictCache drops the store's pages from the process (EndFullPasses) and
// then asks the kernel to drop the file's clean pages from the page cache
// (posix_fadvise POSIX_FADV_DONTNEED), so that every row read afterwards
// comes from the disk: the state of a store much larger than RAM, for
// measuring it on a machine where the file would fit in the page cache. It
// does nothing where the store is not mapped, and drops nothing from the
// page cache except on Linux (amd64, arm64).
func (s *Store) EvictCache() error {
	if !s.mmap || s.mem == nil {
		return nil
	}
	if err := s.EndFullPasses(); err != nil {
		return err
	}
	if err := evict(s.path); err != nil {
		return fmt.Errorf("data: store %s: posix_fadvise(POSIX_FADV_DONTNEED): %w", s.path, err)
	}
	return nil
}

// AdviseSequential tells the kernel that full passes over the rows follow
// (MADV_SEQUENTIAL: aggressive read-ahead), undoing EndFullPasses's
// MADV_RANDOM. It does nothing where the store is not mapped.
func (s *Store) AdviseSequential() error {
	if !s.mmap || s.mem == nil {
		return nil
	}
	if err := advise(s.mem, adviceSequential); err != nil {
		return fmt.Errorf("data: store %s: madvise(MADV_SEQUENTIAL): %w", s.path, err)
	}
	return nil
}
