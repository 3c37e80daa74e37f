// Copyright ©2026 The exactmh Authors. All rights reserved.
// Use of this source code is governed by a BSD-style
// license that can be found in the LICENSE file.

package data

import (
	"encoding/binary"
	"errors"
	"fmt"
)

// The Thrift compact protocol, the encoding of Parquet's footer
// (FileMetaData) and page headers (PageHeader): what the Parquet reader
// needs of it, with every length checked against the bytes that remain,
// so no count in a corrupted file allocates more than the file's bytes.
// Reference: Apache Thrift's compact protocol specification
// (doc/specs/thrift-compact-protocol.md).

// The compact protocol's field and element types.
const (
	ctStop   = 0
	ctTrue   = 1
	ctFalse  = 2
	ctByte   = 3
	ctI16    = 4
	ctI32    = 5
	ctI64    = 6
	ctDouble = 7
	ctBinary = 8
	ctList   = 9
	ctSet    = 10
	ctMap    = 11
	ctStruct = 12
)

// errThriftShort is the error of a structure that runs past the bytes
// given: a page header may then be read again from more bytes.
var errThriftShort = errors.New("thrift: structure runs past the end of its bytes")

// maxThriftDepth bounds the nesting of structures and containers.
const maxThriftDepth = 64

// thriftReader decodes the compact protocol from b; the first error
// sticks and every later read returns zero values.
type thriftReader struct {
	b     []byte
	pos   int
	err   error
	depth int
}

func (t *thriftReader) fail(err error) {
	if t.err == nil {
		t.err = err
	}
}

func (t *thriftReader) byte1() byte {
	if t.err != nil {
		return 0
	}
	if t.pos >= len(t.b) {
		t.fail(errThriftShort)
		return 0
	}
	c := t.b[t.pos]
	t.pos++
	return c
}

func (t *thriftReader) uvarint() uint64 {
	if t.err != nil {
		return 0
	}
	v, k := binary.Uvarint(t.b[t.pos:])
	switch {
	case k == 0:
		t.fail(errThriftShort)
		return 0
	case k < 0:
		t.fail(fmt.Errorf("thrift: a varint of more than 64 bits at byte %d", t.pos))
		return 0
	}
	t.pos += k
	return v
}

// varint reads a zigzag-encoded integer (i16, i32, i64).
func (t *thriftReader) varint() int64 {
	u := t.uvarint()
	return int64(u>>1) ^ -int64(u&1)
}

// i32 reads an i32, failing on one out of range.
func (t *thriftReader) i32() int32 {
	v := t.varint()
	if v < -1<<31 || v >= 1<<31 {
		t.fail(fmt.Errorf("thrift: i32 value %d out of range", v))
		return 0
	}
	return int32(v)
}

// binary reads a length-prefixed byte string, aliasing t.b.
func (t *thriftReader) binary() []byte {
	n := t.uvarint()
	if t.err != nil {
		return nil
	}
	if n > uint64(len(t.b)-t.pos) {
		t.fail(errThriftShort)
		return nil
	}
	s := t.b[t.pos : t.pos+int(n)]
	t.pos += int(n)
	return s
}

// list reads a list or set header: the element type and the count, which
// is at most the bytes that remain (every element takes at least one).
func (t *thriftReader) list() (elem byte, n int) {
	h := t.byte1()
	elem, size := h&0x0f, uint64(h>>4)
	if size == 15 {
		size = t.uvarint()
	}
	if t.err != nil {
		return 0, 0
	}
	if size > uint64(len(t.b)-t.pos) {
		t.fail(errThriftShort)
		return 0, 0
	}
	return elem, int(size)
}

// fields reads a structure, calling f for each field; f returns false for
// a field it does not read (an unknown id, or a known id of an unexpected
// type), which is skipped.
func (t *thriftReader) fields(f func(id int16, typ byte) bool) {
	if t.depth++; t.depth > maxThriftDepth {
		t.fail(fmt.Errorf("thrift: structures nested more than %d deep", maxThriftDepth))
	}
	var id int16
	for t.err == nil {
		h := t.byte1()
		typ := h & 0x0f
		if t.err != nil || typ == ctStop {
			break
		}
		if d := h >> 4; d != 0 {
			id += int16(d)
		} else {
			v := t.varint()
			if v < -1<<15 || v >= 1<<15 {
				t.fail(fmt.Errorf("thrift: field id %d out of range", v))
				break
			}
			id = int16(v)
		}
		if !f(id, typ) {
			t.skip(typ)
		}
	}
	t.depth--
}

// skip reads past a value of type typ.
func (t *thriftReader) skip(typ byte) {
	if t.err != nil {
		return
	}
	switch typ {
	case ctTrue, ctFalse:
	case ctByte:
		t.byte1()
	case ctI16, ctI32, ctI64:
		t.uvarint()
	case ctDouble:
		if len(t.b)-t.pos < 8 {
			t.fail(errThriftShort)
			return
		}
		t.pos += 8
	case ctBinary:
		t.binary()
	case ctList, ctSet:
		elem, n := t.list()
		t.skipElems(elem, n)
	case ctMap:
		n := t.uvarint()
		if n == 0 || t.err != nil {
			return
		}
		if n > uint64(len(t.b)-t.pos) {
			t.fail(errThriftShort)
			return
		}
		kv := t.byte1()
		for i := uint64(0); i < n && t.err == nil; i++ {
			t.skipElems(kv>>4, 1)
			t.skipElems(kv&0x0f, 1)
		}
	case ctStruct:
		t.fields(func(int16, byte) bool { return false })
	default:
		t.fail(fmt.Errorf("thrift: unknown type %d at byte %d", typ, t.pos))
	}
}

// skipElems skips n container elements of type elem (a boolean element
// takes a byte, unlike a boolean field).
func (t *thriftReader) skipElems(elem byte, n int) {
	if t.depth++; t.depth > maxThriftDepth {
		t.fail(fmt.Errorf("thrift: containers nested more than %d deep", maxThriftDepth))
	}
	for i := 0; i < n && t.err == nil; i++ {
		if elem == ctTrue || elem == ctFalse {
			t.byte1()
		} else {
			t.skip(elem)
		}
	}
	t.depth--
}

// eachElem reads a list of structures, calling f for each.
func (t *thriftReader) eachStruct(f func()) {
	elem, n := t.list()
	if elem != ctStruct {
		t.skipElems(elem, n)
		return
	}
	for i := 0; i < n && t.err == nil; i++ {
		f()
	}
}
