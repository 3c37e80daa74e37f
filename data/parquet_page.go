// Copyright ©2026 The exactmh Authors. All rights reserved.
// Use of this source code is governed by a BSD-style
// license that can be found in the LICENSE file.

package data

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"
)

// Parquet's pages: the PageHeader, decompression, definition levels and
// the PLAIN and dictionary encodings of values (the format's
// Encodings.md). Every count a page declares is checked against the rows
// its row group has left and against the bytes it holds before anything
// is allocated for it, and decoding proceeds in batches of batchRows
// rows, so a page of a few bytes declaring billions of values allocates
// nothing.

// Page types.
const (
	pageData       = 0
	pageIndex      = 1
	pageDictionary = 2
	pageDataV2     = 3
)

// Encodings.
const (
	encPlain          = 0
	encPlainDict      = 2
	encRLE            = 3
	encBitPacked      = 4
	encDeltaBinary    = 5
	encDeltaLength    = 6
	encDeltaByteArray = 7
	encRLEDict        = 8
	encByteStreamSp   = 9
)

func encodingName(e int32) string {
	switch e {
	case encPlain:
		return "PLAIN"
	case encPlainDict:
		return "PLAIN_DICTIONARY"
	case encRLE:
		return "RLE"
	case encBitPacked:
		return "BIT_PACKED"
	case encDeltaBinary:
		return "DELTA_BINARY_PACKED"
	case encDeltaLength:
		return "DELTA_LENGTH_BYTE_ARRAY"
	case encDeltaByteArray:
		return "DELTA_BYTE_ARRAY"
	case encRLEDict:
		return "RLE_DICTIONARY"
	case encByteStreamSp:
		return "BYTE_STREAM_SPLIT"
	}
	return fmt.Sprintf("encoding %d", e)
}

// pageHeader is a PageHeader with the header of its type.
type pageHeader struct {
	typ          int32
	uncompressed int32
	compressed   int32
	numValues    int32
	encoding     int32
	defEncoding  int32 // data page v1
	// data page v2
	defLen, repLen int32
	uncompressedV2 bool // is_compressed false
}

func decodePageHeader(t *thriftReader) pageHeader {
	h := pageHeader{typ: -1, defEncoding: encRLE}
	sub := func(v2 bool) {
		t.fields(func(id int16, typ byte) bool {
			switch {
			case id == 1 && typ == ctI32:
				h.numValues = t.i32()
			case !v2 && id == 2 && typ == ctI32:
				h.encoding = t.i32()
			case !v2 && id == 3 && typ == ctI32:
				h.defEncoding = t.i32()
			case v2 && id == 4 && typ == ctI32:
				h.encoding = t.i32()
			case v2 && id == 5 && typ == ctI32:
				h.defLen = t.i32()
			case v2 && id == 6 && typ == ctI32:
				h.repLen = t.i32()
			case v2 && id == 7 && (typ == ctTrue || typ == ctFalse):
				h.uncompressedV2 = typ == ctFalse
			default:
				return false
			}
			return true
		})
	}
	t.fields(func(id int16, typ byte) bool {
		switch {
		case id == 1 && typ == ctI32:
			h.typ = t.i32()
		case id == 2 && typ == ctI32:
			h.uncompressed = t.i32()
		case id == 3 && typ == ctI32:
			h.compressed = t.i32()
		case id == 5 && typ == ctStruct && h.typ == pageData:
			sub(false)
		case id == 7 && typ == ctStruct && h.typ == pageDictionary:
			sub(false)
		case id == 8 && typ == ctStruct && h.typ == pageDataV2:
			sub(true)
		default:
			return false
		}
		return true
	})
	return h
}

// pageReader reads pages from a file, reusing its buffers.
type pageReader struct {
	r       readSource
	pageCap int64 // the largest uncompressed page accepted
	hdr     []byte
	raw     []byte
	out     []byte
	dec     decompressor
}

// readHeader reads the page header at pos, before end; it returns the
// header and its length.
func (p *pageReader) readHeader(pos, end int64) (pageHeader, int64, error) {
	for k := int64(256); ; k *= 4 {
		k = min(k, end-pos)
		if int64(cap(p.hdr)) < k {
			p.hdr = make([]byte, k)
		}
		buf := p.hdr[:k]
		if _, err := p.r.ReadAt(buf, pos); err != nil {
			return pageHeader{}, 0, err
		}
		t := &thriftReader{b: buf}
		h := decodePageHeader(t)
		if t.err == nil {
			return h, int64(t.pos), nil
		}
		if !errors.Is(t.err, errThriftShort) || k == end-pos || k >= 64<<20 {
			return pageHeader{}, 0, fmt.Errorf("page header at byte %d: %v", pos, t.err)
		}
	}
}

