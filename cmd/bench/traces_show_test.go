package main

import (
	"bytes"
	"encoding/json"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/mcpbench/bench/traces"
)

// showTimes parses the time column of traces show's event rows.
func showTimes(t *testing.T, out string) []time.Duration {
	t.Helper()
	var times []time.Duration
	row := regexp.MustCompile(`^  +(\S+)  (initialize|tools|turn|call|http|elicit|EGRESS|answer|ERROR)\b`)
	for _, l := range strings.Split(out, "\n") {
		m := row.FindStringSubmatch(l)
		if m == nil {
			continue
		}
		d, err := time.ParseDuration(m[1])
		if err != nil {
			t.Fatalf("time %q of row %q: %v", m[1], l, err)
		}
		times = append(times, d)
	}
	return times
}

// TestTracesShowOneOrigin: every row counts from the run's start and rows
// come in time order. A run stored before the recorder's fix counted its
// HTTP calls from the fake Central's start, 388 ms after the run's: they
// were printed at 20 ms after a call at 408 ms.
func TestTracesShowOneOrigin(t *testing.T) {
	cases := []struct {
		name      string
		httpAt    int64 // the HTTP call's stored time
		wantHTTP  string
		wantShift bool
	}{
		{"fake counted from its own start (stored before the fix)", 20_000, "408ms", true},
		{"one origin (recorded since)", 409_000, "409ms", false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			run := &traces.Run{Manifest: traces.Manifest{Format: traces.FormatVersion, Mode: traces.ModeRecord}, Events: []traces.Event{
				{Kind: traces.KindTools, AtUS: 300_000, Tools: &traces.Tools{Tools: json.RawMessage(`[]`)}},
				{Kind: traces.KindTurn, AtUS: 301_000, Turn: &traces.Turn{Response: json.RawMessage(`{}`), LatencyUS: 100_000}},
				{Kind: traces.KindCall, AtUS: 408_000, Call: &traces.Call{Index: 0, Tool: "get", Arguments: json.RawMessage(`{}`), LatencyUS: 5_000}},
				{Kind: traces.KindTurn, AtUS: 414_000, Turn: &traces.Turn{Index: 1, Response: json.RawMessage(`{}`)}},
				// The journal is placed after the call's event, and so after
				// the next turn too when it is appended at the end.
				{Kind: traces.KindHTTP, AtUS: c.httpAt, HTTP: &traces.HTTP{Method: "GET", Path: "/x", Status: 200, Call: 0}},
				{Kind: traces.KindAnswer, AtUS: 415_000, Answer: &traces.Answer{Text: "ok"}},
			}}
			var b bytes.Buffer
			printRun(&b, "golden/x", run, false)
			out := b.String()
			times := showTimes(t, out)
			if len(times) != len(run.Events) {
				t.Fatalf("%d rows, want %d:\n%s", len(times), len(run.Events), out)
			}
			for i := 1; i < len(times); i++ {
				if times[i] < times[i-1] {
					t.Errorf("row %d at %v after a row at %v:\n%s", i, times[i], times[i-1], out)
				}
			}
			if !regexp.MustCompile(`(?m)^ +` + c.wantHTTP + `  http `).MatchString(out) {
				t.Errorf("the HTTP row is not at %s:\n%s", c.wantHTTP, out)
			}
			if got := strings.Contains(out, "http times moved"); got != c.wantShift {
				t.Errorf("says it moved the HTTP times: %v, want %v:\n%s", got, c.wantShift, out)
			}
			// The call, then its HTTP call, then the turn after it.
			call, http, turn := strings.Index(out, "call 0"), strings.Index(out, "http        call 0"), strings.Index(out, "turn 1")
			if !(call < http && http < turn) {
				t.Errorf("rows out of order (call %d, http %d, turn %d):\n%s", call, http, turn, out)
			}
		})
	}
}

// TestTracesShowTokens: a turn's tokens come from one source, the turn's
// own usage: the per-turn figures equal each turn's usage in its JSON, the
// total is their sum, and a response's own usage block (0 tokens for an
// offline model, whose tokens bench estimated) is not shown beside them.
func TestTracesShowTokens(t *testing.T) {
	turns := []traces.Turn{
		{Index: 0, Usage: traces.Usage{Input: 2966, Output: 51, Estimated: true},
			Response: json.RawMessage(`{"stop_reason":"tool_use","usage":{"input_tokens":0,"output_tokens":0}}`)},
		{Index: 1, Usage: traces.Usage{Input: 6956, Output: 6, Cached: 6858},
			Response: json.RawMessage(`{"stop_reason":"end_turn","text":"a <b>","usage":{"cached_tokens":6858,"input_tokens":6956,"output_tokens":6}}`)},
	}
	run := &traces.Run{Manifest: traces.Manifest{Format: traces.FormatVersion, Mode: traces.ModeRecord}}
	for i := range turns {
		run.Events = append(run.Events, traces.Event{Kind: traces.KindTurn, AtUS: int64(i), Turn: &turns[i]})
	}
	var b bytes.Buffer
	printRun(&b, "golden/x", run, false)
	out := b.String()
	row := regexp.MustCompile(`turn (\d+) +(\d+) in / (\d+) out tokens`)
	got := row.FindAllStringSubmatch(out, -1)
	if len(got) != len(turns) {
		t.Fatalf("%d turn rows, want %d:\n%s", len(got), len(turns), out)
	}
	in, outTok := 0, 0
	for i, m := range got {
		var stored struct {
			Usage struct{ Input, Output int } `json:"usage"`
		}
		raw, _ := json.Marshal(turns[i])
		json.Unmarshal(raw, &stored)
		if m[2] != strconv.Itoa(stored.Usage.Input) || m[3] != strconv.Itoa(stored.Usage.Output) {
			t.Errorf("turn %s shows %s in / %s out, its JSON says %d / %d", m[1], m[2], m[3], stored.Usage.Input, stored.Usage.Output)
		}
		in += stored.Usage.Input
		outTok += stored.Usage.Output
	}
	if want := "tokens " + strconv.Itoa(in) + " in / " + strconv.Itoa(outTok) + " out"; !strings.Contains(out, want) {
		t.Errorf("no total %q:\n%s", want, out)
	}
	for _, bad := range []string{`"usage"`, `input_tokens`} {
		if strings.Contains(out, bad) {
			t.Errorf("shows a second source of tokens (%s):\n%s", bad, out)
		}
	}
	for _, want := range []string{"(estimated)", "(6858 cached)", `"text":"a <b>"`} {
		if !strings.Contains(out, want) {
			t.Errorf("no %q:\n%s", want, out)
		}
	}
}
