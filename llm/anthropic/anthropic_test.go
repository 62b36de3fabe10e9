package anthropic

import (
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/mcpbench/bench/llm"
	"github.com/mcpbench/bench/llm/internal/scripted"
)

const testKey = "sk-ant-test-SECRET-0123456789"

func newModel(t *testing.T, replies ...scripted.Reply) (*Model, *scripted.Server, *[]time.Duration) {
	t.Helper()
	return newModelWith(t, nil, replies...)
}

// newModelWith is newModel with its options changed by opt first.
func newModelWith(t *testing.T, opt func(*Options), replies ...scripted.Reply) (*Model, *scripted.Server, *[]time.Duration) {
	t.Helper()
	// The environment must not redirect traffic or change the key.
	t.Setenv("ANTHROPIC_BASE_URL", "http://127.0.0.1:1/env")
	t.Setenv("ANTHROPIC_API_KEY", "sk-ant-from-env")
	t.Setenv("ANTHROPIC_AUTH_TOKEN", "tok-from-env")
	srv := scripted.Start(t, replies...)
	var slept []time.Duration
	o := &Options{
		APIKey:  testKey,
		BaseURL: srv.URL,
		Retry: llm.RetryPolicy{
			MaxAttempts: 3,
			Sleep:       func(_ context.Context, d time.Duration) error { slept = append(slept, d); return nil },
		},
	}
	if opt != nil {
		opt(o)
	}
	m, err := New("claude-test", o)
	if err != nil {
		t.Fatal(err)
	}
	return m, srv, &slept
}

const toolTurn = `{"id":"msg_1","type":"message","role":"assistant","model":"claude-test-2026",
 "content":[{"type":"text","text":"Let me look."},
  {"type":"tool_use","id":"toolu_01","name":"find_client","input":{"mac":"aa:bb:cc:dd:ee:ff"}},
  {"type":"tool_use","id":"toolu_02","name":"list_alerts","input":{}}],
 "stop_reason":"tool_use","stop_sequence":null,
 "usage":{"input_tokens":20,"output_tokens":30,"cache_creation_input_tokens":40,"cache_read_input_tokens":100}}`

const finalTurn = `{"id":"msg_2","type":"message","role":"assistant","model":"claude-test-2026",
 "content":[{"type":"text","text":"The client is on site HQ."}],"stop_reason":"end_turn",
 "usage":{"input_tokens":250,"output_tokens":8}}`

func ptr[T any](v T) *T { return &v }

func testRequest() *llm.Request {
	return &llm.Request{
		System:   "You operate Aruba Central.",
		Messages: []llm.Message{{Role: llm.RoleUser, Content: "Where is client aa:bb:cc:dd:ee:ff?"}},
		Tools: []llm.Tool{
			{Name: "find_client", Description: "Find a client by MAC.", InputSchema: json.RawMessage(`{"type":"object","properties":{"mac":{"type":"string"}},"required":["mac"],"additionalProperties":false}`)},
			{Name: "list_alerts", Description: "List alerts.", InputSchema: json.RawMessage(`{"type":"object","properties":{}}`)},
		},
		ToolChoice: llm.ToolChoice{Mode: llm.ToolChoiceRequired},
		Sampling:   llm.Sampling{Temperature: ptr(0.0), TopP: ptr(0.9), MaxTokens: 512, Seed: ptr(int64(7))},
	}
}

