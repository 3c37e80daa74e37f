// Copyright ©2026 The exactmh Authors. All rights reserved.
// Use of this source code is governed by a BSD-style
// license that can be found in the LICENSE file.

package data

import (
	"encoding/binary"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// sparseTestLayout has 2 fixed effects and a factor of 3 levels with an
// intercept and a slope: D = 2 + 3·2 = 8.
var sparseTestLayout = &SparseLayout{Fixed: []string{"Intercept", "x"},
	Factors: []SparseFactor{{Name: "g", Levels: []string{"a", "b", "c"}, Intercept: true, Slopes: []string{"x"}}}}

// sparseRow returns row i of the test store: the intercept, x_i = i/4 − 1
// (absent when 0), and the block of level i mod 3 (intercept, slope x_i).
func sparseRow(i int) ([]int32, []float64) {
	x := float64(i)/4 - 1
	cols, vals := []int32{0}, []float64{1}
	if x != 0 {
		cols, vals = append(cols, 1), append(vals, x)
	}
	g := int32(2 + 2*(i%3))
	cols, vals = append(cols, g), append(vals, 1)
	if x != 0 {
		cols, vals = append(cols, g+1), append(vals, x)
	}
	return cols, vals
}

// writeSparse writes the test store of n rows.
func writeSparse(t testing.TB, path string, n int, dtype DType, offset bool) {
	t.Helper()
	w, err := CreateSparseStore(path, n, 8, dtype, offset, sparseTestLayout)
	if err != nil {
		t.Fatal(err)
	}
	for i := range n {
		cols, vals := sparseRow(i)
		if err := w.WriteRow(cols, vals, float64(i%2), float64(i)/10); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
}

// TestSparseStoreRoundTrip writes and maps sparse stores (both dtypes,
// with and without offsets, across the writer's buffers) and reads every
// row, response, offset and the layout back.
func TestSparseStoreRoundTrip(t *testing.T) {
	dir := t.TempDir()
	for _, dtype := range []DType{Float32, Float64} {
		for _, n := range []int{1, 7, 300000} {
			for _, offset := range []bool{false, true} {
				path := filepath.Join(dir, dtype.String())
				writeSparse(t, path, n, dtype, offset)
				s, err := OpenSparseStore(path)
				if err != nil {
					t.Fatal(err)
				}
				fi, _ := os.Stat(path)
				if s.N() != n || s.D() != 8 || s.DType() != dtype || s.Size() != fi.Size() || s.Path() != path {
					t.Fatalf("%v N=%d: N %d, D %d, dtype %v, size %d of %d", dtype, n, s.N(), s.D(), s.DType(), s.Size(), fi.Size())
				}
				if err := s.Validate(); err != nil {
					t.Fatal(err)
				}
				if l := s.Layout(); l == nil || len(l.Factors) != 1 || l.Factors[0].Levels[2] != "c" || l.Fixed[1] != "x" {
					t.Fatalf("layout %+v", l)
				}
				if (s.Offset() != nil) != offset {
					t.Fatalf("offset section %v, want %v", s.Offset() != nil, offset)
				}
				p := s.RowPtr()
				for i := range n {
					cols, vals := sparseRow(i)
					if s.Y()[i] != float64(i%2) || offset && s.Offset()[i] != float64(i)/10 {
						t.Fatalf("row %d: y %v", i, s.Y()[i])
					}
					if p[i+1]-p[i] != len(cols) {
						t.Fatalf("row %d: %d entries, want %d", i, p[i+1]-p[i], len(cols))
					}
					for k := range cols {
						q := p[i] + k
						v := 0.0
						if dtype == Float32 {
							v = float64(s.Val32()[q])
						} else {
							v = s.Val64()[q]
						}
						if s.Col()[q] != cols[k] || v != vals[k] {
							t.Fatalf("row %d entry %d: (%d, %v), want (%d, %v)", i, k, s.Col()[q], v, cols[k], vals[k])
						}
					}
				}
				if err := s.EndFullPasses(); err != nil {
					t.Error(err)
				}
				if err := s.Close(); err != nil {
					t.Error(err)
				}
			}
		}
	}
}

// TestSparseStoreWriterErrors: every bad row or layout is an error naming
// the row and the value, and a store closed early leaves no file.
func TestSparseStoreWriterErrors(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "s")
	if _, err := CreateSparseStore(path, 3, 9, Float32, false, sparseTestLayout); err == nil || !strings.Contains(err.Error(), "describes 8 columns, want D = 9") {
		t.Errorf("layout of the wrong width: %v", err)
	}
	bad := &SparseLayout{Factors: []SparseFactor{{Name: "g", Levels: []string{"a"}}}}
	if _, err := CreateSparseStore(path, 3, 1, Float32, false, bad); err == nil || !strings.Contains(err.Error(), "neither an intercept nor a slope") {
		t.Errorf("factor without terms: %v", err)
	}
	if _, err := CreateSparseStore(path, 0, 8, Float32, false, nil); err == nil || !strings.Contains(err.Error(), "N = 0") {
		t.Errorf("N = 0: %v", err)
	}
	w, err := CreateSparseStore(path, 2, 8, Float32, true, sparseTestLayout)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		cols []int32
		vals []float64
		y, o float64
		want string
	}{
		{[]int32{0, 0}, []float64{1, 2}, 0, 0, "column 0 after 0"},
		{[]int32{8}, []float64{1}, 0, 0, "column 8 after -1, want strictly ascending in [0, D = 8)"},
		{[]int32{1}, []float64{math.NaN()}, 0, 0, "column 1: value NaN"},
		{[]int32{1}, []float64{1e300}, 0, 0, "overflows float32"},
		{[]int32{1}, []float64{1, 2}, 0, 0, "1 columns and 2 values"},
		{nil, nil, math.Inf(1), 0, "y = +Inf"},
		{nil, nil, 0, math.NaN(), "offset NaN"},
	} {
		if err := w.WriteRow(c.cols, c.vals, c.y, c.o); err == nil || !strings.Contains(err.Error(), c.want) || !strings.Contains(err.Error(), "row 0") {
			t.Errorf("WriteRow(%v, %v, %v, %v) = %v, want %q", c.cols, c.vals, c.y, c.o, err, c.want)
		}
	}
	if err := w.WriteRow([]int32{0}, []float64{1}, 1, 0); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err == nil || !strings.Contains(err.Error(), "1 rows written, header declares N = 2") {
		t.Errorf("Close after 1 of 2 rows: %v", err)
	}
	if _, err := os.Stat(path); !os.IsNotExist(err) {
		t.Errorf("a failed Close left %s: %v", path, err)
	}
	if ents, _ := os.ReadDir(dir); len(ents) != 0 {
		t.Errorf("a failed Close left %d files", len(ents))
	}
	w, err = CreateSparseStore(path, 2, 8, Float64, false, nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := w.Abort(); err != nil {
		t.Error(err)
	}
	if ents, _ := os.ReadDir(dir); len(ents) != 0 {
		t.Errorf("Abort left %d files", len(ents))
	}
}

// TestOpenSparseStoreRejects: a corrupted header, size or layout
// description is an error naming the file and the field; corrupted rows
// are found by Validate, not by a crash.
func TestOpenSparseStoreRejects(t *testing.T) {
	dir := t.TempDir()
	good := filepath.Join(dir, "good")
	writeSparse(t, good, 10, Float64, false)
	b, err := os.ReadFile(good)
	if err != nil {
		t.Fatal(err)
	}
	s0, err := OpenSparseStore(good)
	if err != nil {
		t.Fatal(err)
	}
	l := s0.l
	s0.Close()
	ne := binary.NativeEndian
	edit := func(f func(b []byte)) []byte { c := append([]byte(nil), b...); f(c); return c }
	for _, c := range []struct {
		name string
		b    []byte
		want string
	}{
		{"empty", nil, "0 bytes, shorter than the 64-byte header"},
		{"truncated", b[:len(b)-1], "truncated"},
		{"appended", append(append([]byte(nil), b...), 0), "longer than its layout"},
		{"magic", edit(func(b []byte) { b[0] = 'X' }), "magic"},
		{"endian", edit(func(b []byte) { ne.PutUint32(b[12:], 0x04030201) }), "other byte order"},
		{"version", edit(func(b []byte) { ne.PutUint32(b[8:], 9) }), "version 9"},
		{"dtype", edit(func(b []byte) { ne.PutUint32(b[16:], 3) }), "dtype 3"},
		{"flags", edit(func(b []byte) { ne.PutUint32(b[20:], 2) }), "flags 0x2"},
		{"N", edit(func(b []byte) { ne.PutUint64(b[24:], 20) }), "declared size"},
		{"N huge", edit(func(b []byte) { ne.PutUint64(b[24:], 1<<62) }), "N = 4611686018427387904"},
		{"N·D huge", edit(func(b []byte) { ne.PutUint64(b[24:], 1<<60); ne.PutUint64(b[40:], 1<<61) }), "overflow"},
		{"D", edit(func(b []byte) { ne.PutUint64(b[32:], 0) }), "D = 0"},
		{"nnz", edit(func(b []byte) { ne.PutUint64(b[40:], 1<<40) }), "more than N·D"},
		{"meta length", edit(func(b []byte) { ne.PutUint64(b[48:], 1<<40) }), "more than 67108864"},
		{"meta json", edit(func(b []byte) { b[l.mOff] = '[' }), "layout description"},
		{"meta columns", edit(func(b []byte) { copy(b[l.mOff:], `{"fixed":["a"]   `) }), "layout description"},
	} {
		path := filepath.Join(dir, c.name)
		if err := os.WriteFile(path, c.b, 0o644); err != nil {
			t.Fatal(err)
		}
		_, err := OpenSparseStore(path)
		if err == nil || !strings.Contains(err.Error(), c.want) || !strings.Contains(err.Error(), path) {
			t.Errorf("%s: OpenSparseStore = %v, want an error naming %s and %q", c.name, err, path, c.want)
		}
	}
	for _, c := range []struct {
		name string
		b    []byte
		want string
	}{
		{"rowptr", edit(func(b []byte) { ne.PutUint64(b[l.pOff+8*3:], 1<<50) }), "row 2 spans"},
		{"rowptr0", edit(func(b []byte) { ne.PutUint64(b[l.pOff:], 1) }), "RowPtr[0] = 1"},
		{"col", edit(func(b []byte) { ne.PutUint32(b[l.cOff+4*2:], 1000) }), "column 1000"},
		{"value", edit(func(b []byte) { ne.PutUint64(b[l.vOff+8*5:], math.Float64bits(math.Inf(-1))) }), "value -Inf"},
		{"y", edit(func(b []byte) { ne.PutUint64(b[l.yOff+8*4:], math.Float64bits(math.NaN())) }), "y[4] = NaN"},
	} {
		path := filepath.Join(dir, c.name)
		os.WriteFile(path, c.b, 0o644)
		s, err := OpenSparseStore(path)
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		if err := s.Validate(); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: Validate = %v, want %q", c.name, err, c.want)
		}
		s.Close()
	}
	if _, err := OpenSparseStore(filepath.Join(dir, "absent")); err == nil {
		t.Error("OpenSparseStore of a missing file: no error")
	}
}

