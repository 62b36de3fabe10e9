package recorder

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/mcpbench/bench/llm"
	"github.com/mcpbench/bench/traces"
)

// The agent loop encodes every request twice per turn: as canonical JSON
// for the trace, and canonically for its key (another document). The tool definitions are most of
// those bytes (20 KB and more for a real server) and the same on every turn
// of every run, so they are encoded once (encodedTools) and spliced into
// the encodings of the rest of the request. The results are byte for byte
// what traces.Canonical(json.Marshal(req)) and RequestKey give;
// TestFastEncodings and FuzzFastEncodings hold them to that.

// encodedTools is a tool list in the encodings a request needs.
type encodedTools struct {
	n         int
	json      []byte // json.Marshal(tools), as it appears in json.Marshal(req)
	jsonCanon []byte // traces.Canonical(json), as it appears in the trace; nil if it has none
	canon     []byte // the tools array as it appears in the canonical key request
}

// canonToolsPrefix is how traces.Canonical(Request{Tools: t}.Canonical())
// begins: "tools" sorts after every other field of llm.Request
// (messages, sampling, system, tool_choice), so it is the last member.
const canonToolsPrefix = `{"messages":[],"sampling":{},"tools":`

// encodeTools encodes a tool list; an empty list is valid and encodes as
// no tools.
func encodeTools(tools []llm.Tool) (*encodedTools, error) {
	if len(tools) == 0 {
		return &encodedTools{}, nil
	}
	j, err := json.Marshal(tools)
	if err != nil {
		return nil, err
	}
	b, err := (&llm.Request{Tools: tools}).Canonical()
	if err != nil {
		return nil, err
	}
	c, err := traces.Canonical(b)
	if err != nil {
		return nil, err
	}
	if !bytes.HasPrefix(c, []byte(canonToolsPrefix)) || c[len(c)-1] != '}' {
		return nil, fmt.Errorf("encoding tools: unexpected canonical request %.80s", c)
	}
	jc, _ := traces.Canonical(j) // nil: not storable as it is (see requestJSON)
	return &encodedTools{n: len(tools), json: j, jsonCanon: jc, canon: c[len(canonToolsPrefix) : len(c)-1]}, nil
}

// join is the encoding of a's tools followed by b's.
func (a *encodedTools) join(b *encodedTools) *encodedTools {
	switch {
	case a.n == 0:
		return b
	case b.n == 0:
		return a
	}
	cat := func(x, y []byte) []byte {
		if x == nil || y == nil {
			return nil
		}
		out := make([]byte, 0, len(x)+len(y))
		out = append(out, x[:len(x)-1]...)
		out = append(out, ',')
		return append(out, y[1:]...)
	}
	return &encodedTools{n: a.n + b.n, json: cat(a.json, b.json), jsonCanon: cat(a.jsonCanon, b.jsonCanon), canon: cat(a.canon, b.canon)}
}

// errToolsChanged: the request has another number of tools than were
// encoded. The loop passes every request the tools it encoded; the count is
// a guard against a caller that does not, not a comparison of contents.
var errToolsChanged = errors.New("the request's tools are not the encoded ones")

// requestJSON is traces.Canonical(json.Marshal(req)), the request as the
// trace holds it, for a request whose tools are enc's: "tools" sorts after
// every other member of llm.Request (messages, sampling, system,
// tool_choice), so the canonical tools go last. A request that has no
// canonical form (invalid UTF-8 in a raw schema or argument) is
// json.Marshal(req), which the store then refuses with the reason.
func requestJSON(req *llm.Request, enc *encodedTools) ([]byte, error) {
	if len(req.Tools) != enc.n {
		return nil, errToolsChanged
	}
	rest := *req
	rest.Tools = nil
	b, err := json.Marshal(&rest)
	if err != nil {
		return nil, err
	}
	c, err := traces.Canonical(b)
	if err != nil || (enc.n > 0 && enc.jsonCanon == nil) {
		return json.Marshal(req)
	}
	if enc.n == 0 {
		return c, nil
	}
	out := make([]byte, 0, len(c)+len(enc.jsonCanon)+10)
	out = append(out, c[:len(c)-1]...)
	out = append(out, `,"tools":`...)
	out = append(out, enc.jsonCanon...)
	return append(out, '}'), nil
}

// requestKey is RequestKey(provider, model, req, scenario, runIndex), for a
// request whose tools are enc's.
func requestKey(provider, model string, req *llm.Request, enc *encodedTools, scenario string, runIndex int) (traces.ID, error) {
	if len(req.Tools) != enc.n {
		return traces.ID{}, errToolsChanged
	}
	rest := *req
	rest.Tools = nil
	b, err := rest.Canonical()
	if err != nil {
		return traces.ID{}, fmt.Errorf("request key: %w", err)
	}
	c, err := traces.Canonical(b)
	if err != nil {
		return traces.ID{}, fmt.Errorf("request key: %w", err)
	}
	if enc.n > 0 {
		full := make([]byte, 0, len(c)+len(enc.canon)+10)
		full = append(full, c[:len(c)-1]...)
		full = append(full, `,"tools":`...)
		full = append(full, enc.canon...)
		c = append(full, '}')
	}
	return traces.Hash(keyDocBytes(keyDoc{Encoding: llm.EncodingVersion, Provider: provider, Model: model,
		Scenario: scenario, RunIndex: runIndex}, c)), nil
}

