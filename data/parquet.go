// Copyright ©2026 The exactmh Authors. All rights reserved.
// Use of this source code is governed by a BSD-style
// license that can be found in the LICENSE file.

package data

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"sync"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/ipc"
	"github.com/apache/arrow-go/v18/parquet"
	"github.com/apache/arrow-go/v18/parquet/file"
	"github.com/apache/arrow-go/v18/parquet/pqarrow"
)

// readSource is what the readers read from: an *os.File, or a
// *bytes.Reader in the fuzz tests.
type readSource interface {
	io.Reader
	io.ReaderAt
	io.Seeker
}

// batchRows is how many rows a Parquet read decodes at a time.
const batchRows = 1 << 16

// ReadParquet reads a Parquet file (any compression arrow-go supports:
// Snappy, gzip, Brotli, LZ4, zstd) through Apache Arrow, column by column in
// batches of 65,536 rows. Nulls are missing values. With opt.Columns nil,
// columns of types the package does not read (lists, structs, binary,
// decimals…) are left out; named in opt.Columns they are an error saying
// why. A truncated or corrupted file is an error, never a panic.
func ReadParquet(path string, opt *ReadOptions) (*Frame, error) {
	src := filepath.Base(path)
	if err := opt.check(src); err != nil {
		return nil, err
	}
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("data: %w", err)
	}
	defer f.Close()
	return readParquet(f, src, opt)
}

// readParquet reads Parquet from r; src names it in messages. Every call
// into arrow-go is guarded: a panic on malformed input becomes an error.
func readParquet(r readSource, src string, opt *ReadOptions) (fr *Frame, err error) {
	defer func() {
		if p := recover(); p != nil {
			fr, err = nil, fmt.Errorf("data: %s: not a readable Parquet file (arrow-go: %v)", src, p)
		}
	}()
	size, err := r.Seek(0, io.SeekEnd)
	if err != nil {
		return nil, fmt.Errorf("data: %s: %v", src, err)
	}
	mem := newCappedAllocator(size)
	pf, err := file.NewParquetReader(r, file.WithReadProps(parquet.NewReaderProperties(mem)))
	if err != nil {
		return nil, fmt.Errorf("data: %s: not a readable Parquet file: %v", src, err)
	}
	defer pf.Close()
	props := pqarrow.ArrowReadProperties{BatchSize: batchRows} // Parallel false: a panic in another goroutine could not be recovered
	rd, err := pqarrow.NewFileReader(pf, props, mem)
	if err != nil {
		return nil, fmt.Errorf("data: %s: Parquet schema: %v", src, err)
	}
	// Strings are read dictionary-encoded, as Parquet stores them: codes
	// and a small dictionary per batch rather than a string per row.
	dict := false
	for _, fd := range rd.Manifest.Fields {
		if fd.IsLeaf() && (fd.Field.Type.ID() == arrow.STRING || fd.Field.Type.ID() == arrow.LARGE_STRING) {
			props.SetReadDict(fd.ColIndex, true)
			dict = true
		}
	}
	if dict {
		if rd, err = pqarrow.NewFileReader(pf, props, mem); err != nil {
			return nil, fmt.Errorf("data: %s: Parquet schema: %v", src, err)
		}
	}
	fields := rd.Manifest.Fields
	names := make([]string, len(fields))
	for j, fd := range fields {
		names[j] = fd.Field.Name
	}
	sel, err := selectColumns(src, names, opt.columns())
	if err != nil {
		return nil, err
	}
	// Leave out what cannot be read unless it was asked for by name.
	var fieldIdx []int
	var builders []*arrowBuilder
	limit := opt.limit()
	total := int(min(pf.NumRows(), int64(limit), 64*size+1024)) // a capacity hint
	for _, j := range sel {
		fd := fields[j]
		_, ok := arrowColumnType(fd.Field.Type)
		if !ok || !fd.IsLeaf() {
			if opt.columns() == nil {
				continue
			}
			return nil, fmt.Errorf("data: %s: column %q has type %s, which this package does not read (want integers, floats, booleans, timestamps, dates or strings)", src, fd.Field.Name, fd.Field.Type)
		}
		b, err := newArrowBuilder(src, *fd.Field, total)
		if err != nil {
			return nil, err
		}
		fieldIdx = append(fieldIdx, j)
		builders = append(builders, b)
	}
	out := &Frame{source: src}
	if len(builders) == 0 {
		return out, nil
	}
	// Only the row groups the limit needs.
	var groups []int
	need := int64(limit)
	for g := 0; g < pf.NumRowGroups() && need > 0; g++ {
		groups = append(groups, g)
		need -= pf.MetaData().RowGroup(g).NumRows()
	}
	if len(groups) == 0 {
		return finishArrow(out, builders, 0), nil
	}
	// Each column is read on its own — the record reader would need the
	// columns' chunks to line up — and the columns in parallel, as
	// pqarrow's Parallel option does (the readers made first, then read
	// concurrently), but each goroutine with its own recover.
	ctx := context.Background()
	readers := make([]*pqarrow.ColumnReader, len(builders))
	for k, b := range builders {
		j := fieldIdx[k]
		if readers[k], err = rd.GetFieldReader(ctx, j, map[int]bool{fields[j].ColIndex: true}, groups); err != nil {
			return nil, fmt.Errorf("data: %s: column %q: %v", src, b.col.name, err)
		}
	}
	errs := make([]error, len(builders))
	sem := make(chan struct{}, runtime.GOMAXPROCS(0))
	var wg sync.WaitGroup
	for k := range builders {
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer wg.Done()
			defer func() { <-sem }()
			errs[k] = readColumn(readers[k], builders[k], limit)
		}()
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			return nil, err // the first column's
		}
	}
	n := builders[0].n
	for _, b := range builders[1:] {
		if b.n != n {
			return nil, fmt.Errorf("data: %s: column %q has %d rows, column %q %d", src, builders[0].col.name, n, b.col.name, b.n)
		}
	}
	if want := int(min(pf.NumRows(), int64(limit))); n != want {
		return nil, fmt.Errorf("data: %s: %d rows read, the metadata says %d", src, n, want)
	}
	return finishArrow(out, builders, n), nil
}