// FuzzOpenSparseStore feeds arbitrary bytes to the header, layout and row
// checks: never a panic, and an accepted file's slices lie inside it.
func FuzzOpenSparseStore(f *testing.F) {
	dir := f.TempDir()
	for _, dt := range []DType{Float32, Float64} {
		path := filepath.Join(dir, dt.String())
		writeSparse(f, path, 5, dt, dt == Float64)
		b, _ := os.ReadFile(path)
		f.Add(b)
	}
	f.Add([]byte(SparseStoreMagic))
	f.Fuzz(func(t *testing.T, b []byte) {
		s, err := openSparseBytes("fuzz", b)
		if err != nil {
			if !strings.Contains(err.Error(), "fuzz") {
				t.Errorf("error does not name the file: %v", err)
			}
			return
		}
		n, nnz := s.N(), s.NNZ()
		if len(s.Y()) != n || len(s.RowPtr()) != n+1 || len(s.Col()) != nnz || len(s.Val32())+len(s.Val64()) != nnz || s.Size() != int64(len(b)) {
			t.Fatalf("N %d, nnz %d: slices of %d, %d, %d, %d; size %d of %d bytes", n, nnz, len(s.Y()), len(s.RowPtr()), len(s.Col()), len(s.Val32())+len(s.Val64()), s.Size(), len(b))
		}
		_ = s.Validate()
		s.Close()
	})
}

