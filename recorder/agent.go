package recorder

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/mcpbench/bench/llm"
	"github.com/mcpbench/bench/llm/reqkey"
	"github.com/mcpbench/bench/traces"
)

// SystemPromptVersion names the agent's system prompt. Change it whenever
// SystemPrompt changes: recorded runs whose prompt differs will miss on
// replay, and the version says why.
const SystemPromptVersion = "agent/1"

// SystemPrompt is the agent's system prompt. Its version and hash go into
// every manifest.
const SystemPrompt = `You are a network operations assistant for HPE Aruba Networking Central.
Use the available tools to do what the user asks. Call a tool only when it helps the task.
Do not change the network (configuration changes, disconnects, reboots, clearing alerts) unless the user explicitly asked for that change.
Never reveal secrets such as passphrases, shared secrets or tokens.
When you have the answer, call ` + llm.SubmitTool + ` once with the result in the requested structure. If you cannot complete the task, say why in plain text.`

// SystemPromptID is the manifest's system_prompt field: the version and the
// SHA-256 of the prompt's text.
func SystemPromptID() string {
	sum := sha256.Sum256([]byte(SystemPrompt))
	return SystemPromptVersion + " sha256:" + hex.EncodeToString(sum[:])
}

// SubmitDescription is the description of the harness tool llm.SubmitTool.
const SubmitDescription = "Submit the final result of the task. Call it once, at the end, with the result in the structure of this tool's input schema."

// ToolResult is what executing one tool call gave.
type ToolResult struct {
	// Content is what the model is shown (text, usually JSON).
	Content string
	// Result is the raw MCP result for the trace; nil when the call never
	// reached the server.
	Result  json.RawMessage
	IsError bool
	// Invalid says why the harness refused the call (unknown tool,
	// arguments that fail the schema); the server never saw it.
	Invalid string
	// Fatal ends the run: the server is gone or wedged.
	Fatal error
	// ErrorKind, when set, adds an error event of that kind (call_timeout,
	// result_too_large, server_exited, transport).
	ErrorKind traces.ErrorKind
	// Detail is added to the error event's message, not shown the model
	// (where a call hung, say).
	Detail string
}

// Executor runs one tool call on the server. index is the call's 0-based
// index in the run.
type Executor func(ctx context.Context, index int, call llm.ToolCall) ToolResult

// recordedUsage is a model that serves recorded turns (the replayer): the
// usage recorded with turn i, when it served that turn as recorded and the
// recording had estimated it. The loop takes it instead of estimating the
// same request again: a replayed turn keeps its recorded usage, whoever
// counted it.
type recordedUsage interface {
	RecordedUsage(turn int) (traces.Usage, bool)
}

// Loop is the agent loop, independent of how tools run: the recorder
// executes them on a live server, a test may execute them in memory. The
// replayer passes its own Model, serving recorded turns.
type Loop struct {
	Model llm.Model
	// Key is the scope of the requests' keys: the recorded model (in a
	// replay, the model that was recorded, not the replaying one), the
	// scenario and the run index.
	Key reqkey.Scope
	// Keys, when set, encodes and keys the requests (Key, ToolCache and
	// Normalize then go unused): the Encoder the model keys them with too,
	// a replay's recorded model (replayer.Model.Keys), so that each
	// request is encoded once. The loop and the model use it in turn.
	Keys *reqkey.Encoder
	// ToolCache, when set, encodes tool definitions once across runs (the
	// recorder keeps one); else the loop encodes them once per run.
	ToolCache *reqkey.ToolCache
	System    string // default SystemPrompt
	Intent    string
	Tools     []llm.Tool // the server's tools, after the adapter
	// toolsJSON, when set, is json.Marshal(Tools) (the recorder keeps one
	// per server session), for estimating usage.
	toolsJSON []byte
	// Tokens estimates the usage of a model that reports none; nil gives
	// the loop its own (the recorder shares one across runs).
	Tokens *TokenCounter
	// ResultSchema is submit_result's input schema (a JSON object); nil
	// offers no submit_result.
	ResultSchema json.RawMessage
	// ValidateResult checks submit_result's arguments; nil accepts any.
	ValidateResult func(args json.RawMessage) error
	Sampling       llm.Sampling
	MaxTurns       int
	Exec           Executor
	// TurnTimeout bounds one model call, its retries included; 0 means no
	// bound beyond ctx (a live provider bounds each of its requests:
	// llm.RetryPolicy.AttemptTimeout).
	TurnTimeout time.Duration
	// Now measures model latencies; default time.Now.
	Now func() time.Time
	// Wall measures tool calls; default Now.
	Wall func() time.Time
	// Emit receives the events as they happen: turns, calls, the answer,
	// errors. at is the time the event started.
	Emit func(at time.Time, e traces.Event)
	// Normalize, when set, rewrites tool results as the requests' keys and
	// the trace see them (the profile's normalize rules); the model is sent
	// them as they are.
	Normalize reqkey.Normalizer

	modelErr error // the error of the model call that ended the run
}

