package replayer

import (
	"context"
	"encoding/json"
	"errors"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/mcpbench/bench/llm"
	"github.com/mcpbench/bench/llm/reqkey"
	"github.com/mcpbench/bench/traces"
)

func f64(f float64) *float64 { return &f }

// baseRequest is turn 1 of a hand-built run: the user asked, the model
// called get_wlan, the server answered.
func baseRequest() *llm.Request {
	return &llm.Request{
		System: "You are a network assistant.\nUse the tools.",
		Messages: []llm.Message{
			{Role: llm.RoleUser, Content: "Show the corp WLAN"},
			{Role: llm.RoleAssistant, ToolCalls: []llm.ToolCall{{ID: "toolu_abc", Name: "get_wlan", Arguments: json.RawMessage(`{"name":"corp"}`)}}},
			{Role: llm.RoleTool, ToolCallID: "toolu_abc", Content: `{"name":"corp","security":"wpa3","vlan":10,"ssids":["a","b"]}`},
		},
		Tools: []llm.Tool{
			{Name: "get_client", Description: "Get one client by MAC address.", InputSchema: json.RawMessage(`{"type":"object","properties":{"mac":{"type":"string"}},"required":["mac"]}`)},
			{Name: "get_wlan", Description: "Get a WLAN profile by name.", InputSchema: json.RawMessage(`{"type":"object","properties":{"name":{"type":"string"}}}`)},
		},
		Sampling: llm.Sampling{Temperature: f64(0)},
	}
}

// turn0 is the first request of the run: the intent alone.
func turn0() *llm.Request {
	r := baseRequest()
	r.Messages = r.Messages[:1]
	return r
}

// keyOf is r's key in handRun's scope.
func keyOf(t *testing.T, r *llm.Request) traces.ID {
	t.Helper()
	k, err := reqkey.Key(reqkey.Scope{Provider: "openai", Model: "openai:gpt-x"}, r)
	if err != nil {
		t.Fatal(err)
	}
	return k
}

// handRun records turn0 -> call get_wlan, then baseRequest -> text answer.
func handRun(t *testing.T) *traces.Run {
	t.Helper()
	turn := func(i int, req *llm.Request, resp llm.Response, latency int64) traces.Event {
		rq, _ := json.Marshal(req)
		rs, _ := json.Marshal(resp)
		return traces.Event{Kind: traces.KindTurn, Turn: &traces.Turn{Index: i, Key: keyOf(t, req), Request: rq, Response: rs,
			Usage: traces.Usage{Input: int(resp.Usage.InputTokens), Output: int(resp.Usage.OutputTokens)}, LatencyUS: latency}}
	}
	return &traces.Run{
		Manifest: traces.Manifest{Format: traces.FormatVersion, Mode: traces.ModeRecord, Model: traces.ModelRef{Provider: "openai", Name: "openai:gpt-x"}},
		Events: []traces.Event{
			turn(0, turn0(), llm.Response{ToolCalls: []llm.ToolCall{{ID: "toolu_abc", Name: "get_wlan", Arguments: json.RawMessage(`{"name":"corp"}`)}},
				StopReason: llm.StopToolUse, Usage: llm.Usage{InputTokens: 120, OutputTokens: 12}}, 1_500_000),
			{Kind: traces.KindCall, Call: &traces.Call{Index: 0, Tool: "get_wlan", Arguments: json.RawMessage(`{"name":"corp"}`), LatencyUS: 4000}},
			turn(1, baseRequest(), llm.Response{Text: "corp uses WPA3 on VLAN 10.", StopReason: llm.StopEndTurn, Usage: llm.Usage{InputTokens: 180, OutputTokens: 9}}, 2_250_000),
		},
	}
}

