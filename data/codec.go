// Copyright ©2026 The exactmh Authors. All rights reserved.
// Use of this source code is governed by a BSD-style
// license that can be found in the LICENSE file.

package data

import (
	"encoding/binary"
	"fmt"
	"sync"

	"github.com/apache/arrow-go/v18/parquet"
	"github.com/apache/arrow-go/v18/parquet/compress"
	"github.com/klauspost/compress/zstd"
)

// guardedSnappy is arrow-go's Snappy codec with the block's declared
// length checked first. A Snappy block starts with its decoded length (a
// varint, up to 4 GiB); klauspost/compress allocates a buffer of that
// length, outside any allocator arrow-go is given, whenever the page's
// own buffer is smaller, so a few corrupted bytes in a page asked for
// gigabytes (FuzzReadParquet's allocation cap found a 3,956-byte file
// allocating 256 MiB this way; kept in testdata/fuzz). A block declaring
// more than the page's uncompressed size is corrupt: it is an error
// instead, before anything is allocated.
type guardedSnappy struct{ compress.Codec }

func (g guardedSnappy) check(dst, src []byte) error {
	n, k := binary.Uvarint(src)
	if k <= 0 {
		return fmt.Errorf("snappy: corrupt block length")
	}
	if n > uint64(len(dst)) {
		return fmt.Errorf("snappy: a block decoding to %d bytes in a page of %d", n, len(dst))
	}
	return nil
}

func (g guardedSnappy) Decode(dst, src []byte) []byte {
	if err := g.check(dst, src); err != nil {
		panic(err) // recovered by the readers
	}
	return g.Codec.Decode(dst, src)
}

func (g guardedSnappy) DecodeWithError(dst, src []byte) ([]byte, error) {
	if err := g.check(dst, src); err != nil {
		return nil, err
	}
	return g.Codec.(interface {
		DecodeWithError(dst, src []byte) ([]byte, error)
	}).DecodeWithError(dst, src)
}

// init replaces arrow-go's Snappy and zstd codecs, process-wide, by the
// guarded ones: arrow-go looks codecs up in one registry. The guards
// change nothing for a valid page (TestParquetCodecs).
func init() {
	c, err := compress.GetCodec(compress.Codecs.Snappy)
	if err != nil {
		return
	}
	if _, ok := c.(interface {
		DecodeWithError(dst, src []byte) ([]byte, error)
	}); !ok {
		return
	}
	compress.RegisterCodec(compress.Codecs.Snappy, guardedSnappy{c})
	if z, err := compress.GetCodec(compress.Codecs.Zstd); err == nil {
		compress.RegisterCodec(compress.Codecs.Zstd, guardedZstd{z})
	}
	if b, err := compress.GetCodec(compress.Codecs.Brotli); err == nil {
		if _, ok := b.(interface {
			DecodeWithError(dst, src []byte) ([]byte, error)
		}); ok {
			compress.RegisterCodec(compress.Codecs.Brotli, guardedBrotli{b})
		}
	}
}

// guardedBrotli decodes Brotli pages with the stream's window cut to what
// the page can need. andybalholm/brotli allocates its ring buffer, up to
// the 16 MiB window the stream header declares, from a meta-block's
// declared length before decoding it, outside any allocator: four bytes
// (a 16 MiB window, an uncompressed meta-block declaring 16 MiB) made a
// 40-byte page allocate 16 MiB, so a few kilobytes of such pages
// allocated gigabytes (TestBrotliWindow). Writers declare their default
// window (4 MiB) whatever the page's size.
//
// A window W decodes a stream exactly as any larger one while the output
// stays within W − 16 bytes (RFC 7932, section 9.2: a backward distance
// beyond min(W − 16, output so far) is a static-dictionary reference, and
// that minimum is the output so far either way), and a page's output may
// not exceed the page. So the window bits (WBITS, section 9.1) are
// lowered to the smallest in the same 4-bit code (18 to 24) with
// W − 16 above the page's size plus the one byte arrow-go reads past it;
// the code's length is kept so that no later bit moves. The ring buffer
// is then at most the larger of 256 KiB and twice the page.
type guardedBrotli struct{ compress.Codec }

// brotliLowerWindow returns src with its window lowered for a page of n
// bytes (a copy if changed; src itself otherwise).
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

func (g guardedBrotli) Decode(dst, src []byte) []byte {
	out, err := g.DecodeWithError(dst, src)
	if err != nil {
		panic(err) // recovered by the readers
	}
	return out
}

func (g guardedBrotli) DecodeWithError(dst, src []byte) ([]byte, error) {
	if dst == nil {
		return nil, fmt.Errorf("brotli: a page of unknown size")
	}
	return g.Codec.(interface {
		DecodeWithError(dst, src []byte) ([]byte, error)
	}).DecodeWithError(dst, brotliLowerWindow(src, len(dst)))
}

// guardedZstd decodes zstd pages with a decoder whose output is capped at
// arrow-go's own largest page (256 MiB): arrow-go's decoder has
// klauspost/compress's default cap of 64 GiB, so a frame declaring, or a
// few bytes of zstd expanding to, gigabytes would be allocated outside any
// allocator. A page decoding to more than its declared size is corrupt.
type guardedZstd struct{ compress.Codec }

var zstdDecoder = sync.OnceValue(func() *zstd.Decoder {
	d, _ := zstd.NewReader(nil, zstd.WithDecoderMaxMemory(uint64(parquet.DefaultMaxUncompressedPageSize)))
	return d
})

func (g guardedZstd) Decode(dst, src []byte) []byte {
	out, err := g.DecodeWithError(dst, src)
	if err != nil {
		panic(err) // recovered by the readers
	}
	return out
}

func (g guardedZstd) DecodeWithError(dst, src []byte) ([]byte, error) {
	d := zstdDecoder()
	if d == nil {
		return nil, fmt.Errorf("zstd: no decoder")
	}
	out, err := d.DecodeAll(src, dst[:0])
	if err != nil {
		return nil, fmt.Errorf("zstd: %w", err)
	}
	if len(out) > len(dst) {
		return nil, fmt.Errorf("zstd: a block decoding to %d bytes in a page of %d", len(out), len(dst))
	}
	return out, nil
}
