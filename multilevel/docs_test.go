// Copyright ©2026 The exactmh Authors. All rights reserved.
// Use of this source code is governed by a BSD-style
// license that can be found in the LICENSE file.

package multilevel_test

import (
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/exactmh/exactmh"
)

// kernelTypes returns the exported types of the package in dir that have
// a Start method (its kernels), sorted.
func kernelTypes(t *testing.T, dir string) []string {
	t.Helper()
	fset := token.NewFileSet()
	pkgs, err := parser.ParseDir(fset, dir, func(fi os.FileInfo) bool { return !strings.HasSuffix(fi.Name(), "_test.go") }, 0)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, pkg := range pkgs {
		for _, f := range pkg.Files {
			for _, d := range f.Decls {
				fd, ok := d.(*ast.FuncDecl)
				if !ok || fd.Recv == nil || fd.Name.Name != "Start" {
					continue
				}
				typ := fd.Recv.List[0].Type
				if s, ok := typ.(*ast.StarExpr); ok {
					typ = s.X
				}
				if id, ok := typ.(*ast.Ident); ok && id.IsExported() && !slices.Contains(names, id.Name) {
					names = append(names, id.Name)
				}
			}
		}
	}
	slices.Sort(names)
	return names
}

// undocumented returns the names that doc does not name as `Name`.
func undocumented(names []string, doc string) []string {
	var missing []string
	for _, n := range names {
		if !strings.Contains(doc, "`"+n+"`") {
			missing = append(missing, n)
		}
	}
	return missing
}

// docSection finds the sections of docs/multilevel.md a comment cites,
// once its line breaks and "//" are folded to spaces:
// docs/multilevel.md, section "X" (or (sections "X" and "Y"), "X"
// through "Y").
var docSection = regexp.MustCompile(`docs/multilevel\.md,? \(?sections? ("[^"]+"(?: (?:and|through) "[^"]+")?)`)

// commentFold folds a source file's line breaks, comment markers and
// runs of white space to single spaces.
var commentFold = regexp.MustCompile(`\s*\n\s*(//)?\s*|\s+`)

// TestMultilevelDocNamesEveryKernel: docs/multilevel.md, which holds the
// derivation of every multilevel move and bound, names every kernel of
// the package (its exported types with a Start method; GroupGibbs and
// GroupSMH, which the registry must hold too) and Center, and every
// section the package's comments cite is one of its headings.
func TestMultilevelDocNamesEveryKernel(t *testing.T) {
	b, err := os.ReadFile("../docs/multilevel.md")
	if err != nil {
		t.Fatal(err)
	}
	doc := string(b)
	kernels := kernelTypes(t, ".")
	if !slices.Contains(kernels, "GroupGibbs") || !slices.Contains(kernels, "GroupSMH") {
		t.Fatalf("kernels found %q, want GroupGibbs and GroupSMH among them", kernels)
	}
	for _, ki := range exactmh.Kernels() {
		if ki.NeedsMultilevel && !slices.Contains(kernels, ki.Name) {
			t.Errorf("registered multilevel kernel %s is not an exported type of the package with a Start method", ki.Name)
		}
	}
	for _, n := range undocumented(append(kernels, "Center"), doc) {
		t.Errorf("docs/multilevel.md does not name %s: add its derivation", n)
	}
	if got := undocumented([]string{"GroupGibbs", "NoSuchKernel"}, doc); !slices.Equal(got, []string{"NoSuchKernel"}) {
		t.Errorf("undocumented found %q, want [NoSuchKernel]: the check would miss an omission", got)
	}

	headings := map[string]bool{}
	for _, l := range strings.Split(doc, "\n") {
		if h, ok := strings.CutPrefix(l, "## "); ok {
			headings[h] = true
		}
	}
	files, err := os.ReadDir(".")
	if err != nil {
		t.Fatal(err)
	}
	cited := 0
	for _, f := range files {
		if !strings.HasSuffix(f.Name(), ".go") || strings.HasSuffix(f.Name(), "_test.go") {
			continue
		}
		src, err := os.ReadFile(f.Name())
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range docSection.FindAllStringSubmatch(commentFold.ReplaceAllString(string(src), " "), -1) {
			for _, q := range regexp.MustCompile(`"([^"]+)"`).FindAllStringSubmatch(m[1], -1) {
				cited++
				if !headings[q[1]] {
					t.Errorf("%s cites docs/multilevel.md section %q, which has no such heading", f.Name(), q[1])
				}
			}
		}
	}
	if cited < 5 {
		t.Errorf("the package's comments cite %d sections of docs/multilevel.md, want the kernels' godoc and the moves' files to cite theirs", cited)
	}
}
