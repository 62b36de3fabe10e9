package view

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"github.com/mcpbench/bench/internal/escape"
	"github.com/mcpbench/bench/llm"
	"github.com/mcpbench/bench/replayer"
	"github.com/mcpbench/bench/scoring"
	"github.com/mcpbench/bench/traces"
)

// Timeline is one run laid out for the page. Every string a server, a
// model or a pack wrote has been through escape.Text (or escape.Line).
type Timeline struct {
	ID       string       `json:"id"`
	Ref      string       `json:"ref,omitempty"`
	Manifest TimelineHead `json:"manifest"`
	// The fields are in the order a reader meets them, which is the
	// order Export names what it finds in them.
	Server *TimelineServer `json:"server,omitempty"`
	Items  []Item          `json:"items"`
	Answer *TimelineAnswer `json:"answer,omitempty"`
	Score  *TimelineScore  `json:"score,omitempty"`
	Safety []Finding       `json:"safety,omitempty"`
	Replay *TimelineReplay `json:"replay,omitempty"`
	// Judgements are LLM judges' gradings of the run.
	Judgements []TimelineJudgement `json:"judgements,omitempty"`
	// ReplayedAs is the run bench replay stored for this recording, when
	// the store holds one under replay/<ref>.
	ReplayedAs string `json:"replayed_as,omitempty"`
	// Steps are the run's comparable steps (scoring.Steps), from which a
	// bundle compares two runs without a server.
	Steps []scoring.RunStep `json:"steps"`
	// Truncated says that some payloads were cut to MaxPayload bytes.
	Truncated bool `json:"truncated,omitempty"`
}

// TimelineHead is the run's manifest as the page shows it.
type TimelineHead struct {
	Mode string `json:"mode"`
	// Set is the manifest's suite (the refs' first segment: golden,
	// pinned); Suite the scenario's (its intent family), when known.
	Set         string   `json:"set,omitempty"`
	Suite       string   `json:"suite,omitempty"`
	Scenario    string   `json:"scenario"`
	Server      string   `json:"server"`
	ServerSHA   string   `json:"server_sha,omitempty"`
	Model       string   `json:"model"`
	Provider    string   `json:"provider,omitempty"`
	Temperature *float64 `json:"temperature,omitempty"`
	Seed        int64    `json:"seed"`
	RunIndex    int      `json:"run_index"`
	Fixture     string   `json:"fixture,omitempty"`
	Harness     string   `json:"harness,omitempty"`
	Clock       string   `json:"clock,omitempty"`
	StartedAt   string   `json:"started_at,omitempty"`
	Outcome     string   `json:"outcome,omitempty"`
}

// TimelineScore is what scoring said of the run.
type TimelineScore struct {
	TaskSuccess     bool     `json:"task_success"`
	ToolSelection   bool     `json:"tool_selection"`
	ParamAcc        bool     `json:"param_acc"`
	SafetyFailure   bool     `json:"safety_failure"`
	InputTokens     int      `json:"input_tokens"`
	OutputTokens    int      `json:"output_tokens"`
	ToolDefTokens   int      `json:"tool_definition_tokens"`
	APICallCount    int      `json:"api_call_count"`
	APICallExcess   int      `json:"api_call_excess"`
	MissingAPICalls []string `json:"missing_api_calls,omitempty"`
	Errors          []string `json:"errors,omitempty"`
}

// Finding is a safety finding (scoring.SafetyFinding); Call is -1 for one
// of the whole run.
type Finding struct {
	Rule   string `json:"rule"`
	Call   int    `json:"call"`
	Detail string `json:"detail"`
}

// TimelineServer is what the server said at the handshake.
type TimelineServer struct {
	Protocol     string   `json:"protocol,omitempty"`
	Info         string   `json:"info,omitempty"`
	Instructions string   `json:"instructions,omitempty"`
	Isolation    string   `json:"isolation,omitempty"`
	Stderr       string   `json:"stderr,omitempty"`
	Tools        []string `json:"tools,omitempty"`
	ToolBytes    int      `json:"tool_bytes,omitempty"`
}

