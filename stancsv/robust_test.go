// Copyright ©2026 The exactmh Authors. All rights reserved.
// Use of this source code is governed by a BSD-style
// license that can be found in the LICENSE file.

package stancsv_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/exactmh/exactmh/stancsv"
)

// TestManyColumns summarises a file of 200,000 parameter columns, which
// the linear look-up of each parameter's column made take over a minute
// (issue 31 item 11); with a map it is a few passes over the draws.
func TestManyColumns(t *testing.T) {
	if testing.Short() {
		t.Skip("200,000 columns")
	}
	const p, n = 200_000, 4
	var b strings.Builder
	b.WriteString("lp__")
	for j := range p {
		fmt.Fprintf(&b, ",x%d", j)
	}
	b.WriteByte('\n')
	for k := range n {
		fmt.Fprintf(&b, "%d", k)
		for j := range p {
			fmt.Fprintf(&b, ",%d", (j*7+k*3)%5)
		}
		b.WriteByte('\n')
	}
	f, err := stancsv.ReadOptions{}.Read(strings.NewReader(b.String()))
	if err != nil {
		t.Fatal(err)
	}
	s, err := stancsv.Summarize([]*stancsv.File{f, f})
	if err != nil {
		t.Fatal(err)
	}
	if len(s.Params) != p+1 || s.Params[p].Name != fmt.Sprintf("x%d", p-1) {
		t.Errorf("%d parameters, the last %q", len(s.Params), s.Params[len(s.Params)-1].Name)
	}
}

// TestColumnNames refuses empty and repeated column names.
func TestColumnNames(t *testing.T) {
	for body, want := range map[string]string{
		"lp__,a,a\n1,2,3\n": `line 1: columns 2 and 3 are both named "a"`,
		"lp__,,b\n1,2,3\n":  "line 1: column 2 has no name",
	} {
		if _, err := (stancsv.ReadOptions{}).Read(strings.NewReader(body)); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%q: %v, want %q", body, err, want)
		}
	}
}
