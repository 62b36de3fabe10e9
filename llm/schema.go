package llm

import (
	"bytes"
	"encoding/json"
	"fmt"
)

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
