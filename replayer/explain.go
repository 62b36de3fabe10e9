package replayer

import (
	"bytes"
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	"github.com/mcpbench/bench/llm"
	"github.com/mcpbench/bench/llm/reqkey"
	"github.com/mcpbench/bench/traces"
)

// Components of a request, as Difference.Component names them.
const (
	ComponentSystem     = "system"      // the system prompt
	ComponentSampling   = "sampling"    // temperature, top_p, max_tokens, seed
	ComponentToolChoice = "tool_choice" // the tool choice
	ComponentTool       = "tool"        // one tool definition
	ComponentMessage    = "message"     // one message of the conversation
	ComponentTurn       = "turn"        // the recording has no such turn
	ComponentKey        = "key"         // same request, other key inputs
)

// Changes, as Difference.Change names them.
const (
	Added   = "added"
	Removed = "removed"
	Changed = "changed"
)

// Difference is one component of a request that differs between the
// recording and the live run.
type Difference struct {
	Component string `json:"component"`
	// Name says which one: a tool's name, "messages[3]", a sampling field.
	Name   string `json:"name,omitempty"`
	Change string `json:"change"`
	// Detail explains the change, one line each: a word diff of a text
	// ("description: ... [-old-]{+new+} ..."), JSON-path differences of a
	// schema or a tool result ("$.items[2].name: \"a\" -> \"b\"").
	Detail []string `json:"detail,omitempty"`
}

// String is the difference on one line (details joined by "; ").
func (d Difference) String() string {
	s := d.Component
	if d.Name != "" {
		s += " " + d.Name
	}
	s += " " + d.Change
	if len(d.Detail) > 0 {
		s += ": " + strings.Join(d.Detail, "; ")
	}
	return s
}

// Miss is a turn whose live request differs from the recorded one.
type Miss struct {
	Turn int `json:"turn"`
	// Recorded is recorded turn Turn's key; zero when the recording ended
	// before that turn.
	Recorded traces.ID `json:"recorded_key"`
	// Live is the key of the request the live run built (zero when the
	// loop did not report it).
	Live        traces.ID    `json:"live_key"`
	Differences []Difference `json:"differences"`
}

// Summary is the miss on one line, its differences in order.
func (m Miss) Summary() string {
	parts := make([]string, 0, len(m.Differences))
	for _, d := range m.Differences {
		parts = append(parts, d.String())
	}
	return fmt.Sprintf("turn %d: %s", m.Turn, strings.Join(parts, " | "))
}

// Explain is the miss as a block of text: a heading, then one line per
// difference and one indented line per detail. Reports print the scenario,
// run and turn beside it.
func (m Miss) Explain() string {
	var b strings.Builder
	// No keys here: they include the run index, and the same change seen
	// in several runs should read the same.
	// Nor the turn: reports print it beside the explanation.
	b.WriteString("the request differs from the recording:")
	for _, d := range m.Differences {
		b.WriteString("\n  ")
		b.WriteString(d.Component)
		if d.Name != "" {
			b.WriteString(" " + d.Name)
		}
		b.WriteString(" " + d.Change)
		for _, l := range d.Detail {
			b.WriteString("\n    " + l)
		}
	}
	return b.String()
}

// maxDetail bounds the detail lines of one difference.
const maxDetail = 12

// Explain compares a recorded request with the one a live run built, both
// as the loop sends them, and lists what differs, in request order: system
// prompt, sampling, tool choice, tools (removed, added, changed, by name in
// the order of the recorded then the live list), messages.
func Explain(recorded, live *llm.Request) ([]Difference, error) {
	return ExplainBy(recorded, live, nil)
}

