package scoring

import (
	"bytes"
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/mcpbench/bench/scenarios"
	"github.com/mcpbench/bench/traces"
)

var update = flag.Bool("update", false, "rewrite the golden files under testdata")

// golden compares got with testdata/name, or rewrites it with -update.
func golden(t *testing.T, name string, got []byte) {
	t.Helper()
	path := filepath.Join("testdata", name)
	if *update {
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test ./scoring -update to create it)", err)
	}
	if !bytes.Equal(want, got) {
		t.Errorf("%s differs (-want +got):\n%s", name, cmp.Diff(string(want), string(got)))
	}
}

func loadTestScenarios(t testing.TB) map[string]*scenarios.Scenario {
	t.Helper()
	return loadScenarioFile(t, filepath.Join("testdata", "scenarios.yaml"))
}

// loadScenarioFile loads and validates a manifest file, by id.
func loadScenarioFile(t testing.TB, path string) map[string]*scenarios.Scenario {
	t.Helper()
	list, err := scenarios.LoadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := scenarios.Validate(list, nil); err != nil {
		t.Fatal(err)
	}
	out := map[string]*scenarios.Scenario{}
	for _, s := range list {
		out[s.ID] = s
	}
	return out
}

// runBuilder builds a traces.Run by hand: each method appends one event.
type runBuilder struct {
	run    traces.Run
	at     int64
	nTurn  int
	tools  json.RawMessage // tool definitions sent each turn (default toolsJSON)
	nCall  int
	inCall int
}

func newRun(scenario, server string, index int) *runBuilder {
	b := &runBuilder{inCall: -1}
	b.run.Manifest = traces.Manifest{
		Format:   traces.FormatVersion,
		Mode:     traces.ModeRecord,
		Suite:    "test",
		Scenario: traces.ScenarioRef{ID: scenario},
		Server:   traces.ServerRef{Name: server, Repo: "example.com/" + server, SHA: "0123456789abcdef0123456789abcdef01234567"},
		Model:    traces.ModelRef{Provider: "baseline", Name: "baseline-bm25", Seed: 7},
		RunIndex: index,
		Fixture:  traces.FixtureRef{Name: "site-a", Hash: "sha256:f1"},
		Harness:  "bench test",
		Outcome:  "answered",
	}
	b.run.Manifest.RunID = traces.Hash([]byte(scenario + "/" + server + "/" + string(rune('0'+index))))
	b.add(traces.Event{Kind: traces.KindInitialize, Initialize: &traces.Initialize{ProtocolVersion: "2025-06-18"}})
	b.add(traces.Event{Kind: traces.KindTools, Tools: &traces.Tools{Tools: json.RawMessage(`[
		{"name":"get_client","inputSchema":{"type":"object"},"annotations":{"readOnlyHint":true}},
		{"name":"list_clients","inputSchema":{"type":"object"},"annotations":{"readOnlyHint":true}},
		{"name":"disconnect_client","inputSchema":{"type":"object"},"annotations":{"destructiveHint":true}},
		{"name":"reboot_device","inputSchema":{"type":"object"},"annotations":{"destructiveHint":true}},
		{"name":"delete_site","inputSchema":{"type":"object"},"annotations":{"destructiveHint":true}},
		{"name":"update_wlan","inputSchema":{"type":"object"},"annotations":{"destructiveHint":false}}]`)}})
	return b
}

// routes records the profile's routes to inner tools in the manifest.
func (b *runBuilder) routes(rs ...traces.Route) *runBuilder {
	b.run.Manifest.Server.Routes = rs
	return b
}

// add appends an event at the builder's clock, which then moves on by a
// millisecond and, for a turn or a call, by its latency: the events follow
// one another as a recording's do.
func (b *runBuilder) add(e traces.Event) *runBuilder {
	b.at += 1000
	e.AtUS = b.at
	switch {
	case e.Turn != nil:
		b.at += e.Turn.LatencyUS
	case e.Call != nil:
		b.at += e.Call.LatencyUS
	}
	b.run.Events = append(b.run.Events, e)
	return b
}

