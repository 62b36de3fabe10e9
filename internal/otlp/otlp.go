// Package otlp writes runs as OpenTelemetry traces in the OTLP JSON file
// format, following the OpenTelemetry GenAI and MCP semantic conventions
// (open-telemetry/semantic-conventions-genai, docs/gen-ai).
//
// A run is one trace. Its spans are built with the OpenTelemetry Go SDK
// (sdk/trace, with explicit timestamps and an ID generator derived from
// the run ID) and converted to the OTLP protobuf types; the OpenTelemetry
// and protobuf types stay inside this package. The spans of a run:
//
//	invoke_agent bench                 INTERNAL  the run; evaluation events; the answer
//	├── initialize                     CLIENT    MCP handshake (boot HTTP calls under it)
//	│   └── GET                        CLIENT    the fake Central's HTTP calls
//	├── tools/list                     CLIENT    the server's tool list
//	├── chat {model}                   CLIENT    one model turn: tokens, finish reason
//	└── execute_tool {tool}            INTERNAL  one tool call the model asked for
//	    └── tools/call {tool}          CLIENT    the MCP request (none for calls bench refused)
//	        └── GET                    CLIENT    the HTTP calls the tool call made
//
// Message contents (prompts, responses, tool arguments and results, the
// answer) are written as SHA-256 hashes (bench.*.sha256 attributes) unless
// Options.IncludeContent is set.
//
// The same runs give the same bytes: times come from the run's recorded
// start (traces.Manifest.StartedAt) and event times, trace and span IDs
// from its run ID, and the JSON is encoded with sorted keys.
package otlp

import (
	"context"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"slices"
	"strconv"
	"strings"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/trace"

	"github.com/mcpbench/bench/llm"
	"github.com/mcpbench/bench/traces"
)

// Run is one run to export: its ref, the run and the scores of it that go
// into the trace as evaluation events (none when it was not scored).
type Run struct {
	Ref         string
	Run         *traces.Run
	Evaluations []Evaluation
}

// Evaluation is one score of a run, written as a gen_ai.evaluation.result
// event on the run's agent span.
type Evaluation struct {
	Name        string  // gen_ai.evaluation.name: the metric (task_success)
	Value       float64 // gen_ai.evaluation.score.value
	Label       string  // gen_ai.evaluation.score.label: pass, fail, or empty
	Explanation string  // gen_ai.evaluation.explanation, or empty
}

// Options says what goes into the export. A nil *Options is the zero
// value: contents hashed.
type Options struct {
	// IncludeContent writes the messages, tool arguments and results and
	// the answer themselves (gen_ai.input.messages, gen_ai.tool.call.arguments,
	// ...) instead of their SHA-256 hashes. Default false: an export can
	// then be shared without what the server answered.
	IncludeContent bool
}

// ScopeName is the instrumentation scope of every span.
const ScopeName = "github.com/mcpbench/bench"

// Write writes runs to w in the OTLP JSON file format, as the
// OpenTelemetry Collector's file exporter writes it: one
// ExportTraceServiceRequest (a TracesData) per line, here one per run, in
// the order given.
func Write(w io.Writer, runs []Run, opts *Options) error {
	var o Options
	if opts != nil {
		o = *opts
	}
	for _, r := range runs {
		spans, err := build(r, &o)
		if err != nil {
			return fmt.Errorf("run %s (%s): %w", r.Run.Manifest.RunID.Short(), r.Ref, err)
		}
		line, err := encode(r, spans)
		if err != nil {
			return fmt.Errorf("run %s (%s): %w", r.Run.Manifest.RunID.Short(), r.Ref, err)
		}
		if _, err := w.Write(append(line, '\n')); err != nil {
			return err
		}
	}
	return nil
}

// TraceID is the trace ID of a run: the first 16 bytes of its run ID.
func TraceID(id traces.ID) trace.TraceID {
	var t trace.TraceID
	copy(t[:], id[:])
	return t
}

// ids derives a run's span IDs from its run ID and the order its spans are
// started in, which is the order of its events: the same run, the same IDs.
type ids struct {
	trace trace.TraceID
	run   traces.ID
	n     uint64
	order map[trace.SpanID]int // the order each span was started in
}

