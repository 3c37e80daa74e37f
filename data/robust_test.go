// Copyright ©2026 The exactmh Authors. All rights reserved.
// Use of this source code is governed by a BSD-style
// license that can be found in the LICENSE file.

package data

import (
	"bytes"
	"context"
	"encoding/binary"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/arrow-go/v18/parquet/file"
	"github.com/apache/arrow-go/v18/parquet/metadata"
	"github.com/exactmh/exactmh/data/internal/colbuf"
)

// Hostile inputs: each test is a reproducer of a crash or a silent
// acceptance, kept as a regression test.

// ulimitEnv marks the test binary re-executed under an address-space
// limit by underUlimit.
const ulimitEnv = "EXACTMH_DATA_ULIMIT_CHILD"

// underUlimit reports whether the calling test's body should run: in the
// parent it re-executes the test binary, running only this test, under
// `ulimit -v kib` and fails the test if the child fails (a fatal "out of
// memory" included), returning false; in the child it returns true. An
// address-space limit makes an allocation the input drives fail where
// overcommit would let it pass. Skipped where bash or ulimit -v is not
// available.
func underUlimit(t *testing.T, kib int) bool {
	t.Helper()
	if os.Getenv(ulimitEnv) == "1" {
		return true
	}
	if raceEnabled {
		t.Skip("the race detector's shadow memory does not fit under ulimit -v")
	}
	bash, err := exec.LookPath("bash")
	if err != nil {
		t.Skipf("no bash to set ulimit -v: %v", err)
	}
	if err := exec.Command(bash, "-c", "ulimit -v 4000000").Run(); err != nil {
		t.Skipf("ulimit -v is not available: %v", err)
	}
	cmd := exec.Command(bash, "-c", `ulimit -v "$1" && exec "$2" -test.run="^$3\$" -test.v`, "bash", strconv.Itoa(kib), os.Args[0], t.Name())
	cmd.Env = append(os.Environ(), ulimitEnv+"=1")
	out, err := cmd.CombinedOutput()
	if err != nil || !bytes.Contains(out, []byte("--- PASS: "+t.Name())) {
		t.Fatalf("under ulimit -v %d KiB: %v\n%s", kib, err, out)
	}
	t.Logf("passed under ulimit -v %d KiB", kib)
	return false
}

