package recorder

import (
	"crypto/sha256"
	"encoding/json"
	"fmt"
	"os"
	"strings"
	"testing"

	"github.com/mcpbench/bench/llm"
)

func TestUsageEstimator(t *testing.T) {
	tools := []llm.Tool{{Name: "list_clients", Description: "List the clients Central sees.", InputSchema: json.RawMessage(`{"type":"object"}`)}}
	req := &llm.Request{Messages: []llm.Message{{Role: llm.RoleUser, Content: "Which clients failed to connect at HQ?"}}}
	e := newUsageEstimator(testTokens, SystemPrompt, mustJSON(tools))
	in1, out1 := e.estimate(req, []byte(`{"text":"none"}`))
	if in1 <= e.fixed || out1 <= 0 {
		t.Fatalf("estimate = %d in, %d out; want more than the fixed %d, and some output", in1, out1, e.fixed)
	}
	// A longer conversation costs more, and the same request the same.
	req.Messages = append(req.Messages, llm.Message{Role: llm.RoleAssistant, Content: "Let me look."})
	in2, _ := e.estimate(req, nil)
	if in2 <= in1 {
		t.Errorf("a longer request estimated %d <= %d", in2, in1)
	}
	if again, _ := newUsageEstimator(testTokens, SystemPrompt, mustJSON(tools)).estimate(req, nil); again != in2 {
		t.Errorf("not deterministic: %d then %d", in2, again)
	}
	// Longer tool definitions cost more (what a verbose-tools change shows).
	verbose := []llm.Tool{tools[0]}
	verbose[0].Description += " It pages through every result, following next, and filters by site, status and band."
	if v, _ := newUsageEstimator(testTokens, SystemPrompt, mustJSON(verbose)).estimate(req, nil); v <= in2 {
		t.Errorf("longer tool definitions estimated %d <= %d", v, in2)
	}
}

// The estimator counts each message once across a run's growing requests,
// and a request whose earlier message changed counts what it holds now.
func TestUsageEstimatorIncremental(t *testing.T) {
	tools := mustJSON([]llm.Tool{{Name: "list_clients", InputSchema: json.RawMessage(`{"type":"object"}`)}})
	req := sampleRequest()
	e := newUsageEstimator(testTokens, SystemPrompt, tools)
	for k := 1; k <= len(req.Messages); k++ {
		sub := *req
		sub.Messages = req.Messages[:k]
		got, _ := e.estimate(&sub, nil)
		want, _ := newUsageEstimator(testTokens, SystemPrompt, tools).estimate(&sub, nil)
		if got != want {
			t.Errorf("%d messages: %d, a fresh estimator %d", k, got, want)
		}
	}
	edited := *req
	edited.Messages = append([]llm.Message(nil), req.Messages...)
	edited.Messages[0].Content = strings.Repeat("a much longer question ", 20)
	got, _ := e.estimate(&edited, nil)
	want, _ := newUsageEstimator(testTokens, SystemPrompt, tools).estimate(&edited, nil)
	if got != want {
		t.Errorf("edited message: %d, a fresh estimator %d", got, want)
	}
}

// FuzzCountTokensChunks: counting chunk by chunk (and from the memo) gives
// the one-pass count, whatever the text around the cut points.
func FuzzCountTokensChunks(f *testing.F) {
	tools := []llm.Tool{
		{Name: "list_aps", Description: "List the access points. Filters: site, status (Up, Down).", InputSchema: json.RawMessage(`{"type":"object","properties":{"site":{"type":"string"},"status":{"enum":["Up","Down"]}}}`)},
		{Name: "get_ap", Description: "Get one AP by serial, e.g. CN12345678 — état « up »", InputSchema: json.RawMessage(`{"type":"object","anyOf":[{"required":["serial"]},{"required":["mac"]}]}`)},
		{Name: "submit_result", Description: SubmitDescription, InputSchema: json.RawMessage(`{"type":"object"}`)},
	}
	f.Add(string(mustJSON(tools)), 3)
	f.Add(`[{"a":1},{"b":2},{"c":"x,{\"d\":1}"}, {"e":3},{"1":4},{"  f":5},{"ü":6}]`, 40)
	f.Add("it's,{\"name\" ,{\"x\"\n,{\"y\"", 1)
	f.Fuzz(func(t *testing.T, text string, repeat int) {
		if repeat < 1 || repeat > 50 {
			repeat = 1
		}
		b := []byte(strings.Repeat(text, repeat))
		want := testTokens.countOnce(b)
		if got := testTokens.Count(b); got != want {
			t.Fatalf("CountTokens = %d, one pass = %d (cuts at %v)", got, want, cuts(b))
		}
		if got := testTokens.Count(b); got != want { // from the memo
			t.Fatalf("CountTokens again = %d, one pass = %d", got, want)
		}
	})
}

