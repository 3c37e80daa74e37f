// Copyright ©2026 The exactmh Authors. All rights reserved.
// Use of this source code is governed by a BSD-style
// license that can be found in the LICENSE file.

// Command exactmh samples Bayesian generalised linear models on tall data
// files with the exact minibatch kernels of package exactmh, in the mould
// of CmdStan: Stan CSV files out, a summary of any Stan CSV files, and
// bound checks before a long run.
//
//	exactmh sample  --data FILE --response SPEC [--terms LIST] [flags]
//	exactmh sample  --data FILE --formula 'y ~ x1 + (1|g)' [flags]
//	exactmh summary FILE...
//	exactmh plot    [--kind trace,rank,intervals] [--out PREFIX] FILE...
//	exactmh check   --data FILE --response SPEC [--terms LIST] [flags]
//
// Run "exactmh help" or "exactmh sample -h" for the flags, the TERMS
// syntax, the kernels and the exit codes.
//
// Exit codes, for schedulers:
//
//	0  done
//	1  other failure (a chain failed, a file could not be written, …)
//	2  bad input, refused before sampling: flags, files, columns, a
//	   kernel that does not fit the model, a checkpoint or choice file
//	   of another model or data
//	3  a bound violation (exactmh check, or a chain that met one)
//	4  interrupted (SIGINT, SIGTERM) with a checkpoint written: run the
//	   same command with --resume
//	5  interrupted with no checkpoint to resume (none asked for, or the
//	   signal came before the first one): run the same command again,
//	   without --resume
//
// A Go runtime crash ("fatal error: …" and a stack trace on stderr) also
// exits with 2; no input is meant to cause one (the readers and the design
// builder refuse, before allocating, what would not fit in memory), so
// report it.
package main

import (
	"errors"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/exactmh/exactmh"
)

// Exit codes.
const (
	exitOK          = 0
	exitFailure     = 1
	exitBadInput    = 2
	exitBound       = 3
	exitInterrupted = 4
	// exitInterruptedAfresh is an interruption that leaves nothing to
	// resume: exit 4 promises a checkpoint, which --resume then needs.
	exitInterruptedAfresh = 5
)

// cliError is an error with the exit code it ends the command with.
type cliError struct {
	code int
	err  error
}

func (e *cliError) Error() string { return e.err.Error() }
func (e *cliError) Unwrap() error { return e.err }

// usageErr is bad input in the flags.
func usageErr(format string, args ...any) error {
	return &cliError{exitBadInput, fmt.Errorf(format, args...)}
}

// inputErr is bad input found in files or the model: exit code 2, or 3 if
// it is a bound violation.
func inputErr(err error) error {
	if err == nil {
		return nil
	}
	if isBoundViolation(err) {
		return &cliError{exitBound, err}
	}
	return &cliError{exitBadInput, err}
}

// failure is any other error: exit code 1, or 3 for a bound violation.
func failure(err error) error {
	if isBoundViolation(err) {
		return &cliError{exitBound, err}
	}
	return &cliError{exitFailure, err}
}

func isBoundViolation(err error) bool {
	var bv *exactmh.BoundViolation
	var lv *exactmh.LowerBoundViolation
	return errors.As(err, &bv) || errors.As(err, &lv)
}

const topUsage = `exactmh: exact minibatch MCMC for Bayesian GLMs on tall data files

Usage:
  exactmh sample  --data FILE --response SPEC [--terms LIST] [flags]
  exactmh sample  --data FILE --formula 'y ~ x1 + (1|g)' [flags]
  exactmh summary FILE...
  exactmh plot    [--kind trace,rank,intervals] [--out PREFIX] FILE...
  exactmh check   --data FILE --response SPEC [--terms LIST] [flags]
  exactmh version

"exactmh COMMAND -h" lists a command's flags.

Exit codes: 0 done; 1 other failure; 2 bad input (refused before
sampling); 3 bound violation; 4 interrupted with a checkpoint written
(run the same command again with --resume); 5 interrupted with no
checkpoint (run the same command again, without --resume). Exit code 2
with a Go stack trace is a crash, not bad input: report it.
`

func main() {
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
}

// run runs the command line args and returns the exit code. Errors go to
// stderr as one line, "exactmh: ...".
func run(args []string, stdout, stderr io.Writer) (code int) {
	defer func() {
		if v := recover(); v != nil { // never a stack trace for the user
			fmt.Fprintf(stderr, "exactmh: internal error: %v\n", oneLine(fmt.Sprint(v)))
			code = exitFailure
		}
	}()
	if len(args) == 0 {
		fmt.Fprint(stderr, topUsage)
		return exitBadInput
	}
	var err error
	switch args[0] {
	case "sample":
		err = cmdSample(args[1:], stdout, stderr)
	case "summary":
		err = cmdSummary(args[1:], stdout, stderr)
	case "plot":
		err = cmdPlot(args[1:], stdout, stderr)
	case "check":
		err = cmdCheck(args[1:], stdout, stderr)
	case "version":
		fmt.Fprintf(stdout, "exactmh %s\n", exactmh.Version)
	case "help", "-h", "-help", "--help":
		fmt.Fprint(stdout, topUsage)
	default:
		err = usageErr("unknown command %q (want sample, summary, plot, check, version or help)", args[0])
	}
	if err == nil {
		return exitOK
	}
	if !errors.Is(err, errHelp) {
		fmt.Fprintf(stderr, "exactmh: %s\n", oneLine(err.Error()))
	}
	return exitCode(err)
}

// exitCode returns the exit code an error ends the command with.
func exitCode(err error) int {
	var ce *cliError
	switch {
	case err == nil:
		return exitOK
	case errors.As(err, &ce):
		return ce.code
	case isBoundViolation(err):
		return exitBound
	}
	return exitFailure
}

// errHelp is returned after -h printed the usage: exit 0, no message.
var errHelp = &cliError{exitOK, errors.New("help")}

// oneLine joins the lines of a message.
func oneLine(s string) string {
	return strings.Join(strings.Fields(strings.ReplaceAll(s, "\n", "; ")), " ")
}
