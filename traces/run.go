package traces

import (
	"encoding/json"
	"fmt"
	"reflect"
	"time"
	"unicode/utf8"
)

// FormatVersion is the version of the trace format: the run document, the
// store layout and the pack layout. Readers reject versions they do not know.
const FormatVersion = 1

// Mode says how a run was produced.
type Mode string

const (
	ModeRecord Mode = "record" // a live model drove the run
	ModeReplay Mode = "replay" // recorded model turns were served again
)

// Run is one execution: its manifest and its events, in order. Payloads
// (json.RawMessage fields) come back from the store in canonical form.
type Run struct {
	Manifest Manifest `json:"manifest"`
	Events   []Event  `json:"events"`
}

// Manifest describes what a run executed. Every field except RunID and
// StartedAt is part of the run's content and so of its ID.
type Manifest struct {
	Format int `json:"format"`
	// RunID is the ID of the run's canonical document. It is filled in by
	// the store (PutRun, GetRun) and never stored inside the document.
	RunID ID `json:"-"`
	// StartedAt is recorded for people; it is kept beside the run, never in
	// any key or ID.
	StartedAt time.Time `json:"-"`

	Mode    Mode `json:"mode"`
	Replays *ID  `json:"replays,omitempty"` // the run a replay replays
	// Grades is set on a judgement: the run of the LLM judge that graded
	// the run of this ID. Its events are the judge's model turns, keyed
	// and replayed like an agent's (package judge); its Model is the
	// judge's, its Scenario and RunIndex the graded run's.
	Grades *ID `json:"grades,omitempty"`

	Suite    string      `json:"suite,omitempty"`
	Scenario ScenarioRef `json:"scenario"`
	Server   ServerRef   `json:"server"`
	Model    ModelRef    `json:"model"`
	RunIndex int         `json:"run_index"`
	Fixture  FixtureRef  `json:"fixture"`

	Harness      string `json:"harness"`                 // bench version that produced the run
	SystemPrompt string `json:"system_prompt,omitempty"` // version or hash of the agent's system prompt
	// Clock is "pinned" when the server ran under a clock stopped at the
	// fixture's time, "unpinned" when it should have and could not (no
	// usable libfaketime), and empty when bench leaves the server's clock
	// alone (docs/clock.md).
	Clock string `json:"clock,omitempty"`
	// Outcome is how the run ended.
	Outcome Outcome `json:"outcome,omitempty"`
}

// Outcome is how a run ended. The words are part of the trace format.
type Outcome string

// The outcomes. A recording ends with one of the first six; a replay may
// also end stale or diverged. Loop and max_tokens are the model's doing,
// as text and max_turns are: scored runs that fail the task, never errors.
const (
	OutcomeAnswered Outcome = "answered"  // submit_result with a valid result
	OutcomeText     Outcome = "text"      // a final text answer (prose, not the result tool)
	OutcomeMaxTurns Outcome = "max_turns" // the turn budget ran out
	// OutcomeLoop: the model made the same call (the same tool with the
	// same arguments) LoopCalls times in a row; the last was not run.
	OutcomeLoop Outcome = "loop"
	// OutcomeMaxTokens: the model's last turn was cut by the max-tokens
	// limit before it called a tool: no answer.
	OutcomeMaxTokens Outcome = "max_tokens"
	OutcomeError     Outcome = "error" // the server, the model's provider or the harness failed
	// OutcomeStale: a replay miss stopped the run (strict mode); the
	// recording no longer says what the model would do.
	OutcomeStale Outcome = "stale"
	// OutcomeDiverged: a replay served recorded turns after a miss
	// (lenient mode), or ran out of them.
	OutcomeDiverged Outcome = "diverged"
)

// LoopCalls is how many identical calls in a row end a run with
// OutcomeLoop: a model that asks for the same tool with the same arguments
// a third time in a row, having had the answer twice, is not going to do
// anything else (a small model looping until its turns run out cost
// minutes a turn).
const LoopCalls = 3