func TestToolCallRoundTrip(t *testing.T) {
	m, srv, _ := newModel(t, scripted.Reply{Status: 200, Body: toolTurn}, scripted.Reply{Status: 200, Body: finalTurn})
	ctx := context.Background()
	req := testRequest()
	resp, err := m.Generate(ctx, req)
	if err != nil {
		t.Fatal(err)
	}
	want := &llm.Response{
		Text: "Let me look.",
		ToolCalls: []llm.ToolCall{
			{ID: "toolu_01", Name: "find_client", Arguments: json.RawMessage(`{"mac":"aa:bb:cc:dd:ee:ff"}`)},
			{ID: "toolu_02", Name: "list_alerts", Arguments: json.RawMessage(`{}`)},
		},
		StopReason: llm.StopToolUse,
		// input_tokens excludes cache reads and writes; bench counts them all.
		Usage: llm.Usage{InputTokens: 160, OutputTokens: 30, CachedTokens: 100, CacheWriteTokens: 40},
		Model: "claude-test-2026",
	}
	if d := cmp.Diff(want, resp); d != "" {
		t.Fatalf("first turn (-want +got):\n%s", d)
	}

	req.Messages = append(req.Messages, resp.Message())
	req.Messages = append(req.Messages,
		llm.Message{Role: llm.RoleTool, ToolCallID: "toolu_01", Content: `{"site":"HQ"}`},
		llm.Message{Role: llm.RoleTool, ToolCallID: "toolu_02", Content: `upstream timeout`, IsError: true})
	resp, err = m.Generate(ctx, req)
	if err != nil {
		t.Fatal(err)
	}
	if resp.Text != "The client is on site HQ." || resp.StopReason != llm.StopEndTurn || resp.Usage.InputTokens != 250 {
		t.Errorf("final turn = %+v", resp)
	}

	got := srv.Requests()
	if len(got) != 2 {
		t.Fatalf("server saw %d requests, want 2", len(got))
	}
	first := got[0]
	if auth := first.Header.Get("Authorization"); first.Path != "/v1/messages" || auth != "Bearer "+testKey {
		t.Errorf("request went to %q with auth %q", first.Path, auth)
	}
	for k, v := range map[string]any{
		"model": "claude-test", "max_tokens": 512.0, "temperature": 0.0, "top_p": 0.9,
		"tool_choice": map[string]any{"type": "any"},
		"system":      []any{map[string]any{"type": "text", "text": "You operate Aruba Central."}},
	} {
		if d := cmp.Diff(v, first.Body[k]); d != "" {
			t.Errorf("request field %s (-want +got):\n%s", k, d)
		}
	}
	if _, ok := first.Body["seed"]; ok {
		t.Error("seed sent, but the Messages API has none")
	}
	wantTool := map[string]any{"name": "find_client", "description": "Find a client by MAC.",
		"input_schema": map[string]any{"type": "object", "properties": map[string]any{"mac": map[string]any{"type": "string"}},
			"required": []any{"mac"}, "additionalProperties": false}}
	if d := cmp.Diff(wantTool, first.Body["tools"].([]any)[0]); d != "" {
		t.Errorf("tool definition on the wire (-want +got):\n%s", d)
	}
	msgs := got[1].Body["messages"].([]any)
	wantMsgs := []any{
		map[string]any{"role": "user", "content": []any{map[string]any{"type": "text", "text": "Where is client aa:bb:cc:dd:ee:ff?"}}},
		map[string]any{"role": "assistant", "content": []any{
			map[string]any{"type": "text", "text": "Let me look."},
			map[string]any{"type": "tool_use", "id": "toolu_01", "name": "find_client", "input": map[string]any{"mac": "aa:bb:cc:dd:ee:ff"}},
			map[string]any{"type": "tool_use", "id": "toolu_02", "name": "list_alerts", "input": map[string]any{}},
		}},
		map[string]any{"role": "user", "content": []any{
			map[string]any{"type": "tool_result", "tool_use_id": "toolu_01", "is_error": false, "content": []any{map[string]any{"type": "text", "text": `{"site":"HQ"}`}}},
			map[string]any{"type": "tool_result", "tool_use_id": "toolu_02", "is_error": true, "content": []any{map[string]any{"type": "text", "text": "upstream timeout"}}},
		}},
	}
	if d := cmp.Diff(wantMsgs, msgs); d != "" {
		t.Errorf("second request messages (-want +got):\n%s", d)
	}
}

func TestRetryThenSuccess(t *testing.T) {
	m, srv, slept := newModel(t,
		scripted.Reply{Status: 429, Header: map[string]string{"Retry-After": "2"}, Body: `{"type":"error","error":{"type":"rate_limit_error","message":"slow down"}}`},
		scripted.Reply{Status: 529, Body: `{"type":"error","error":{"type":"overloaded_error","message":"overloaded"}}`},
		scripted.Reply{Status: 200, Body: finalTurn})
	resp, err := m.Generate(context.Background(), testRequest())
	if err != nil {
		t.Fatal(err)
	}
	if n := len(srv.Requests()); n != 3 {
		t.Errorf("server saw %d requests, want 3 (SDK retries must be off, bench's on)", n)
	}
	if d := cmp.Diff([]time.Duration{2 * time.Second, 2 * time.Second}, *slept); d != "" {
		t.Errorf("waits (-want +got):\n%s", d)
	}
	if len(resp.Retries) != 2 || resp.Retries[0].StatusCode != 429 || resp.Retries[1].StatusCode != 529 {
		t.Errorf("Retries = %+v", resp.Retries)
	}
}

