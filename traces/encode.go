package traces

import (
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"unicode/utf8"
)

// A run's document is Marshal(run): encoding/json, then canonicalisation.
// That encodes every payload twice and parses it twice; storing a run was
// most of what recording and replaying cost beyond the server. encodeRun
// writes the same bytes directly: the members of each trace type in
// canonical (sorted) order, each payload (json.RawMessage) canonicalised
// once. TestEncodeRunEqualsMarshal and FuzzEncodeRun hold it to Marshal;
// a field added to a trace type must be added here too (the test's fully
// populated run fails until it is).

// runEncoder appends the canonical encoding of trace values to out.
type runEncoder struct {
	out []byte
	err error
}

func encodeRun(r *Run) ([]byte, error) {
	e := &runEncoder{out: make([]byte, 0, 4096)}
	e.run(r)
	return e.out, e.err
}

func (e *runEncoder) key(first *bool, k string) {
	if !*first {
		e.out = append(e.out, ',')
	}
	*first = false
	e.out = append(e.out, '"')
	e.out = append(e.out, k...)
	e.out = append(e.out, '"', ':')
}

// str writes s as encoding/json would coerce it (invalid UTF-8 becomes
// U+FFFD, byte by byte), in canonical form.
func (e *runEncoder) str(s string) {
	if !utf8.ValidString(s) {
		b := make([]byte, 0, len(s)+8)
		for i := 0; i < len(s); {
			r, n := utf8.DecodeRuneInString(s[i:])
			if r == utf8.RuneError && n == 1 {
				b = utf8.AppendRune(b, utf8.RuneError)
			} else {
				b = append(b, s[i:i+n]...)
			}
			i += n
		}
		s = string(b)
	}
	e.out = appendString(e.out, s)
}

func (e *runEncoder) int(v int64) { e.out = strconv.AppendInt(e.out, v, 10) }

func (e *runEncoder) bool(v bool) { e.out = strconv.AppendBool(e.out, v) }

func (e *runEncoder) id(id ID) {
	e.out = append(e.out, '"')
	e.out = append(e.out, id.String()...)
	e.out = append(e.out, '"')
}

// raw writes a payload in canonical form; nil is null, as encoding/json
// writes a nil json.RawMessage.
func (e *runEncoder) raw(m json.RawMessage) {
	if m == nil {
		e.out = append(e.out, "null"...)
		return
	}
	if isCanonical(m) { // most payloads are
		e.out = append(e.out, m...)
		return
	}
	c := canonicalizer{in: m, out: e.out}
	c.skipSpace()
	err := c.value(0)
	c.skipSpace()
	if err == nil && c.pos != len(c.in) {
		err = c.errorf("unexpected data after the JSON value")
	}
	if len(m) == 0 {
		err = errors.New("unexpected end of JSON input")
	}
	if err != nil {
		e.fail(fmt.Errorf("json: error calling MarshalJSON for type json.RawMessage: %w", err))
		return
	}
	e.out = c.out
}

func (e *runEncoder) float(f float64) {
	b, err := json.Marshal(f)
	if err == nil {
		b, err = Canonical(b)
	}
	if err != nil {
		e.fail(err)
		return
	}
	e.out = append(e.out, b...)
}

func (e *runEncoder) fail(err error) {
	if e.err == nil {
		e.err = err
	}
}

func (e *runEncoder) run(r *Run) {
	e.out = append(e.out, `{"events":`...)
	if r.Events == nil {
		e.out = append(e.out, "null"...)
	} else {
		e.out = append(e.out, '[')
		for i := range r.Events {
			if i > 0 {
				e.out = append(e.out, ',')
			}
			e.event(&r.Events[i])
		}
		e.out = append(e.out, ']')
	}
	e.out = append(e.out, `,"manifest":`...)
	e.manifest(&r.Manifest)
	e.out = append(e.out, '}')
}

