// Copyright ©2026 The exactmh Authors. All rights reserved.
// Use of this source code is governed by a BSD-style
// license that can be found in the LICENSE file.

package data

import (
	"bytes"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	_ "github.com/exactmh/exactmh/data/arrowipc" // registers ReadArrow

	"gonum.org/v1/gonum/mat"
)

var smallFiles = []string{"small.parquet", "small.arrow", "small.arrows", "small.csv"}

func read(t *testing.T, name string, opt *ReadOptions) *Frame {
	t.Helper()
	f, err := ReadFile(filepath.Join("testdata", name), opt)
	if err != nil {
		t.Fatal(err)
	}
	return f
}

// TestReadFormats reads the same table from every format.
func TestReadFormats(t *testing.T) {
	want := []Column{{"date", Time}, {"delay", Int}, {"distance", Int}, {"origin", String}, {"destination", String}, {"load", Float}, {"late", Bool}}
	for _, name := range smallFiles {
		t.Run(name, func(t *testing.T) {
			f := read(t, name, nil)
			if f.Len() != len(small) {
				t.Fatalf("Len = %d, want %d", f.Len(), len(small))
			}
			if got := f.Columns(); !slices.Equal(got, want) {
				t.Fatalf("Columns = %v, want %v", got, want)
			}
			if f.Source() != name {
				t.Errorf("Source = %q", f.Source())
			}
			dates, _ := f.Strings("date")
			delay, _ := f.Float64s("delay")
			origin, _ := f.Strings("origin")
			dest, _ := f.Strings("destination")
			load, _ := f.Float64s("load")
			late, _ := f.Float64s("late")
			for r, row := range small {
				if dates[r] != row.date || delay[r] != float64(row.delay) || origin[r] != row.origin ||
					dest[r] != row.destination || load[r] != row.load || (late[r] == 1) != row.late {
					t.Errorf("row %d: %s %v %s %s %v %v, want %+v", r+1, dates[r], delay[r], origin[r], dest[r], load[r], late[r], row)
				}
			}
		})
	}
}

func TestReadOptions(t *testing.T) {
	for _, name := range smallFiles {
		f := read(t, name, &ReadOptions{Columns: []string{"origin", "delay"}, Limit: 7})
		if f.Len() != 7 || !slices.Equal(f.Columns(), []Column{{"origin", String}, {"delay", Int}}) {
			t.Errorf("%s: Len %d, Columns %v", name, f.Len(), f.Columns())
		}
		_, err := ReadFile(filepath.Join("testdata", name), &ReadOptions{Columns: []string{"delay", "dealy"}})
		wantErr(t, err, name, `no column "dealy"`, `"distance"`, `"origin"`)
		_, err = ReadFile(filepath.Join("testdata", name), &ReadOptions{Limit: -1})
		wantErr(t, err, name, "Limit = -1")
	}
}

func wantErr(t *testing.T, err error, parts ...string) {
	t.Helper()
	if err == nil {
		t.Fatalf("no error, want one with %q", parts)
	}
	for _, p := range parts {
		if !strings.Contains(err.Error(), p) {
			t.Errorf("error %q does not contain %q", err, p)
		}
	}
}

var fullSpec = Spec{
	Response: Above("delay", 15),
	Terms: []Term{
		Log("distance"), Num("load"), HourOfDay("date"), DayOfWeek("date"), Month("date"),
		Categorical("origin", TopK(3)), Categorical("destination", Reference("ORD")), Num("late"),
	},
}

