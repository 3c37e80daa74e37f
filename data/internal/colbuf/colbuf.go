// Copyright ©2026 The exactmh Authors. All rights reserved.
// Use of this source code is governed by a BSD-style
// license that can be found in the LICENSE file.

// Package colbuf connects package data with the readers registered from
// its sub-packages (data/arrowipc): the columns a reader returns and the
// hook it sets. Package data converts the columns into a Frame.
package colbuf

import "io"

// The column types, numbered as package data's ColumnType.
const (
	Float  = 0 // F
	Int    = 1 // I
	Bool   = 2 // I, 0 or 1
	Time   = 3 // I, microseconds since 1970-01-01 00:00 of the wall clock
	String = 4 // Codes into Levels
)

// Column is one column read: exactly one of the value slices is used,
// according to Type; Miss is nil when no value is missing.
type Column struct {
	Name   string
	Type   int
	F      []float64
	I      []int64
	Codes  []int32
	Levels []string
	Miss   []bool
}

// Source is what a reader reads from.
type Source interface {
	io.Reader
	io.ReaderAt
	io.Seeker
}

// Request is one read: the file, its base name for messages, and the
// options, with package data's column selection (its messages name the
// columns the file has) and duplicate check.
type Request struct {
	R         Source
	Src       string
	Columns   []string // nil: every column of a type data reads
	Limit     int      // the most rows to read
	Select    func(names []string) ([]int, error)
	Duplicate func(names []string, j int) int // another column of names[j]'s name, or -1
}

// ReadArrow reads an Arrow IPC file or stream; package data/arrowipc sets
// it, and package data's ReadArrow refuses to read without it. It returns
// the columns and the number of rows.
var ReadArrow func(req *Request) ([]*Column, int, error)

// ScaleMicros converts v in a time unit to microseconds: v·mul, or v/div
// floored toward −∞ (nanoseconds).
func ScaleMicros(v, mul, div int64) int64 {
	if div != 1 {
		q := v / div
		if v%div < 0 {
			q--
		}
		return q
	}
	return v * mul
}