// pqDict is a column chunk's dictionary: its values, and for a string
// column the code of each entry once used (-1 before).
type pqDict struct {
	v     values
	n     int
	codes []int32
}

// chunkReader reads a builder's column chunks.
type chunkReader struct {
	b    *parquetBuilder
	p    *pageReader
	defs []uint8
	v    values
	dict *pqDict
}

func newChunkReader(b *parquetBuilder, p *pageReader) *chunkReader {
	return &chunkReader{b: b, p: p}
}

// readChunk reads want rows of the chunk cc, whose row group has rows
// rows, into the builder. A chunk whose pages end before want rows is
// not an error here: the column is then short of the rows the metadata
// declares, which readParquet reports.
func (cr *chunkReader) readChunk(cc *pqChunk, rows int64, want int) (short bool, err error) {
	start, n := cc.span()
	pos, end := start, start+n
	cr.dict = nil
	got := 0 // rows of the group read or skipped
	for got < want {
		if pos >= end {
			return true, nil
		}
		h, hl, err := cr.p.readHeader(pos, end)
		if err != nil {
			return false, err
		}
		pos += hl
		if h.compressed < 0 || int64(h.compressed) > end-pos {
			return false, fmt.Errorf("a page of %d bytes with %d left in the column chunk", h.compressed, end-pos)
		}
		if h.uncompressed < 0 || int64(h.uncompressed) > cr.p.pageCap {
			return false, fmt.Errorf("a page declaring %d bytes uncompressed, more than a file of this size can hold (%d)", h.uncompressed, cr.p.pageCap)
		}
		at := pos
		pos += int64(h.compressed)
		switch h.typ {
		case pageDictionary:
			if cr.dict != nil || got > 0 {
				return false, fmt.Errorf("a second dictionary page in a column chunk")
			}
			body, err := cr.p.page(at, &h, cc.codec, 0)
			if err != nil {
				return false, err
			}
			if err := cr.readDictionary(&h, body); err != nil {
				return false, fmt.Errorf("dictionary page: %v", err)
			}
		case pageData, pageDataV2:
			levels := 0
			if h.typ == pageDataV2 {
				if h.defLen < 0 || h.repLen < 0 || int64(h.defLen)+int64(h.repLen) > int64(h.compressed) || h.defLen+h.repLen > h.uncompressed {
					return false, fmt.Errorf("a data page of %d bytes with %d bytes of levels", h.compressed, int64(h.defLen)+int64(h.repLen))
				}
				levels = int(h.defLen + h.repLen)
			}
			body, err := cr.p.page(at, &h, cc.codec, levels)
			if err != nil {
				return false, err
			}
			if h.numValues < 0 || int64(h.numValues) > rows-int64(got) {
				return false, fmt.Errorf("a data page of %d values with %d rows of the row group left", h.numValues, rows-int64(got))
			}
			k, err := cr.readData(&h, body, want-got)
			if err != nil {
				return false, err
			}
			got += k
		}
	}
	return false, nil
}

// page reads and decompresses the page of header h at byte at; levels
// bytes at its start (data page v2) are stored uncompressed.
func (p *pageReader) page(at int64, h *pageHeader, codec int32, levels int) ([]byte, error) {
	if cap(p.raw) < int(h.compressed) {
		p.raw = make([]byte, h.compressed)
	}
	raw := p.raw[:h.compressed]
	if _, err := p.r.ReadAt(raw, at); err != nil {
		return nil, fmt.Errorf("page at byte %d: %v", at, err)
	}
	if codec == codecUncompressed || h.uncompressedV2 {
		if len(raw) != int(h.uncompressed) {
			return nil, fmt.Errorf("an uncompressed page of %d bytes declaring %d", len(raw), h.uncompressed)
		}
		return raw, nil
	}
	if cap(p.out) < int(h.uncompressed) {
		p.out = make([]byte, h.uncompressed)
	}
	out := p.out[:h.uncompressed]
	copy(out, raw[:levels])
	if err := p.dec.decompress(codec, out[levels:], raw[levels:]); err != nil {
		return nil, fmt.Errorf("page at byte %d: %v", at, err)
	}
	return out, nil
}

