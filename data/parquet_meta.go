// Copyright ©2026 The exactmh Authors. All rights reserved.
// Use of this source code is governed by a BSD-style
// license that can be found in the LICENSE file.

package data

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"io"
	"strconv"
)

// Parquet's footer: the FileMetaData structure of the format's
// parquet.thrift, of which the reader keeps the schema, the row groups'
// row counts and the column chunks' metadata.

// Physical types (parquet.thrift's Type).
const (
	pqTypeBoolean   = 0
	pqTypeInt32     = 1
	pqTypeInt64     = 2
	pqTypeInt96     = 3
	pqTypeFloat     = 4
	pqTypeDouble    = 5
	pqTypeByteArray = 6
	pqTypeFixed     = 7
)

func pqTypeName(t int32) string {
	switch t {
	case pqTypeBoolean:
		return "BOOLEAN"
	case pqTypeInt32:
		return "INT32"
	case pqTypeInt64:
		return "INT64"
	case pqTypeInt96:
		return "INT96"
	case pqTypeFloat:
		return "FLOAT"
	case pqTypeDouble:
		return "DOUBLE"
	case pqTypeByteArray:
		return "BYTE_ARRAY"
	case pqTypeFixed:
		return "FIXED_LEN_BYTE_ARRAY"
	}
	return "type " + strconv.Itoa(int(t))
}

// Repetitions (FieldRepetitionType).
const (
	repRequired = 0
	repOptional = 1
	repRepeated = 2
)

// Logical types: the field ids of the LogicalType union.
const (
	ltNone      = 0
	ltString    = 1
	ltDate      = 6
	ltTimestamp = 8
	ltInteger   = 10
	ltFloat16   = 15
	ltOther     = -1 // any other (decimal, time, JSON, map, list, unknown…)
)

// Time units (the TimeUnit union's field ids).
const (
	unitMillis = 1
	unitMicros = 2
	unitNanos  = 3
)

// pqLogical is a logical type.
type pqLogical struct {
	kind   int16
	unit   int16 // ltTimestamp
	signed bool  // ltInteger
}

// pqElement is a SchemaElement.
type pqElement struct {
	name        string
	typ         int32
	typeLength  int32
	rep         int32
	children    int32 // -1: a primitive
	converted   int32 // -1: none
	logicalType pqLogical
	hasLogical  bool
	leaf        int // the leaf's column index, -1 for a group
}

// logical returns the element's logical type: the LogicalType if set,
// else the one its ConvertedType stands for.
func (e *pqElement) logical() pqLogical {
	if e.hasLogical {
		return e.logicalType
	}
	switch c := e.converted; {
	case c < 0:
		return pqLogical{}
	case c == 0: // UTF8
		return pqLogical{kind: ltString}
	case c == 6: // DATE
		return pqLogical{kind: ltDate}
	case c == 9: // TIMESTAMP_MILLIS
		return pqLogical{kind: ltTimestamp, unit: unitMillis}
	case c == 10: // TIMESTAMP_MICROS
		return pqLogical{kind: ltTimestamp, unit: unitMicros}
	case c >= 11 && c <= 14: // UINT_8 … UINT_64
		return pqLogical{kind: ltInteger}
	case c >= 15 && c <= 18: // INT_8 … INT_64
		return pqLogical{kind: ltInteger, signed: true}
	}
	return pqLogical{kind: ltOther}
}

// describe says what the column is, for the error of a column that is
// not read.
func (e *pqElement) describe() string {
	s := "of physical type " + pqTypeName(e.typ)
	switch lt := e.logical(); lt.kind {
	case ltNone:
	case ltOther:
		if e.hasLogical {
			s += " with a logical type"
		} else {
			s += " with converted type " + strconv.Itoa(int(e.converted))
		}
	default:
		s += " with logical type " + strconv.Itoa(int(lt.kind))
	}
	return s
}

// pqChunk is a column chunk's ColumnMetaData.
type pqChunk struct {
	hasMeta    bool
	typ        int32
	codec      int32
	numValues  int64
	compressed int64
	dataOff    int64
	dictOff    int64 // 0: none
}

// span returns where the chunk's pages start and how many bytes they
// take: from the dictionary page if there is one before the data pages,
// as arrow-go and parquet-mr find it.
func (c *pqChunk) span() (start, n int64) {
	start = c.dataOff
	if c.dictOff > 0 && c.dictOff < start {
		start = c.dictOff
	}
	return start, c.compressed
}

// pqRowGroup is a RowGroup.
type pqRowGroup struct {
	rows   int64
	chunks []pqChunk
}

// pqFile is what the reader keeps of a FileMetaData.
type pqFile struct {
	fields []*pqElement // the root's children
	leaves int
	groups []pqRowGroup
}

var parquetMagic = []byte("PAR1")

// maxSchemaDepth bounds the nesting of the schema's groups, which the
// reader walks recursively: a corrupted footer could otherwise nest
// millions deep and overflow the stack.
const maxSchemaDepth = 1000

// readParquetFooter reads and decodes the footer of a Parquet file of
// size bytes.
func readParquetFooter(r io.ReaderAt, size int64) (*pqFile, error) {
	if size < 12 {
		return nil, fmt.Errorf("%d bytes, too short for a Parquet file", size)
	}
	var tail [8]byte
	if _, err := r.ReadAt(tail[:], size-8); err != nil {
		return nil, err
	}
	if !bytes.Equal(tail[4:], parquetMagic) {
		if bytes.Equal(tail[4:], []byte("PARE")) {
			return nil, fmt.Errorf("an encrypted footer, which this reader does not decrypt")
		}
		return nil, fmt.Errorf("no PAR1 at the end: not a Parquet file, or cut short")
	}
	n := int64(binary.LittleEndian.Uint32(tail[:4]))
	if n > size-12 {
		return nil, fmt.Errorf("a footer of %d bytes in a %d-byte file", n, size)
	}
	b := make([]byte, n)
	if _, err := r.ReadAt(b, size-8-n); err != nil {
		return nil, err
	}
	return decodeFileMetaData(b)
}