func cuts(b []byte) []int {
	var out []int
	for off := 0; off < len(b); {
		c := nextCut(b[off:])
		off += c
		out = append(out, off)
	}
	return out
}

func sampleRequest() *llm.Request {
	temp, seed := 0.2, int64(7)
	return &llm.Request{
		System: SystemPrompt + " <&> \u2028 é",
		Messages: []llm.Message{
			{Role: llm.RoleUser, Content: "List the <down> APs & their sites"},
			{Role: llm.RoleAssistant, ToolCalls: []llm.ToolCall{{ID: "call_x9", Name: "list_aps", Arguments: json.RawMessage(`{ "status" : "Down", "limit": 1.50e2 }`)}}},
			{Role: llm.RoleTool, ToolCallID: "call_x9", Content: `{"items":[{"serial":"CN1","name":"AP <1>"}]}`, IsError: true},
		},
		Tools: []llm.Tool{
			{Name: "list_aps", Description: "List APs. Filters: site, <status>.", InputSchema: json.RawMessage(`{"type":"object","properties":{"status":{"enum":["Up","Down"],"description":"é & <b>"}},"required":["status"]}`)},
			{Name: llm.SubmitTool, Description: SubmitDescription, InputSchema: json.RawMessage(`{"type":"object","properties":{"aps":{"type":"array"}}}`)},
		},
		ToolChoice: llm.ToolChoice{Mode: llm.ToolChoiceAuto},
		Sampling:   llm.Sampling{Temperature: &temp, Seed: &seed, MaxTokens: 512},
	}
}

// The o200k_base counts of fixed texts, pinned: token counts are stored in
// traces and reports, so a change of tokenizer (module, version, import)
// must not change them. The tool list is the reference server's golden
// tools/list; its SHA-256 is pinned too, so that a change of the file is
// told apart from a change of the counts.
func TestTokenCountsPinned(t *testing.T) {
	for _, c := range []struct {
		text string
		want int
	}{
		{"", 0},
		{"hello world", 2},
		{"Which clients failed to connect at HQ?", 8},
		{"Submit the final result of the task. Call it once, at the end, with the result in the structure of this tool's input schema.", 29},
		{"Get one AP by serial, e.g. CN12345678 — état « up » 日本語のテキスト 🙂\r\n\t  x", 28},
		{`{"type":"object","properties":{"site":{"type":"string"},"status":{"enum":["Up","Down"]}}}`, 24},
	} {
		if got := testTokens.Count([]byte(c.text)); got != c.want {
			t.Errorf("testTokens.Count(%q) = %d, want %d", c.text, got, c.want)
		}
	}

	const golden = "../examples/central-mcp/internal/centralmcp/testdata/tools.json"
	raw, err := os.ReadFile(golden)
	if err != nil {
		t.Fatal(err)
	}
	if sum := fmt.Sprintf("%x", sha256.Sum256(raw)); sum != "5399cec3a5fda96097052489b78446d9110ad32bd1cb8c7444d08146f0646dda" {
		t.Fatalf("%s changed (sha256 %s): re-pin its counts below", golden, sum)
	}
	if got, want := testTokens.Count(raw), 4850; got != want {
		t.Errorf("testTokens.Count(tools.json) = %d, want %d", got, want)
	}
	if got, want := testTokens.countOnce(raw), 4850; got != want {
		t.Errorf("testTokens.countOnce(tools.json) = %d, want %d", got, want)
	}
	var mcpTools []struct {
		Name        string          `json:"name"`
		Description string          `json:"description"`
		InputSchema json.RawMessage `json:"inputSchema"`
	}
	if err := json.Unmarshal(raw, &mcpTools); err != nil {
		t.Fatal(err)
	}
	tools := make([]llm.Tool, len(mcpTools))
	for i, m := range mcpTools {
		tools[i] = llm.Tool{Name: m.Name, Description: m.Description, InputSchema: m.InputSchema}
	}
	cost, err := testTokens.MeasureTools(tools)
	if err != nil {
		t.Fatal(err)
	}
	if want := (ToolCost{Tools: 17, Chars: 12200, Tokens: 2749}); cost != want {
		t.Errorf("testTokens.MeasureTools(tools.json) = %+v, want %+v", cost, want)
	}
}

// testTokens is the tests' token counter.
var testTokens = NewTokenCounter()