// Item is one block of the timeline: a model turn, a tool call (with the
// HTTP calls, elicitations and egress attempts it caused), the HTTP calls
// made before the first tool call (boot), or an error. AtUS is when it
// started, from the run's start, as the trace has it: the recorder stamps
// a turn and a tool call when they start and the fake Central an HTTP
// call when it serves it, each from the run's start.
type Item struct {
	Kind      string `json:"kind"` // turn | call | boot | error
	AtUS      int64  `json:"at_us"`
	LatencyUS int64  `json:"latency_us,omitempty"`
	Index     int    `json:"index"`

	// A turn.
	Tokens   *traces.Usage `json:"tokens,omitempty"` // as the turn recorded them: the one source of its tokens
	Text     string        `json:"text,omitempty"`
	Asks     []Ask         `json:"asks,omitempty"`
	Attempts int           `json:"attempts,omitempty"`
	Retries  []string      `json:"retries,omitempty"`

	// A call.
	Tool         string        `json:"tool,omitempty"`
	Arguments    string        `json:"arguments,omitempty"`
	Result       string        `json:"result,omitempty"`
	ResultBytes  int           `json:"result_bytes,omitempty"`
	IsError      bool          `json:"is_error,omitempty"`
	Invalid      string        `json:"invalid,omitempty"`
	HTTP         []HTTPCall    `json:"http,omitempty"`
	Elicitations []Elicitation `json:"elicitations,omitempty"`
	Egress       []string      `json:"egress,omitempty"`
	Safety       []Finding     `json:"safety,omitempty"`
	// Normalized are the profile's replacements in this event
	// (placeholder=original).
	Normalized []string `json:"normalized,omitempty"`

	// An error.
	ErrorKind string `json:"error_kind,omitempty"`
	Message   string `json:"message,omitempty"`
}

// Ask is a tool call a model turn asked for.
type Ask struct {
	Name      string `json:"name"`
	Arguments string `json:"arguments"`
}

// HTTPCall is one request the fake Central served.
type HTTPCall struct {
	Seq       int    `json:"seq"`
	AtUS      int64  `json:"at_us"`
	LatencyUS int64  `json:"latency_us,omitempty"`
	Method    string `json:"method"`
	Path      string `json:"path"`
	Status    int    `json:"status"`
	Class     string `json:"class"`
	Request   string `json:"request,omitempty"`
	Response  string `json:"response,omitempty"`
	Bytes     int    `json:"bytes"`
}

// Elicitation is a server's confirmation request and the answer.
type Elicitation struct {
	Message string `json:"message"`
	Schema  string `json:"schema,omitempty"`
	Action  string `json:"action"`
	Content string `json:"content,omitempty"`
}

// TimelineAnswer is the run's answer beside the scenario's result schema.
type TimelineAnswer struct {
	Result string `json:"result,omitempty"`
	Text   string `json:"text,omitempty"`
	Schema string `json:"schema,omitempty"`
	// Valid and Error are scoring's verdict on the answer against the
	// schema (Scored false: not scored).
	Scored bool   `json:"scored"`
	Valid  bool   `json:"valid"`
	Error  string `json:"error,omitempty"`
}

// TimelineReplay is what a replay run adds: the recording it replays, and
// the first miss with its explanation.
type TimelineReplay struct {
	Replays    string `json:"replays"`
	Recording  bool   `json:"recording"` // the page can show the recorded run (the store, or the bundle, holds it)
	MissTurn   int    `json:"miss_turn"` // -1: no miss
	Miss       string `json:"miss,omitempty"`
	MissSource string `json:"miss_source,omitempty"` // "requests" (both compared) or "error" (the replay's own words)
}

// MaxPayload bounds each payload a timeline shows (a tool result, an HTTP
// body); past it the payload keeps its start and says how long it was.
const MaxPayload = 16 << 10

