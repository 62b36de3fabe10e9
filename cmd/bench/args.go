package main

import (
	"errors"
	"strings"
)

// isArgsError reports whether err is cobra's own complaint about the
// command line: an unknown command or a wrong number of arguments (flag
// errors are marked through SetFlagErrorFunc). Errors a command already
// marked keep their code: a setup failure whose text happens to contain
// one of these words stays a setup failure.
func isArgsError(err error) bool {
	if err == nil {
		return false
	}
	var ee *exitError
	var silent *silentExit
	if errors.As(err, &ee) || errors.As(err, &silent) {
		return false
	}
	msg := err.Error()
	for _, p := range []string{"unknown command", "accepts ", "requires at least", "requires at most", "arg(s), received"} {
		if strings.Contains(msg, p) {
			return true
		}
	}
	return false
}
