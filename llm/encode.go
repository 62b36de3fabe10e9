package llm

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strconv"
)

// EncodingVersion names the normalisation rules of [Request.Canonical]. It
// changes whenever a rule changes, so old request keys are never compared
// with new ones by accident.
const EncodingVersion = "llm-request/1"

// Normalized returns a deep copy of r with the normalisation rules of the
// package doc applied: tool-call ids renamed call_1, call_2, ... and embedded
// JSON re-encoded with sorted keys. r is not modified.
func (r *Request) Normalized() (*Request, error) {
	out := &Request{System: r.System, ToolChoice: r.ToolChoice, Sampling: r.Sampling}
	for i, t := range r.Tools {
		schema, err := CanonicalJSON(t.InputSchema)
		if err != nil {
			return nil, fmt.Errorf("tools[%d] %q: input schema: %w", i, t.Name, err)
		}
		out.Tools = append(out.Tools, Tool{Name: t.Name, Description: t.Description, InputSchema: schema})
	}
	out.Messages = make([]Message, 0, len(r.Messages))
	var n MessageNormalizer
	for i, m := range r.Messages {
		nm, err := n.Normalize(i, m)
		if err != nil {
			return nil, err
		}
		out.Messages = append(out.Messages, nm)
	}
	return out, nil
}

// MessageNormalizer normalises a request's messages one at a time, in
// order, as Normalized does; a caller whose requests only grow (an agent
// loop) normalises each message once. The zero value is ready to use.
type MessageNormalizer struct {
	ids map[string]string
}

func (n *MessageNormalizer) rename(id string) string {
	if r, ok := n.ids[id]; ok {
		return r
	}
	if n.ids == nil {
		n.ids = map[string]string{}
	}
	r := "call_" + strconv.Itoa(len(n.ids)+1)
	n.ids[id] = r
	return r
}

// Normalize returns message i of a request, normalised given the messages
// before it (which must have been passed to n, in order).
func (n *MessageNormalizer) Normalize(i int, m Message) (Message, error) {
	nm := Message{Role: m.Role, Content: m.Content, IsError: m.IsError}
	for j, c := range m.ToolCalls {
		args, err := CanonicalJSON(c.Arguments)
		if err != nil {
			return Message{}, fmt.Errorf("messages[%d].tool_calls[%d]: arguments: %w", i, j, err)
		}
		nm.ToolCalls = append(nm.ToolCalls, ToolCall{ID: n.rename(c.ID), Name: c.Name, Arguments: args, InvalidArguments: c.InvalidArguments})
	}
	if m.ToolCallID != "" {
		nm.ToolCallID = n.rename(m.ToolCallID)
	}
	return nm, nil
}

// Canonical returns the normalised request encoded as compact JSON. Equal
// bytes mean a live run would send the same thing; the recorder hashes them
// (after its own canonicalisation) into the request key.
func (r *Request) Canonical() ([]byte, error) {
	n, err := r.Normalized()
	if err != nil {
		return nil, err
	}
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(n); err != nil {
		return nil, fmt.Errorf("encode request: %w", err)
	}
	return bytes.TrimSuffix(buf.Bytes(), []byte("\n")), nil
}

// CanonicalJSON re-encodes a JSON value compactly with object keys sorted and
// numbers kept as written. Empty input stays empty.
func CanonicalJSON(raw json.RawMessage) (json.RawMessage, error) {
	if len(bytes.TrimSpace(raw)) == 0 {
		return nil, nil
	}
	v, err := decodeJSON(raw)
	if err != nil {
		return nil, err
	}
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil { // maps marshal with sorted keys
		return nil, err
	}
	return bytes.TrimSuffix(buf.Bytes(), []byte("\n")), nil
}

// decodeJSON decodes one JSON value keeping numbers as json.Number and
// rejecting trailing data.
func decodeJSON(raw []byte) (any, error) {
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, fmt.Errorf("invalid JSON: %w", err)
	}
	if dec.More() {
		return nil, fmt.Errorf("invalid JSON: trailing data")
	}
	return v, nil
}

// SchemaMembers splits a tool's input schema, a JSON object, into its
// top-level members, each kept as the raw JSON it was written as. A provider
// hands these to its SDK, which writes a json.RawMessage verbatim: numbers
// stay numbers ("minItems":1, not "minItems":"1") and keep their spelling.
// Empty input is an empty object.
func SchemaMembers(raw json.RawMessage) (map[string]any, error) {
	out := map[string]any{}
	if len(bytes.TrimSpace(raw)) == 0 {
		return out, nil
	}
	var members map[string]json.RawMessage
	dec := json.NewDecoder(bytes.NewReader(raw))
	if err := dec.Decode(&members); err != nil {
		return nil, fmt.Errorf("want a JSON object: %w", err)
	}
	if dec.More() {
		return nil, fmt.Errorf("want a JSON object: trailing data")
	}
	if members == nil {
		return nil, fmt.Errorf("want a JSON object, got null")
	}
	for k, v := range members {
		out[k] = v
	}
	return out, nil
}
