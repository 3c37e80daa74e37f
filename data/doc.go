// Copyright ©2026 The exactmh Authors. All rights reserved.
// Use of this source code is governed by a BSD-style
// license that can be found in the LICENSE file.

// Package data turns tabular files (Parquet, Arrow IPC, CSV) into the
// design matrix and response the exactmh energies take.
package data