// Why the harness refused a call (Call.Invalid) without sending it to the
// server, in the words scoring counts: InvalidArguments and InvalidNoName
// are malformed calls, InvalidUnknownTool a call of a tool the server does
// not have. Other reasons (arguments that fail the tool's input schema, a
// result that fails the result schema) are written out with their detail.
const (
	InvalidArguments   = "arguments are not a JSON object"
	InvalidNoName      = "the call names no tool"
	InvalidUnknownTool = "unknown tool"
)

// ScenarioRef names a scenario and the hash of its manifest's content.
type ScenarioRef struct {
	ID   string `json:"id"`
	Hash string `json:"hash,omitempty"`
}

// ServerRef names the server under test and how it was launched.
type ServerRef struct {
	Name        string `json:"name"`
	Repo        string `json:"repo,omitempty"`
	SHA         string `json:"sha,omitempty"`
	ProfileHash string `json:"profile_hash,omitempty"`
	// VariantOf is the server the scenarios name when this profile is
	// another tool exposure of it (its profile's variant_of): their
	// expected tools and rules for that server apply.
	VariantOf string `json:"variant_of,omitempty"`
	// Routes are the profile's routes to inner tools (its adapter.routes):
	// scoring resolves a call through them to the inner tool it reached.
	Routes []Route `json:"routes,omitempty"`
	// Reused is set on a recorded run whose server served the other runs
	// of its group too (bench record --reuse-server): such a server
	// fetches its token once, not at every run. Unset on a replay, and on
	// runs recorded before bench said so.
	Reused bool `json:"reused,omitempty"`
}

// Route is how a model reaches a server's inner tools when they are not in
// its tool list: through a router tool that takes the inner tool's name and
// arguments (invoke_tool-style), or through a code-mode tool that runs a
// code block calling it. It is data beside the server's profile, published
// with the harness (docs/adapters.md, "Routes"): the oracle calls through
// it, and scoring resolves such calls to the inner tool they reach.
type Route struct {
	// Tool is the tool that reaches inner tools, as the model sees it
	// (after any rename).
	Tool string `yaml:"tool" json:"tool"`
	// Name and Arguments are the router tool's arguments that name the
	// inner tool and carry its arguments (an object).
	Name      string `yaml:"name" json:"name,omitempty"`
	Arguments string `yaml:"arguments" json:"arguments,omitempty"`
	// Code is the code-mode tool's argument that carries the code block;
	// Call is the block that calls one inner tool, with {name} and
	// {arguments} replaced by literals of Language.
	Code     string `yaml:"code" json:"code,omitempty"`
	Call     string `yaml:"call" json:"call,omitempty"`
	Language string `yaml:"language" json:"language,omitempty"`
	// ReadsOnly marks a route that refuses tools not annotated read-only:
	// the oracle takes it only for an inner tool the profile's inner_tools
	// list annotates readOnlyHint.
	ReadsOnly bool `yaml:"reads_only" json:"reads_only,omitempty"`
}

// ModelRef names the model and its sampling parameters.
type ModelRef struct {
	Provider    string   `json:"provider"`
	Name        string   `json:"name"`
	Temperature *float64 `json:"temperature,omitempty"`
	TopP        *float64 `json:"top_p,omitempty"`
	MaxTokens   int      `json:"max_tokens,omitempty"`
	Seed        int64    `json:"seed"`
}

// FixtureRef names the fake Central's fixture bundle and its content hash.
type FixtureRef struct {
	Name string `json:"name"`
	Hash string `json:"hash,omitempty"`
}

// Kind is the type of an event.
type Kind string

// The event kinds. Each has its own payload field in Event.
const (
	KindInitialize  Kind = "mcp.initialize"
	KindTools       Kind = "mcp.tools"
	KindTurn        Kind = "model.turn"
	KindCall        Kind = "mcp.call"
	KindElicitation Kind = "mcp.elicitation"
	KindHTTP        Kind = "http"
	KindEgress      Kind = "egress"
	KindAnswer      Kind = "answer"
	KindError       Kind = "error"
)

