package scenarios

import (
	"strconv"
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

// Validate answers a document it has seen as it did the first time,
// from its memo, and one past the memo's bounds (too many, too large) as
// if there were no memo; under concurrent use too.
func TestSchemaMemo(t *testing.T) {
	s, err := CompileSchema(map[string]any{"type": "object", "properties": map[string]any{"n": map[string]any{"type": "integer", "maximum": 5}}})
	if err != nil {
		t.Fatal(err)
	}
	doc := func(n int) []byte { return []byte(`{"n":` + strconv.Itoa(n) + `}`) }
	want := func(n int) bool { return n <= 5 }
	big := []byte(`{"n":9,"pad":"` + strings.Repeat("x", memoBytes) + `"}`)
	var wg sync.WaitGroup
	for g := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range 3 * memoEntries {
				n := (i + g) % (2 * memoEntries)
				if err := s.Validate(doc(n)); (err == nil) != want(n) {
					t.Errorf("n=%d: %v", n, err)
				}
			}
			if err := s.Validate(big); err == nil || !strings.Contains(err.Error(), "maximum") {
				t.Errorf("large document: %v", err)
			}
		}()
	}
	wg.Wait()
	s.mu.Lock()
	n := len(s.memo)
	s.mu.Unlock()
	if n != memoEntries {
		t.Errorf("memo holds %d documents, want %d", n, memoEntries)
	}
	first, again := s.Validate(doc(7)), s.Validate(doc(7))
	if first == nil || again == nil || first.Error() != again.Error() {
		t.Errorf("the same document answered %v, then %v", first, again)
	}
}
