// Copyright ©2026 The exactmh Authors. All rights reserved.
// Use of this source code is governed by a BSD-style
// license that can be found in the LICENSE file.

package data

import (
	"fmt"
	"path/filepath"

	"github.com/exactmh/exactmh/data/internal/colbuf"
)

// ReadArrow reads an Arrow IPC file: the file format (what .arrow and
// Feather version 2 files are, starting with "ARROW1") or the stream
// format, told apart by the magic bytes. Nulls are missing values. Columns
// of types the package does not read are left out unless named in
// opt.Columns (then an error). A truncated or corrupted file is an error,
// never a panic.
//
// The reader is registered by importing the package
// github.com/exactmh/exactmh/data/arrowipc for its side effect (the
// exactmh command does); without it ReadArrow returns an error saying so.
// It lives there so that programs that read Parquet or CSV do not build
// arrow-go (see Dependencies in the package documentation).
func ReadArrow(path string, opt *ReadOptions) (*Frame, error) {
	src := filepath.Base(path)
	if err := opt.check(src); err != nil {
		return nil, err
	}
	if colbuf.ReadArrow == nil {
		return nil, errNoArrow(src)
	}
	f, err := openRegular(path, src, false)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return readArrow(f, src, opt)
}

func errNoArrow(src string) error {
	return fmt.Errorf("data: %s: reading Arrow IPC files needs the reader registered: import _ \"github.com/exactmh/exactmh/data/arrowipc\" (the exactmh command does), or write the file as Parquet or CSV", src)
}

// readArrow reads Arrow IPC from r with the registered reader.
func readArrow(r readSource, src string, opt *ReadOptions) (*Frame, error) {
	if colbuf.ReadArrow == nil {
		return nil, errNoArrow(src)
	}
	cols, n, err := colbuf.ReadArrow(&colbuf.Request{
		R: r, Src: src, Columns: opt.columns(), Limit: opt.limit(),
		Select:    func(names []string) ([]int, error) { return selectColumns(src, names, opt.columns()) },
		Duplicate: duplicate,
	})
	if err != nil {
		return nil, err
	}
	f := &Frame{source: src, n: n}
	for _, c := range cols {
		f.cols = append(f.cols, &column{name: c.Name, typ: ColumnType(c.Type), f: c.F, i: c.I, codes: c.Codes, levels: c.Levels, miss: c.Miss})
	}
	return f, nil
}
