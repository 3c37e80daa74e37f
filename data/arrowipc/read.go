// Copyright ©2026 The exactmh Authors. All rights reserved.
// Use of this source code is governed by a BSD-style
// license that can be found in the LICENSE file.

// Package arrowipc makes package data read Arrow IPC files: the file
// format (what .arrow and Feather version 2 files are) and the stream
// format, with apache/arrow-go. Import it for its side effect, as
// image/png registers a decoder:
//
//	import _ "github.com/exactmh/exactmh/data/arrowipc"
//
// after which data.ReadArrow, and data.ReadFile on .arrow, .feather, .ipc
// and .arrows files, read them; without it they return an error naming
// this import. The exactmh command imports it. It is a package of its
// own so that a program reading Parquet or CSV (the quickstart) does not
// download and build arrow-go and its codecs (see package data's
// documentation on dependencies).
//
// A truncated or corrupted file is an error, never a panic: the
// flatbuffers of the file are checked before arrow-go reads them
// (ipccheck.go), every call into arrow-go is guarded by recover, and
// arrow-go allocates through a capped allocator (alloc.go).
package arrowipc

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/ipc"
	"github.com/exactmh/exactmh/data/internal/colbuf"
)

func init() { colbuf.ReadArrow = read }

var arrowMagic = []byte("ARROW1")

// read reads the IPC file or stream format of req.
func read(req *colbuf.Request) (cols []*colbuf.Column, rows int, err error) {
	r, src := req.R, req.Src
	defer func() {
		if p := recover(); p != nil {
			cols, rows, err = nil, 0, fmt.Errorf("data: %s: not a readable Arrow IPC file (arrow-go: %v)", src, p)
		}
	}()
	head := make([]byte, 8)
	k, _ := r.ReadAt(head, 0)
	head = head[:k]
	if bytes.HasPrefix(head, []byte("FEA1")) {
		return nil, 0, fmt.Errorf("data: %s: a Feather version 1 file; only Feather version 2 (Arrow IPC) is read: rewrite it with pyarrow.feather.write_feather(…, version=2)", src)
	}
	size, err := r.Seek(0, io.SeekEnd)
	if err != nil {
		return nil, 0, fmt.Errorf("data: %s: %v", src, err)
	}
	isFile := bytes.HasPrefix(head, arrowMagic)
	if err := checkIPC(r, size, isFile); err != nil {
		return nil, 0, fmt.Errorf("data: %s: not a readable Arrow IPC file: %v", src, err)
	}
	if _, err := r.Seek(0, io.SeekStart); err != nil {
		return nil, 0, fmt.Errorf("data: %w", err)
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
			return nil, 0, fmt.Errorf("data: %s: not a readable Arrow IPC file: %v", src, err)
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
			return nil, 0, fmt.Errorf("data: %s: not a readable Arrow IPC file or stream: %v", src, err)
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
	sel, err := req.Select(names)
	if err != nil {
		return nil, 0, err
	}
	var idx []int
	var builders []*arrowBuilder
	for _, j := range sel {
		if k := req.Duplicate(names, j); k >= 0 {
			return nil, 0, fmt.Errorf("data: %s: columns %d and %d are both named %q: which one a term means is ambiguous", src, min(j, k)+1, max(j, k)+1, names[j])
		}
		if _, ok := arrowColumnType(fields[j].Type); !ok && req.Columns == nil {
			continue
		}
		b, err := newArrowBuilder(src, fields[j], 0)
		if err != nil {
			return nil, 0, err
		}
		idx = append(idx, j)
		builders = append(builders, b)
	}
	limit := req.Limit
	n := 0
	for n < limit {
		rec, err := next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, 0, fmt.Errorf("data: %s: record batch after row %d: %v", src, n, err)
		}
		if rec.NumCols() != int64(len(fields)) {
			return nil, 0, fmt.Errorf("data: %s: a record batch after row %d has %d columns, the schema %d", src, n, rec.NumCols(), len(fields))
		}
		m := int(min(rec.NumRows(), int64(limit-n)))
		for k, b := range builders {
			col := rec.Column(idx[k])
			if col.Len() < m {
				return nil, 0, fmt.Errorf("data: %s: column %q has %d values in a record batch of %d rows after row %d", src, b.col.Name, col.Len(), m, n)
			}
			if err := b.appendArray(col, m); err != nil {
				return nil, 0, err
			}
		}
		n += m
	}
	for _, b := range builders {
		cols = append(cols, b.finish())
	}
	return cols, n, nil
}
