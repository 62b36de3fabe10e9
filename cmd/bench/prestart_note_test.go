package main

import (
	"strings"
	"testing"
	"time"

	"github.com/mcpbench/bench/recorder"
)

// A batch whose servers started ahead could not be used says how many,
// how long a run waited at most and why the first failed, on one line,
// with what the server wrote escaped; a batch without says nothing.
func TestPrestartNote(t *testing.T) {
	if got := prestartNote(recorder.PrestartFailures{}); got != "" {
		t.Errorf("no failure: %q, want nothing", got)
	}
	got := prestartNote(recorder.PrestartFailures{N: 2, Longest: 60*time.Second + 12*time.Millisecond,
		First: "MCP handshake: server said \x1b[31mno\x1b[0m\nand left"})
	for _, want := range []string{"2 server(s) started ahead", "at most 1m0.012s", "MCP handshake: server said", "and left"} {
		if !strings.Contains(got, want) {
			t.Errorf("note %q lacks %q", got, want)
		}
	}
	if strings.ContainsAny(got, "\x1b\n") {
		t.Errorf("note %q holds a control character", got)
	}
}
