// Copyright ©2026 The exactmh Authors. All rights reserved.
// Use of this source code is governed by a BSD-style
// license that can be found in the LICENSE file.

package exactmh

import (
	"fmt"
	"runtime/debug"
)

// PanicError is the error a run returns when user code called by the
// driver — an Energy, Prior, Proposal, Recorder, Metric or a whole Kernel —
// panics. The panic is recovered, so it does not kill the process: the
// chain it happened in stops, the run ends with Status Failed, and the
// draws made before it are kept. A panic leaves the chain in an unknown
// state, so such a run cannot be resumed or checkpointed.
type PanicError struct {
	// Chain is the chain the panic happened in, its 0-based index in the
	// run (Result.Chains[Chain]), −1 if in none (a Recorder's Init or
	// Finish). The message numbers it from 1 among the chains of the
	// whole run (chainNumber), as Progress, the Stan CSV files and the
	// command do.
	Chain int
	// Transition is the 0-based transition (warmup included) during which
	// it happened, −1 if outside a transition (Kernel.Start, a Recorder's
	// Init or Finish, restoring a checkpoint).
	Transition int
	// Where names the call that panicked: "Step" (the kernel's
	// transition, with every Energy, Prior and Proposal call it makes),
	// "Recorder.Record", "Kernel.Start" …
	Where string
	// Value is the value passed to panic, and Stack the goroutine's stack
	// when it was recovered, which shows the panicking function.
	Value any
	Stack []byte

	first int // Settings.FirstChain, for the message's number
}

// Error says which chain and transition panicked, in what, and with what
// value.
func (e *PanicError) Error() string {
	switch {
	case e.Chain >= 0 && e.Transition >= 0:
		return fmt.Sprintf("chain %d, transition %d: panic in %s: %v", chainNumber(e.first, e.Chain), e.Transition, e.Where, e.Value)
	case e.Chain >= 0:
		return fmt.Sprintf("chain %d: panic in %s: %v", chainNumber(e.first, e.Chain), e.Where, e.Value)
	}
	return fmt.Sprintf("panic in %s: %v", e.Where, e.Value)
}

// Unwrap returns the panic value if it is an error (a runtime.Error for
// an index out of range or a nil dereference), so that errors.Is and
// errors.As see it.
func (e *PanicError) Unwrap() error {
	err, _ := e.Value.(error)
	return err
}

// chainNumber is how messages number chain c (0-based) of a run whose
// first chain is chain first of the whole (Settings.FirstChain): from 1,
// counting the whole run's chains, as Progress prints them, stancsv names
// their files (run_1.csv) and the command logs them, so that one chain
// has one number everywhere.
func chainNumber(first, c int) int { return first + c + 1 }

// newPanicError records a recovered panic value v with the current stack;
// first is Settings.FirstChain.
func newPanicError(first, chain, transition int, where string, v any) *PanicError {
	return &PanicError{Chain: chain, Transition: transition, Where: where, Value: v, Stack: debug.Stack(), first: first}
}

// protect calls f and turns a panic in it into a *PanicError; first is
// Settings.FirstChain.
func protect(first, chain int, where string, f func() error) (err error) {
	defer func() {
		if v := recover(); v != nil {
			err = newPanicError(first, chain, -1, where, v)
		}
	}()
	return f()
}

// guard calls f and turns a panic in it — in an Energy, Prior or other
// code f calls, or in a block of a parallel pass, which forBlocks raises
// again in this goroutine — into the error "exactmh: panic in where: …"
// wrapping a *PanicError (Chain and Transition −1): the entry points
// outside Sample (FindMAP, FindLaplace, ControlVariates, Hessian, Choose)
// return errors, as Sample does, rather than crash the caller.
func guard(where string, f func() error) (err error) {
	defer func() {
		if v := recover(); v != nil {
			err = fmt.Errorf("exactmh: %w", newPanicError(0, -1, -1, where, v))
		}
	}()
	return f()
}

// RecorderError is the error of a run whose Recorder failed (a full disk,
// a closed file): Record, InitResume or Finish returned Err. Record's error
// stops the run — Status Failed, as the output is incomplete — but every
// chain's state is intact (the transition being recorded was completed and
// its draw kept), so unlike other failures the run can be resumed and
// checkpointed once the cause is fixed: Resume(ctx, res, 0) finishes it,
// and a ResumeRecorder (Progress, stancsv.Recorder) rewrites its output
// from the run so far, so no draw is missing from it. A plain Recorder is
// not told again of the transitions it failed on.
type RecorderError struct {
	// Op is the Recorder method that failed: "Record", "InitResume" or
	// "Finish".
	Op string
	// Chain and Transition locate a failed Record (Chain is the 0-based
	// index in the run, numbered from 1 in the message as in PanicError);
	// −1 for the other methods.
	Chain, Transition int
	// Err is what the Recorder returned.
	Err error

	first int // Settings.FirstChain, for the message's number
}

// Error names the method, where it failed, and the recorder's error.
func (e *RecorderError) Error() string {
	if e.Chain >= 0 {
		return fmt.Sprintf("chain %d: recorder: %s at transition %d: %v", chainNumber(e.first, e.Chain), e.Op, e.Transition, e.Err)
	}
	return fmt.Sprintf("recorder: %s: %v", e.Op, e.Err)
}

// Unwrap returns the recorder's error.
func (e *RecorderError) Unwrap() error { return e.Err }
