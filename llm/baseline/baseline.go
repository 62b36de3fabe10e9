// Package baseline is bench's offline model: a lexical baseline that costs
// nothing, needs no network and always gives the same answer.
//
// It is a real, if simple, tool user. It ranks the offered tools against
// the intent (the first user message) with BM25 over each tool's name,
// description and parameter names and descriptions; fills arguments from
// the intent (MACs, serials, IPs, quoted strings, site and WLAN names,
// enum values it names, numbers, relative dates resolved against an
// injected clock) and from earlier tool results; calls the best tool, may
// follow with a second when the first result supplies an id the intent
// needs; and then submits a result built from the tool output through the
// harness tool llm.SubmitTool, or answers in text when that tool is not
// offered. When no tool scores above a threshold it calls nothing, so
// negative scenarios mean something. Because it reads only words, it is
// sensitive to tool descriptions, which is what makes it useful in CI.
//
// Its name, "baseline-bm25", says what it is in every report.
package baseline

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"time"
	"unicode"

	"github.com/mcpbench/bench/llm"
)

// Name is the model name in reports.
const Name = "baseline-bm25"

// DefaultThreshold is the score below which no tool is called, in units of
// the idf of a term that only one tool has (that unit grows with the number
// of tools, so the threshold means the same for 3 tools as for 30). At 0.5,
// one query term that few tools share is enough; words every tool uses are
// not.
const DefaultThreshold = 0.5

// Options configure a Model.
type Options struct {
	// Now resolves relative dates ("yesterday", "last week"). Nil leaves
	// them unresolved; bench passes the fake Central's fixed clock.
	Now func() time.Time
	// Threshold is the minimum BM25 score for a call, in the unit of
	// DefaultThreshold. Default DefaultThreshold.
	Threshold float64
	// Cache is shared by the Models of a batch. Default: the Model's own.
	Cache *Cache
}

// Model is the lexical baseline. It is stateless: every decision is derived
// from the request, so replays agree with recordings.
type Model struct {
	now       func() time.Time
	threshold float64
	cache     *Cache // what it derives from tool definitions, memoized
}

var _ llm.Model = (*Model)(nil)

// New returns a baseline model. opts may be nil.
func New(opts *Options) *Model {
	m := &Model{threshold: DefaultThreshold}
	if opts != nil {
		m.now = opts.Now
		m.cache = opts.Cache
		if opts.Threshold > 0 {
			m.threshold = opts.Threshold
		}
	}
	if m.cache == nil {
		m.cache = NewCache()
	}
	return m
}

// Name returns "baseline-bm25".
func (m *Model) Name() string { return Name }

// Local marks the baseline as a model that runs inside bench.
func (m *Model) Local() {}

// DeclineText is the final answer when no tool matches the intent.
const DeclineText = "None of the available tools matches this request, so I did not call any."

// madeCall is a tool call of an earlier turn and its result.
type madeCall struct {
	name    string
	output  string
	isError bool
}

// Generate decides the next step of the conversation in req.
func (m *Model) Generate(ctx context.Context, req *llm.Request) (*llm.Response, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	turn := 0
	var calls []madeCall
	index := map[string]int{}
	for _, msg := range req.Messages {
		switch msg.Role {
		case llm.RoleAssistant:
			turn++
			for _, c := range msg.ToolCalls {
				index[c.ID] = len(calls)
				calls = append(calls, madeCall{name: c.Name})
			}
		case llm.RoleTool:
			if i, ok := index[msg.ToolCallID]; ok {
				calls[i].output, calls[i].isError = msg.Content, msg.IsError
			}
		}
	}
	id := fmt.Sprintf("baseline_%d", turn+1)
	for _, c := range calls {
		if c.name == llm.SubmitTool {
			return &llm.Response{Text: "Result submitted.", StopReason: llm.StopEndTurn}, nil
		}
	}

	var tools []llm.Tool
	for _, t := range req.Tools {
		if t.Name != llm.SubmitTool {
			tools = append(tools, t)
		}
	}
	var now time.Time
	if m.now != nil {
		now = m.now()
	}
	intent := req.Intent()
	f := intentFacts(intent, now)
	ranked := rank(f.query(intent), tools, m.cache)
	threshold := m.threshold * rareTermIDF(len(tools))
	if req.ToolChoice.Mode == llm.ToolChoiceNone {
		return answer(calls), nil // tools are off this turn
	}
	if len(calls) == 0 {
		if len(ranked) == 0 || ranked[0].score < threshold {
			return answer(nil), nil
		}
		first, _ := firstChoice(ranked, f, threshold)
		return callResponse(id, first.name, fill(first, f, nil)), nil
	}

	var outputs []string // newest first: later results are closer to the answer
	called := map[string]bool{}
	for i := len(calls) - 1; i >= 0; i-- {
		called[calls[i].name] = true
		if !calls[i].isError {
			outputs = append(outputs, calls[i].output)
		}
	}
	fields := resultFields(outputs)
	if len(calls) == 1 && !calls[0].isError {
		if next, ok := followUp(ranked, f, fields, called, threshold); ok {
			return callResponse(id, next.name, fill(next, f, fields)), nil
		}
	}
	if submit, ok := req.Tool(llm.SubmitTool); ok {
		return callResponse(id, llm.SubmitTool, buildResult(submit.InputSchema, fields, outputs, f)), nil
	}
	return answer(calls), nil
}

