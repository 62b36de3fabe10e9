package reqkey

import (
	"bytes"
	"regexp"
	"testing"

	"github.com/mcpbench/bench/llm"
	"github.com/mcpbench/bench/traces"
)

// timeNormalizer replaces RFC 3339 times, as a profile rule would.
func timeNormalizer() Normalizer {
	re := regexp.MustCompile(`\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ`)
	return func(s string) (string, []traces.Normalized) {
		var orig []traces.Normalized
		out := re.ReplaceAllStringFunc(s, func(m string) string {
			orig = append(orig, traces.Normalized{Placeholder: "<time>", Original: m, Rule: "pattern"})
			return "<time>"
		})
		return out, orig
	}
}

func clockRequest(now string) *llm.Request {
	return &llm.Request{
		System: "sys",
		Messages: []llm.Message{
			{Role: llm.RoleUser, Content: "What happened in the last hour at " + now + "?"}, // not a tool result: kept
			{Role: llm.RoleAssistant, ToolCalls: []llm.ToolCall{{ID: "toolu_9", Name: "events_now", Arguments: []byte(`{}`)}}},
			{Role: llm.RoleTool, ToolCallID: "toolu_9", Content: `{"now":"` + now + `","events":0}`},
		},
	}
}

// TestNormalizerKey: with a normalizer, two requests whose tool results
// differ only in the time a server printed have one key, and the trace form
// holds the placeholder; the originals are reported in order; without one
// the keys differ. The request itself (what the model is sent) is not
// touched.
func TestNormalizerKey(t *testing.T) {
	scope := Scope{Provider: "oracle", Model: "oracle", Scenario: "clock-001"}
	keyOf := func(n Normalizer, req *llm.Request) (traces.ID, []byte, []traces.Normalized) {
		t.Helper()
		e := NewEncoder(scope, nil)
		e.SetNormalizer(n)
		tr, k, err := e.Encode(req)
		if err != nil {
			t.Fatal(err)
		}
		return k, tr, e.Normalized()
	}
	at10, at11 := clockRequest("2026-12-01T10:00:00Z"), clockRequest("2026-12-01T11:00:00Z")
	// The user message differs too; make it the same so only the tool result differs.
	at11.Messages[0] = at10.Messages[0]

	raw10, _, _ := keyOf(nil, at10)
	raw11, _, _ := keyOf(nil, at11)
	if raw10 == raw11 {
		t.Fatal("without a normalizer the keys are equal: the test proves nothing")
	}
	k10, tr10, orig10 := keyOf(timeNormalizer(), at10)
	k11, _, orig11 := keyOf(timeNormalizer(), at11)
	if k10 != k11 {
		t.Fatalf("normalised keys differ: %s vs %s", k10, k11)
	}
	if !bytes.Contains(tr10, []byte(`\"now\":\"<time>\"`)) || bytes.Contains(tr10, []byte("2026-12-01T10:00:00Z\\\"")) {
		t.Errorf("trace form does not hold the placeholder in the tool result: %s", tr10)
	}
	if !bytes.Contains(tr10, []byte("at 2026-12-01T10:00:00Z?")) {
		t.Errorf("a user message was normalised: %s", tr10)
	}
	if len(orig10) != 1 || orig10[0].Original != "2026-12-01T10:00:00Z" || len(orig11) != 1 || orig11[0].Original != "2026-12-01T11:00:00Z" {
		t.Errorf("originals = %v / %v", orig10, orig11)
	}
	if at10.Messages[2].Content != `{"now":"2026-12-01T10:00:00Z","events":0}` {
		t.Errorf("the request was modified: %q", at10.Messages[2].Content)
	}
	// The key is the one the reference computes of the normalised request.
	n := *at10
	n.Messages = append([]llm.Message(nil), at10.Messages...)
	n.Messages[2].Content = `{"now":"<time>","events":0}`
	want, err := referenceKey(scope, &n)
	if err != nil {
		t.Fatal(err)
	}
	if k10 != want {
		t.Errorf("normalised key %s, reference %s", k10, want)
	}
	// NormalizedBy (what a miss explanation compares) agrees.
	nb, err := NormalizedBy(at11, timeNormalizer())
	if err != nil {
		t.Fatal(err)
	}
	if nb.Messages[2].Content != n.Messages[2].Content {
		t.Errorf("NormalizedBy content %q", nb.Messages[2].Content)
	}
}

// TestNormalizerIncremental: an Encoder that keys a conversation turn after
// turn gives each turn the key a fresh Encoder gives it, and reports the
// originals of every tool result so far.
func TestNormalizerIncremental(t *testing.T) {
	scope := Scope{Provider: "oracle", Model: "oracle", Scenario: "clock-001"}
	req := clockRequest("2026-12-01T10:00:00Z")
	e := NewEncoder(scope, nil)
	e.SetNormalizer(timeNormalizer())
	if _, err := e.Key(&llm.Request{Messages: req.Messages[:1]}); err != nil {
		t.Fatal(err)
	}
	req.Messages = append(req.Messages,
		llm.Message{Role: llm.RoleAssistant, ToolCalls: []llm.ToolCall{{ID: "toolu_10", Name: "events_now", Arguments: []byte(`{}`)}}},
		llm.Message{Role: llm.RoleTool, ToolCallID: "toolu_10", Content: "now 2026-12-01T10:00:05Z"})
	got, err := e.Key(req)
	if err != nil {
		t.Fatal(err)
	}
	fresh := NewEncoder(scope, nil)
	fresh.SetNormalizer(timeNormalizer())
	want, err := fresh.Key(req)
	if err != nil {
		t.Fatal(err)
	}
	if got != want {
		t.Fatalf("incremental key %s, fresh %s", got, want)
	}
	if o := e.Normalized(); len(o) != 2 || o[1].Original != "2026-12-01T10:00:05Z" {
		t.Errorf("originals = %v", o)
	}
}