// reference computes fullSpec's design naively, row by row from small.
func reference(t *testing.T) (x [][]float64, y []float64, names []string) {
	names = []string{"Intercept", "log(distance)", "load", "date.hour.sin", "date.hour.cos",
		"date.dow=Tue", "date.dow=Wed", "date.dow=Thu", "date.dow=Fri", "date.dow=Sat", "date.dow=Sun",
		"date.month=Feb", "date.month=Mar",
		// origin: ORD 4, ATL 3, DFW 3 kept, BOS and SEA pooled into other (2);
		// reference ORD, the most frequent.
		"origin=ATL", "origin=DFW", "origin=other",
		"destination=ATL", "destination=BOS", "destination=DFW", "destination=SEA",
		"late"}
	for _, row := range small {
		tm := smallTime(t, row.date)
		h := float64(tm.Hour()) + float64(tm.Minute())/60 + float64(tm.Second())/3600
		v := []float64{1, math.Log(float64(row.distance)), row.load, math.Sin(2 * math.Pi * h / 24), math.Cos(2 * math.Pi * h / 24)}
		for _, d := range []time.Weekday{time.Tuesday, time.Wednesday, time.Thursday, time.Friday, time.Saturday, time.Sunday} {
			v = append(v, b2f(tm.Weekday() == d))
		}
		v = append(v, b2f(tm.Month() == time.February), b2f(tm.Month() == time.March))
		v = append(v, b2f(row.origin == "ATL"), b2f(row.origin == "DFW"), b2f(row.origin == "BOS" || row.origin == "SEA"))
		for _, d := range []string{"ATL", "BOS", "DFW", "SEA"} {
			v = append(v, b2f(row.destination == d))
		}
		v = append(v, b2f(row.late))
		x = append(x, v)
		y = append(y, b2f(row.delay > 15))
	}
	// Standardise the numeric features (sample sd).
	for _, j := range []int{1, 2, 20} {
		var m, ss float64
		for _, v := range x {
			m += v[j]
		}
		m /= float64(len(x))
		for _, v := range x {
			ss += (v[j] - m) * (v[j] - m)
		}
		sd := math.Sqrt(ss / float64(len(x)-1))
		for _, v := range x {
			v[j] = (v[j] - m) / sd
		}
	}
	return x, y, names
}

func b2f(b bool) float64 {
	if b {
		return 1
	}
	return 0
}

// TestBuildExpected checks every format's design against the naive one.
func TestBuildExpected(t *testing.T) {
	x, y, names := reference(t)
	for _, name := range smallFiles {
		t.Run(name, func(t *testing.T) {
			d, err := fullSpec.Build(read(t, name, nil))
			if err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(d.Names, names) {
				t.Fatalf("Names =\n%q\nwant\n%q", d.Names, names)
			}
			if d.N != len(small) || d.D != len(names) || len(d.X) != d.N*d.D || !slices.Equal(d.Y, y) {
				t.Fatalf("N %d D %d len(X) %d Y %v, want Y %v", d.N, d.D, len(d.X), d.Y, y)
			}
			for i := range x {
				for j := range x[i] {
					if got := d.X[i*d.D+j]; math.Abs(got-x[i][j]) > 1e-12 {
						t.Errorf("X[%d, %s] = %v, want %v", i, names[j], got, x[i][j])
					}
				}
			}
			if d.YName != "delay>15" || d.Dropped != 0 || d.Rows != nil || d.Source != name || !d.Intercept {
				t.Errorf("YName %q Dropped %d Rows %v Source %q Intercept %v", d.YName, d.Dropped, d.Rows, d.Source, d.Intercept)
			}
		})
	}
}

// TestCalendarTerms checks hours, weekdays and months on known times.
func TestCalendarTerms(t *testing.T) {
	f := read(t, "small.csv", nil)
	d, err := Spec{Response: Num("delay"), Terms: []Term{HourOfDay("date"), DayOfWeek("date"), Month("date")}, NoIntercept: true}.Build(f)
	if err != nil {
		t.Fatal(err)
	}
	at := func(i int, name string) float64 { return d.X[i*d.D+slices.Index(d.Names, name)] }
	// Row 2: Tuesday 2024-01-02 13:30, h = 13.5.
	if s, c := at(1, "date.hour.sin"), at(1, "date.hour.cos"); math.Abs(s-math.Sin(2*math.Pi*13.5/24)) > 1e-15 || math.Abs(c-math.Cos(2*math.Pi*13.5/24)) > 1e-15 {
		t.Errorf("13:30: sin %v cos %v", s, c)
	}
	// Row 6: Saturday 2024-03-02 00:00: sin 0, cos 1.
	if s, c := at(5, "date.hour.sin"), at(5, "date.hour.cos"); s != 0 || c != 1 {
		t.Errorf("00:00: sin %v cos %v", s, c)
	}
	// Row 9: 17:20:30, h = 17 + 20.5/60.
	if s := at(8, "date.hour.sin"); math.Abs(s-math.Sin(2*math.Pi*(17+20.5/60)/24)) > 1e-15 {
		t.Errorf("17:20:30: sin %v", s)
	}
	for i, want := range []struct{ dow, month string }{
		{"", ""}, {"Tue", ""}, {"Wed", ""}, {"Thu", "Feb"}, {"Fri", "Feb"}, {"Sat", "Mar"},
		{"Sun", "Mar"}, {"", ""}, {"", "Feb"}, {"Tue", "Mar"}, {"Wed", ""}, {"Fri", "Feb"},
	} {
		for _, day := range weekdayNames[1:] {
			if got := at(i, "date.dow="+day); got != b2f(day == want.dow) {
				t.Errorf("row %d: date.dow=%s = %v", i+1, day, got)
			}
		}
		for _, m := range []string{"Feb", "Mar"} {
			if got := at(i, "date.month="+m); got != b2f(m == want.month) {
				t.Errorf("row %d: date.month=%s = %v", i+1, m, got)
			}
		}
	}
	if slices.Contains(d.Names, "date.month=Apr") {
		t.Errorf("a column for a month absent from the data: %q", d.Names)
	}
}