// answer is the final text: the last tool output, or the decline when
// nothing was called.
func answer(calls []madeCall) *llm.Response {
	if len(calls) == 0 {
		return &llm.Response{Text: DeclineText, StopReason: llm.StopEndTurn}
	}
	last := calls[len(calls)-1]
	return &llm.Response{Text: fmt.Sprintf("Result of %s: %s", last.name, llm.Truncate(last.output, 4000)), StopReason: llm.StopEndTurn}
}

// followUpRatio is how close to the best score a second tool must rank to
// be called with an id taken from the first result.
const followUpRatio = 0.5

// candidate is a ranked tool with its parameters.
type candidate struct {
	name  string
	score float64
	props []property
}

func candidateOf(s scored) candidate {
	return candidate{name: s.tool.Name, score: s.score, props: properties(s.tool.InputSchema)}
}

// firstChoice picks the first call: the best tool if the intent fills its
// required parameters; otherwise the best-ranked tool above the threshold
// that the intent can fill, deferring the best one to the second turn (its
// missing id may come from the first result).
func firstChoice(ranked []scored, f facts, threshold float64) (first candidate, deferred *candidate) {
	best := candidateOf(ranked[0])
	if len(missing(best, f, nil)) == 0 {
		return best, nil
	}
	// A helper call only looks something up: among the fillable tools,
	// those named like reads come first, so a lookup never turns into a
	// disconnect because the two take the same MAC.
	var fallback *candidate
	for _, s := range ranked[1:] {
		if s.score < threshold {
			break
		}
		if c := candidateOf(s); len(missing(c, f, nil)) == 0 {
			if readVerb(c.name) {
				return c, &best
			}
			if fallback == nil {
				fallback = &c
			}
		}
	}
	if fallback != nil {
		return *fallback, &best
	}
	return best, nil
}

// readVerb reports whether a tool's name starts with a verb that reads.
func readVerb(name string) bool {
	for _, v := range []string{"get", "list", "find", "search", "show", "lookup", "query", "describe", "read", "fetch"} {
		if p := nameParts(name); p[v] && strings.HasPrefix(strings.ToLower(name), v) {
			return true
		}
	}
	return false
}

// followUp picks a second call after a successful first one: the deferred
// best tool if the result now fills it, or a tool ranking at least followUpRatio of the best
// that needs a value the intent lacks and the result supplies.
func followUp(ranked []scored, f facts, fields []field, called map[string]bool, threshold float64) (candidate, bool) {
	first, deferred := firstChoice(ranked, f, threshold)
	if deferred != nil && called[first.name] && !called[deferred.name] && len(missing(*deferred, f, fields)) == 0 {
		return *deferred, true
	}
	for _, s := range ranked {
		if s.score < threshold || s.score < followUpRatio*ranked[0].score {
			break
		}
		c := candidateOf(s)
		if called[c.name] || len(missing(c, f, nil)) == 0 {
			continue // already done, or needs nothing from the result
		}
		if len(missing(c, f, fields)) == 0 {
			return c, true
		}
	}
	return candidate{}, false
}

func callResponse(id, name string, args map[string]any) *llm.Response {
	b, err := json.Marshal(args) // map keys sorted: deterministic
	if err != nil || len(args) == 0 {
		b = []byte("{}")
	}
	return &llm.Response{
		ToolCalls:  []llm.ToolCall{{ID: id, Name: name, Arguments: b}},
		StopReason: llm.StopToolUse,
	}
}

