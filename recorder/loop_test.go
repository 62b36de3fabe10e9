package recorder

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/mcpbench/bench/llm"
	"github.com/mcpbench/bench/llm/reqkey"
	"github.com/mcpbench/bench/traces"
)

// script is a model that answers turn i with responses[i] and keeps the
// requests it saw.
type script struct {
	responses []*llm.Response
	err       error
	seen      []*llm.Request
}

func (s *script) Name() string { return "test:script" }
func (s *script) Generate(_ context.Context, req *llm.Request) (*llm.Response, error) {
	s.seen = append(s.seen, req)
	if len(s.seen) > len(s.responses) {
		if s.err != nil {
			return nil, s.err
		}
		return &llm.Response{Text: "done", StopReason: llm.StopEndTurn}, nil
	}
	return s.responses[len(s.seen)-1], nil
}

func call(id, name, args string) *llm.Response {
	return &llm.Response{ToolCalls: []llm.ToolCall{{ID: id, Name: name, Arguments: json.RawMessage(args)}}, StopReason: llm.StopToolUse}
}

// malformed is a turn of one call whose arguments are not a JSON object.
func malformed(id, name, raw string) *llm.Response {
	return &llm.Response{ToolCalls: []llm.ToolCall{{ID: id, Name: name, Arguments: json.RawMessage(`{}`), InvalidArguments: raw}}, StopReason: llm.StopToolUse}
}

type staleErr struct{}

func (staleErr) Error() string           { return "replay miss at turn 1" }
func (staleErr) Outcome() traces.Outcome { return traces.OutcomeStale }