// ExplainBy is Explain under a server profile's normalizer: tool results
// are compared as their keys see them (reqkey.NormalizedBy), so that a
// time the rules replace is no difference.
func ExplainBy(recorded, live *llm.Request, n reqkey.Normalizer) ([]Difference, error) {
	rec, err := reqkey.NormalizedBy(recorded, n)
	if err != nil {
		return nil, fmt.Errorf("recorded request: %w", err)
	}
	cur, err := reqkey.NormalizedBy(live, n)
	if err != nil {
		return nil, fmt.Errorf("live request: %w", err)
	}
	var out []Difference
	if rec.System != cur.System {
		out = append(out, Difference{Component: ComponentSystem, Change: Changed, Detail: []string{WordDiff(rec.System, cur.System)}})
	}
	out = append(out, samplingDiff(rec.Sampling, cur.Sampling)...)
	if rec.ToolChoice != cur.ToolChoice {
		out = append(out, Difference{Component: ComponentToolChoice, Change: Changed,
			Detail: []string{fmt.Sprintf("%s -> %s", choiceString(rec.ToolChoice), choiceString(cur.ToolChoice))}})
	}
	out = append(out, toolsDiff(rec.Tools, cur.Tools)...)
	out = append(out, messagesDiff(rec.Messages, cur.Messages)...)
	return out, nil
}

func choiceString(c llm.ToolChoice) string {
	switch {
	case c.Mode == "":
		return "default"
	case c.Name != "":
		return string(c.Mode) + ":" + c.Name
	}
	return string(c.Mode)
}

func samplingDiff(a, b llm.Sampling) []Difference {
	var out []Difference
	f := func(p *float64) string {
		if p == nil {
			return "unset"
		}
		return fmt.Sprint(*p)
	}
	i := func(p *int64) string {
		if p == nil {
			return "unset"
		}
		return fmt.Sprint(*p)
	}
	add := func(name, x, y string) {
		if x != y {
			out = append(out, Difference{Component: ComponentSampling, Name: name, Change: Changed, Detail: []string{x + " -> " + y}})
		}
	}
	add("temperature", f(a.Temperature), f(b.Temperature))
	add("top_p", f(a.TopP), f(b.TopP))
	add("max_tokens", fmt.Sprint(a.MaxTokens), fmt.Sprint(b.MaxTokens))
	add("seed", i(a.Seed), i(b.Seed))
	return out
}

func toolsDiff(rec, cur []llm.Tool) []Difference {
	byName := func(list []llm.Tool) map[string]llm.Tool {
		m := make(map[string]llm.Tool, len(list))
		for _, t := range list {
			m[t.Name] = t
		}
		return m
	}
	rm, cm := byName(rec), byName(cur)
	var removed, added, changed []Difference
	for _, t := range rec {
		c, ok := cm[t.Name]
		if !ok {
			removed = append(removed, Difference{Component: ComponentTool, Name: t.Name, Change: Removed})
			continue
		}
		var detail []string
		if t.Description != c.Description {
			detail = append(detail, "description: "+WordDiff(t.Description, c.Description))
		}
		if !bytes.Equal(t.InputSchema, c.InputSchema) {
			for _, l := range JSONDiff(t.InputSchema, c.InputSchema) {
				detail = append(detail, "input_schema "+l)
			}
		}
		if len(detail) > 0 {
			changed = append(changed, Difference{Component: ComponentTool, Name: t.Name, Change: Changed, Detail: capLines(detail)})
		}
	}
	for _, t := range cur {
		if _, ok := rm[t.Name]; !ok {
			added = append(added, Difference{Component: ComponentTool, Name: t.Name, Change: Added})
		}
	}
	out := append(append(removed, added...), changed...)
	if len(out) == 0 && !slices.EqualFunc(rec, cur, func(a, b llm.Tool) bool { return a.Name == b.Name }) {
		names := func(l []llm.Tool) string {
			s := make([]string, len(l))
			for i, t := range l {
				s[i] = t.Name
			}
			return strings.Join(s, ",")
		}
		out = append(out, Difference{Component: ComponentTool, Name: "(order)", Change: Changed, Detail: []string{names(rec) + " -> " + names(cur)}})
	}
	return out
}

