// Copyright ©2026 The exactmh Authors. All rights reserved.
// Use of this source code is governed by a BSD-style
// license that can be found in the LICENSE file.

package data

import (
	"bytes"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"math"
	"path/filepath"
	"slices"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/parquet"
	"github.com/apache/arrow-go/v18/parquet/compress"
	"github.com/apache/arrow-go/v18/parquet/pqarrow"
)

// frameDigest is a SHA-256 of a Frame's columns: names, types, every
// value and every missing flag, in order. Two readers that produce the
// same digest produce the same Frame.
func frameDigest(f *Frame) string {
	h := sha256.New()
	var b [8]byte
	put := func(v uint64) {
		binary.LittleEndian.PutUint64(b[:], v)
		h.Write(b[:])
	}
	put(uint64(f.n))
	for _, c := range f.cols {
		h.Write([]byte(c.name))
		put(uint64(c.typ))
		for _, v := range c.f {
			put(math.Float64bits(v))
		}
		for _, v := range c.i {
			put(uint64(v))
		}
		for _, v := range c.codes {
			put(uint64(v))
		}
		put(uint64(len(c.levels)))
		for _, s := range c.levels {
			put(uint64(len(s)))
			h.Write([]byte(s))
		}
		put(uint64(len(c.miss)))
		for _, m := range c.miss {
			if m {
				h.Write([]byte{1})
			} else {
				h.Write([]byte{0})
			}
		}
	}
	return hex.EncodeToString(h.Sum(nil))
}

// parquetDigests are the digests of the Frames the Parquet reader makes
// of the repository's files. They were taken with arrow-go's pqarrow
// reader, which the package used before its own column reader: the two
// read every value identically.
var parquetDigests = map[string]string{
	"missing.parquet":    "63773a8a76fd01a32b24fc0168951713a8b9ded9de5010414d72b1c73817aa8e",
	"small.parquet":      "9d1ee36278a63adc41c34268e45482dd0333905cf079c6792e888beb0fb6de9b",
	"flights-3m.parquet": "3170f28410a1f7b01d47d12700b6909a39eee1ff7295a100e8b63fc578e54522",
}

// TestParquetDigests reads testdata's Parquet files and the shared
// flights file and checks the digests of the Frames.
func TestParquetDigests(t *testing.T) {
	files, _ := filepath.Glob(filepath.Join("testdata", "*.parquet"))
	if !testing.Short() {
		files = append(files, flightsPath)
	}
	for _, name := range files {
		f, err := ReadParquet(name, nil)
		if err != nil {
			if name == flightsPath {
				t.Logf("skipping %s: %v", name, err)
				continue
			}
			t.Fatal(err)
		}
		got := frameDigest(f)
		t.Logf("%q: %q,", filepath.Base(name), got)
		if want := parquetDigests[filepath.Base(name)]; got != want {
			t.Errorf("%s: digest %s, want %s", name, got, want)
		}
	}
}

// TestParquetTypes reads the types of TestArrowTypes from Parquet (a
// timestamp with a time zone, on the UTC clock, since Parquet records
// only that a timestamp is UTC, even where the file keeps an Arrow
// schema with the zone; seconds
// and nanoseconds, dates, 32-bit integers and floats, unsigned integers)
// and checks each value.
func TestParquetTypes(t *testing.T) {
	rec := typesRecord()
	defer rec.Release()
	// Without the dictionary column: pqarrow writes its null as no value
	// at all (the file's chunk has one value for two rows).
	six := array.NewRecordBatch(arrow.NewSchema(rec.Schema().Fields()[:6], nil), rec.Columns()[:6], rec.NumRows())
	defer six.Release()
	for _, stored := range []bool{false, true} {
		props := pqarrow.DefaultWriterProps()
		if stored {
			props = pqarrow.NewArrowWriterProperties(pqarrow.WithStoreSchema())
		}
		f, err := readParquet(bytes.NewReader(writeParquetProps(t, six, 1, props)), "types.parquet", nil)
		if err != nil {
			t.Fatal(err)
		}
		want := map[string][]string{
			"ny":  {"2024-07-01 12:00:00", "2024-01-15 12:00:00"},
			"ns":  {"2024-07-01 12:00:00.000001", "2024-01-15 12:00:00.000001"},
			"day": {"2024-07-01 00:00:00", "2024-01-15 00:00:00"},
			"i32": {"200", "0"},
			"f32": {"1.5", "1.5"},
			"u16": {"65535", "65535"},
		}
		for name, w := range want {
			got, err := f.Strings(name)
			if err != nil || !slices.Equal(got, w) {
				t.Errorf("Arrow schema stored %v: %s = %q, %v; want %q", stored, name, got, err, w)
			}
		}
	}
}

// TestParquetCodecs reads testdata's small table written by arrow-go with
// each compression codec the package decodes itself (parquet_codec.go):
// the same Frame as uncompressed.
func TestParquetCodecs(t *testing.T) {
	rec := smallRecord(t, nil)
	defer rec.Release()
	var want string
	for _, c := range []compress.Compression{compress.Codecs.Uncompressed, compress.Codecs.Snappy, compress.Codecs.Zstd, compress.Codecs.Gzip} {
		var buf bytes.Buffer
		tbl := array.NewTableFromRecords(rec.Schema(), []arrow.RecordBatch{rec})
		props := parquet.NewWriterProperties(parquet.WithCompression(c), parquet.WithDictionaryDefault(true))
		if err := pqarrow.WriteTable(tbl, &buf, 5, props, pqarrow.DefaultWriterProps()); err != nil {
			t.Fatal(err)
		}
		tbl.Release()
		f, err := readParquet(bytes.NewReader(buf.Bytes()), "codec.parquet", nil)
		if err != nil {
			t.Fatalf("%v: %v", c, err)
		}
		if got := frameDigest(f); want == "" {
			want = got
		} else if got != want {
			t.Errorf("%v: digest %s, uncompressed %s", c, got, want)
		}
	}
}
