// Copyright ©2026 The exactmh Authors. All rights reserved.
// Use of this source code is governed by a BSD-style
// license that can be found in the LICENSE file.

package data

import (
	"bytes"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/ipc"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/arrow-go/v18/parquet"
	"github.com/apache/arrow-go/v18/parquet/compress"
	"github.com/apache/arrow-go/v18/parquet/pqarrow"
)

// go test -run TestGenerateTestdata -update ./data rewrites testdata/.
var update = flag.Bool("update", false, "rewrite the files in testdata/")

// small is the table behind testdata/small.{parquet,arrow,arrows,csv}:
// twelve flights with known weekdays, months and hours.
type smallRow struct {
	date        string // "2006-01-02 15:04:05", UTC wall clock
	delay       int64
	distance    int64
	origin      string
	destination string
	load        float64
	late        bool
}

var small = []smallRow{
	{"2024-01-01 08:00:00", -3, 500, "ORD", "ATL", 0.81, false},  // Mon Jan
	{"2024-01-02 13:30:00", 20, 1200, "ATL", "ORD", 0.92, true},  // Tue
	{"2024-01-03 18:45:00", 45, 300, "DFW", "ORD", 0.55, true},   // Wed
	{"2024-02-01 06:15:00", 0, 800, "ORD", "DFW", 0.60, false},   // Thu Feb
	{"2024-02-02 22:00:00", 16, 2500, "SEA", "BOS", 0.99, true},  // Fri
	{"2024-03-02 00:00:00", 15, 700, "ATL", "SEA", 0.47, false},  // Sat Mar
	{"2024-03-03 12:00:00", 90, 950, "ORD", "ATL", 0.73, true},   // Sun
	{"2024-01-08 09:10:00", -10, 400, "DFW", "ATL", 0.66, false}, // Mon
	{"2024-02-05 17:20:30", 30, 1800, "ORD", "SEA", 0.88, true},  // Mon
	{"2024-03-05 11:05:00", 5, 650, "BOS", "ORD", 0.52, false},   // Tue
	{"2024-01-10 07:45:00", 2, 1100, "ATL", "DFW", 0.71, false},  // Wed
	{"2024-02-09 15:00:00", 60, 230, "DFW", "ORD", 0.95, true},   // Fri
}

func smallTime(t testing.TB, s string) time.Time {
	tm, err := time.Parse("2006-01-02 15:04:05", s)
	if err != nil {
		t.Fatal(err)
	}
	return tm
}

var smallSchema = arrow.NewSchema([]arrow.Field{
	{Name: "date", Type: &arrow.TimestampType{Unit: arrow.Microsecond}},
	{Name: "delay", Type: arrow.PrimitiveTypes.Int64},
	{Name: "distance", Type: arrow.PrimitiveTypes.Int64},
	{Name: "origin", Type: arrow.BinaryTypes.LargeString},
	{Name: "destination", Type: arrow.BinaryTypes.String},
	{Name: "load", Type: arrow.PrimitiveTypes.Float64, Nullable: true},
	{Name: "late", Type: arrow.FixedWidthTypes.Boolean},
}, nil)

// smallRecord builds the table as one record; null marks rows whose
// load is null (the missing-value files).
func smallRecord(t testing.TB, null map[int]bool) arrow.RecordBatch {
	b := array.NewRecordBuilder(memory.DefaultAllocator, smallSchema)
	defer b.Release()
	for r, row := range small {
		b.Field(0).(*array.TimestampBuilder).Append(arrow.Timestamp(smallTime(t, row.date).UnixMicro()))
		b.Field(1).(*array.Int64Builder).Append(row.delay)
		b.Field(2).(*array.Int64Builder).Append(row.distance)
		b.Field(3).(*array.LargeStringBuilder).Append(row.origin)
		b.Field(4).(*array.StringBuilder).Append(row.destination)
		if null[r] {
			b.Field(5).(*array.Float64Builder).AppendNull()
		} else {
			b.Field(5).(*array.Float64Builder).Append(row.load)
		}
		b.Field(6).(*array.BooleanBuilder).Append(row.late)
	}
	return b.NewRecordBatch()
}

