package scenarios

import (
	"strings"
	"sync"
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

// A loaded scenario's result schema is compiled once, on first use, however
// many runs ask for it at once; loading compiles nothing, and a schema that
// does not compile is reported by whoever asks first (validation).
func TestResultSchemaCompiledOnceOnFirstUse(t *testing.T) {
	ss, err := Parse("t.yaml", []byte(`format: 1
id: lazy-schema
result_schema: {type: object, properties: {n: {type: integer, const: 3}}, required: [n]}
---
format: 1
id: bad-schema
result_schema: {type: frobnicate}
`))
	if len(ss) != 2 {
		t.Fatalf("parsed %d scenarios (%v)", len(ss), err)
	}
	ok, bad := ss[0], ss[1]
	if ok.result.full != nil || bad.result.err != nil {
		t.Fatal("loading compiled a result schema")
	}
	var wg sync.WaitGroup
	got := make([]*Schema, 8)
	for i := range got {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if err := ok.CheckResult([]byte(`{"n":3}`)); err != nil {
				t.Error(err)
			}
			got[i] = ok.compiled().full
		}()
	}
	wg.Wait()
	for _, s := range got {
		if s == nil || s != got[0] {
			t.Fatal("the schema was compiled more than once")
		}
	}
	if err := ok.CheckResult([]byte(`{"n":4}`)); err == nil {
		t.Error("a wrong answer validated")
	}
	if _, err := bad.ResultShape(); err == nil || !strings.Contains(err.Error(), "invalid schema") {
		t.Errorf("bad schema: ResultShape error %v", err)
	}
}
