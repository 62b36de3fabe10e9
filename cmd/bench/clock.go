package main

import (
	"fmt"
	"os"
	"strings"

	"github.com/mcpbench/bench/internal/escape"
	"github.com/mcpbench/bench/recorder"
	"github.com/mcpbench/bench/traces"
)

// noteClock says once, on stderr, how bench sets the clock of p's server
// (docs/clock.md) when there is something to say: it is pinned, or it is
// not though it should be (no usable libfaketime).
func noteClock(a *app, p *recorder.Profile) {
	if n := recorder.PlanClock(p, os.Environ()).Note; n != "" {
		fmt.Fprintln(a.stderr, "note: "+escape.Line(n)) // it names the server
	}
}

// normalizedLine lists what a profile's normalize rules replaced in an
// event, as placeholder=original, for traces show.
func normalizedLine(list []traces.Normalized, full bool) string {
	parts := make([]string, len(list))
	for i, n := range list {
		parts[i] = n.Placeholder + "=" + abbreviate(n.Original, 60, full)
	}
	return "normalized  " + abbreviate(strings.Join(parts, ", "), 200, full)
}