// missingRows are the rows (0-based) whose load is missing in the
// missing.* files.
var missingRows = map[int]bool{2: true, 7: true}

func smallCSV(null map[int]bool) []byte {
	var buf bytes.Buffer
	buf.WriteString("date,delay,distance,origin,destination,load,late\n")
	for r, row := range small {
		load := strconv.FormatFloat(row.load, 'g', -1, 64)
		if null[r] {
			load = []string{"NA", ""}[r%2]
		}
		fmt.Fprintf(&buf, "%s,%d,%d,%s,%s,%s,%t\n", row.date, row.delay, row.distance, row.origin, row.destination, load, row.late)
	}
	return buf.Bytes()
}

func writeParquet(t testing.TB, rec arrow.RecordBatch, rowGroup int64) []byte {
	return writeParquetProps(t, rec, rowGroup, pqarrow.DefaultWriterProps())
}

// writeParquetProps is writeParquet with the given Arrow writer properties
// (pqarrow.WithStoreSchema keeps the Arrow schema in the file's metadata,
// as pyarrow does).
func writeParquetProps(t testing.TB, rec arrow.RecordBatch, rowGroup int64, arrowProps pqarrow.ArrowWriterProperties) []byte {
	var buf bytes.Buffer
	tbl := array.NewTableFromRecords(rec.Schema(), []arrow.RecordBatch{rec})
	defer tbl.Release()
	props := parquet.NewWriterProperties(parquet.WithCompression(compress.Codecs.Snappy), parquet.WithDictionaryDefault(true))
	if err := pqarrow.WriteTable(tbl, &buf, rowGroup, props, arrowProps); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

func writeIPC(t testing.TB, rec arrow.RecordBatch, stream bool) []byte {
	var buf bytes.Buffer
	// Two record batches, to exercise the appending.
	cut := min(5, rec.NumRows()/2)
	a, b := rec.NewSlice(0, cut), rec.NewSlice(cut, rec.NumRows())
	defer a.Release()
	defer b.Release()
	var w interface {
		Write(arrow.RecordBatch) error
		Close() error
	}
	if stream {
		w = ipc.NewWriter(&buf, ipc.WithSchema(rec.Schema()))
	} else {
		fw, err := ipc.NewFileWriter(&buf, ipc.WithSchema(rec.Schema()))
		if err != nil {
			t.Fatal(err)
		}
		w = fw
	}
	for _, r := range []arrow.RecordBatch{a, b} {
		if err := w.Write(r); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// testdataFiles are the generated files and their contents.
func testdataFiles(t testing.TB) map[string][]byte {
	rec := smallRecord(t, nil)
	defer rec.Release()
	miss := smallRecord(t, missingRows)
	defer miss.Release()
	return map[string][]byte{
		"small.parquet":   writeParquet(t, rec, 5), // three row groups
		"small.arrow":     writeIPC(t, rec, false),
		"small.arrows":    writeIPC(t, rec, true),
		"small.csv":       smallCSV(nil),
		"missing.parquet": writeParquet(t, miss, 100),
		"missing.arrow":   writeIPC(t, miss, false),
		"missing.csv":     smallCSV(missingRows),
	}
}

// TestGenerateTestdata checks the committed files against the generator
// (the CSV byte for byte; the binary files by their contents, since
// writers may change their bytes) and rewrites them with -update.
func TestGenerateTestdata(t *testing.T) {
	for name, content := range testdataFiles(t) {
		path := filepath.Join("testdata", name)
		if *update {
			if err := os.WriteFile(path, content, 0o644); err != nil {
				t.Fatal(err)
			}
			continue
		}
		got, err := os.ReadFile(path)
		if err != nil {
			t.Fatalf("%v (go test -run TestGenerateTestdata -update ./data writes it)", err)
		}
		if filepath.Ext(name) == ".csv" && !bytes.Equal(got, content) {
			t.Errorf("%s differs from the generator's (go test -run TestGenerateTestdata -update ./data rewrites it)", path)
		}
	}
}

// TestArrowTypes reads the other Arrow types a file may hold: a
// timestamp with a time zone (its local wall clock), seconds and
// nanoseconds, dates, 32-bit integers and floats, a dictionary-encoded
// string column and unsigned integers.
func TestArrowTypes(t *testing.T) {
	rec := typesRecord()
	defer rec.Release()
	for _, stream := range []bool{false, true} {
		f, err := readArrow(bytes.NewReader(writeIPC(t, rec, stream)), "types.arrow", nil)
		if err != nil {
			t.Fatal(err)
		}
		want := map[string][]string{
			"ny":   {"2024-07-01 08:00:00", "2024-01-15 07:00:00"},
			"ns":   {"2024-07-01 12:00:00.000001", "2024-01-15 12:00:00.000001"},
			"day":  {"2024-07-01 00:00:00", "2024-01-15 00:00:00"},
			"i32":  {"200", "0"},
			"f32":  {"1.5", "1.5"},
			"u16":  {"65535", "65535"},
			"code": {"b", ""},
		}
		for name, w := range want {
			got, err := f.Strings(name)
			if err != nil || !slices.Equal(got, w) {
				t.Errorf("stream %v: %s = %q, %v; want %q", stream, name, got, err, w)
			}
		}
		if _, err := (Spec{Response: Num("i32"), Terms: []Term{Categorical("code")}}).Build(f); err == nil || !strings.Contains(err.Error(), `row 2, column "code": missing value`) {
			t.Errorf("missing dictionary value: %v", err)
		}
	}
	_, err := readArrow(bytes.NewReader([]byte("FEA1\x00\x00\x00\x00")), "old.feather", nil)
	if err == nil || !strings.Contains(err.Error(), "Feather version 1") {
		t.Errorf("Feather v1: %v", err)
	}
}

// typesRecord is the record TestArrowTypes and TestParquetTypes read:
// two rows of seven columns of other types.
func typesRecord() arrow.RecordBatch {
	schema := arrow.NewSchema([]arrow.Field{
		{Name: "ny", Type: &arrow.TimestampType{Unit: arrow.Second, TimeZone: "America/New_York"}},
		{Name: "ns", Type: &arrow.TimestampType{Unit: arrow.Nanosecond}},
		{Name: "day", Type: arrow.FixedWidthTypes.Date32},
		{Name: "i32", Type: arrow.PrimitiveTypes.Int32},
		{Name: "f32", Type: arrow.PrimitiveTypes.Float32},
		{Name: "u16", Type: arrow.PrimitiveTypes.Uint16},
		{Name: "code", Type: &arrow.DictionaryType{IndexType: arrow.PrimitiveTypes.Int8, ValueType: arrow.BinaryTypes.String}},
	}, nil)
	b := array.NewRecordBuilder(memory.DefaultAllocator, schema)
	defer b.Release()
	// 2024-07-01 12:00 UTC is 08:00 in New York (EDT); 2024-01-15 12:00
	// UTC is 07:00 (EST).
	for _, s := range []int64{1719835200, 1705320000} {
		b.Field(0).(*array.TimestampBuilder).Append(arrow.Timestamp(s))
		b.Field(1).(*array.TimestampBuilder).Append(arrow.Timestamp(s*1e9 + 1500))
		b.Field(2).(*array.Date32Builder).Append(arrow.Date32(s / 86400))
		b.Field(3).(*array.Int32Builder).Append(int32(s % 1000))
		b.Field(4).(*array.Float32Builder).Append(1.5)
		b.Field(5).(*array.Uint16Builder).Append(65535)
	}
	db := b.Field(6).(*array.BinaryDictionaryBuilder)
	db.AppendString("b")
	db.AppendNull()
	return b.NewRecordBatch()
}
