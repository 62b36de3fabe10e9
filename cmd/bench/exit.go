package main

import (
	"context"
	"errors"
	"fmt"
	"io"

	"github.com/mcpbench/bench/internal/escape"
	"github.com/mcpbench/bench/scoring"
)

// Exit codes. They are part of bench's interface: CI scripts branch on them,
// so they are chosen here and nowhere else.
const (
	exitOK           = 0 // success, gate passed
	exitGateFailed   = 1 // a regression past a configured threshold
	exitInvalidInput = 2 // bad flags, arguments, manifests or files
	exitSafety       = 3 // a safety failure
	exitSetup        = 4 // a server, the fake Central or the store could not be set up
	exitInconclusive = 5 // too many stale runs to decide
)

// verdictExit is the exit code of a gate verdict.
func verdictExit(s scoring.Status) int {
	switch s {
	case scoring.StatusRegression:
		return exitGateFailed
	case scoring.StatusSafety:
		return exitSafety
	case scoring.StatusInconclusive:
		return exitInconclusive
	}
	return exitOK
}

// exitError carries the exit code a command chose for its error.
type exitError struct {
	code int
	err  error
}

func (e *exitError) Error() string { return e.err.Error() }
func (e *exitError) Unwrap() error { return e.err }

// usageErr marks err as invalid input or usage (exit 2).
func usageErr(err error) error { return &exitError{code: exitInvalidInput, err: err} }

// setupErr marks err as a setup failure (exit 4).
func setupErr(err error) error { return &exitError{code: exitSetup, err: err} }

// withCode marks err with an explicit exit code.
func withCode(code int, err error) error { return &exitError{code: code, err: err} }

// silentExit reports a non-zero exit code whose explanation the command has
// already printed (a gate verdict, a verify report).
type silentExit struct{ code int }

func (e *silentExit) Error() string { return fmt.Sprintf("exit status %d", e.code) }

// exitCode maps an error returned by a command to the process exit code and
// prints it. It is the only place that decides how bench exits.
func exitCode(err error, stderr io.Writer) int {
	if err == nil {
		return exitOK
	}
	var silent *silentExit
	if errors.As(err, &silent) {
		return silent.code
	}
	// An error may quote a server (its stderr, its messages): its
	// control characters are written out, not sent to the terminal.
	fmt.Fprintf(stderr, "bench: %s\n", escape.Text(err.Error()))
	var ee *exitError
	switch {
	case errors.As(err, &ee):
		return ee.code
	case errors.Is(err, context.Canceled):
		return exitSetup
	default:
		// Errors that reach here unmarked come from setting something up
		// (opening a store, starting a process): treat them as setup failures.
		return exitSetup
	}
}