// Timeline lays out the run id (a run ID or a ref of the store).
func (v *View) Timeline(s string) (*Timeline, error) {
	ix := v.cur()
	id, ref, err := ix.lookup(s)
	if err != nil {
		return nil, err
	}
	run, err := ix.store.GetRun(id)
	if err != nil {
		return nil, err
	}
	m, err := v.score(run)
	if err != nil {
		m = nil // shown unscored; the list's summary says why
	}
	t := v.timeline(run, ref, m)
	if run.Manifest.Replays != nil {
		t.Replay = v.replayOf(ix.store, run)
	}
	if i, ok := ix.byName["replay/"+ref]; ok && ref != "" {
		t.ReplayedAs = ix.rows[i].ID
	}
	if t.Judgements, err = v.judgements(ix, ref, id); err != nil {
		return nil, err
	}
	v.maskAll(t)
	return t, nil
}

// timeline builds the timeline of run, unmasked.
func (v *View) timeline(run *traces.Run, ref string, m *scoring.RunMetrics) *Timeline {
	mf := run.Manifest
	t := &Timeline{ID: mf.RunID.String(), Ref: ref, Items: []Item{}, Manifest: TimelineHead{
		Mode: string(mf.Mode), Set: line(mf.Suite), Scenario: line(mf.Scenario.ID), Server: line(mf.Server.Name),
		ServerSHA: line(mf.Server.SHA), Model: line(mf.Model.Name), Provider: line(mf.Model.Provider),
		Temperature: mf.Model.Temperature, Seed: mf.Model.Seed, RunIndex: mf.RunIndex, Fixture: line(mf.Fixture.Name),
		Harness: line(mf.Harness), Clock: line(mf.Clock), Outcome: line(string(mf.Outcome)),
	}}
	if sc := v.scenarios[mf.Scenario.ID]; sc != nil {
		t.Manifest.Suite = line(sc.Suite)
	}
	if !mf.StartedAt.IsZero() {
		t.Manifest.StartedAt = mf.StartedAt.UTC().Format(time.RFC3339)
	}
	byCall := map[int][]Finding{}
	if m != nil {
		t.Score = &TimelineScore{TaskSuccess: m.TaskSuccess, ToolSelection: m.ToolSelection, ParamAcc: m.ParamAcc,
			SafetyFailure: m.SafetyFailure, InputTokens: m.InputTokens, OutputTokens: m.OutputTokens,
			ToolDefTokens: m.ToolDefTokens, APICallCount: m.APICallCount, APICallExcess: m.APICallExcess,
			MissingAPICalls: lines(m.MissingAPICalls), Errors: lines(m.Errors)}
		for _, f := range m.Safety {
			x := Finding{Rule: f.Rule, Call: f.Call, Detail: line(f.Detail)}
			t.Safety = append(t.Safety, x)
			if f.Call >= 0 {
				byCall[f.Call] = append(byCall[f.Call], x)
			}
		}
	}
	// What a tool call caused (HTTP calls, elicitations, egress) names the
	// call's index; the trace places it before or after the call's own
	// event. First pass: lay out turns, calls and errors in order.
	calls := map[int]*Item{}
	var boot *Item
	for _, e := range run.Events {
		switch e.Kind {
		case traces.KindCall:
			c := e.Call
			it := Item{Kind: "call", Index: c.Index, AtUS: e.AtUS, LatencyUS: c.LatencyUS,
				Tool: line(c.Tool), Arguments: v.payload(t, c.Arguments), Result: v.payload(t, c.Result),
				ResultBytes: len(c.Result), IsError: c.IsError, Invalid: line(c.Invalid), Safety: byCall[c.Index],
				Normalized: normalized(e.Normalized)}
			t.Items = append(t.Items, it)
		case traces.KindTurn:
			tu := e.Turn
			var resp llm.Response
			json.Unmarshal(tu.Response, &resp)
			it := Item{Kind: "turn", Index: tu.Index, AtUS: e.AtUS, LatencyUS: tu.LatencyUS,
				Tokens: &tu.Usage,
				Text:   long(t, resp.Text), Attempts: tu.Attempts}
			for _, tc := range resp.ToolCalls {
				it.Asks = append(it.Asks, Ask{Name: line(tc.Name), Arguments: v.payload(t, tc.Arguments)})
			}
			for _, r := range tu.Retries {
				it.Retries = append(it.Retries, line(fmt.Sprintf("attempt %d: HTTP %d, waited %s: %s", r.Attempt, r.Status, time.Duration(r.WaitUS)*time.Microsecond, r.Error)))
			}
			t.Items = append(t.Items, it)
		case traces.KindError:
			t.Items = append(t.Items, Item{Kind: "error", AtUS: e.AtUS, ErrorKind: line(string(e.Error.Kind)), Message: long(t, e.Error.Message)})
		case traces.KindInitialize:
			in := e.Initialize
			if t.Server == nil {
				t.Server = &TimelineServer{}
			}
			t.Server.Protocol, t.Server.Info, t.Server.Instructions = line(in.ProtocolVersion), long(t, string(in.ServerInfo)), long(t, in.Instructions)
			t.Server.Isolation, t.Server.Stderr = line(in.Isolation), long(t, in.Stderr)
		case traces.KindTools:
			var tools []struct {
				Name string `json:"name"`
			}
			json.Unmarshal(e.Tools.Tools, &tools)
			if t.Server == nil {
				t.Server = &TimelineServer{}
			}
			for _, tl := range tools {
				t.Server.Tools = append(t.Server.Tools, line(tl.Name))
			}
			t.Server.ToolBytes = len(e.Tools.Tools)
		case traces.KindAnswer:
			a := e.Answer
			t.Answer = &TimelineAnswer{Result: v.payload(t, a.Result), Text: long(t, a.Text)}
		}
	}
	// Second pass: attach what each call caused (t.Items no longer grows
	// until the end); boot calls and a call no event names (the run ended
	// in it) become items of their own.
	for i := range t.Items {
		if t.Items[i].Kind == "call" {
			calls[t.Items[i].Index] = &t.Items[i]
		}
	}
	var extra []*Item
	for _, e := range run.Events {
		var target *Item
		var call int
		switch e.Kind {
		case traces.KindHTTP:
			call = e.HTTP.Call
		case traces.KindElicitation:
			call = e.Elicitation.Call
		case traces.KindEgress:
			call = e.Egress.Call
		default:
			continue
		}
		if e.Kind == traces.KindHTTP && (e.HTTP.Boot || call < 0) {
			if boot == nil {
				boot = &Item{Kind: "boot", AtUS: e.AtUS, Index: -1}
				extra = append(extra, boot)
			}
			target = boot
		} else if it, ok := calls[call]; ok {
			target = it
		} else {
			target = &Item{Kind: "call", Index: call, AtUS: e.AtUS, Tool: "(no call event: the run ended in it)"}
			extra = append(extra, target)
			calls[call] = target
		}
		switch e.Kind {
		case traces.KindHTTP:
			h := e.HTTP
			p := h.Path
			if h.Query != "" {
				p += "?" + h.Query
			}
			target.HTTP = append(target.HTTP, HTTPCall{Seq: h.Seq, AtUS: e.AtUS, LatencyUS: h.LatencyUS,
				Method: line(h.Method), Path: line(p), Status: h.Status, Class: line(h.Class),
				Request: v.payload(t, h.RequestBody), Response: v.payload(t, h.ResponseBody), Bytes: len(h.ResponseBody)})
		case traces.KindElicitation:
			el := e.Elicitation
			target.Elicitations = append(target.Elicitations, Elicitation{Message: long(t, el.Message), Schema: v.payload(t, el.Schema),
				Action: line(el.Action), Content: v.payload(t, el.Content)})
		case traces.KindEgress:
			target.Egress = append(target.Egress, line(e.Egress.Host))
		}
	}
	// Boot calls and calls the run ended in go where they happened.
	for _, it := range extra {
		t.Items = insertByTime(t.Items, *it)
	}
	if t.Answer != nil || len(run.Events) > 0 {
		if sc := v.scenarios[mf.Scenario.ID]; sc != nil && sc.ResultSchema != nil {
			if t.Answer == nil {
				t.Answer = &TimelineAnswer{}
			}
			b, _ := json.MarshalIndent(sc.ResultSchema, "", "  ")
			t.Answer.Schema = text(string(b))
		}
		if t.Answer != nil && m != nil {
			t.Answer.Scored, t.Answer.Valid, t.Answer.Error = true, m.ResultValid, line(m.ResultError)
		}
	}
	for _, st := range scoring.Steps(run) {
		t.Steps = append(t.Steps, scoring.RunStep{Kind: st.Kind, Text: line(st.Text)})
	}
	return t
}