// messagesDiff reports every message that differs (at most three, then a
// count) and messages only one side has.
func messagesDiff(rec, cur []llm.Message) []Difference {
	var out []Difference
	n := min(len(rec), len(cur))
	differing := 0
	for i := 0; i < n; i++ {
		a, b := rec[i], cur[i]
		detail := messageDetail(a, b)
		if len(detail) == 0 {
			continue
		}
		differing++
		if differing > 3 {
			continue
		}
		out = append(out, Difference{Component: ComponentMessage, Name: messageName(rec, i), Change: Changed, Detail: capLines(detail)})
	}
	if differing > 3 {
		out = append(out, Difference{Component: ComponentMessage, Name: "(more)", Change: Changed,
			Detail: []string{fmt.Sprintf("%d more messages differ", differing-3)}})
	}
	for i := n; i < len(rec); i++ {
		out = append(out, Difference{Component: ComponentMessage, Name: messageName(rec, i), Change: Removed, Detail: []string{abbreviate(messageText(rec[i]), 120)}})
	}
	for i := n; i < len(cur); i++ {
		out = append(out, Difference{Component: ComponentMessage, Name: messageName(cur, i), Change: Added, Detail: []string{abbreviate(messageText(cur[i]), 120)}})
	}
	return out
}

// messageName names message i: its index, its role and, for a tool
// result, the tool whose result it is.
func messageName(list []llm.Message, i int) string {
	m := list[i]
	name := fmt.Sprintf("messages[%d] (%s", i, m.Role)
	if m.Role == llm.RoleTool {
		tool := ""
		for j := i - 1; j >= 0 && tool == ""; j-- {
			for _, c := range list[j].ToolCalls {
				if c.ID == m.ToolCallID {
					tool = c.Name
				}
			}
		}
		name += " result"
		if tool != "" {
			name += " of " + tool
		}
		if m.ToolCallID != "" {
			name += ", " + m.ToolCallID
		}
	}
	return name + ")"
}

func messageText(m llm.Message) string {
	if len(m.ToolCalls) == 0 {
		return m.Content
	}
	var parts []string
	if m.Content != "" {
		parts = append(parts, m.Content)
	}
	for _, c := range m.ToolCalls {
		parts = append(parts, c.Name+string(c.Arguments))
	}
	return strings.Join(parts, " ")
}

func messageDetail(a, b llm.Message) []string {
	var d []string
	if a.Role != b.Role {
		d = append(d, fmt.Sprintf("role: %s -> %s", a.Role, b.Role))
	}
	if a.ToolCallID != b.ToolCallID {
		d = append(d, fmt.Sprintf("tool_call_id: %s -> %s", a.ToolCallID, b.ToolCallID))
	}
	if a.IsError != b.IsError {
		d = append(d, fmt.Sprintf("is_error: %t -> %t", a.IsError, b.IsError))
	}
	if a.Content != b.Content {
		if isJSON(a.Content) && isJSON(b.Content) {
			for _, l := range JSONDiff([]byte(a.Content), []byte(b.Content)) {
				d = append(d, "content "+l)
			}
		} else {
			d = append(d, "content: "+WordDiff(a.Content, b.Content))
		}
	}
	n := min(len(a.ToolCalls), len(b.ToolCalls))
	for i := 0; i < n; i++ {
		x, y := a.ToolCalls[i], b.ToolCalls[i]
		if x.Name != y.Name {
			d = append(d, fmt.Sprintf("tool_calls[%d].name: %s -> %s", i, x.Name, y.Name))
		}
		if !bytes.Equal(x.Arguments, y.Arguments) {
			for _, l := range JSONDiff(x.Arguments, y.Arguments) {
				d = append(d, fmt.Sprintf("tool_calls[%d].arguments %s", i, l))
			}
		}
		if x.InvalidArguments != y.InvalidArguments {
			d = append(d, fmt.Sprintf("tool_calls[%d].invalid_arguments: %s", i, WordDiff(x.InvalidArguments, y.InvalidArguments)))
		}
	}
	for i := n; i < len(a.ToolCalls); i++ {
		d = append(d, fmt.Sprintf("tool_calls[%d] removed: %s", i, a.ToolCalls[i].Name))
	}
	for i := n; i < len(b.ToolCalls); i++ {
		d = append(d, fmt.Sprintf("tool_calls[%d] added: %s", i, b.ToolCalls[i].Name))
	}
	return d
}