func (g *ids) NewIDs(ctx context.Context) (trace.TraceID, trace.SpanID) {
	return g.trace, g.NewSpanID(ctx, g.trace)
}

func (g *ids) NewSpanID(context.Context, trace.TraceID) trace.SpanID {
	for {
		var b [8]byte
		binary.BigEndian.PutUint64(b[:], g.n)
		g.n++
		sum := sha256.Sum256(append(append([]byte("bench span "), g.run[:]...), b[:]...))
		var s trace.SpanID
		copy(s[:], sum[:])
		if _, dup := g.order[s]; !dup && s.IsValid() {
			g.order[s] = len(g.order)
			return s
		}
	}
}

// collector is an in-memory span exporter: the spans a run's provider
// ended, in the order they ended.
type collector struct{ spans []sdktrace.ReadOnlySpan }

func (c *collector) ExportSpans(_ context.Context, s []sdktrace.ReadOnlySpan) error {
	c.spans = append(c.spans, s...)
	return nil
}

func (c *collector) Shutdown(context.Context) error { return nil }

// built is a run's spans, with the order each was started in.
type built struct {
	spans []sdktrace.ReadOnlySpan
	order map[trace.SpanID]int
}

// build makes the spans of one run with the SDK.
func build(r Run, o *Options) (*built, error) {
	run := r.Run
	m := run.Manifest
	gen := &ids{trace: TraceID(m.RunID), run: m.RunID, order: map[trace.SpanID]int{}}
	col := &collector{}
	unlimited := sdktrace.SpanLimits{AttributeValueLengthLimit: -1, AttributeCountLimit: -1, EventCountLimit: -1,
		LinkCountLimit: -1, AttributePerEventCountLimit: -1, AttributePerLinkCountLimit: -1}
	tp := sdktrace.NewTracerProvider(sdktrace.WithIDGenerator(gen), sdktrace.WithSyncer(col),
		sdktrace.WithSampler(sdktrace.AlwaysSample()), sdktrace.WithRawSpanLimits(unlimited))
	defer tp.Shutdown(context.Background())
	b := &builder{tr: tp.Tracer(ScopeName), o: o, run: run,
		base: m.StartedAt.UTC(), calls: map[int]*callSpans{}}
	if err := b.build(r); err != nil {
		return nil, err
	}
	return &built{spans: col.spans, order: gen.order}, nil
}

// elicit is an elicitation and its time.
type elicit struct {
	*traces.Elicitation
	at time.Time
}

// callSpans are a tool call's spans: the tool call and its MCP request.
type callSpans struct {
	tool, mcp trace.Span
	ctx       context.Context // where its HTTP calls go
	end       time.Time
}

type builder struct {
	tr   trace.Tracer
	o    *Options
	run  *traces.Run
	base time.Time

	root    trace.Span
	rootCtx context.Context
	initCtx context.Context // boot HTTP calls go under the handshake
	calls   map[int]*callSpans
	end     time.Time // the latest end of any span
}

func (b *builder) at(us int64) time.Time { return b.base.Add(time.Duration(us) * time.Microsecond) }

func (b *builder) seen(t time.Time) {
	if t.After(b.end) {
		b.end = t
	}
}