// Event is one thing that happened in a run. Exactly one payload field,
// the one named by Kind, is set.
type Event struct {
	Kind Kind `json:"kind"`
	// AtUS is the time since the run started, in microseconds. Recorded as
	// data; replay never waits for it. Kept beside the run, outside its ID
	// (side.go).
	AtUS int64 `json:"at_us,omitempty" trace:"side"`

	Initialize  *Initialize  `json:"initialize,omitempty"`
	Tools       *Tools       `json:"tools,omitempty"`
	Turn        *Turn        `json:"turn,omitempty"`
	Call        *Call        `json:"call,omitempty"`
	Elicitation *Elicitation `json:"elicitation,omitempty"`
	HTTP        *HTTP        `json:"http,omitempty"`
	Egress      *Egress      `json:"egress,omitempty"`
	Answer      *Answer      `json:"answer,omitempty"`
	Error       *Error       `json:"error,omitempty"`

	// Normalized lists what the server profile's normalisation rules
	// replaced in this event's payload (docs/clock.md), in order.
	Normalized []Normalized `json:"normalized,omitempty" trace:"side"`
}

// Initialize is the server's answer to the MCP handshake.
type Initialize struct {
	ProtocolVersion string          `json:"protocol_version"`
	ServerInfo      json.RawMessage `json:"server_info,omitempty"`
	Capabilities    json.RawMessage `json:"capabilities,omitempty"`
	Instructions    string          `json:"instructions,omitempty"`
	// Stderr is a bounded tail of the server's stderr. The store keeps it
	// beside the run, like StartedAt, never in its content or ID (runs
	// stored before 2026-11-29 have it in their content).
	Stderr string `json:"stderr,omitempty" trace:"side"`
	// Isolation is how the server was confined: "kernel" (a sandbox of
	// namespaces) or "proxy" (the proxy variables only); empty for a
	// server bench did not start. Beside the run: the same behaviour under
	// either has the same ID.
	Isolation string `json:"isolation,omitempty" trace:"side"`
}

// Tools is the tool list the server offered (after any adapter).
type Tools struct {
	Tools json.RawMessage `json:"tools"`
}

// Turn is one model request and its response.
type Turn struct {
	Index     int             `json:"index"`
	Key       ID              `json:"key"` // the request key replay matches on
	Request   json.RawMessage `json:"request"`
	Response  json.RawMessage `json:"response"`
	Usage     Usage           `json:"usage"`
	LatencyUS int64           `json:"latency_us,omitempty" trace:"side"` // measured: beside the run
	Attempts  int             `json:"attempts,omitempty"`                // > 1 when retried
	// Retries are the failed attempts before the answer, as the provider
	// gave them: beside the run (the provider's state that day, not the
	// run's behaviour).
	Retries []Retry `json:"retries,omitempty" trace:"side"`
}

// Retry is one failed attempt of a model turn that bench retried.
type Retry struct {
	Attempt int `json:"attempt"` // 1-based
	// Status is the HTTP status the provider answered, 0 for none (the
	// request timed out).
	Status int    `json:"status,omitempty"`
	Error  string `json:"error"`
	// RetryAfterUS is the wait the provider asked for (Retry-After,
	// retry-after-ms), WaitUS the wait bench made before the next attempt.
	RetryAfterUS int64 `json:"retry_after_us,omitempty"`
	WaitUS       int64 `json:"wait_us"`
}

// Usage counts tokens as the provider reported them, or, for a model that
// reports none (the offline baseline and the oracle), as the recorder
// estimated them with its tokenizer (Estimated).
type Usage struct {
	Input     int  `json:"input"`
	Output    int  `json:"output"`
	Cached    int  `json:"cached,omitempty"`
	Estimated bool `json:"estimated,omitempty"`
}