func isJSON(s string) bool {
	t := strings.TrimSpace(s)
	return t != "" && (t[0] == '{' || t[0] == '[') && json.Valid([]byte(t))
}

func capLines(lines []string) []string {
	if len(lines) <= maxDetail {
		return lines
	}
	out := slices.Clone(lines[:maxDetail-1])
	return append(out, fmt.Sprintf("... and %d more", len(lines)-(maxDetail-1)))
}

// JSONDiff lists the differences between two JSON values as JSON paths:
// "$.a.b: added V", "$.a[2]: removed V", "$.c: V1 -> V2". Object members
// are visited in sorted key order, arrays index by index, so the output is
// deterministic. A side that is not JSON is compared as text.
func JSONDiff(a, b []byte) []string {
	x, errA := decodeJSON(a)
	y, errB := decodeJSON(b)
	if errA != nil || errB != nil {
		if bytes.Equal(a, b) {
			return nil
		}
		return []string{"$: " + WordDiff(string(a), string(b))}
	}
	var out []string
	jsonDiff("$", x, y, &out)
	return out
}

func decodeJSON(b []byte) (any, error) {
	if len(bytes.TrimSpace(b)) == 0 {
		return nil, nil
	}
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, err
	}
	return v, nil
}

func jsonDiff(path string, a, b any, out *[]string) {
	switch x := a.(type) {
	case map[string]any:
		if y, ok := b.(map[string]any); ok {
			keys := make([]string, 0, len(x)+len(y))
			for k := range x {
				keys = append(keys, k)
			}
			for k := range y {
				if _, ok := x[k]; !ok {
					keys = append(keys, k)
				}
			}
			slices.Sort(keys)
			for _, k := range keys {
				p := path + "." + k
				if !isIdent(k) {
					q, _ := json.Marshal(k)
					p = path + "[" + string(q) + "]"
				}
				va, inA := x[k]
				vb, inB := y[k]
				switch {
				case !inA:
					*out = append(*out, p+": added "+render(vb))
				case !inB:
					*out = append(*out, p+": removed "+render(va))
				default:
					jsonDiff(p, va, vb, out)
				}
			}
			return
		}
	case []any:
		if y, ok := b.([]any); ok {
			n := min(len(x), len(y))
			for i := 0; i < n; i++ {
				jsonDiff(fmt.Sprintf("%s[%d]", path, i), x[i], y[i], out)
			}
			for i := n; i < len(x); i++ {
				*out = append(*out, fmt.Sprintf("%s[%d]: removed %s", path, i, render(x[i])))
			}
			for i := n; i < len(y); i++ {
				*out = append(*out, fmt.Sprintf("%s[%d]: added %s", path, i, render(y[i])))
			}
			return
		}
	case string:
		if y, ok := b.(string); ok {
			if x != y {
				// A long string that changed a little reads best as a word diff.
				if len(x)+len(y) > 120 {
					*out = append(*out, path+": "+WordDiff(x, y))
				} else {
					*out = append(*out, path+": "+render(x)+" -> "+render(y))
				}
			}
			return
		}
	}
	if render(a) != render(b) {
		*out = append(*out, path+": "+render(a)+" -> "+render(b))
	}
}

func isIdent(k string) bool {
	if k == "" {
		return false
	}
	for i, r := range k {
		if !(r == '_' || r == '-' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || i > 0 && r >= '0' && r <= '9') {
			return false
		}
	}
	return true
}

// render writes a JSON value compactly (sorted keys), abbreviated.
func render(v any) string {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return fmt.Sprint(v)
	}
	return abbreviate(strings.TrimSuffix(buf.String(), "\n"), 80)
}

func abbreviate(s string, n int) string {
	r := []rune(s)
	if len(r) <= n {
		return s
	}
	return string(r[:n]) + "…"
}

