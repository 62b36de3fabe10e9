// Package reqkey computes request keys: the names under which a trace keeps
// its model turns and on which replay matches the turn a live run asks for.
// It also gives the form in which a trace stores a model request. The
// recorder's agent loop (recording) and the replayer's Model (matching)
// both compute keys here, with one function, [Encoder.Encode].
//
// # The key
//
// A request key is the SHA-256 of the canonical JSON (the rules of package
// traces: RFC 8785 with exact 64-bit integers) of
//
//	{"encoding":V,"model":M,"provider":P,"request":R,"run_index":N,"scenario":S}
//
// V is [Version]; P and M are the provider and the name of the model that
// was recorded (in a replay, the recorded model, not the replaying one); S
// and N are the scenario id and the run index, so that repeats of a
// scenario never collapse into one answer; R is the request as the trace
// stores it (below) with one normalisation: tool-call ids are volatile
// (providers mint random ones such as "call_8fK2..." or "toolu_01..."), so
// they are renamed "call_1", "call_2", ... in order of first appearance,
// walking the messages in order and, within an assistant message, its tool
// calls in order; tool-result messages are renamed through the same table,
// and an id seen only in a tool result gets the next number too. Text
// (system prompt, message content, descriptions) is kept byte for byte: the
// fake Central has a fixed clock and seeded ids, so tool results are stable.
//
// One exception, when the caller sets a [Normalizer] (the server profile's
// normalisation rules, for a server that prints the wall-clock time): the
// content of each tool-result message is what the normalizer makes of it,
// in the key and in the trace form alike; the model itself is sent the
// original. With no normalizer, or one that changes nothing, keys are as
// above.
//
// # The trace form of a request
//
// A trace stores a request as the canonical JSON of its encoding/json
// encoding (llm.Request's field tags), so embedded JSON (tool arguments,
// input schemas) is canonical too: object keys sorted, numbers in their
// canonical spelling.
//
// # Cost
//
// A loop's requests only grow: each turn appends messages to the last. An
// [Encoder] encodes each message once and each tool definition once per
// [ToolCache] (the tool list is most of a request's bytes, and the same on
// every turn of every run of a server), then assembles requests from the
// pieces and hashes them without building the key document.
package reqkey

import (
	"bytes"
	"crypto/sha256"
	"fmt"
	"hash"
	"slices"
	"strconv"
	"sync"
	"unsafe"

	"github.com/mcpbench/bench/llm"
	"github.com/mcpbench/bench/traces"
)

// Version names the rules above. It is part of every key: changing a rule
// changes it, so keys made under other rules never match by accident.
const Version = "llm-request/1"

// Scope is what a key holds beside the request.
type Scope struct {
	Provider string // the recorded model's provider: "openai", "baseline"
	Model    string // the recorded model's name: "openai:gpt-4.1"
	Scenario string
	RunIndex int
}

// Key returns the key of req in scope: Encode's key, for a request on its
// own.
func Key(scope Scope, req *llm.Request) (traces.ID, error) {
	_, key, err := NewEncoder(scope, nil).encode(req, false)
	return key, err
}

// Normalizer rewrites the content of a tool-result message as the key and
// the trace form see it, and returns what it replaced, in order. It must be
// a pure function of its input: the recorder and the replayer call it on
// the same text and must agree.
type Normalizer func(content string) (string, []traces.Normalized)

// Encoder computes the keys and trace forms of the requests of one
// conversation, turn after turn. It is not safe for concurrent use.
type Encoder struct {
	head  []byte // the key document up to its request: encoding, model, provider
	tail  []byte // the key document after its request: run_index, scenario
	tools *ToolCache
	norm  Normalizer

	// The messages encoded so far, as they were, with their encodings.
	msgs  []llm.Message
	trace [][]byte              // the trace form of each
	key   [][]byte              // the key form of each (tool-call ids renamed)
	orig  [][]traces.Normalized // what the normalizer replaced in each
	ids   map[string]string

	// The members after "messages" of the last request, and what they
	// were encoded from.
	last    *llm.Request
	members []byte

	// gen counts the changes of msgs; memo is the last request encoded,
	// by what it was encoded from (see encode).
	gen  uint64
	memo memo

	h hash.Hash
}

// memo is an encoded request: its key and trace form, and the inputs they
// came from: the messages as of a generation of the Encoder's, the members
// and the tool encodings (compared by identity: both are kept unchanged
// once made).
type memo struct {
	ok      bool
	gen     uint64
	nilMsgs bool
	members []byte
	tools   [][]byte
	key     traces.ID
	trace   []byte // nil until a trace form is asked for
}