// TestSparseStoreMutations opens a small store with every header byte and
// 2,000 random bytes of the rest changed in turn (FuzzOpenSparseStore's
// check without the fuzzing engine): every one is accepted or refused with
// an error naming the file, and Validate of an accepted one returns.
func TestSparseStoreMutations(t *testing.T) {
	path := filepath.Join(t.TempDir(), "s")
	writeSparse(t, path, 6, Float32, true)
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	try := func(c []byte) {
		s, err := openSparseBytes("mutant", c)
		if err != nil {
			if !strings.Contains(err.Error(), "mutant") {
				t.Errorf("error does not name the file: %v", err)
			}
			return
		}
		verr := s.Validate()
		// The row reader on the same bytes: an error or the mapped row,
		// never a crash, and no error on a store Validate accepts.
		r := s.RowReader()
		for i := range s.N() {
			cols, vals, y, _, err := r.ReadRow(i, nil, nil)
			if err != nil {
				if verr == nil {
					t.Errorf("Validate accepts the store, ReadRow(%d): %v", i, err)
				} else if !strings.Contains(err.Error(), "mutant") {
					t.Errorf("error does not name the file: %v", err)
				}
				continue
			}
			if verr == nil && (len(cols) != s.RowPtr()[i+1]-s.RowPtr()[i] || y != s.Y()[i] || len(vals) != len(cols)) {
				t.Errorf("row %d read back as %v %v y %v", i, cols, vals, y)
			}
		}
		s.Close()
	}
	rng := rand.New(rand.NewPCG(1, 2))
	for k := range headerSize {
		for _, v := range []byte{0, 1, 0x80, 0xff, b[k] ^ 1} {
			c := append([]byte(nil), b...)
			c[k] = v
			try(c)
		}
	}
	for range 2000 {
		c := append([]byte(nil), b...)
		c[headerSize+rng.IntN(len(c)-headerSize)] = byte(rng.Uint32())
		try(c)
	}
}

