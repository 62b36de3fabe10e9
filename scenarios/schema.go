package scenarios

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"math/big"
	"strconv"
	"sync"

	"github.com/santhosh-tekuri/jsonschema/v6"
)

// Schema is a compiled JSON Schema. It is safe for concurrent use.
type Schema struct {
	s *jsonschema.Schema

	// memo holds the answers to the first small documents validated: a
	// replay validates the same answers and arguments as its recording,
	// and repeats of a run give the same ones.
	mu   sync.Mutex
	memo map[string]error
}

// The memo of a Schema keeps at most memoEntries documents, each of at
// most memoBytes.
const (
	memoEntries = 8
	memoBytes   = 2 << 10
)

// CompileSchema compiles a JSON Schema (decoded YAML or JSON, or raw JSON
// bytes) as JSON Schema 2020-12 unless it names another draft. References
// to anything but the schema itself are refused: a manifest or a server's
// tool list never makes bench reach the network or the file system.
func CompileSchema(schema any) (*Schema, error) {
	if raw, ok := schema.(json.RawMessage); ok {
		var doc any
		if err := json.Unmarshal(raw, &doc); err != nil {
			return nil, fmt.Errorf("invalid schema: %v", err)
		}
		schema = doc
	}
	s, err := compileSchema(schema)
	if err != nil {
		return nil, err
	}
	return &Schema{s: s}, nil
}

// Validate checks the JSON document doc against the schema. A document
// that is not JSON is an error from the parser; one that fails the schema
// an error listing every failure, sorted, so the message is the same on
// every run (it reaches models and reports).
func (s *Schema) Validate(doc []byte) error {
	if len(doc) > memoBytes {
		return s.validate(doc)
	}
	s.mu.Lock()
	err, ok := s.memo[string(doc)]
	s.mu.Unlock()
	if ok {
		return err
	}
	err = s.validate(doc)
	s.mu.Lock()
	if s.memo == nil {
		s.memo = map[string]error{}
	}
	if len(s.memo) < memoEntries {
		s.memo[string(doc)] = err
	}
	s.mu.Unlock()
	return err
}

func (s *Schema) validate(doc []byte) error {
	v, err := jsonschema.UnmarshalJSON(bytes.NewReader(doc))
	if err != nil {
		return err
	}
	if err := s.s.Validate(v); err != nil {
		return errors.New(validationMessage(err))
	}
	return nil
}

// countKeywords are the JSON Schema keywords whose value is a count (a
// non-negative integer). The validator reads a count into an int, and one
// past the int range wraps: a server's maxLength of 1.2e29 became a
// negative bound that every valid string broke.
var countKeywords = map[string]bool{"maxLength": true, "minLength": true, "maxItems": true, "minItems": true,
	"maxProperties": true, "minProperties": true, "maxContains": true, "minContains": true}

// clampCounts lowers, in place, every count of the decoded schema doc
// (json.Number numbers) that is past the int range to the largest int:
// nothing has more characters, items or properties than that, so the
// schema means what it meant. A count that is negative or not an integer
// is left for the meta-schema to refuse. The values of const, enum,
// default and examples are data, not schemas, and are left alone.
func clampCounts(doc any) {
	switch x := doc.(type) {
	case map[string]any:
		for k, v := range x {
			switch {
			case k == "const" || k == "enum" || k == "default" || k == "examples":
			case countKeywords[k]:
				if n, ok := v.(json.Number); ok {
					x[k] = clampCount(n)
				}
			default:
				clampCounts(v)
			}
		}
	case []any:
		for _, v := range x {
			clampCounts(v)
		}
	}
}

var maxInt = big.NewInt(math.MaxInt)

func clampCount(n json.Number) json.Number {
	r, ok := new(big.Rat).SetString(string(n))
	if !ok || !r.IsInt() || r.Num().Cmp(maxInt) <= 0 {
		return n
	}
	return json.Number(strconv.Itoa(math.MaxInt))
}

