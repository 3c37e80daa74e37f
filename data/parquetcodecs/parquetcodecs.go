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
	r := brotli.NewReader(bytes.NewReader(src))
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