// rewriteFooter returns the Parquet file b with its footer edited.
func rewriteFooter(t *testing.T, b []byte, edit func(md *metadata.FileMetaData)) []byte {
	t.Helper()
	pf, err := file.NewParquetReader(bytes.NewReader(b))
	if err != nil {
		t.Fatal(err)
	}
	md := pf.MetaData()
	edit(md)
	footer, err := md.Serialize(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	old := int(binary.LittleEndian.Uint32(b[len(b)-8:]))
	out := append([]byte{}, b[:len(b)-8-old]...)
	out = append(out, footer...)
	out = binary.LittleEndian.AppendUint32(out, uint32(len(footer)))
	return append(out, "PAR1"...)
}

func smallParquet(t *testing.T) []byte {
	b, err := os.ReadFile(filepath.Join("testdata", "small.parquet"))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// TestParquetChunkBeyondFile is issue 31 item 4: a footer whose column
// chunk claims 17 GB made arrow-go allocate the chunk in one slice, which
// kills the process under an address-space limit.
func TestParquetChunkBeyondFile(t *testing.T) {
	if !underUlimit(t, 1<<21) {
		return
	}
	for _, edit := range []func(cc *metadata.FileMetaData){
		func(md *metadata.FileMetaData) { md.RowGroups[0].Columns[1].MetaData.TotalCompressedSize = 17 << 30 },
		func(md *metadata.FileMetaData) {
			m := md.RowGroups[1].Columns[0].MetaData
			m.DataPageOffset, m.DictionaryPageOffset = 1<<40, nil
		},
		func(md *metadata.FileMetaData) { md.RowGroups[0].Columns[3].MetaData.TotalCompressedSize = -5 },
	} {
		b := rewriteFooter(t, smallParquet(t), edit)
		_, err := readParquet(bytes.NewReader(b), "bad.parquet", nil)
		if err == nil || !strings.Contains(err.Error(), "bad.parquet: row group") || !strings.Contains(err.Error(), "-byte file") {
			t.Errorf("a column chunk beyond the file: %v", err)
		}
	}
}

// TestParquetRowBomb is issue 31 item 3: a small file declaring 67
// million rows a row group is refused before anything is allocated for
// them, and with ReadOptions.Limit it is read as far as the limit.
func TestParquetRowBomb(t *testing.T) {
	if !underUlimit(t, 1<<21) {
		return
	}
	b := rewriteFooter(t, smallParquet(t), func(md *metadata.FileMetaData) {
		for _, rg := range md.RowGroups {
			rg.NumRows = 1 << 26
		}
		md.NumRows = 3 << 26
	})
	_, err := readParquet(bytes.NewReader(b), "bomb.parquet", nil)
	if err == nil || !strings.Contains(err.Error(), "rows × 7 columns the file declares") || !strings.Contains(err.Error(), "ReadOptions.Limit") {
		t.Errorf("declared rows beyond memory: %v", err)
	}
	// Under the limit the row groups' pages run out before their rows.
	_, err = readParquet(bytes.NewReader(b), "bomb.parquet", &ReadOptions{Limit: 100})
	if err == nil || !strings.Contains(err.Error(), "has 5 rows, the metadata says 100") {
		t.Errorf("declared rows the pages do not hold: %v", err)
	}
}

// TestRowsFitMessage checks the refusal's figures with the available
// memory set, without allocating.
func TestRowsFitMessage(t *testing.T) {
	old := availableMemory
	defer func() { availableMemory = old }()
	availableMemory = func() (float64, bool) { return 1 << 30, true }
	err := checkRowsFit("f.parquet", 100_000_000, 5)
	want := "data: f.parquet: reading the 100000000 rows × 5 columns the file declares takes 4.2 GiB, more than 70% of the 1.0 GiB of memory available"
	if err == nil || !strings.HasPrefix(err.Error(), want) {
		t.Errorf("got %v\nwant %s…", err, want)
	}
	if err := checkRowsFit("f.parquet", 1000, 5); err != nil {
		t.Error(err)
	}
}

// idFrame is a Frame of n rows with a per-row identifier column "id"
// (Int) and a response "y".
func idFrame(n int) *Frame {
	id := &column{name: "id", typ: Int, i: make([]int64, n)}
	y := &column{name: "y", typ: Float, f: make([]float64, n)}
	for r := range n {
		id.i[r] = int64(r)
		y.f[r] = float64(r % 2)
	}
	return &Frame{source: "ids.csv", n: n, cols: []*column{y, id}}
}

// TestCategoricalIdentifier is issue 31 item 1: Categorical on a per-row
// identifier of 30,000 rows asked for 30,000 × 30,000 × 8 = 7.2 GB in one
// allocation ("fatal error: out of memory"); it is refused with the
// figures and the remedies.
func TestCategoricalIdentifier(t *testing.T) {
	if !underUlimit(t, 1<<21) {
		return
	}
	_, err := Spec{Response: Num("y"), Terms: []Term{Categorical("id")}}.Build(idFrame(30000))
	if err == nil || !strings.Contains(err.Error(), "the design's 30000 rows × 30000 columns (29999 of them from Spec.Terms[0] Categorical(\"id\"))") || !strings.Contains(err.Error(), "TopK") {
		t.Errorf("a categorical identifier: %v", err)
	}
	if _, err := (Spec{Response: Num("y"), Terms: []Term{Categorical("id", TopK(20))}}).Build(idFrame(30000)); err != nil {
		t.Errorf("TopK(20): %v", err)
	}
}

// TestCSVEndless is issue 31 item 5: a symbolic link to /dev/zero grew a
// line until memory ran out. A device is refused; read anyway
// (ReadOptions.Special), its line is cut at 64 MiB. Under ulimit -v 4 GiB:
// the cut line's buffers (encoding/csv's raw line, its record and the
// field's string) hold about 300 MB, and under 2 GiB the Go runtime's
// address space beyond its live heap ran out on a loaded machine; without
// the cut the line grows past any limit.
func TestCSVEndless(t *testing.T) {
	if _, err := os.Stat("/dev/zero"); err != nil {
		t.Skipf("no /dev/zero: %v", err)
	}
	if !underUlimit(t, 1<<22) {
		return
	}
	link := filepath.Join(t.TempDir(), "zero.csv")
	if err := os.Symlink("/dev/zero", link); err != nil {
		t.Skipf("symlink: %v", err)
	}
	_, err := ReadCSV(link, nil)
	if err == nil || !strings.Contains(err.Error(), "zero.csv: not a regular file") {
		t.Errorf("/dev/zero: %v", err)
	}
	_, err = ReadCSV(link, &ReadOptions{Special: true})
	if err == nil || !strings.Contains(err.Error(), "longer than 64 MiB") {
		t.Errorf("/dev/zero read as a special file: %v", err)
	}
	for _, read := range []func(string, *ReadOptions) (*Frame, error){ReadParquet, ReadArrow} {
		if _, err := read(link, &ReadOptions{Special: true}); err == nil || !strings.Contains(err.Error(), "not a regular file") {
			t.Errorf("/dev/zero as a binary file: %v", err)
		}
	}
}

// TestCSVLongLine checks the line cap on a reader without end and on a
// long line followed by others.
func TestCSVLongLine(t *testing.T) {
	long := "a,b\n1," + strings.Repeat("7", 5000) + "\n2,3\n"
	_, err := readCSVLines(strings.NewReader(long), "long.csv", nil, 1000)
	if err == nil || !strings.Contains(err.Error(), "long.csv: near row ") {
		t.Errorf("a long line: %v", err)
	}
	if _, err := readCSVLines(strings.NewReader(long), "long.csv", nil, 10000); err != nil {
		t.Errorf("under the cap: %v", err)
	}
}

// TestCSVCutLastLine is issue 31 item 7: a file cut inside a number
// ("2.246979" → "2.246") was read silently.
func TestCSVCutLastLine(t *testing.T) {
	_, err := readCSV(strings.NewReader("x,y\n1,0.5\n2,2.246"), "cut.csv", nil)
	if err == nil || !strings.Contains(err.Error(), "cut.csv: row 2 (line 3): the last line is not terminated by a newline") {
		t.Errorf("a cut last line: %v", err)
	}
	for _, ok := range []string{"x,y\n1,0.5\n2,2.246979\n", "x,y\r\n1,0.5\r\n", "x,y\n"} {
		if _, err := readCSV(strings.NewReader(ok), "ok.csv", nil); err != nil {
			t.Errorf("%q: %v", ok, err)
		}
	}
	// A limit stops before the cut line.
	if f, err := readCSV(strings.NewReader("x,y\n1,0.5\n2,2.246"), "cut.csv", &ReadOptions{Limit: 1}); err != nil || f.Len() != 1 {
		t.Errorf("Limit 1: %v", err)
	}
}

// TestDuplicateColumns is issue 31 item 8: a Parquet or Arrow file with
// two columns of one name had one of them picked silently; it is refused,
// as CSV's header is.
func TestDuplicateColumns(t *testing.T) {
	schema := arrow.NewSchema([]arrow.Field{
		{Name: "x", Type: arrow.PrimitiveTypes.Float64},
		{Name: "y", Type: arrow.PrimitiveTypes.Float64},
		{Name: "x", Type: arrow.PrimitiveTypes.Float64},
	}, nil)
	b := array.NewRecordBuilder(memory.DefaultAllocator, schema)
	defer b.Release()
	for j := range 3 {
		b.Field(j).(*array.Float64Builder).AppendValues([]float64{1, 2, float64(j)}, nil)
	}
	rec := b.NewRecordBatch()
	defer rec.Release()
	want := "columns 1 and 3 are both named \"x\""
	for _, opt := range []*ReadOptions{nil, {Columns: []string{"x"}}} {
		if _, err := readParquet(bytes.NewReader(writeParquet(t, rec, 10)), "dup.parquet", opt); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("Parquet, %v: %v", opt, err)
		}
		if _, err := readArrow(bytes.NewReader(writeIPC(t, rec, false)), "dup.arrow", opt); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("Arrow, %v: %v", opt, err)
		}
	}
	// The column not duplicated alone is read.
	if _, err := readParquet(bytes.NewReader(writeParquet(t, rec, 10)), "dup.parquet", &ReadOptions{Columns: []string{"y"}}); err != nil {
		t.Error(err)
	}
}