// readColumn reads one column's batches into b, up to limit rows.
func readColumn(cr *pqarrow.ColumnReader, b *arrowBuilder, limit int) (err error) {
	defer func() {
		if p := recover(); p != nil {
			err = fmt.Errorf("data: %s: column %q near row %d: not a readable Parquet file (arrow-go: %v)", b.src, b.col.name, b.n+1, p)
		}
	}()
	for b.n < limit {
		chunked, err := cr.NextBatch(batchRows)
		if err != nil {
			return fmt.Errorf("data: %s: column %q near row %d: %v", b.src, b.col.name, b.n+1, err)
		}
		got := 0
		for _, arr := range chunked.Chunks() {
			got += arr.Len()
			if err := b.appendArray(arr, limit-b.n); err != nil {
				chunked.Release()
				return err
			}
		}
		chunked.Release()
		if got == 0 {
			break
		}
	}
	return nil
}

// finishArrow stores the builders' columns in the Frame.
func finishArrow(f *Frame, builders []*arrowBuilder, n int) *Frame {
	f.n = n
	for _, b := range builders {
		f.cols = append(f.cols, b.finish())
	}
	return f
}

// ReadArrow reads an Arrow IPC file: the file format (what .arrow and
// Feather version 2 files are, starting with "ARROW1") or the stream
// format, told apart by the magic bytes. Nulls are missing values. Columns
// of types the package does not read are left out unless named in
// opt.Columns (then an error). A truncated or corrupted file is an error,
// never a panic.
func ReadArrow(path string, opt *ReadOptions) (*Frame, error) {
	src := filepath.Base(path)
	if err := opt.check(src); err != nil {
		return nil, err
	}
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("data: %w", err)
	}
	defer f.Close()
	return readArrow(f, src, opt)
}

var arrowMagic = []byte("ARROW1")

