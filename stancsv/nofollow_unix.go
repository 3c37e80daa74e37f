// Copyright ©2026 The exactmh Authors. All rights reserved.
// Use of this source code is governed by a BSD-style
// license that can be found in the LICENSE file.

//go:build unix

package stancsv

import (
	"errors"
	"fmt"
	"os"
	"syscall"
)

// createNoFollow creates or truncates a file as os.Create does, but
// refuses a symbolic link at name (O_NOFOLLOW) instead of writing to its
// target.
func createNoFollow(name string) (*os.File, error) {
	f, err := os.OpenFile(name, os.O_RDWR|os.O_CREATE|os.O_TRUNC|syscall.O_NOFOLLOW, 0o666)
	if errors.Is(err, syscall.ELOOP) {
		return nil, fmt.Errorf("%s is a symbolic link: refusing to write through it (remove it, or choose another prefix)", name)
	}
	return f, err
}