// TestStoreTruncatedWhileOpen is issue 31 item 9: a mapped Store whose
// file another process truncates raised SIGBUS on the next read, killing
// the process. Validate's reads are guarded: an error.
func TestStoreTruncatedWhileOpen(t *testing.T) {
	path := filepath.Join(t.TempDir(), "s.store")
	writeStore(t, path, 4096, 8, Float64)
	s, err := OpenStore(path)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if !s.Mapped() {
		t.Skip("the store is read into memory here, not mapped")
	}
	if err := os.Truncate(path, 4096); err != nil {
		t.Fatal(err)
	}
	err = s.Validate()
	if err == nil || !strings.Contains(err.Error(), "faulted") || !strings.Contains(err.Error(), "truncated") {
		t.Errorf("Validate of a truncated mapping: %v", err)
	}
}

// TestArrowUnregistered reads an Arrow file without data/arrowipc's
// reader registered: an error naming the import, before the file is
// opened.
func TestArrowUnregistered(t *testing.T) {
	saved := colbuf.ReadArrow
	colbuf.ReadArrow = nil
	defer func() { colbuf.ReadArrow = saved }()
	_, err := ReadFile(filepath.Join("testdata", "small.arrow"), nil)
	if err == nil || !strings.Contains(err.Error(), "small.arrow") || !strings.Contains(err.Error(), `import _ "github.com/exactmh/exactmh/data/arrowipc"`) {
		t.Errorf("ReadFile of an Arrow file without the reader: %v", err)
	}
}

// TestParquetDeepSchema reads a footer whose schema nests a million
// groups, each the only child of the one before: an error, not a stack
// overflow.
func TestParquetDeepSchema(t *testing.T) {
	var footer []byte
	// FileMetaData: field 2 (schema), a list of n structures, each a
	// SchemaElement with field 4 (name "g") and field 5 (num_children 1).
	const n = 1 << 20
	footer = append(footer, 0x29)            // field 2 (delta 2), type list
	footer = append(footer, 0xfc)            // size 15 (more follows), element type struct
	footer = binary.AppendUvarint(footer, n) // the list's size
	for range n {
		footer = append(footer, 0x48, 1, 'g', 0x15, 2, 0) // name "g", num_children 1 (zigzag 2), stop
	}
	footer = append(footer, 0) // stop
	file := append([]byte("PAR1"), footer...)
	file = binary.LittleEndian.AppendUint32(file, uint32(len(footer)))
	file = append(file, "PAR1"...)
	_, err := readParquet(bytes.NewReader(file), "deep.parquet", nil)
	if err == nil || !strings.Contains(err.Error(), "more than 1000 deep") {
		t.Errorf("a schema nested %d deep: %v", n, err)
	}
}
