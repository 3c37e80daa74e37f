// Copyright ©2026 The exactmh Authors. All rights reserved.
// Use of this source code is governed by a BSD-style
// license that can be found in the LICENSE file.

package data

import (
	"bytes"
	"fmt"
	"runtime"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/ipc"
)

// zstdMagic starts every zstd frame.
var zstdMagic = []byte{0x28, 0xb5, 0x2f, 0xfd}

// bigWindowFrame overwrites the zstd frame at b[i:] with one of the same
// place declaring a 512 MiB window (frame header descriptor 0: a window
// descriptor follows; window descriptor 0x98: 2^(10+19) bytes) and one
// last RLE block of n copies of a byte: 10 bytes in all.
func bigWindowFrame(b []byte, i, n int) {
	copy(b[i:], zstdMagic)
	b[i+4], b[i+5] = 0x00, 0x98
	h := uint32(1) | 1<<1 | uint32(n)<<3 // last, RLE, size n
	b[i+6], b[i+7], b[i+8] = byte(h), byte(h>>8), byte(h>>16)
	b[i+9] = 0
}

// allocated returns the bytes read allocated in all.
func allocated(read func()) uint64 {
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	read()
	runtime.ReadMemStats(&after)
	return after.TotalAlloc - before.TotalAlloc
}

// TestArrowZstdWindow: an Arrow IPC body buffer compressed with zstd is
// decoded by arrow-go with a streaming decoder allowing 512 MiB windows,
// whose history buffer is twice the window the frame header declares, so
// ten bytes of a corrupted frame asked for 1 GiB, outside the reader's
// allocator. checkIPC refuses a frame whose window is larger than the
// buffer it decodes to can need.
func TestArrowZstdWindow(t *testing.T) {
	if !underUlimit(t, 1<<21) {
		return
	}
	rec := smallRecord(t, nil)
	defer rec.Release()
	for _, stream := range []bool{true, false} {
		var buf bytes.Buffer
		var w interface {
			Write(arrow.RecordBatch) error
			Close() error
		}
		if stream {
			w = ipc.NewWriter(&buf, ipc.WithSchema(rec.Schema()), ipc.WithZstd())
		} else {
			fw, err := ipc.NewFileWriter(&buf, ipc.WithSchema(rec.Schema()), ipc.WithZstd())
			if err != nil {
				t.Fatal(err)
			}
			w = fw
		}
		if err := w.Write(rec); err != nil {
			t.Fatal(err)
		}
		if err := w.Close(); err != nil {
			t.Fatal(err)
		}
		good := buf.Bytes()
		// The valid file reads, with the same values as uncompressed.
		want, err := readArrow(bytes.NewReader(writeIPC(t, rec, stream)), "plain.arrow", nil)
		if err != nil {
			t.Fatal(err)
		}
		got, err := readArrow(bytes.NewReader(good), "zstd.arrow", nil)
		if err != nil {
			t.Fatalf("stream %v: a valid zstd-compressed file: %v", stream, err)
		}
		if got.Len() != want.Len() {
			t.Fatalf("stream %v: %d rows, want %d", stream, got.Len(), want.Len())
		}
		bad := append([]byte{}, good...)
		frames := 0
		for i := 0; ; {
			k := bytes.Index(bad[i:], zstdMagic)
			if k < 0 {
				break
			}
			i += k
			if i < 8 {
				t.Fatal("a zstd frame without its length")
			}
			n := int(int64(uint64(bad[i-8]) | uint64(bad[i-7])<<8 | uint64(bad[i-6])<<16))
			bigWindowFrame(bad, i, n)
			frames++
			i += 10
		}
		if frames == 0 {
			t.Fatal("no zstd frame found")
		}
		var rerr error
		a := allocated(func() { _, rerr = readArrow(bytes.NewReader(bad), "bomb.arrow", nil) })
		t.Logf("stream %v: %d frames patched: %d bytes allocated, error %v", stream, frames, a, rerr)
		if a > fuzzAllocCap(len(bad)) {
			t.Errorf("stream %v: a %d-byte file allocated %d bytes (cap %d)", stream, len(bad), a, fuzzAllocCap(len(bad)))
		}
		if rerr == nil {
			t.Errorf("stream %v: a frame declaring a 512 MiB window for a %d-byte buffer was accepted", stream, 40)
		}
	}
}

// TestPageCodecsBounded is the audit of the built-in Parquet page codecs:
// each decodes into the page's buffer of the size the page header
// declares, capped by readParquet, and hostile streams allocate little
// beyond it. gzip reads into the page (io.ReadFull) with a fixed 32 KiB
// window; its header's extra field is at most 64 KiB and its names 512
// bytes. Snappy refuses a block declaring more than the page; zstd
// decodes into the page with its output and window limited
// (parquet_codec.go). parquetcodecs' TestCodecsBounded audits Brotli and
// LZ4_RAW.
func TestPageCodecsBounded(t *testing.T) {
	gzipMember := func(flags byte, extra []byte) []byte {
		b := []byte{0x1f, 0x8b, 8, flags, 0, 0, 0, 0, 0, 0xff}
		return append(b, extra...)
	}
	many := bytes.Repeat(gzipMember(0, []byte{3, 0, 0, 0, 0, 0, 0, 0, 0, 0}), 1000) // 1,000 empty members
	cases := []struct {
		codec int32
		name  string
		src   []byte
	}{
		{codecGzip, "extra field of 64 KiB declared", gzipMember(4, []byte{0xff, 0xff})},
		{codecGzip, "name without its end", gzipMember(8, bytes.Repeat([]byte("a"), 100_000))},
		{codecGzip, "1,000 empty members", many},
		{codecGzip, "stored block of 64 KiB declared", append(gzipMember(0, nil), 1, 0xff, 0xff, 0, 0)},
		{codecSnappy, "block of 4 GiB declared", []byte{0xff, 0xff, 0xff, 0xff, 0x0f, 0}},
		{codecZstd, "window of 512 MiB declared", []byte{0x28, 0xb5, 0x2f, 0xfd, 0x00, 0x98, 0x0b, 0x02, 0x00, 0x00}},
		{codecZstd, "single segment of 4 GiB declared", []byte{0x28, 0xb5, 0x2f, 0xfd, 0xe0, 0xff, 0xff, 0xff, 0xff, 0, 0, 0, 0, 0x0b, 0x02, 0x00, 0x00}},
	}
	for _, c := range cases {
		var d decompressor
		dst := make([]byte, 40)
		var derr error
		a := allocated(func() {
			defer func() {
				if p := recover(); p != nil {
					derr = fmt.Errorf("panic: %v", p)
				}
			}()
			derr = d.decompress(c.codec, dst, c.src)
		})
		t.Logf("%s, %s: %d bytes allocated, error %v", codecName(c.codec), c.name, a, derr)
		if derr == nil {
			t.Errorf("%s, %s: decoded into a 40-byte page without an error", codecName(c.codec), c.name)
		}
		if a > 1<<20 {
			t.Errorf("%s, %s: a %d-byte stream for a 40-byte page allocated %d bytes", codecName(c.codec), c.name, len(c.src), a)
		}
	}
}
