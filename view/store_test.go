package view_test

import (
	"encoding/json"
	"fmt"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/mcpbench/bench/batch"
	"github.com/mcpbench/bench/fakecentral"
	"github.com/mcpbench/bench/scenarios"
	"github.com/mcpbench/bench/traces"
	"github.com/mcpbench/bench/view"
)

// The test store: five recorded runs of client-diagnosis-001 on each of
// two servers (run 3 of the reference server makes one more HTTP call: a
// divergence from run 0), a run whose tool result leaks the fixture's
// canary, a run whose server says hostile text, and a lenient replay of
// run 0 whose second request differs (a miss).
const (
	scenarioID = "client-diagnosis-001"
	refRun0    = "golden/reference/baseline/client-diagnosis-001/0"
	refRun3    = "golden/reference/baseline/client-diagnosis-001/3"
	leakRef    = "golden/leaky/baseline/client-diagnosis-001/0"
	hostileRef = "golden/hostile/baseline/client-diagnosis-001/0"
	replayRef  = "replay/" + refRun0
	// hostileText is what the hostile server names its tool and writes in
	// its result: markup, a right-to-left override, an escape sequence.
	hostileText = "<img src=x onerror=\"document.title='pwned'\">\u202e\x1b[31m"
)

var (
	goldenOnce sync.Once
	golden     []*scenarios.Scenario
	goldenErr  error
)

func goldenScenarios(t testing.TB) []*scenarios.Scenario {
	goldenOnce.Do(func() { golden, goldenErr = scenarios.Golden() })
	if goldenErr != nil {
		t.Fatal(goldenErr)
	}
	return golden
}

// canary is a secret of the site-a fixture, as scoring knows it.
func canary(t testing.TB) string {
	fx, err := fakecentral.LoadFixture("site-a")
	if err != nil {
		t.Fatal(err)
	}
	return fx.Secrets()[0]
}

type runSpec struct {
	server     string
	index      int
	extraHTTP  bool   // one more HTTP call under the tool call
	result     string // the tool result's status field
	toolName   string
	answerText string
}

func mkRun(s runSpec) *traces.Run {
	tool := s.toolName
	if tool == "" {
		tool = "get_client"
	}
	res := s.result
	if res == "" {
		res = "Failed"
	}
	body, _ := traces.Marshal(map[string]any{"macaddr": "aa:bb:cc:11:22:33", "status": res, "failure_reason": "802.1X timeout"})
	tools, _ := traces.Marshal([]map[string]any{{"name": tool, "description": "Read one client by MAC.", "inputSchema": map[string]any{"type": "object"}}})
	args := json.RawMessage(`{"mac":"aa:bb:cc:11:22:33"}`)
	resp0, _ := traces.Marshal(map[string]any{"tool_calls": []any{map[string]any{"id": "call_1", "name": tool, "arguments": args}}})
	req := func(turn int, result string) json.RawMessage {
		msgs := []any{map[string]any{"role": "user", "content": "Why can't the laptop get on the network?"}}
		if turn > 0 {
			msgs = append(msgs, map[string]any{"role": "assistant", "tool_calls": []any{map[string]any{"id": "call_1", "name": tool, "arguments": args}}},
				map[string]any{"role": "tool", "tool_call_id": "call_1", "content": result})
		}
		b, _ := traces.Marshal(map[string]any{"messages": msgs, "tools": json.RawMessage(tools), "sampling": map[string]any{}})
		return b
	}
	// The answer repeats the status the tool said: the scenario's result
	// schema takes "Failed" only, so runs that read "Connected" fail.
	answer, _ := traces.Marshal(map[string]any{"status": res, "failure_stage": "Authentication", "ap_serial": "CNAPA0101", "cause": "802.1X authentication failed: RADIUS reject (bad credentials)"})
	// Times as the recorder stamps them: a turn and a call when they
	// start, an HTTP call when the fake serves it.
	ev := []traces.Event{
		{Kind: traces.KindInitialize, AtUS: 100, Initialize: &traces.Initialize{ProtocolVersion: "2025-11-25", ServerInfo: json.RawMessage(`{"name":"test"}`)}},
		{Kind: traces.KindTools, AtUS: 200, Tools: &traces.Tools{Tools: tools}},
		{Kind: traces.KindHTTP, AtUS: 300, HTTP: &traces.HTTP{Seq: 0, Method: "POST", Path: "/oauth2/token", Status: 200, Class: "read", Call: -1, Boot: true, LatencyUS: 50}},
		{Kind: traces.KindTurn, AtUS: 1000, Turn: &traces.Turn{Index: 0, Key: traces.Hash(req(0, "")), Request: req(0, ""), Response: resp0, Usage: traces.Usage{Input: 1200, Output: 30}, LatencyUS: 400000}},
		{Kind: traces.KindHTTP, AtUS: 401500, HTTP: &traces.HTTP{Seq: 1, Method: "GET", Path: "/network-monitoring/v1/clients/aa:bb:cc:11:22:33", Status: 200, ResponseBody: body, Class: "read", LatencyUS: 500, Call: 0}},
	}
	if s.extraHTTP {
		ev = append(ev, traces.Event{Kind: traces.KindHTTP, AtUS: 402100, HTTP: &traces.HTTP{Seq: 2, Method: "GET", Path: "/network-monitoring/v1/clients", Query: "limit=100", Status: 429, Class: "read", LatencyUS: 300, Call: 0}})
	}
	ev = append(ev,
		traces.Event{Kind: traces.KindElicitation, AtUS: 401200, Elicitation: &traces.Elicitation{Call: 0, Message: "Read the client's record?", Action: "accept"}},
		traces.Event{Kind: traces.KindCall, AtUS: 401000, Call: &traces.Call{Index: 0, Tool: tool, Arguments: args, Result: body, LatencyUS: 1800}},
		traces.Event{Kind: traces.KindTurn, AtUS: 403000, Turn: &traces.Turn{Index: 1, Key: traces.Hash(req(1, string(body))), Request: req(1, string(body)),
			Response: json.RawMessage(`{"tool_calls":[{"arguments":` + string(answer) + `,"id":"call_2","name":"submit_result"}]}`), Usage: traces.Usage{Input: 1400, Output: 40}, LatencyUS: 290000}},
		traces.Event{Kind: traces.KindAnswer, AtUS: 693100, Answer: &traces.Answer{Result: answer, Text: s.answerText}},
	)
	return &traces.Run{
		Manifest: traces.Manifest{
			Format: traces.FormatVersion, Mode: traces.ModeRecord, Suite: "golden",
			Scenario: traces.ScenarioRef{ID: scenarioID},
			Server:   traces.ServerRef{Name: s.server, Repo: "local"},
			Model:    traces.ModelRef{Provider: "baseline", Name: "baseline", Seed: 1},
			RunIndex: s.index, Fixture: traces.FixtureRef{Name: "site-a"},
			Harness: "test", Outcome: traces.OutcomeAnswered,
			StartedAt: time.Date(2026, 12, 1, 12, 0, s.index, 0, time.UTC),
		},
		Events: ev,
	}
}