func TestLoop(t *testing.T) {
	echo := func(_ context.Context, idx int, c llm.ToolCall) ToolResult {
		return ToolResult{Content: fmt.Sprintf(`{"call":%d}`, idx), Result: json.RawMessage(`{"ok":true}`)}
	}
	cases := []struct {
		name      string
		responses []*llm.Response
		modelErr  error
		maxTurns  int
		outcome   traces.Outcome
		invalid   []string // Invalid of each call event, in order
		toolMsgs  []string // tool messages the model saw last
		why       string
	}{
		{name: "answered", responses: []*llm.Response{call("a", "get_status", `{}`), call("b", llm.SubmitTool, `{"status":"ok"}`)},
			outcome: traces.OutcomeAnswered, invalid: []string{"", ""}, why: "a valid submit_result ends the run"},
		{name: "text", responses: []*llm.Response{{Text: "It is fine.", StopReason: llm.StopEndTurn}},
			outcome: traces.OutcomeText, why: "a final text ends the run"},
		{name: "unknown-tool", responses: []*llm.Response{call("a", "reboot_everything", `{}`)},
			outcome: traces.OutcomeText, invalid: []string{"unknown tool"}, toolMsgs: []string{`error: there is no tool named "reboot_everything"`},
			why: "an unknown tool is an invalid call, answered with an error as a real client would"},
		{name: "bad-arguments", responses: []*llm.Response{{ToolCalls: []llm.ToolCall{{ID: "a", Name: "get_status", Arguments: json.RawMessage(`{}`), InvalidArguments: "{oops"}}, StopReason: llm.StopToolUse}},
			outcome: traces.OutcomeText, invalid: []string{"arguments are not a JSON object"}, why: "unparseable arguments never reach the server"},
		{name: "bad-result", responses: []*llm.Response{call("a", llm.SubmitTool, `{"nope":1}`)},
			outcome: traces.OutcomeText, invalid: []string{"result does not match the result schema: missing property 'status'"},
			why: "a result without the schema's shape is refused and the model may try again"},
		{name: "max-turns", responses: []*llm.Response{call("a", "get_status", `{}`), call("b", "get_status", `{}`), call("c", "get_status", `{}`)},
			maxTurns: 2, outcome: traces.OutcomeMaxTurns, invalid: []string{"", ""}, why: "the turn budget bounds the run"},
		{name: "stale", responses: []*llm.Response{call("a", "get_status", `{}`)}, modelErr: staleErr{},
			outcome: "stale", invalid: []string{""}, why: "a model error with an Outcome (a replay miss) sets the outcome"},
		{name: "model-error", modelErr: errors.New("503 from provider"), outcome: traces.OutcomeError, why: "a plain model error is an error outcome"},
		{name: "loop", responses: []*llm.Response{call("a", "get_status", `{"site":"HQ","all":true}`), call("b", "get_status", `{"all":true,"site":"HQ"}`), call("c", "get_status", ` {"site": "HQ", "all": true}`)},
			outcome: traces.OutcomeLoop, invalid: []string{"", ""},
			why: "the same call (arguments alike but for key order and spacing) a third time in a row ends the run, and is not run"},
		{name: "loop-in-one-turn", responses: []*llm.Response{{ToolCalls: []llm.ToolCall{
			{ID: "a", Name: "get_status", Arguments: json.RawMessage(`{}`)}, {ID: "b", Name: "get_status", Arguments: json.RawMessage(`{}`)}, {ID: "c", Name: "get_status", Arguments: json.RawMessage(`{}`)}}, StopReason: llm.StopToolUse}},
			outcome: traces.OutcomeLoop, invalid: []string{"", ""}, why: "three identical calls in one turn are a loop too"},
		{name: "loop-of-malformed", responses: []*llm.Response{malformed("a", "x", "{oops"), malformed("b", "x", "{oops"), malformed("c", "x", "{oops")},
			outcome: traces.OutcomeLoop, invalid: []string{traces.InvalidArguments, traces.InvalidArguments}, why: "the same malformed call three times is a loop"},
		{name: "no-loop", responses: []*llm.Response{call("a", "get_status", `{}`), call("b", "get_status", `{"site":"HQ"}`), call("c", "get_status", `{}`), call("d", "get_status", `{}`)},
			outcome: traces.OutcomeText, invalid: []string{"", "", "", ""}, why: "a call made again after another call, or twice in a row, is no loop"},
		{name: "max-tokens", responses: []*llm.Response{call("a", "get_status", `{}`), {Text: `I will now call submit_result with {"status":`, StopReason: llm.StopMaxTokens}},
			outcome: traces.OutcomeMaxTokens, invalid: []string{""}, why: "a turn cut by the max-tokens limit with no call ends the run without an answer"},
		{name: "max-tokens-mid-call", responses: []*llm.Response{{ToolCalls: []llm.ToolCall{{ID: "a", Name: "get_status", Arguments: json.RawMessage(`{}`), InvalidArguments: `{"site":"H`}}, StopReason: llm.StopMaxTokens}},
			outcome: traces.OutcomeText, invalid: []string{traces.InvalidArguments}, toolMsgs: []string{`error: the arguments of get_status are not a JSON object: {"site":"H`},
			why: "a call cut mid-arguments is a malformed call, answered, and the run goes on"},
		{name: "no-name", responses: []*llm.Response{malformed("a", "", "list_alerts(severity=critical)")},
			outcome: traces.OutcomeText, invalid: []string{traces.InvalidNoName},
			toolMsgs: []string{"error: this tool call names no tool; call a tool by the name it is offered under, with its arguments as a JSON object"},
			why:      "a call that names no tool is a malformed call, answered with an error, and the conversation goes on with it echoed"},
		{name: "prose", responses: []*llm.Response{{Text: `I would call get_status now: {"name":"get_status","arguments":{}}`, StopReason: llm.StopEndTurn}},
			outcome: traces.OutcomeText, why: "prose instead of the result tool (a call written as text included) is a text answer"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			m := &script{responses: c.responses, err: c.modelErr}
			var events []traces.Event
			scope := reqkey.Scope{Provider: "test", Model: "test:script", Scenario: "s-1", RunIndex: 3}
			l := &Loop{Model: m, Key: scope, Intent: "Is the network fine?",
				Tools:        []llm.Tool{{Name: "get_status", InputSchema: json.RawMessage(`{"type":"object"}`)}},
				ResultSchema: json.RawMessage(`{"type":"object","required":["status"]}`),
				ValidateResult: func(args json.RawMessage) error {
					if !strings.Contains(string(args), `"status"`) {
						return errors.New("missing property 'status'")
					}
					return nil
				},
				MaxTurns: c.maxTurns, Exec: echo,
				Now:  func() time.Time { return time.Unix(0, 0) },
				Emit: func(_ time.Time, e traces.Event) { events = append(events, e) },
			}
			if got := l.Run(context.Background()); got != c.outcome {
				t.Errorf("%s: outcome %q, want %q", c.why, got, c.outcome)
			}
			var invalid []string
			var turnKeys []traces.ID
			for _, e := range events {
				if e.Call != nil {
					invalid = append(invalid, e.Call.Invalid)
				}
				if e.Turn != nil {
					turnKeys = append(turnKeys, e.Turn.Key)
				}
			}
			if strings.Join(invalid, "|") != strings.Join(c.invalid, "|") {
				t.Errorf("%s: invalid calls %q, want %q", c.why, invalid, c.invalid)
			}
			// What a provider would be sent is a valid request, whatever
			// the model wrote before.
			for i, req := range m.seen {
				if err := req.Validate(); err != nil {
					t.Errorf("%s: request %d is invalid: %v", c.why, i, err)
				}
			}
			// Only a run that ends on an answer has one.
			answers := 0
			for _, e := range events {
				if e.Answer != nil {
					answers++
				}
			}
			if want := c.outcome == traces.OutcomeAnswered || c.outcome == traces.OutcomeText; (answers == 1) != want || answers > 1 {
				t.Errorf("%s: %d answer events for outcome %s", c.why, answers, c.outcome)
			}
			// Each turn is keyed by the request the model was given.
			for i, k := range turnKeys {
				if want, err := reqkey.Key(scope, m.seen[i]); err != nil || k != want {
					t.Errorf("%s: turn %d has key %s, the request it sent has %s (%v)", c.why, i, k.Short(), want.Short(), err)
				}
			}
			if c.toolMsgs != nil {
				last := m.seen[len(m.seen)-1]
				var got []string
				for _, msg := range last.Messages {
					if msg.Role == llm.RoleTool {
						got = append(got, msg.Content)
					}
				}
				if fmt.Sprint(got) != fmt.Sprint(c.toolMsgs) {
					t.Errorf("%s: tool messages %q, want %q", c.why, got, c.toolMsgs)
				}
			}
			if first := m.seen; len(first) > 0 {
				if first[0].System != SystemPrompt || first[0].Intent() != "Is the network fine?" {
					t.Errorf("%s: the first request lacks the system prompt or the intent", c.why)
				}
				if _, ok := first[0].Tool(llm.SubmitTool); !ok {
					t.Errorf("%s: submit_result is not offered", c.why)
				}
			}
		})
	}
}