func TestErrors(t *testing.T) {
	for _, tc := range []struct {
		name    string
		why     string
		replies []scripted.Reply
		want    []string
		retries int
	}{
		{
			name:    "malformed body",
			why:     "a 200 that is not JSON must say so",
			replies: []scripted.Reply{{Status: 200, Body: `{"content":[` + testKey}},
			want:    []string{"anthropic"},
		},
		{
			name:    "auth error echoes key",
			why:     "401 is not retried and the key the server echoes is redacted",
			replies: []scripted.Reply{{Status: 401, Body: `{"type":"error","error":{"type":"authentication_error","message":"invalid x-api-key ` + testKey + `"}}`}},
			want:    []string{"HTTP 401", "invalid x-api-key", "[REDACTED]"},
		},
		{
			name: "retries exhausted",
			why:  "a bounded policy gives up",
			replies: []scripted.Reply{
				{Status: 500, Body: `{"type":"error","error":{"type":"api_error","message":"boom ` + testKey + `"}}`},
				{Status: 500, Body: `{}`},
				{Status: 503, Body: `{}`},
			},
			want:    []string{"gave up after 3 attempts", "HTTP 503"},
			retries: 2,
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m, _, _ := newModel(t, tc.replies...)
			_, err := m.Generate(context.Background(), testRequest())
			if err == nil {
				t.Fatalf("no error; %s", tc.why)
			}
			t.Logf("error: %v", err)
			for _, w := range tc.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q lacks %q; %s", err, w, tc.why)
				}
			}
			if strings.Contains(err.Error(), testKey) {
				t.Errorf("API key leaked in error: %q", err)
			}
			rs := llm.RetriesOf(err)
			if len(rs) != tc.retries {
				t.Errorf("RetriesOf = %d attempts, want %d", len(rs), tc.retries)
			}
			for _, a := range rs {
				if strings.Contains(a.Error, testKey) {
					t.Errorf("API key leaked in a recorded attempt: %q", a.Error)
				}
			}
		})
	}
}

// numericSchema is a tool schema of the shape real servers publish, with a
// number in every place JSON Schema allows one. It is what bench means to
// send; the wire must carry it unchanged.
const numericSchema = `{"type":"object","properties":{"limit":{"type":"integer","minimum":1,"maximum":1000,"default":50},"ratio":{"type":"number","exclusiveMinimum":0,"multipleOf":0.25},"serials":{"type":"array","items":{"type":"string","maxLength":14},"minItems":1,"maxItems":100},"big":{"type":"integer","maximum":9007199254740993},"tiny":{"type":"number","minimum":1e-7}},"required":["serials"],"additionalProperties":false,"$defs":{"n":{"type":"integer","minimum":0}}}`

