// Copyright ©2026 The exactmh Authors. All rights reserved.
// Use of this source code is governed by a BSD-style
// license that can be found in the LICENSE file.

// Package chainstate encodes a chain's state for its checkpoint and checks
// what a checkpoint gives back, for the kernels of the root package and of
// exactmh/inexact alike: a resumed chain must continue exactly where it
// stopped, and a damaged or foreign checkpoint is an error, never a chain
// that silently samples something else.
package chainstate

import (
	"bytes"
	"encoding/gob"
	"fmt"
)

// Encode encodes a chain's state struct.
func Encode(v any) ([]byte, error) {
	var b bytes.Buffer
	if err := gob.NewEncoder(&b).Encode(v); err != nil {
		return nil, err
	}
	return b.Bytes(), nil
}

// Decode decodes a chain's state struct.
func Decode(b []byte, v any) error {
	return gob.NewDecoder(bytes.NewReader(b)).Decode(v)
}

// RestorePerm decodes a saved permutation of the data into perm, after
// checking that it is one.
func RestorePerm(b []byte, perm []int) error {
	var p []int
	if err := Decode(b, &p); err != nil {
		return err
	}
	if err := CheckPerm("permutation", p, len(perm)); err != nil {
		return err
	}
	copy(perm, p)
	return nil
}

// CheckPerm checks that a saved p is a permutation of the data 0 … n−1.
func CheckPerm[T int | int32](what string, p []T, n int) error {
	if len(p) != n {
		return fmt.Errorf("saved %s of %d data, the posterior has %d", what, len(p), n)
	}
	return CheckDistinct(what, p, n)
}

// CheckDistinct checks that the saved indices idx are distinct data in
// [0, n).
func CheckDistinct[T int | int32](what string, idx []T, n int) error {
	seen := make([]bool, n)
	for k, v := range idx {
		i := int(v)
		if i < 0 || i >= n {
			return fmt.Errorf("saved %s[%d] = %d, want in [0, %d)", what, k, i, n)
		}
		if seen[i] {
			return fmt.Errorf("saved %s[%d] = %d repeats an earlier entry", what, k, i)
		}
		seen[i] = true
	}
	return nil
}
