package openai

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

const testKey = "sk-test-SECRET-0123456789"

// newModel starts a fake with replies and returns a model pointed at it
// whose sleeps are recorded instead of slept.
func newModel(t *testing.T, replies ...scripted.Reply) (*Model, *scripted.Server, *[]time.Duration) {
	t.Helper()
	return newModelWith(t, nil, replies...)
}

// newModelWith is newModel with its options changed by opt first.
func newModelWith(t *testing.T, opt func(*Options), replies ...scripted.Reply) (*Model, *scripted.Server, *[]time.Duration) {
	t.Helper()
	// The environment must not redirect traffic or change the key.
	t.Setenv("OPENAI_BASE_URL", "http://127.0.0.1:1/env/")
	t.Setenv("OPENAI_API_KEY", "sk-from-env")
	srv := scripted.Start(t, replies...)
	var slept []time.Duration
	o := &Options{
		APIKey:  testKey,
		BaseURL: srv.URL + "/v1",
		Retry: llm.RetryPolicy{
			MaxAttempts: 3,
			Sleep:       func(_ context.Context, d time.Duration) error { slept = append(slept, d); return nil },
		},
	}
	if opt != nil {
		opt(o)
	}
	m, err := New("gpt-test", o)
	if err != nil {
		t.Fatal(err)
	}
	return m, srv, &slept
}

const toolTurn = `{"id":"chatcmpl-1","object":"chat.completion","created":1,"model":"gpt-test-2026",
 "choices":[{"index":0,"finish_reason":"tool_calls","message":{"role":"assistant","content":null,
  "tool_calls":[
   {"id":"call_abc","type":"function","function":{"name":"find_client","arguments":"{\"mac\":\"aa:bb:cc:dd:ee:ff\"}"}},
   {"id":"call_def","type":"function","function":{"name":"list_alerts","arguments":""}},
   {"id":"call_ghi","type":"function","function":{"name":"list_alerts","arguments":"{\"severity\":"}}]}}],
 "usage":{"prompt_tokens":120,"completion_tokens":30,"total_tokens":150,"prompt_tokens_details":{"cached_tokens":100}}}`

const finalTurn = `{"id":"chatcmpl-2","object":"chat.completion","created":2,"model":"gpt-test-2026",
 "choices":[{"index":0,"finish_reason":"stop","message":{"role":"assistant","content":"The client is on site HQ."}}],
 "usage":{"prompt_tokens":200,"completion_tokens":8,"total_tokens":208}}`

func ptr[T any](v T) *T { return &v }

func testRequest() *llm.Request {
	return &llm.Request{
		System:   "You operate Aruba Central.",
		Messages: []llm.Message{{Role: llm.RoleUser, Content: "Where is client aa:bb:cc:dd:ee:ff?"}},
		Tools: []llm.Tool{
			{Name: "find_client", Description: "Find a client by MAC.", InputSchema: json.RawMessage(`{"type":"object","properties":{"mac":{"type":"string"}},"required":["mac"]}`)},
			{Name: "list_alerts", Description: "List alerts.", InputSchema: json.RawMessage(`{"type":"object","properties":{"severity":{"type":"string","enum":["critical","major"]}}}`)},
		},
		ToolChoice: llm.ToolChoice{Mode: llm.ToolChoiceAuto},
		Sampling:   llm.Sampling{Temperature: ptr(0.0), TopP: ptr(1.0), MaxTokens: 512, Seed: ptr(int64(7))},
	}
}