// readDictionary decodes a dictionary page's PLAIN values; it keeps its
// own copy of the page.
func (cr *chunkReader) readDictionary(h *pageHeader, body []byte) error {
	if h.encoding != encPlain && h.encoding != encPlainDict {
		return fmt.Errorf("values in %s; a dictionary page holds PLAIN values", encodingName(h.encoding))
	}
	n := int(h.numValues)
	if n < 0 || n > plainMaxValues(cr.b.elem, len(body)) {
		return fmt.Errorf("%d values in %d bytes", h.numValues, len(body))
	}
	d := &pqDict{n: n}
	pd := plainDecoder{b: append([]byte(nil), body...), e: cr.b.elem}
	if err := pd.decode(&d.v, n, true); err != nil {
		return err
	}
	if cr.b.kind == pqString {
		d.codes = make([]int32, n)
		for i := range d.codes {
			d.codes[i] = -1
		}
	}
	cr.dict = d
	return nil
}

// readData decodes a data page's rows, up to most, into the builder, in
// batches; it returns the rows read.
func (cr *chunkReader) readData(h *pageHeader, body []byte, most int) (int, error) {
	b := cr.b
	rows := min(int(h.numValues), most)
	var defs hybridDecoder
	if b.maxDef > 0 {
		var lv []byte
		if h.typ == pageDataV2 {
			lv = body[h.repLen : h.repLen+h.defLen]
			body = body[h.repLen+h.defLen:]
		} else {
			if h.defEncoding != encRLE {
				return 0, fmt.Errorf("definition levels in %s; this reader decodes RLE", encodingName(h.defEncoding))
			}
			if len(body) < 4 {
				return 0, fmt.Errorf("a data page of %d bytes without its definition levels", len(body))
			}
			k := binary.LittleEndian.Uint32(body)
			if uint64(k) > uint64(len(body)-4) {
				return 0, fmt.Errorf("%d bytes of definition levels in a page of %d", k, len(body))
			}
			lv, body = body[4:4+k], body[4+k:]
		}
		defs = hybridDecoder{b: lv, width: 1}
	} else if h.typ == pageDataV2 {
		body = body[h.repLen+h.defLen:]
	}
	var next func(v *values, n int) error
	dictEncoded := h.encoding == encPlainDict || h.encoding == encRLEDict
	switch h.encoding {
	case encPlain:
		pd := &plainDecoder{b: body, e: b.elem}
		next = func(v *values, n int) error { return pd.decode(v, n, false) }
	case encPlainDict, encRLEDict:
		d := cr.dict
		if d == nil {
			return 0, fmt.Errorf("dictionary-encoded values without a dictionary page")
		}
		if len(body) < 1 || body[0] > 32 {
			return 0, fmt.Errorf("dictionary indices without a valid bit width")
		}
		idx := &hybridDecoder{b: body[1:], width: uint(body[0])}
		next = func(v *values, n int) error { return v.gather(d, idx, n, b.kind == pqString) }
	case encRLE:
		if b.kind != pqBool {
			return 0, fmt.Errorf("values in RLE, which only booleans use")
		}
		if len(body) < 4 || uint64(binary.LittleEndian.Uint32(body)) > uint64(len(body)-4) {
			return 0, fmt.Errorf("RLE booleans without their length")
		}
		bd := &hybridDecoder{b: body[4 : 4+binary.LittleEndian.Uint32(body)], width: 1}
		next = func(v *values, n int) error {
			v.bl = grow(v.bl, n)
			for i := range n {
				x, err := bd.next()
				if err != nil {
					return err
				}
				v.bl[i] = x != 0
			}
			return nil
		}
	case encDeltaBinary:
		dd := newDeltaDecoder(body)
		next = func(v *values, n int) error { return dd.decode(b.elem, v, n) }
	case encByteStreamSp:
		sd, err := newSplitDecoder(b.elem, body)
		if err != nil {
			return 0, err
		}
		next = sd.decode
	default:
		return 0, fmt.Errorf("values in %s, which this reader does not decode (write the file with PLAIN or dictionary encoding, the defaults of pyarrow, Polars, DuckDB, Spark and arrow-go)", encodingName(h.encoding))
	}
	for done := 0; done < rows; {
		n := min(batchRows, rows-done)
		vals := n
		if b.maxDef > 0 {
			cr.defs = grow(cr.defs, n)
			vals = 0
			for i := range n {
				d, err := defs.next()
				if err != nil {
					return 0, fmt.Errorf("definition levels: %v", err)
				}
				if d > 1 {
					return 0, fmt.Errorf("definition level %d in a column whose largest is 1", d)
				}
				cr.defs[i] = uint8(d)
				vals += int(d)
			}
		}
		if err := next(&cr.v, vals); err != nil {
			return 0, fmt.Errorf("%s values: %v", encodingName(h.encoding), err)
		}
		dict := cr.dict
		if !dictEncoded {
			dict = nil
		}
		if err := b.append(n, vals, cr.defs, &cr.v, dict); err != nil {
			return 0, err
		}
		done += n
	}
	return rows, nil
}

