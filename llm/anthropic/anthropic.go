// Package anthropic is the llm.Model for Anthropic's Messages API. It wraps
// the official SDK, github.com/anthropics/anthropic-sdk-go/v2; no SDK type
// leaves this package.
package anthropic

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"time"

	ant "github.com/anthropics/anthropic-sdk-go/v2"
	"github.com/anthropics/anthropic-sdk-go/v2/option"

	"github.com/mcpbench/bench/llm"
)

// DefaultBaseURL is the Anthropic API. Unlike OpenAI's, it has no version
// path: the SDK appends "v1/messages".
const DefaultBaseURL = "https://api.anthropic.com"

// DefaultMaxTokens is sent when Sampling.MaxTokens is zero: the API
// requires a value.
const DefaultMaxTokens = 4096

// Options configure a Model. Nothing is read from the environment, profiles
// or credential files: the CLI passes ANTHROPIC_API_KEY and
// ANTHROPIC_BASE_URL in here.
type Options struct {
	// APIKey is sent the way SDK v2 sends it ("Authorization: Bearer"). It
	// never appears in an error.
	APIKey string
	// BaseURL defaults to DefaultBaseURL.
	BaseURL string
	// HTTPClient defaults to a new client using http.DefaultTransport.
	HTTPClient *http.Client
	// Retry is bench's retry policy; its zero value is the default. Its
	// AttemptTimeout bounds each HTTP request (the CLI's --request-timeout),
	// in place of the SDK's own timeout of a non-streaming request.
	Retry llm.RetryPolicy
}

// Model is a Messages API model.
type Model struct {
	model  string
	key    string
	retry  llm.RetryPolicy
	client ant.Client
}

var _ llm.Model = (*Model)(nil)

// New returns the Model named model. opts may be nil.
func New(model string, opts *Options) (*Model, error) {
	if model == "" {
		return nil, errors.New("anthropic: empty model name")
	}
	var o Options
	if opts != nil {
		o = *opts
	}
	if o.BaseURL == "" {
		o.BaseURL = DefaultBaseURL
	}
	if !strings.HasPrefix(o.BaseURL, "http://") && !strings.HasPrefix(o.BaseURL, "https://") {
		return nil, fmt.Errorf("anthropic: base URL %q: want http:// or https://", llm.Redact(o.BaseURL, o.APIKey))
	}
	if o.HTTPClient == nil {
		o.HTTPClient = &http.Client{}
	}
	ropts := []option.RequestOption{
		option.WithoutEnvironmentDefaults(),
		option.WithBaseURL(o.BaseURL),
		option.WithHTTPClient(o.HTTPClient),
		option.WithMaxRetries(0), // bench retries, and records each retry
	}
	if o.APIKey != "" {
		ropts = append(ropts, option.WithAPIKey(o.APIKey))
	}
	if o.Retry.AttemptTimeout > 0 {
		// The SDK bounds a non-streaming request by a time it derives
		// from max_tokens (10 minutes at most, and it refuses a larger
		// max_tokens) unless told a timeout: bench's bounds each attempt.
		ropts = append(ropts, option.WithRequestTimeout(o.Retry.AttemptTimeout))
	}
	retry := o.Retry
	retry.Provider = "anthropic"
	return &Model{model: model, key: o.APIKey, retry: retry, client: ant.NewClient(ropts...)}, nil
}

// Name returns "anthropic:MODEL".
func (m *Model) Name() string { return string(llm.ProviderAnthropic) + ":" + m.model }

