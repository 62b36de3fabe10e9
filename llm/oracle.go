package llm

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
)

// PlanStep is one call of a scenario's reference plan.
type PlanStep struct {
	Tool      string          `json:"tool"`
	Arguments json.RawMessage `json:"arguments,omitempty"`
	// Via are calls that reach the same tool through another one (a
	// router, a code-mode block), in order of preference: the oracle
	// makes the first whose tool is offered when Tool is not.
	Via []PlanStep `json:"via,omitempty"`
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
		for _, v := range s.Via {
			if v.Tool == "" || len(v.Via) > 0 || len(v.Arguments) > 0 && !IsJSONObject(v.Arguments) {
				return nil, fmt.Errorf("oracle plan step %d (%s): a route through %q is not one call with JSON object arguments", i+1, s.Tool, v.Tool)
			}
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
		s, err := o.plan[turn].offered(req)
		if err != nil {
			return nil, fmt.Errorf("oracle plan step %d: %w", turn+1, err)
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

// offered returns s, or the first of its routes whose tool req offers.
func (s PlanStep) offered(req *Request) (PlanStep, error) {
	if _, ok := req.Tool(s.Tool); ok {
		return s, nil
	}
	var tried []string
	for _, v := range s.Via {
		if _, ok := req.Tool(v.Tool); ok {
			return v, nil
		}
		tried = append(tried, v.Tool)
	}
	if len(tried) == 0 {
		return s, fmt.Errorf("calls %q, which is not among the offered tools (and the profile gives no route to it: adapter.routes)", s.Tool)
	}
	return s, fmt.Errorf("calls %q, which is not among the offered tools, nor is any route to it (%s)", s.Tool, strings.Join(tried, ", "))
}
