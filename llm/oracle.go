package llm

import (
	"context"
	"encoding/json"
	"fmt"
)

// PlanStep is one call of a scenario's reference plan.
type PlanStep struct {
	Tool      string          `json:"tool"`
	Arguments json.RawMessage `json:"arguments,omitempty"`
}

// Oracle is the model that follows a scenario's reference plan: one planned
// call per turn, then the reference result through [SubmitTool] (or as the
// final text when that tool is not offered). It proves a scenario
// achievable on a server; it is never reported as a model result.
type Oracle struct {
	plan   []PlanStep
	result json.RawMessage
}

// NewOracle returns an Oracle for plan and result. result must be JSON.
func NewOracle(plan []PlanStep, result json.RawMessage) (*Oracle, error) {
	for i, s := range plan {
		if s.Tool == "" {
			return nil, fmt.Errorf("oracle plan step %d: empty tool", i+1)
		}
		if len(s.Arguments) > 0 && !IsJSONObject(s.Arguments) {
			return nil, fmt.Errorf("oracle plan step %d (%s): arguments are not a JSON object", i+1, s.Tool)
		}
	}
	if len(result) > 0 && !json.Valid(result) {
		return nil, fmt.Errorf("oracle result is not valid JSON")
	}
	return &Oracle{plan: plan, result: result}, nil
}

// Name returns "oracle".
func (o *Oracle) Name() string { return string(ProviderOracle) }

// Local marks the oracle as a model that runs inside bench.
func (o *Oracle) Local() {}

// Generate issues the next planned call. The turn is the number of
// assistant messages already in req, so the oracle is stateless and replays
// the same way every time. Tool-call ids are "oracle_1", "oracle_2", ...
func (o *Oracle) Generate(ctx context.Context, req *Request) (*Response, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	turn := 0
	for _, m := range req.Messages {
		if m.Role == RoleAssistant {
			turn++
		}
	}
	id := fmt.Sprintf("oracle_%d", turn+1)
	switch {
	case turn < len(o.plan):
		s := o.plan[turn]
		if _, ok := req.Tool(s.Tool); !ok {
			return nil, fmt.Errorf("oracle plan step %d calls %q, which is not among the offered tools", turn+1, s.Tool)
		}
		args := s.Arguments
		if len(args) == 0 {
			args = json.RawMessage("{}")
		}
		return &Response{ToolCalls: []ToolCall{{ID: id, Name: s.Tool, Arguments: args}}, StopReason: StopToolUse}, nil
	case turn == len(o.plan):
		if _, ok := req.Tool(SubmitTool); ok {
			args := o.result
			if !IsJSONObject(args) {
				return nil, fmt.Errorf("oracle result must be a JSON object to go through %s", SubmitTool)
			}
			return &Response{ToolCalls: []ToolCall{{ID: id, Name: SubmitTool, Arguments: args}}, StopReason: StopToolUse}, nil
		}
		return &Response{Text: string(o.result), StopReason: StopEndTurn}, nil
	default:
		return &Response{Text: "Done.", StopReason: StopEndTurn}, nil
	}
}
