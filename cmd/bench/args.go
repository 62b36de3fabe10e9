package main

import "strings"

// isArgsError reports whether err comes from cobra's argument validation or
// an unknown command, both of which are usage errors (exit 2).
func isArgsError(err error) bool {
	msg := err.Error()
	for _, p := range []string{"unknown command", "accepts ", "requires at least", "requires at most", "received ", "invalid argument", "unknown flag", "unknown shorthand"} {
		if strings.Contains(msg, p) {
			return true
		}
	}
	return false
}