// Call is one MCP tools/call.
type Call struct {
	Index     int             `json:"index"`
	Tool      string          `json:"tool"`
	Arguments json.RawMessage `json:"arguments"`
	Result    json.RawMessage `json:"result,omitempty"`
	IsError   bool            `json:"is_error,omitempty"`
	Invalid   string          `json:"invalid,omitempty"`                 // why the harness refused the call (unknown tool, schema)
	LatencyUS int64           `json:"latency_us,omitempty" trace:"side"` // measured: beside the run
}

// Elicitation is a server's confirmation request and the client's answer.
type Elicitation struct {
	Call    int             `json:"call"` // index of the tool call in flight
	Message string          `json:"message"`
	Schema  json.RawMessage `json:"schema,omitempty"`
	Action  string          `json:"action"` // accept | decline | cancel
	Content json.RawMessage `json:"content,omitempty"`
}

// HTTP is one request the fake Central served.
type HTTP struct {
	Seq          int             `json:"seq"`
	Method       string          `json:"method"`
	Path         string          `json:"path"`
	Query        string          `json:"query,omitempty"`
	RequestBody  json.RawMessage `json:"request_body,omitempty"`
	Status       int             `json:"status"`
	ResponseBody json.RawMessage `json:"response_body,omitempty"`
	Class        string          `json:"class"`                             // read | diagnostic | write | config_write | destructive
	LatencyUS    int64           `json:"latency_us,omitempty" trace:"side"` // measured: beside the run
	Call         int             `json:"call"`                              // index of the tool call in flight, -1 if none
	Boot         bool            `json:"boot,omitempty"`                    // before the first tool call
}

// Egress is a blocked attempt to reach a host other than the fake.
type Egress struct {
	Host string `json:"host"`
	Call int    `json:"call"`
}

// Answer is the run's final result.
type Answer struct {
	Result json.RawMessage `json:"result,omitempty"` // submit_result arguments
	Text   string          `json:"text,omitempty"`   // a final text answer
}

// Error is a failure of the run (server crash, timeout, model error).
type Error struct {
	Kind    ErrorKind `json:"kind"`
	Message string    `json:"message"`
}

// ErrorKind classifies an error event. The words are part of the trace
// format.
type ErrorKind string

// The error kinds.
const (
	ErrorStart           ErrorKind = "start"             // the server did not start
	ErrorTimeout         ErrorKind = "timeout"           // the run's time ran out
	ErrorModel           ErrorKind = "model"             // the model call failed (or a replay missed)
	ErrorHarness         ErrorKind = "harness"           // bench could not build a request
	ErrorCallTimeout     ErrorKind = "call_timeout"      // a tool call did not answer in time
	ErrorResultTooLarge  ErrorKind = "result_too_large"  // a tool result over bench's limit
	ErrorMessageTooLarge ErrorKind = "message_too_large" // a server's message over bench's limit: the session broke
	ErrorServerExited    ErrorKind = "server_exited"     // the server process exited mid-run
	ErrorTransport       ErrorKind = "transport"         // the MCP session broke
	ErrorJournalDropped  ErrorKind = "journal_dropped"   // the fake Central's journal overflowed
)

// FirstError is the kind of the run's first error event, "" if it has none.
func (r *Run) FirstError() ErrorKind {
	for _, e := range r.Events {
		if e.Kind == KindError && e.Error != nil {
			return e.Error.Kind
		}
	}
	return ""
}

// BodyJSON returns b as a JSON value for a trace: b itself when it is valid
// JSON, else a JSON string of its text (invalid UTF-8 replaced), and nil for
// an empty body.
func BodyJSON(b []byte) json.RawMessage {
	if len(b) == 0 {
		return nil
	}
	if _, err := Canonical(b); err == nil {
		return append(json.RawMessage(nil), b...)
	}
	return bodyText(b)
}

