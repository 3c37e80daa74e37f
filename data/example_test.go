// Copyright ©2026 The exactmh Authors. All rights reserved.
// Use of this source code is governed by a BSD-style
// license that can be found in the LICENSE file.

package data_test

import (
	"fmt"
	"log"

	"github.com/exactmh/exactmh/data"
	"github.com/exactmh/exactmh/model"
)

// Read a CSV file, build the design of a logistic regression of
// "delayed by more than 15 minutes" and hand it to exactmh.
func Example() {
	f, err := data.ReadFile("testdata/small.csv", nil) // or a .parquet or .arrow file
	if err != nil {
		log.Fatal(err)
	}
	d, err := data.Spec{
		Response: data.Above("delay", 15),
		Terms: []data.Term{
			data.Log("distance"),
			data.HourOfDay("date"),
			data.Categorical("origin", data.TopK(2)),
		},
	}.Build(f)
	if err != nil {
		log.Fatal(err)
	}
	e, err := model.NewLogisticRegression(d.X, d.Y, d.D)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(e.Len(), "rows,", e.Dim(), "coefficients:")
	for j, name := range d.Names {
		fmt.Printf("%-14s center %6.3f scale %5.3f\n", name, d.Center[j], d.Scale[j])
	}
	// Output:
	// 12 rows, 6 coefficients:
	// Intercept      center  0.000 scale 1.000
	// log(distance)  center  6.611 scale 0.705
	// date.hour.sin  center  0.000 scale 1.000
	// date.hour.cos  center  0.000 scale 1.000
	// origin=ATL     center  0.000 scale 1.000
	// origin=ORD     center  0.000 scale 1.000
}

// Unstandardize maps coefficients (a posterior mean, or every draw) back
// to the features' own units.
func ExampleDesign_Unstandardize() {
	f, err := data.ReadFile("testdata/small.parquet", &data.ReadOptions{Columns: []string{"delay", "distance"}})
	if err != nil {
		log.Fatal(err)
	}
	d, err := data.Spec{Response: data.Num("delay"), Terms: []data.Term{data.Num("distance")}}.Build(f)
	if err != nil {
		log.Fatal(err)
	}
	// θ on the standardised scale: the intercept is the prediction at the
	// mean distance, the slope per standard deviation of distance.
	theta := []float64{20, 5}
	beta := d.Unstandardize(theta)
	fmt.Printf("mean distance %.1f, sd %.1f\n", d.Center[1], d.Scale[1])
	fmt.Printf("delay = %.3f + %.5f·distance\n", beta[0], beta[1])
	// Output:
	// mean distance 927.5, sd 662.3
	// delay = 12.998 + 0.00755·distance
}
