package data

import (
	"testing"
	"time"
)

func TestProbe(t *testing.T) {
	t0 := time.Now()
	f, err := ReadParquet("../../shared/data/flights/flights-3m.parquet", nil)
	if err != nil {
		t.Fatal(err)
	}
	t1 := time.Now()
	d, err := Spec{Response: Above("delay", 15), Terms: []Term{Log("distance"), HourOfDay("date"), DayOfWeek("date"), Month("date"), Categorical("origin", TopK(10)), Categorical("destination", TopK(10))}}.Build(f)
	if err != nil {
		t.Fatal(err)
	}
	t.Log(t1.Sub(t0), time.Since(t1), d.N, d.D, d.Names)
	var s float64
	for _, y := range d.Y { s += y }
	t.Log(s / float64(d.N))
}