// A replay that sees the recorded requests serves the recorded responses,
// usage included, and carries the recorded latency as data: the clock
// jumps, nothing waits.
func TestHitServesRecordedTurns(t *testing.T) {
	run := handRun(t)
	start := time.Date(2026, 11, 29, 12, 0, 0, 0, time.UTC)
	clock := NewClock(start, nil, 0)
	m, err := New(run, &Options{Clock: clock})
	if err != nil {
		t.Fatal(err)
	}
	if m.Name() != "openai:gpt-x" {
		t.Errorf("Name() = %q", m.Name())
	}
	for i, req := range []*llm.Request{turn0(), baseRequest()} {
		before := clock.Now()
		resp, err := m.Generate(context.Background(), req)
		if err != nil {
			t.Fatalf("turn %d: %v", i, err)
		}
		var want llm.Response
		json.Unmarshal(run.Events[2*i].Turn.Response, &want)
		if diff := cmp.Diff(&want, resp); diff != "" {
			t.Errorf("turn %d response (-want +got):\n%s", i, diff)
		}
		if got, want := clock.Now().Sub(before), time.Duration(run.Events[2*i].Turn.LatencyUS)*time.Microsecond; got != want {
			t.Errorf("turn %d: clock moved %v, want the recorded latency %v", i, got, want)
		}
	}
	if len(m.Misses()) != 0 || m.Served() != 2 {
		t.Errorf("misses %v, served %d; want none and 2", m.Misses(), m.Served())
	}
}

// Every component of a request that can change is named in the miss, with
// the detail a maintainer needs to see why.
func TestMissExplanations(t *testing.T) {
	cases := []struct {
		name   string
		reason string
		edit   func(r *llm.Request)
		want   []Difference
	}{
		{
			name:   "description",
			reason: "a tool description edited by the PR: word diff",
			edit: func(r *llm.Request) {
				r.Tools[1].Description = "Get a WLAN profile, with its security settings, by name."
			},
			want: []Difference{{Component: ComponentTool, Name: "get_wlan", Change: Changed,
				Detail: []string{"description: Get a WLAN [-profile-] {+profile, with its security settings,+} by name."}}},
		},
		{
			name:   "schema",
			reason: "a schema change: JSON paths of what was added and changed",
			edit: func(r *llm.Request) {
				r.Tools[0].InputSchema = json.RawMessage(`{"type":"object","properties":{"mac":{"type":"string","pattern":"^[0-9a-f:]+$"},"site":{"type":"string"}},"required":["mac","site"]}`)
			},
			want: []Difference{{Component: ComponentTool, Name: "get_client", Change: Changed, Detail: []string{
				`input_schema $.properties.mac.pattern: added "^[0-9a-f:]+$"`,
				`input_schema $.properties.site: added {"type":"string"}`,
				`input_schema $.required[1]: added "site"`,
			}}},
		},
		{
			name:   "rename",
			reason: "a renamed tool is one removed and one added",
			edit:   func(r *llm.Request) { r.Tools[0].Name = "lookup_client" },
			want: []Difference{
				{Component: ComponentTool, Name: "get_client", Change: Removed},
				{Component: ComponentTool, Name: "lookup_client", Change: Added},
			},
		},
		{
			name:   "tool result",
			reason: "a tool result that changed: the message, the tool, the JSON path",
			edit: func(r *llm.Request) {
				r.Messages[2].Content = `{"name":"corp","security":"wpa3","vlan":20,"ssids":["a","b"],"passphrase":"hunter2"}`
			},
			want: []Difference{{Component: ComponentMessage, Name: "messages[2] (tool result of get_wlan, call_1)", Change: Changed, Detail: []string{
				`content $.passphrase: added "hunter2"`,
				`content $.vlan: 10 -> 20`,
			}}},
		},
		{
			name:   "sampling",
			reason: "sampling parameters",
			edit:   func(r *llm.Request) { r.Sampling.Temperature = f64(0.7); r.Sampling.MaxTokens = 512 },
			want: []Difference{
				{Component: ComponentSampling, Name: "temperature", Change: Changed, Detail: []string{"0 -> 0.7"}},
				{Component: ComponentSampling, Name: "max_tokens", Change: Changed, Detail: []string{"0 -> 512"}},
			},
		},
		{
			name:   "system",
			reason: "the system prompt",
			edit:   func(r *llm.Request) { r.System = "You are a careful network assistant.\nUse the tools." },
			want:   []Difference{{Component: ComponentSystem, Change: Changed, Detail: []string{"You are a {+careful+} network assistant. Use the tools."}}},
		},
		{
			name:   "extra message",
			reason: "the live conversation has a message the recording does not",
			edit: func(r *llm.Request) {
				r.Messages = append(r.Messages, llm.Message{Role: llm.RoleTool, ToolCallID: "toolu_abc", Content: "page 2"})
			},
			want: []Difference{{Component: ComponentMessage, Name: "messages[3] (tool result of get_wlan, call_1)", Change: Added, Detail: []string{"page 2"}}},
		},
		{
			name:   "tool call ids",
			reason: "provider tool-call ids are volatile: a request that differs only there is no miss",
			edit: func(r *llm.Request) {
				r.Messages[1].ToolCalls[0].ID = "call_ZZZ"
				r.Messages[2].ToolCallID = "call_ZZZ"
			},
			want: nil,
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			live := baseRequest()
			tc.edit(live)
			got, err := Explain(baseRequest(), live)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("%s (-want +got):\n%s", tc.reason, diff)
			}
		})
	}
}