func TestToolCallRoundTrip(t *testing.T) {
	m, f, _ := newModel(t, scripted.Reply{Status: 200, Body: toolTurn}, scripted.Reply{Status: 200, Body: finalTurn})
	ctx := context.Background()
	req := testRequest()
	resp, err := m.Generate(ctx, req)
	if err != nil {
		t.Fatal(err)
	}
	want := &llm.Response{
		ToolCalls: []llm.ToolCall{
			{ID: "call_abc", Name: "find_client", Arguments: json.RawMessage(`{"mac":"aa:bb:cc:dd:ee:ff"}`)},
			{ID: "call_def", Name: "list_alerts", Arguments: json.RawMessage(`{}`)},
			{ID: "call_ghi", Name: "list_alerts", Arguments: json.RawMessage(`{}`), InvalidArguments: `{"severity":`},
		},
		StopReason: llm.StopToolUse,
		Usage:      llm.Usage{InputTokens: 120, OutputTokens: 30, CachedTokens: 100},
		Model:      "gpt-test-2026",
	}
	if d := cmp.Diff(want, resp); d != "" {
		t.Fatalf("first turn (-want +got):\n%s", d)
	}

	req.Messages = append(req.Messages, resp.Message())
	for i, c := range resp.ToolCalls {
		req.Messages = append(req.Messages, llm.Message{Role: llm.RoleTool, ToolCallID: c.ID, Content: `{"n":` + string(rune('0'+i)) + `}`})
	}
	resp, err = m.Generate(ctx, req)
	if err != nil {
		t.Fatal(err)
	}
	if resp.Text != "The client is on site HQ." || resp.StopReason != llm.StopEndTurn || len(resp.ToolCalls) != 0 {
		t.Errorf("final turn = %+v", resp)
	}

	got := f.Requests()
	if len(got) != 2 {
		t.Fatalf("server saw %d requests, want 2", len(got))
	}
	first := got[0]
	if auth := first.Header.Get("Authorization"); first.Path != "/v1/chat/completions" || auth != "Bearer "+testKey {
		t.Errorf("request went to %q with auth %q", first.Path, auth)
	}
	for k, v := range map[string]any{"model": "gpt-test", "temperature": 0.0, "top_p": 1.0, "seed": 7.0, "max_completion_tokens": 512.0, "tool_choice": "auto"} {
		if d := cmp.Diff(v, first.Body[k]); d != "" {
			t.Errorf("request field %s (-want +got):\n%s", k, d)
		}
	}
	wantTool := map[string]any{"type": "function", "function": map[string]any{
		"name": "find_client", "description": "Find a client by MAC.",
		"parameters": map[string]any{"type": "object", "properties": map[string]any{"mac": map[string]any{"type": "string"}}, "required": []any{"mac"}}}}
	if d := cmp.Diff(wantTool, first.Body["tools"].([]any)[0]); d != "" {
		t.Errorf("tool definition on the wire (-want +got):\n%s", d)
	}
	msgs := got[1].Body["messages"].([]any)
	if len(msgs) != 6 { // system, user, assistant, 3 tool results
		t.Fatalf("second request has %d messages, want 6: %v", len(msgs), msgs)
	}
	asst := msgs[2].(map[string]any)
	calls := asst["tool_calls"].([]any)
	if len(calls) != 3 || calls[2].(map[string]any)["function"].(map[string]any)["arguments"] != `{"severity":` {
		t.Errorf("assistant turn not echoed faithfully: %v", asst)
	}
	for i, id := range []string{"call_abc", "call_def", "call_ghi"} {
		tm := msgs[3+i].(map[string]any)
		if tm["role"] != "tool" || tm["tool_call_id"] != id {
			t.Errorf("tool result %d = %v, want tool_call_id %s", i, tm, id)
		}
	}
}