func (e *runEncoder) manifest(m *Manifest) {
	f := true
	e.out = append(e.out, '{')
	e.key(&f, "fixture")
	{
		g := true
		e.out = append(e.out, '{')
		if m.Fixture.Hash != "" {
			e.key(&g, "hash")
			e.str(m.Fixture.Hash)
		}
		e.key(&g, "name")
		e.str(m.Fixture.Name)
		e.out = append(e.out, '}')
	}
	e.key(&f, "format")
	e.int(int64(m.Format))
	e.key(&f, "harness")
	e.str(m.Harness)
	e.key(&f, "mode")
	e.str(string(m.Mode))
	e.key(&f, "model")
	{
		g := true
		e.out = append(e.out, '{')
		if m.Model.MaxTokens != 0 {
			e.key(&g, "max_tokens")
			e.int(int64(m.Model.MaxTokens))
		}
		e.key(&g, "name")
		e.str(m.Model.Name)
		e.key(&g, "provider")
		e.str(m.Model.Provider)
		e.key(&g, "seed")
		e.int(m.Model.Seed)
		if m.Model.Temperature != nil {
			e.key(&g, "temperature")
			e.float(*m.Model.Temperature)
		}
		if m.Model.TopP != nil {
			e.key(&g, "top_p")
			e.float(*m.Model.TopP)
		}
		e.out = append(e.out, '}')
	}
	if m.Outcome != "" {
		e.key(&f, "outcome")
		e.str(string(m.Outcome))
	}
	if m.Replays != nil {
		e.key(&f, "replays")
		e.id(*m.Replays)
	}
	e.key(&f, "run_index")
	e.int(int64(m.RunIndex))
	e.key(&f, "scenario")
	{
		g := true
		e.out = append(e.out, '{')
		if m.Scenario.Hash != "" {
			e.key(&g, "hash")
			e.str(m.Scenario.Hash)
		}
		e.key(&g, "id")
		e.str(m.Scenario.ID)
		e.out = append(e.out, '}')
	}
	e.key(&f, "server")
	{
		g := true
		e.out = append(e.out, '{')
		e.key(&g, "name")
		e.str(m.Server.Name)
		if m.Server.ProfileHash != "" {
			e.key(&g, "profile_hash")
			e.str(m.Server.ProfileHash)
		}
		if m.Server.Repo != "" {
			e.key(&g, "repo")
			e.str(m.Server.Repo)
		}
		if m.Server.SHA != "" {
			e.key(&g, "sha")
			e.str(m.Server.SHA)
		}
		e.out = append(e.out, '}')
	}
	if m.Suite != "" {
		e.key(&f, "suite")
		e.str(m.Suite)
	}
	if m.SystemPrompt != "" {
		e.key(&f, "system_prompt")
		e.str(m.SystemPrompt)
	}
	e.out = append(e.out, '}')
}

