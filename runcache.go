// Copyright ©2026 The exactmh Authors. All rights reserved.
// Use of this source code is governed by a BSD-style
// license that can be found in the LICENSE file.

package exactmh

import (
	"errors"
	"fmt"
	"sync"
)

// runCache holds what the chains of one run can share because it is built
// from the posterior alone and only read afterwards: the tempered bounds
// and the alias tables over them, O(N) each. Without it every chain builds
// its own (TunaMH: 24 bytes per datum per chain). The chains' Targets of a
// Sample share one; a Target made by NewTarget has none and builds for
// itself.
type runCache struct {
	mu sync.Mutex
	m  map[string]*cacheEntry
}

type cacheEntry struct {
	once sync.Once
	val  any
	err  error
}

func newRunCache() *runCache { return &runCache{m: map[string]*cacheEntry{}} }

// shared returns build's value for key, building it once per run (nil
// cache: every time). Concurrent callers of the same key wait for the
// first; an error is shared as the value is.
func shared[T any](c *runCache, key string, build func() (T, error)) (T, error) {
	if c == nil {
		return build()
	}
	c.mu.Lock()
	e := c.m[key]
	if e == nil {
		e = &cacheEntry{}
		c.m[key] = e
	}
	c.mu.Unlock()
	var panicked any
	e.once.Do(func() {
		defer func() {
			if p := recover(); p != nil {
				// The builder's goroutine panics on (Sample turns it into
				// its chain's error); the others get an error, not a nil.
				panicked = p
				e.err = fmt.Errorf("building %s panicked: %v", key, p)
			}
		}()
		e.val, e.err = build()
	})
	if panicked != nil {
		panic(panicked)
	}
	if errors.Is(e.err, errInterrupted) {
		// A build abandoned for a cancellation (a pilot's timeout in the
		// automatic default) is not the value: the next caller builds it
		// again rather than inherit the interruption.
		c.mu.Lock()
		if c.m[key] == e {
			delete(c.m, key)
		}
		c.mu.Unlock()
	}
	v, _ := e.val.(T)
	return v, e.err
}
