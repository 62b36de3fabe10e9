package scenarios

import (
	"strings"
	"testing"
)

// The library lists the causes of a failure in map order; the message must
// not change from call to call (replay keys and reports depend on it).
func TestValidationMessageIsStable(t *testing.T) {
	sch, err := CompileSchema(map[string]any{
		"type": "object",
		"properties": map[string]any{
			"status":      map[string]any{"anyOf": []any{map[string]any{"enum": []any{"Active", "Cleared"}}, map[string]any{"type": "null"}}},
			"device_type": map[string]any{"anyOf": []any{map[string]any{"enum": []any{"Gateway", "Switch"}}, map[string]any{"type": "null"}}},
			"limit":       map[string]any{"type": "integer", "maximum": 100},
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	doc := []byte(`{"status":"x","device_type":"y","limit":1000}`)
	first := ""
	for i := 0; i < 50; i++ {
		msg := sch.Validate(doc).Error()
		if i == 0 {
			first = msg
			for _, want := range []string{"at '/device_type'", "at '/limit'", "at '/status'"} {
				if !strings.Contains(msg, want) {
					t.Fatalf("message %q lacks %q", msg, want)
				}
			}
		} else if msg != first {
			t.Fatalf("message changed between calls:\n%s\n%s", first, msg)
		}
	}
}

// The model is offered the result schema without the keywords that grade
// (they would hand it the answer); the scorer grades with all of them.
func TestResultShapeHidesTheAnswer(t *testing.T) {
	s := &Scenario{ResultSchema: map[string]any{"type": "object", "required": []any{"aps"}, "properties": map[string]any{
		"aps":     map[string]any{"type": "array", "allOf": []any{map[string]any{"contains": map[string]any{"const": "CNAPI0201"}}}, "minItems": 6},
		"offline": map[string]any{"type": "string", "const": "CNAPI0203"},
	}}}
	got, err := s.ResultShape()
	if err != nil {
		t.Fatal(err)
	}
	want := `{"properties":{"aps":{"type":"array"},"offline":{"type":"string"}},"required":["aps"],"type":"object"}`
	if string(got) != want {
		t.Errorf("ResultShape = %s, want %s", got, want)
	}
	wrong := []byte(`{"aps":["x"],"offline":"y"}`)
	if err := s.CheckShape(wrong); err != nil {
		t.Errorf("CheckShape refused a well-shaped answer: %v", err)
	}
	if err := s.CheckResult(wrong); err == nil {
		t.Error("CheckResult accepted a wrong answer")
	}
	if err := s.CheckShape([]byte(`{"aps":"x"}`)); err == nil {
		t.Error("CheckShape accepted an answer of the wrong shape")
	}
}