func (b *builder) build(r Run) error {
	run := r.Run
	m := run.Manifest
	at, _ := run.Times()
	b.end = b.base
	provider := providerName(m.Model.Provider)
	// A model's name in bench is provider:model for the live providers.
	model := strings.TrimPrefix(m.Model.Name, m.Model.Provider+":")
	rootAttrs := []attribute.KeyValue{
		attribute.String("gen_ai.operation.name", "invoke_agent"),
		attribute.String("gen_ai.agent.name", "bench"),
		attribute.String("gen_ai.provider.name", provider),
		attribute.String("gen_ai.request.model", model),
		attribute.String("gen_ai.conversation.id", m.RunID.String()),
		attribute.String("bench.run.id", m.RunID.String()),
		attribute.String("bench.ref", r.Ref),
		attribute.String("bench.mode", string(m.Mode)),
		attribute.String("bench.scenario.id", m.Scenario.ID),
		attribute.String("bench.server.name", m.Server.Name),
		attribute.String("bench.fixture", m.Fixture.Name),
		attribute.Int("bench.run.index", m.RunIndex),
		attribute.String("bench.outcome", string(m.Outcome)),
		attribute.String("bench.harness", m.Harness),
	}
	rootAttrs = append(rootAttrs, sampling(m.Model)...)
	if m.Suite != "" {
		rootAttrs = append(rootAttrs, attribute.String("bench.suite", m.Suite))
	}
	if m.Server.SHA != "" {
		rootAttrs = append(rootAttrs, attribute.String("bench.server.sha", m.Server.SHA))
	}
	if m.Replays != nil {
		rootAttrs = append(rootAttrs, attribute.String("bench.replays", m.Replays.String()))
	}
	b.rootCtx, b.root = b.tr.Start(context.Background(), "invoke_agent bench", trace.WithSpanKind(trace.SpanKindInternal),
		trace.WithTimestamp(b.base), trace.WithAttributes(rootAttrs...))
	b.initCtx = b.rootCtx
	var initSpan trace.Span
	var initStart time.Time
	var protocol string
	var toolIDs []string // the model's ids of the last turn's tool calls
	first, calls := 0, 0 // the index of the last turn's first call; calls so far
	var input, output int
	var elicits []elicit
	for i := range run.Events {
		e := &run.Events[i]
		t := b.at(at[i])
		switch e.Kind {
		case traces.KindInitialize:
			protocol = e.Initialize.ProtocolVersion
			initStart = t
			b.initCtx, initSpan = b.tr.Start(b.rootCtx, "initialize", trace.WithSpanKind(trace.SpanKindClient), trace.WithTimestamp(t),
				trace.WithAttributes(attribute.String("mcp.method.name", "initialize"), attribute.String("mcp.protocol.version", protocol)))
		case traces.KindTools:
			if initSpan != nil {
				// The handshake lasts until the tool list is asked for.
				initSpan.End(trace.WithTimestamp(maxTime(t, initStart)))
				b.seen(t)
				initSpan = nil
			}
			var tools []json.RawMessage
			json.Unmarshal(e.Tools.Tools, &tools)
			_, s := b.tr.Start(b.rootCtx, "tools/list", trace.WithSpanKind(trace.SpanKindClient), trace.WithTimestamp(t),
				trace.WithAttributes(attribute.String("mcp.method.name", "tools/list"), attribute.String("mcp.protocol.version", protocol),
					attribute.Int("bench.tools.count", len(tools)), attribute.Int("bench.tools.bytes", len(e.Tools.Tools))))
			s.End(trace.WithTimestamp(t))
			b.seen(t)
		case traces.KindTurn:
			input += e.Turn.Usage.Input
			output += e.Turn.Usage.Output
			toolIDs = b.turn(e.Turn, t, provider, model, calls)
			first = calls
		case traces.KindCall:
			id := ""
			if k := e.Call.Index - first; k >= 0 && k < len(toolIDs) {
				id = toolIDs[k]
			}
			calls++
			b.call(e.Call, t, id, protocol)
		case traces.KindHTTP:
			b.http(e.HTTP, t)
		case traces.KindElicitation:
			// Recorded while its call is in flight, before the call's
			// event: placed under it once the calls are known.
			elicits = append(elicits, elicit{e.Elicitation, t})
		case traces.KindEgress:
			s := b.root
			if c := b.calls[e.Egress.Call]; c != nil {
				s = c.tool
			}
			s.AddEvent("bench.egress", trace.WithTimestamp(t), trace.WithAttributes(attribute.String("server.address", e.Egress.Host),
				attribute.String("bench.egress.outcome", "blocked")))
		case traces.KindAnswer:
			attrs := []attribute.KeyValue{}
			if len(e.Answer.Result) > 0 {
				attrs = append(attrs, b.content("bench.answer.result", string(e.Answer.Result))...)
			}
			if e.Answer.Text != "" {
				attrs = append(attrs, b.content("bench.answer.text", e.Answer.Text)...)
			}
			b.root.AddEvent("bench.answer", trace.WithTimestamp(t), trace.WithAttributes(attrs...))
			b.seen(t)
		case traces.KindError:
			b.root.AddEvent("bench.error", trace.WithTimestamp(t), trace.WithAttributes(
				attribute.String("error.type", string(e.Error.Kind)), attribute.String("bench.error.message", e.Error.Message)))
			b.seen(t)
		}
	}
	if initSpan != nil {
		initSpan.End(trace.WithTimestamp(maxTime(b.end, initStart)))
	}
	for _, el := range elicits {
		parent := b.rootCtx
		if c := b.calls[el.Call]; c != nil {
			parent = c.ctx
		}
		_, s := b.tr.Start(parent, "elicitation/create", trace.WithSpanKind(trace.SpanKindServer), trace.WithTimestamp(el.at),
			trace.WithAttributes(attribute.String("mcp.method.name", "elicitation/create"), attribute.String("bench.elicitation.action", el.Action)))
		s.End(trace.WithTimestamp(el.at))
	}
	for _, idx := range sortedCalls(b.calls) {
		c := b.calls[idx]
		if c.mcp != nil {
			c.mcp.End(trace.WithTimestamp(c.end))
		}
		c.tool.End(trace.WithTimestamp(c.end))
	}
	b.root.SetAttributes(attribute.Int("gen_ai.usage.input_tokens", input), attribute.Int("gen_ai.usage.output_tokens", output))
	for _, ev := range r.Evaluations {
		attrs := []attribute.KeyValue{attribute.String("gen_ai.evaluation.name", ev.Name), attribute.Float64("gen_ai.evaluation.score.value", ev.Value)}
		if ev.Label != "" {
			attrs = append(attrs, attribute.String("gen_ai.evaluation.score.label", ev.Label))
		}
		if ev.Explanation != "" {
			attrs = append(attrs, attribute.String("gen_ai.evaluation.explanation", ev.Explanation))
		}
		b.root.AddEvent("gen_ai.evaluation.result", trace.WithTimestamp(b.end), trace.WithAttributes(attrs...))
	}
	if m.Outcome == traces.OutcomeError || m.Outcome == traces.OutcomeStale {
		kind := string(run.FirstError())
		if kind == "" {
			kind = string(m.Outcome)
		}
		b.root.SetAttributes(attribute.String("error.type", kind))
		b.root.SetStatus(codes.Error, "the run ended "+string(m.Outcome))
	}
	b.root.End(trace.WithTimestamp(b.end))
	return nil
}