// insertByTime puts it before the first item that starts after it.
func insertByTime(items []Item, it Item) []Item {
	for i, x := range items {
		if x.AtUS > it.AtUS {
			return append(items[:i], append([]Item{it}, items[i:]...)...)
		}
	}
	return append(items, it)
}

// replayOf explains the first miss of a replay run: recorded and live
// requests compared component by component when the replay stored the
// live request (lenient and live modes), else the replay's own error.
func (v *View) replayOf(st Store, run *traces.Run) *TimelineReplay {
	r := &TimelineReplay{Replays: run.Manifest.Replays.String(), MissTurn: -1}
	rec, err := st.GetRun(*run.Manifest.Replays)
	if err == nil {
		r.Recording = true
		recTurns, liveTurns := turns(rec), turns(run)
		for i, lt := range liveTurns {
			if i >= len(recTurns) || lt.Key == recTurns[i].Key {
				if i >= len(recTurns) {
					r.MissTurn, r.MissSource = i, "requests"
					r.Miss = fmt.Sprintf("turn %d: the recording has no such turn (it ended after %d)", i, len(recTurns))
					break
				}
				continue
			}
			var a, b llm.Request
			if json.Unmarshal(recTurns[i].Request, &a) == nil && json.Unmarshal(lt.Request, &b) == nil {
				if diffs, err := replayer.Explain(&a, &b); err == nil && len(diffs) > 0 {
					miss := replayer.Miss{Turn: i, Differences: diffs}
					r.MissTurn, r.Miss, r.MissSource = i, text(fmt.Sprintf("turn %d: %s", i, miss.Explain())), "requests"
				}
			}
			break
		}
	}
	if r.MissTurn < 0 {
		for _, e := range run.Events {
			if e.Kind == traces.KindError && strings.HasPrefix(e.Error.Message, "replay miss at ") {
				msg := strings.TrimPrefix(e.Error.Message, "replay miss at ")
				var turn int
				fmt.Sscanf(msg, "turn %d:", &turn)
				r.MissTurn, r.MissSource = turn, "error"
				r.Miss = text(strings.ReplaceAll(msg, " | ", "\n  "))
				break
			}
		}
	}
	return r
}

