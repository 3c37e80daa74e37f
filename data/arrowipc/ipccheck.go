// Copyright ©2026 The exactmh Authors. All rights reserved.
// Use of this source code is governed by a BSD-style
// license that can be found in the LICENSE file.

package arrowipc

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
)

// Before arrow-go parses an Arrow IPC file, checkIPC walks its
// flatbuffers (the footer and every message's metadata) and checks that
// each vector the Arrow schema defines fits in its buffer. arrow-go
// allocates slices of the lengths it reads there (a field's children, a
// schema's fields, custom metadata) before reading their elements, so a
// corrupted length — up to 2³² elements — would exhaust memory, which no
// recover can catch. The checks follow Schema.fbs, Message.fbs and
// File.fbs of the Arrow format.

var errFlatbuffer = errors.New("malformed flatbuffer")

// fb is one flatbuffer.
type fb []byte

func (b fb) u32(p int) (int, error) {
	if p < 0 || p+4 > len(b) {
		return 0, errFlatbuffer
	}
	return int(binary.LittleEndian.Uint32(b[p:])), nil
}

// root returns the root table's position.
func (b fb) root() (int, error) {
	off, err := b.u32(0)
	if err != nil || off >= len(b) {
		return 0, errFlatbuffer
	}
	return off, nil
}

// field returns the position of slot's value in table t (0: absent).
func (b fb) field(t, slot int) (int, error) {
	if t < 0 || t+4 > len(b) {
		return 0, errFlatbuffer
	}
	vt := t - int(int32(binary.LittleEndian.Uint32(b[t:])))
	if vt < 0 || vt+4 > len(b) {
		return 0, errFlatbuffer
	}
	vsize := int(binary.LittleEndian.Uint16(b[vt:]))
	if vsize < 4 || vt+vsize > len(b) {
		return 0, errFlatbuffer
	}
	// As flatbuffers' Table.Offset decides: the slot is present if its
	// entry starts inside the vtable, even when the vtable's (odd) size
	// cuts the entry's second byte off — arrow-go then reads that byte
	// past the vtable, so it must be inside the buffer.
	if 4+2*slot >= vsize {
		return 0, nil
	}
	if vt+4+2*slot+2 > len(b) {
		return 0, errFlatbuffer
	}
	off := int(binary.LittleEndian.Uint16(b[vt+4+2*slot:]))
	if off == 0 {
		return 0, nil
	}
	if t+off >= len(b) {
		return 0, errFlatbuffer
	}
	return t + off, nil
}

// indirect follows the offset at p.
func (b fb) indirect(p int) (int, error) {
	off, err := b.u32(p)
	if err != nil || p+off >= len(b) {
		return 0, errFlatbuffer
	}
	return p + off, nil
}

// table returns the table in slot (0: absent).
func (b fb) table(t, slot int) (int, error) {
	p, err := b.field(t, slot)
	if err != nil || p == 0 {
		return 0, err
	}
	return b.indirect(p)
}

// vector checks the vector (or string) in slot with elements of size
// bytes and returns its start and length (0, 0 if absent).
func (b fb) vector(t, slot, size int) (start, n int, err error) {
	p, err := b.field(t, slot)
	if err != nil || p == 0 {
		return 0, 0, err
	}
	v, err := b.indirect(p)
	if err != nil {
		return 0, 0, err
	}
	n, err = b.u32(v)
	if err != nil || n > (len(b)-v-4)/size {
		return 0, 0, errFlatbuffer
	}
	return v + 4, n, nil
}

// tables checks a vector of tables, calling check on each.
func (b fb) tables(t, slot int, check func(int) error) error {
	start, n, err := b.vector(t, slot, 4)
	if err != nil {
		return err
	}
	for i := range n {
		e, err := b.indirect(start + 4*i)
		if err != nil {
			return err
		}
		if err := check(e); err != nil {
			return err
		}
	}
	return nil
}

// keyValues checks custom metadata: [KeyValue{key: string, value: string}].
func (b fb) keyValues(t, slot int) error {
	return b.tables(t, slot, func(kv int) error {
		if _, _, err := b.vector(kv, 0, 1); err != nil {
			return err
		}
		_, _, err := b.vector(kv, 1, 1)
		return err
	})
}

