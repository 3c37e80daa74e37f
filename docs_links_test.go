// Copyright ©2026 The exactmh Authors. All rights reserved.
// Use of this source code is governed by a BSD-style
// license that can be found in the LICENSE file.

package exactmh_test

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// mdLink finds Markdown links and images, [text](target) and
// ![alt](target), and HTML src/href attributes.
var mdLink = regexp.MustCompile(`\]\(([^)\s]+)\)|(?:src|href)="([^"]+)"`)

// headingSlug is GitHub's anchor for a Markdown heading: lower case,
// punctuation dropped, spaces as '-'.
func headingSlug(h string) string {
	h = strings.ToLower(strings.TrimSpace(h))
	var b strings.Builder
	for _, r := range h {
		switch {
		case r == ' ' || r == '-':
			b.WriteRune('-')
		case r == '_' || r >= 'a' && r <= 'z' || r >= '0' && r <= '9' || r > 127:
			b.WriteRune(r)
		}
	}
	return b.String()
}

// anchors are the heading anchors of a Markdown file.
func anchors(t *testing.T, path string) map[string]bool {
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]bool{}
	inCode := false
	for _, l := range strings.Split(string(b), "\n") {
		if strings.HasPrefix(l, "```") {
			inCode = !inCode
		}
		if !inCode && strings.HasPrefix(l, "#") {
			out[headingSlug(strings.TrimLeft(l, "#"))] = true
		}
	}
	return out
}

// Every relative link of README.md, docs/*.md and the other READMEs
// resolves: the file or directory exists, and an anchor into a Markdown
// file names one of its headings. README.md stays short enough for a
// newcomer to finish (at most 250 lines); the reference is in docs/.
func TestDocLinks(t *testing.T) {
	pages := []string{"README.md", "ARCHITECTURE.md", "cmd/exactmh/README.md", "examples/README.md"}
	more, err := filepath.Glob("docs/*.md")
	if err != nil {
		t.Fatal(err)
	}
	pages = append(pages, more...)
	checked := 0
	for _, page := range pages {
		b, err := os.ReadFile(page)
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range mdLink.FindAllStringSubmatch(string(b), -1) {
			target := m[1] + m[2]
			if regexp.MustCompile(`^[a-z]+:`).MatchString(target) {
				continue // http:, https:, mailto:
			}
			file, anchor, _ := strings.Cut(target, "#")
			path := page
			if file != "" {
				path = filepath.Join(filepath.Dir(page), file)
				if _, err := os.Stat(path); err != nil {
					t.Errorf("%s: link %q: %v", page, target, err)
					continue
				}
			}
			if anchor != "" && strings.HasSuffix(path, ".md") && !anchors(t, path)[anchor] {
				t.Errorf("%s: link %q: %s has no heading #%s", page, target, path, anchor)
			}
			checked++
		}
	}
	if checked < 20 {
		t.Errorf("checked %d links: the pattern finds too few", checked)
	}
	b, err := os.ReadFile("README.md")
	if err != nil {
		t.Fatal(err)
	}
	if n := strings.Count(string(b), "\n"); n > 250 {
		t.Errorf("README.md has %d lines, want at most 250: move reference material to docs/", n)
	}
}

// TestLayoutDocNamesEveryFile holds docs/layout.md to the tree: every
// non-test Go file of the root package, every package directory beside it
// and every example is named there, so the page a newcomer reads first
// lists what is in the repository.
func TestLayoutDocNamesEveryFile(t *testing.T) {
	b, err := os.ReadFile(filepath.Join("docs", "layout.md"))
	if err != nil {
		t.Fatal(err)
	}
	doc := string(b)
	root, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range root {
		if !strings.HasSuffix(f, "_test.go") && !strings.Contains(doc, "`"+f+"`") {
			t.Errorf("docs/layout.md does not name the root file `%s`", f)
		}
	}
	entries, err := os.ReadDir(".")
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		switch n := e.Name(); {
		case !e.IsDir() || strings.HasPrefix(n, ".") || n == "testdata" || n == "figures":
		case !strings.Contains(doc, "`"+n+"/"):
			t.Errorf("docs/layout.md does not name the directory `%s/`", n)
		}
	}
	examples, err := os.ReadDir("examples")
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range examples {
		if _, err := os.Stat(filepath.Join("examples", e.Name(), "main.go")); err == nil && !regexp.MustCompile(`\b`+regexp.QuoteMeta(e.Name())+`\b`).MatchString(doc) {
			t.Errorf("docs/layout.md does not name the example %s", e.Name())
		}
	}
}