func turns(run *traces.Run) []*traces.Turn {
	var out []*traces.Turn
	for _, e := range run.Events {
		if e.Kind == traces.KindTurn {
			out = append(out, e.Turn)
		}
	}
	return out
}

// payload shows a JSON payload indented, escaped, and cut at MaxPayload.
func (v *View) payload(t *Timeline, b json.RawMessage) string {
	if len(b) == 0 {
		return ""
	}
	var out bytes.Buffer
	if json.Indent(&out, b, "", "  ") != nil {
		out.Reset()
		out.Write(b)
	}
	return cut(t, out.String(), b)
}

// long shows a text a server or a model wrote (instructions, stderr, a
// turn's text, an error), escaped and cut at MaxPayload.
func long(t *Timeline, s string) string { return cut(t, s, []byte(s)) }

// cut cuts s, the shown form of orig, at MaxPayload, and escapes it.
func cut(t *Timeline, s string, orig []byte) string {
	if len(s) > MaxPayload {
		t.Truncated = true
		n := MaxPayload
		for n > 0 && s[n]&0xc0 == 0x80 { // not inside a UTF-8 sequence
			n--
		}
		s = fmt.Sprintf("%s\n… (%d bytes in all, sha256:%s)", s[:n], len(orig), traces.Hash(orig).Short())
	}
	return text(s)
}

func normalized(ns []traces.Normalized) []string {
	var out []string
	for _, n := range ns {
		b, _ := json.Marshal(n)
		out = append(out, line(string(b)))
	}
	return out
}

func line(s string) string { return escape.Line(s) }
func text(s string) string { return escape.Text(s) }

func lines(ss []string) []string {
	var out []string
	for _, s := range ss {
		out = append(out, line(s))
	}
	return out
}
