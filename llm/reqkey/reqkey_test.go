package reqkey

import (
	"bytes"
	"encoding/json"
	"strconv"
	"testing"

	"github.com/mcpbench/bench/llm"
	"github.com/mcpbench/bench/traces"
)

func goldenRequest() *llm.Request {
	temp, seed := 0.2, int64(7)
	return &llm.Request{
		System: "You operate Aruba Central. <&> \u2028 é",
		Messages: []llm.Message{
			{Role: llm.RoleUser, Content: "List the <down> APs & their sites"},
			{Role: llm.RoleAssistant, Content: "Looking.", ToolCalls: []llm.ToolCall{{ID: "toolu_01AbC", Name: "list_aps", Arguments: json.RawMessage(`{ "status" : "Down", "limit": 1.50e2, "big": 9007199254740993 }`)}}},
			{Role: llm.RoleTool, ToolCallID: "toolu_01AbC", Content: `{"items":[{"serial":"CN1","name":"AP <1>"}]}`, IsError: true},
		},
		Tools: []llm.Tool{
			{Name: "list_aps", Description: "List APs. Filters: site, <status>.", InputSchema: json.RawMessage(`{"type":"object","properties":{"status":{"enum":["Up","Down"]},"limit":{"type":"integer","minimum":1,"maximum":1000}},"required":["status"]}`)},
			{Name: llm.SubmitTool, Description: "Submit.", InputSchema: json.RawMessage(`{"type":"object"}`)},
		},
		ToolChoice: llm.ToolChoice{Mode: llm.ToolChoiceAuto},
		Sampling:   llm.Sampling{Temperature: &temp, Seed: &seed, MaxTokens: 512},
	}
}

// TestKeyGolden pins the key of a fixed request. The value was computed by
// the key function bench used before this package (recorder.RequestKey at
// d67ae7e): stores recorded since then must keep matching. If this test
// fails, the key changed: every recorded run would replay stale. Change
// Version and say so in the docs, or undo the change.
func TestKeyGolden(t *testing.T) {
	const want = "76663b1d980194653d12f383fbc73a5cbb82237d3f3f18a8478e1120b33e7c94"
	got, err := Key(Scope{Provider: "openai", Model: "openai:gpt-4.1", Scenario: "alerts-001", RunIndex: 3}, goldenRequest())
	if err != nil {
		t.Fatal(err)
	}
	if got.String() != want {
		t.Fatalf("key of the golden request = %s, want %s", got, want)
	}
}

// referenceKey is the key as docs/architecture.md defines it, written the
// slow, obvious way: the request normalised as a value, encoded, made
// canonical, put in the key document, hashed. Encoder must agree with it.
func referenceKey(s Scope, req *llm.Request) (traces.ID, error) {
	n := *req
	ids := map[string]string{}
	rename := func(id string) string {
		if r, ok := ids[id]; ok {
			return r
		}
		r := "call_" + strconv.Itoa(len(ids)+1)
		ids[id] = r
		return r
	}
	n.Messages = make([]llm.Message, 0, len(req.Messages))
	for _, m := range req.Messages {
		m.ToolCalls = append([]llm.ToolCall(nil), m.ToolCalls...)
		for i := range m.ToolCalls {
			m.ToolCalls[i].ID = rename(m.ToolCalls[i].ID)
		}
		if m.ToolCallID != "" {
			m.ToolCallID = rename(m.ToolCallID)
		}
		n.Messages = append(n.Messages, m)
	}
	r, err := traces.Marshal(&n)
	if err != nil {
		return traces.ID{}, err
	}
	doc, err := traces.Marshal(map[string]any{"encoding": Version, "provider": s.Provider, "model": s.Model,
		"scenario": s.Scenario, "run_index": s.RunIndex, "request": json.RawMessage(r)})
	if err != nil {
		return traces.ID{}, err
	}
	return traces.Hash(doc), nil
}