// Generate sends req as one Messages call, retrying per the policy.
// Sampling.Seed is not sent: the Messages API has no seed. Temperature and
// top_p are set on the wire directly, since SDK v2 has no fields for them.
func (m *Model) Generate(ctx context.Context, req *llm.Request) (*llm.Response, error) {
	if err := req.Validate(); err != nil {
		return nil, fmt.Errorf("anthropic: invalid request: %w", err)
	}
	params, ropts, err := m.params(req)
	if err != nil {
		return nil, fmt.Errorf("anthropic: %w", err)
	}
	now := time.Now
	if m.retry.Now != nil {
		now = m.retry.Now
	}
	var out *ant.Message
	attempts, err := m.retry.Do(ctx, func(ctx context.Context) error {
		msg, err := m.client.Messages.New(ctx, params, ropts...)
		if err != nil {
			return m.convertError(ctx, err, now())
		}
		out = msg
		return nil
	})
	if err != nil {
		return nil, err
	}
	resp, err := response(out)
	if err != nil {
		return nil, llm.WithRetries(attempts, err)
	}
	resp.Retries = attempts
	return resp, nil
}

func (m *Model) params(req *llm.Request) (ant.MessageNewParams, []option.RequestOption, error) {
	p := ant.MessageNewParams{Model: ant.Model(m.model), MaxTokens: DefaultMaxTokens}
	if req.Sampling.MaxTokens > 0 {
		p.MaxTokens = int64(req.Sampling.MaxTokens)
	}
	if req.System != "" {
		p.System = []ant.TextBlockParam{{Text: req.System}}
	}
	// Tool results go back in a user turn. Consecutive messages of the same
	// wire role are merged, so three tool results become one user message
	// of three tool_result blocks, as the API expects.
	add := func(assistant bool, b ant.ContentBlockParamUnion) {
		if n := len(p.Messages); n > 0 {
			last := &p.Messages[n-1]
			if assistant && last.OfAssistant != nil {
				last.OfAssistant.Content = append(last.OfAssistant.Content, b)
				return
			}
			if !assistant && last.OfUser != nil {
				last.OfUser.Content = append(last.OfUser.Content, b)
				return
			}
		}
		if assistant {
			p.Messages = append(p.Messages, ant.NewAssistantMessage(b))
		} else {
			p.Messages = append(p.Messages, ant.NewUserMessage(b))
		}
	}
	for _, msg := range req.Messages {
		switch msg.Role {
		case llm.RoleUser:
			add(false, ant.NewTextBlock(msg.Content))
		case llm.RoleAssistant:
			if msg.Content != "" {
				add(true, ant.NewTextBlock(msg.Content))
			}
			for _, c := range msg.ToolCalls {
				args := c.Arguments
				if len(args) == 0 {
					args = json.RawMessage("{}")
				}
				add(true, ant.NewToolUseBlock(c.ID, args, c.Name))
			}
			if msg.Content == "" && len(msg.ToolCalls) == 0 {
				add(true, ant.NewTextBlock(""))
			}
		case llm.RoleTool:
			if msg.Content == "" { // the API refuses empty text blocks
				add(false, ant.ContentBlockParamUnion{OfToolResult: &ant.ToolResultBlockParam{ToolUseID: msg.ToolCallID, IsError: ant.Bool(msg.IsError)}})
			} else {
				add(false, ant.NewToolResultBlock(msg.ToolCallID, msg.Content, msg.IsError))
			}
		}
	}
	for _, t := range req.Tools {
		schema, err := llm.SchemaMembers(t.InputSchema)
		if err != nil {
			return p, nil, fmt.Errorf("tool %q: input schema: %w", t.Name, err)
		}
		is := ant.ToolInputSchemaParam{Properties: schema["properties"], ExtraFields: map[string]any{}}
		if raw, ok := schema["required"].(json.RawMessage); ok {
			// The SDK's typed field wants strings; a schema whose required
			// list is anything else is passed through as written.
			if err := json.Unmarshal(raw, &is.Required); err != nil {
				is.Required = nil
				is.ExtraFields["required"] = raw
			}
		}
		for k, v := range schema {
			if k != "properties" && k != "required" && k != "type" {
				is.ExtraFields[k] = v
			}
		}
		tp := &ant.ToolParam{Name: t.Name, InputSchema: is}
		if t.Description != "" {
			tp.Description = ant.String(t.Description)
		}
		p.Tools = append(p.Tools, ant.ToolUnionParam{OfTool: tp})
	}
	switch req.ToolChoice.Mode {
	case llm.ToolChoiceAuto:
		p.ToolChoice.OfAuto = &ant.ToolChoiceAutoParam{}
	case llm.ToolChoiceNone:
		p.ToolChoice.OfNone = &ant.ToolChoiceNoneParam{}
	case llm.ToolChoiceRequired:
		p.ToolChoice.OfAny = &ant.ToolChoiceAnyParam{}
	case llm.ToolChoiceTool:
		p.ToolChoice = ant.ToolChoiceParamOfTool(req.ToolChoice.Name)
	}
	var ropts []option.RequestOption
	if t := req.Sampling.Temperature; t != nil {
		ropts = append(ropts, option.WithJSONSet("temperature", *t))
	}
	if tp := req.Sampling.TopP; tp != nil {
		ropts = append(ropts, option.WithJSONSet("top_p", *tp))
	}
	return p, ropts, nil
}

