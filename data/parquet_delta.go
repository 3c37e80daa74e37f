// Copyright ©2026 The exactmh Authors. All rights reserved.
// Use of this source code is governed by a BSD-style
// license that can be found in the LICENSE file.

package data

import (
	"encoding/binary"
	"fmt"
)

// The encodings Parquet's version 2 writers use for numbers when asked
// (Encodings.md): DELTA_BINARY_PACKED for INT32 and INT64 and
// BYTE_STREAM_SPLIT for FLOAT, DOUBLE, INT32 and INT64. Both decode as a
// stream, a batch at a time, allocating nothing a page declares.

// deltaDecoder decodes DELTA_BINARY_PACKED: a header (values per block,
// miniblocks per block, the total count, the first value), then blocks
// of a minimum delta, the miniblocks' bit widths and the miniblocks, each
// of values per block / miniblocks deltas less the minimum, bit-packed
// least significant bit first. Arithmetic wraps, as the writers' does.
type deltaDecoder struct {
	b         []byte
	perBlock  uint64
	minis     uint64
	perMini   uint64
	total     uint64 // values the header declares
	emitted   uint64
	prev      uint64
	minDelta  uint64
	widths    []byte
	mini      uint64 // miniblocks of the block begun
	left      uint64 // values left in the miniblock
	width     uint
	bit       uint64 // the next value's bit offset into b
	headerErr error
}

func newDeltaDecoder(b []byte) *deltaDecoder {
	d := &deltaDecoder{b: b}
	read := func() uint64 {
		v, k := binary.Uvarint(d.b)
		if k <= 0 {
			d.headerErr = fmt.Errorf("a DELTA_BINARY_PACKED header cut short")
			return 0
		}
		d.b = d.b[k:]
		return v
	}
	d.perBlock, d.minis, d.total = read(), read(), read()
	first := read()
	d.prev = uint64(int64(first>>1) ^ -int64(first&1))
	switch {
	case d.headerErr != nil:
	case d.perBlock == 0 || d.perBlock%128 != 0 || d.perBlock > 1<<20:
		d.headerErr = fmt.Errorf("DELTA_BINARY_PACKED blocks of %d values (want a multiple of 128)", d.perBlock)
	case d.minis == 0 || d.perBlock%d.minis != 0 || (d.perBlock/d.minis)%32 != 0:
		d.headerErr = fmt.Errorf("DELTA_BINARY_PACKED blocks of %d values in %d miniblocks", d.perBlock, d.minis)
	default:
		d.perMini = d.perBlock / d.minis
		d.mini = d.minis // a block header comes first
	}
	return d
}

// next returns the next value.
func (d *deltaDecoder) next() (uint64, error) {
	if d.headerErr != nil {
		return 0, d.headerErr
	}
	if d.emitted >= d.total {
		return 0, fmt.Errorf("more values than the %d DELTA_BINARY_PACKED declares", d.total)
	}
	d.emitted++
	if d.emitted == 1 {
		return d.prev, nil
	}
	if d.left == 0 {
		if err := d.startMini(); err != nil {
			return 0, err
		}
	}
	d.left--
	v, ok := readBits(d.b, &d.bit, d.width)
	if !ok {
		return 0, fmt.Errorf("a DELTA_BINARY_PACKED miniblock cut short")
	}
	d.prev += d.minDelta + v
	return d.prev, nil
}

// startMini moves to the next miniblock, reading a block header first
// when the block's miniblocks are used up.
func (d *deltaDecoder) startMini() error {
	d.b = d.b[(d.bit+7)/8:] // a miniblock ends on a byte
	d.bit = 0
	if d.mini == d.minis {
		m, k := binary.Uvarint(d.b)
		if k <= 0 || uint64(len(d.b)-k) < d.minis {
			return fmt.Errorf("a DELTA_BINARY_PACKED block header cut short")
		}
		d.minDelta = uint64(int64(m>>1) ^ -int64(m&1))
		d.widths = d.b[k : k+int(d.minis)]
		d.b = d.b[k+int(d.minis):]
		d.mini = 0
	}
	w := d.widths[d.mini]
	if w > 64 {
		return fmt.Errorf("a DELTA_BINARY_PACKED miniblock of %d bits", w)
	}
	d.width, d.left = uint(w), d.perMini
	d.mini++
	return nil
}

// decode sets v's slice of the element's type (INT32 or INT64) to the
// next n values.
func (d *deltaDecoder) decode(e *pqElement, v *values, n int) error {
	switch e.typ {
	case pqTypeInt32:
		v.i32 = grow(v.i32, n)
		for i := range n {
			x, err := d.next()
			if err != nil {
				return err
			}
			v.i32[i] = int32(x)
		}
	case pqTypeInt64:
		v.i64 = grow(v.i64, n)
		for i := range n {
			x, err := d.next()
			if err != nil {
				return err
			}
			v.i64[i] = int64(x)
		}
	default:
		return fmt.Errorf("DELTA_BINARY_PACKED values of physical type %s", pqTypeName(e.typ))
	}
	return nil
}

// splitDecoder decodes BYTE_STREAM_SPLIT: the k bytes of each of the
// page's values are spread over k streams, byte j of value i at
// j·count + i, where count is the page's values. A batch is gathered
// into PLAIN order and decoded as PLAIN.
type splitDecoder struct {
	b     []byte
	e     *pqElement
	size  int // bytes a value
	count int // values in the page
	i     int // the next value
	plain []byte
}

func newSplitDecoder(e *pqElement, b []byte) (*splitDecoder, error) {
	var size int
	switch e.typ {
	case pqTypeInt32, pqTypeFloat:
		size = 4
	case pqTypeInt64, pqTypeDouble:
		size = 8
	default:
		return nil, fmt.Errorf("BYTE_STREAM_SPLIT values of physical type %s", pqTypeName(e.typ))
	}
	if len(b)%size != 0 {
		return nil, fmt.Errorf("BYTE_STREAM_SPLIT values of %d bytes in %d bytes", size, len(b))
	}
	return &splitDecoder{b: b, e: e, size: size, count: len(b) / size}, nil
}

// decode sets v's slice of the element's type to the next n values.
func (s *splitDecoder) decode(v *values, n int) error {
	if n > s.count-s.i {
		return fmt.Errorf("%d values asked for, %d left in the page", n, s.count-s.i)
	}
	s.plain = grow(s.plain, n*s.size)
	for k := range n {
		for j := range s.size {
			s.plain[k*s.size+j] = s.b[j*s.count+s.i+k]
		}
	}
	s.i += n
	p := plainDecoder{b: s.plain, e: s.e}
	return p.decode(v, n, false)
}
