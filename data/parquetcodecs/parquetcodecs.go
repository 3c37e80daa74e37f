// Copyright ©2026 The exactmh Authors. All rights reserved.
// Use of this source code is governed by a BSD-style
// license that can be found in the LICENSE file.

// Package parquetcodecs makes package data read Parquet pages compressed
// with Brotli and LZ4_RAW, the codecs Parquet writers offer beyond the
// Snappy, gzip and zstd that package data decodes itself. Import it for
// its side effect:
//
//	import _ "github.com/exactmh/exactmh/data/parquetcodecs"
//
// The exactmh command imports it. The decoders are
// github.com/andybalholm/brotli and github.com/pierrec/lz4/v4, the ones
// arrow-go uses, kept out of package data so that a program reading the
// common codecs does not download them.
package parquetcodecs

import (
	"bytes"
	"fmt"
	"io"

	"github.com/andybalholm/brotli"
	"github.com/exactmh/exactmh/data"
	"github.com/pierrec/lz4/v4"
)

func init() {
	data.RegisterParquetCodec("BROTLI", decodeBrotli)
	data.RegisterParquetCodec("LZ4_RAW", decodeLZ4Raw)
}

// decodeBrotli fills dst from the Brotli stream src, which must end
// there: the decoder writes into dst and allocates only its window.
func decodeBrotli(dst, src []byte) error {
	r := brotli.NewReader(bytes.NewReader(brotliLowerWindow(src, len(dst))))
	if _, err := io.ReadFull(r, dst); err != nil {
		return fmt.Errorf("brotli: %v (a page declaring %d bytes)", err, len(dst))
	}
	var one [1]byte
	if n, err := r.Read(one[:]); n > 0 || err != nil && err != io.EOF {
		return fmt.Errorf("brotli: the page decodes to more than the %d bytes it declares", len(dst))
	}
	return nil
}

// decodeLZ4Raw decodes the LZ4 block src into dst, which it must fill.
func decodeLZ4Raw(dst, src []byte) error {
	n, err := lz4.UncompressBlock(src, dst)
	if err != nil {
		return fmt.Errorf("lz4: %v", err)
	}
	if n != len(dst) {
		return fmt.Errorf("lz4: the page decodes to %d bytes, not the %d it declares", n, len(dst))
	}
	return nil
}

// brotliLowerWindow returns src with the stream's window lowered to what a
// page of n bytes can need (a copy if changed; src itself otherwise).
// andybalholm/brotli allocates its ring buffer, up to the 16 MiB window
// the stream header declares, from a meta-block's declared length before
// decoding it: four bytes (a 16 MiB window, an uncompressed meta-block
// declaring 16 MiB) made a 40-byte page allocate 16 MiB, so a few
// kilobytes of such pages allocated gigabytes (TestBrotliWindow). Writers
// declare their default window (4 MiB) whatever the page's size.
//
// A window W decodes a stream exactly as any larger one while the output
// stays within W − 16 bytes (RFC 7932, section 9.2: a backward distance
// beyond min(W − 16, output so far) is a static-dictionary reference, and
// that minimum is the output so far either way), and a page's output may
// not exceed the page. So the window bits (WBITS, section 9.1) are
// lowered to the smallest in the same 4-bit code (18 to 24) with W − 16
// above the page's size plus the one byte read past it to see the end;
// the code's length is kept so that no later bit moves. The ring buffer
// is then at most the larger of 256 KiB and twice the page.
func brotliLowerWindow(src []byte, n int) []byte {
	// WBITS 18 to 24 is coded in the first 4 bits: bit 0 is 1 and bits
	// 1 to 3 are WBITS − 17 (1 to 7).
	if len(src) == 0 || src[0]&1 == 0 || src[0]&0xe == 0 {
		return src // WBITS 16 (1 bit) or 10–17 / large window (7 bits): at most 128 KiB
	}
	wbits := 17 + int(src[0]>>1&7)
	w := 18
	for w < wbits && 1<<w-16 < n+1 {
		w++
	}
	if w >= wbits {
		return src
	}
	out := append([]byte(nil), src...)
	out[0] = out[0]&^0xe | byte(w-17)<<1
	return out
}
