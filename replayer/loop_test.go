package replayer_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/mcpbench/bench/llm"
	"github.com/mcpbench/bench/llm/reqkey"
	"github.com/mcpbench/bench/recorder"
	"github.com/mcpbench/bench/replayer"
	"github.com/mcpbench/bench/traces"
)

// scripted answers turn i with responses[i], as a live model would.
type scripted struct{ responses []*llm.Response }

func (s *scripted) Name() string { return "openai:scripted" }
func (s *scripted) Generate(_ context.Context, req *llm.Request) (*llm.Response, error) {
	n := 0
	for _, m := range req.Messages {
		if m.Role == llm.RoleAssistant {
			n++
		}
	}
	r := *s.responses[n]
	r.Usage = llm.Usage{InputTokens: int64(100 * (n + 1)), OutputTokens: 7}
	return &r, nil
}

// loopRun runs recorder's agent loop in memory (no server) with model m
// and tools answering with result, and returns the run.
func loopRun(t *testing.T, m llm.Model, tools []llm.Tool, result string, now func() time.Time) *traces.Run {
	t.Helper()
	run := &traces.Run{Manifest: traces.Manifest{Format: traces.FormatVersion, Model: traces.ModelRef{Provider: "openai", Name: "openai:scripted"},
		Scenario: traces.ScenarioRef{ID: "wlan-change-001"}, RunIndex: 2}}
	start := now()
	l := &recorder.Loop{
		Model: m, Key: reqkey.Scope{Provider: "openai", Model: "openai:scripted", Scenario: "wlan-change-001", RunIndex: 2},
		Intent: "Is the corp WLAN on WPA3?", Tools: tools, Now: now,
		Exec: func(_ context.Context, _ int, _ llm.ToolCall) recorder.ToolResult {
			return recorder.ToolResult{Content: result, Result: json.RawMessage(`{}`)}
		},
		Emit: func(at time.Time, e traces.Event) {
			e.AtUS = at.Sub(start).Microseconds()
			run.Events = append(run.Events, e)
		},
	}
	run.Manifest.Outcome = l.Run(context.Background())
	return run
}

func wlanTools(desc string) []llm.Tool {
	return []llm.Tool{{Name: "get_wlan", Description: desc, InputSchema: json.RawMessage(`{"type":"object","properties":{"ssid":{"type":"string"}}}`)}}
}

// The seam with the recorder: the loop's own request keys match on an
// unchanged server, the replayed turns carry the recorded usage and
// latency, and a changed tool result is a miss naming the message and the
// JSON path.
func TestReplayThroughTheAgentLoop(t *testing.T) {
	model := &scripted{responses: []*llm.Response{
		{ToolCalls: []llm.ToolCall{{ID: "call_Xy7", Name: "get_wlan", Arguments: json.RawMessage(`{"ssid":"corp"}`)}}, StopReason: llm.StopToolUse},
		{Text: "Yes, WPA3.", StopReason: llm.StopEndTurn},
	}}
	// The recording's clock: every reading 1.5 s after the previous one, so
	// each model turn "took" 1.5 s.
	tick := time.Date(2026, 11, 29, 12, 0, 0, 0, time.UTC)
	slow := func() time.Time { tick = tick.Add(1500 * time.Millisecond); return tick }
	result := `{"ssid":"corp","security":"wpa3","vlan":10}`
	recorded := loopRun(t, model, wlanTools("Get a WLAN."), result, slow)
	if recorded.Manifest.Outcome != traces.OutcomeText {
		t.Fatalf("recording ended %q: %+v", recorded.Manifest.Outcome, recorded.Events[len(recorded.Events)-1].Error)
	}

	turns := func(r *traces.Run) []traces.Turn {
		var out []traces.Turn
		for _, e := range r.Events {
			if e.Turn != nil {
				out = append(out, *e.Turn)
			}
		}
		return out
	}
	t.Run("unchanged", func(t *testing.T) {
		clock := replayer.NewClock(time.Date(2026, 11, 29, 13, 0, 0, 0, time.UTC), nil, 0)
		m, err := replayer.New(recorded, &replayer.Options{Clock: clock})
		if err != nil {
			t.Fatal(err)
		}
		replay := loopRun(t, m, wlanTools("Get a WLAN."), result, clock.Now)
		if len(m.Misses()) != 0 || replay.Manifest.Outcome != traces.OutcomeText {
			t.Fatalf("misses %v, outcome %q", m.Misses(), replay.Manifest.Outcome)
		}
		// Keys, requests, responses, usage and latency: the recorded turns.
		if diff := cmp.Diff(turns(recorded), turns(replay)); diff != "" {
			t.Errorf("replayed turns differ from the recorded ones (-recorded +replay):\n%s", diff)
		}
	})
	t.Run("changed tool result", func(t *testing.T) {
		m, _ := replayer.New(recorded, nil)
		replay := loopRun(t, m, wlanTools("Get a WLAN."), `{"ssid":"corp","security":"wpa2","vlan":10}`, time.Now)
		if replay.Manifest.Outcome != traces.OutcomeStale {
			t.Fatalf("outcome %q, want stale", replay.Manifest.Outcome)
		}
		misses := m.Misses()
		if len(misses) != 1 || misses[0].Turn != 1 {
			t.Fatalf("misses %+v, want one at turn 1", misses)
		}
		want := "message messages[2] (tool result of get_wlan, call_1) changed\n    content $.security: \"wpa3\" -> \"wpa2\""
		if got := misses[0].Explain(); !strings.Contains(got, want) {
			t.Errorf("explanation:\n%s\nwant it to contain:\n%s", got, want)
		}
		if misses[0].Recorded.IsZero() || misses[0].Live.IsZero() || misses[0].Recorded == misses[0].Live {
			t.Errorf("keys %s %s: want both, different", misses[0].Recorded, misses[0].Live)
		}
	})
	t.Run("changed description, lenient", func(t *testing.T) {
		m, _ := replayer.New(recorded, &replayer.Options{Mode: replayer.Lenient})
		replay := loopRun(t, m, wlanTools("Get one WLAN profile by SSID."), result, time.Now)
		at, diverged := m.Diverged()
		if !diverged || at != 0 || replay.Manifest.Outcome != traces.OutcomeText || len(m.Misses()) != 2 {
			t.Fatalf("diverged %t at %d, outcome %q, misses %d; want diverged at 0, text, 2 misses", diverged, at, replay.Manifest.Outcome, len(m.Misses()))
		}
		if got := m.Misses()[0].Summary(); got != "turn 0: tool get_wlan changed: description: Get [-a WLAN.-] {+one WLAN profile by SSID.+}" {
			t.Errorf("summary %q", got)
		}
	})
}

