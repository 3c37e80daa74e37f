// Copyright ©2026 The exactmh Authors. All rights reserved.
// Use of this source code is governed by a BSD-style
// license that can be found in the LICENSE file.

package data

import (
	"context"
	"fmt"
	"math"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"gonum.org/v1/gonum/mat"
)

// ColumnType is the type of a Frame's column.
type ColumnType int

// The column types. Every file type maps onto one of these: Arrow and
// Parquet integers (signed and unsigned) are Int, floating point numbers
// Float, booleans Bool, timestamps and dates Time, strings (also large,
// view and dictionary-encoded strings) String.
const (
	Float  ColumnType = iota // float64
	Int                      // int64
	Bool                     // true or false
	Time                     // a wall-clock time, microseconds since 1970-01-01 00:00
	String                   // text; stored as codes into its distinct values
)

// String returns the type's name: "float", "int", "bool", "time" or
// "string".
func (t ColumnType) String() string {
	switch t {
	case Float:
		return "float"
	case Int:
		return "int"
	case Bool:
		return "bool"
	case Time:
		return "time"
	case String:
		return "string"
	}
	return "ColumnType(" + strconv.Itoa(int(t)) + ")"
}

// Column describes one column of a Frame.
type Column struct {
	Name string     // as in the file's header or schema
	Type ColumnType // the type the values are held as
}

// Frame is a table of named columns read from a file or a matrix. Each
// column is held in one typed slice (not as interface values), so building
// a design from millions of rows costs a few passes over plain memory.
// A Frame is immutable; it is safe to build several designs from one
// Frame concurrently.
type Frame struct {
	source string // the file's base name, or "matrix", for messages
	n      int
	cols   []*column
}

// column is one column: exactly one of the value slices is used, according
// to typ. miss is nil when no value is missing.
type column struct {
	name   string
	typ    ColumnType
	f      []float64 // Float
	i      []int64   // Int, Bool (0 or 1) and Time (µs since the epoch, wall clock)
	codes  []int32   // String: index into levels
	levels []string  // String: the distinct values, in order of first appearance
	miss   []bool    // true where the value is missing (null, empty, NA, NaN in CSV)
	note   string    // why a CSV column is not numeric, for messages
}

// Len returns the number of rows.
func (f *Frame) Len() int { return f.n }

// Source returns the base name of the file the Frame was read from
// ("matrix" for FromMatrix), the name error messages use.
func (f *Frame) Source() string { return f.source }

// Columns returns the columns' names and types, in order.
func (f *Frame) Columns() []Column {
	out := make([]Column, len(f.cols))
	for j, c := range f.cols {
		out[j] = Column{Name: c.name, Type: c.typ}
	}
	return out
}

// Float64s returns a copy of a numeric column (Float, Int or Bool; a Time
// column in microseconds since 1970-01-01 00:00 of its wall clock) as
// float64, with NaN where a value is missing.
func (f *Frame) Float64s(name string) ([]float64, error) {
	c, err := f.column(name)
	if err != nil {
		return nil, err
	}
	out := make([]float64, f.n)
	switch c.typ {
	case Float:
		copy(out, c.f)
	case Int, Bool, Time:
		for r, v := range c.i {
			out[r] = float64(v)
		}
	default:
		return nil, fmt.Errorf("data: %s: column %q is %s, not numeric", f.source, name, c.typ)
	}
	for r, m := range c.miss {
		if m {
			out[r] = math.NaN()
		}
	}
	return out, nil
}

// Strings returns a copy of a column as text, with "" where a value is
// missing: a String column as read, any other formatted (times as
// "2006-01-02 15:04:05.999999", booleans as "true" and "false").
func (f *Frame) Strings(name string) ([]string, error) {
	c, err := f.column(name)
	if err != nil {
		return nil, err
	}
	out := make([]string, f.n)
	for r := range out {
		if c.miss != nil && c.miss[r] {
			continue
		}
		out[r] = c.format(r)
	}
	return out, nil
}

// format formats the value in row r.
func (c *column) format(r int) string {
	switch c.typ {
	case Float:
		return strconv.FormatFloat(c.f[r], 'g', -1, 64)
	case Int:
		return strconv.FormatInt(c.i[r], 10)
	case Bool:
		return strconv.FormatBool(c.i[r] != 0)
	case Time:
		return formatMicros(c.i[r])
	case String:
		return c.levels[c.codes[r]]
	}
	return ""
}

// column finds a column by name; the error lists the Frame's columns.
func (f *Frame) column(name string) (*column, error) {
	for _, c := range f.cols {
		if c.name == name {
			return c, nil
		}
	}
	return nil, fmt.Errorf("data: %s: no column %q (columns: %s)", f.source, name, f.columnList())
}

// columnList is the column names for messages, at most 20 of them.
func (f *Frame) columnList() string {
	names := make([]string, len(f.cols))
	for j, c := range f.cols {
		names[j] = c.name
	}
	return nameList(names, 20)
}

// nameList quotes up to max names, saying how many more there are.
func nameList(names []string, max int) string {
	var b strings.Builder
	for j, n := range names {
		if j == max {
			fmt.Fprintf(&b, " … (%d more)", len(names)-max)
			break
		}
		if j > 0 {
			b.WriteString(", ")
		}
		b.WriteString(strconv.Quote(n))
	}
	if len(names) == 0 {
		b.WriteString("none")
	}
	return b.String()
}

