package llm_test

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/mcpbench/bench/llm"
	"github.com/mcpbench/bench/llm/anthropic"
	"github.com/mcpbench/bench/llm/baseline"
	"github.com/mcpbench/bench/llm/openai"
)

// keys holds what the CLI read from flags or the environment; the llm
// packages never read the environment themselves.
type keys struct {
	openAIKey, openAIBaseURL       string
	anthropicKey, anthropicBaseURL string
}

// newModel is how a caller turns a spec into a Model. The oracle needs the
// scenario's plan and reference result, so it is built per scenario.
func newModel(spec string, k keys, now func() time.Time, plan []llm.PlanStep, result json.RawMessage) (llm.Model, error) {
	s, err := llm.ParseSpec(spec)
	if err != nil {
		return nil, err
	}
	switch s.Provider {
	case llm.ProviderOpenAI:
		return openai.New(s.Model, &openai.Options{APIKey: k.openAIKey, BaseURL: k.openAIBaseURL})
	case llm.ProviderAnthropic:
		return anthropic.New(s.Model, &anthropic.Options{APIKey: k.anthropicKey, BaseURL: k.anthropicBaseURL})
	case llm.ProviderBaseline:
		return baseline.New(&baseline.Options{Now: now}), nil
	default: // llm.ProviderOracle
		return llm.NewOracle(plan, result)
	}
}

func Example() {
	now := func() time.Time { return time.Date(2026, 11, 29, 12, 0, 0, 0, time.UTC) }
	m, err := newModel("baseline", keys{}, now, nil, nil)
	if err != nil {
		panic(err)
	}
	req := &llm.Request{
		Messages: []llm.Message{{Role: llm.RoleUser, Content: "Show the critical alerts from yesterday"}},
		Tools: []llm.Tool{
			{Name: "list_alerts", Description: "List alerts by severity.", InputSchema: json.RawMessage(
				`{"type":"object","properties":{"severity":{"type":"string","enum":["critical","major"]},"from":{"type":"string"},"to":{"type":"string"}}}`)},
			{Name: "list_wlans", Description: "List WLANs.", InputSchema: json.RawMessage(`{"type":"object"}`)},
		},
	}
	resp, err := m.Generate(context.Background(), req)
	if err != nil {
		panic(err)
	}
	fmt.Println(m.Name(), resp.ToolCalls[0].Name, string(resp.ToolCalls[0].Arguments))
	// Output:
	// baseline-bm25 list_alerts {"from":"2026-11-28T00:00:00Z","severity":"critical","to":"2026-11-29T00:00:00Z"}
}