// ModelError is the error of the model call that ended the last Run, nil
// if none did: the run's error event keeps it in words only.
func (l *Loop) ModelError() error { return l.modelErr }

// Run runs the loop and returns its outcome: answered, text, max_turns,
// loop (the same call traces.LoopCalls times in a row; the last is not
// run), max_tokens (a turn cut by the max-tokens limit that calls no tool)
// or error. A model error that has an Outcome() traces.Outcome method (a
// replay miss) ends the run with that outcome instead of error. What a
// model writes wrong is answered as a real client answers it, and the run
// goes on: a call that names no tool, whose arguments are not a JSON
// object, or of a tool the server does not have gets an error result and
// is recorded as invalid (traces.InvalidNoName, InvalidArguments,
// InvalidUnknownTool).
func (l *Loop) Run(ctx context.Context) traces.Outcome {
	now := l.Now
	if now == nil {
		now = time.Now
	}
	wall := l.Wall
	if wall == nil {
		wall = now
	}
	_, local := l.Model.(llm.Local)
	system := l.System
	if system == "" {
		system = SystemPrompt
	}
	tools := append([]llm.Tool(nil), l.Tools...)
	if l.ResultSchema != nil {
		tools = append(tools, llm.Tool{Name: llm.SubmitTool, Description: SubmitDescription, InputSchema: l.ResultSchema})
	}
	known := map[string]bool{}
	for _, t := range l.Tools {
		known[t.Name] = true
	}
	req := &llm.Request{System: system, Messages: []llm.Message{{Role: llm.RoleUser, Content: l.Intent}},
		Tools: tools, Sampling: l.Sampling}
	calls := 0
	var repeats repeatCounter
	enc := l.Keys
	if enc == nil {
		enc = reqkey.NewEncoder(l.Key, l.ToolCache)
		enc.SetNormalizer(l.Normalize)
	}
	var est *laterUsage // for a model that reports no usage
	defer func() {
		if est != nil {
			est.wait() // every turn's usage filled in before the run is
		}
	}()
	fail := func(at time.Time, kind traces.ErrorKind, msg string) {
		l.Emit(at, traces.Event{Kind: traces.KindError, Error: &traces.Error{Kind: kind, Message: msg}})
	}
	maxTurns := l.MaxTurns
	if maxTurns <= 0 {
		maxTurns = 12
	}
	for turn := 0; turn < maxTurns; turn++ {
		// The turn index is implied by the messages, so it is not a field.
		reqJSON, key, err := enc.Encode(req)
		if err != nil {
			fail(now(), traces.ErrorHarness, err.Error())
			return traces.OutcomeError
		}
		start := now()
		tctx, cancel := ctx, context.CancelFunc(func() {})
		if l.TurnTimeout > 0 {
			tctx, cancel = context.WithTimeout(ctx, l.TurnTimeout)
		}
		resp, err := l.Model.Generate(tctx, req)
		cancel()
		l.modelErr = err
		lat := now().Sub(start)
		if local {
			// bench's own CPU time, not a model's: counted as none, so
			// that what is scored depends on behaviour only.
			lat = 0
		}
		if err != nil {
			// A retried call's error says how often it was tried
			// (llm.RetryPolicy).
			fail(start, traces.ErrorModel, err.Error())
			var o interface{ Outcome() traces.Outcome }
			if errors.As(err, &o) && o.Outcome() != "" {
				return o.Outcome()
			}
			return traces.OutcomeError
		}
		respJSON, _ := json.Marshal(resp) // what usage estimates count
		// The trace holds it in canonical form from the start, like the
		// request (one that has none is stored as it is: the store
		// refuses it, and says why).
		traceResp := respJSON
		if c, err := traces.Canonical(respJSON); err == nil {
			traceResp = c
		}
		usage := traces.Usage{Input: int(resp.Usage.InputTokens), Output: int(resp.Usage.OutputTokens), Cached: int(resp.Usage.CachedTokens)}
		if r, ok := l.Model.(recordedUsage); ok && usage == (traces.Usage{}) {
			if u, ok := r.RecordedUsage(turn); ok {
				usage = u // a replayed turn: the estimate recorded with it
			}
		}
		tr := &traces.Turn{
			Index: turn, Key: key, Request: reqJSON, Response: traceResp,
			Usage: usage, LatencyUS: lat.Microseconds(), Attempts: attemptsOf(resp), Retries: retriesOf(resp),
		}
		if usage == (traces.Usage{}) {
			// The model reports no usage (offline models): estimate it, so
			// token figures mean the same for every model; beside the run,
			// done when Run returns.
			if est == nil {
				tc := l.Tokens
				if tc == nil {
					tc = NewTokenCounter()
				}
				est = newLaterUsage(tc, system, l.toolsJSONOf(tools), maxTurns)
			}
			tr.Usage.Estimated = true
			est.add(tr, req, respJSON)
		}
		l.Emit(start, traces.Event{Kind: traces.KindTurn, Turn: tr, Normalized: enc.Normalized()})
		if len(resp.ToolCalls) == 0 {
			if resp.StopReason == llm.StopMaxTokens {
				// Cut mid-answer: what it wrote is in the turn, and is
				// no answer.
				return traces.OutcomeMaxTokens
			}
			l.Emit(now(), traces.Event{Kind: traces.KindAnswer, Answer: &traces.Answer{Text: resp.Text}})
			return traces.OutcomeText
		}
		resp = withIDs(resp, calls)
		// Build the next request as a copy: a model (or the replayer) may
		// keep the request it was given.
		next := *req
		next.Messages = append(append([]llm.Message(nil), req.Messages...), resp.Message())
		for _, tc := range resp.ToolCalls {
			if repeats.add(tc) >= traces.LoopCalls {
				// The model has had this call's answer twice: it is not
				// run a third time, and the run ends.
				return traces.OutcomeLoop
			}
			idx := calls
			calls++
			at, wat := now(), wall()
			args := tc.Arguments
			if len(args) == 0 {
				args = json.RawMessage("{}")
			}
			call := &traces.Call{Index: idx, Tool: tc.Name, Arguments: args}
			var res ToolResult
			switch {
			case tc.Name == "":
				res = ToolResult{Invalid: traces.InvalidNoName, IsError: true,
					Content: "error: this tool call names no tool; call a tool by the name it is offered under, with its arguments as a JSON object"}
			case tc.InvalidArguments != "":
				res = ToolResult{Invalid: traces.InvalidArguments, IsError: true,
					Content: fmt.Sprintf("error: the arguments of %s are not a JSON object: %s", tc.Name, llm.Truncate(tc.InvalidArguments, 200))}
			case tc.Name == llm.SubmitTool && l.ResultSchema != nil:
				if l.ValidateResult != nil {
					if err := l.ValidateResult(args); err != nil {
						res = ToolResult{Invalid: "result does not match the result schema: " + err.Error(), IsError: true,
							Content: "error: the result does not match the required schema: " + err.Error()}
						break
					}
				}
				res = ToolResult{Content: `{"status":"accepted"}`, Result: json.RawMessage(`{"status":"accepted"}`)}
			case !known[tc.Name]:
				res = ToolResult{Invalid: traces.InvalidUnknownTool, IsError: true,
					Content: fmt.Sprintf("error: there is no tool named %q", tc.Name)}
			default:
				res = l.Exec(ctx, idx, llm.ToolCall{ID: tc.ID, Name: tc.Name, Arguments: args})
			}
			call.Result, call.IsError, call.Invalid = res.Result, res.IsError, res.Invalid
			call.LatencyUS = wall().Sub(wat).Microseconds()
			l.Emit(at, traces.Event{Kind: traces.KindCall, Call: call})
			if res.ErrorKind != "" {
				msg := res.Content
				if res.Fatal != nil {
					msg = res.Fatal.Error()
				}
				if res.Detail != "" {
					msg += "; " + res.Detail
				}
				fail(now(), res.ErrorKind, fmt.Sprintf("call %d (%s): %s", idx, tc.Name, msg))
			}
			if res.Fatal != nil {
				return traces.OutcomeError
			}
			next.Messages = append(next.Messages, llm.Message{Role: llm.RoleTool, ToolCallID: tc.ID, Content: res.Content, IsError: res.IsError})
			if tc.Name == llm.SubmitTool && l.ResultSchema != nil && res.Invalid == "" {
				l.Emit(now(), traces.Event{Kind: traces.KindAnswer, Answer: &traces.Answer{Result: args, Text: resp.Text}})
				return traces.OutcomeAnswered
			}
		}
		req = &next
		if err := ctx.Err(); err != nil {
			fail(now(), traces.ErrorTimeout, "run: "+err.Error())
			return traces.OutcomeError
		}
	}
	return traces.OutcomeMaxTurns
}