// resultSchemas is a scenario's result schema compiled: in full, to grade
// an answer, and as the shape the model is offered. It is compiled once,
// on first use (validation, the run's first request, scoring), from the
// schema the scenario was loaded with: a command that loads the whole suite
// to run a part of it compiles that part only, and its first run does not
// wait for the rest.
type resultSchemas struct {
	once      sync.Once
	schema    any
	full      *Schema
	shape     *Schema
	shapeJSON json.RawMessage
	err       error
}

// compiled returns the scenario's compiled result schemas: those of the
// schema it was loaded with (compiled the first time they are asked for),
// or, for a scenario built by hand, compiled now.
func (s *Scenario) compiled() *resultSchemas {
	if r := s.result; r != nil {
		r.once.Do(r.compile)
		return r
	}
	r := &resultSchemas{schema: s.ResultSchema}
	r.compile()
	return r
}

func (r *resultSchemas) compile() {
	if r.schema == nil {
		return
	}
	if r.full, r.err = CompileSchema(r.schema); r.err != nil {
		return
	}
	r.shapeJSON = shapeSchema(r.schema)
	if r.shape, r.err = CompileSchema(r.shapeJSON); r.err != nil {
		r.err = fmt.Errorf("without grading keywords: %w", r.err)
	}
}

// ResultShape is the result schema the model is offered (as submit_result's
// input schema): the scenario's result schema without grading keywords.
// It is deterministic, so request keys stay stable. Nil when the scenario
// has no result schema.
func (s *Scenario) ResultShape() (json.RawMessage, error) {
	r := s.compiled()
	return r.shapeJSON, r.err
}

// CheckShape validates submit_result's arguments against ResultShape.
func (s *Scenario) CheckShape(args []byte) error {
	r := s.compiled()
	if r.err != nil {
		return r.err
	}
	if r.shape == nil {
		return nil
	}
	return r.shape.Validate(args)
}

// CheckResult grades an answer against the full result schema.
func (s *Scenario) CheckResult(doc []byte) error {
	r := s.compiled()
	if r.err != nil {
		return fmt.Errorf("result_schema: %w", r.err)
	}
	if r.full == nil {
		return errors.New("the scenario has no result_schema")
	}
	return r.full.Validate(doc)
}

// gradingKeywords are JSON Schema keywords a result schema uses to grade an
// answer rather than to shape it: const values and contains clauses hold
// the expected answer itself. The model is offered the schema without them
// (it would otherwise read the answer key in submit_result's input schema,
// and in the validation errors), and scoring grades with the full schema.
var gradingKeywords = map[string]bool{"const": true, "contains": true, "minContains": true, "maxContains": true,
	"minItems": true, "maxItems": true, "minimum": true, "maximum": true, "exclusiveMinimum": true,
	"exclusiveMaximum": true, "multipleOf": true, "pattern": true, "minLength": true, "maxLength": true, "not": true}

// shapeSchema is schema without grading keywords, as JSON with sorted keys.
func shapeSchema(schema any) json.RawMessage {
	b, err := json.Marshal(schema)
	if err != nil {
		return nil
	}
	var v any
	if json.Unmarshal(b, &v) != nil {
		return nil
	}
	out, _ := json.Marshal(strip(v))
	return out
}

func strip(v any) any {
	switch x := v.(type) {
	case map[string]any:
		out := map[string]any{}
		for k, val := range x {
			if gradingKeywords[k] {
				continue
			}
			switch k {
			case "allOf", "anyOf", "oneOf":
				list, _ := val.([]any)
				var kept []any
				for _, item := range list {
					s := strip(item)
					if m, ok := s.(map[string]any); ok && len(m) == 0 {
						continue
					}
					kept = append(kept, s)
				}
				if len(kept) > 0 {
					out[k] = kept
				}
				continue
			}
			out[k] = strip(val)
		}
		return out
	case []any:
		out := make([]any, len(x))
		for i, item := range x {
			out[i] = strip(item)
		}
		return out
	default:
		return v
	}
}
