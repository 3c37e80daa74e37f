package main

import (
	"bytes"
	"strings"
	"testing"
)

func TestTable(t *testing.T) {
	in := `{"kernel":"TunaMH","exact":true,"accept_rate":0.6161,"mean_batch":86.31,"evals_per_step":86.31,"ess_bulk_min":null,"ess_per_sec":35.6,"seconds":10.0,"sym_kl":0.0198}
{"kernel":"MH","exact":true,"accept_rate":0.392,"mean_batch":1000000,"evals_per_step":1000000,"ess_bulk_min":3,"ess_per_sec":0.3,"seconds":10.0}
`
	var out bytes.Buffer
	if err := table(strings.NewReader(in), &out, append(shared, "sym_kl")); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(out.String()), "\n")
	if len(lines) != 4 {
		t.Fatalf("%d lines:\n%s", len(lines), out.String())
	}
	if lines[2] != "| TunaMH | yes | 0.6161 | 86.31 | 86.31 | – | 35.6 | 10 | 0.0198 |" {
		t.Errorf("row %q", lines[2])
	}
	if !strings.HasSuffix(lines[3], "| – |") {
		t.Errorf("missing field not shown as –: %q", lines[3])
	}
	if err := table(strings.NewReader("{bad"), &out, shared); err == nil {
		t.Error("bad JSON: no error")
	}
}