// TestSparseRowReader reads every row of stores of both dtypes, with and
// without offsets, through RowReader and checks them against the
// mapping; then that a row out of range, a read after Close and a file
// truncated while open are errors naming the row and the numbers.
func TestSparseRowReader(t *testing.T) {
	dir := t.TempDir()
	for _, dt := range []DType{Float32, Float64} {
		for _, off := range []bool{false, true} {
			path := filepath.Join(dir, fmt.Sprintf("%v%v", dt, off))
			writeSparse(t, path, 100, dt, off)
			s, err := OpenSparseStore(path)
			if err != nil {
				t.Fatal(err)
			}
			var calls int
			s.ra = countingReaderAt{s.ra, &calls}
			r := s.RowReader()
			var cols []int32
			var vals []float64
			for i := range s.N() {
				var y, o float64
				cols, vals, y, o, err = r.ReadRow(i, cols[:0], vals[:0])
				if err != nil {
					t.Fatal(err)
				}
				if i == 0 {
					// The index: the row pointers, y and the offsets read
					// at the first row.
					ix := s.idx
					if ix.p32 == nil || ix.y.bits == nil || off != (ix.off.f64 != nil) {
						t.Errorf("index: pointers uint32 %v, y 0/1 bits %v, offsets float64 %v; want true, true, %v", ix.p32 != nil, ix.y.bits != nil, ix.off.f64 != nil, off)
					}
					calls = 0
				}
				wc, wv := sparseRow(i)
				if dt == Float32 {
					for q := range wv {
						wv[q] = float64(float32(wv[q]))
					}
				}
				wo := 0.0
				if off {
					wo = float64(i) / 10
				}
				if !slices.Equal(cols, wc) || !slices.Equal(vals, wv) || y != float64(i%2) || o != wo {
					t.Fatalf("%v offset %v: row %d read as %v %v y %v o %v, want %v %v %v %v", dt, off, i, cols, vals, y, o, wc, wv, float64(i%2), wo)
				}
			}
			if calls != 2*(s.N()-1) {
				t.Errorf("%d pread calls for rows 1 … %d, want 2 a row (columns, values)", calls, s.N()-1)
			}
			if a := testing.AllocsPerRun(100, func() { cols, vals, _, _, _ = r.ReadRow(7, cols[:0], vals[:0]) }); a != 0 {
				t.Errorf("ReadRow allocates %v times", a)
			}
			if _, _, _, _, err := r.ReadRow(100, nil, nil); err == nil || !strings.Contains(err.Error(), "row 100 out of [0, 100)") {
				t.Errorf("row 100: %v", err)
			}
			if !off {
				if err := os.Truncate(path, int64(s.Size())-200); err != nil {
					t.Fatal(err)
				}
				_, _, _, _, err := r.ReadRow(99, nil, nil)
				if err == nil || !strings.Contains(err.Error(), "row 99") || !strings.Contains(err.Error(), "unexpected EOF") {
					t.Errorf("truncated: %v", err)
				}
			}
			s.Close()
			if _, _, _, _, err := r.ReadRow(0, nil, nil); err == nil || !strings.Contains(err.Error(), "after Close") {
				t.Errorf("after Close: %v", err)
			}
		}
	}
}

