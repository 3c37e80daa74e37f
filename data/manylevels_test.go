// Copyright ©2026 The exactmh Authors. All rights reserved.
// Use of this source code is governed by a BSD-style
// license that can be found in the LICENSE file.

package data_test

import (
	"bufio"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/exactmh/exactmh/data"
)

// TestBuildManyLevelsLinear builds a one-hot categorical term on an
// identifier of 300,000 levels: Build refuses it for memory, naming the
// term, after work linear in the levels — the memory check comes before
// the check for repeated column names, which is a map. A comparison of
// every name with every other took minutes here (≈ 86 s at 10⁵ levels);
// the guard fails the test after two minutes rather than hang it.
func TestBuildManyLevelsLinear(t *testing.T) {
	if testing.Short() {
		t.Skip("a 300,000-row file")
	}
	const n = 300000
	path := filepath.Join(t.TempDir(), "ids.csv")
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	w := bufio.NewWriter(f)
	w.WriteString("y,id\n")
	for i := range n {
		fmt.Fprintf(w, "%d,id%d\n", i%2, i)
	}
	if err := w.Flush(); err != nil {
		t.Fatal(err)
	}
	f.Close()
	fr, err := data.ReadFile(path, nil)
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() {
		_, err := data.Spec{Response: data.Num("y"), Terms: []data.Term{data.Categorical("id")}}.Build(fr)
		done <- err
	}()
	select {
	case err := <-done:
		if err == nil || !strings.Contains(err.Error(), "memory") || !strings.Contains(err.Error(), `Categorical("id")`) {
			t.Fatalf("cat(id) on %d levels: error %v, want the memory refusal naming the term", n, err)
		}
	case <-time.After(2 * time.Minute):
		t.Fatalf("cat(id) on %d levels: Build still running after two minutes", n)
	}
}