// FromMatrix makes a Frame of Float columns from a matrix already in
// memory, one column per column of m, named by names (nil: "x1", "x2", …).
// The values are copied. NaN in m is a missing value.
func FromMatrix(m mat.Matrix, names []string) (*Frame, error) {
	if m == nil {
		return nil, fmt.Errorf("data: FromMatrix: nil matrix")
	}
	r, c := m.Dims()
	if names == nil {
		names = make([]string, c)
		for j := range names {
			names[j] = "x" + strconv.Itoa(j+1)
		}
	}
	if len(names) != c {
		return nil, fmt.Errorf("data: FromMatrix: %d names for a %d×%d matrix's %d columns", len(names), r, c, c)
	}
	f := &Frame{source: "matrix", n: r}
	for j, name := range names {
		if name == "" {
			return nil, fmt.Errorf("data: FromMatrix: names[%d] is empty", j)
		}
		if k := slices.Index(names[:j], name); k >= 0 {
			return nil, fmt.Errorf("data: FromMatrix: names[%d] and names[%d] are both %q", k, j, name)
		}
		col := &column{name: name, typ: Float, f: make([]float64, r)}
		for i := range col.f {
			v := m.At(i, j)
			col.f[i] = v
			if math.IsNaN(v) {
				if col.miss == nil {
					col.miss = make([]bool, r)
				}
				col.miss[i] = true
			}
		}
		f.cols = append(f.cols, col)
	}
	return f, nil
}

// ReadOptions select what a reader reads. A nil *ReadOptions reads
// everything.
type ReadOptions struct {
	// Columns are the columns to read, in the order the Frame will have
	// them (nil: all of the file's, in its order). A name the file does not
	// have is an error naming the file and the columns it has.
	Columns []string
	// Limit is the most rows to read, from the start (0: all). Negative is
	// an error. Set it for a file you do not trust: memory grows with the
	// rows a file holds, and the readers refuse, before reading, a file
	// that declares more rows than memory holds.
	Limit int
	// Special lets ReadCSV read what is not a regular file: a named pipe,
	// a device, /dev/stdin. Without it every reader refuses such a file,
	// which has no size to check and may never end. Lines are capped at
	// 64 MiB either way.
	Special bool

	// ctx, set by ReadFileContext, stops a read once cancelled.
	ctx context.Context
}

// stopped returns the error of the read's context (ReadFileContext) once
// it is cancelled, else nil.
func (o *ReadOptions) stopped() error {
	if o == nil || o.ctx == nil {
		return nil
	}
	return o.ctx.Err()
}

// ReadFileContext is ReadFile, stopped once ctx is cancelled with an error
// wrapping ctx's: the CSV reader polls ctx every 1,024 rows, the Parquet
// reader before each row group of each column, the Arrow reader when it
// has read (TestReadFileContextStops).
func ReadFileContext(ctx context.Context, path string, opt *ReadOptions) (*Frame, error) {
	var o ReadOptions
	if opt != nil {
		o = *opt
	}
	o.ctx = ctx
	f, err := ReadFile(path, &o)
	if err == nil && ctx.Err() != nil {
		return nil, fmt.Errorf("data: %s: %w", filepath.Base(path), ctx.Err())
	}
	return f, err
}

func (o *ReadOptions) special() bool { return o != nil && o.Special }

func (o *ReadOptions) columns() []string {
	if o == nil {
		return nil
	}
	return o.Columns
}

func (o *ReadOptions) limit() int {
	if o == nil || o.Limit <= 0 {
		return math.MaxInt
	}
	return o.Limit
}

// check validates the options for file src.
func (o *ReadOptions) check(src string) error {
	if o == nil {
		return nil
	}
	if o.Limit < 0 {
		return fmt.Errorf("data: %s: ReadOptions.Limit = %d, want ≥ 0 (0: all rows)", src, o.Limit)
	}
	for j, name := range o.Columns {
		if k := slices.Index(o.Columns[:j], name); k >= 0 {
			return fmt.Errorf("data: %s: ReadOptions.Columns[%d] and [%d] are both %q", src, k, j, name)
		}
	}
	return nil
}

// selectColumns maps the requested names (nil: all) onto the indices of
// have; a missing name is an error naming the file and its columns.
func selectColumns(src string, have []string, want []string) ([]int, error) {
	if want == nil {
		idx := make([]int, len(have))
		for j := range idx {
			idx[j] = j
		}
		return idx, nil
	}
	idx := make([]int, len(want))
	var missing []string
	for j, name := range want {
		idx[j] = slices.Index(have, name)
		if idx[j] < 0 {
			missing = append(missing, name)
		}
	}
	if len(missing) > 0 {
		word := "column"
		if len(missing) > 1 {
			word = "columns"
		}
		return nil, fmt.Errorf("data: %s: no %s %s (the file has %s)", src, word, nameList(missing, 20), nameList(have, 50))
	}
	return idx, nil
}

// ReadFile reads a file by its extension (any case): .parquet, .parq and
// .pq with ReadParquet; .arrow, .feather, .ipc and .arrows (Arrow IPC,
// file or stream format) with ReadArrow; .csv and .txt (comma-separated)
// with ReadCSV. Any other extension is an error naming it.
func ReadFile(path string, opt *ReadOptions) (*Frame, error) {
	switch strings.ToLower(filepath.Ext(path)) {
	case ".parquet", ".parq", ".pq":
		return ReadParquet(path, opt)
	case ".arrow", ".feather", ".ipc", ".arrows":
		return ReadArrow(path, opt)
	case ".csv", ".txt":
		return ReadCSV(path, opt)
	}
	return nil, fmt.Errorf("data: %s: unknown extension %q (want .parquet, .arrow, .feather, .ipc, .arrows or .csv)", filepath.Base(path), filepath.Ext(path))
}

// setMissing marks row r of c missing, allocating the mask on first use.
func (c *column) setMissing(r, n int) {
	if c.miss == nil {
		c.miss = make([]bool, n)
	}
	c.miss[r] = true
}