// NewEncoder returns an Encoder for requests in scope. tools may be nil
// (the Encoder then keeps its own).
func NewEncoder(scope Scope, tools *ToolCache) *Encoder {
	if tools == nil {
		tools = NewToolCache()
	}
	str := func(s string) []byte { b, _ := traces.Marshal(s); return b }
	head := []byte(`{"encoding":` + string(str(Version)) + `,"model":` + string(str(scope.Model)) +
		`,"provider":` + string(str(scope.Provider)) + `,"request":`)
	tail := []byte(`,"run_index":` + strconv.Itoa(scope.RunIndex) + `,"scenario":` + string(str(scope.Scenario)) + `}`)
	return &Encoder{head: head, tail: tail, tools: tools, h: sha256.New()}
}

// SetNormalizer makes the Encoder normalise tool-result content with n
// (nil: none) from the next request on.
func (e *Encoder) SetNormalizer(n Normalizer) {
	e.norm = n
	e.reset()
}

// Normalized returns what the normalizer replaced in the messages of the
// last request encoded, in message order; nil when nothing was.
func (e *Encoder) Normalized() []traces.Normalized {
	var out []traces.Normalized
	for _, o := range e.orig {
		out = append(out, o...)
	}
	return out
}

// Encode returns req in trace form and its key.
func (e *Encoder) Encode(req *llm.Request) ([]byte, traces.ID, error) {
	return e.encode(req, true)
}

// Key returns req's key alone: Encode without assembling the trace form.
func (e *Encoder) Key(req *llm.Request) (traces.ID, error) {
	_, key, err := e.encode(req, false)
	return key, err
}

func (e *Encoder) encode(req *llm.Request, withTrace bool) ([]byte, traces.ID, error) {
	if err := e.addMessages(req.Messages); err != nil {
		return nil, traces.ID{}, err
	}
	members, err := e.membersOf(req)
	if err != nil {
		return nil, traces.ID{}, err
	}
	tools, err := e.tools.encode(req.Tools)
	if err != nil {
		return nil, traces.ID{}, err
	}
	// The same request as the last one encoded (a replay's loop encodes
	// each request for its trace, and the replayed model keys it again
	// with the same Encoder): its key and trace form as they were.
	m := &e.memo
	if m.ok && m.gen == e.gen && m.nilMsgs == (req.Messages == nil) && same(m.members, members) && sameAll(m.tools, tools) &&
		(!withTrace || m.trace != nil) {
		return m.trace, m.key, nil
	}
	// The request's members in canonical order: messages first, then
	// sampling, system and tool_choice, then tools.
	h := e.h
	h.Reset()
	h.Write(e.head)
	h.Write([]byte(`{"messages":[`))
	for i, m := range e.key {
		if i > 0 {
			h.Write([]byte{','})
		}
		h.Write(m)
	}
	h.Write([]byte{']'})
	h.Write(members)
	writeTools(h, tools)
	h.Write([]byte{'}'})
	h.Write(e.tail)
	var key traces.ID
	h.Sum(key[:0])
	*m = memo{ok: true, gen: e.gen, nilMsgs: req.Messages == nil, members: members, tools: tools, key: key}
	if !withTrace {
		return nil, key, nil
	}
	var b bytes.Buffer
	n := 32 + len(members)
	for _, m := range e.trace {
		n += len(m) + 1
	}
	for _, t := range tools {
		n += len(t) + 1
	}
	b.Grow(n)
	if req.Messages == nil {
		b.WriteString(`{"messages":null`)
	} else {
		b.WriteString(`{"messages":[`)
		for i, m := range e.trace {
			if i > 0 {
				b.WriteByte(',')
			}
			b.Write(m)
		}
		b.WriteByte(']')
	}
	b.Write(members)
	writeTools(&b, tools)
	b.WriteByte('}')
	m.trace = b.Bytes()
	return m.trace, key, nil
}

// same reports whether a and b are the same bytes in memory.
func same(a, b []byte) bool {
	return len(a) == len(b) && (len(a) == 0 || unsafe.SliceData(a) == unsafe.SliceData(b))
}

// sameAll is same for each of two lists.
func sameAll(a, b [][]byte) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if !same(a[i], b[i]) {
			return false
		}
	}
	return true
}