// maxDiffWords bounds the word diff's quadratic table; longer texts are
// diffed by their common prefix and suffix only.
const maxDiffWords = 1500

// WordDiff shows how text b differs from a, word by word: unchanged runs
// kept (long ones elided), removed words as [-...-], added as {+...+}.
func WordDiff(a, b string) string {
	x, y := strings.Fields(a), strings.Fields(b)
	if slices.Equal(x, y) {
		if a == b {
			return "unchanged"
		}
		return "whitespace only"
	}
	// Trim the common prefix and suffix first: most edits are local.
	p := 0
	for p < len(x) && p < len(y) && x[p] == y[p] {
		p++
	}
	s := 0
	for s < len(x)-p && s < len(y)-p && x[len(x)-1-s] == y[len(y)-1-s] {
		s++
	}
	mx, my := x[p:len(x)-s], y[p:len(y)-s]
	var ops []op
	if len(mx)*len(my) <= maxDiffWords*maxDiffWords/4 && len(mx) <= maxDiffWords && len(my) <= maxDiffWords {
		ops = lcsOps(mx, my)
	} else {
		if len(mx) > 0 {
			ops = append(ops, op{del: mx})
		}
		if len(my) > 0 {
			ops = append(ops, op{ins: my})
		}
	}
	var parts []string
	if p > 0 {
		parts = append(parts, elide(x[:p], true))
	}
	for _, o := range ops {
		switch {
		case o.same != nil:
			parts = append(parts, elide(o.same, false))
		case o.del != nil:
			parts = append(parts, "[-"+abbreviate(strings.Join(o.del, " "), 200)+"-]")
		case o.ins != nil:
			parts = append(parts, "{+"+abbreviate(strings.Join(o.ins, " "), 200)+"+}")
		}
	}
	if s > 0 {
		parts = append(parts, elide(x[len(x)-s:], false))
	}
	return strings.Join(parts, " ")
}

// elide keeps at most three words of an unchanged run next to a change.
func elide(words []string, before bool) string {
	if len(words) <= 6 {
		return strings.Join(words, " ")
	}
	if before {
		return "… " + strings.Join(words[len(words)-3:], " ")
	}
	return strings.Join(words[:3], " ") + " … " + strings.Join(words[len(words)-3:], " ")
}

type op struct{ same, del, ins []string }

// lcsOps is the classic longest-common-subsequence diff of two word lists.
func lcsOps(a, b []string) []op {
	n, m := len(a), len(b)
	t := make([][]int32, n+1)
	for i := range t {
		t[i] = make([]int32, m+1)
	}
	for i := n - 1; i >= 0; i-- {
		for j := m - 1; j >= 0; j-- {
			if a[i] == b[j] {
				t[i][j] = t[i+1][j+1] + 1
			} else {
				t[i][j] = max(t[i+1][j], t[i][j+1])
			}
		}
	}
	var ops []op
	push := func(kind int, w string) {
		if len(ops) > 0 {
			last := &ops[len(ops)-1]
			switch {
			case kind == 0 && last.same != nil:
				last.same = append(last.same, w)
				return
			case kind == 1 && last.del != nil:
				last.del = append(last.del, w)
				return
			case kind == 2 && last.ins != nil:
				last.ins = append(last.ins, w)
				return
			}
		}
		switch kind {
		case 0:
			ops = append(ops, op{same: []string{w}})
		case 1:
			ops = append(ops, op{del: []string{w}})
		default:
			ops = append(ops, op{ins: []string{w}})
		}
	}
	i, j := 0, 0
	for i < n && j < m {
		switch {
		case a[i] == b[j]:
			push(0, a[i])
			i++
			j++
		case t[i+1][j] >= t[i][j+1]:
			push(1, a[i])
			i++
		default:
			push(2, b[j])
			j++
		}
	}
	for ; i < n; i++ {
		push(1, a[i])
	}
	for ; j < m; j++ {
		push(2, b[j])
	}
	return ops
}