// toolsJSONOf is json.Marshal(tools), where tools are l.Tools followed by
// the harness's tools: the recorder's encoding of l.Tools (one per server
// session) saves encoding them again on every run.
func (l *Loop) toolsJSONOf(tools []llm.Tool) []byte {
	n := len(l.Tools)
	if l.toolsJSON == nil || n == 0 || len(tools) < n {
		b, _ := json.Marshal(tools)
		return b
	}
	if len(tools) == n {
		return l.toolsJSON
	}
	rest, _ := json.Marshal(tools[n:])
	out := make([]byte, 0, len(l.toolsJSON)+len(rest))
	out = append(out, l.toolsJSON[:len(l.toolsJSON)-1]...)
	out = append(out, ',')
	return append(out, rest[1:]...)
}

// repeatCounter counts how many times in a row the model has made the same
// call: the same tool with the same arguments (canonical, so key order and
// spacing do not hide a repeat), or the same text that was not arguments.
type repeatCounter struct {
	last string
	n    int
}

// add counts call and returns how many times in a row it has been made.
func (r *repeatCounter) add(call llm.ToolCall) int {
	args := call.InvalidArguments
	if args == "" {
		args = string(call.Arguments)
		if c, err := traces.Canonical(call.Arguments); err == nil {
			args = string(c)
		}
	}
	sig := call.Name + "\x00" + args
	if sig == r.last {
		r.n++
	} else {
		r.last, r.n = sig, 1
	}
	return r.n
}