// readArrow reads the IPC file or stream format from r.
func readArrow(r readSource, src string, opt *ReadOptions) (fr *Frame, err error) {
	defer func() {
		if p := recover(); p != nil {
			fr, err = nil, fmt.Errorf("data: %s: not a readable Arrow IPC file (arrow-go: %v)", src, p)
		}
	}()
	head := make([]byte, 8)
	k, _ := r.ReadAt(head, 0)
	head = head[:k]
	if bytes.HasPrefix(head, []byte("FEA1")) {
		return nil, fmt.Errorf("data: %s: a Feather version 1 file; only Feather version 2 (Arrow IPC) is read: rewrite it with pyarrow.feather.write_feather(…, version=2)", src)
	}
	size, err := r.Seek(0, io.SeekEnd)
	if err != nil {
		return nil, fmt.Errorf("data: %s: %v", src, err)
	}
	isFile := bytes.HasPrefix(head, arrowMagic)
	if err := checkIPC(r, size, isFile); err != nil {
		return nil, fmt.Errorf("data: %s: not a readable Arrow IPC file: %v", src, err)
	}
	if _, err := r.Seek(0, io.SeekStart); err != nil {
		return nil, fmt.Errorf("data: %w", err)
	}
	mem := newCappedAllocator(size)
	opts := []ipc.Option{ipc.WithAllocator(mem), ipc.WithMetadataSizeLimit(size), ipc.WithBodySizeLimit(size)}
	var (
		schema *arrow.Schema
		next   func() (arrow.RecordBatch, error) // nil, io.EOF at the end
	)
	if isFile {
		fr, err := ipc.NewFileReader(r, opts...)
		if err != nil {
			return nil, fmt.Errorf("data: %s: not a readable Arrow IPC file: %v", src, err)
		}
		defer fr.Close()
		schema = fr.Schema()
		i := 0
		next = func() (arrow.RecordBatch, error) {
			if i >= fr.NumRecords() {
				return nil, io.EOF
			}
			rec, err := fr.RecordBatch(i)
			i++
			return rec, err // owned by the reader
		}
	} else {
		sr, err := ipc.NewReader(bufio.NewReader(r), opts...)
		if err != nil {
			return nil, fmt.Errorf("data: %s: not a readable Arrow IPC file or stream: %v", src, err)
		}
		defer sr.Release()
		schema = sr.Schema()
		next = func() (arrow.RecordBatch, error) {
			if sr.Next() {
				return sr.RecordBatch(), nil
			}
			if err := sr.Err(); err != nil {
				return nil, err
			}
			return nil, io.EOF
		}
	}
	fields := schema.Fields()
	names := make([]string, len(fields))
	for j, fd := range fields {
		names[j] = fd.Name
	}
	sel, err := selectColumns(src, names, opt.columns())
	if err != nil {
		return nil, err
	}
	var idx []int
	var builders []*arrowBuilder
	for _, j := range sel {
		if _, ok := arrowColumnType(fields[j].Type); !ok && opt.columns() == nil {
			continue
		}
		b, err := newArrowBuilder(src, fields[j], 0)
		if err != nil {
			return nil, err
		}
		idx = append(idx, j)
		builders = append(builders, b)
	}
	out := &Frame{source: src}
	limit := opt.limit()
	n := 0
	for n < limit {
		rec, err := next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, fmt.Errorf("data: %s: record batch after row %d: %v", src, n, err)
		}
		if rec.NumCols() != int64(len(fields)) {
			return nil, fmt.Errorf("data: %s: a record batch after row %d has %d columns, the schema %d", src, n, rec.NumCols(), len(fields))
		}
		m := int(min(rec.NumRows(), int64(limit-n)))
		for k, b := range builders {
			col := rec.Column(idx[k])
			if col.Len() < m {
				return nil, fmt.Errorf("data: %s: column %q has %d values in a record batch of %d rows after row %d", src, b.col.name, col.Len(), m, n)
			}
			if err := b.appendArray(col, m); err != nil {
				return nil, err
			}
		}
		n += m
	}
	return finishArrow(out, builders, n), nil
}