// countingReaderAt counts the ReadAt calls on a store's file.
type countingReaderAt struct {
	io.ReaderAt
	n *int
}

func (c countingReaderAt) ReadAt(b []byte, off int64) (int, error) {
	*c.n++
	return c.ReaderAt.ReadAt(b, off)
}

// TestSparseRowReaderIndex checks that a row pointer out of range is an
// error naming the row and the pointers, and that a file truncated before
// the store's row index is built makes every read fail naming the row and
// the numbers.
func TestSparseRowReaderIndex(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "s")
	writeSparse(t, path, 1000, Float32, true)
	s, err := OpenSparseStore(path)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	// A row pointer out of range.
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	binary.NativeEndian.PutUint64(b[s.l.pOff+8*3:], 1<<40)
	m, err := openSparseBytes("mutant", b)
	if err != nil {
		t.Fatal(err)
	}
	_, _, _, _, err = m.RowReader().ReadRow(2, nil, nil)
	if err == nil || !strings.Contains(err.Error(), "row 2 spans [") || !strings.Contains(err.Error(), "1099511627776") {
		t.Errorf("pointer out of range: %v", err)
	}

	// The file truncated in its y section (before the row pointers) before
	// the index is built.
	t2, err := OpenSparseStore(path)
	if err != nil {
		t.Fatal(err)
	}
	defer t2.Close()
	if err := os.Truncate(path, int64(t2.l.yOff+8*100)); err != nil {
		t.Fatal(err)
	}
	for _, i := range []int{5, 7} {
		_, _, _, _, err := t2.RowReader().ReadRow(i, nil, nil)
		if err == nil || !strings.Contains(err.Error(), fmt.Sprintf("row %d: the row index: row pointers: read 0 of", i)) || !strings.Contains(err.Error(), "unexpected EOF") {
			t.Errorf("truncated before the index: %v", err)
		}
	}
}

// TestSparseStoreChecksums flips one bit of a value in each numeric
// section of a sparse store — the low bit of a mantissa, which leaves a
// finite value the structural checks accept (and which gave another
// posterior without a word) — and one byte of the layout description:
// Validate names the section whose checksum changed, OpenSparseStore the
// description's; a version 1 store (no checksums) is refused saying to
// write it again; the store as written validates.
func TestSparseStoreChecksums(t *testing.T) {
	dir := t.TempDir()
	good := filepath.Join(dir, "good")
	writeSparse(t, good, 10, Float64, true)
	b, err := os.ReadFile(good)
	if err != nil {
		t.Fatal(err)
	}
	s0, err := OpenSparseStore(good)
	if err != nil {
		t.Fatal(err)
	}
	if err := s0.Validate(); err != nil {
		t.Fatalf("the store as written: %v", err)
	}
	l := s0.l
	s0.Close()
	edit := func(f func(b []byte)) []byte { c := append([]byte(nil), b...); f(c); return c }
	for _, c := range []struct {
		name string
		off  int
	}{{"y", l.yOff + 8*3}, {"offset", l.oOff + 8*5}, {"Val", l.vOff + 8*7}} {
		path := filepath.Join(dir, c.name)
		os.WriteFile(path, edit(func(b []byte) { b[c.off] ^= 1 }), 0o644)
		s, err := OpenSparseStore(path)
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		if err := s.Validate(); err == nil || !strings.Contains(err.Error(), "the "+c.name+" section") || !strings.Contains(err.Error(), "checksum") {
			t.Errorf("a bit of %s flipped: Validate = %v, want its checksum named", c.name, err)
		}
		s.Close()
	}
	path := filepath.Join(dir, "meta")
	os.WriteFile(path, edit(func(b []byte) { b[l.mOff+l.metaLen-2] ^= 0x20 }), 0o644)
	if _, err := OpenSparseStore(path); err == nil || !strings.Contains(err.Error(), "layout description") {
		t.Errorf("a byte of the description changed: OpenSparseStore = %v", err)
	}
	path = filepath.Join(dir, "v1")
	os.WriteFile(path, edit(func(b []byte) { binary.NativeEndian.PutUint32(b[8:], 1) }), 0o644)
	if _, err := OpenSparseStore(path); err == nil || !strings.Contains(err.Error(), "version 1, written without checksums") {
		t.Errorf("a version 1 store: OpenSparseStore = %v", err)
	}
}

