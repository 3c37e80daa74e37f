// Copyright ©2026 The exactmh Authors. All rights reserved.
// Use of this source code is governed by a BSD-style
// license that can be found in the LICENSE file.

package exactmh

// Version is the library version written into output files (checkpoints
// and the stancsv package's Stan CSV files).
const Version = "0.11.0"
