// Copyright ©2026 The exactmh Authors. All rights reserved.
// Use of this source code is governed by a BSD-style
// license that can be found in the LICENSE file.

package exactmh

import (
	"context"
	"fmt"
)

// choiceProgressKey is the context key of WithChoiceProgress.
type choiceProgressKey struct{}

// WithChoiceProgress returns a context under which the automatic default's
// choice ([Choose], and [Sample] with a nil kernel) tells report each step
// as it starts or ends: finding the MAP and the Laplace approximation,
// then each pilot ("pilot 2 of 5: TFMH-CV-CN") and its outcome. The
// choice takes seconds (the MAP's passes over the data, then a second or
// so a pilot) before any chain starts, and a command line shows this
// rather than nothing. report is called from the choosing goroutine, one
// call at a time; it must not block for long. The steps are for people:
// their wording may change.
func WithChoiceProgress(ctx context.Context, report func(step string)) context.Context {
	return context.WithValue(ctx, choiceProgressKey{}, report)
}

// choiceProgress tells ctx's WithChoiceProgress function of a step.
func choiceProgress(ctx context.Context, format string, args ...any) {
	if ctx == nil {
		return
	}
	if f, ok := ctx.Value(choiceProgressKey{}).(func(string)); ok && f != nil {
		f(fmt.Sprintf(format, args...))
	}
}
