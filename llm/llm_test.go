package llm

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

func TestParseSpec(t *testing.T) {
	for _, tc := range []struct {
		in      string
		want    Spec
		wantErr string
		why     string
	}{
		{in: "openai:gpt-4.1", want: Spec{ProviderOpenAI, "gpt-4.1"}, why: "the common case"},
		{in: "anthropic:claude-sonnet-4-5", want: Spec{ProviderAnthropic, "claude-sonnet-4-5"}, why: "the common case"},
		{in: "openai:meta-llama/Llama-3.1-8B:free", want: Spec{ProviderOpenAI, "meta-llama/Llama-3.1-8B:free"}, why: "model names keep their colons and slashes"},
		{in: "OpenAI:gpt-4.1", want: Spec{ProviderOpenAI, "gpt-4.1"}, why: "provider is case-insensitive"},
		{in: "baseline", want: Spec{Provider: ProviderBaseline}, why: "no model"},
		{in: "oracle", want: Spec{Provider: ProviderOracle}, why: "no model"},
		{in: "", wantErr: "empty model spec", why: "nothing given"},
		{in: "openai", wantErr: "openai needs a model name", why: "model missing"},
		{in: "anthropic:", wantErr: "anthropic needs a model name", why: "model empty"},
		{in: "baseline:bm25", wantErr: "baseline takes no model name", why: "baseline has one model"},
		{in: "gpt-4o", wantErr: `unknown model spec "gpt-4o"`, why: "a bare model name is ambiguous"},
		{in: "gemini:pro", wantErr: `unknown provider "gemini"`, why: "not supported"},
		{in: "openai: gpt-4", wantErr: "white space", why: "a stray space is a typo"},
	} {
		got, err := ParseSpec(tc.in)
		if tc.wantErr != "" {
			if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
				t.Errorf("ParseSpec(%q) error = %v, want %q (%s)", tc.in, err, tc.wantErr, tc.why)
			}
			continue
		}
		if err != nil || got != tc.want {
			t.Errorf("ParseSpec(%q) = %v, %v; want %v (%s)", tc.in, got, err, tc.want, tc.why)
		}
		if round, _ := ParseSpec(got.String()); round != got {
			t.Errorf("String() of %v does not parse back", got)
		}
	}
}

func ptr[T any](v T) *T { return &v }

func conversation(callID string, args string) *Request {
	return &Request{
		System: "sys",
		Messages: []Message{
			{Role: RoleUser, Content: "find aa:bb"},
			{Role: RoleAssistant, ToolCalls: []ToolCall{{ID: callID, Name: "find", Arguments: json.RawMessage(args)}}},
			{Role: RoleTool, ToolCallID: callID, Content: `{"site":"HQ"}`},
		},
		Tools:    []Tool{{Name: "find", Description: "Find <things> & more", InputSchema: json.RawMessage(`{ "type": "object", "properties": {"mac": {"type":"string"}} }`)}},
		Sampling: Sampling{Temperature: ptr(0.0), Seed: ptr(int64(1)), MaxTokens: 100},
	}
}

func TestValidate(t *testing.T) {
	for _, tc := range []struct {
		name string
		mod  func(*Request)
		want string
	}{
		{"bad role", func(r *Request) { r.Messages[0].Role = "system" }, "unknown role"},
		{"schema not object", func(r *Request) { r.Tools[0].InputSchema = json.RawMessage(`[]`) }, "not a JSON object"},
		{"duplicate tool", func(r *Request) { r.Tools = append(r.Tools, r.Tools[0]) }, "duplicate tool"},
		{"tool result without id", func(r *Request) { r.Messages[2].ToolCallID = "" }, "without tool_call_id"},
		{"named choice without name", func(r *Request) { r.ToolChoice = ToolChoice{Mode: ToolChoiceTool} }, "needs a name"},
	} {
		r := conversation("c1", `{}`)
		tc.mod(r)
		if err := r.Validate(); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: Validate() = %v, want %q", tc.name, err, tc.want)
		}
	}
	if err := conversation("c1", `{}`).Validate(); err != nil {
		t.Errorf("valid request: %v", err)
	}
	// A model's malformed call that names no tool is echoed as it was.
	r := conversation("c1", `{}`)
	r.Messages[1].ToolCalls[0].Name = ""
	if err := r.Validate(); err != nil {
		t.Errorf("a conversation echoing a call that names no tool: %v", err)
	}
}