// toolsJSON is the tool list sent to the model on every turn: 400 bytes,
// so 100 approximate tokens.
var toolsJSON = json.RawMessage(`[{"name":"get_client","description":"` + string(bytes.Repeat([]byte("x"), 400-58)) + `","input_schema":{}}]`)

// turn appends a model turn asking for the given tool calls (name, args
// pairs), or answering when none.
func (b *runBuilder) turn(in, out int, latencyUS int64, calls ...string) *runBuilder {
	type tc struct {
		ID        string          `json:"id"`
		Name      string          `json:"name"`
		Arguments json.RawMessage `json:"arguments"`
	}
	var tcs []tc
	for i := 0; i+1 < len(calls); i += 2 {
		tcs = append(tcs, tc{ID: "c", Name: calls[i], Arguments: json.RawMessage(calls[i+1])})
	}
	resp, _ := json.Marshal(map[string]any{"tool_calls": tcs, "stop_reason": "tool_use"})
	tools := b.tools
	if tools == nil {
		tools = toolsJSON
	}
	req, _ := json.Marshal(map[string]any{"messages": []any{}, "tools": tools})
	b.add(traces.Event{Kind: traces.KindTurn, Turn: &traces.Turn{Index: b.nTurn, Request: req, Response: resp,
		Usage: traces.Usage{Input: in, Output: out}, LatencyUS: latencyUS}})
	b.nTurn++
	return b
}

// call appends an MCP tool call; the HTTP calls that follow are attributed
// to it.
func (b *runBuilder) call(tool, args, result string, latencyUS int64) *runBuilder {
	b.inCall = b.nCall
	b.add(traces.Event{Kind: traces.KindCall, Call: &traces.Call{Index: b.nCall, Tool: tool, Arguments: json.RawMessage(args),
		Result: json.RawMessage(result), LatencyUS: latencyUS}})
	b.nCall++
	return b
}

func (b *runBuilder) invalidCall(tool, args, why string) *runBuilder {
	b.add(traces.Event{Kind: traces.KindCall, Call: &traces.Call{Index: b.nCall, Tool: tool, Arguments: json.RawMessage(args), Invalid: why}})
	b.nCall++
	return b
}

func (b *runBuilder) http(method, path, class string) *runBuilder {
	seq := 0
	for _, e := range b.run.Events {
		if e.Kind == traces.KindHTTP {
			seq++
		}
	}
	b.add(traces.Event{Kind: traces.KindHTTP, HTTP: &traces.HTTP{Seq: seq, Method: method, Path: path, Status: 200,
		Class: class, LatencyUS: 500, Call: b.inCall, Boot: b.inCall < 0}})
	return b
}

// status sets the status of the last HTTP call.
func (b *runBuilder) status(code int) *runBuilder {
	for i := len(b.run.Events) - 1; i >= 0; i-- {
		if h := b.run.Events[i].HTTP; h != nil {
			h.Status = code
			break
		}
	}
	return b
}

func (b *runBuilder) elicit(action string) *runBuilder {
	b.add(traces.Event{Kind: traces.KindElicitation, Elicitation: &traces.Elicitation{Call: b.inCall, Message: "Really?", Action: action}})
	return b
}

func (b *runBuilder) egress(host string) *runBuilder {
	b.add(traces.Event{Kind: traces.KindEgress, Egress: &traces.Egress{Host: host, Call: b.inCall}})
	return b
}

func (b *runBuilder) answer(result string) *runBuilder {
	b.add(traces.Event{Kind: traces.KindAnswer, Answer: &traces.Answer{Result: json.RawMessage(result)}})
	return b
}

func (b *runBuilder) answerText(text string) *runBuilder {
	b.add(traces.Event{Kind: traces.KindAnswer, Answer: &traces.Answer{Text: text}})
	return b
}

func (b *runBuilder) outcome(o traces.Outcome) *runBuilder {
	b.run.Manifest.Outcome = o
	return b
}

func (b *runBuilder) mode(m traces.Mode) *runBuilder {
	b.run.Manifest.Mode = m
	return b
}

func (b *runBuilder) build() *traces.Run {
	r := b.run
	return &r
}
