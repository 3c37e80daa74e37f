// Copyright ©2026 The exactmh Authors. All rights reserved.
// Use of this source code is governed by a BSD-style
// license that can be found in the LICENSE file.

#include "textflag.h"

// func lines(base unsafe.Pointer, stride, size uintptr, idx []int) uint64
//
// For each i in idx: start = base + i·stride, last = start + size − 1;
// prefetch start, start+64, … while ≤ last, then last (whose line the
// 64-byte steps from an unaligned start can pass over).
TEXT ·lines(SB), NOSPLIT, $0-56
	MOVQ base+0(FP), AX
	MOVQ stride+8(FP), BX
	MOVQ size+16(FP), CX
	MOVQ idx_base+24(FP), SI
	MOVQ idx_len+32(FP), DI
	MOVQ $0, ret+48(FP)
	TESTQ CX, CX
	JEQ done
	DECQ CX
	TESTQ DI, DI
	JEQ done

row:
	MOVQ (SI), DX
	IMULQ BX, DX
	ADDQ AX, DX
	LEAQ (DX)(CX*1), R8

line:
	PREFETCHT0 (DX)
	ADDQ $64, DX
	CMPQ DX, R8
	JLS line
	PREFETCHT0 (R8)
	ADDQ $8, SI
	DECQ DI
	JNE row

done:
	RET
