package scenarios

import (
	"strings"
	"testing"
)

// The message of a document with several properties a schema does not
// allow names them in one order, whatever the map order of the document
// (it reaches a model as a tool result, and requests are keyed).
func TestValidationMessageIsDeterministic(t *testing.T) {
	s, err := CompileSchema(map[string]any{"type": "object", "properties": map[string]any{"a": map[string]any{}}, "additionalProperties": false})
	if err != nil {
		t.Fatal(err)
	}
	doc := []byte(`{"a":1,"zeta":1,"beta":2,"mu":3,"alpha":4,"omega":5}`)
	first := s.Validate(doc).Error()
	if !strings.Contains(first, "'alpha', 'beta', 'mu', 'omega', 'zeta'") {
		t.Errorf("message %q does not name them sorted", first)
	}
	for i := 0; i < 50; i++ {
		if got := s.Validate(doc).Error(); got != first {
			t.Fatalf("run %d: %q, then %q", i, first, got)
		}
	}
}