func TestRetryThenSuccess(t *testing.T) {
	m, f, slept := newModel(t,
		scripted.Reply{Status: 429, Header: map[string]string{"Retry-After": "3"}, Body: `{"error":{"message":"slow down","type":"rate_limit"}}`},
		scripted.Reply{Status: 503, Body: `{"error":{"message":"overloaded"}}`},
		scripted.Reply{Status: 200, Body: finalTurn})
	var seen []llm.Attempt
	m.retry.OnRetry = func(a llm.Attempt) { seen = append(seen, a) }
	resp, err := m.Generate(context.Background(), testRequest())
	if err != nil {
		t.Fatal(err)
	}
	if n := len(f.Requests()); n != 3 {
		t.Errorf("server saw %d requests, want 3 (SDK retries must be off, bench's on)", n)
	}
	if d := cmp.Diff([]time.Duration{3 * time.Second, 2 * time.Second}, *slept); d != "" {
		t.Errorf("waits (-want +got):\n%s", d)
	}
	if len(resp.Retries) != 2 || resp.Retries[0].StatusCode != 429 || resp.Retries[0].RetryAfter != 3*time.Second || resp.Retries[1].StatusCode != 503 {
		t.Errorf("Retries = %+v", resp.Retries)
	}
	if d := cmp.Diff(resp.Retries, seen); d != "" {
		t.Errorf("OnRetry saw other attempts than Response.Retries (-resp +callback):\n%s", d)
	}
}

