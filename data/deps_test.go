// Copyright ©2026 The exactmh Authors. All rights reserved.
// Use of this source code is governed by a BSD-style
// license that can be found in the LICENSE file.

package data

import (
	"os/exec"
	"strings"
	"testing"
)

// TestLightDependencies checks that the package builds without Arrow
// Flight, gRPC and protobuf, which arrow-go's pqarrow would pull in: the
// Parquet reader uses the column chunk readers of parquet/file instead
// (see the package documentation).
func TestLightDependencies(t *testing.T) {
	gobin, err := exec.LookPath("go")
	if err != nil {
		t.Skipf("no go command to list the dependencies: %v", err)
	}
	out, err := exec.Command(gobin, "list", "-deps", ".").CombinedOutput()
	if err != nil {
		t.Fatalf("go list -deps: %v\n%s", err, out)
	}
	deps := strings.Fields(string(out))
	if len(deps) < 10 {
		t.Fatalf("go list -deps listed %d packages: %q", len(deps), deps)
	}
	for _, p := range deps {
		for _, banned := range []string{"google.golang.org/grpc", "google.golang.org/protobuf", "arrow-go/v18/arrow/flight", "arrow-go/v18/parquet/pqarrow"} {
			if strings.HasPrefix(p, banned) || strings.Contains(p, banned) {
				t.Errorf("package data depends on %s", p)
			}
		}
	}
}
