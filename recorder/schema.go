package recorder

import "encoding/json"

// gradingKeywords are JSON Schema keywords a result schema uses to grade an
// answer rather than to shape it: const values and contains clauses hold
// the expected answer itself. The model is offered the schema without them
// (it would otherwise read the answer key in submit_result's input
// schema, and in the validation errors), and scoring grades with the full
// schema.
var gradingKeywords = []string{"const", "contains", "minContains", "maxContains", "minItems", "maxItems",
	"minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum", "multipleOf", "pattern", "minLength", "maxLength", "not"}

// ShapeSchema returns the result schema the model is offered: the scenario's
// result schema without grading keywords. It is deterministic, so request
// keys stay stable.
func ShapeSchema(schema any) json.RawMessage {
	v := normalizeYAML(schema)
	return mustJSON(strip(v))
}

func strip(v any) any {
	switch x := v.(type) {
	case map[string]any:
		out := map[string]any{}
		for k, val := range x {
			if isGrading(k) {
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

func isGrading(k string) bool {
	for _, g := range gradingKeywords {
		if k == g {
			return true
		}
	}
	return false
}
