package polyagamma

import (
	"bufio"
	"os"
	"strconv"
	"strings"
	"testing"
)

func readRef(t *testing.T) [][3]float64 {
	f, err := os.Open("testdata/weight_ref.txt")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var out [][3]float64
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		fs := strings.Fields(sc.Text())
		var r [3]float64
		for i := range 3 {
			r[i], err = strconv.ParseFloat(fs[i], 64)
			if err != nil {
				t.Fatal(err)
			}
		}
		out = append(out, r)
	}
	return out
}
