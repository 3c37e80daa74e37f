package data

import (
	"encoding/binary"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// writeStore writes rows (x_i, y_i) with x_ij = i + j/8 and y_i = i mod 2.
func writeStore(t testing.TB, path string, n, d int, dtype DType) {
	t.Helper()
	w, err := CreateStore(path, n, d, dtype)
	if err != nil {
		t.Fatal(err)
	}
	x := make([]float64, d)
	for i := range n {
		for j := range x {
			x[j] = float64(i) + float64(j)/8
		}
		if err := w.WriteRow(x, float64(i%2)); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
}

func TestStoreRoundTrip(t *testing.T) {
	dir := t.TempDir()
	for _, dtype := range []DType{Float32, Float64} {
		for _, nd := range [][2]int{{1, 1}, {3, 5}, {200000, 3}} { // the last crosses the writer's buffers
			n, d := nd[0], nd[1]
			path := filepath.Join(dir, dtype.String())
			writeStore(t, path, n, d, dtype)
			s, err := OpenStore(path)
			if err != nil {
				t.Fatal(err)
			}
			if s.N() != n || s.D() != d || s.DType() != dtype || !s.Mapped() == (s.mmap) {
				t.Fatalf("%v %d×%d: N %d, d %d, dtype %v", dtype, n, d, s.N(), s.D(), s.DType())
			}
			fi, _ := os.Stat(path)
			if fi.Size() != s.Size() {
				t.Errorf("size %d, file %d", s.Size(), fi.Size())
			}
			if (dtype == Float64) != (s.X64() != nil) || (dtype == Float32) != (s.X32() != nil) {
				t.Fatalf("%v: X64 nil %v, X32 nil %v", dtype, s.X64() == nil, s.X32() == nil)
			}
			for i := range n {
				if s.Y()[i] != float64(i%2) {
					t.Fatalf("y[%d] = %v", i, s.Y()[i])
				}
				for j := range d {
					want := float64(i) + float64(j)/8
					var got float64
					if dtype == Float64 {
						got = s.X64()[i*d+j]
					} else {
						got = float64(s.X32()[i*d+j])
						want = float64(float32(want))
					}
					if got != want {
						t.Fatalf("%v: x[%d][%d] = %v, want %v", dtype, i, j, got, want)
					}
				}
			}
			if err := s.Validate(); err != nil {
				t.Error(err)
			}
			if err := s.AdviseSequential(); err != nil {
				t.Error(err)
			}
			if err := s.EndFullPasses(); err != nil {
				t.Error(err)
			}
			if err := s.EvictCache(); err != nil {
				t.Error(err)
			}
			if s.Y()[n-1] != float64((n-1)%2) { // readable after DONTNEED
				t.Error("y changed after EndFullPasses")
			}
			if err := s.Close(); err != nil {
				t.Error(err)
			}
			if err := s.Close(); err != nil {
				t.Error("second Close:", err)
			}
		}
	}
}

func TestStoreWriterErrors(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "s")
	for _, c := range []struct {
		n, d  int
		dtype DType
		want  string
	}{
		{0, 3, Float64, "N = 0"},
		{3, 0, Float64, "d = 0"},
		{-1, 3, Float64, "N = -1"},
		{3, 3, 7, "dtype 7"},
		{math.MaxInt / 8, 1 << 26, Float64, "overflows"},
	} {
		_, err := CreateStore(path, c.n, c.d, c.dtype)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("CreateStore(%d, %d, %v) = %v, want an error with %q", c.n, c.d, c.dtype, err, c.want)
		}
	}
	w, err := CreateStore(path, 2, 2, Float32)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		x    []float64
		y    float64
		want string
	}{
		{[]float64{1}, 0, "1 values, want d = 2"},
		{[]float64{1, math.NaN()}, 0, "column 1"},
		{[]float64{1, 2}, math.Inf(1), "y = +Inf"},
		{[]float64{1e300, 2}, 0, "overflows float32"},
	} {
		if err := w.WriteRow(c.x, c.y); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("WriteRow(%v, %v) = %v, want an error with %q", c.x, c.y, err, c.want)
		}
	}
	if err := w.WriteRow([]float64{1, 2}, 1); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err == nil || !strings.Contains(err.Error(), "1 rows written, header declares N = 2") {
		t.Errorf("Close after 1 of 2 rows = %v", err)
	}
	if _, err := os.Stat(path); !os.IsNotExist(err) {
		t.Errorf("a failed build left %s: %v", path, err)
	}
	if _, err := os.Stat(path + ".partial"); !os.IsNotExist(err) {
		t.Errorf("a failed build left its partial file: %v", err)
	}
	w, _ = CreateStore(path, 1, 1, Float64)
	w.WriteRow([]float64{1}, 1)
	if err := w.WriteRow([]float64{1}, 1); err == nil || !strings.Contains(err.Error(), "one more than N = 1") {
		t.Errorf("row N+1: %v", err)
	}
	if err := w.Abort(); err != nil {
		t.Error(err)
	}
}

