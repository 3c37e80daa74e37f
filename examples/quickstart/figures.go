// Copyright ©2026 The exactmh Authors. All rights reserved.
// Use of this source code is governed by a BSD-style
// license that can be found in the LICENSE file.

//go:build plot

package main

import (
	"fmt"
	"path/filepath"
	"strings"

	"github.com/exactmh/exactmh"
	"github.com/exactmh/exactmh/data"
	"github.com/exactmh/exactmh/examples/internal/figure"
	"github.com/exactmh/exactmh/examples/internal/report"
	"github.com/exactmh/exactmh/stanplot"
)

func init() { saveFigures = figures }

// figures draws, into -out, a trace plot of a few coefficients (package
// stanplot, as exactmh plot draws them) and the odds-ratio figure.
func figures(cf *report.Common, res *exactmh.Result, design *data.Design) error {
	draws, err := stanplot.FromResult(res)
	if err != nil {
		return err
	}
	// The coefficients as sampled: the intercept, log distance, the daily
	// cycle and July, whose posterior has the longest tail.
	var shownTrace []string
	for _, n := range draws.Names {
		if n == "Intercept" || n == "log(distance)" || n == "date.hour.sin" || n == "date.month=Jul" {
			shownTrace = append(shownTrace, n)
		}
	}
	if draws, err = draws.Select(shownTrace...); err != nil {
		return err
	}
	if err := stanplot.Trace(filepath.Join(cf.Out, "quickstart_trace.png"), draws, &stanplot.Options{Columns: 2}); err != nil {
		return err
	}
	var shown []figure.Interval
	for _, r := range oddsRatios(res, design) {
		if !strings.HasPrefix(r.Name, "Intercept") {
			shown = append(shown, figure.Interval{Name: r.Name, Mid: r.Mid, Low: r.Low, High: r.High})
		}
	}
	return figure.Intervals(filepath.Join(cf.Out, "quickstart_odds.png"),
		fmt.Sprintf("Odds of a flight arriving > 15 min late (%d flights, 2001): posterior median and 90%% interval", design.N),
		"odds ratio", shown, 1, true)
}