// schema checks Schema{endianness, fields: [Field], custom_metadata, features: [long]}.
func (b fb) schema(s int) error {
	if err := b.tables(s, 1, func(f int) error { return b.fieldTable(f, 0) }); err != nil {
		return err
	}
	if err := b.keyValues(s, 2); err != nil {
		return err
	}
	_, _, err := b.vector(s, 3, 8)
	return err
}

// fieldTable checks Field{name, nullable, type_type, type, dictionary,
// children: [Field], custom_metadata}.
func (b fb) fieldTable(f, depth int) error {
	if depth > 64 {
		return errFlatbuffer
	}
	if _, _, err := b.vector(f, 0, 1); err != nil {
		return err
	}
	var kind byte
	if p, err := b.field(f, 2); err != nil {
		return err
	} else if p != 0 {
		kind = b[p]
	}
	typ, err := b.table(f, 3)
	if err != nil {
		return err
	}
	if typ != 0 {
		// The type tables' only vectors: Timestamp's timezone and Union's
		// typeIds, both in slot 1.
		switch kind {
		case 10: // Timestamp{unit, timezone: string}
			_, _, err = b.vector(typ, 1, 1)
		case 14: // Union{mode, typeIds: [int]}
			_, _, err = b.vector(typ, 1, 4)
		}
		if err != nil {
			return err
		}
	}
	if _, err := b.table(f, 4); err != nil {
		return err
	}
	if err := b.tables(f, 5, func(c int) error { return b.fieldTable(c, depth+1) }); err != nil {
		return err
	}
	return b.keyValues(f, 6)
}

// recordBatch checks RecordBatch{length, nodes: [FieldNode], buffers:
// [Buffer], compression, variadicBufferCounts: [long]}.
// If the batch's buffers are compressed with zstd it returns them
// (Buffer{offset: long, length: long} is a 16-byte struct) for
// checkZstdBuffers.
func (b fb) recordBatch(r int) (zstdBufs []ipcBuffer, err error) {
	if _, _, err := b.vector(r, 1, 16); err != nil {
		return nil, err
	}
	start, n, err := b.vector(r, 2, 16)
	if err != nil {
		return nil, err
	}
	// BodyCompression{codec: CompressionType (LZ4_FRAME = 0, ZSTD = 1),
	// method}.
	c, err := b.table(r, 3)
	if err != nil {
		return nil, err
	}
	if c != 0 {
		p, err := b.field(c, 0)
		if err != nil {
			return nil, err
		}
		if p != 0 && b[p] == 1 {
			zstdBufs = make([]ipcBuffer, n)
			for i := range zstdBufs {
				q := start + 16*i
				zstdBufs[i] = ipcBuffer{int64(binary.LittleEndian.Uint64(b[q:])), int64(binary.LittleEndian.Uint64(b[q+8:]))}
			}
		}
	}
	_, _, err = b.vector(r, 4, 8)
	return zstdBufs, err
}

// ipcBuffer is a buffer's place in a message body.
type ipcBuffer struct{ off, n int64 }

// message checks Message{version, header_type, header, bodyLength,
// custom_metadata} and returns its body length and, for a batch whose
// buffers are compressed with zstd, the buffers.
func (b fb) message() (int64, []ipcBuffer, error) {
	m, err := b.root()
	if err != nil {
		return 0, nil, err
	}
	var zbufs []ipcBuffer
	var kind byte
	if p, err := b.field(m, 1); err != nil {
		return 0, nil, err
	} else if p != 0 {
		kind = b[p]
	}
	h, err := b.table(m, 2)
	if err != nil {
		return 0, nil, err
	}
	if h != 0 {
		switch kind {
		case 1: // Schema
			err = b.schema(h)
		case 2: // DictionaryBatch{id, data: RecordBatch, isDelta}
			var r int
			if r, err = b.table(h, 1); err == nil && r != 0 {
				zbufs, err = b.recordBatch(r)
			}
		case 3: // RecordBatch
			zbufs, err = b.recordBatch(h)
		}
		if err != nil {
			return 0, nil, err
		}
	}
	var body int64
	if p, err := b.field(m, 3); err != nil {
		return 0, nil, err
	} else if p != 0 {
		if p+8 > len(b) {
			return 0, nil, errFlatbuffer
		}
		body = int64(binary.LittleEndian.Uint64(b[p:]))
	}
	return body, zbufs, b.keyValues(m, 4)
}