// reqEncoder encodes the requests of one run, turn after turn, for the
// trace (requestJSON) and for the key (requestKey). A run's requests only
// grow, each turn appending messages, so each message is encoded once in
// each form and the request is assembled from the pieces: byte for byte
// what requestJSON and requestKey give (TestFastEncodings and
// FuzzFastEncodings compare them on growing requests). A message that
// changed since it was encoded (a model that edits the request it was
// given) starts the encoding over; anything unusual falls back to the
// functions themselves.
type reqEncoder struct {
	enc  *encodedTools
	msgs []llm.Message // the messages encoded, as they were
	json [][]byte      // canonical json.Marshal of each
	key  [][]byte      // canonical encoding of each, normalized
	norm llm.MessageNormalizer
}

func newReqEncoder(enc *encodedTools) *reqEncoder { return &reqEncoder{enc: enc} }

// encode returns the request's key and its JSON for the trace.
func (e *reqEncoder) encode(provider, model string, req *llm.Request, scenario string, runIndex int) (traces.ID, []byte, error) {
	full := func() (traces.ID, []byte, error) {
		key, err := requestKey(provider, model, req, e.enc, scenario, runIndex)
		if err != nil {
			return key, nil, err
		}
		b, err := requestJSON(req, e.enc)
		return key, b, err
	}
	if len(req.Tools) != e.enc.n || len(req.Messages) == 0 || (e.enc.n > 0 && e.enc.jsonCanon == nil) {
		return full()
	}
	if unchangedPrefix(e.msgs, req.Messages) < len(e.msgs) {
		*e = reqEncoder{enc: e.enc} // the normalizer cannot go back
	}
	for i := len(e.msgs); i < len(req.Messages); i++ {
		m := req.Messages[i]
		jb, err := json.Marshal(m)
		if err == nil {
			jb, err = traces.Canonical(jb)
		}
		if err != nil {
			*e = reqEncoder{enc: e.enc}
			return full()
		}
		nm, err := e.norm.Normalize(i, m)
		var kb []byte
		if err == nil {
			if kb, err = json.Marshal(nm); err == nil {
				kb, err = traces.Canonical(kb)
			}
		}
		if err != nil {
			*e = reqEncoder{enc: e.enc}
			return full()
		}
		e.msgs = append(e.msgs, m)
		e.json = append(e.json, jb)
		e.key = append(e.key, kb)
	}
	// The members after "messages": system, tool_choice and sampling, as
	// the canonical encoding of a request without messages has them.
	head := llm.Request{System: req.System, ToolChoice: req.ToolChoice, Sampling: req.Sampling, Messages: []llm.Message{}}
	jtail, err := tailAfterMessages(json.Marshal(&head))
	if err != nil {
		return full()
	}
	ktail, err := tailAfterMessages(head.Canonical())
	if err != nil {
		return full()
	}
	c := assemble(e.key, ktail, e.enc.canon, e.enc.n)
	key := traces.Hash(keyDocBytes(keyDoc{Encoding: llm.EncodingVersion, Provider: provider, Model: model,
		Scenario: scenario, RunIndex: runIndex}, c))
	return key, assemble(e.json, jtail, e.enc.jsonCanon, e.enc.n), nil
}

// tailAfterMessages canonicalizes the encoding of a request without
// messages or tools and returns what follows `{"messages":[]`, without the
// closing brace.
func tailAfterMessages(b []byte, err error) ([]byte, error) {
	if err != nil {
		return nil, err
	}
	c, err := traces.Canonical(b)
	if err != nil {
		return nil, err
	}
	const prefix = `{"messages":[]`
	if !bytes.HasPrefix(c, []byte(prefix)) {
		return nil, fmt.Errorf("encoding request: unexpected canonical form %.80s", c)
	}
	return c[len(prefix) : len(c)-1], nil
}

// assemble writes {"messages":[msgs...]<tail>,"tools":<tools>}: "messages"
// sorts first among a request's members and "tools" last.
func assemble(msgs [][]byte, tail, tools []byte, nTools int) []byte {
	n := 16 + len(tail) + len(tools)
	for _, m := range msgs {
		n += len(m) + 1
	}
	out := make([]byte, 0, n)
	out = append(out, `{"messages":[`...)
	for i, m := range msgs {
		if i > 0 {
			out = append(out, ',')
		}
		out = append(out, m...)
	}
	out = append(out, ']')
	out = append(out, tail...)
	if nTools > 0 {
		out = append(out, `,"tools":`...)
		out = append(out, tools...)
	}
	return append(out, '}')
}

// unchangedPrefix is how many of the messages done (encoded, counted)
// are still the first messages of cur: a loop's requests only grow, so
// normally all of them.
func unchangedPrefix(done, cur []llm.Message) int {
	n := min(len(done), len(cur))
	for i := range n {
		if !sameMessage(&done[i], &cur[i]) {
			return i
		}
	}
	return n
}

// sameMessage reports whether a and b are the same message (equal strings
// and bytes compare their pointers first, so an unchanged message costs
// little).
func sameMessage(a, b *llm.Message) bool {
	if a.Role != b.Role || a.Content != b.Content || a.ToolCallID != b.ToolCallID || a.IsError != b.IsError || len(a.ToolCalls) != len(b.ToolCalls) {
		return false
	}
	for i := range a.ToolCalls {
		x, y := &a.ToolCalls[i], &b.ToolCalls[i]
		if x.ID != y.ID || x.Name != y.Name || x.InvalidArguments != y.InvalidArguments || !bytes.Equal(x.Arguments, y.Arguments) {
			return false
		}
	}
	return true
}