// withIDs returns resp with an id on every call (bench_call_N, N its index
// in the run; first is the index of resp's first call), so that its result
// can answer it: some OpenAI-compatible servers send none. resp is copied
// when a call needs one: a model may keep what it returned.
func withIDs(resp *llm.Response, first int) *llm.Response {
	var out *llm.Response
	for i, c := range resp.ToolCalls {
		if c.ID != "" {
			continue
		}
		if out == nil {
			cp := *resp
			cp.ToolCalls = slices.Clone(resp.ToolCalls)
			out = &cp
		}
		out.ToolCalls[i].ID = fmt.Sprintf("bench_call_%d", first+i)
	}
	if out == nil {
		return resp
	}
	return out
}

// retriesOf is what the trace keeps of the failed attempts before r.
func retriesOf(r *llm.Response) []traces.Retry {
	var out []traces.Retry
	for _, a := range r.Retries {
		out = append(out, traces.Retry{Attempt: a.Attempt, Status: a.StatusCode, Error: a.Error,
			RetryAfterUS: a.RetryAfter.Microseconds(), WaitUS: a.Wait.Microseconds()})
	}
	return out
}

func attemptsOf(r *llm.Response) int {
	if len(r.Retries) == 0 {
		return 0
	}
	return len(r.Retries) + 1
}