// grow returns s with length n, reusing its memory.
func grow[T any](s []T, n int) []T {
	if cap(s) < n {
		return make([]T, n)
	}
	return s[:n]
}

// gather sets v to n values of the dictionary at the indices idx
// decodes; a string column keeps the indices (v.idx), the others the
// values.
func (v *values) gather(d *pqDict, idx *hybridDecoder, n int, str bool) error {
	v.idx = grow(v.idx, n)
	for i := range n {
		k, err := idx.next()
		if err != nil {
			return err
		}
		if k >= uint64(d.n) {
			return fmt.Errorf("index %d into a dictionary of %d", k, d.n)
		}
		v.idx[i] = uint32(k)
	}
	if str {
		return nil
	}
	switch {
	case d.v.i32 != nil:
		pick(&v.i32, d.v.i32, v.idx)
	case d.v.i64 != nil:
		pick(&v.i64, d.v.i64, v.idx)
	case d.v.i96 != nil:
		pick(&v.i96, d.v.i96, v.idx)
	case d.v.f32 != nil:
		pick(&v.f32, d.v.f32, v.idx)
	case d.v.f64 != nil:
		pick(&v.f64, d.v.f64, v.idx)
	case d.v.bl != nil:
		pick(&v.bl, d.v.bl, v.idx)
	default:
		pick(&v.ba, d.v.ba, v.idx)
	}
	return nil
}

// pick sets *dst to the dictionary's entries at idx.
func pick[T any](dst *[]T, dict []T, idx []uint32) {
	*dst = grow(*dst, len(idx))
	for i, k := range idx {
		(*dst)[i] = dict[k]
	}
}

// plainMaxValues is the most PLAIN values of element e that n bytes can
// hold.
func plainMaxValues(e *pqElement, n int) int {
	switch e.typ {
	case pqTypeBoolean:
		return 8 * n
	case pqTypeInt32, pqTypeFloat:
		return n / 4
	case pqTypeInt64, pqTypeDouble:
		return n / 8
	case pqTypeInt96:
		return n / 12
	case pqTypeByteArray:
		return n / 4
	case pqTypeFixed:
		if e.typeLength <= 0 {
			return n // zero-length values are refused as they are read
		}
		return n / int(e.typeLength)
	}
	return 0
}

// plainDecoder decodes PLAIN values of one physical type from b.
type plainDecoder struct {
	b   []byte
	e   *pqElement
	bit uint // booleans: the next bit of b[0]
}

// decode sets v's slice of the element's type to the next n values; dict
// allocates a slice of its own (a dictionary, kept), and makes the slice
// non-nil even when n is 0.
func (p *plainDecoder) decode(v *values, n int, dict bool) error {
	switch p.e.typ {
	case pqTypeBoolean:
		if uint64(n) > 8*uint64(len(p.b))-uint64(p.bit) {
			return fmt.Errorf("%d booleans in %d bytes", n, len(p.b))
		}
		v.bl = growKeep(v.bl, n, dict)
		for i := range n {
			v.bl[i] = p.b[0]>>p.bit&1 != 0
			if p.bit++; p.bit == 8 {
				p.b, p.bit = p.b[1:], 0
			}
		}
	case pqTypeInt32:
		return plainFixed(p, &v.i32, n, 4, dict, func(b []byte) int32 { return int32(binary.LittleEndian.Uint32(b)) })
	case pqTypeFloat:
		return plainFixed(p, &v.f32, n, 4, dict, func(b []byte) float32 { return math.Float32frombits(binary.LittleEndian.Uint32(b)) })
	case pqTypeInt64:
		return plainFixed(p, &v.i64, n, 8, dict, func(b []byte) int64 { return int64(binary.LittleEndian.Uint64(b)) })
	case pqTypeDouble:
		return plainFixed(p, &v.f64, n, 8, dict, func(b []byte) float64 { return math.Float64frombits(binary.LittleEndian.Uint64(b)) })
	case pqTypeInt96:
		return plainFixed(p, &v.i96, n, 12, dict, func(b []byte) [12]byte { return [12]byte(b) })
	case pqTypeByteArray:
		if n > len(p.b)/4 {
			return fmt.Errorf("%d values of at least 4 bytes in %d bytes", n, len(p.b))
		}
		v.ba = growKeep(v.ba, n, dict)
		for i := range n {
			if len(p.b) < 4 {
				return fmt.Errorf("value %d of %d cut short", i+1, n)
			}
			k := binary.LittleEndian.Uint32(p.b)
			if uint64(k) > uint64(len(p.b)-4) {
				return fmt.Errorf("value %d of %d declares %d bytes, %d left", i+1, n, k, len(p.b)-4)
			}
			v.ba[i], p.b = p.b[4:4+k:4+k], p.b[4+k:]
		}
	case pqTypeFixed:
		w := int(p.e.typeLength)
		if w <= 0 {
			return fmt.Errorf("fixed-length values of %d bytes", w)
		}
		return plainFixed(p, &v.ba, n, w, dict, func(b []byte) []byte { return b[:w:w] })
	default:
		return fmt.Errorf("physical type %s", pqTypeName(p.e.typ))
	}
	return nil
}