// localScript is a script that runs inside bench, as the baseline does.
type localScript struct{ script }

func (*localScript) Local() {}

// A model that runs inside bench has no latency of its own; tool calls are
// timed on the Wall clock, model turns on Now (a replay's virtual clock).
func TestLoopLatencies(t *testing.T) {
	for _, tc := range []struct {
		name      string
		model     llm.Model
		wantModel int64
	}{
		{"live model", &script{responses: []*llm.Response{call("a", "get_status", `{}`)}}, 1_000_000},
		{"local model", &localScript{script{responses: []*llm.Response{call("a", "get_status", `{}`)}}}, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var now, wall time.Time
			tick := func(t *time.Time, d time.Duration) func() time.Time {
				return func() time.Time { *t = t.Add(d); return *t }
			}
			var turns, calls []int64
			l := &Loop{
				Model: tc.model, Intent: "status?", Tools: []llm.Tool{{Name: "get_status"}},
				Now: tick(&now, time.Second), Wall: tick(&wall, 3*time.Millisecond),
				Exec: func(context.Context, int, llm.ToolCall) ToolResult { return ToolResult{Content: "ok"} },
				Emit: func(_ time.Time, e traces.Event) {
					if e.Turn != nil {
						turns = append(turns, e.Turn.LatencyUS)
					}
					if e.Call != nil {
						calls = append(calls, e.Call.LatencyUS)
					}
				},
			}
			l.Run(context.Background())
			// Now moves 1 s at each reading: a turn reads it before and after
			// the model. The call reads Wall twice, 3 ms apart.
			if len(turns) != 2 || turns[0] != tc.wantModel || len(calls) != 1 || calls[0] != 3000 {
				t.Errorf("turn latencies %v (want %d each), call latencies %v (want [3000])", turns, tc.wantModel, calls)
			}
		})
	}
}