// TestIndexColumn checks that an index column keeps 0/1 values as bits
// and turns to float32, then float64, at the first value that needs it,
// every value read back exactly.
func TestIndexColumn(t *testing.T) {
	for _, tc := range []struct {
		vals []float64
		kind string
	}{
		{[]float64{0, 1, 1, 0, 1}, "bits"},
		{[]float64{0, 1, 1, 2.5, 0, 1}, "float32"},
		{[]float64{1, 0, 3, 0.1, 1, 0}, "float64"},
		{[]float64{1, math.Copysign(0, -1), 1}, "float32"},
	} {
		for _, n := range []int{len(tc.vals), 130} {
			c := indexColumn{bits: make([]uint64, (n+63)/64)}
			want := make([]float64, n)
			for i := range n {
				want[i] = tc.vals[i%len(tc.vals)]
				if i >= len(tc.vals) {
					want[i] = tc.vals[len(tc.vals)-1-i%2] // more of the last kinds
				}
				c.put(i, n, want[i])
			}
			kind := map[bool]string{true: "bits"}[c.bits != nil] + map[bool]string{true: "float32"}[c.f32 != nil] + map[bool]string{true: "float64"}[c.f64 != nil]
			if kind != tc.kind {
				t.Errorf("%v (n %d): kept as %q, want %q", tc.vals, n, kind, tc.kind)
			}
			for i, w := range want {
				if got := c.at(i); math.Float64bits(got) != math.Float64bits(w) {
					t.Fatalf("%v (n %d): value %d read back as %v, want %v", tc.vals, n, i, got, w)
				}
			}
		}
	}
}

// TestSparseRowReaderUniform checks that a store whose rows all have the
// same number of entries keeps no row pointers in its index and reads
// every row back through RowReader as mapped.
func TestSparseRowReaderUniform(t *testing.T) {
	path := filepath.Join(t.TempDir(), "uniform")
	const n = 200
	w, err := CreateSparseStore(path, n, 8, Float64, false, sparseTestLayout)
	if err != nil {
		t.Fatal(err)
	}
	for i := range n {
		if err := w.WriteRow([]int32{0, int32(2 + 2*(i%3))}, []float64{1, 1}, float64(i%2), 0); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	s, err := OpenSparseStore(path)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	r := s.RowReader()
	var cols []int32
	var vals []float64
	for i := range n {
		var y float64
		cols, vals, y, _, err = r.ReadRow(i, cols[:0], vals[:0])
		if err != nil {
			t.Fatal(err)
		}
		lo, hi := s.RowPtr()[i], s.RowPtr()[i+1]
		if !slices.Equal(cols, s.Col()[lo:hi]) || !slices.Equal(vals, s.Val64()[lo:hi]) || y != s.Y()[i] {
			t.Fatalf("row %d: %v %v y %v, want %v %v y %v", i, cols, vals, y, s.Col()[lo:hi], s.Val64()[lo:hi], s.Y()[i])
		}
	}
	if ix := s.idx; !ix.uniform || ix.width != 2 || ix.p32 != nil || ix.p64 != nil {
		t.Errorf("index: uniform %v width %d, pointers kept %v; want true, 2, false", ix.uniform, ix.width, ix.p32 != nil || ix.p64 != nil)
	}
}