// missing lists the required parameters of c that neither the intent nor
// the result fields fill.
func missing(c candidate, f facts, fields []field) []string {
	args := fill(c, f, fields)
	var out []string
	for _, p := range c.props {
		if _, ok := args[p.name]; p.required && !ok {
			out = append(out, p.name)
		}
	}
	return out
}

// fill builds the arguments of c: every parameter for which a value is
// found. Required ones without a value are left out, and the server will
// say so: the baseline does not invent values.
func fill(c candidate, f facts, fields []field) map[string]any {
	args := map[string]any{}
	for _, p := range c.props {
		if v, ok := value(p, f, fields); ok {
			args[p.name] = v
		}
	}
	return args
}

// nameParts splits a parameter name into lower-case words: "startTime" and
// "start_time" both give [start time].
func nameParts(name string) map[string]bool {
	out := map[string]bool{}
	var cur []rune
	flush := func() {
		if len(cur) > 0 {
			out[strings.ToLower(string(cur))] = true
			cur = cur[:0]
		}
	}
	rs := []rune(name)
	for i, r := range rs {
		if !unicode.IsLetter(r) && !unicode.IsDigit(r) {
			flush()
			continue
		}
		if unicode.IsUpper(r) && i > 0 && unicode.IsLower(rs[i-1]) {
			flush()
		}
		cur = append(cur, r)
	}
	flush()
	return out
}

func anyPart(parts map[string]bool, words ...string) bool {
	for _, w := range words {
		if parts[w] {
			return true
		}
	}
	return false
}

func first[T any](xs []T) (T, bool) {
	var zero T
	if len(xs) == 0 {
		return zero, false
	}
	return xs[0], true
}

// value finds a value for one parameter.
func value(p property, f facts, fields []field) (any, bool) {
	parts := nameParts(p.name)
	nk := normKey(p.name)
	typ := p.schema.typ()
	fromResults := func(names ...string) (any, bool) {
		for _, n := range names {
			if v, ok := lookup(fields, n, false); ok {
				if s, ok := stringOf(v); ok {
					return s, true
				}
			}
		}
		return nil, false
	}
	def := func() (any, bool) {
		if p.required && len(p.schema.Default) > 0 {
			var v any
			if json.Unmarshal(p.schema.Default, &v) == nil {
				return v, true
			}
		}
		return nil, false
	}

	if len(p.schema.Enum) > 0 {
		for _, e := range p.schema.Enum {
			if s, ok := e.(string); ok && mentions(f.lower, s) {
				return s, true
			}
		}
		if v, ok := fromResults(p.name); ok {
			for _, e := range p.schema.Enum {
				if s, isStr := e.(string); isStr && strings.EqualFold(s, v.(string)) {
					return s, true
				}
			}
		}
		return def()
	}
	switch {
	case strings.Contains(nk, "mac"):
		if v, ok := first(f.macs); ok {
			return v, true
		}
		return fromResults(p.name, "mac")
	case strings.Contains(nk, "serial"):
		if v, ok := first(f.serials); ok {
			return v, true
		}
		return fromResults(p.name, "serial")
	case parts["ip"] || nk == "ipaddress" || nk == "ipv4":
		if v, ok := first(f.ips); ok {
			return v, true
		}
		return fromResults(p.name, "ip")
	case parts["site"], parts["wlan"], parts["ssid"], parts["essid"], parts["group"]:
		kind := "site"
		switch {
		case parts["wlan"], parts["ssid"], parts["essid"]:
			kind = "wlan"
		case parts["group"]:
			kind = "group"
		}
		if parts["id"] {
			if v, ok := fromResults(p.name); ok {
				return v, true
			}
		}
		if v := f.names[kind]; v != "" {
			return v, true
		}
		// A name the results know and the intent mentions.
		for _, fl := range fields {
			if s, ok := fl.value.(string); ok && len(s) > 1 && strings.Contains(fl.key, kind) && strings.Contains(f.lower, strings.ToLower(s)) {
				return s, true
			}
		}
		if v, ok := first(f.quoted); ok {
			return v, true
		}
		return fromResults(p.name, kind)
	}
	if f.span != nil && (typ == "string" || typ == "integer" || typ == "number" || typ == "") {
		switch {
		case anyPart(parts, "start", "from", "since", "after", "begin", "begins", "starting"):
			return formatTime(f.span.start, p), true
		case anyPart(parts, "end", "to", "until", "before", "ending"):
			return formatTime(f.span.end, p), true
		}
	}
	switch typ {
	case "integer", "number":
		if anyPart(parts, "limit", "count", "top", "max", "size", "n", "number", "num", "days", "hours", "minutes", "first", "last") {
			if v, ok := first(f.numbers); ok {
				return v, true
			}
		}
		if v, ok := lookup(fields, p.name, false); ok {
			if n, isNum := v.(json.Number); isNum {
				return n, true
			}
		}
		return def()
	case "boolean":
		return def()
	case "string", "":
		if v, ok := fromResults(p.name); ok && strings.HasSuffix(nk, "id") {
			return v, true
		}
		if anyPart(parts, "query", "search", "q", "filter", "keyword", "term", "name", "command", "cmd") {
			for _, xs := range [][]string{f.macs, f.serials, f.ips, f.quoted} {
				if v, ok := first(xs); ok {
					return v, true
				}
			}
		}
		if v, ok := fromResults(p.name); ok {
			return v, true
		}
	}
	return def()
}

