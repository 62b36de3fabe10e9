package main

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"

	"github.com/mcpbench/bench/traces"
)

// TestShowNormalized: traces show prints what the normalize rules replaced
// under the event it was replaced in, as placeholder=original.
func TestShowNormalized(t *testing.T) {
	run := &traces.Run{Manifest: traces.Manifest{Format: traces.FormatVersion, Mode: traces.ModeRecord}, Events: []traces.Event{
		{Kind: traces.KindCall, Call: &traces.Call{Tool: "events_now", Arguments: json.RawMessage(`{}`), Result: json.RawMessage(`{"content":[{"text":"now <time>","type":"text"}]}`)},
			Normalized: []traces.Normalized{{Placeholder: "<time>", Original: "2026-12-01T14:05:00Z", Rule: "pattern"}}},
		{Kind: traces.KindHTTP, HTTP: &traces.HTTP{Method: "GET", Path: "/events", Query: "start-at=<from>&end-at=<time>", Status: 200, Call: 0},
			Normalized: []traces.Normalized{{Placeholder: "<from>", Original: "2026-12-01T13:05:00Z"}, {Placeholder: "<time>", Original: "2026-12-01T14:05:00Z"}}},
		{Kind: traces.KindAnswer, Answer: &traces.Answer{Text: "ok"}},
	}}
	var b bytes.Buffer
	printRun(&b, "golden/x", run, false)
	out := b.String()
	lines := strings.Split(out, "\n")
	under := map[string]string{} // event kind -> the line under its event
	for i, l := range lines {
		if f := strings.Fields(l); len(f) >= 2 && i+1 < len(lines) {
			under[f[1]] = strings.TrimSpace(lines[i+1]) // f[0] is the time
		}
	}
	if got := under["call"]; got != "normalized  <time>=2026-12-01T14:05:00Z" {
		t.Errorf("under the call: %q\n%s", got, out)
	}
	if got := under["http"]; got != "normalized  <from>=2026-12-01T13:05:00Z, <time>=2026-12-01T14:05:00Z" {
		t.Errorf("under the http exchange: %q\n%s", got, out)
	}
	if strings.Count(out, "normalized") != 2 {
		t.Errorf("an event without originals shows some:\n%s", out)
	}
}