// readMessage reads the message framed at off (continuation marker,
// length, flatbuffer) and checks it; it returns the offset after its body,
// or end = true at an end-of-stream marker or the end of r.
func readMessage(r io.ReaderAt, off, size int64) (next int64, end bool, err error) {
	var w [4]byte
	if off == size {
		return 0, true, nil
	}
	if off+4 > size {
		return 0, false, fmt.Errorf("%d stray bytes at the end", size-off)
	}
	if _, err := r.ReadAt(w[:], off); err != nil {
		return 0, false, err
	}
	off += 4
	n := int64(int32(binary.LittleEndian.Uint32(w[:])))
	if n == -1 { // continuation marker
		if off+4 > size {
			return 0, false, fmt.Errorf("message at byte %d cut short", off-4)
		}
		if _, err := r.ReadAt(w[:], off); err != nil {
			return 0, false, err
		}
		off += 4
		n = int64(int32(binary.LittleEndian.Uint32(w[:])))
	}
	if n == 0 {
		return 0, true, nil
	}
	if n < 0 || n > size-off {
		return 0, false, fmt.Errorf("message at byte %d: metadata length %d, but %d bytes remain", off, n, size-off)
	}
	b := make(fb, n)
	if _, err := r.ReadAt(b, off); err != nil {
		return 0, false, err
	}
	body, zbufs, err := b.message()
	if err != nil {
		return 0, false, fmt.Errorf("message at byte %d: %v", off, err)
	}
	off += n
	if body < 0 || body > size-off {
		return 0, false, fmt.Errorf("message at byte %d: body length %d, but %d bytes remain", off-n, body, size-off)
	}
	if err := checkZstdBuffers(r, off, body, zbufs); err != nil {
		return 0, false, fmt.Errorf("message at byte %d: %v", off-n, err)
	}
	return off + body, false, nil
}

// checkIPC checks an Arrow IPC file (file format if file is true) of size
// bytes before arrow-go reads it.
func checkIPC(r io.ReaderAt, size int64, file bool) error {
	if !file {
		off := int64(0)
		for {
			next, end, err := readMessage(r, off, size)
			if err != nil || end {
				return err
			}
			off = next
		}
	}
	// Footer{version, schema: Schema, dictionaries: [Block],
	// recordBatches: [Block], custom_metadata}; Block{offset: long,
	// metaDataLength: int, bodyLength: long} is a 24-byte struct.
	if size < 8+4+6 {
		return fmt.Errorf("%d bytes: too short for the file format", size)
	}
	var w [4]byte
	if _, err := r.ReadAt(w[:], size-10); err != nil {
		return err
	}
	n := int64(int32(binary.LittleEndian.Uint32(w[:])))
	if n <= 0 || n > size-18 {
		return fmt.Errorf("footer length %d in a file of %d bytes", n, size)
	}
	b := make(fb, n)
	if _, err := r.ReadAt(b, size-10-n); err != nil {
		return err
	}
	root, err := b.root()
	if err != nil {
		return fmt.Errorf("footer: %v", err)
	}
	s, err := b.table(root, 1)
	if err == nil && s != 0 {
		err = b.schema(s)
	}
	if err == nil {
		err = b.keyValues(root, 4)
	}
	if err != nil {
		return fmt.Errorf("footer: %v", err)
	}
	for _, slot := range []int{2, 3} {
		start, m, err := b.vector(root, slot, 24)
		if err != nil {
			return fmt.Errorf("footer: %v", err)
		}
		for i := range m {
			p := start + 24*i
			off := int64(binary.LittleEndian.Uint64(b[p:]))
			if off < 0 || off >= size {
				return fmt.Errorf("footer: block %d at offset %d in a file of %d bytes", i, off, size)
			}
			if _, _, err := readMessage(r, off, size); err != nil {
				return err
			}
		}
	}
	return nil
}

// zstdMaxWindow is the largest zstd window accepted whatever the size of
// the buffer it decodes to: zstd's levels up to 19 use windows of at most
// 8 MiB, and a writer that does not know the content's size beforehand
// (a streaming encoder) declares its level's window.
const zstdMaxWindow = 8 << 20