func response(msg *ant.Message) (*llm.Response, error) {
	if msg == nil {
		return nil, errors.New("anthropic: empty response")
	}
	if msg.Type != "message" && msg.Type != "" {
		return nil, fmt.Errorf("anthropic: response has type %q, want message", msg.Type)
	}
	u := msg.Usage
	r := &llm.Response{
		Model: string(msg.Model),
		Usage: llm.Usage{
			// Anthropic's input_tokens excludes cache reads and writes.
			InputTokens:      u.InputTokens + u.CacheReadInputTokens + u.CacheCreationInputTokens,
			OutputTokens:     u.OutputTokens,
			CachedTokens:     u.CacheReadInputTokens,
			CacheWriteTokens: u.CacheCreationInputTokens,
		},
	}
	var texts []string
	for _, b := range msg.Content {
		switch b.Type {
		case "text":
			texts = append(texts, b.Text)
		case "tool_use":
			// A tool_use without a name is the model's malformed call (a
			// compatible server passing on what a small model wrote):
			// kept, for the agent to answer with an error.
			call := llm.ToolCall{ID: b.ID, Name: b.Name, Arguments: json.RawMessage("{}")}
			raw := strings.TrimSpace(string(b.Input))
			switch {
			case raw == "" || raw == "null":
			case llm.IsJSONObject([]byte(raw)):
				call.Arguments = json.RawMessage(raw)
			default:
				call.InvalidArguments = raw
			}
			r.ToolCalls = append(r.ToolCalls, call)
		}
		// thinking and server-tool blocks carry nothing bench scores.
	}
	r.Text = strings.Join(texts, "\n")
	switch msg.StopReason {
	case ant.StopReasonEndTurn, ant.StopReasonStopSequence:
		r.StopReason = llm.StopEndTurn
	case ant.StopReasonToolUse:
		r.StopReason = llm.StopToolUse
	case ant.StopReasonMaxTokens:
		r.StopReason = llm.StopMaxTokens
	case ant.StopReasonRefusal:
		r.StopReason = llm.StopRefusal
	default:
		r.StopReason = llm.StopOther
	}
	return r, nil
}

// convertError turns an SDK error into an *llm.APIError or an
// *llm.TransportError,
// with the API key redacted from every message.
func (m *Model) convertError(ctx context.Context, err error, now time.Time) error {
	if ctx.Err() != nil {
		return fmt.Errorf("anthropic: %w", ctx.Err())
	}
	var e *ant.Error
	if errors.As(err, &e) {
		msg := e.Message
		if msg == "" {
			msg = e.RawJSON()
		}
		ae := &llm.APIError{
			Provider:   "anthropic",
			StatusCode: e.StatusCode,
			Message:    llm.Truncate(llm.Redact(strings.TrimSpace(msg), m.key), 500),
		}
		if e.Response != nil {
			ae.RetryAfter = llm.ParseRetryAfter(e.Response.Header, now)
		}
		return ae
	}
	// Transport and decoding errors: keep the words, lose the key.
	return llm.NewTransportError("anthropic: messages: "+llm.Truncate(llm.Redact(err.Error(), m.key), 500), err)
}