// A turn keeps the attempts that failed before its answer (beside the run:
// traces.Turn.Retries), and a call the provider sent without an id gets one
// its result can answer.
func TestLoopRetriesAndIDs(t *testing.T) {
	first := call("", "get_status", `{}`)
	first.Retries = []llm.Attempt{
		{Attempt: 1, StatusCode: 429, Error: "openai: HTTP 429 Too Many Requests: slow down", Wait: 3 * time.Second, RetryAfter: 3 * time.Second},
		{Attempt: 2, Error: "openai: no answer within the request timeout (5m0s)", Wait: 2 * time.Second},
	}
	m := &script{responses: []*llm.Response{first}}
	var turns []*traces.Turn
	l := &Loop{Model: m, Intent: "status?", Tools: []llm.Tool{{Name: "get_status", InputSchema: json.RawMessage(`{"type":"object"}`)}},
		Exec: func(context.Context, int, llm.ToolCall) ToolResult { return ToolResult{Content: "ok"} },
		Emit: func(_ time.Time, e traces.Event) {
			if e.Turn != nil {
				turns = append(turns, e.Turn)
			}
		},
	}
	if got := l.Run(context.Background()); got != traces.OutcomeText {
		t.Fatalf("outcome %s", got)
	}
	want := []traces.Retry{
		{Attempt: 1, Status: 429, Error: "openai: HTTP 429 Too Many Requests: slow down", RetryAfterUS: 3_000_000, WaitUS: 3_000_000},
		{Attempt: 2, Error: "openai: no answer within the request timeout (5m0s)", WaitUS: 2_000_000},
	}
	if len(turns) != 2 || turns[0].Attempts != 3 || fmt.Sprint(turns[0].Retries) != fmt.Sprint(want) || turns[1].Attempts != 0 || turns[1].Retries != nil {
		t.Errorf("turns: attempts %d, retries %+v; want 3, %+v", turns[0].Attempts, turns[0].Retries, want)
	}
	last := m.seen[len(m.seen)-1]
	if err := last.Validate(); err != nil {
		t.Fatal(err)
	}
	if id := last.Messages[1].ToolCalls[0].ID; id != "bench_call_0" || last.Messages[2].ToolCallID != id {
		t.Errorf("the call without an id: echoed as %q, answered as %q", id, last.Messages[2].ToolCallID)
	}
	if first.ToolCalls[0].ID != "" {
		t.Error("the model's own response was changed")
	}
}

// A model that reports no usage has each turn's usage estimated beside the
// run (laterUsage): when Run returns, every turn has the estimate the
// estimator makes of its request and response in turn order, whatever way
// the run ended (its last turn answered, or the model failed).
func TestLoopEstimatesEveryTurn(t *testing.T) {
	for _, modelErr := range []error{nil, errors.New("provider down")} {
		responses := []*llm.Response{
			call("c1", "get_status", `{"site":"a"}`),
			call("c2", "get_status", `{"site":"b","detail":"every client, with its SSID and band"}`),
			call("c3", "get_status", `{}`),
		}
		m := &script{responses: responses, err: modelErr}
		if modelErr == nil {
			m.responses = append(m.responses, &llm.Response{Text: "all fine", StopReason: llm.StopEndTurn})
		}
		var turns []*traces.Turn
		tc := NewTokenCounter()
		l := &Loop{Model: m, Intent: "How are the sites?", Tokens: tc,
			Tools: []llm.Tool{{Name: "get_status", Description: "Status of a site.", InputSchema: json.RawMessage(`{"type":"object","properties":{"site":{"type":"string"}}}`)}},
			Exec: func(_ context.Context, idx int, _ llm.ToolCall) ToolResult {
				return ToolResult{Content: strings.Repeat(fmt.Sprintf(`{"site":%d,"clients":42}`, idx), 20)}
			},
			Emit: func(_ time.Time, e traces.Event) {
				if e.Turn != nil {
					turns = append(turns, e.Turn)
				}
			},
		}
		l.Run(context.Background())
		if len(turns) != len(m.responses) {
			t.Fatalf("model error %v: %d turns, want %d", modelErr, len(turns), len(m.responses))
		}
		est := newUsageEstimator(tc, SystemPrompt, l.toolsJSONOf(m.seen[0].Tools))
		for i, tr := range turns {
			resp, _ := json.Marshal(m.responses[i])
			in, out := est.estimate(m.seen[i], resp)
			if want := (traces.Usage{Input: in, Output: out, Estimated: true}); tr.Usage != want || in == 0 {
				t.Errorf("model error %v: turn %d usage %+v, want %+v", modelErr, i, tr.Usage, want)
			}
		}
	}
}
