// Package openai is the llm.Model for OpenAI's Chat Completions API and any
// server compatible with it (vLLM, Ollama, LM Studio, OpenRouter, Azure's
// OpenAI endpoints). It wraps the official SDK, github.com/openai/openai-go;
// no SDK type leaves this package.
package openai

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"time"

	oai "github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"
	"github.com/openai/openai-go/v3/shared"

	"github.com/mcpbench/bench/llm"
)

// DefaultBaseURL is the OpenAI API. Like OPENAI_BASE_URL, a base URL includes
// the version path ("http://localhost:11434/v1"); "chat/completions" is
// appended to it.
const DefaultBaseURL = "https://api.openai.com/v1/"

// Options configure a Model. Nothing is read from the environment: the CLI
// passes OPENAI_API_KEY and OPENAI_BASE_URL in here.
type Options struct {
	// APIKey is sent as "Authorization: Bearer". It never appears in an
	// error. Empty sends no key (fine for local servers).
	APIKey string
	// BaseURL defaults to DefaultBaseURL.
	BaseURL string
	// HTTPClient defaults to a new client using http.DefaultTransport.
	HTTPClient *http.Client
	// Retry is bench's retry policy; its zero value is the default. Its
	// AttemptTimeout bounds each HTTP request (the CLI's --request-timeout).
	Retry llm.RetryPolicy
	// LegacyMaxTokens sends Sampling.MaxTokens as "max_tokens" instead of
	// "max_completion_tokens", for older OpenAI-compatible servers.
	LegacyMaxTokens bool
}

// Model is a chat-completions model.
type Model struct {
	model  string
	key    string
	retry  llm.RetryPolicy
	legacy bool
	svc    oai.ChatCompletionService
}

var _ llm.Model = (*Model)(nil)

// New returns the Model named model. opts may be nil.
func New(model string, opts *Options) (*Model, error) {
	if model == "" {
		return nil, errors.New("openai: empty model name")
	}
	var o Options
	if opts != nil {
		o = *opts
	}
	if o.BaseURL == "" {
		o.BaseURL = DefaultBaseURL
	}
	if !strings.HasPrefix(o.BaseURL, "http://") && !strings.HasPrefix(o.BaseURL, "https://") {
		return nil, fmt.Errorf("openai: base URL %q: want http:// or https://", llm.Redact(o.BaseURL, o.APIKey))
	}
	if o.HTTPClient == nil {
		o.HTTPClient = &http.Client{}
	}
	// The chat service is built directly rather than through oai.NewClient,
	// which would read OPENAI_* from the environment first.
	ropts := []option.RequestOption{
		option.WithBaseURL(o.BaseURL),
		option.WithHTTPClient(o.HTTPClient),
		option.WithMaxRetries(0), // bench retries, and records each retry
	}
	if o.APIKey != "" {
		ropts = append(ropts, option.WithAPIKey(o.APIKey))
	}
	retry := o.Retry
	retry.Provider = "openai"
	return &Model{
		model:  model,
		key:    o.APIKey,
		retry:  retry,
		legacy: o.LegacyMaxTokens,
		svc:    oai.NewChatCompletionService(ropts...),
	}, nil
}

// Name returns "openai:MODEL".
func (m *Model) Name() string { return string(llm.ProviderOpenAI) + ":" + m.model }

// Generate sends req as one chat completion, retrying per the policy.
func (m *Model) Generate(ctx context.Context, req *llm.Request) (*llm.Response, error) {
	if err := req.Validate(); err != nil {
		return nil, fmt.Errorf("openai: invalid request: %w", err)
	}
	params, err := m.params(req)
	if err != nil {
		return nil, fmt.Errorf("openai: %w", err)
	}
	now := time.Now
	if m.retry.Now != nil {
		now = m.retry.Now
	}
	var out *oai.ChatCompletion
	attempts, err := m.retry.Do(ctx, func(ctx context.Context) error {
		c, err := m.svc.New(ctx, params)
		if err != nil {
			return m.convertError(ctx, err, now())
		}
		out = c
		return nil
	})
	if err != nil {
		return nil, err
	}
	resp, err := m.response(out)
	if err != nil {
		return nil, llm.WithRetries(attempts, err)
	}
	resp.Retries = attempts
	return resp, nil
}

