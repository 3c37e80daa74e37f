package main

import (
	"io"
	"testing"
)

func TestZZProf(t *testing.T) {
	if err := cmdSummary([]string{"/tmp/cli/big/big_1.csv", "/tmp/cli/big/big_2.csv"}, io.Discard, io.Discard); err != nil {
		t.Fatal(err)
	}
}
