// Copyright ©2026 The exactmh Authors. All rights reserved.
// Use of this source code is governed by a BSD-style
// license that can be found in the LICENSE file.

package data

import (
	"os/exec"
	"strings"
	"testing"
)

// heavyModules are the modules a first build of the quickstart must not
// download: arrow-go and what it brings (Thrift, Flatbuffers, the LZ4
// and Brotli modules, Arrow Flight's gRPC and protobuf) and gonum/plot
// with its fonts and image modules. Package data reads Parquet itself,
// with klauspost/compress's zstd decoder (zstd is the codec of the
// bundled flights and of most writers' defaults), and registers Arrow IPC
// and the rarer codecs from sub-packages (see the package documentation
// on dependencies).
var heavyModules = []string{
	"github.com/apache/arrow-go", "github.com/apache/thrift", "github.com/google/flatbuffers",
	"github.com/pierrec/lz4", "github.com/andybalholm/brotli",
	"google.golang.org/grpc", "google.golang.org/protobuf",
	"gonum.org/v1/plot", "golang.org/x/image", "codeberg.org/go-fonts", "codeberg.org/go-latex",
}

// TestLightDependencies checks that package data and the quickstart
// (go run ./examples/quickstart) build without the heavy modules: a
// first build from an empty module cache downloads the module itself,
// gonum, klauspost/compress and golang.org/x/tools only (the figures are in
// figures/bench/firstbuild.txt).
func TestLightDependencies(t *testing.T) {
	gobin, err := exec.LookPath("go")
	if err != nil {
		t.Skipf("no go command to list the dependencies: %v", err)
	}
	for _, pkg := range []string{".", "../examples/quickstart"} {
		out, err := exec.Command(gobin, "list", "-deps", "-f", "{{.ImportPath}} {{with .Module}}{{.Path}}{{end}}", pkg).CombinedOutput()
		if err != nil {
			t.Fatalf("go list -deps %s: %v\n%s", pkg, err, out)
		}
		lines := strings.Split(strings.TrimSpace(string(out)), "\n")
		if len(lines) < 10 {
			t.Fatalf("go list -deps %s listed %d packages: %q", pkg, len(lines), lines)
		}
		for _, line := range lines {
			for _, heavy := range heavyModules {
				if strings.Contains(line, heavy) {
					t.Errorf("%s depends on %s", pkg, line)
				}
			}
		}
	}
}