// buildResult fills the result schema from tool outputs (newest first):
// each property from the field of the same name, arrays from the first list
// found, counts from a list's length. Properties without a value are left
// out; the baseline does not make answers up.
func buildResult(schema json.RawMessage, fields []field, outputs []string, f facts) map[string]any {
	out := map[string]any{}
	for _, p := range properties(schema) {
		if v, ok := resultValue(p, fields, outputs, f); ok {
			out[p.name] = v
		}
	}
	return out
}

func resultValue(p property, fields []field, outputs []string, f facts) (any, bool) {
	parts := nameParts(p.name)
	firstArray := func() ([]any, bool) {
		for _, fl := range fields {
			if a, ok := fl.value.([]any); ok {
				return a, true
			}
		}
		for _, o := range outputs { // a bare top-level list
			if v, ok := parseJSON(o); ok {
				if a, ok := v.([]any); ok {
					return a, true
				}
			}
		}
		return nil, false
	}
	switch p.schema.typ() {
	case "array":
		v, ok := lookup(fields, p.name, true)
		if !ok {
			if v, ok = firstArray(); !ok {
				return nil, false
			}
		}
		return project(v.([]any), p.schema.Items), true
	case "integer", "number":
		if v, ok := lookup(fields, p.name, false); ok {
			if n, isNum := v.(json.Number); isNum {
				return n, true
			}
		}
		if anyPart(parts, "count", "total", "num", "number") {
			if a, ok := firstArray(); ok {
				return len(a), true
			}
		}
		return nil, false
	case "boolean":
		if v, ok := lookup(fields, p.name, false); ok {
			if b, isBool := v.(bool); isBool {
				return b, true
			}
		}
		return nil, false
	case "object":
		for _, o := range outputs {
			if v, ok := parseJSON(o); ok {
				if obj, isObj := v.(map[string]any); isObj {
					return obj, true
				}
			}
		}
		return nil, false
	}
	v, ok := lookup(fields, p.name, false)
	s, isStr := stringOf(v)
	if len(p.schema.Enum) > 0 {
		for _, e := range p.schema.Enum {
			if es, ok := e.(string); ok && ((isStr && strings.EqualFold(es, s)) || (!isStr && mentions(f.lower, es))) {
				return es, true
			}
		}
		return nil, false
	}
	if ok && isStr {
		return s, true
	}
	return nil, false
}

// project keeps, in each object of list, the keys that the item schema
// names (matched like parameters), renamed to the schema's spelling.
func project(list []any, items *propSchema) []any {
	if items == nil || len(items.Properties) == 0 {
		return list
	}
	out := make([]any, 0, len(list))
	for _, e := range list {
		obj, ok := e.(map[string]any)
		if !ok {
			out = append(out, e)
			continue
		}
		var fields []field
		for k, v := range obj {
			fields = append(fields, field{normKey(k), v})
		}
		// Keys of one object are unique once normalised in practice; sort
		// for a deterministic pick when they are not.
		sortFields(fields)
		proj := map[string]any{}
		for name := range items.Properties {
			wantArr := items.Properties[name].typ() == "array"
			if v, ok := lookup(fields, name, wantArr); ok {
				proj[name] = v
			}
		}
		if len(proj) == 0 {
			out = append(out, e)
		} else {
			out = append(out, proj)
		}
	}
	return out
}