// What a miss does depends on the mode.
func TestModes(t *testing.T) {
	changed := func() *llm.Request {
		r := baseRequest()
		r.Tools[0].Name = "lookup_client"
		return r
	}
	live := &stubModel{resp: &llm.Response{Text: "live answer", StopReason: llm.StopEndTurn}}
	cases := []struct {
		name        string
		mode        Mode
		wantOutcome traces.Outcome // "" when the turn is answered
		wantText    string
		wantDiverge int
		wantLive    int
	}{
		{"strict stops stale", Strict, traces.OutcomeStale, "", -1, 0},
		{"lenient serves the recording", Lenient, "", "corp uses WPA3 on VLAN 10.", 1, 0},
		{"live asks the live model", Live, "", "live answer", -1, 1},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			live.calls = 0
			m, err := New(handRun(t), &Options{Mode: tc.mode, Live: live})
			if err != nil {
				t.Fatal(err)
			}
			if _, err := m.Generate(context.Background(), turn0()); err != nil {
				t.Fatal(err)
			}
			resp, err := m.Generate(context.Background(), changed())
			var me *MissError
			switch {
			case tc.wantOutcome != "":
				if !errors.As(err, &me) || me.Outcome() != tc.wantOutcome {
					t.Fatalf("err = %v, want a MissError with outcome %q", err, tc.wantOutcome)
				}
				if !strings.Contains(err.Error(), "tool get_client removed | tool lookup_client added") {
					t.Errorf("error %q does not explain the miss", err)
				}
			case err != nil:
				t.Fatal(err)
			case resp.Text != tc.wantText:
				t.Errorf("text %q, want %q", resp.Text, tc.wantText)
			}
			at, ok := m.Diverged()
			if !ok {
				at = -1
			}
			if at != tc.wantDiverge || live.calls != tc.wantLive || len(m.Misses()) != 1 {
				t.Errorf("diverged at %d, live calls %d, misses %d; want %d, %d, 1", at, live.calls, len(m.Misses()), tc.wantDiverge, tc.wantLive)
			}
		})
	}
}

// A lenient replay whose live run asks for more turns than were recorded
// has nothing to serve: the run ends diverged, the miss says why.
func TestPastTheRecording(t *testing.T) {
	m, _ := New(handRun(t), &Options{Mode: Lenient})
	for _, r := range []*llm.Request{turn0(), baseRequest()} {
		if _, err := m.Generate(context.Background(), r); err != nil {
			t.Fatal(err)
		}
	}
	_, err := m.Generate(context.Background(), baseRequest())
	var me *MissError
	if !errors.As(err, &me) || me.Outcome() != traces.OutcomeDiverged || me.Miss.Differences[0].Component != ComponentTurn {
		t.Fatalf("err = %v, want a turn miss ending the run diverged", err)
	}
}

