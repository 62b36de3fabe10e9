package llm

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
)

// Model answers one turn of a tool-using conversation.
type Model interface {
	// Name identifies the model in reports and request keys. It is stable:
	// "openai:gpt-4.1", "anthropic:claude-sonnet-4-5", "baseline-bm25",
	// "oracle".
	Name() string
	// Generate answers req. It must not modify req.
	Generate(ctx context.Context, req *Request) (*Response, error)
}

// Local is implemented by models that run inside bench (the baseline and
// the oracle). The time they take is bench's own CPU time, not a model's
// latency: the recorder counts it as none.
type Local interface {
	Model
	Local()
}

// SubmitTool is the name of the harness tool through which an agent hands in
// its structured result. Its input schema is the scenario's result schema.
// The offline models call it when it is offered.
const SubmitTool = "submit_result"

// Role says who wrote a message.
type Role string

// The roles. A tool message carries the result of one tool call.
const (
	RoleUser      Role = "user"
	RoleAssistant Role = "assistant"
	RoleTool      Role = "tool"
)

// Request is everything a model sees on one turn.
type Request struct {
	System     string     `json:"system,omitempty"`
	Messages   []Message  `json:"messages"`
	Tools      []Tool     `json:"tools,omitempty"`
	ToolChoice ToolChoice `json:"tool_choice,omitzero"`
	Sampling   Sampling   `json:"sampling"`
}

// Message is one entry of the conversation.
type Message struct {
	Role Role `json:"role"`
	// Content is the text of a user or assistant message, or the result of
	// a tool call (usually JSON) for a tool message.
	Content string `json:"content,omitempty"`
	// ToolCalls are the calls an assistant message made.
	ToolCalls []ToolCall `json:"tool_calls,omitempty"`
	// ToolCallID names the call a tool message answers.
	ToolCallID string `json:"tool_call_id,omitempty"`
	// IsError marks a tool result that reports a failure.
	IsError bool `json:"is_error,omitempty"`
}

// Equal reports whether m and o are the same message. Equal strings and
// byte slices compare their pointers first, so comparing a message with
// itself costs little.
func (m *Message) Equal(o *Message) bool {
	if m.Role != o.Role || m.Content != o.Content || m.ToolCallID != o.ToolCallID || m.IsError != o.IsError || len(m.ToolCalls) != len(o.ToolCalls) {
		return false
	}
	for i := range m.ToolCalls {
		x, y := &m.ToolCalls[i], &o.ToolCalls[i]
		if x.ID != y.ID || x.Name != y.Name || x.InvalidArguments != y.InvalidArguments || !bytes.Equal(x.Arguments, y.Arguments) {
			return false
		}
	}
	return true
}

// CommonPrefix is how many of the first messages of a and b are equal: an
// agent loop's requests only grow, so a request's messages usually begin
// with all of the last request's.
func CommonPrefix(a, b []Message) int {
	n := min(len(a), len(b))
	for i := range n {
		if !a[i].Equal(&b[i]) {
			return i
		}
	}
	return n
}

// ToolCall is one call of a tool by the model.
type ToolCall struct {
	ID string `json:"id"`
	// Name is the tool called; empty when the model wrote a call that
	// names none (a malformed call, which the agent answers with an error).
	Name string `json:"name"`
	// Arguments is always a JSON object. When the model produced something
	// that is not one, Arguments is {} and InvalidArguments holds the raw
	// text, so the call can be counted as invalid and echoed back verbatim.
	Arguments        json.RawMessage `json:"arguments"`
	InvalidArguments string          `json:"invalid_arguments,omitempty"`
}

// Tool is a tool definition offered to the model.
type Tool struct {
	Name        string `json:"name"`
	Description string `json:"description,omitempty"`
	// InputSchema is a JSON Schema for the arguments, a JSON object.
	InputSchema json.RawMessage `json:"input_schema"`
}

// ToolChoiceMode says whether and which tools the model may call.
type ToolChoiceMode string

// The tool choice modes. The zero ToolChoice leaves the provider's default
// (auto) in place and sends nothing.
const (
	ToolChoiceAuto     ToolChoiceMode = "auto"
	ToolChoiceNone     ToolChoiceMode = "none"
	ToolChoiceRequired ToolChoiceMode = "required" // some tool (Anthropic "any")
	ToolChoiceTool     ToolChoiceMode = "tool"     // the tool named in Name
)

// ToolChoice constrains the model's use of tools.
type ToolChoice struct {
	Mode ToolChoiceMode `json:"mode,omitempty"`
	Name string         `json:"name,omitempty"`
}

