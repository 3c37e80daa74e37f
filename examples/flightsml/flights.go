// Copyright ©2026 The exactmh Authors. All rights reserved.
// Use of this source code is governed by a BSD-style
// license that can be found in the LICENSE file.

package main

import (
	"github.com/exactmh/exactmh"
	"github.com/exactmh/exactmh/data"
	"github.com/exactmh/exactmh/examples/internal/report"
	"github.com/exactmh/exactmh/model"
)

// flightsSpec is the model, issue 30's: a flight arrives more than
// 15 minutes late ~ log distance + hour of day + weekday + month, with a
// random intercept per origin and per destination airport (crossed),
// every airport a level: lme4's
//
//	delay > 15 ~ log(distance) + hour + weekday + month + (1 | origin) + (1 | destination)
var flightsSpec = data.Spec{
	Response: data.Above("delay", 15),
	Terms: []data.Term{
		data.Log("distance"), data.HourOfDay("date"), data.DayOfWeek("date"), data.Month("date"),
		data.Random("origin"), data.Random("destination"),
	},
}

// flightsPosterior reads the flights file (path, or the bundled one) and
// returns the posterior of flightsSpec: normal(0, 5²) priors on the
// fixed effects (standardised features), half-normal(1) on each τ. The
// design holds the fixed effects; the random effects go from
// Design.Groups into model.Factor as they are (no N × G matrix).
func flightsPosterior(path string, rows int, f32 bool) (*exactmh.Posterior, error) {
	path, err := report.FindFlights(path)
	if err != nil {
		return nil, err
	}
	fr, err := data.ReadFile(path, &data.ReadOptions{Columns: []string{"date", "delay", "distance", "origin", "destination"}, Limit: rows})
	if err != nil {
		return nil, err
	}
	d, err := flightsSpec.Build(fr)
	if err != nil {
		return nil, err
	}
	m := &model.Multilevel{Family: model.LogisticFamily{}, Y: d.Y, FixedSD: make([]float64, d.D), Float32: f32}
	for j, name := range d.Names {
		m.Fixed = append(m.Fixed, model.Covariate{Name: name, Values: d.Column(j)})
		m.FixedSD[j] = 5
	}
	for _, g := range d.Groups {
		m.Factors = append(m.Factors, model.Factor{Name: g.Name, Index: g.Index, Levels: g.Levels, Tau: model.HalfNormal(1)})
	}
	return model.NewMultilevel(m)
}
