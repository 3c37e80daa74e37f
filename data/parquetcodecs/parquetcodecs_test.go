// Copyright ©2026 The exactmh Authors. All rights reserved.
// Use of this source code is governed by a BSD-style
// license that can be found in the LICENSE file.

package parquetcodecs_test

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/parquet"
	"github.com/apache/arrow-go/v18/parquet/compress"
	"github.com/apache/arrow-go/v18/parquet/pqarrow"
	"github.com/exactmh/exactmh/data"
	_ "github.com/exactmh/exactmh/data/parquetcodecs"
)

// TestCodecs rewrites testdata's small.parquet with Brotli and LZ4_RAW
// and checks that the Frames equal the Snappy file's, column by column.
func TestCodecs(t *testing.T) {
	src := filepath.Join("..", "testdata", "small.parquet")
	want, err := data.ReadParquet(src, nil)
	if err != nil {
		t.Fatal(err)
	}
	tbl, err := pqarrow.ReadTable(t.Context(), mustOpen(t, src), nil, pqarrow.ArrowReadProperties{}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer tbl.Release()
	for _, c := range []compress.Compression{compress.Codecs.Brotli, compress.Codecs.Lz4Raw} {
		var buf bytes.Buffer
		props := parquet.NewWriterProperties(parquet.WithCompression(c), parquet.WithDictionaryDefault(true))
		if err := pqarrow.WriteTable(tbl, &buf, 5, props, pqarrow.DefaultWriterProps()); err != nil {
			t.Fatal(err)
		}
		path := filepath.Join(t.TempDir(), "codec.parquet")
		if err := os.WriteFile(path, buf.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
		got, err := data.ReadParquet(path, nil)
		if err != nil {
			t.Fatalf("%v: %v", c, err)
		}
		if got.Len() != want.Len() {
			t.Fatalf("%v: %d rows, want %d", c, got.Len(), want.Len())
		}
		for _, col := range want.Columns() {
			w, err1 := want.Strings(col.Name)
			g, err2 := got.Strings(col.Name)
			if err1 != nil || err2 != nil || strings.Join(g, "\x00") != strings.Join(w, "\x00") {
				t.Errorf("%v: column %s = %q (%v), want %q (%v)", c, col.Name, g, err2, w, err1)
			}
		}
	}
}

func mustOpen(t *testing.T, path string) *bytes.Reader {
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return bytes.NewReader(b)
}