// plainFixed sets *dst to the next n values of size bytes each, decoded
// by conv.
func plainFixed[T any](p *plainDecoder, dst *[]T, n, size int, dict bool, conv func([]byte) T) error {
	if n > len(p.b)/size {
		return fmt.Errorf("%d values of %d bytes in %d bytes", n, size, len(p.b))
	}
	*dst = growKeep(*dst, n, dict)
	for i := range n {
		(*dst)[i] = conv(p.b[size*i:])
	}
	p.b = p.b[size*n:]
	return nil
}

// growKeep is grow, or a new non-nil slice when fresh.
func growKeep[T any](s []T, n int, fresh bool) []T {
	if fresh {
		return make([]T, n)
	}
	return grow(s, n)
}

// hybridDecoder decodes the RLE/bit-packing hybrid encoding of
// definition levels, dictionary indices and RLE booleans: runs of one
// repeated value, and groups of eight values packed in width bits each,
// least significant bit first.
type hybridDecoder struct {
	b      []byte
	width  uint
	rle    int    // values left in a repeated run
	val    uint64 // the run's value
	packed int    // values left in a bit-packed run
	bit    uint64 // the next value's bit offset into b
}

func (d *hybridDecoder) next() (uint64, error) {
	for d.rle == 0 && d.packed == 0 {
		if err := d.header(); err != nil {
			return 0, err
		}
	}
	if d.rle > 0 {
		d.rle--
		return d.val, nil
	}
	d.packed--
	if d.width == 0 {
		return 0, nil
	}
	v, ok := readBits(d.b, &d.bit, d.width)
	if !ok {
		return 0, fmt.Errorf("a bit-packed run cut short")
	}
	if d.packed == 0 {
		d.b = d.b[(d.bit+7)/8:]
		d.bit = 0
	}
	return v, nil
}

// readBits reads width bits of b at bit offset *bit, least significant
// first, and advances *bit; ok is false if b ends first.
func readBits(b []byte, bit *uint64, width uint) (v uint64, ok bool) {
	if *bit+uint64(width) > 8*uint64(len(b)) {
		return 0, false
	}
	for got := uint(0); got < width; {
		off := uint(*bit % 8)
		take := min(8-off, width-got)
		v |= uint64(b[*bit/8]>>off&(1<<take-1)) << got
		got += take
		*bit += uint64(take)
	}
	return v, true
}

// header reads the next run's header.
func (d *hybridDecoder) header() error {
	if len(d.b) == 0 {
		return fmt.Errorf("runs end before the values")
	}
	h, k := binary.Uvarint(d.b)
	if k <= 0 || h>>1 > math.MaxInt32 {
		return fmt.Errorf("a run header out of range")
	}
	d.b = d.b[k:]
	if h&1 == 0 { // a repeated run
		nb := int((d.width + 7) / 8)
		if len(d.b) < nb {
			return fmt.Errorf("a repeated run cut short")
		}
		var v uint64
		for i := nb - 1; i >= 0; i-- {
			v = v<<8 | uint64(d.b[i])
		}
		if d.width < 64 && v>>d.width != 0 {
			return fmt.Errorf("a repeated value %d wider than %d bits", v, d.width)
		}
		d.b, d.val, d.rle = d.b[nb:], v, int(h>>1)
		return nil
	}
	groups := int(h >> 1)
	// Groups that the bytes left cannot hold are cut to those that they
	// can (a writer may leave out the last group's padding).
	have := 8 * len(d.b)
	if d.width > 0 {
		have = len(d.b) * 8 / int(d.width)
	}
	d.packed = min(8*groups, max(have, 0))
	if groups > 0 && d.packed == 0 {
		return fmt.Errorf("a bit-packed run cut short")
	}
	d.bit = 0
	return nil
}
