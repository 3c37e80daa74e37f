// Copyright ©2026 The exactmh Authors. All rights reserved.
// Use of this source code is governed by a BSD-style
// license that can be found in the LICENSE file.

//go:build !unix

package stancsv

import (
	"fmt"
	"os"
)

// createNoFollow creates or truncates a file, refusing a symbolic link at
// name (checked before creating: not atomic where there is no
// O_NOFOLLOW).
func createNoFollow(name string) (*os.File, error) {
	if st, err := os.Lstat(name); err == nil && st.Mode()&os.ModeSymlink != 0 {
		return nil, fmt.Errorf("%s is a symbolic link: refusing to write through it (remove it, or choose another prefix)", name)
	}
	return os.Create(name)
}