func writeTools(w interface{ Write([]byte) (int, error) }, tools [][]byte) {
	if len(tools) == 0 {
		return
	}
	w.Write([]byte(`,"tools":[`))
	for i, t := range tools {
		if i > 0 {
			w.Write([]byte{','})
		}
		w.Write(t)
	}
	w.Write([]byte{']'})
}

// addMessages encodes the messages not encoded yet. A message that changed
// since it was encoded (a model that edits the request it was given)
// starts the conversation over: ids are renamed in order of appearance.
func (e *Encoder) addMessages(msgs []llm.Message) error {
	if llm.CommonPrefix(e.msgs, msgs) < len(e.msgs) {
		e.reset()
	}
	for i := len(e.msgs); i < len(msgs); i++ {
		m := msgs[i] // kept as it was: the next request is compared with it
		// Its calls too: a call replaced in the caller's list is then
		// seen as a change (the bytes of arguments edited in place are
		// not).
		m.ToolCalls = slices.Clone(m.ToolCalls)
		n, orig := e.normalized(m)
		tb, err := traces.Marshal(n)
		if err != nil {
			e.reset()
			return fmt.Errorf("request key: messages[%d]: %w", i, err)
		}
		kb := tb
		if r, renamed := e.renamed(n); renamed {
			if kb, err = traces.Marshal(r); err != nil {
				e.reset()
				return fmt.Errorf("request key: messages[%d]: %w", i, err)
			}
		}
		e.msgs = append(e.msgs, m)
		e.gen++
		e.trace = append(e.trace, tb)
		e.key = append(e.key, kb)
		e.orig = append(e.orig, orig)
	}
	return nil
}

func (e *Encoder) reset() {
	e.msgs, e.trace, e.key, e.orig, e.ids = nil, nil, nil, nil, nil
	e.gen++
}

// normalized returns m as the key sees it under the Encoder's normalizer,
// and what the normalizer replaced.
func (e *Encoder) normalized(m llm.Message) (llm.Message, []traces.Normalized) {
	if e.norm == nil || m.Role != llm.RoleTool || m.Content == "" {
		return m, nil
	}
	c, orig := e.norm(m.Content)
	if len(orig) == 0 {
		return m, nil
	}
	m.Content = c
	return m, orig
}

// renamed returns m with its tool-call ids renamed, and whether any
// changed.
func (e *Encoder) renamed(m llm.Message) (llm.Message, bool) {
	changed := false
	rename := func(id string) string {
		r, ok := e.ids[id]
		if !ok {
			if e.ids == nil {
				e.ids = map[string]string{}
			}
			r = "call_" + strconv.Itoa(len(e.ids)+1)
			e.ids[id] = r
		}
		changed = changed || r != id
		return r
	}
	if len(m.ToolCalls) > 0 {
		calls := make([]llm.ToolCall, len(m.ToolCalls))
		for i, c := range m.ToolCalls {
			c.ID = rename(c.ID)
			calls[i] = c
		}
		m.ToolCalls = calls
	}
	if m.ToolCallID != "" {
		m.ToolCallID = rename(m.ToolCallID)
	}
	return m, changed
}

// membersOf returns the canonical members of req after "messages" and
// before "tools": sampling, system and tool_choice, each with its leading
// comma. They rarely change within a conversation.
func (e *Encoder) membersOf(req *llm.Request) ([]byte, error) {
	if l := e.last; l != nil && l.System == req.System && l.ToolChoice == req.ToolChoice && sameSampling(l.Sampling, req.Sampling) {
		return e.members, nil
	}
	s, err := traces.Marshal(req.Sampling)
	if err != nil {
		return nil, fmt.Errorf("request key: sampling: %w", err)
	}
	out := append([]byte(`,"sampling":`), s...)
	if req.System != "" {
		b, err := traces.Marshal(req.System)
		if err != nil {
			return nil, fmt.Errorf("request key: system: %w", err)
		}
		out = append(append(out, `,"system":`...), b...)
	}
	if req.ToolChoice != (llm.ToolChoice{}) {
		b, err := traces.Marshal(req.ToolChoice)
		if err != nil {
			return nil, fmt.Errorf("request key: tool_choice: %w", err)
		}
		out = append(append(out, `,"tool_choice":`...), b...)
	}
	e.last = &llm.Request{System: req.System, ToolChoice: req.ToolChoice, Sampling: copySampling(req.Sampling)}
	e.members = out
	return out, nil
}

