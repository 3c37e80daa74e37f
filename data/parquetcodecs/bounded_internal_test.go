// Copyright ©2026 The exactmh Authors. All rights reserved.
// Use of this source code is governed by a BSD-style
// license that can be found in the LICENSE file.

package parquetcodecs

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"runtime"
	"testing"

	"github.com/andybalholm/brotli"
)

// allocated returns the bytes read allocated in all.
func allocated(read func()) uint64 {
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	read()
	runtime.ReadMemStats(&after)
	return after.TotalAlloc - before.TotalAlloc
}

// TestBrotliWindow: four bytes of Brotli (a 16 MiB window, a meta-block
// declaring 16 MiB of uncompressed data) made a 40-byte page allocate
// the 16 MiB ring buffer; with the window lowered to the page's need, it
// allocates under 1 MiB. Valid streams written with every window from
// 2¹⁰ to 2²⁴ and qualities 1 to 11 decode to the same bytes as without
// the guard, for pages both smaller and larger than the lowered window.
func TestBrotliWindow(t *testing.T) {
	bomb := []byte{0xcf, 0xff, 0xff, 0xff}
	dst := make([]byte, 40)
	var derr error
	a := allocated(func() { derr = decodeBrotli(dst, bomb) })
	t.Logf("bomb: %d bytes allocated, error %v", a, derr)
	if derr == nil {
		t.Error("a meta-block of 16 MiB decoded into a 40-byte page")
	}
	if a > 1<<20 {
		t.Errorf("a 4-byte Brotli stream for a 40-byte page allocated %d bytes", a)
	}
	unguarded := allocated(func() {
		r := brotli.NewReader(bytes.NewReader(bomb))
		r.Read(dst)
	})
	t.Logf("the same without the guard: %d bytes allocated", unguarded)

	rng := rand.New(rand.NewPCG(1, 2))
	words := []string{"theta", "logistic", "exact", "minibatch", " ", "\n", "0.125", "-3.5e-7", "the", "and"}
	for _, n := range []int{1, 100, 5000, 300_000, 1 << 20} {
		var text []byte
		for len(text) < n {
			if rng.IntN(4) == 0 && len(text) > 64 {
				k := rng.IntN(len(text) - 32)
				text = append(text, text[k:k+32]...) // long-distance repeats
			} else {
				text = append(text, words[rng.IntN(len(words))]...)
			}
		}
		text = text[:n]
		for _, lgwin := range []int{10, 16, 17, 18, 20, 22, 24} {
			for _, q := range []int{1, 5, 11} {
				if q == 11 && n > 5000 {
					continue
				}
				var buf bytes.Buffer
				w := brotli.NewWriterOptions(&buf, brotli.WriterOptions{Quality: q, LGWin: lgwin})
				w.Write(text)
				w.Close()
				got := make([]byte, n)
				if err := decodeBrotli(got, buf.Bytes()); err != nil || !bytes.Equal(got, text) {
					t.Fatalf("n %d lgwin %d quality %d: equal %v, %v", n, lgwin, q, bytes.Equal(got, text), err)
				}
			}
		}
	}
}

// TestCodecsBounded is the audit of the registered codecs: hostile
// streams for a 40-byte page are errors and allocate little. LZ4_RAW
// decodes a block into the page without allocating; Brotli's window is
// lowered to the page's need (brotliLowerWindow).
func TestCodecsBounded(t *testing.T) {
	cases := []struct {
		name   string
		decode func(dst, src []byte) error
		src    []byte
	}{
		{"LZ4_RAW, literal run of 4 GiB declared", decodeLZ4Raw, []byte{0xf0, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff}},
		{"BROTLI, meta-block of 16 MiB declared", decodeBrotli, []byte{0xcf, 0xff, 0xff, 0xff}},
	}
	for _, c := range cases {
		dst := make([]byte, 40)
		var derr error
		a := allocated(func() {
			defer func() {
				if p := recover(); p != nil {
					derr = fmt.Errorf("panic: %v", p)
				}
			}()
			derr = c.decode(dst, c.src)
		})
		t.Logf("%s: %d bytes allocated, error %v", c.name, a, derr)
		if derr == nil {
			t.Errorf("%s: decoded into a 40-byte page without an error", c.name)
		}
		if a > 1<<20 {
			t.Errorf("%s: a %d-byte stream for a 40-byte page allocated %d bytes", c.name, len(c.src), a)
		}
	}
}