// Keys decide: the same request under another key (another run index) is
// a miss whose explanation says so.
func TestKeyOnlyMiss(t *testing.T) {
	run := handRun(t)
	run.Manifest.RunIndex = 1 // its turns were keyed at run index 0
	m, _ := New(run, nil)
	_, err := m.Generate(context.Background(), turn0())
	var me *MissError
	if !errors.As(err, &me) || me.Miss.Differences[0].Component != ComponentKey {
		t.Fatalf("err = %v, want a key miss", err)
	}
	if !strings.Contains(me.Miss.Explain(), "key's other inputs differ") {
		t.Errorf("explanation:\n%s", me.Miss.Explain())
	}
}

func TestParseMode(t *testing.T) {
	for in, want := range map[string]Mode{"": Strict, "strict": Strict, "lenient": Lenient, "live": Live} {
		if got, err := ParseMode(in); err != nil || got != want {
			t.Errorf("ParseMode(%q) = %q, %v", in, got, err)
		}
	}
	if _, err := ParseMode("loose"); err == nil {
		t.Error("ParseMode(loose) accepted")
	}
	if _, err := New(handRun(t), &Options{Mode: Live}); err == nil {
		t.Error("live mode without a live model accepted")
	}
}

// The clock counts wall time only while tools run, rounded down per
// interval, and recorded latency at once.
func TestClock(t *testing.T) {
	wall := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	now := func() time.Time { return wall }
	start := time.Date(2026, 11, 29, 12, 0, 0, 0, time.UTC)
	c := NewClock(start, now, 100*time.Millisecond)
	wall = wall.Add(3 * time.Second) // paused: server start-up is not counted
	if got := c.Now(); !got.Equal(start) {
		t.Fatalf("paused clock moved to %v", got)
	}
	c.Advance(1500 * time.Millisecond) // a recorded model turn
	c.Resume()
	wall = wall.Add(40 * time.Millisecond) // a fast tool call: below the resolution
	c.Now()
	wall = wall.Add(2040 * time.Millisecond) // a slow one
	c.Now()
	c.Pause()
	wall = wall.Add(time.Hour)
	if got, want := c.Now().Sub(start), 3500*time.Millisecond; got != want {
		t.Errorf("clock at +%v, want +%v", got, want)
	}
}

type stubModel struct {
	resp  *llm.Response
	calls int
}

func (s *stubModel) Name() string { return "stub" }
func (s *stubModel) Generate(context.Context, *llm.Request) (*llm.Response, error) {
	s.calls++
	return s.resp, nil
}

func TestWordDiff(t *testing.T) {
	cases := []struct{ a, b, want string }{
		{"a b c", "a b c", "unchanged"},
		{"a  b", "a b", "whitespace only"},
		{"list all the alerts", "list the critical alerts", "list [-all-] the {+critical+} alerts"},
		{"one two three four five six seven eight nine", "one two three four five six seven eight NINE", "… six seven eight [-nine-] {+NINE+}"},
	}
	for _, tc := range cases {
		if got := WordDiff(tc.a, tc.b); got != tc.want {
			t.Errorf("WordDiff(%q, %q) = %q, want %q", tc.a, tc.b, got, tc.want)
		}
	}
}