// checkZstdBuffers checks the zstd frames of a batch's compressed buffers
// before arrow-go decodes them. arrow-go decodes them with
// klauspost/compress's streaming decoder, which allows windows up to
// 512 MiB and allocates twice the window a frame's header declares as
// its history, outside the reader's allocator: ten bytes of a corrupted
// frame asked for 1 GiB (TestArrowZstdWindow). Each buffer is its
// uncompressed length (int64, -1 if stored uncompressed) followed by zstd
// frames; every frame's window must be at most the larger of
// zstdMaxWindow and that length, which a frame decoding to that length
// never needs to exceed. The body starts at byte body0 of r and has n
// bytes.
func checkZstdBuffers(r io.ReaderAt, body0, n int64, bufs []ipcBuffer) error {
	var w [8]byte
	for i, buf := range bufs {
		if buf.n == 0 {
			continue
		}
		if buf.off < 0 || buf.n < 8 || buf.off > n || buf.n > n-buf.off {
			return fmt.Errorf("compressed buffer %d at %d of %d bytes in a body of %d", i, buf.off, buf.n, n)
		}
		if _, err := r.ReadAt(w[:], body0+buf.off); err != nil {
			return err
		}
		size := int64(binary.LittleEndian.Uint64(w[:]))
		if size == -1 {
			continue
		}
		if size < 0 {
			return fmt.Errorf("compressed buffer %d: uncompressed length %d", i, size)
		}
		if err := checkZstdFrames(r, body0+buf.off+8, buf.n-8, max(size, zstdMaxWindow)); err != nil {
			return fmt.Errorf("compressed buffer %d (%d bytes uncompressed): %v", i, size, err)
		}
	}
	return nil
}

// checkZstdFrames walks the zstd frames in the n bytes at off (RFC 8878,
// section 3.1) and refuses a frame declaring a window larger than
// maxWindow. Skippable frames are stepped over; blocks are stepped over
// by their headers, so frames after the first are checked too (the
// streaming decoder reads ahead of what arrow-go asks for).
func checkZstdFrames(r io.ReaderAt, off, n, maxWindow int64) error {
	end := off + n
	var h [14]byte
	read := func(p []byte, at int64) error {
		if at+int64(len(p)) > end {
			return fmt.Errorf("zstd frame cut short at byte %d of %d", at-(end-n), n)
		}
		_, err := r.ReadAt(p, at)
		return err
	}
	for off < end {
		if err := read(h[:4], off); err != nil {
			return err
		}
		magic := binary.LittleEndian.Uint32(h[:4])
		if magic&^0xf == 0x184d2a50 { // skippable frame: magic, length, data
			if err := read(h[:8], off); err != nil {
				return err
			}
			off += 8 + int64(binary.LittleEndian.Uint32(h[4:8]))
			continue
		}
		if magic != 0xfd2fb528 {
			return nil // not a frame: the decoder refuses it
		}
		off += 4
		if err := read(h[:1], off); err != nil {
			return err
		}
		fhd := h[0]
		single := fhd&0x20 != 0
		fcsBytes := [4]int{0, 2, 4, 8}[fhd>>6]
		if single && fcsBytes == 0 {
			fcsBytes = 1
		}
		didBytes := [4]int{0, 1, 2, 4}[fhd&3]
		hlen := 1 + didBytes + fcsBytes
		if !single {
			hlen++
		}
		if err := read(h[:hlen], off); err != nil {
			return err
		}
		var window uint64
		if single {
			p := h[1+didBytes:]
			switch fcsBytes {
			case 1:
				window = uint64(p[0])
			case 2:
				window = uint64(binary.LittleEndian.Uint16(p)) + 256
			case 4:
				window = uint64(binary.LittleEndian.Uint32(p))
			case 8:
				window = binary.LittleEndian.Uint64(p)
			}
		} else {
			wd := h[1]
			log := 10 + uint(wd>>3)
			window = 1<<log + (1<<log)/8*uint64(wd&7)
		}
		if window > uint64(maxWindow) {
			return fmt.Errorf("a zstd frame declaring a window of %d bytes, more than the %d its buffer can need", window, maxWindow)
		}
		off += int64(hlen)
		for {
			if err := read(h[:3], off); err != nil {
				return err
			}
			bh := uint32(h[0]) | uint32(h[1])<<8 | uint32(h[2])<<16
			off += 3
			switch (bh >> 1) & 3 {
			case 1: // RLE: one byte
				off++
			default:
				off += int64(bh >> 3)
			}
			if bh&1 != 0 {
				break
			}
			if off > end {
				return fmt.Errorf("zstd block beyond its buffer")
			}
		}
		if fhd&4 != 0 { // content checksum
			off += 4
		}
	}
	return nil
}