// TestWireExact compares the whole body the SDK sends with the JSON bench
// meant to send: schemas, tool-call arguments and sampling, numbers as
// written. A change of SDK that alters the wire fails here.
func TestWireExact(t *testing.T) {
	m, srv, _ := newModel(t, scripted.Reply{Status: 200, Body: finalTurn})
	req := &llm.Request{
		System: "sys",
		Messages: []llm.Message{
			{Role: llm.RoleUser, Content: "list"},
			{Role: llm.RoleAssistant, ToolCalls: []llm.ToolCall{{ID: "toolu_1", Name: "list_devices", Arguments: json.RawMessage(`{"limit":50,"ratio":0.25,"serials":["CN1"]}`)}}},
			{Role: llm.RoleTool, ToolCallID: "toolu_1", Content: `{"count":1}`},
		},
		Tools:      []llm.Tool{{Name: "list_devices", Description: "List devices.", InputSchema: json.RawMessage(numericSchema)}},
		ToolChoice: llm.ToolChoice{Mode: llm.ToolChoiceAuto},
		Sampling:   llm.Sampling{Temperature: ptr(0.7), TopP: ptr(0.95), MaxTokens: 256, Seed: ptr(int64(42))},
	}
	if _, err := m.Generate(context.Background(), req); err != nil {
		t.Fatal(err)
	}
	// The Messages API has no seed; bench records it but cannot send it.
	want := `{"model":"claude-test","max_tokens":256,"system":[{"type":"text","text":"sys"}],"messages":[` +
		`{"role":"user","content":[{"type":"text","text":"list"}]},` +
		`{"role":"assistant","content":[{"type":"tool_use","id":"toolu_1","name":"list_devices","input":{"limit":50,"ratio":0.25,"serials":["CN1"]}}]},` +
		`{"role":"user","content":[{"type":"tool_result","tool_use_id":"toolu_1","is_error":false,"content":[{"type":"text","text":"{\"count\":1}"}]}]}],` +
		`"tools":[{"name":"list_devices","description":"List devices.","input_schema":` + numericSchema + `}],` +
		`"tool_choice":{"type":"auto"},"temperature":0.7,"top_p":0.95}`
	scripted.SameWire(t, want, srv.Requests()[0].Raw)
}

// A refused key and a closed port classify as no model answering.
func TestErrorClasses(t *testing.T) {
	m, _, _ := newModel(t, scripted.Reply{Status: 401, Body: `{"type":"error","error":{"type":"authentication_error","message":"invalid x-api-key"}}`})
	_, err := m.Generate(context.Background(), testRequest())
	if got := llm.Classify(err); got != llm.ClassUnavailable {
		t.Errorf("401: Classify(%v) = %q, want unavailable", err, got)
	}
	closed, err := New("claude-test", &Options{APIKey: testKey, BaseURL: "http://127.0.0.1:1/", Retry: llm.RetryPolicy{MaxAttempts: 1}})
	if err != nil {
		t.Fatal(err)
	}
	_, err = closed.Generate(context.Background(), testRequest())
	if got := llm.Classify(err); got != llm.ClassUnavailable {
		t.Errorf("connection refused: Classify(%v) = %q, want unavailable", err, got)
	}
}

// A provider that never answers is an error of that attempt, past the
// request timeout (Retry.AttemptTimeout), retried like a 5xx; the SDK's
// own bound on a non-streaming request gives way to it.
func TestRequestTimeoutRetried(t *testing.T) {
	m, srv, slept := newModelWith(t, func(o *Options) { o.Retry.AttemptTimeout = 20 * time.Millisecond },
		scripted.Reply{Hang: true}, scripted.Reply{Status: 200, Body: finalTurn})
	resp, err := m.Generate(context.Background(), testRequest())
	if err != nil {
		t.Fatal(err)
	}
	got := srv.Requests()
	if len(got) != 2 {
		t.Fatalf("server saw %d requests, want 2 (the one that hung, then its retry)", len(got))
	}
	scripted.SameWire(t, string(got[0].Raw), got[1].Raw)
	want := []llm.Attempt{{Attempt: 1, Error: "anthropic: no answer within the request timeout (20ms)", Wait: time.Second}}
	if d := cmp.Diff(want, resp.Retries); d != "" {
		t.Errorf("Retries (-want +got):\n%s", d)
	}
	if d := cmp.Diff([]time.Duration{time.Second}, *slept); d != "" {
		t.Errorf("waits (-want +got):\n%s", d)
	}
}

// A provider that hangs on every attempt fails the turn transiently.
func TestRequestTimeoutExhausted(t *testing.T) {
	m, _, _ := newModelWith(t, func(o *Options) { o.Retry.AttemptTimeout = 20 * time.Millisecond },
		scripted.Reply{Hang: true}, scripted.Reply{Hang: true}, scripted.Reply{Hang: true})
	_, err := m.Generate(context.Background(), testRequest())
	if err == nil || !strings.Contains(err.Error(), "no answer within the request timeout (20ms) (gave up after 3 attempts)") {
		t.Fatalf("err = %v", err)
	}
	if got := llm.Classify(err); got != llm.ClassTransient {
		t.Errorf("Classify = %q, want transient", got)
	}
	if n := len(llm.RetriesOf(err)); n != 2 {
		t.Errorf("RetriesOf = %d attempts, want 2", n)
	}
}

