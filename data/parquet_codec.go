// Copyright ©2026 The exactmh Authors. All rights reserved.
// Use of this source code is governed by a BSD-style
// license that can be found in the LICENSE file.

package data

import (
	"bytes"
	"compress/gzip"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"sync"

	"github.com/klauspost/compress/zstd"
)

// Parquet's compression codecs (parquet.thrift's CompressionCodec).
const (
	codecUncompressed = 0
	codecSnappy       = 1
	codecGzip         = 2
	codecLZO          = 3
	codecBrotli       = 4
	codecLZ4          = 5
	codecZstd         = 6
	codecLZ4Raw       = 7
)

var codecNames = map[string]int32{
	"UNCOMPRESSED": codecUncompressed, "SNAPPY": codecSnappy, "GZIP": codecGzip, "LZO": codecLZO,
	"BROTLI": codecBrotli, "LZ4": codecLZ4, "ZSTD": codecZstd, "LZ4_RAW": codecLZ4Raw,
}

func codecName(c int32) string {
	for name, id := range codecNames {
		if id == c {
			return name
		}
	}
	return fmt.Sprintf("codec %d", c)
}

// registered holds the codecs added by RegisterParquetCodec.
var registered sync.Map // int32 → func(dst, src []byte) error

// RegisterParquetCodec makes ReadParquet (and ReadFile) read pages
// compressed with the codec of the given name, one of parquet.thrift's
// CompressionCodec names: "BROTLI", "LZ4_RAW", "LZ4" or "LZO" (Snappy,
// gzip and zstd are built in). decode decompresses src into dst, which is
// exactly as long as the page's declared uncompressed size; it must
// return an error, not allocate, if src decodes to more, and must not
// keep dst or src. It is meant to be called from an init function, as
// the package github.com/exactmh/exactmh/data/parquetcodecs does for
// Brotli and LZ4_RAW; the built-in codecs cannot be replaced, and an
// unknown name panics.
//
// The built-in codecs keep the package light to build: Brotli and LZ4
// decoders are a module each (see the package documentation).
func RegisterParquetCodec(name string, decode func(dst, src []byte) error) {
	c, ok := codecNames[name]
	if !ok || c == codecUncompressed || c == codecSnappy || c == codecGzip || c == codecZstd {
		panic(fmt.Sprintf("data: RegisterParquetCodec(%q): not a codec that can be registered (want BROTLI, LZ4_RAW, LZ4 or LZO)", name))
	}
	registered.Store(c, decode)
}

// decompressor decompresses pages, keeping a gzip reader and a zstd
// decoder for pages of the size of the last one.
type decompressor struct {
	zd   *zstd.Decoder
	zcap int // the page size zd is limited to
	gz   *gzip.Reader
	br   bytes.Reader
}

// zstdMinWindow is the largest zstd window accepted for any page: the
// windows of zstd's levels up to 19 are at most 8 MiB, and a writer that
// does not know a page's size declares its level's window.
const zstdMinWindow = 8 << 20

// zstdDecode decodes the zstd frames of src into dst, which must be
// filled exactly. The decoder (klauspost/compress) is limited to the
// page: it decodes straight into dst (DecodeAll uses its output as the
// window, so a frame's declared window allocates nothing), refuses output
// beyond len(dst) as it goes (WithDecoderMaxMemory), and refuses a frame
// declaring a window larger than the page or zstdMinWindow, whichever is
// larger — so a few corrupted bytes cannot make it allocate more than
// the page the file declares, which the reader has already checked
// against the file's size.
func (d *decompressor) zstdDecode(dst, src []byte) error {
	if d.zd == nil || d.zcap != len(dst) {
		if d.zd != nil {
			d.zd.Close()
		}
		zd, err := zstd.NewReader(nil, zstd.WithDecoderConcurrency(1), zstd.WithDecoderLowmem(true),
			zstd.WithDecoderMaxMemory(uint64(max(len(dst), zstdMinWindow))), zstd.WithDecoderMaxWindow(uint64(max(len(dst), zstdMinWindow))))
		if err != nil {
			return fmt.Errorf("zstd: %v", err)
		}
		d.zd, d.zcap = zd, len(dst)
	}
	out, err := d.zd.DecodeAll(src, dst[:0])
	switch {
	case err != nil:
		return fmt.Errorf("zstd: %v", err)
	case len(out) != len(dst) || len(out) > 0 && &out[0] != &dst[0]:
		return fmt.Errorf("zstd: the page decodes to %d bytes, not the %d it declares", len(out), len(dst))
	}
	return nil
}