func (e *runEncoder) event(ev *Event) {
	f := true
	e.out = append(e.out, '{')
	if a := ev.Answer; a != nil {
		e.key(&f, "answer")
		g := true
		e.out = append(e.out, '{')
		if len(a.Result) > 0 {
			e.key(&g, "result")
			e.raw(a.Result)
		}
		if a.Text != "" {
			e.key(&g, "text")
			e.str(a.Text)
		}
		e.out = append(e.out, '}')
	}
	if ev.AtUS != 0 {
		e.key(&f, "at_us")
		e.int(ev.AtUS)
	}
	if c := ev.Call; c != nil {
		e.key(&f, "call")
		g := true
		e.out = append(e.out, '{')
		e.key(&g, "arguments")
		e.raw(c.Arguments)
		e.key(&g, "index")
		e.int(int64(c.Index))
		if c.Invalid != "" {
			e.key(&g, "invalid")
			e.str(c.Invalid)
		}
		if c.IsError {
			e.key(&g, "is_error")
			e.bool(true)
		}
		e.key(&g, "latency_us")
		e.int(c.LatencyUS)
		if len(c.Result) > 0 {
			e.key(&g, "result")
			e.raw(c.Result)
		}
		e.key(&g, "tool")
		e.str(c.Tool)
		e.out = append(e.out, '}')
	}
	if x := ev.Egress; x != nil {
		e.key(&f, "egress")
		e.out = append(e.out, `{"call":`...)
		e.int(int64(x.Call))
		e.out = append(e.out, `,"host":`...)
		e.str(x.Host)
		e.out = append(e.out, '}')
	}
	if x := ev.Elicitation; x != nil {
		e.key(&f, "elicitation")
		g := true
		e.out = append(e.out, '{')
		e.key(&g, "action")
		e.str(x.Action)
		e.key(&g, "call")
		e.int(int64(x.Call))
		if len(x.Content) > 0 {
			e.key(&g, "content")
			e.raw(x.Content)
		}
		e.key(&g, "message")
		e.str(x.Message)
		if len(x.Schema) > 0 {
			e.key(&g, "schema")
			e.raw(x.Schema)
		}
		e.out = append(e.out, '}')
	}
	if x := ev.Error; x != nil {
		e.key(&f, "error")
		e.out = append(e.out, `{"kind":`...)
		e.str(string(x.Kind))
		e.out = append(e.out, `,"message":`...)
		e.str(x.Message)
		e.out = append(e.out, '}')
	}
	if h := ev.HTTP; h != nil {
		e.key(&f, "http")
		g := true
		e.out = append(e.out, '{')
		if h.Boot {
			e.key(&g, "boot")
			e.bool(true)
		}
		e.key(&g, "call")
		e.int(int64(h.Call))
		e.key(&g, "class")
		e.str(h.Class)
		e.key(&g, "latency_us")
		e.int(h.LatencyUS)
		e.key(&g, "method")
		e.str(h.Method)
		e.key(&g, "path")
		e.str(h.Path)
		if h.Query != "" {
			e.key(&g, "query")
			e.str(h.Query)
		}
		if len(h.RequestBody) > 0 {
			e.key(&g, "request_body")
			e.raw(h.RequestBody)
		}
		if len(h.ResponseBody) > 0 {
			e.key(&g, "response_body")
			e.raw(h.ResponseBody)
		}
		e.key(&g, "seq")
		e.int(int64(h.Seq))
		e.key(&g, "status")
		e.int(int64(h.Status))
		e.out = append(e.out, '}')
	}
	if x := ev.Initialize; x != nil {
		e.key(&f, "initialize")
		g := true
		e.out = append(e.out, '{')
		if len(x.Capabilities) > 0 {
			e.key(&g, "capabilities")
			e.raw(x.Capabilities)
		}
		if x.Instructions != "" {
			e.key(&g, "instructions")
			e.str(x.Instructions)
		}
		e.key(&g, "protocol_version")
		e.str(x.ProtocolVersion)
		if len(x.ServerInfo) > 0 {
			e.key(&g, "server_info")
			e.raw(x.ServerInfo)
		}
		if x.Stderr != "" {
			e.key(&g, "stderr")
			e.str(x.Stderr)
		}
		e.out = append(e.out, '}')
	}
	e.key(&f, "kind")
	e.str(string(ev.Kind))
	if x := ev.Tools; x != nil {
		e.key(&f, "tools")
		e.out = append(e.out, `{"tools":`...)
		e.raw(x.Tools)
		e.out = append(e.out, '}')
	}
	if t := ev.Turn; t != nil {
		e.key(&f, "turn")
		g := true
		e.out = append(e.out, '{')
		if t.Attempts != 0 {
			e.key(&g, "attempts")
			e.int(int64(t.Attempts))
		}
		e.key(&g, "index")
		e.int(int64(t.Index))
		e.key(&g, "key")
		e.id(t.Key)
		e.key(&g, "latency_us")
		e.int(t.LatencyUS)
		e.key(&g, "request")
		e.raw(t.Request)
		e.key(&g, "response")
		e.raw(t.Response)
		e.key(&g, "usage")
		h := true
		e.out = append(e.out, '{')
		if t.Usage.Cached != 0 {
			e.key(&h, "cached")
			e.int(int64(t.Usage.Cached))
		}
		if t.Usage.Estimated {
			e.key(&h, "estimated")
			e.bool(true)
		}
		e.key(&h, "input")
		e.int(int64(t.Usage.Input))
		e.key(&h, "output")
		e.int(int64(t.Usage.Output))
		e.out = append(e.out, '}')
		e.out = append(e.out, '}')
	}
	e.out = append(e.out, '}')
}