func TestOpenStoreRejects(t *testing.T) {
	dir := t.TempDir()
	good := filepath.Join(dir, "good")
	writeStore(t, good, 10, 3, Float64)
	b, err := os.ReadFile(good)
	if err != nil {
		t.Fatal(err)
	}
	ne := binary.NativeEndian
	edit := func(f func(b []byte) []byte) []byte { return f(append([]byte(nil), b...)) }
	for _, c := range []struct {
		name string
		b    []byte
		want string
	}{
		{"empty", nil, "0 bytes, shorter than the 64-byte header"},
		{"short", b[:20], "20 bytes"},
		{"truncated", b[:len(b)-1], "file is 439 bytes, header declares 440"},
		{"appended", append(append([]byte(nil), b...), 0), "longer than its layout"},
		{"magic", edit(func(b []byte) []byte { b[0] = 'X'; return b }), `magic "XXMHROWS"`},
		{"endian", edit(func(b []byte) []byte { ne.PutUint32(b[12:], 0x04030201); return b }), "other byte order"},
		{"version", edit(func(b []byte) []byte { ne.PutUint32(b[8:], 9); return b }), "version 9"},
		{"dtype", edit(func(b []byte) []byte { ne.PutUint32(b[16:], 3); return b }), "dtype 3"},
		{"N·d", edit(func(b []byte) []byte { ne.PutUint64(b[24:], 1<<40); ne.PutUint64(b[32:], 1<<26); return b }), "N·d = 1099511627776·67108864 overflows"},
		{"d", edit(func(b []byte) []byte { ne.PutUint64(b[32:], 0); return b }), "d = 0"},
		{"N", edit(func(b []byte) []byte { ne.PutUint64(b[24:], 11); return b }), "declared size 440 bytes, want 464 for N = 11"},
		{"xoff", edit(func(b []byte) []byte { ne.PutUint64(b[48:], 128); return b }), "offset of X 128"},
		{"size", edit(func(b []byte) []byte { ne.PutUint64(b[56:], 1); return b }), "declared size 1 bytes"},
	} {
		path := filepath.Join(dir, c.name)
		if err := os.WriteFile(path, c.b, 0o644); err != nil {
			t.Fatal(err)
		}
		_, err := OpenStore(path)
		if err == nil || !strings.Contains(err.Error(), c.want) || !strings.Contains(err.Error(), path) {
			t.Errorf("%s: OpenStore = %v, want an error naming %s and %q", c.name, err, path, c.want)
		}
	}
	if _, err := OpenStore(filepath.Join(dir, "absent")); err == nil {
		t.Error("OpenStore of a missing file: no error")
	}
	// A non-finite value is found by Validate, not by OpenStore.
	nan := edit(func(b []byte) []byte { ne.PutUint64(b[192+8*(3*4+2):], math.Float64bits(math.NaN())); return b })
	path := filepath.Join(dir, "nan")
	os.WriteFile(path, nan, 0o644)
	s, err := OpenStore(path)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if err := s.Validate(); err == nil || !strings.Contains(err.Error(), "row 4, column 2") {
		t.Errorf("Validate = %v, want row 4, column 2", err)
	}
}