func TestRetryPolicy(t *testing.T) {
	var slept []time.Duration
	p := RetryPolicy{MaxAttempts: 4, BaseDelay: time.Second, MaxDelay: 5 * time.Second,
		Sleep: func(_ context.Context, d time.Duration) error { slept = append(slept, d); return nil }}
	errs := []error{
		&APIError{Provider: "x", StatusCode: 500},
		&APIError{Provider: "x", StatusCode: 429},
		&APIError{Provider: "x", StatusCode: 503},
		nil,
	}
	n := 0
	attempts, err := p.Do(context.Background(), func(context.Context) error { n++; return errs[n-1] })
	if err != nil || n != 4 {
		t.Fatalf("Do = %v after %d calls", err, n)
	}
	if d := cmp.Diff([]time.Duration{time.Second, 2 * time.Second, 4 * time.Second}, slept); d != "" {
		t.Errorf("backoff (-want +got):\n%s", d)
	}
	if len(attempts) != 3 || attempts[2].StatusCode != 503 {
		t.Errorf("attempts = %+v", attempts)
	}

	n = 0
	_, err = p.Do(context.Background(), func(context.Context) error { n++; return &APIError{Provider: "x", StatusCode: 400} })
	if n != 1 || err == nil || RetriesOf(err) != nil {
		t.Errorf("a 400 was retried (%d calls) or reported retries", n)
	}
	n = 0
	plain := errors.New("decode")
	_, err = p.Do(context.Background(), func(context.Context) error { n++; return plain })
	if n != 1 || !errors.Is(err, plain) {
		t.Errorf("a non-HTTP error was retried or lost: %d calls, %v", n, err)
	}
}

func TestParseRetryAfter(t *testing.T) {
	now := time.Date(2026, 11, 29, 12, 0, 0, 0, time.UTC)
	for _, tc := range []struct {
		h    http.Header
		want time.Duration
	}{
		{http.Header{"Retry-After": {"7"}}, 7 * time.Second},
		{http.Header{"Retry-After": {"1.5"}}, 1500 * time.Millisecond},
		{http.Header{"Retry-After-Ms": {"250"}, "Retry-After": {"9"}}, 250 * time.Millisecond},
		{http.Header{"Retry-After": {now.Add(30 * time.Second).Format(http.TimeFormat)}}, 30 * time.Second},
		{http.Header{"Retry-After": {"soon"}}, 0},
		{nil, 0},
	} {
		if got := ParseRetryAfter(tc.h, now); got != tc.want {
			t.Errorf("ParseRetryAfter(%v) = %v, want %v", tc.h, got, tc.want)
		}
	}
}

func TestRedact(t *testing.T) {
	if got := Redact("key sk-123456 in sk-123456", "sk-123456", ""); got != "key [REDACTED] in [REDACTED]" {
		t.Errorf("Redact = %q", got)
	}
}

func TestOracle(t *testing.T) {
	plan := []PlanStep{
		{Tool: "find_client", Arguments: json.RawMessage(`{"mac":"aa:bb:cc:dd:ee:ff"}`)},
		{Tool: "get_site_health", Arguments: json.RawMessage(`{"site":"HQ"}`)},
	}
	result := json.RawMessage(`{"site":"HQ","health_score":87}`)
	o, err := NewOracle(plan, result)
	if err != nil {
		t.Fatal(err)
	}
	schema := json.RawMessage(`{"type":"object"}`)
	req := &Request{
		Messages: []Message{{Role: RoleUser, Content: "how is the client's site?"}},
		Tools:    []Tool{{Name: "find_client", InputSchema: schema}, {Name: "get_site_health", InputSchema: schema}, {Name: SubmitTool, InputSchema: schema}},
	}
	var got []ToolCall
	for turn := 0; turn < 3; turn++ {
		resp, err := o.Generate(context.Background(), req)
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, resp.ToolCalls...)
		req.Messages = append(req.Messages, resp.Message(), Message{Role: RoleTool, ToolCallID: resp.ToolCalls[0].ID, Content: "{}"})
	}
	want := []ToolCall{
		{ID: "oracle_1", Name: "find_client", Arguments: plan[0].Arguments},
		{ID: "oracle_2", Name: "get_site_health", Arguments: plan[1].Arguments},
		{ID: "oracle_3", Name: SubmitTool, Arguments: result},
	}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("oracle calls (-want +got):\n%s", d)
	}
	final, err := o.Generate(context.Background(), req)
	if err != nil || len(final.ToolCalls) != 0 || final.StopReason != StopEndTurn {
		t.Errorf("after the plan: %+v, %v", final, err)
	}
	if o.Name() != "oracle" {
		t.Errorf("Name() = %q", o.Name())
	}

	// Without submit_result the result is the final text; a plan step the
	// server does not offer is an error that names it.
	o2, _ := NewOracle(nil, result)
	resp, _ := o2.Generate(context.Background(), &Request{Messages: req.Messages[:1]})
	if resp.Text != string(result) {
		t.Errorf("final text = %q, want the result", resp.Text)
	}
	o3, _ := NewOracle([]PlanStep{{Tool: "renamed_tool"}}, result)
	if _, err := o3.Generate(context.Background(), &Request{Messages: req.Messages[:1]}); err == nil || !strings.Contains(err.Error(), "renamed_tool") {
		t.Errorf("missing tool: err = %v", err)
	}
}