// check asserts that e gives req the reference key and trace form.
func check(t *testing.T, e *Encoder, s Scope, req *llm.Request) {
	t.Helper()
	wantKey, errK := referenceKey(s, req)
	wantTrace, errT := traces.Marshal(req)
	gotTrace, gotKey, err := e.Encode(req)
	if errK != nil || errT != nil {
		if err == nil {
			t.Fatalf("Encode accepted a request the reference refuses (%v, %v)", errK, errT)
		}
		return
	}
	if err != nil {
		t.Fatalf("Encode: %v", err)
	}
	if gotKey != wantKey {
		t.Fatalf("%d messages: key %s, reference %s", len(req.Messages), gotKey.Short(), wantKey.Short())
	}
	if !bytes.Equal(gotTrace, wantTrace) {
		t.Fatalf("%d messages: trace form\n %s\nwant\n %s", len(req.Messages), gotTrace, wantTrace)
	}
	if k, err := e.Key(req); err != nil || k != wantKey {
		t.Fatalf("Key = %s, %v; want %s", k.Short(), err, wantKey.Short())
	}
}

var scope = Scope{Provider: "anthropic", Model: "anthropic:claude", Scenario: "s-1", RunIndex: 2}

// TestEncoderGrowing: turn after turn, as a loop grows its request, the
// Encoder's key and trace form are the reference ones.
func TestEncoderGrowing(t *testing.T) {
	req := goldenRequest()
	e := NewEncoder(scope, nil)
	for k := 1; k <= len(req.Messages); k++ {
		sub := *req
		sub.Messages = req.Messages[:k]
		check(t, e, scope, &sub)
	}
	for _, tc := range []struct {
		why  string
		edit func(r *llm.Request)
	}{
		{"no system, tool choice or sampling", func(r *llm.Request) { r.System, r.ToolChoice, r.Sampling = "", llm.ToolChoice{}, llm.Sampling{} }},
		{"no tools", func(r *llm.Request) { r.Tools = nil }},
		{"another schema", func(r *llm.Request) { r.Tools[0].InputSchema = json.RawMessage(`{"type":"object","x":1.0}`) }},
		{"an edited message starts the renaming over", func(r *llm.Request) {
			r.Messages[1].ToolCalls = []llm.ToolCall{{ID: "other", Name: "list_aps", Arguments: json.RawMessage(`{}`)}}
		}},
		{"a shorter conversation", func(r *llm.Request) { r.Messages = r.Messages[:1] }},
		{"no messages", func(r *llm.Request) { r.Messages = nil }},
		{"invalid arguments are refused", func(r *llm.Request) {
			r.Messages = append(r.Messages, llm.Message{Role: llm.RoleAssistant, ToolCalls: []llm.ToolCall{{ID: "x", Name: "a", Arguments: json.RawMessage(`{"a":`)}}})
		}},
		{"a tool result seen before its call", func(r *llm.Request) {
			r.Messages = append(r.Messages, llm.Message{Role: llm.RoleTool, ToolCallID: "orphan", Content: "?"})
		}},
	} {
		t.Run(tc.why, func(t *testing.T) {
			r := goldenRequest()
			r.Messages = append([]llm.Message(nil), r.Messages...)
			r.Tools = append([]llm.Tool(nil), r.Tools...)
			tc.edit(r)
			check(t, e, scope, r)                      // after the conversation above
			check(t, NewEncoder(scope, nil), scope, r) // and fresh
		})
	}
}

// Repeats never collapse: each input of the scope changes the key.
func TestScopeChangesKey(t *testing.T) {
	base, _ := Key(scope, goldenRequest())
	for _, s := range []Scope{
		{Provider: "openai", Model: scope.Model, Scenario: scope.Scenario, RunIndex: scope.RunIndex},
		{Provider: scope.Provider, Model: "x", Scenario: scope.Scenario, RunIndex: scope.RunIndex},
		{Provider: scope.Provider, Model: scope.Model, Scenario: "s-2", RunIndex: scope.RunIndex},
		{Provider: scope.Provider, Model: scope.Model, Scenario: scope.Scenario, RunIndex: 3},
	} {
		if k, _ := Key(s, goldenRequest()); k == base {
			t.Errorf("scope %+v gives the key of %+v", s, scope)
		}
	}
}

// A shared ToolCache gives every Encoder the same encodings, and a tool
// whose definition changed is encoded anew, not served from the cache.
func TestToolCache(t *testing.T) {
	c := NewToolCache()
	req := goldenRequest()
	check(t, NewEncoder(scope, c), scope, req)
	changed := goldenRequest()
	changed.Tools[0].Description = "List APs, now with more words."
	check(t, NewEncoder(scope, c), scope, changed)
	check(t, NewEncoder(scope, c), scope, req)
}