// decodeFileMetaData decodes a FileMetaData.
func decodeFileMetaData(b []byte) (*pqFile, error) {
	t := &thriftReader{b: b}
	var schema []*pqElement
	var groups []pqRowGroup
	t.fields(func(id int16, typ byte) bool {
		switch {
		case id == 2 && typ == ctList:
			t.eachStruct(func() { schema = append(schema, decodeSchemaElement(t)) })
		case id == 4 && typ == ctList:
			t.eachStruct(func() { groups = append(groups, decodeRowGroup(t)) })
		default:
			return false
		}
		return true
	})
	if t.err != nil {
		return nil, fmt.Errorf("footer: %v", t.err)
	}
	if len(schema) == 0 {
		return nil, fmt.Errorf("footer: no schema")
	}
	f := &pqFile{groups: groups}
	// The schema is the tree flattened depth first; the root's children
	// are the columns, and the leaves number the column chunks.
	var walk func(i, depth int) (next int, err error)
	walk = func(i, depth int) (int, error) {
		if i >= len(schema) {
			return 0, fmt.Errorf("footer: the schema's children run past its %d elements", len(schema))
		}
		if depth > maxSchemaDepth {
			return 0, fmt.Errorf("footer: the schema nests groups more than %d deep", maxSchemaDepth)
		}
		e := schema[i]
		if e.children < 0 {
			e.leaf = f.leaves
			f.leaves++
			return i + 1, nil
		}
		e.leaf = -1
		next := i + 1
		for range e.children {
			var err error
			if next, err = walk(next, depth+1); err != nil {
				return 0, err
			}
		}
		return next, nil
	}
	root := schema[0]
	if root.children < 0 {
		return nil, fmt.Errorf("footer: the schema's root is not a group")
	}
	next := 1
	for range root.children {
		j := next
		var err error
		if next, err = walk(next, 1); err != nil {
			return nil, err
		}
		f.fields = append(f.fields, schema[j])
	}
	return f, nil
}

func decodeSchemaElement(t *thriftReader) *pqElement {
	e := &pqElement{typ: -1, children: -1, converted: -1}
	t.fields(func(id int16, typ byte) bool {
		switch {
		case id == 1 && typ == ctI32:
			e.typ = t.i32()
		case id == 2 && typ == ctI32:
			e.typeLength = t.i32()
		case id == 3 && typ == ctI32:
			e.rep = t.i32()
		case id == 4 && typ == ctBinary:
			e.name = string(t.binary())
		case id == 5 && typ == ctI32:
			if e.children = t.i32(); e.children < 0 {
				t.fail(fmt.Errorf("a schema element with %d children", e.children))
			}
		case id == 6 && typ == ctI32:
			if e.converted = t.i32(); e.converted < 0 {
				e.converted = 1 << 20 // not one the reader knows
			}
		case id == 10 && typ == ctStruct:
			e.hasLogical = true
			e.logicalType = decodeLogicalType(t)
		default:
			return false
		}
		return true
	})
	return e
}

// decodeLogicalType decodes the LogicalType union.
func decodeLogicalType(t *thriftReader) pqLogical {
	lt := pqLogical{kind: ltOther}
	t.fields(func(id int16, typ byte) bool {
		if typ != ctStruct {
			return false
		}
		switch id {
		case ltString, ltDate, ltFloat16:
			lt.kind = id
			return false // an empty structure
		case ltTimestamp:
			lt.kind = ltTimestamp
			t.fields(func(id int16, typ byte) bool {
				if id == 2 && typ == ctStruct { // unit
					t.fields(func(id int16, typ byte) bool {
						if typ == ctStruct && id >= unitMillis && id <= unitNanos {
							lt.unit = id
						}
						return false
					})
					return true
				}
				return false
			})
		case ltInteger:
			lt.kind = ltInteger
			t.fields(func(id int16, typ byte) bool {
				if id == 2 && (typ == ctTrue || typ == ctFalse) {
					lt.signed = typ == ctTrue
				}
				return false
			})
		default:
			lt.kind = ltOther
			return false
		}
		return true
	})
	return lt
}

func decodeRowGroup(t *thriftReader) pqRowGroup {
	var rg pqRowGroup
	t.fields(func(id int16, typ byte) bool {
		switch {
		case id == 1 && typ == ctList:
			t.eachStruct(func() { rg.chunks = append(rg.chunks, decodeColumnChunk(t)) })
		case id == 3 && typ == ctI64:
			rg.rows = t.varint()
		default:
			return false
		}
		return true
	})
	return rg
}

func decodeColumnChunk(t *thriftReader) pqChunk {
	var c pqChunk
	t.fields(func(id int16, typ byte) bool {
		if id != 3 || typ != ctStruct {
			return false
		}
		c.hasMeta = true
		t.fields(func(id int16, typ byte) bool {
			switch {
			case id == 1 && typ == ctI32:
				c.typ = t.i32()
			case id == 4 && typ == ctI32:
				c.codec = t.i32()
			case id == 5 && typ == ctI64:
				c.numValues = t.varint()
			case id == 7 && typ == ctI64:
				c.compressed = t.varint()
			case id == 9 && typ == ctI64:
				c.dataOff = t.varint()
			case id == 11 && typ == ctI64:
				c.dictOff = t.varint()
			default:
				return false
			}
			return true
		})
		return true
	})
	return c
}