// turn adds a model turn's chat span and returns the ids of the tool calls
// it asked for, as the agent loop gave them to the calls (the model's, or
// bench_call_N where it gave none).
func (b *builder) turn(t *traces.Turn, start time.Time, provider, model string, calls int) []string {
	end := start.Add(time.Duration(t.LatencyUS) * time.Microsecond)
	var resp llm.Response
	json.Unmarshal(t.Response, &resp)
	attrs := []attribute.KeyValue{
		attribute.String("gen_ai.operation.name", "chat"),
		attribute.String("gen_ai.provider.name", provider),
		attribute.String("gen_ai.request.model", model),
		attribute.Int("gen_ai.usage.input_tokens", t.Usage.Input),
		attribute.Int("gen_ai.usage.output_tokens", t.Usage.Output),
		attribute.Int("bench.turn.index", t.Index),
		attribute.String("bench.turn.key", t.Key.String()),
	}
	attrs = append(attrs, sampling(b.run.Manifest.Model)...)
	if t.Usage.Cached > 0 {
		attrs = append(attrs, attribute.Int("gen_ai.usage.cache_read.input_tokens", t.Usage.Cached))
	}
	if t.Usage.Estimated {
		attrs = append(attrs, attribute.Bool("bench.usage.estimated", true))
	}
	if resp.StopReason != "" {
		attrs = append(attrs, attribute.StringSlice("gen_ai.response.finish_reasons", []string{finishReason(resp.StopReason)}))
	}
	if resp.Model != "" {
		attrs = append(attrs, attribute.String("gen_ai.response.model", resp.Model))
	}
	if t.Attempts > 1 {
		attrs = append(attrs, attribute.Int("bench.turn.attempts", t.Attempts))
	}
	if b.o.IncludeContent {
		attrs = append(attrs, inputMessages(t.Request)...)
		attrs = append(attrs, attribute.String("gen_ai.output.messages", outputMessages(&resp)))
	} else {
		attrs = append(attrs, attribute.String("bench.request.sha256", sha(string(t.Request))),
			attribute.String("bench.response.sha256", sha(string(t.Response))))
	}
	_, s := b.tr.Start(b.rootCtx, "chat "+model, trace.WithSpanKind(trace.SpanKindClient), trace.WithTimestamp(start), trace.WithAttributes(attrs...))
	for _, r := range t.Retries {
		ra := []attribute.KeyValue{attribute.Int("bench.retry.attempt", r.Attempt), attribute.Int64("bench.retry.wait_us", r.WaitUS),
			attribute.String("bench.retry.error", r.Error)}
		if r.Status != 0 {
			ra = append(ra, attribute.Int("http.response.status_code", r.Status))
		}
		s.AddEvent("bench.retry", trace.WithTimestamp(start), trace.WithAttributes(ra...))
	}
	if resp.StopReason == llm.StopRefusal {
		s.SetStatus(codes.Error, "the model refused")
	}
	s.End(trace.WithTimestamp(end))
	b.seen(end)
	ids := make([]string, len(resp.ToolCalls))
	for i, c := range resp.ToolCalls {
		ids[i] = c.ID
		if ids[i] == "" {
			ids[i] = "bench_call_" + strconv.Itoa(calls+i)
		}
	}
	return ids
}

