// Copyright ©2026 The exactmh Authors. All rights reserved.
// Use of this source code is governed by a BSD-style
// license that can be found in the LICENSE file.

package exactmh

import (
	"context"
	"fmt"
)

// choiceProgressKey is the context key under which choose passes
// Settings.ChoiceProgress down to the pilots.
type choiceProgressKey struct{}

// withChoiceProgress returns ctx carrying report for choiceProgress.
func withChoiceProgress(ctx context.Context, report func(step string)) context.Context {
	if report == nil {
		return ctx
	}
	return context.WithValue(ctx, choiceProgressKey{}, report)
}

// choiceProgress tells ctx's Settings.ChoiceProgress function of a step.
func choiceProgress(ctx context.Context, format string, args ...any) {
	if ctx == nil {
		return
	}
	if f, ok := ctx.Value(choiceProgressKey{}).(func(string)); ok && f != nil {
		f(fmt.Sprintf(format, args...))
	}
}