// Sampling holds the sampling parameters. Nil means "not sent": the
// provider's default applies.
type Sampling struct {
	Temperature *float64 `json:"temperature,omitempty"`
	TopP        *float64 `json:"top_p,omitempty"`
	// MaxTokens bounds the output. Zero means the provider default (the
	// anthropic package then sends 4096, since the API requires a value).
	MaxTokens int    `json:"max_tokens,omitempty"`
	Seed      *int64 `json:"seed,omitempty"`
}

// StopReason is why the model stopped, normalised across providers.
type StopReason string

// The stop reasons.
const (
	StopEndTurn   StopReason = "end_turn"   // a final answer
	StopToolUse   StopReason = "tool_use"   // tool calls to run
	StopMaxTokens StopReason = "max_tokens" // output was cut
	StopRefusal   StopReason = "refusal"    // content filter or refusal
	StopOther     StopReason = "other"      // anything else the provider said
)

// Usage is the token accounting of one turn (see the package doc).
type Usage struct {
	InputTokens      int64 `json:"input_tokens"`
	OutputTokens     int64 `json:"output_tokens"`
	CachedTokens     int64 `json:"cached_tokens,omitempty"`
	CacheWriteTokens int64 `json:"cache_write_tokens,omitempty"`
}

// Response is a model's answer to one Request.
type Response struct {
	Text       string     `json:"text,omitempty"`
	ToolCalls  []ToolCall `json:"tool_calls,omitempty"`
	StopReason StopReason `json:"stop_reason"`
	Usage      Usage      `json:"usage"`
	// Model is the model the provider says answered, when it says.
	Model string `json:"model,omitempty"`
	// Retries lists the failed attempts that preceded this answer. It is
	// not part of the stored answer: the recorder stores them beside the
	// turn (traces.Turn's attempts and retries).
	Retries []Attempt `json:"-"`
}

// Message returns the assistant message that records r in a conversation.
func (r *Response) Message() Message {
	return Message{Role: RoleAssistant, Content: r.Text, ToolCalls: r.ToolCalls}
}

// Validate reports the first structural problem of r: an unknown role, a
// tool message without a call id, a tool definition without a name, an
// input schema or arguments that are not JSON objects.
func (r *Request) Validate() error {
	if r == nil {
		return errors.New("nil request")
	}
	seen := map[string]bool{}
	for i, t := range r.Tools {
		if t.Name == "" {
			return fmt.Errorf("tools[%d]: empty name", i)
		}
		if seen[t.Name] {
			return fmt.Errorf("tools[%d]: duplicate tool %q", i, t.Name)
		}
		seen[t.Name] = true
		if !IsJSONObject(t.InputSchema) {
			return fmt.Errorf("tools[%d] %q: input schema is not a JSON object", i, t.Name)
		}
	}
	for i, m := range r.Messages {
		switch m.Role {
		case RoleUser:
		case RoleAssistant:
			// A call may name no tool: a model wrote a malformed call, and
			// the conversation echoes it as it was.
			for j, c := range m.ToolCalls {
				if len(c.Arguments) > 0 && !IsJSONObject(c.Arguments) {
					return fmt.Errorf("messages[%d].tool_calls[%d] %q: arguments are not a JSON object", i, j, c.Name)
				}
			}
		case RoleTool:
			if m.ToolCallID == "" {
				return fmt.Errorf("messages[%d]: tool message without tool_call_id", i)
			}
		default:
			return fmt.Errorf("messages[%d]: unknown role %q", i, m.Role)
		}
	}
	switch r.ToolChoice.Mode {
	case "", ToolChoiceAuto, ToolChoiceNone, ToolChoiceRequired:
	case ToolChoiceTool:
		if r.ToolChoice.Name == "" {
			return errors.New("tool_choice: mode tool needs a name")
		}
	default:
		return fmt.Errorf("tool_choice: unknown mode %q", r.ToolChoice.Mode)
	}
	return nil
}

// IsJSONObject reports whether b holds exactly one JSON object.
func IsJSONObject(b []byte) bool {
	b = bytes.TrimSpace(b)
	if len(b) == 0 || b[0] != '{' {
		return false
	}
	return json.Valid(b)
}

// Intent returns the text of the first user message: the task as the user
// put it.
func (r *Request) Intent() string {
	for _, m := range r.Messages {
		if m.Role == RoleUser {
			return m.Content
		}
	}
	return ""
}

// Tool returns the tool named name, if offered.
func (r *Request) Tool(name string) (Tool, bool) {
	for _, t := range r.Tools {
		if t.Name == name {
			return t, true
		}
	}
	return Tool{}, false
}
