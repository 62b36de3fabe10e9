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
