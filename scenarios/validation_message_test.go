package scenarios

import (
	"strings"
	"testing"

	"github.com/santhosh-tekuri/jsonschema/v6"
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
	doc, _ := jsonschema.UnmarshalJSON(strings.NewReader(`{"status":"x","device_type":"y","limit":1000}`))
	first := ""
	for i := 0; i < 50; i++ {
		msg := ValidationMessage(sch.Validate(doc))
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