func (m *Model) params(req *llm.Request) (oai.ChatCompletionNewParams, error) {
	p := oai.ChatCompletionNewParams{Model: m.model}
	if req.System != "" {
		p.Messages = append(p.Messages, oai.SystemMessage(req.System))
	}
	for _, msg := range req.Messages {
		switch msg.Role {
		case llm.RoleUser:
			p.Messages = append(p.Messages, oai.UserMessage(msg.Content))
		case llm.RoleAssistant:
			a := oai.ChatCompletionAssistantMessageParam{}
			if msg.Content != "" {
				a.Content.OfString = oai.String(msg.Content)
			}
			for _, c := range msg.ToolCalls {
				args := string(c.Arguments)
				if c.InvalidArguments != "" {
					args = c.InvalidArguments // echo what the model really said
				} else if args == "" {
					args = "{}"
				}
				a.ToolCalls = append(a.ToolCalls, oai.ChatCompletionMessageToolCallUnionParam{
					OfFunction: &oai.ChatCompletionMessageFunctionToolCallParam{
						ID:       c.ID,
						Function: oai.ChatCompletionMessageFunctionToolCallFunctionParam{Name: c.Name, Arguments: args},
					},
				})
			}
			p.Messages = append(p.Messages, oai.ChatCompletionMessageParamUnion{OfAssistant: &a})
		case llm.RoleTool:
			// Chat Completions has no error flag on tool results; the
			// content says what went wrong.
			p.Messages = append(p.Messages, oai.ToolMessage(msg.Content, msg.ToolCallID))
		}
	}
	for _, t := range req.Tools {
		schema, err := llm.SchemaMembers(t.InputSchema)
		if err != nil {
			return p, fmt.Errorf("tool %q: input schema: %w", t.Name, err)
		}
		fd := shared.FunctionDefinitionParam{Name: t.Name, Parameters: shared.FunctionParameters(schema)}
		if t.Description != "" {
			fd.Description = oai.String(t.Description)
		}
		p.Tools = append(p.Tools, oai.ChatCompletionFunctionTool(fd))
	}
	switch req.ToolChoice.Mode {
	case llm.ToolChoiceAuto, llm.ToolChoiceNone, llm.ToolChoiceRequired:
		p.ToolChoice.OfAuto = oai.String(string(req.ToolChoice.Mode))
	case llm.ToolChoiceTool:
		p.ToolChoice.OfFunctionToolChoice = &oai.ChatCompletionNamedToolChoiceParam{
			Function: oai.ChatCompletionNamedToolChoiceFunctionParam{Name: req.ToolChoice.Name},
		}
	}
	s := req.Sampling
	if s.Temperature != nil {
		p.Temperature = oai.Float(*s.Temperature)
	}
	if s.TopP != nil {
		p.TopP = oai.Float(*s.TopP)
	}
	if s.Seed != nil {
		p.Seed = oai.Int(*s.Seed)
	}
	if s.MaxTokens > 0 {
		if m.legacy {
			p.MaxTokens = oai.Int(int64(s.MaxTokens))
		} else {
			p.MaxCompletionTokens = oai.Int(int64(s.MaxTokens))
		}
	}
	return p, nil
}

func (m *Model) response(c *oai.ChatCompletion) (*llm.Response, error) {
	if c == nil || len(c.Choices) == 0 {
		return nil, errors.New("openai: response has no choices")
	}
	ch := c.Choices[0]
	r := &llm.Response{
		Text:  ch.Message.Content,
		Model: c.Model,
		Usage: llm.Usage{
			InputTokens:      c.Usage.PromptTokens, // includes cached tokens
			OutputTokens:     c.Usage.CompletionTokens,
			CachedTokens:     c.Usage.PromptTokensDetails.CachedTokens,
			CacheWriteTokens: c.Usage.PromptTokensDetails.CacheWriteTokens,
		},
	}
	for i, tc := range ch.Message.ToolCalls {
		if tc.Type != "" && tc.Type != "function" {
			return nil, fmt.Errorf("openai: tool call %d has unsupported type %q", i, tc.Type)
		}
		// A call with no function name is the model's malformed call
		// (an OpenAI-compatible server passing on what a small model
		// wrote): kept, for the agent to answer with an error.
		call := llm.ToolCall{ID: tc.ID, Name: tc.Function.Name}
		raw := strings.TrimSpace(tc.Function.Arguments)
		switch {
		case raw == "":
			call.Arguments = json.RawMessage("{}")
		case llm.IsJSONObject([]byte(raw)):
			call.Arguments = json.RawMessage(raw)
		default:
			call.Arguments = json.RawMessage("{}")
			call.InvalidArguments = tc.Function.Arguments
		}
		r.ToolCalls = append(r.ToolCalls, call)
	}
	switch ch.FinishReason {
	case "stop":
		r.StopReason = llm.StopEndTurn
	case "tool_calls", "function_call":
		r.StopReason = llm.StopToolUse
	case "length":
		r.StopReason = llm.StopMaxTokens
	case "content_filter":
		r.StopReason = llm.StopRefusal
	default:
		r.StopReason = llm.StopOther
	}
	if r.Text == "" && ch.Message.Refusal != "" {
		r.Text = ch.Message.Refusal
		r.StopReason = llm.StopRefusal
	}
	return r, nil
}

// convertError turns an SDK error into an *llm.APIError or an
// *llm.TransportError,
// with the API key redacted from every message.
func (m *Model) convertError(ctx context.Context, err error, now time.Time) error {
	if ctx.Err() != nil {
		return fmt.Errorf("openai: %w", ctx.Err())
	}
	var e *oai.Error
	if errors.As(err, &e) {
		msg := e.Message
		if msg == "" {
			msg = e.RawJSON()
		}
		ae := &llm.APIError{
			Provider:   "openai",
			StatusCode: e.StatusCode,
			Message:    llm.Truncate(llm.Redact(strings.TrimSpace(msg), m.key), 500),
		}
		if e.Response != nil {
			ae.RetryAfter = llm.ParseRetryAfter(e.Response.Header, now)
		}
		return ae
	}
	// Transport and decoding errors: keep the words, lose the key.
	return llm.NewTransportError("openai: chat completion: "+llm.Truncate(llm.Redact(err.Error(), m.key), 500), err)
}
