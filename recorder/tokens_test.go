package recorder

import (
	"encoding/json"
	"testing"

	"github.com/mcpbench/bench/llm"
)

func TestUsageEstimator(t *testing.T) {
	tools := []llm.Tool{{Name: "list_clients", Description: "List the clients Central sees.", InputSchema: json.RawMessage(`{"type":"object"}`)}}
	req := &llm.Request{Messages: []llm.Message{{Role: llm.RoleUser, Content: "Which clients failed to connect at HQ?"}}}
	e := newUsageEstimator(SystemPrompt, mustJSON(tools))
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
	if again, _ := newUsageEstimator(SystemPrompt, mustJSON(tools)).estimate(req, nil); again != in2 {
		t.Errorf("not deterministic: %d then %d", in2, again)
	}
	// Longer tool definitions cost more (what a verbose-tools change shows).
	verbose := []llm.Tool{tools[0]}
	verbose[0].Description += " It pages through every result, following next, and filters by site, status and band."
	if v, _ := newUsageEstimator(SystemPrompt, mustJSON(verbose)).estimate(req, nil); v <= in2 {
		t.Errorf("longer tool definitions estimated %d <= %d", v, in2)
	}
}