func sameSampling(a, b llm.Sampling) bool {
	eqf := func(x, y *float64) bool { return (x == nil) == (y == nil) && (x == nil || *x == *y) }
	return eqf(a.Temperature, b.Temperature) && eqf(a.TopP, b.TopP) && a.MaxTokens == b.MaxTokens &&
		(a.Seed == nil) == (b.Seed == nil) && (a.Seed == nil || *a.Seed == *b.Seed)
}

func copySampling(s llm.Sampling) llm.Sampling {
	cp := func(p *float64) *float64 {
		if p == nil {
			return nil
		}
		v := *p
		return &v
	}
	out := llm.Sampling{Temperature: cp(s.Temperature), TopP: cp(s.TopP), MaxTokens: s.MaxTokens}
	if s.Seed != nil {
		v := *s.Seed
		out.Seed = &v
	}
	return out
}

// ToolCache holds tool definitions in trace form, so that the tool list a
// server offers on every turn of every run is encoded once. It is safe for
// concurrent use; one may serve every Encoder of a process.
type ToolCache struct {
	mu     sync.Mutex
	byName map[string][]cachedTool
	n      int
}

type cachedTool struct {
	description string
	schema      []byte
	enc         []byte
}

// maxCachedTools bounds a ToolCache: past it, the cache starts over.
const maxCachedTools = 4096

// NewToolCache returns an empty cache.
func NewToolCache() *ToolCache { return &ToolCache{byName: map[string][]cachedTool{}} }

// encode returns the trace form of each tool.
func (c *ToolCache) encode(tools []llm.Tool) ([][]byte, error) {
	if len(tools) == 0 {
		return nil, nil
	}
	out := make([][]byte, len(tools))
	c.mu.Lock()
	defer c.mu.Unlock()
	for i := range tools {
		t := &tools[i]
		var enc []byte
		for _, ct := range c.byName[t.Name] {
			if ct.description == t.Description && bytes.Equal(ct.schema, t.InputSchema) {
				enc = ct.enc
				break
			}
		}
		if enc == nil {
			b, err := traces.Marshal(t)
			if err != nil {
				return nil, fmt.Errorf("request key: tools[%d] %q: %w", i, t.Name, err)
			}
			if c.n >= maxCachedTools {
				c.byName, c.n = map[string][]cachedTool{}, 0
			}
			c.byName[t.Name] = append(c.byName[t.Name], cachedTool{description: t.Description, schema: bytes.Clone(t.InputSchema), enc: b})
			c.n++
			enc = b
		}
		out[i] = enc
	}
	return out, nil
}

// Normalized returns a copy of req as its key sees it: tool-call ids
// renamed, and embedded JSON (tool arguments, input schemas) canonical. An
// explanation of a miss compares requests in this form, so that it shows
// what the key saw differ and nothing else. req is not modified.
func Normalized(req *llm.Request) (*llm.Request, error) {
	return NormalizedBy(req, nil)
}

// NormalizedBy is Normalized under a normalizer: tool-result content is
// also what n makes of it, as an [Encoder] with n keys it.
func NormalizedBy(req *llm.Request, n Normalizer) (*llm.Request, error) {
	out := &llm.Request{System: req.System, ToolChoice: req.ToolChoice, Sampling: req.Sampling}
	for i, t := range req.Tools {
		schema, err := canonical(t.InputSchema)
		if err != nil {
			return nil, fmt.Errorf("tools[%d] %q: input schema: %w", i, t.Name, err)
		}
		out.Tools = append(out.Tools, llm.Tool{Name: t.Name, Description: t.Description, InputSchema: schema})
	}
	out.Messages = make([]llm.Message, 0, len(req.Messages))
	e := Encoder{norm: n}
	for i, m := range req.Messages {
		m, _ = e.normalized(m)
		m, _ = e.renamed(m)
		calls := m.ToolCalls
		m.ToolCalls = nil
		for j, c := range calls {
			args, err := canonical(c.Arguments)
			if err != nil {
				return nil, fmt.Errorf("messages[%d].tool_calls[%d]: arguments: %w", i, j, err)
			}
			c.Arguments = args
			m.ToolCalls = append(m.ToolCalls, c)
		}
		out.Messages = append(out.Messages, m)
	}
	return out, nil
}

func canonical(raw []byte) ([]byte, error) {
	if len(bytes.TrimSpace(raw)) == 0 {
		return nil, nil
	}
	return traces.Canonical(raw)
}