// TestCivil checks the integer calendar against package time over
// 1600–2400.
func TestCivil(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	lo, hi := time.Date(1600, 1, 1, 0, 0, 0, 0, time.UTC).UnixMicro(), time.Date(2400, 1, 1, 0, 0, 0, 0, time.UTC).UnixMicro()
	for range 100000 {
		us := lo + rng.Int64N(hi-lo)
		tm := time.UnixMicro(us).UTC()
		day, rem := splitMicros(us)
		if weekday(day) != (int(tm.Weekday())+6)%7 || civilMonth(day) != int(tm.Month()) ||
			rem != int64(tm.Hour())*3600e6+int64(tm.Minute())*60e6+int64(tm.Second())*1e6+int64(tm.Nanosecond()/1000) {
			t.Fatalf("%v: weekday %d month %d rem %d", tm, weekday(day), civilMonth(day), rem)
		}
	}
}

// TestTopKReference checks pooling and the choice of the reference.
func TestTopKReference(t *testing.T) {
	f := read(t, "small.csv", nil)
	build := func(opts ...CatOption) (*Design, error) {
		return Spec{Response: Num("delay"), Terms: []Term{Categorical("origin", opts...)}}.Build(f)
	}
	for _, c := range []struct {
		opts  []CatOption
		names []string
	}{
		// ORD 4, ATL 3, DFW 3, BOS 1, SEA 1: the reference is ORD.
		{nil, []string{"origin=ATL", "origin=BOS", "origin=DFW", "origin=SEA"}},
		// TopK(2) keeps ORD and ATL (ATL before DFW by name); other has 5
		// rows and is the reference.
		{[]CatOption{TopK(2)}, []string{"origin=ATL", "origin=ORD"}},
		{[]CatOption{TopK(2), Reference("ORD")}, []string{"origin=ATL", "origin=other"}},
		{[]CatOption{Reference("SEA")}, []string{"origin=ATL", "origin=BOS", "origin=DFW", "origin=ORD"}},
		{[]CatOption{TopK(10)}, []string{"origin=ATL", "origin=BOS", "origin=DFW", "origin=SEA"}},
	} {
		d, err := build(c.opts...)
		if err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(d.Names[1:], c.names) {
			t.Errorf("%s: Names %q, want %q", d.Names, d.Names[1:], c.names)
		}
	}
	d, _ := build(TopK(2))
	for i, row := range small {
		pooled := row.origin != "ORD" && row.origin != "ATL"
		if d.X[i*d.D+1] != b2f(row.origin == "ATL") || d.X[i*d.D+2] != b2f(row.origin == "ORD") || pooled && (d.X[i*d.D+1] != 0 || d.X[i*d.D+2] != 0) {
			t.Errorf("row %d (%s): %v", i+1, row.origin, d.X[i*d.D:(i+1)*d.D])
		}
	}
	_, err := build(Reference("LAX"))
	wantErr(t, err, "small.csv", `no level "LAX"`, `"ORD" (4 rows)`)
	_, err = build(TopK(2), Reference("DFW"))
	wantErr(t, err, "small.csv", `"DFW"`, `pooled into "other" by TopK(2)`)
	_, err = build(TopK(0))
	wantErr(t, err, "small.csv", "TopK(0)")
	// Categorical on an int and a bool column: levels in numeric order.
	d, err = Spec{Response: Num("delay"), Terms: []Term{Categorical("late"), Categorical("distance", Reference("500"))}}.Build(f)
	if err != nil {
		t.Fatal(err)
	}
	if d.Names[1] != "late=true" || d.Names[2] != "distance=230" || d.Names[3] != "distance=300" || d.Names[d.D-1] != "distance=2500" {
		t.Errorf("Names %q", d.Names)
	}
}