// The provider's backoff is honoured in each form it is given:
// retry-after-ms first, then Retry-After in seconds or as an HTTP date.
func TestRetryAfterForms(t *testing.T) {
	now := time.Date(2026, 12, 2, 12, 0, 0, 0, time.UTC)
	m, srv, slept := newModelWith(t, func(o *Options) { o.Retry.Now = func() time.Time { return now } },
		scripted.Reply{Status: 429, Header: map[string]string{"retry-after-ms": "750", "Retry-After": "9"}, Body: `{"type":"error","error":{"type":"rate_limit_error","message":"slow down"}}`},
		scripted.Reply{Status: 529, Header: map[string]string{"Retry-After": now.Add(20 * time.Second).Format(http.TimeFormat)}, Body: `{"type":"error","error":{"type":"overloaded_error","message":"overloaded"}}`},
		scripted.Reply{Status: 200, Body: finalTurn})
	resp, err := m.Generate(context.Background(), testRequest())
	if err != nil {
		t.Fatal(err)
	}
	if n := len(srv.Requests()); n != 3 {
		t.Errorf("server saw %d requests, want 3", n)
	}
	if d := cmp.Diff([]time.Duration{750 * time.Millisecond, 20 * time.Second}, *slept); d != "" {
		t.Errorf("waits (-want +got):\n%s", d)
	}
	if len(resp.Retries) != 2 || resp.Retries[0].RetryAfter != 750*time.Millisecond || resp.Retries[1].RetryAfter != 20*time.Second || resp.Retries[1].StatusCode != 529 {
		t.Errorf("Retries = %+v", resp.Retries)
	}
}

// A tool_use that names no tool (a compatible server passing on a small
// model's malformed call) is kept for the agent to answer, and echoed back
// as it was; max_tokens reaches the wire as asked.
func TestMalformedCallKept(t *testing.T) {
	const nameless = `{"id":"msg_3","type":"message","role":"assistant","model":"claude-test-2026",
 "content":[{"type":"tool_use","id":"toolu_x","name":"","input":{"_malformed":"list_alerts("}}],
 "stop_reason":"tool_use","usage":{"input_tokens":10,"output_tokens":5}}`
	m, srv, _ := newModel(t, scripted.Reply{Status: 200, Body: nameless}, scripted.Reply{Status: 200, Body: finalTurn})
	req := testRequest()
	req.Sampling = llm.Sampling{MaxTokens: 1024}
	resp, err := m.Generate(context.Background(), req)
	if err != nil {
		t.Fatal(err)
	}
	want := []llm.ToolCall{{ID: "toolu_x", Name: "", Arguments: json.RawMessage(`{"_malformed":"list_alerts("}`)}}
	if d := cmp.Diff(want, resp.ToolCalls); d != "" {
		t.Fatalf("calls (-want +got):\n%s", d)
	}
	req.Messages = append(req.Messages, resp.Message(), llm.Message{Role: llm.RoleTool, ToolCallID: "toolu_x", Content: "error: the call names no tool", IsError: true})
	if _, err := m.Generate(context.Background(), req); err != nil {
		t.Fatal(err)
	}
	wantWire := `{"model":"claude-test","max_tokens":1024,"system":[{"type":"text","text":"You operate Aruba Central."}],"messages":[` +
		`{"role":"user","content":[{"type":"text","text":"Where is client aa:bb:cc:dd:ee:ff?"}]},` +
		`{"role":"assistant","content":[{"type":"tool_use","id":"toolu_x","name":"","input":{"_malformed":"list_alerts("}}]},` +
		`{"role":"user","content":[{"type":"tool_result","tool_use_id":"toolu_x","is_error":true,"content":[{"type":"text","text":"error: the call names no tool"}]}]}],` +
		`"tools":[{"name":"find_client","description":"Find a client by MAC.","input_schema":{"type":"object","properties":{"mac":{"type":"string"}},"required":["mac"],"additionalProperties":false}},` +
		`{"name":"list_alerts","description":"List alerts.","input_schema":{"type":"object","properties":{}}}],` +
		`"tool_choice":{"type":"any"}}`
	scripted.SameWire(t, wantWire, srv.Requests()[1].Raw)
}
