package scenarios

import (
	"encoding/json"
	"testing"
)

// Counts past 64 bits in a schema (a server's input schema, a scenario's
// result schema) bound what they say and nothing more: they do not wrap
// into negative bounds that reject valid documents (issue 16, row 14), and
// counts that are no counts (negative, fractional) make no schema.
func TestSchemaCountsBeyondInt(t *testing.T) {
	cases := []struct {
		schema, doc string
		valid       bool // else the document fails the schema
		bad         bool // the schema does not compile
		why         string
	}{
		{`{"properties":{"name":{"type":"string","maxLength":1.2e29}}}`, `{"name":"core"}`, true, false,
			"maxLength 1.2e29 allows a 4-character string"},
		{`{"properties":{"tags":{"type":"array","maxItems":1e19}}}`, `{"tags":["a"]}`, true, false,
			"maxItems 1e19 (just past int64) allows one item"},
		{`{"maxProperties":1.8446744073709552e19}`, `{"a":1,"b":2}`, true, false,
			"maxProperties 2^64 (whose low 64 bits are 384) allows two properties"},
		{`{"properties":{"name":{"type":"string","minLength":1e30}}}`, `{"name":"core"}`, false, false,
			"minLength 1e30 still refuses a short string: no string is that long"},
		{`{"properties":{"tags":{"type":"array","minItems":1.2e29}}}`, `{"tags":[]}`, false, false,
			"minItems 1.2e29 still refuses an empty array"},
		{`{"properties":{"n":{"type":"integer","maximum":1e300,"minimum":-1e300}}}`, `{"n":5}`, true, false,
			"a huge maximum and minimum hold 5"},
		{`{"properties":{"name":{"type":"string","maxLength":3.0}}}`, `{"name":"core"}`, false, false,
			"maxLength 3.0 is the count 3"},
		{`{"const":{"maxLength":1e29}}`, `{"maxLength":1e29}`, true, false,
			"a const's value is data: a count-like member in it is not clamped"},
		{`{"properties":{"maxLength":{"type":"string"}}}`, `{"maxLength":"x"}`, true, false,
			"a property named maxLength is a schema, left alone"},
		{`{"properties":{"name":{"type":"string","maxLength":-1}}}`, `{"name":"core"}`, false, true,
			"a negative count is no schema"},
		{`{"properties":{"name":{"type":"string","maxLength":2.5}}}`, `{"name":"core"}`, false, true,
			"a fractional count is no schema"},
	}
	for _, c := range cases {
		sch, err := CompileSchema(json.RawMessage(c.schema))
		if c.bad {
			if err == nil {
				t.Errorf("%s: %s compiles", c.why, c.schema)
			}
			continue
		}
		if err != nil {
			t.Errorf("%s: %s: %v", c.why, c.schema, err)
			continue
		}
		err = sch.Validate([]byte(c.doc))
		if c.valid && err != nil {
			t.Errorf("%s: %s refuses %s: %v", c.why, c.schema, c.doc, err)
		}
		if !c.valid && err == nil {
			t.Errorf("%s: %s accepts %s", c.why, c.schema, c.doc)
		}
	}
}