// TestStandardize checks the recorded transform and the round trip of
// Unstandardize on single vectors and rows of draws.
func TestStandardize(t *testing.T) {
	f := read(t, "small.parquet", nil)
	std, err := fullSpec.Build(f)
	if err != nil {
		t.Fatal(err)
	}
	rawSpec := fullSpec
	rawSpec.NoStandardize = true
	raw, err := rawSpec.Build(f)
	if err != nil {
		t.Fatal(err)
	}
	for j, name := range std.Names {
		var m, ss float64
		for i := range std.N {
			m += std.X[i*std.D+j]
		}
		m /= float64(std.N)
		for i := range std.N {
			ss += (std.X[i*std.D+j] - m) * (std.X[i*std.D+j] - m)
		}
		sd := math.Sqrt(ss / float64(std.N-1))
		standardised := name == "log(distance)" || name == "load" || name == "late"
		if standardised != (std.Scale[j] != 1) {
			t.Errorf("%s: Center %v Scale %v", name, std.Center[j], std.Scale[j])
		}
		if standardised && (math.Abs(m) > 1e-12 || math.Abs(sd-1) > 1e-12) {
			t.Errorf("%s: mean %v sd %v", name, m, sd)
		}
		for i := range std.N {
			if got := raw.X[i*raw.D+j]; math.Abs(got-(std.X[i*std.D+j]*std.Scale[j]+std.Center[j])) > 1e-12 {
				t.Errorf("%s row %d: raw %v, standardised %v", name, i+1, got, std.X[i*std.D+j])
			}
		}
	}
	if j := slices.Index(std.Names, "load"); math.Abs(std.Center[j]-0.7325) > 1e-15 {
		t.Errorf("Center of load %v", std.Center[j])
	}
	// Three draws at once.
	rng := rand.New(rand.NewPCG(3, 4))
	theta := make([]float64, 3*std.D)
	for k := range theta {
		theta[k] = rng.NormFloat64()
	}
	beta := std.Unstandardize(theta)
	for s := range 3 {
		for i := range std.N {
			var es, er float64
			for j := range std.D {
				es += std.X[i*std.D+j] * theta[s*std.D+j]
				er += raw.X[i*raw.D+j] * beta[s*std.D+j]
			}
			if math.Abs(es-er) > 1e-10*(1+math.Abs(es)) {
				t.Errorf("draw %d row %d: standardised %v, raw %v", s, i+1, es, er)
			}
		}
	}
	if std.Unstandardize(theta[:5]) != nil {
		t.Error("Unstandardize of a wrong length is not nil")
	}
	// Without an intercept, the features are only scaled.
	ni := fullSpec
	ni.NoIntercept = true
	d, err := ni.Build(f)
	if err != nil {
		t.Fatal(err)
	}
	if slices.ContainsFunc(d.Center, func(c float64) bool { return c != 0 }) || d.Names[0] != "log(distance)" {
		t.Errorf("NoIntercept: Center %v Names %q", d.Center, d.Names)
	}
}

// TestDropMissing checks the counts and the error without DropMissing.
func TestDropMissing(t *testing.T) {
	spec := Spec{Response: Above("delay", 15), Terms: []Term{Num("load"), Categorical("origin")}}
	for _, name := range []string{"missing.parquet", "missing.arrow", "missing.csv"} {
		f := read(t, name, nil)
		_, err := spec.Build(f)
		wantErr(t, err, name, `row 3, column "load": missing value`, "DropMissing")
		drop := spec
		drop.DropMissing = true
		d, err := drop.Build(f)
		if err != nil {
			t.Fatal(err)
		}
		if d.Dropped != 2 || d.N != len(small)-2 || !slices.Equal(d.Rows, []int{0, 1, 3, 4, 5, 6, 8, 9, 10, 11}) {
			t.Errorf("%s: Dropped %d N %d Rows %v", name, d.Dropped, d.N, d.Rows)
		}
		for i, r := range d.Rows {
			if d.Y[i] != b2f(small[r].delay > 15) {
				t.Errorf("%s: Y[%d] = %v for row %d", name, i, d.Y[i], r+1)
			}
		}
		// Columns the Spec does not use do not drop rows.
		d, err = Spec{Response: Num("delay"), Terms: []Term{Num("distance")}}.Build(f)
		if err != nil || d.Dropped != 0 || d.N != len(small) {
			t.Errorf("%s: unused column: %v %+v", name, err, d)
		}
	}
}

