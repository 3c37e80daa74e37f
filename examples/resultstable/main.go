// Resultstable turns the examples' -json rows into a Markdown table, the
// way the results tables of docs/figures.md are made:
//
//	go run ./examples/tgm -json -quiet | go run ./examples/resultstable
//	go run ./examples/rlr -json -quiet -setting aux | go run ./examples/resultstable -extra d,target_accept,ess_per_sec_median
//
// Every row gets the columns all examples share (kernel, exact,
// accept_rate, mean_batch, evals_per_step, ess_bulk_min, ess_per_sec,
// seconds) followed by the -extra fields, in order.
package main

import (
	"bufio"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"log"
	"os"
	"strconv"
	"strings"

	"github.com/exactmh/exactmh/examples/internal/report"
)

var shared = []string{"kernel", "exact", "accept_rate", "mean_batch", "evals_per_step", "ess_bulk_min", "ess_per_sec", "seconds"}

func main() {
	extra := flag.String("extra", "", "comma-separated extra JSON fields to show after the shared ones")
	flag.Bool("quick", false, "accepted for uniformity with the other examples (no effect)")
	flag.Bool("quiet", false, "accepted for uniformity with the other examples (no effect)")
	flag.Parse()
	log.SetFlags(0)
	log.SetPrefix("resultstable: ")
	cols := shared
	if *extra != "" {
		cols = append(append([]string(nil), shared...), strings.Split(*extra, ",")...)
	}
	if err := table(os.Stdin, os.Stdout, cols); err != nil {
		log.Fatal(err)
	}
}

// table reads JSON objects, one per line, and writes the Markdown table.
func table(r io.Reader, w io.Writer, cols []string) error {
	fmt.Fprintf(w, "| %s |\n|%s\n", strings.Join(cols, " | "), strings.Repeat("---|", len(cols)))
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 1<<16), 1<<24)
	line := 0
	for sc.Scan() {
		line++
		text := strings.TrimSpace(sc.Text())
		if text == "" {
			continue
		}
		var row map[string]any
		if err := json.Unmarshal([]byte(text), &row); err != nil {
			return fmt.Errorf("line %d: %w", line, err)
		}
		if report.IsHeader(row) {
			defer fmt.Fprintf(w, "\nMeasured on %v (%v), %v, commit %v: `%v`.\n", row["machine"], row["go"], row["date"], row["commit"], row["command"])
			continue
		}
		cells := make([]string, len(cols))
		for j, c := range cols {
			cells[j] = format(row[c])
		}
		fmt.Fprintf(w, "| %s |\n", strings.Join(cells, " | "))
	}
	return sc.Err()
}

// format prints numbers with four significant digits, null as "–".
func format(v any) string {
	switch x := v.(type) {
	case nil:
		return "–"
	case float64:
		return strconv.FormatFloat(x, 'g', 4, 64)
	case bool:
		if x {
			return "yes"
		}
		return "no"
	case string:
		return x
	default:
		b, _ := json.Marshal(x)
		return string(b)
	}
}