func TestParseDType(t *testing.T) {
	for _, dt := range []DType{Float32, Float64} {
		if got, err := ParseDType(dt.String()); got != dt || err != nil {
			t.Errorf("ParseDType(%q) = %v, %v", dt, got, err)
		}
	}
	if _, err := ParseDType("int8"); err == nil {
		t.Error("ParseDType(int8): no error")
	}
	if DType(9).String() != "DType(9)" || DType(9).Size() != 0 {
		t.Error("DType(9)")
	}
}

// FuzzOpenStore feeds arbitrary bytes to the header and layout checks:
// never a panic, and an accepted file's slices lie inside it.
func FuzzOpenStore(f *testing.F) {
	dir := f.TempDir()
	for _, dt := range []DType{Float32, Float64} {
		path := filepath.Join(dir, dt.String())
		writeStore(f, path, 5, 3, dt)
		b, _ := os.ReadFile(path)
		f.Add(b)
	}
	f.Add([]byte(StoreMagic))
	f.Fuzz(func(t *testing.T, b []byte) {
		s, err := openBytes("fuzz", b)
		if err != nil {
			if !strings.Contains(err.Error(), "fuzz") {
				t.Errorf("error does not name the file: %v", err)
			}
			return
		}
		n, d := s.N(), s.D()
		if len(s.Y()) != n || len(s.X64())+len(s.X32()) != n*d || s.Size() != int64(len(b)) {
			t.Fatalf("N %d, d %d: len(y) %d, len(X) %d, size %d of %d bytes", n, d, len(s.Y()), len(s.X64())+len(s.X32()), s.Size(), len(b))
		}
		_ = s.Y()[n-1]
		_ = s.Validate()
		s.Close()
	})
}

// TestStoreChecksums flips the low mantissa bit of one y and one X value of
// a store — finite values the finiteness check accepts — and checks that
// Validate names the section whose checksum changed; a version 1 store is
// refused saying to write it again; the store as written validates, in
// float32 and float64.
func TestStoreChecksums(t *testing.T) {
	dir := t.TempDir()
	for _, dt := range []DType{Float32, Float64} {
		good := filepath.Join(dir, "good"+dt.String())
		writeStore(t, good, 10, 3, dt)
		b, err := os.ReadFile(good)
		if err != nil {
			t.Fatal(err)
		}
		s0, err := OpenStore(good)
		if err != nil {
			t.Fatal(err)
		}
		if err := s0.Validate(); err != nil {
			t.Fatalf("%v: the store as written: %v", dt, err)
		}
		l := s0.l
		s0.Close()
		for _, c := range []struct {
			name string
			off  int
		}{{"y", l.yOff + 8*4}, {"X", l.xOff + dt.Size()*7}} {
			path := filepath.Join(dir, c.name+dt.String())
			bad := append([]byte(nil), b...)
			bad[c.off] ^= 1
			os.WriteFile(path, bad, 0o644)
			s, err := OpenStore(path)
			if err != nil {
				t.Fatalf("%v, %s: %v", dt, c.name, err)
			}
			if err := s.Validate(); err == nil || !strings.Contains(err.Error(), ": "+c.name+" (") || !strings.Contains(err.Error(), "checksum") {
				t.Errorf("%v: a bit of %s flipped: Validate = %v, want its checksum named", dt, c.name, err)
			}
			s.Close()
		}
		v1 := append([]byte(nil), b...)
		binary.NativeEndian.PutUint32(v1[8:], 1)
		path := filepath.Join(dir, "v1"+dt.String())
		os.WriteFile(path, v1, 0o644)
		if _, err := OpenStore(path); err == nil || !strings.Contains(err.Error(), "version 1, written without checksums") {
			t.Errorf("a version 1 store: OpenStore = %v", err)
		}
	}
}
