package otlp

import (
	"encoding/json"

	"go.opentelemetry.io/otel/attribute"

	"github.com/mcpbench/bench/llm"
)

// The message shapes of the GenAI conventions' gen_ai.input.messages,
// gen_ai.output.messages and gen_ai.system_instructions (written only with
// Options.IncludeContent).
type message struct {
	Role         string `json:"role"`
	Parts        []part `json:"parts"`
	FinishReason string `json:"finish_reason,omitempty"`
}

type part struct {
	Type      string          `json:"type"`
	Content   string          `json:"content,omitempty"`
	ID        string          `json:"id,omitempty"`
	Name      string          `json:"name,omitempty"`
	Arguments json.RawMessage `json:"arguments,omitempty"`
	Response  string          `json:"response,omitempty"`
}

// inputMessages are a turn's request as the conventions write it: the
// system prompt and the conversation so far.
func inputMessages(request json.RawMessage) []attribute.KeyValue {
	var req llm.Request
	if err := json.Unmarshal(request, &req); err != nil {
		return nil
	}
	var msgs []message
	for _, m := range req.Messages {
		msgs = append(msgs, convert(m, ""))
	}
	attrs := []attribute.KeyValue{attribute.String("gen_ai.input.messages", marshal(msgs))}
	if req.System != "" {
		attrs = append(attrs, attribute.String("gen_ai.system_instructions", marshal([]part{{Type: "text", Content: req.System}})))
	}
	return attrs
}

func outputMessages(resp *llm.Response) string {
	m := resp.Message()
	return marshal([]message{convert(m, finishReason(resp.StopReason))})
}

func convert(m llm.Message, finish string) message {
	out := message{Role: string(m.Role), FinishReason: finish}
	switch {
	case m.Role == llm.RoleTool:
		out.Parts = append(out.Parts, part{Type: "tool_call_response", ID: m.ToolCallID, Response: m.Content})
	case m.Content != "":
		out.Parts = append(out.Parts, part{Type: "text", Content: m.Content})
	}
	for _, c := range m.ToolCalls {
		out.Parts = append(out.Parts, part{Type: "tool_call", ID: c.ID, Name: c.Name, Arguments: c.Arguments})
	}
	if out.Parts == nil {
		out.Parts = []part{}
	}
	return out
}

func marshal(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}