// decompress decompresses src into dst, which must be filled exactly.
func (d *decompressor) decompress(codec int32, dst, src []byte) error {
	switch codec {
	case codecSnappy:
		return snappyDecode(dst, src)
	case codecGzip:
		d.br.Reset(src)
		if d.gz == nil {
			gz, err := gzip.NewReader(&d.br)
			if err != nil {
				return fmt.Errorf("gzip: %v", err)
			}
			d.gz = gz
		} else if err := d.gz.Reset(&d.br); err != nil {
			return fmt.Errorf("gzip: %v", err)
		}
		return readExactly("gzip", d.gz, dst)
	case codecZstd:
		return d.zstdDecode(dst, src)
	}
	if f, ok := registered.Load(codec); ok {
		return f.(func(dst, src []byte) error)(dst, src)
	}
	if codec == codecBrotli || codec == codecLZ4Raw {
		return fmt.Errorf("pages compressed with %s, which package data reads once registered: import _ \"github.com/exactmh/exactmh/data/parquetcodecs\" (the exactmh command does), or rewrite the file with zstd, Snappy or gzip", codecName(codec))
	}
	return fmt.Errorf("pages compressed with %s, which this reader does not decode: rewrite the file with zstd, Snappy or gzip", codecName(codec))
}

// readExactly fills dst from r and checks that r then ends.
func readExactly(codec string, r io.Reader, dst []byte) error {
	if _, err := io.ReadFull(r, dst); err != nil {
		if errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, io.EOF) {
			return fmt.Errorf("%s: the page decodes to fewer bytes than the %d it declares", codec, len(dst))
		}
		return fmt.Errorf("%s: %v", codec, err)
	}
	var one [1]byte
	if n, err := r.Read(one[:]); n > 0 {
		return fmt.Errorf("%s: the page decodes to more bytes than the %d it declares", codec, len(dst))
	} else if err != nil && err != io.EOF {
		return fmt.Errorf("%s: %v", codec, err)
	}
	return nil
}

// snappyDecode decodes a Snappy block (the format's format_description.txt:
// the decoded length as a varint, then literals and copies) into dst,
// which must be exactly the decoded length.
func snappyDecode(dst, src []byte) error {
	n, k := binary.Uvarint(src)
	if k <= 0 {
		return errors.New("snappy: corrupt block length")
	}
	if n != uint64(len(dst)) {
		return fmt.Errorf("snappy: a block decoding to %d bytes in a page of %d", n, len(dst))
	}
	s, d := k, 0
	for s < len(src) {
		tag := src[s]
		var length, offset int
		switch tag & 3 {
		case 0: // literal
			x := int(tag >> 2)
			s++
			if x >= 60 {
				nb := x - 59
				if len(src)-s < nb {
					return errors.New("snappy: a literal's length cut short")
				}
				x = 0
				for i := nb - 1; i >= 0; i-- {
					x = x<<8 | int(src[s+i])
				}
				s += nb
			}
			length = x + 1
			if length <= 0 || length > len(src)-s || length > len(dst)-d {
				return errors.New("snappy: a literal beyond the block")
			}
			copy(dst[d:], src[s:s+length])
			s += length
			d += length
			continue
		case 1:
			if len(src)-s < 2 {
				return errors.New("snappy: a copy cut short")
			}
			length = 4 + int(tag>>2)&7
			offset = int(tag>>5)<<8 | int(src[s+1])
			s += 2
		case 2:
			if len(src)-s < 3 {
				return errors.New("snappy: a copy cut short")
			}
			length = 1 + int(tag>>2)
			offset = int(binary.LittleEndian.Uint16(src[s+1:]))
			s += 3
		case 3:
			if len(src)-s < 5 {
				return errors.New("snappy: a copy cut short")
			}
			length = 1 + int(tag>>2)
			offset = int(binary.LittleEndian.Uint32(src[s+1:]))
			s += 5
		}
		if offset <= 0 || offset > d || length > len(dst)-d {
			return errors.New("snappy: a copy outside the block")
		}
		if offset >= length {
			copy(dst[d:d+length], dst[d-offset:])
		} else {
			for i := range length {
				dst[d+i] = dst[d-offset+i]
			}
		}
		d += length
	}
	if d != len(dst) {
		return fmt.Errorf("snappy: the block decodes to %d bytes, not the %d it declares", d, len(dst))
	}
	return nil
}