// call adds a tool call's execute_tool span and, for a call the server
// was sent, its MCP tools/call span.
func (b *builder) call(c *traces.Call, start time.Time, id, protocol string) {
	end := start.Add(time.Duration(c.LatencyUS) * time.Microsecond)
	attrs := []attribute.KeyValue{
		attribute.String("gen_ai.operation.name", "execute_tool"),
		attribute.String("gen_ai.tool.name", c.Tool),
		attribute.String("gen_ai.tool.type", "function"),
		attribute.Int("bench.call.index", c.Index),
	}
	if id != "" {
		attrs = append(attrs, attribute.String("gen_ai.tool.call.id", id))
	}
	attrs = append(attrs, b.content("gen_ai.tool.call.arguments", string(c.Arguments))...)
	if len(c.Result) > 0 {
		attrs = append(attrs, b.content("gen_ai.tool.call.result", string(c.Result))...)
	}
	if c.Invalid != "" {
		attrs = append(attrs, attribute.String("bench.call.invalid", c.Invalid), attribute.String("error.type", "invalid_call"))
	} else if c.IsError {
		attrs = append(attrs, attribute.String("error.type", "tool_error"))
	}
	ctx, tool := b.tr.Start(b.rootCtx, "execute_tool "+c.Tool, trace.WithSpanKind(trace.SpanKindInternal), trace.WithTimestamp(start), trace.WithAttributes(attrs...))
	cs := &callSpans{tool: tool, ctx: ctx, end: end}
	if c.Invalid != "" || c.IsError {
		tool.SetStatus(codes.Error, orWord(c.Invalid, "tool_error"))
	}
	// Calls bench refused, and submit_result, which bench answers, were
	// never sent to the server.
	if c.Invalid == "" && c.Tool != llm.SubmitTool {
		ma := []attribute.KeyValue{
			attribute.String("mcp.method.name", "tools/call"),
			attribute.String("gen_ai.operation.name", "execute_tool"),
			attribute.String("gen_ai.tool.name", c.Tool),
			attribute.String("mcp.protocol.version", protocol),
		}
		if c.IsError {
			ma = append(ma, attribute.String("error.type", "tool_error"))
		}
		cs.ctx, cs.mcp = b.tr.Start(ctx, "tools/call "+c.Tool, trace.WithSpanKind(trace.SpanKindClient), trace.WithTimestamp(start), trace.WithAttributes(ma...))
		if c.IsError {
			cs.mcp.SetStatus(codes.Error, "tool_error")
		}
	}
	b.calls[c.Index] = cs
	b.seen(end)
}