// unmetered answers like scripted, and reports no usage (as the offline
// models do): the loop estimates it.
type unmetered struct{ scripted }

func (u *unmetered) Generate(ctx context.Context, req *llm.Request) (*llm.Response, error) {
	r, err := u.scripted.Generate(ctx, req)
	if r != nil {
		r.Usage = llm.Usage{}
	}
	return r, err
}

// A replayed turn keeps the usage recorded with it when the recording
// estimated it: the loop does not count the same request again. A turn
// served after a miss (lenient) is a request the recording never saw: its
// usage is estimated afresh.
func TestReplayKeepsRecordedEstimates(t *testing.T) {
	model := &unmetered{scripted{responses: []*llm.Response{
		{ToolCalls: []llm.ToolCall{{ID: "call_1", Name: "get_wlan", Arguments: json.RawMessage(`{"ssid":"corp"}`)}}, StopReason: llm.StopToolUse},
		{Text: "Yes, WPA3.", StopReason: llm.StopEndTurn},
	}}}
	result := `{"ssid":"corp","security":"wpa3","vlan":10}`
	recorded := loopRun(t, model, wlanTools("Get a WLAN."), result, time.Now)
	// What the recording counted, marked so that a count made again shows.
	var estimates []traces.Usage
	for _, e := range recorded.Events {
		if e.Turn != nil {
			if !e.Turn.Usage.Estimated || e.Turn.Usage.Input == 0 {
				t.Fatalf("recorded turn %d usage %+v: want an estimate", e.Turn.Index, e.Turn.Usage)
			}
			e.Turn.Usage = traces.Usage{Input: 90000 + e.Turn.Index, Output: 7, Estimated: true}
			estimates = append(estimates, e.Turn.Usage)
		}
	}
	usages := func(mode replayer.Mode, result string) []traces.Usage {
		t.Helper()
		m, err := replayer.New(recorded, &replayer.Options{Mode: mode})
		if err != nil {
			t.Fatal(err)
		}
		var out []traces.Usage
		for _, e := range loopRun(t, m, wlanTools("Get a WLAN."), result, time.Now).Events {
			if e.Turn != nil {
				out = append(out, e.Turn.Usage)
			}
		}
		return out
	}
	if diff := cmp.Diff(estimates, usages(replayer.Strict, result)); diff != "" {
		t.Errorf("replayed usage is not the recorded estimate (-recorded +replay):\n%s", diff)
	}
	got := usages(replayer.Lenient, `{"ssid":"corp","security":"wpa2","vlan":10}`)
	if len(got) != 2 || got[0] != estimates[0] || got[1] == estimates[1] || !got[1].Estimated || got[1].Input < 10 || got[1].Input >= 90000 {
		t.Errorf("lenient replay after a miss at turn 1: usage %+v; want turn 0 as recorded %+v, turn 1 estimated afresh", got, estimates[0])
	}
}