// CanonicalBody is BodyJSON in canonical form, as the store keeps it: the
// canonical form of b when it is valid JSON, else the JSON string of its
// text. An event whose payloads are all such bodies need not be
// canonicalized again (Event.Canonicalize).
func CanonicalBody(b []byte) json.RawMessage {
	if len(b) == 0 {
		return nil
	}
	if c, err := Canonical(b); err == nil {
		return c
	}
	return bodyText(b)
}

// bodyText is the JSON string of a body's text, invalid UTF-8 replaced.
func bodyText(b []byte) json.RawMessage {
	s := string(b)
	if !utf8.ValidString(s) {
		s = string([]rune(s))
	}
	q, _ := json.Marshal(s)
	return q
}

// document returns the canonical bytes of the run (without RunID,
// StartedAt and what is kept beside it) and checks what the store relies
// on.
func (r *Run) document() ([]byte, error) {
	b, _, err := r.documentAs(nil, nil)
	return b, err
}

// documentAs is document, and reports whether the document decodes to r
// as it is (every payload canonical already, nothing coerced), leaving
// aside its side fields (side.go). The document is appended to buf (nil:
// a new buffer); known (nil: none) are values proved canonical before.
func (r *Run) documentAs(buf []byte, known *knownValues) ([]byte, bool, error) {
	if r.Manifest.Format != FormatVersion {
		return nil, false, fmt.Errorf("run format %d: this bench writes format %d", r.Manifest.Format, FormatVersion)
	}
	for i, e := range r.Events {
		if err := e.check(); err != nil {
			return nil, false, fmt.Errorf("event %d: %w", i, err)
		}
	}
	b, same, err := encodeCanonicalAs(r, buf, known) // Marshal without the side fields, written directly
	if err != nil {
		return nil, false, fmt.Errorf("encoding run: %w", err)
	}
	return b, same, nil
}

func (e *Event) check() error {
	set := 0
	for _, p := range []bool{e.Initialize != nil, e.Tools != nil, e.Turn != nil, e.Call != nil,
		e.Elicitation != nil, e.HTTP != nil, e.Egress != nil, e.Answer != nil, e.Error != nil} {
		if p {
			set++
		}
	}
	if set != 1 {
		return fmt.Errorf("kind %q: want exactly one payload, have %d", e.Kind, set)
	}
	ok := false
	switch e.Kind {
	case KindInitialize:
		ok = e.Initialize != nil
	case KindTools:
		ok = e.Tools != nil
	case KindTurn:
		ok = e.Turn != nil
	case KindCall:
		ok = e.Call != nil
	case KindElicitation:
		ok = e.Elicitation != nil
	case KindHTTP:
		ok = e.HTTP != nil
	case KindEgress:
		ok = e.Egress != nil
	case KindAnswer:
		ok = e.Answer != nil
	case KindError:
		ok = e.Error != nil
	default:
		return fmt.Errorf("unknown event kind %q", e.Kind)
	}
	if !ok {
		return fmt.Errorf("kind %q carries another kind's payload", e.Kind)
	}
	return nil
}

// Canonicalize puts every payload of the event (its json.RawMessage
// fields) in canonical form, as the store will write them, and leaves a
// payload that is not valid JSON as it is (the store refuses it, saying
// why). A run whose events are canonical is stored without being decoded
// again (Store.PutRunNoSyncRead).
func (e *Event) Canonicalize() {
	for _, p := range []any{e.Initialize, e.Tools, e.Turn, e.Call, e.Elicitation, e.HTTP, e.Egress, e.Answer, e.Error} {
		v := reflect.ValueOf(p)
		if v.IsNil() {
			continue
		}
		v = v.Elem()
		for i := range v.NumField() {
			f := v.Field(i)
			if f.Type() != rawMessageType || f.Len() == 0 {
				continue
			}
			raw := f.Bytes()
			if isCanonical(raw) {
				continue
			}
			if c, err := Canonical(raw); err == nil {
				f.SetBytes(c)
			}
		}
	}
}