func TestJSONDiff(t *testing.T) {
	got := JSONDiff([]byte(`{"a":[1,2,3],"b":{"c":"x"},"weird key":1}`), []byte(`{"a":[1,5],"b":{"c":"y","d":true}}`))
	want := []string{
		`$.a[1]: 2 -> 5`,
		`$.a[2]: removed 3`,
		`$.b.c: "x" -> "y"`,
		`$.b.d: added true`,
		`$["weird key"]: removed 1`,
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
}

// RecordedSampling reads the sampling member of a canonical request as a
// full decode of the request does, and of a request that is not canonical.
func TestRecordedSampling(t *testing.T) {
	for _, req := range []string{
		`{"messages":[{"content":"x","role":"user"}],"sampling":{"max_tokens":300,"seed":7,"temperature":0.2},"tools":[{"name":"a"}]}`,
		`{"messages":[],"sampling":{},"tools":[]}`,
		`{ "tools": [], "sampling": {"top_p": 0.5} }`,
	} {
		run := &traces.Run{Events: []traces.Event{{Kind: traces.KindTurn, Turn: &traces.Turn{Request: json.RawMessage(req)}}}}
		var full struct {
			Sampling json.RawMessage `json:"sampling"`
		}
		if err := json.Unmarshal([]byte(req), &full); err != nil {
			t.Fatal(err)
		}
		got, _ := json.Marshal(RecordedSampling(run))
		var want, have any
		json.Unmarshal(full.Sampling, &want)
		json.Unmarshal(got, &have)
		if !reflect.DeepEqual(want, have) {
			t.Errorf("%s: sampling %s, want %s", req, got, full.Sampling)
		}
	}
}

// A recorded run that ended in an error replays to that point and ends
// there with the recorded error, in every mode: no miss, not stale.
func TestRecordedErrorIsNoMiss(t *testing.T) {
	for _, mode := range []Mode{Strict, Lenient} {
		// The model's first call failed: no turn was recorded.
		noTurn := &traces.Run{Manifest: traces.Manifest{Format: traces.FormatVersion, Mode: traces.ModeRecord, Outcome: traces.OutcomeError,
			Model: traces.ModelRef{Provider: "openai", Name: "openai:gpt-x"}},
			Events: []traces.Event{{Kind: traces.KindError, Error: &traces.Error{Kind: traces.ErrorModel, Message: "openai: chat completion: dial tcp: lookup api.openai.com: no such host"}}}}
		m, _ := New(noTurn, &Options{Mode: mode})
		_, err := m.Generate(context.Background(), turn0())
		var re *RecordedError
		if !errors.As(err, &re) || re.Outcome() != traces.OutcomeError || !strings.Contains(err.Error(), "no such host") {
			t.Errorf("%s: err = %v, want the recorded error", mode, err)
		}
		if len(m.Misses()) != 0 || !m.RecordedError() {
			t.Errorf("%s: %d misses, recorded error %v; want none and true", mode, len(m.Misses()), m.RecordedError())
		}

		// The server crashed after the first turn's call.
		crashed := handRun(t)
		crashed.Manifest.Outcome = traces.OutcomeError
		crashed.Events = append(crashed.Events[:2], traces.Event{Kind: traces.KindError, Error: &traces.Error{Kind: traces.ErrorServerExited, Message: "call 0 (get_wlan): the server exited"}})
		m, _ = New(crashed, &Options{Mode: mode})
		if _, err := m.Generate(context.Background(), turn0()); err != nil {
			t.Fatal(err)
		}
		if _, err := m.Generate(context.Background(), baseRequest()); !errors.As(err, &re) || re.Turn != 1 || re.Recorded.Kind != traces.ErrorServerExited {
			t.Errorf("%s: past the crash: err = %v, want the recorded error at turn 1", mode, err)
		}
	}
}

// A run's turns decoded once (Parse) serve two Models, each as New's
// would: what one serves does not count as served by the other. A
// response that does not decode is said with its turn.
func TestParsedServesModels(t *testing.T) {
	rec, err := Parse(handRun(t))
	if err != nil {
		t.Fatal(err)
	}
	a, err := rec.Model(nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, req := range []*llm.Request{turn0(), baseRequest()} {
		if _, err := a.Generate(context.Background(), req); err != nil {
			t.Fatal(err)
		}
	}
	if a.Served() != 2 {
		t.Fatalf("served %d of 2", a.Served())
	}
	b, _ := rec.Model(&Options{Mode: Lenient})
	if b.Served() != 0 || b.turns[0].hit || b.turns[1].hit {
		t.Fatal("a second Model from the same parse starts with the first one's turns served")
	}
	if _, err := rec.Model(&Options{Mode: Live}); err == nil {
		t.Error("live mode without a live model accepted")
	}
	bad := handRun(t)
	bad.Events[2].Turn.Response = json.RawMessage(`{"text":1}`)
	if _, err := Parse(bad); err == nil || !strings.Contains(err.Error(), "response of turn 1") {
		t.Errorf("a response that does not decode: %v", err)
	}
	if _, err := Parse(nil); err == nil {
		t.Error("Parse(nil) accepted")
	}
}