func writeTemp(t *testing.T, name, content string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// TestErrors checks that every error names the file, row, column and
// value it is about.
func TestErrors(t *testing.T) {
	f := read(t, "small.csv", nil)
	_, err := ReadParquet("testdata/nothere.parquet", nil)
	wantErr(t, err, "nothere.parquet", "no such file")
	_, err = ReadCSV("testdata/nothere.csv", nil)
	wantErr(t, err, "nothere.csv", "no such file")
	_, err = ReadArrow("testdata/nothere.arrow", nil)
	wantErr(t, err, "nothere.arrow", "no such file")
	_, err = ReadFile("x.xlsx", nil)
	wantErr(t, err, "x.xlsx", "unknown extension")

	build := func(s Spec, f *Frame) error { _, err := s.Build(f); return err }
	wantErr(t, build(Spec{Response: Num("delay"), Terms: []Term{Num("distnace")}}, f),
		"small.csv", `no column "distnace"`, `"distance"`, "Spec.Terms[0]")
	wantErr(t, build(Spec{Terms: []Term{Num("distance")}}, f), "small.csv", "Spec.Response is nil")
	wantErr(t, build(Spec{Response: Categorical("origin")}, f), "small.csv", "response must be")
	wantErr(t, build(Spec{Response: Num("delay"), Terms: []Term{nil}}, f), "Spec.Terms[0] is nil")
	wantErr(t, build(Spec{Response: Num("delay"), NoIntercept: true}, f), "small.csv", "no columns")
	wantErr(t, build(Spec{Response: Num("delay"), Terms: []Term{Num("origin")}}, f),
		"small.csv", `column "origin" is string, not numeric`, `row 1 has "ORD", which is not a number`)
	wantErr(t, build(Spec{Response: Num("delay"), Terms: []Term{Categorical("load")}}, f),
		"small.csv", `column "load" is float`, "Categorical")
	wantErr(t, build(Spec{Response: Num("delay"), Terms: []Term{HourOfDay("distance")}}, f),
		"small.csv", `column "distance" is int, not time`)
	wantErr(t, build(Spec{Response: Num("delay"), Terms: []Term{Num("date")}}, f),
		"small.csv", `column "date" is time`)
	wantErr(t, build(Spec{Response: Num("delay"), Terms: []Term{Log("delay")}}, f),
		"small.csv", `row 1, column "delay": log of -3`)
	wantErr(t, build(Spec{Response: Log1p("delay"), Terms: []Term{Num("load")}}, f),
		"small.csv", `row 1, column "delay": log1p of -3`)
	wantErr(t, build(Spec{Response: Num("delay"), Terms: []Term{Num("load"), Num("load")}}, f),
		"small.csv", `two columns are named "load"`)

	// Non-numeric values in a numeric column, NaN and Inf.
	p := writeTemp(t, "bad.csv", "y,x,z\n1,2.5,1\n0,3..5,2\n1,4,Inf\n")
	g, err := ReadCSV(p, nil)
	if err != nil {
		t.Fatal(err)
	}
	wantErr(t, build(Spec{Response: Num("y"), Terms: []Term{Num("x")}}, g),
		"bad.csv", `column "x" is string`, `row 2 has "3..5", which is not a number`)
	wantErr(t, build(Spec{Response: Num("y"), Terms: []Term{Num("z")}}, g),
		"bad.csv", `row 3, column "z": value +Inf`)
	m, _ := FromMatrix(mat.NewDense(3, 2, []float64{1, 1, 0, math.NaN(), 1, 3}), []string{"y", "x"})
	wantErr(t, build(Spec{Response: Num("y"), Terms: []Term{Num("x")}}, m), "matrix", `row 2, column "x": missing value`)

	// Zero rows, also after dropping.
	p = writeTemp(t, "empty.csv", "y,x\n")
	g, err = ReadCSV(p, nil)
	if err != nil {
		t.Fatal(err)
	}
	wantErr(t, build(Spec{Response: Num("y"), Terms: []Term{Num("x")}}, g), "empty.csv", "no rows")
	p = writeTemp(t, "allna.csv", "y,x\n1,NA\n0,\n")
	g, _ = ReadCSV(p, nil)
	wantErr(t, build(Spec{Response: Num("y"), Terms: []Term{Num("x")}, DropMissing: true}, g),
		"allna.csv", "all 2 rows have a missing or non-finite value", `"x"`)
	_, err = ReadCSV(writeTemp(t, "nothing.csv", ""), nil)
	wantErr(t, err, "nothing.csv", "no header")
	_, err = ReadCSV(writeTemp(t, "ragged.csv", "a,b\n1,2\n3\n"), nil)
	wantErr(t, err, "ragged.csv", "row 2 (line 3)")
	_, err = ReadCSV(writeTemp(t, "dup.csv", "a,b,a\n1,2,3\n"), nil)
	wantErr(t, err, "dup.csv", `header cells 1 and 3 are both "a"`)

	// Constant columns.
	p = writeTemp(t, "const.csv", "y,x,c,s,t\n1,2,7,a,2024-01-01 10:00:00\n0,3,7,a,2024-01-02 10:00:00\n1,4,7,a,2024-01-03 10:00:00\n")
	g, err = ReadCSV(p, nil)
	if err != nil {
		t.Fatal(err)
	}
	wantErr(t, build(Spec{Response: Num("y"), Terms: []Term{Num("x"), Num("c")}}, g),
		"const.csv", `column "c" is constant (7 in all 3 rows used)`)
	wantErr(t, build(Spec{Response: Num("y"), Terms: []Term{Log("c")}}, g),
		"const.csv", `column "log(c)" is constant (1.9459`)
	wantErr(t, build(Spec{Response: Num("y"), Terms: []Term{Categorical("s")}}, g),
		"const.csv", `column "s" has the single level "a"`)
	wantErr(t, build(Spec{Response: Num("y"), Terms: []Term{HourOfDay("t")}}, g),
		"const.csv", `column "t": every time of day in the 3 rows used is 10:00:00`)

	// FromMatrix's own checks.
	_, err = FromMatrix(mat.NewDense(2, 2, nil), []string{"a"})
	wantErr(t, err, "1 names", "2 columns")
	_, err = FromMatrix(mat.NewDense(2, 2, nil), []string{"a", "a"})
	wantErr(t, err, `both "a"`)
}

// TestCorrupt cuts and flips the binary files: every read is an error or
// a Frame, never a panic.
func TestCorrupt(t *testing.T) {
	for _, name := range []string{"small.parquet", "small.arrow", "small.arrows", "missing.parquet"} {
		content, err := os.ReadFile(filepath.Join("testdata", name))
		if err != nil {
			t.Fatal(err)
		}
		read := readParquet
		if !strings.HasSuffix(name, ".parquet") {
			read = readArrow
		}
		// A stream cut between messages is a valid shorter stream: only
		// the other formats must refuse every cut.
		for cut := 0; cut < len(content); cut += 7 {
			if _, err := read(bytes.NewReader(content[:cut]), name, nil); err == nil && cut < len(content)/2 && name != "small.arrows" {
				t.Errorf("%s cut at %d: no error", name, cut)
			}
		}
		rng := rand.New(rand.NewPCG(5, 6))
		for range 100 {
			b := slices.Clone(content)
			for range 1 + rng.IntN(4) {
				b[rng.IntN(len(b))] = byte(rng.Uint32())
			}
			read(bytes.NewReader(b), name, nil)
		}
	}
	_, err := ReadParquet(writeTemp(t, "cut.parquet", "PAR1\x00\x00PAR1"), nil)
	wantErr(t, err, "cut.parquet", "not a readable Parquet file")
	_, err = ReadArrow(writeTemp(t, "cut.arrow", "ARROW1\x00\x00garbage"), nil)
	wantErr(t, err, "cut.arrow", "not a readable Arrow IPC")
}

func TestFromMatrix(t *testing.T) {
	m := mat.NewDense(4, 2, []float64{1, 0.5, 0, 1.5, 1, 2.5, 0, 4})
	f, err := FromMatrix(m, nil)
	if err != nil {
		t.Fatal(err)
	}
	if f.Len() != 4 || !slices.Equal(f.Columns(), []Column{{"x1", Float}, {"x2", Float}}) {
		t.Fatalf("Len %d Columns %v", f.Len(), f.Columns())
	}
	d, err := Spec{Response: Num("x1"), Terms: []Term{Num("x2")}, NoStandardize: true}.Build(f)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(d.X, []float64{1, 0.5, 1, 1.5, 1, 2.5, 1, 4}) || !slices.Equal(d.Y, []float64{1, 0, 1, 0}) {
		t.Errorf("X %v Y %v", d.X, d.Y)
	}
}