// http adds one request the fake Central served as an HTTP CLIENT span
// under the tool call that made it (the handshake for boot calls, the run
// for calls made between tool calls).
func (b *builder) http(h *traces.HTTP, start time.Time) {
	end := start.Add(time.Duration(h.LatencyUS) * time.Microsecond)
	parent := b.rootCtx
	c := b.calls[h.Call]
	switch {
	case h.Boot:
		parent = b.initCtx
	case c != nil:
		parent = c.ctx
		// A call lasts as long as its requests do.
		c.end = maxTime(c.end, end)
	}
	attrs := []attribute.KeyValue{
		attribute.String("http.request.method", h.Method),
		attribute.String("url.path", h.Path),
		attribute.Int("http.response.status_code", h.Status),
		attribute.String("bench.http.class", h.Class),
		attribute.Int("bench.http.seq", h.Seq),
	}
	if h.Query != "" {
		attrs = append(attrs, attribute.String("url.query", h.Query))
	}
	if h.Boot {
		attrs = append(attrs, attribute.Bool("bench.http.boot", true))
	}
	if h.Status >= 400 {
		attrs = append(attrs, attribute.String("error.type", strconv.Itoa(h.Status)))
	}
	_, s := b.tr.Start(parent, h.Method, trace.WithSpanKind(trace.SpanKindClient), trace.WithTimestamp(start), trace.WithAttributes(attrs...))
	if h.Status >= 400 {
		s.SetStatus(codes.Error, "")
	}
	s.End(trace.WithTimestamp(end))
	b.seen(end)
}

// content is a message's content as an attribute: itself with
// IncludeContent, else its SHA-256 under key.sha256 (bench.* namespace for
// the gen_ai keys, which hold contents).
func (b *builder) content(key, value string) []attribute.KeyValue {
	if b.o.IncludeContent {
		return []attribute.KeyValue{attribute.String(key, value)}
	}
	if rest, ok := strings.CutPrefix(key, "gen_ai."); ok {
		key = "bench." + rest
	}
	return []attribute.KeyValue{attribute.String(key+".sha256", sha(value))}
}

func sha(s string) string {
	sum := sha256.Sum256([]byte(s))
	return hex.EncodeToString(sum[:])
}

// sampling are the model's request parameters that the run recorded.
func sampling(m traces.ModelRef) []attribute.KeyValue {
	attrs := []attribute.KeyValue{attribute.Int64("gen_ai.request.seed", m.Seed)}
	if m.Temperature != nil {
		attrs = append(attrs, attribute.Float64("gen_ai.request.temperature", *m.Temperature))
	}
	if m.TopP != nil {
		attrs = append(attrs, attribute.Float64("gen_ai.request.top_p", *m.TopP))
	}
	if m.MaxTokens > 0 {
		attrs = append(attrs, attribute.Int("gen_ai.request.max_tokens", m.MaxTokens))
	}
	return attrs
}

// providerName is gen_ai.provider.name: the convention's word for the
// providers it knows, bench.<name> for bench's offline models.
func providerName(p string) string {
	switch p {
	case "openai", "anthropic":
		return p
	case "":
		return "bench.unknown"
	}
	return "bench." + p
}

// finishReason maps bench's stop reasons to the convention's words.
func finishReason(s llm.StopReason) string {
	switch s {
	case llm.StopEndTurn:
		return "stop"
	case llm.StopToolUse:
		return "tool_call"
	case llm.StopMaxTokens:
		return "length"
	case llm.StopRefusal:
		return "content_filter"
	}
	return string(s)
}

func orWord(s, or string) string {
	if s == "" {
		return or
	}
	return s
}

func maxTime(a, b time.Time) time.Time {
	if b.After(a) {
		return b
	}
	return a
}

func sortedCalls(m map[int]*callSpans) []int { return slices.Sorted(maps.Keys(m)) }
