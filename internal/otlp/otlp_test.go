package otlp

import (
	"bufio"
	"bytes"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	collectorpb "go.opentelemetry.io/proto/otlp/collector/trace/v1"
	commonpb "go.opentelemetry.io/proto/otlp/common/v1"
	tracepb "go.opentelemetry.io/proto/otlp/trace/v1"
	"google.golang.org/protobuf/encoding/protojson"

	"github.com/mcpbench/bench/traces"
)

var hexID = map[string]*regexp.Regexp{
	"traceId":      regexp.MustCompile(`^[0-9a-f]{32}$`),
	"spanId":       regexp.MustCompile(`^[0-9a-f]{16}$`),
	"parentSpanId": regexp.MustCompile(`^[0-9a-f]{16}$`),
}

// decode reads an OTLP JSON file as the protobuf JSON decoder reads it:
// each line into a collector ExportTraceServiceRequest. OTLP/JSON writes
// IDs in hex where the protobuf JSON mapping has base64, so the ID fields
// are checked to be hex and turned to base64 first, as OTLP receivers do.
func decode(t *testing.T, file []byte) []*collectorpb.ExportTraceServiceRequest {
	t.Helper()
	var out []*collectorpb.ExportTraceServiceRequest
	sc := bufio.NewScanner(bytes.NewReader(file))
	sc.Buffer(nil, 64<<20)
	for n := 1; sc.Scan(); n++ {
		var doc any
		if err := json.Unmarshal(sc.Bytes(), &doc); err != nil {
			t.Fatalf("line %d: %v", n, err)
		}
		if err := base64IDs(doc); err != nil {
			t.Fatalf("line %d: %v", n, err)
		}
		b, _ := json.Marshal(doc)
		req := &collectorpb.ExportTraceServiceRequest{}
		if err := (protojson.UnmarshalOptions{}).Unmarshal(b, req); err != nil {
			t.Fatalf("line %d: the protobuf JSON decoder: %v", n, err)
		}
		out = append(out, req)
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

func base64IDs(doc any) error {
	switch v := doc.(type) {
	case map[string]any:
		for k, x := range v {
			if re := hexID[k]; re != nil {
				s, _ := x.(string)
				if !re.MatchString(s) {
					return fmt.Errorf("%s %q is not lowercase hex of its length", k, s)
				}
				b, _ := hex.DecodeString(s)
				v[k] = base64.StdEncoding.EncodeToString(b)
				continue
			}
			if err := base64IDs(x); err != nil {
				return err
			}
		}
	case []any:
		for _, x := range v {
			if err := base64IDs(x); err != nil {
				return err
			}
		}
	}
	return nil
}

func attrs(kvs []*commonpb.KeyValue) map[string]any {
	m := map[string]any{}
	for _, kv := range kvs {
		switch v := kv.Value.Value.(type) {
		case *commonpb.AnyValue_StringValue:
			m[kv.Key] = v.StringValue
		case *commonpb.AnyValue_IntValue:
			m[kv.Key] = v.IntValue
		case *commonpb.AnyValue_DoubleValue:
			m[kv.Key] = v.DoubleValue
		case *commonpb.AnyValue_BoolValue:
			m[kv.Key] = v.BoolValue
		case *commonpb.AnyValue_ArrayValue:
			var ss []string
			for _, x := range v.ArrayValue.Values {
				ss = append(ss, x.GetStringValue())
			}
			m[kv.Key] = ss
		}
	}
	return m
}

// tree is a decoded trace: its spans, by ID, with their parents.
type tree struct {
	spans   []*tracepb.Span
	byID    map[string]*tracepb.Span
	root    *tracepb.Span
	traceID string
}

func newTree(t *testing.T, req *collectorpb.ExportTraceServiceRequest) *tree {
	t.Helper()
	if len(req.ResourceSpans) != 1 || len(req.ResourceSpans[0].ScopeSpans) != 1 {
		t.Fatalf("want one resource and one scope per run, have %d", len(req.ResourceSpans))
	}
	tr := &tree{spans: req.ResourceSpans[0].ScopeSpans[0].Spans, byID: map[string]*tracepb.Span{}}
	for _, s := range tr.spans {
		tr.byID[string(s.SpanId)] = s
		if tr.traceID == "" {
			tr.traceID = string(s.TraceId)
		} else if string(s.TraceId) != tr.traceID {
			t.Errorf("span %s is in another trace", s.Name)
		}
		if len(s.ParentSpanId) == 0 {
			if tr.root != nil {
				t.Errorf("two roots: %s and %s", tr.root.Name, s.Name)
			}
			tr.root = s
		}
		if s.EndTimeUnixNano < s.StartTimeUnixNano {
			t.Errorf("span %s ends before it starts", s.Name)
		}
	}
	if len(tr.byID) != len(tr.spans) {
		t.Errorf("%d spans, %d distinct IDs", len(tr.spans), len(tr.byID))
	}
	for _, s := range tr.spans {
		if p := s.ParentSpanId; len(p) > 0 {
			ps := tr.byID[string(p)]
			if ps == nil {
				t.Fatalf("span %s: no parent %x", s.Name, p)
			}
			if s.StartTimeUnixNano < ps.StartTimeUnixNano {
				t.Errorf("span %s starts before its parent %s", s.Name, ps.Name)
			}
		}
	}
	return tr
}

func (tr *tree) parent(s *tracepb.Span) *tracepb.Span { return tr.byID[string(s.ParentSpanId)] }

func (tr *tree) named(prefix string) []*tracepb.Span {
	var out []*tracepb.Span
	for _, s := range tr.spans {
		if strings.HasPrefix(s.Name, prefix) {
			out = append(out, s)
		}
	}
	return out
}

// checkRun checks that a decoded trace matches its run: one chat span per
// turn with the turn's tokens, one execute_tool span per call under the
// run, an MCP tools/call span under each call the server was sent, and
// each HTTP call under the tool call that made it with its method, path
// and status, at the run's times.
func checkRun(t *testing.T, run *traces.Run, tr *tree) {
	t.Helper()
	m := run.Manifest
	if want := string(m.RunID[:16]); tr.traceID != want {
		t.Errorf("trace ID %x, want the run ID's first 16 bytes %x", tr.traceID, want)
	}
	root := tr.root
	if root == nil || root.Name != "invoke_agent bench" || root.Kind != tracepb.Span_SPAN_KIND_INTERNAL {
		t.Fatalf("root span %v", root)
	}
	ra := attrs(root.Attributes)
	if ra["gen_ai.operation.name"] != "invoke_agent" || ra["bench.run.id"] != m.RunID.String() || ra["bench.scenario.id"] != m.Scenario.ID {
		t.Errorf("root attributes %v", ra)
	}
	base := uint64(m.StartedAt.UnixNano())
	if root.StartTimeUnixNano != base {
		t.Errorf("run starts at %d, want its recorded start %d", root.StartTimeUnixNano, base)
	}
	at, _ := run.Times()
	chats, tools, mcps := tr.named("chat "), tr.named("execute_tool "), tr.named("tools/call ")
	var turns, calls, sent int
	var in, out int64
	callSpan := map[int]*tracepb.Span{}
	for i, e := range run.Events {
		when := base + uint64(at[i])*1000
		switch e.Kind {
		case traces.KindTurn:
			if turns >= len(chats) {
				t.Fatalf("turn %d has no chat span", e.Turn.Index)
			}
			s := chats[turns]
			turns++
			a := attrs(s.Attributes)
			in += int64(e.Turn.Usage.Input)
			out += int64(e.Turn.Usage.Output)
			if a["gen_ai.operation.name"] != "chat" || a["gen_ai.usage.input_tokens"] != int64(e.Turn.Usage.Input) ||
				a["gen_ai.usage.output_tokens"] != int64(e.Turn.Usage.Output) || a["bench.turn.index"] != int64(e.Turn.Index) {
				t.Errorf("turn %d: chat span attributes %v, usage %+v", e.Turn.Index, a, e.Turn.Usage)
			}
			if s.Kind != tracepb.Span_SPAN_KIND_CLIENT || tr.parent(s) != root || s.StartTimeUnixNano != when ||
				s.EndTimeUnixNano != when+uint64(e.Turn.LatencyUS)*1000 {
				t.Errorf("turn %d: chat span kind %v, parent %v, %d..%d", e.Turn.Index, s.Kind, tr.parent(s).GetName(), s.StartTimeUnixNano, s.EndTimeUnixNano)
			}
		case traces.KindCall:
			if calls >= len(tools) {
				t.Fatalf("call %d has no execute_tool span", e.Call.Index)
			}
			s := tools[calls]
			calls++
			a := attrs(s.Attributes)
			if s.Name != "execute_tool "+e.Call.Tool || a["gen_ai.tool.name"] != e.Call.Tool || a["bench.call.index"] != int64(e.Call.Index) ||
				tr.parent(s) != root || s.StartTimeUnixNano != when {
				t.Errorf("call %d: span %s, attributes %v", e.Call.Index, s.Name, a)
			}
			if id, _ := a["gen_ai.tool.call.id"].(string); id == "" {
				t.Errorf("call %d: no gen_ai.tool.call.id", e.Call.Index)
			}
			callSpan[e.Call.Index] = s
			if e.Call.Invalid == "" && e.Call.Tool != "submit_result" {
				if sent >= len(mcps) {
					t.Fatalf("call %d has no tools/call span", e.Call.Index)
				}
				ms := mcps[sent]
				sent++
				if ma := attrs(ms.Attributes); tr.parent(ms) != s || ma["mcp.method.name"] != "tools/call" || ma["gen_ai.tool.name"] != e.Call.Tool {
					t.Errorf("call %d: MCP span under %s, attributes %v", e.Call.Index, tr.parent(ms).GetName(), ma)
				}
				callSpan[e.Call.Index] = ms
			}
		}
	}
	if turns != len(chats) || calls != len(tools) || sent != len(mcps) {
		t.Errorf("spans: %d chat for %d turns, %d execute_tool for %d calls, %d tools/call for %d sent", len(chats), turns, len(tools), calls, len(mcps), sent)
	}
	if ra["gen_ai.usage.input_tokens"] != in || ra["gen_ai.usage.output_tokens"] != out {
		t.Errorf("run tokens %v/%v, want %d/%d", ra["gen_ai.usage.input_tokens"], ra["gen_ai.usage.output_tokens"], in, out)
	}
	// The HTTP spans, in journal order, under their tool calls.
	var https []*tracepb.Span
	for _, s := range tr.spans {
		if _, ok := attrs(s.Attributes)["http.request.method"]; ok {
			https = append(https, s)
		}
	}
	k := 0
	for i, e := range run.Events {
		if e.Kind != traces.KindHTTP {
			continue
		}
		if k >= len(https) {
			t.Fatalf("HTTP call %d has no span", e.HTTP.Seq)
		}
		s := https[k]
		k++
		a := attrs(s.Attributes)
		if s.Kind != tracepb.Span_SPAN_KIND_CLIENT || a["http.request.method"] != e.HTTP.Method || a["url.path"] != e.HTTP.Path ||
			a["http.response.status_code"] != int64(e.HTTP.Status) || s.StartTimeUnixNano != base+uint64(at[i])*1000 {
			t.Errorf("HTTP call %d: span %s %v", e.HTTP.Seq, s.Name, a)
		}
		want := "invoke_agent bench"
		switch {
		case e.HTTP.Boot:
			want = "initialize"
		case callSpan[e.HTTP.Call] != nil:
			want = callSpan[e.HTTP.Call].Name
		}
		if got := tr.parent(s).GetName(); got != want {
			t.Errorf("HTTP call %d (call %d, boot %v) under %q, want %q", e.HTTP.Seq, e.HTTP.Call, e.HTTP.Boot, got, want)
		}
	}
	if k != len(https) {
		t.Errorf("%d HTTP spans for %d HTTP calls", len(https), k)
	}
}

// TestRecordedRunsDecode: every run of the 0.2.0 release recording (a
// real model, a compared server and the reference server), exported, is
// read back by the protobuf JSON decoder, and its span tree matches it.
func TestRecordedRunsDecode(t *testing.T) {
	s, err := traces.Open(filepath.Join(t.TempDir(), "store"), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	f, err := os.Open("../../docs/benchmark-results-0.2.0.benchpack")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if _, err := s.Import(f, nil); err != nil {
		t.Fatal(err)
	}
	refs, err := s.Refs("")
	if err != nil || len(refs) == 0 {
		t.Fatalf("%d refs, %v", len(refs), err)
	}
	var runs []Run
	for _, r := range refs {
		run, err := s.GetRun(r.Run)
		if err != nil {
			t.Fatal(err)
		}
		runs = append(runs, Run{Ref: r.Name, Run: run, Evaluations: []Evaluation{{Name: "task_success", Value: 0, Label: "fail"}}})
	}
	var a, b bytes.Buffer
	if err := Write(&a, runs, nil); err != nil {
		t.Fatal(err)
	}
	if err := Write(&b, runs, nil); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(a.Bytes(), b.Bytes()) {
		t.Error("two exports of the same runs differ")
	}
	reqs := decode(t, a.Bytes())
	if len(reqs) != len(runs) {
		t.Fatalf("%d lines for %d runs", len(reqs), len(runs))
	}
	for i, r := range runs {
		t.Run(r.Ref, func(t *testing.T) {
			tr := newTree(t, reqs[i])
			checkRun(t, r.Run, tr)
			var evals int
			for _, e := range tr.root.Events {
				if e.Name == "gen_ai.evaluation.result" {
					evals++
					if a := attrs(e.Attributes); a["gen_ai.evaluation.name"] != "task_success" || a["gen_ai.evaluation.score.label"] != "fail" {
						t.Errorf("evaluation %v", a)
					}
				}
			}
			if evals != 1 {
				t.Errorf("%d evaluation events, want 1", evals)
			}
		})
	}
}

// crafted is a run with what the recording above lacks: a boot call, an
// elicitation, an invalid call, a tool error, an egress attempt, a
// request between calls, a retried turn and an answer.
func crafted() *traces.Run {
	raw := func(s string) json.RawMessage { return json.RawMessage(s) }
	run := &traces.Run{Manifest: traces.Manifest{Format: traces.FormatVersion, Mode: traces.ModeRecord,
		StartedAt: time.Date(2026, 12, 2, 10, 0, 0, 0, time.UTC),
		Scenario:  traces.ScenarioRef{ID: "write-001"}, Server: traces.ServerRef{Name: "reference"},
		Model: traces.ModelRef{Provider: "anthropic", Name: "anthropic:claude-x", Seed: 1}, Outcome: traces.OutcomeAnswered,
	}, Events: []traces.Event{
		{Kind: traces.KindInitialize, Initialize: &traces.Initialize{ProtocolVersion: "2025-11-25"}},
		{Kind: traces.KindTools, AtUS: 1000, Tools: &traces.Tools{Tools: raw(`[{"name":"reboot"}]`)}},
		{Kind: traces.KindHTTP, AtUS: 500, HTTP: &traces.HTTP{Seq: 1, Method: "POST", Path: "/as/token.oauth2", Status: 200, Call: -1, Boot: true}},
		{Kind: traces.KindTurn, AtUS: 1100, Turn: &traces.Turn{Index: 0, Usage: traces.Usage{Input: 100, Output: 10, Cached: 90}, LatencyUS: 2000, Attempts: 2,
			Retries:  []traces.Retry{{Attempt: 1, Status: 429, Error: "rate limited", WaitUS: 1000}},
			Request:  raw(`{"messages":[{"content":"reboot ap SECRET-INTENT","role":"user"}],"sampling":{},"system":"be careful"}`),
			Response: raw(`{"stop_reason":"tool_use","tool_calls":[{"arguments":{"ap":"x"},"id":"tc_1","name":"reboot"},{"arguments":{},"id":"","name":"nope"}],"usage":{"input_tokens":100,"output_tokens":10}}`)}},
		// The recorder stores an elicitation as it comes, before the
		// event of the call in flight.
		{Kind: traces.KindElicitation, AtUS: 3400, Elicitation: &traces.Elicitation{Call: 0, Message: "sure?", Action: "accept"}},
		{Kind: traces.KindCall, AtUS: 3200, Call: &traces.Call{Index: 0, Tool: "reboot", Arguments: raw(`{"ap":"x"}`), Result: raw(`{"content":[{"text":"RESULT-TEXT","type":"text"}]}`), IsError: true, LatencyUS: 5000}},
		{Kind: traces.KindHTTP, AtUS: 3300, HTTP: &traces.HTTP{Seq: 2, Method: "POST", Path: "/aps/x/reboot", Status: 503, Class: "destructive", Call: 0, LatencyUS: 100}},
		{Kind: traces.KindEgress, AtUS: 3500, Egress: &traces.Egress{Host: "evil.example:443", Call: 0}},
		{Kind: traces.KindCall, AtUS: 8300, Call: &traces.Call{Index: 1, Tool: "nope", Arguments: raw(`{}`), Invalid: traces.InvalidUnknownTool, IsError: true}},
		{Kind: traces.KindHTTP, AtUS: 8400, HTTP: &traces.HTTP{Seq: 3, Method: "GET", Path: "/between", Status: 200, Call: -1}},
		{Kind: traces.KindAnswer, AtUS: 9000, Answer: &traces.Answer{Text: "ANSWER-TEXT"}},
	}}
	run.Manifest.RunID = traces.ID{0xab, 0xcd, 1, 2, 3}
	return run
}

func TestCraftedRun(t *testing.T) {
	run := crafted()
	evals := []Evaluation{{Name: "task_success", Value: 1, Label: "pass"}, {Name: "param_field_acc", Value: 0.5}}
	secrets := []string{"SECRET-INTENT", "RESULT-TEXT", "ANSWER-TEXT", "be careful"}
	for _, include := range []bool{false, true} {
		t.Run(fmt.Sprintf("include-content=%v", include), func(t *testing.T) {
			var b bytes.Buffer
			if err := Write(&b, []Run{{Ref: "golden/x", Run: run, Evaluations: evals}}, &Options{IncludeContent: include}); err != nil {
				t.Fatal(err)
			}
			for _, s := range secrets {
				if got := strings.Contains(b.String(), s); got != include {
					t.Errorf("content %q in the export: %v, want %v", s, got, include)
				}
			}
			reqs := decode(t, b.Bytes())
			if len(reqs) != 1 {
				t.Fatalf("%d lines", len(reqs))
			}
			tr := newTree(t, reqs[0])
			checkRun(t, run, tr)
			chat := tr.named("chat ")[0]
			ca := attrs(chat.Attributes)
			if chat.Name != "chat claude-x" || ca["gen_ai.provider.name"] != "anthropic" || ca["gen_ai.usage.cache_read.input_tokens"] != int64(90) ||
				!cmp.Equal(ca["gen_ai.response.finish_reasons"], []string{"tool_call"}) || len(chat.Events) != 1 || chat.Events[0].Name != "bench.retry" {
				t.Errorf("chat span %s: %v, events %v", chat.Name, ca, chat.Events)
			}
			tools := tr.named("execute_tool ")
			if ids := []any{attrs(tools[0].Attributes)["gen_ai.tool.call.id"], attrs(tools[1].Attributes)["gen_ai.tool.call.id"]}; !cmp.Equal(ids, []any{"tc_1", "bench_call_1"}) {
				t.Errorf("tool call ids %v, want the model's and the one the agent gave", ids)
			}
			if tools[0].Status.GetCode() != tracepb.Status_STATUS_CODE_ERROR || attrs(tools[0].Attributes)["error.type"] != "tool_error" {
				t.Errorf("the tool error: status %v, %v", tools[0].Status, attrs(tools[0].Attributes))
			}
			if len(tr.named("tools/call ")) != 1 {
				t.Errorf("the invalid call was sent to the server: %d tools/call spans", len(tr.named("tools/call ")))
			}
			// The call lasts until its last request ends; the elicitation is under its MCP request.
			el := tr.named("elicitation/create")
			if len(el) != 1 || tr.parent(el[0]).GetName() != "tools/call reboot" || el[0].Kind != tracepb.Span_SPAN_KIND_SERVER {
				t.Errorf("elicitation spans %v", el)
			}
			if len(tools[0].Events) != 1 || tools[0].Events[0].Name != "bench.egress" {
				t.Errorf("egress not on its tool call: %v", tools[0].Events)
			}
			var got []string
			for _, e := range tr.root.Events {
				a := attrs(e.Attributes)
				got = append(got, fmt.Sprintf("%s %v %v %v", e.Name, a["gen_ai.evaluation.name"], a["gen_ai.evaluation.score.value"], a["gen_ai.evaluation.score.label"]))
			}
			want := []string{"bench.answer <nil> <nil> <nil>", "gen_ai.evaluation.result task_success 1 pass", "gen_ai.evaluation.result param_field_acc 0.5 <nil>"}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("root events (-want +got):\n%s", diff)
			}
			if want := uint64(run.Manifest.StartedAt.Add(9 * time.Millisecond).UnixNano()); tr.root.EndTimeUnixNano != want {
				t.Errorf("run ends at %d, want its last event's time %d", tr.root.EndTimeUnixNano, want)
			}
		})
	}
}
