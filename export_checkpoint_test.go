// Copyright ©2026 The exactmh Authors. All rights reserved.
// Use of this source code is governed by a BSD-style
// license that can be found in the LICENSE file.

package exactmh

import (
	"bytes"
	"encoding/gob"
)

// CheckpointFile is the checkpoint file format, for tests that corrupt a
// checkpoint field by field.
type CheckpointFile = checkpoint

// EditCheckpoint decodes the checkpoint b, lets edit change it and encodes
// it again.
func EditCheckpoint(b []byte, edit func(*CheckpointFile)) []byte {
	var cp checkpoint
	if err := gob.NewDecoder(bytes.NewReader(b)).Decode(&cp); err != nil {
		panic(err)
	}
	edit(&cp)
	var out bytes.Buffer
	if err := gob.NewEncoder(&out).Encode(&cp); err != nil {
		panic(err)
	}
	return out.Bytes()
}

// ChainCheckpointFile is one chain's part of a CheckpointFile.
type ChainCheckpointFile = chainCheckpoint