func FuzzEncoder(f *testing.F) {
	f.Add("List the <down> APs", `{"status":"Down"}`, `{"type":"object"}`, "desc & <x>", "call_9", 1)
	f.Add("é\u2028", `{"a":[1,2.0,-0,1e400]}`, `{"type":"object","properties":{"a":{"type":"array"}}}`, "", "call_1", 0)
	f.Add("", `{}`, `{"$schema":"x","type":"object"}`, "\x00\x1f", "", 2)
	f.Add("\xff", `{"a":1,"a":2}`, `{"b":"\ud800"}`, "\xc3", "toolu_\x00", 3)
	f.Fuzz(func(t *testing.T, content, args, schema, desc, id string, cut int) {
		req := goldenRequest()
		req.Messages[0].Content = content
		req.Messages[1].ToolCalls = append(req.Messages[1].ToolCalls, llm.ToolCall{ID: id, Name: "get_ap", Arguments: json.RawMessage(args)})
		req.Messages = append(req.Messages, llm.Message{Role: llm.RoleTool, ToolCallID: id, Content: content})
		req.Tools[1].InputSchema = json.RawMessage(schema)
		req.Tools[1].Description = desc
		e := NewEncoder(scope, nil)
		cut = max(0, min(len(req.Messages), cut))
		if cut > 0 {
			sub := *req
			sub.Messages = req.Messages[:cut]
			check(t, e, scope, &sub)
		}
		check(t, e, scope, req)
	})
}

// Normalized renames ids as the key does and makes embedded JSON
// canonical: two requests with equal keys normalise alike.
func TestNormalized(t *testing.T) {
	a := goldenRequest()
	b := goldenRequest()
	b.Messages[1].ToolCalls[0].ID = "call_other"
	b.Messages[2].ToolCallID = "call_other"
	b.Messages[1].ToolCalls[0].Arguments = json.RawMessage(`{"big":9007199254740993,"limit":150,"status":"Down"}`)
	ka, _ := Key(scope, a)
	kb, _ := Key(scope, b)
	if ka != kb {
		t.Fatal("ids and the spelling of arguments changed the key")
	}
	na, err := Normalized(a)
	if err != nil {
		t.Fatal(err)
	}
	nb, _ := Normalized(b)
	ja, _ := json.Marshal(na)
	jb, _ := json.Marshal(nb)
	if !bytes.Equal(ja, jb) {
		t.Fatalf("normalized requests differ:\n%s\n%s", ja, jb)
	}
	if a.Messages[1].ToolCalls[0].ID != "toolu_01AbC" {
		t.Error("Normalized changed its input")
	}
	if na.Messages[1].ToolCalls[0].ID != "call_1" || na.Messages[2].ToolCallID != "call_1" {
		t.Errorf("ids not renamed: %+v", na.Messages)
	}
}

// An Encoder answers a request it encoded last from a memo (a replay's
// loop and its model key each request with the same Encoder): whatever
// changed since, in place or not, is encoded anew.
func TestEncoderMemo(t *testing.T) {
	req := goldenRequest()
	e := NewEncoder(scope, nil)
	if _, err := e.Key(req); err != nil { // the key alone first: the trace form comes after
		t.Fatal(err)
	}
	check(t, e, scope, req)
	check(t, e, scope, req)
	for _, tc := range []struct {
		why  string
		edit func(r *llm.Request)
	}{
		{"a message's content, in place", func(r *llm.Request) { r.Messages[0].Content = "List the APs that are up" }},
		{"a call's arguments, in place", func(r *llm.Request) { r.Messages[1].ToolCalls[0].Arguments = json.RawMessage(`{"status":"Up"}`) }},
		{"the system prompt", func(r *llm.Request) { r.System = "Answer briefly." }},
		{"the sampling", func(r *llm.Request) { r.Sampling.MaxTokens++ }},
		{"a tool's description, in place", func(r *llm.Request) { r.Tools[0].Description = "List access points." }},
		{"the tools", func(r *llm.Request) { r.Tools = r.Tools[:1] }},
		{"messages empty, not null", func(r *llm.Request) { r.Messages = []llm.Message{} }},
		{"messages null", func(r *llm.Request) { r.Messages = nil }},
	} {
		t.Run(tc.why, func(t *testing.T) {
			tc.edit(req) // the request encoded last, changed
			check(t, e, scope, req)
		})
	}
}
