// Copyright ©2026 The exactmh Authors. All rights reserved.
// Use of this source code is governed by a BSD-style
// license that can be found in the LICENSE file.

package data

import "time"

// Time columns hold wall-clock readings as microseconds since
// 1970-01-01 00:00 of the same clock, so hour, weekday and month come out
// of integer arithmetic, without time.Time and its zone lookups.

const (
	microsPerHour = 3600e6
	microsPerDay  = 86400e6
)

// splitMicros returns the day number since 1970-01-01 and the
// microseconds into that day, flooring toward −∞.
func splitMicros(us int64) (day, rem int64) {
	day = us / microsPerDay
	rem = us % microsPerDay
	if rem < 0 {
		day--
		rem += microsPerDay
	}
	return day, rem
}

// weekday returns 0 for Monday … 6 for Sunday of day number day
// (1970-01-01 was a Thursday).
func weekday(day int64) int {
	w := (day + 3) % 7
	if w < 0 {
		w += 7
	}
	return int(w)
}

// civilMonth returns the month (1 … 12) of day number day: the inverse of
// days_from_civil in Howard Hinnant's date algorithms.
func civilMonth(day int64) int {
	z := day + 719468
	era := z / 146097
	if z < 0 && z%146097 != 0 {
		era--
	}
	doe := z - era*146097                                  // [0, 146096]
	yoe := (doe - doe/1460 + doe/36524 - doe/146096) / 365 // [0, 399]
	doy := doe - (365*yoe + yoe/4 - yoe/100)               // [0, 365]
	mp := (5*doy + 2) / 153                                // [0, 11], from March
	if mp < 10 {
		return int(mp + 3)
	}
	return int(mp - 9)
}

// formatMicros formats a wall-clock reading.
func formatMicros(us int64) string {
	return time.UnixMicro(us).UTC().Format("2006-01-02 15:04:05.999999")
}

// timeLayouts are the layouts ReadCSV recognises, tried in order. A zone
// offset, where the text has one, is dropped: the wall clock as written
// is kept.
var timeLayouts = []string{
	time.RFC3339Nano,
	"2006-01-02 15:04:05.999999999Z07:00",
	"2006-01-02T15:04:05.999999999",
	"2006-01-02 15:04:05.999999999",
	"2006-01-02T15:04",
	"2006-01-02 15:04",
	"2006-01-02",
}

// parseTime parses s with the layout last used first; it returns the wall
// clock in microseconds and the layout's index.
func parseTime(s string, hint int) (int64, int, bool) {
	if len(s) < 10 || s[4] != '-' {
		return 0, hint, false
	}
	if t, err := time.Parse(timeLayouts[hint], s); err == nil {
		return wallMicros(t), hint, true
	}
	for k, layout := range timeLayouts {
		if k == hint {
			continue
		}
		if t, err := time.Parse(layout, s); err == nil {
			return wallMicros(t), k, true
		}
	}
	return 0, hint, false
}

// wallMicros is t's wall clock reading in microseconds since 1970-01-01.
func wallMicros(t time.Time) int64 {
	_, off := t.Zone()
	return t.UnixMicro() + int64(off)*1e6
}