func TestErrors(t *testing.T) {
	for _, tc := range []struct {
		name    string
		why     string
		replies []scripted.Reply
		want    []string // substrings of the error
		retries int
	}{
		{
			name:    "malformed body",
			why:     "a 200 that is not JSON must say so, not panic or return an empty answer",
			replies: []scripted.Reply{{Status: 200, Body: `{"choices":[{"message":` + testKey}},
			want:    []string{"openai"},
		},
		{
			name:    "no choices",
			why:     "an empty choices array is a broken server",
			replies: []scripted.Reply{{Status: 200, Body: `{"id":"x","choices":[]}`}},
			want:    []string{"no choices"},
		},
		{
			name:    "auth error echoes key",
			why:     "401 is not retried and the key the server echoes is redacted",
			replies: []scripted.Reply{{Status: 401, Body: `{"error":{"message":"Incorrect API key provided: ` + testKey + `"}}`}},
			want:    []string{"HTTP 401", "Incorrect API key", "[REDACTED]"},
		},
		{
			name: "retries exhausted",
			why:  "a bounded policy gives up and says how often it tried",
			replies: []scripted.Reply{
				{Status: 500, Body: `{"error":{"message":"boom ` + testKey + `"}}`},
				{Status: 502, Body: `{"error":{"message":"boom"}}`},
				{Status: 500, Body: `{"error":{"message":"boom"}}`},
			},
			want:    []string{"gave up after 3 attempts", "HTTP 500"},
			retries: 2,
		},
		{
			name:    "retry-after beyond the limit",
			why:     "a server asking for an hour is not waited for",
			replies: []scripted.Reply{{Status: 429, Header: map[string]string{"Retry-After": "3600"}, Body: `{}`}},
			want:    []string{"retry after 1h0m0s"},
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

func TestKeyNotInTransportError(t *testing.T) {
	// Nothing listens on port 1; the key is in the URL too, as some
	// gateways want it there.
	m, err := New("gpt-test", &Options{APIKey: testKey, BaseURL: "http://127.0.0.1:1/v1/?key=" + testKey, Retry: llm.RetryPolicy{MaxAttempts: 1}})
	if err != nil {
		t.Fatal(err)
	}
	_, err = m.Generate(context.Background(), testRequest())
	if err == nil || strings.Contains(err.Error(), testKey) {
		t.Fatalf("want an error without the key, got %v", err)
	}
}

// numericSchema is a tool schema of the shape real servers publish, with a
// number in every place JSON Schema allows one. It is what bench means to
// send; the wire must carry it unchanged.
const numericSchema = `{"type":"object","properties":{"limit":{"type":"integer","minimum":1,"maximum":1000,"default":50},"ratio":{"type":"number","exclusiveMinimum":0,"multipleOf":0.25},"serials":{"type":"array","items":{"type":"string","maxLength":14},"minItems":1,"maxItems":100},"big":{"type":"integer","maximum":9007199254740993},"tiny":{"type":"number","minimum":1e-7}},"required":["serials"],"additionalProperties":false}`

// TestWireExact compares the whole body the SDK sends with the JSON bench
// meant to send: schemas, tool-call arguments and sampling, numbers as
// written. A change of SDK that alters the wire fails here.
func TestWireExact(t *testing.T) {
	m, srv, _ := newModel(t, scripted.Reply{Status: 200, Body: finalTurn})
	req := &llm.Request{
		System: "sys",
		Messages: []llm.Message{
			{Role: llm.RoleUser, Content: "list"},
			{Role: llm.RoleAssistant, ToolCalls: []llm.ToolCall{{ID: "call_1", Name: "list_devices", Arguments: json.RawMessage(`{"limit":50,"ratio":0.25,"serials":["CN1"]}`)}}},
			{Role: llm.RoleTool, ToolCallID: "call_1", Content: `{"count":1}`},
		},
		Tools:      []llm.Tool{{Name: "list_devices", Description: "List devices.", InputSchema: json.RawMessage(numericSchema)}},
		ToolChoice: llm.ToolChoice{Mode: llm.ToolChoiceAuto},
		Sampling:   llm.Sampling{Temperature: ptr(0.7), TopP: ptr(0.95), MaxTokens: 256, Seed: ptr(int64(42))},
	}
	if _, err := m.Generate(context.Background(), req); err != nil {
		t.Fatal(err)
	}
	want := `{"model":"gpt-test","messages":[` +
		`{"role":"system","content":"sys"},` +
		`{"role":"user","content":"list"},` +
		`{"role":"assistant","tool_calls":[{"id":"call_1","type":"function","function":{"name":"list_devices","arguments":"{\"limit\":50,\"ratio\":0.25,\"serials\":[\"CN1\"]}"}}]},` +
		`{"role":"tool","tool_call_id":"call_1","content":"{\"count\":1}"}],` +
		`"tools":[{"type":"function","function":{"name":"list_devices","description":"List devices.","parameters":` + numericSchema + `}}],` +
		`"tool_choice":"auto","temperature":0.7,"top_p":0.95,"seed":42,"max_completion_tokens":256}`
	scripted.SameWire(t, want, srv.Requests()[0].Raw)
}

// The errors Generate returns classify as what they are: a refused key and
// a closed port mean no model answered; 5xx past the retries is transient;
// a 400 is the provider's answer to what the run sent.
func TestErrorClasses(t *testing.T) {
	for _, c := range []struct {
		name    string
		replies []scripted.Reply
		want    llm.ErrorClass
	}{
		{"401", []scripted.Reply{{Status: 401, Body: `{"error":{"message":"Incorrect API key provided"}}`}}, llm.ClassUnavailable},
		{"503 past the retries", []scripted.Reply{{Status: 503, Body: `{}`}, {Status: 503, Body: `{}`}, {Status: 503, Body: `{}`}}, llm.ClassTransient},
		{"400", []scripted.Reply{{Status: 400, Body: `{"error":{"message":"Invalid schema for function 'x'"}}`}}, llm.ClassRefused},
	} {
		t.Run(c.name, func(t *testing.T) {
			m, _, _ := newModel(t, c.replies...)
			_, err := m.Generate(context.Background(), testRequest())
			if got := llm.Classify(err); got != c.want {
				t.Errorf("Classify(%v) = %q, want %q", err, got, c.want)
			}
		})
	}
	// Nothing listens on port 1.
	m, err := New("gpt-test", &Options{APIKey: testKey, BaseURL: "http://127.0.0.1:1/v1/", Retry: llm.RetryPolicy{MaxAttempts: 1}})
	if err != nil {
		t.Fatal(err)
	}
	_, err = m.Generate(context.Background(), testRequest())
	if got := llm.Classify(err); got != llm.ClassUnavailable {
		t.Errorf("connection refused: Classify(%v) = %q, want unavailable", err, got)
	}
}

// A provider that never answers is an error of that attempt, past the
// request timeout (Retry.AttemptTimeout), retried like a 5xx: the retry's
// answer is the turn's, and the attempt that hung is in Response.Retries.
// The same request is sent again, byte for byte.
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
	want := []llm.Attempt{{Attempt: 1, Error: "openai: no answer within the request timeout (20ms)", Wait: time.Second}}
	if d := cmp.Diff(want, resp.Retries); d != "" {
		t.Errorf("Retries (-want +got):\n%s", d)
	}
	if d := cmp.Diff([]time.Duration{time.Second}, *slept); d != "" {
		t.Errorf("waits (-want +got):\n%s", d)
	}
}

// A provider that hangs on every attempt fails the turn transiently (the
// run is no result about the server), saying how often it was asked.
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

// The provider's backoff is honoured in each form it is given: OpenAI's
// retry-after-ms first, then Retry-After in seconds or as an HTTP date;
// without one, bench's own backoff.
func TestRetryAfterForms(t *testing.T) {
	now := time.Date(2026, 12, 2, 12, 0, 0, 0, time.UTC)
	m, srv, slept := newModelWith(t, func(o *Options) { o.Retry.Now = func() time.Time { return now } },
		scripted.Reply{Status: 429, Header: map[string]string{"retry-after-ms": "1500", "Retry-After": "9"}, Body: `{"error":{"message":"slow down"}}`},
		scripted.Reply{Status: 503, Header: map[string]string{"Retry-After": now.Add(30 * time.Second).Format(http.TimeFormat)}, Body: `{}`},
		scripted.Reply{Status: 200, Body: finalTurn})
	resp, err := m.Generate(context.Background(), testRequest())
	if err != nil {
		t.Fatal(err)
	}
	if n := len(srv.Requests()); n != 3 {
		t.Errorf("server saw %d requests, want 3", n)
	}
	if d := cmp.Diff([]time.Duration{1500 * time.Millisecond, 30 * time.Second}, *slept); d != "" {
		t.Errorf("waits (-want +got):\n%s", d)
	}
	if len(resp.Retries) != 2 || resp.Retries[0].RetryAfter != 1500*time.Millisecond || resp.Retries[1].RetryAfter != 30*time.Second || resp.Retries[1].StatusCode != 503 {
		t.Errorf("Retries = %+v", resp.Retries)
	}
}

// A small model's malformed call (no function name, arguments that are
// not JSON) is kept for the agent to answer, and echoed back as it was.
func TestMalformedCallKept(t *testing.T) {
	const nameless = `{"id":"chatcmpl-3","object":"chat.completion","created":3,"model":"gpt-test-2026",
 "choices":[{"index":0,"finish_reason":"tool_calls","message":{"role":"assistant","content":null,
  "tool_calls":[{"id":"call_x","type":"function","function":{"name":"","arguments":"list_alerts(severity=critical)"}}]}}],
 "usage":{"prompt_tokens":10,"completion_tokens":5,"total_tokens":15}}`
	m, srv, _ := newModel(t, scripted.Reply{Status: 200, Body: nameless}, scripted.Reply{Status: 200, Body: finalTurn})
	req := testRequest()
	resp, err := m.Generate(context.Background(), req)
	if err != nil {
		t.Fatal(err)
	}
	want := []llm.ToolCall{{ID: "call_x", Name: "", Arguments: json.RawMessage(`{}`), InvalidArguments: "list_alerts(severity=critical)"}}
	if d := cmp.Diff(want, resp.ToolCalls); d != "" {
		t.Fatalf("calls (-want +got):\n%s", d)
	}
	req.Messages = append(req.Messages, resp.Message(), llm.Message{Role: llm.RoleTool, ToolCallID: "call_x", Content: "error: the call names no tool", IsError: true})
	if _, err := m.Generate(context.Background(), req); err != nil {
		t.Fatal(err)
	}
	msgs := srv.Requests()[1].Body["messages"].([]any)
	wantEcho := map[string]any{"role": "assistant", "tool_calls": []any{map[string]any{"id": "call_x", "type": "function",
		"function": map[string]any{"name": "", "arguments": "list_alerts(severity=critical)"}}}}
	if d := cmp.Diff(wantEcho, msgs[2]); d != "" {
		t.Errorf("the malformed call is not echoed as the model wrote it (-want +got):\n%s", d)
	}
}