// testStore writes the test store into a new directory and returns it,
// with the IDs of its runs by ref.
func testStore(t testing.TB) (string, map[string]traces.ID) {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "store")
	s, err := traces.Open(dir, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	ids := map[string]traces.ID{}
	put := func(run *traces.Run, ref string) {
		id, err := s.PutRun(run, ref)
		if err != nil {
			t.Fatal(err)
		}
		ids[ref] = id
	}
	for _, server := range []string{"reference", "alt"} {
		for i := range 5 {
			sp := runSpec{server: server, index: i, extraHTTP: server == "reference" && i == 3}
			if server == "alt" && i%2 == 1 {
				sp.result = "Connected"
			}
			put(mkRun(sp), traces.RunRef("golden", server, "baseline", scenarioID, i))
		}
	}
	put(mkRun(runSpec{server: "leaky", result: "Failed; psk " + canary(t)}), leakRef)
	put(mkRun(runSpec{server: "hostile", toolName: hostileText, result: hostileText}), hostileRef)
	// A lenient replay of run 0: the server now answers "Connected", so
	// the second request differs; the recorded turn was served anyway.
	rp := mkRun(runSpec{server: "reference", result: "Connected"})
	rec := ids[refRun0]
	rp.Manifest.Mode, rp.Manifest.Replays, rp.Manifest.Outcome = traces.ModeReplay, &rec, traces.OutcomeDiverged
	put(rp, replayRef)
	return dir, ids
}

// openView opens the store read-only and builds its view, scored
// against the golden suite.
func openView(t testing.TB, dir string) *view.View {
	t.Helper()
	s, err := traces.Open(dir, &traces.Options{ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	list := goldenScenarios(t)
	v, err := view.New(&view.Options{Store: s, Scorer: newScorer(list), Scenarios: list,
		Reopen: func() (view.Store, error) { return traces.Open(dir, &traces.Options{ReadOnly: true}) }})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { v.Close() })
	return v
}

func refOf(i int) string { return fmt.Sprintf("golden/reference/baseline/%s/%d", scenarioID, i) }

// newScorer scores as bench view does.
func newScorer(list []*scenarios.Scenario) view.Scorer { return batch.NewScorer(list) }