// TestOracleThroughRoutes: a step whose tool is not offered is made through
// the first of its routes that is; none offered is an error naming them.
func TestOracleThroughRoutes(t *testing.T) {
	schema := json.RawMessage(`{"type":"object"}`)
	step := PlanStep{Tool: "find_client", Arguments: json.RawMessage(`{"mac":"aa"}`), Via: []PlanStep{
		{Tool: "invoke_read_tool", Arguments: json.RawMessage(`{"name":"find_client","arguments":{"mac":"aa"}}`)},
		{Tool: "execute", Arguments: json.RawMessage(`{"code":"return await call_tool(\"find_client\", {\"mac\": \"aa\"})"}`)},
	}}
	o, err := NewOracle([]PlanStep{step}, json.RawMessage(`{}`))
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		offered []string
		want    int // index into step.Via; -1: the step itself
	}{{[]string{"find_client", "invoke_read_tool"}, -1}, {[]string{"execute", "invoke_read_tool"}, 0}, {[]string{"execute"}, 1}} {
		req := &Request{Messages: []Message{{Role: RoleUser, Content: "where is aa?"}}}
		for _, n := range c.offered {
			req.Tools = append(req.Tools, Tool{Name: n, InputSchema: schema})
		}
		resp, err := o.Generate(context.Background(), req)
		if err != nil {
			t.Fatal(err)
		}
		want := step
		if c.want >= 0 {
			want = step.Via[c.want]
		}
		if got := resp.ToolCalls[0]; got.Name != want.Tool || string(got.Arguments) != string(want.Arguments) {
			t.Errorf("offered %v: called %s %s, want %s %s", c.offered, got.Name, got.Arguments, want.Tool, want.Arguments)
		}
	}
	_, err = o.Generate(context.Background(), &Request{Messages: []Message{{Role: RoleUser, Content: "?"}}, Tools: []Tool{{Name: "other", InputSchema: schema}}})
	if err == nil || !strings.Contains(err.Error(), `"find_client"`) || !strings.Contains(err.Error(), "invoke_read_tool, execute") {
		t.Errorf("no route offered: err = %v", err)
	}
	if _, err := NewOracle([]PlanStep{{Tool: "a", Via: []PlanStep{{Tool: "r", Arguments: json.RawMessage(`[1]`)}}}}, nil); err == nil {
		t.Error("a route with arguments that are no object: no error")
	}
}

func TestSchemaMembers(t *testing.T) {
	got, err := SchemaMembers(json.RawMessage(`{"type":"object","properties":{"n":{"minimum":1}}}`))
	if err != nil {
		t.Fatal(err)
	}
	if string(got["properties"].(json.RawMessage)) != `{"n":{"minimum":1}}` {
		t.Errorf("properties = %s, want the raw JSON as written", got["properties"])
	}
	if m, err := SchemaMembers(nil); err != nil || len(m) != 0 {
		t.Errorf("empty schema = %v, %v; want an empty object", m, err)
	}
	for _, bad := range []string{`[]`, `"x"`, `null`, `{"a":1} {}`, `{"a":`} {
		if _, err := SchemaMembers(json.RawMessage(bad)); err == nil {
			t.Errorf("SchemaMembers(%s) accepted a schema that is not one JSON object", bad)
		}
	}
}

// An attempt past AttemptTimeout is a *TimeoutError, retried with bench's
// backoff and transient once the attempts run out; the end of the
// caller's own context is neither retried nor called a timeout.
func TestRetryPolicyAttemptTimeout(t *testing.T) {
	var slept []time.Duration
	p := RetryPolicy{MaxAttempts: 3, AttemptTimeout: 5 * time.Millisecond, Provider: "x",
		Sleep: func(_ context.Context, d time.Duration) error { slept = append(slept, d); return nil }}
	hang := func(ctx context.Context) error { <-ctx.Done(); return fmt.Errorf("x: %w", ctx.Err()) }
	n := 0
	attempts, err := p.Do(context.Background(), func(ctx context.Context) error {
		n++
		if n == 1 {
			return hang(ctx)
		}
		return nil
	})
	if err != nil || n != 2 || len(attempts) != 1 || attempts[0].Error != "x: no answer within the request timeout (5ms)" || attempts[0].Wait != time.Second {
		t.Errorf("a hung attempt then an answer: err %v, %d calls, attempts %+v", err, n, attempts)
	}
	n = 0
	_, err = p.Do(context.Background(), func(ctx context.Context) error { n++; return hang(ctx) })
	var te *TimeoutError
	if n != 3 || !errors.As(err, &te) || Classify(err) != ClassTransient || len(RetriesOf(err)) != 2 ||
		!strings.Contains(err.Error(), "(gave up after 3 attempts)") {
		t.Errorf("always hung: %d calls, err %v (class %q)", n, err, Classify(err))
	}
	if d := cmp.Diff([]time.Duration{time.Second, time.Second, 2 * time.Second}, slept); d != "" {
		t.Errorf("backoff (-want +got):\n%s", d)
	}
	ctx, cancel := context.WithCancel(context.Background())
	n = 0
	_, err = p.Do(ctx, func(c context.Context) error { n++; cancel(); return hang(c) })
	if n != 1 || errors.As(err, &te) || !errors.Is(err, context.Canceled) {
		t.Errorf("the caller's cancel: %d calls, err %v", n, err)
	}
}
