package replayer

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"sync"
	"time"

	"github.com/mcpbench/bench/llm"
	"github.com/mcpbench/bench/llm/reqkey"
	"github.com/mcpbench/bench/traces"
)

// Mode says what a miss does.
type Mode string

// The modes.
const (
	// Strict stops the run at the first miss with outcome "stale": the
	// recording no longer says what the model would do. The default.
	Strict Mode = "strict"
	// Lenient serves recorded turn i anyway and marks the run diverged at
	// its first miss; a run that goes on past the recording ends there.
	Lenient Mode = "lenient"
	// Live asks Options.Live from the first miss on: a new episode.
	Live Mode = "live"
)

// ParseMode checks a mode's spelling; "" is Strict.
func ParseMode(s string) (Mode, error) {
	switch Mode(s) {
	case "":
		return Strict, nil
	case Strict, Lenient, Live:
		return Mode(s), nil
	}
	return "", fmt.Errorf("replay mode %q: want strict, lenient or live", s)
}

// Options configure a Model. A nil *Options means the defaults.
type Options struct {
	// Mode is what a miss does. Default Strict.
	Mode Mode
	// Live answers from the first miss on in Live mode. Required there.
	Live llm.Model
	// Clock, when set, is moved by each served turn's recorded latency,
	// paused while the model is asked and resumed when its answer goes
	// back to the loop. Default none.
	Clock *Clock
	// ToolCache, when set, is shared by the request keys of many Models
	// (the tool list of a server is then encoded once, not once per run).
	// Default: the Model's own.
	ToolCache *reqkey.ToolCache
	// Normalize is the server profile's normalizer of tool results
	// (recorder.Profile.Normalizer): the live requests are keyed under it,
	// as the recording keyed its own. Default none.
	Normalize reqkey.Normalizer
}

// recordedTurn is one model.turn of the recorded run, decoded.
type recordedTurn struct {
	key      traces.ID
	request  json.RawMessage
	response llm.Response
	latency  time.Duration
	usage    traces.Usage // as recorded: the provider's, or bench's estimate
	hit      bool         // served to a request of the recorded key
}

// Model is an llm.Model that serves the model turns of one recorded run.
// It is used for one replay of that run; it is safe for concurrent use but
// a loop calls it turn after turn.
type Model struct {
	name  string
	opts  Options
	turns []recordedTurn

	mu         sync.Mutex
	keys       *reqkey.Encoder // the live requests' keys, as the recording computed its own
	next       int             // index of the next Generate call
	misses     []Miss
	divergedAt int // first miss served anyway (Lenient), -1 if none
	live       bool
	served     int
	// recordedErr is the first error of a recorded run that ended in an
	// error, nil otherwise.
	recordedErr *traces.Error
}

// New returns a Model serving run's turns. Turns are matched by position:
// the i-th model.turn event of run is turn i.
func New(run *traces.Run, o *Options) (*Model, error) {
	rec, err := Parse(run)
	if err != nil {
		return nil, err
	}
	return rec.Model(o)
}

// Recorded is a recorded run's model turns decoded for serving: what New
// reads of the run, worked out once and apart from the replay (a batch
// decodes the next run's turns while the run before executes).
type Recorded struct {
	man   traces.Manifest
	turns []recordedTurn
	// err is the first error of a recorded run that ended in an error,
	// nil otherwise.
	err *traces.Error
}

// Parse decodes run's model turns for Recorded.Model.
func Parse(run *traces.Run) (*Recorded, error) {
	if run == nil {
		return nil, errors.New("replayer: nil run")
	}
	r := &Recorded{man: run.Manifest}
	for i, e := range run.Events {
		if e.Kind != traces.KindTurn || e.Turn == nil {
			continue
		}
		t := recordedTurn{key: e.Turn.Key, request: e.Turn.Request, latency: time.Duration(e.Turn.LatencyUS) * time.Microsecond, usage: e.Turn.Usage}
		if err := json.Unmarshal(e.Turn.Response, &t.response); err != nil {
			return nil, fmt.Errorf("replayer: run %s event %d: response of turn %d: %w", run.Manifest.RunID.Short(), i, e.Turn.Index, err)
		}
		r.turns = append(r.turns, t)
	}
	if run.Manifest.Outcome == traces.OutcomeError {
		r.err = &traces.Error{Kind: traces.ErrorHarness, Message: "no error event"}
		for _, e := range run.Events {
			if e.Kind == traces.KindError && e.Error != nil {
				r.err = e.Error
				break
			}
		}
	}
	return r, nil
}

// Model returns a Model serving the recorded turns, as New does. Each
// Model has its own copy of the turns' state: a Recorded may serve more
// than one.
func (r *Recorded) Model(o *Options) (*Model, error) {
	var opts Options
	if o != nil {
		opts = *o
	}
	if opts.Mode == "" {
		opts.Mode = Strict
	}
	if _, err := ParseMode(string(opts.Mode)); err != nil {
		return nil, err
	}
	if opts.Mode == Live && opts.Live == nil {
		return nil, errors.New("replayer: live mode needs a live model")
	}
	man := r.man
	scope := reqkey.Scope{Provider: man.Model.Provider, Model: man.Model.Name, Scenario: man.Scenario.ID, RunIndex: man.RunIndex}
	m := &Model{name: man.Model.Name, opts: opts, keys: reqkey.NewEncoder(scope, opts.ToolCache), divergedAt: -1,
		turns: slices.Clone(r.turns), recordedErr: r.err}
	m.keys.SetNormalizer(opts.Normalize)
	return m, nil
}

// RecordedError is the error Generate returns when it is asked for a turn
// past the last of a recorded run that ended in an error: the replay ends
// where the recording did, with an error, and is no miss.
type RecordedError struct {
	Turn int
	// Recorded is the recorded run's first error.
	Recorded traces.Error
}

func (e *RecordedError) Error() string {
	return fmt.Sprintf("replay turn %d: the recording ended here in an error (%s: %s)", e.Turn, e.Recorded.Kind, e.Recorded.Message)
}

// Outcome is the outcome the run ends with: error, as the recording's.
func (e *RecordedError) Outcome() traces.Outcome { return traces.OutcomeError }

// RecordedError reports whether the recorded run ended in an error.
func (m *Model) RecordedError() bool { return m.recordedErr != nil }

// Keys is the Encoder the model keys requests with, for the agent loop
// to encode them with (recorder.Job.Keys): each request is then encoded
// once, its keying in Generate answered from the Encoder's memo. It is not
// safe for concurrent use: the loop uses it between the model's turns.
func (m *Model) Keys() *reqkey.Encoder { return m.keys }

// Name is the recorded model's name: request keys and reports name the
// model that answered, not the replay.
func (m *Model) Name() string { return m.name }

// Turns is the number of recorded turns.
func (m *Model) Turns() int { return len(m.turns) }

// MissError is the error Generate returns when a miss stops the run. Its
// Outcome is the run's outcome: "stale" in Strict mode, "diverged" when a
// lenient replay has nothing left to serve.
type MissError struct {
	Miss    Miss
	outcome traces.Outcome
}

func (e *MissError) Error() string { return "replay miss at " + e.Miss.Summary() }

// Outcome is the outcome the run ends with.
func (e *MissError) Outcome() traces.Outcome { return e.outcome }

// Generate answers turn i (the i-th call) with recorded turn i when the
// key of req (in the recorded run's scope: its model, scenario and run
// index) is the recorded turn's, and handles a miss by the mode.
func (m *Model) Generate(ctx context.Context, req *llm.Request) (*llm.Response, error) {
	m.opts.Clock.Pause()
	m.mu.Lock()
	i := m.next
	m.next++
	live := m.live
	key, err := m.keys.Key(req)
	m.mu.Unlock()
	if err != nil {
		return nil, fmt.Errorf("replay turn %d: %w", i, err)
	}
	if live {
		return m.generateLive(ctx, req)
	}
	var rec *recordedTurn
	if i < len(m.turns) {
		rec = &m.turns[i]
	}
	if rec != nil && key == rec.key {
		m.mu.Lock()
		rec.hit = true
		m.mu.Unlock()
		return m.serve(rec), nil
	}
	if rec == nil && i == len(m.turns) && m.recordedErr != nil {
		return nil, &RecordedError{Turn: i, Recorded: *m.recordedErr}
	}
	miss, err := m.explain(i, rec, req, key)
	if err != nil {
		return nil, fmt.Errorf("replay turn %d: %w", i, err)
	}
	m.mu.Lock()
	m.misses = append(m.misses, *miss)
	m.mu.Unlock()
	switch m.opts.Mode {
	case Lenient:
		if rec == nil {
			return nil, &MissError{Miss: *miss, outcome: traces.OutcomeDiverged}
		}
		m.mu.Lock()
		if m.divergedAt < 0 {
			m.divergedAt = i
		}
		m.mu.Unlock()
		return m.serve(rec), nil
	case Live:
		m.mu.Lock()
		m.live = true
		m.mu.Unlock()
		return m.generateLive(ctx, req)
	}
	return nil, &MissError{Miss: *miss, outcome: traces.OutcomeStale}
}

// RecordedUsage is the usage recorded with turn i, when the turn was
// served to a request of its recorded key and the recording estimated it
// (the model reported none: the offline models). A replay serves a turn
// with its recorded usage; a provider's is in the response itself, an
// estimate is not, so the loop asks for it here instead of estimating
// again (recorder.Loop).
func (m *Model) RecordedUsage(i int) (traces.Usage, bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if i < 0 || i >= len(m.turns) || !m.turns[i].hit || !m.turns[i].usage.Estimated {
		return traces.Usage{}, false
	}
	return m.turns[i].usage, true
}

func (m *Model) serve(rec *recordedTurn) *llm.Response {
	m.mu.Lock()
	m.served++
	m.mu.Unlock()
	m.opts.Clock.Advance(rec.latency)
	resp := rec.response
	resp.ToolCalls = append([]llm.ToolCall(nil), rec.response.ToolCalls...)
	m.opts.Clock.Resume()
	return &resp
}

func (m *Model) generateLive(ctx context.Context, req *llm.Request) (*llm.Response, error) {
	resp, err := m.opts.Live.Generate(ctx, req)
	m.opts.Clock.Resume()
	return resp, err
}

// explain builds the miss of turn i.
func (m *Model) explain(i int, rec *recordedTurn, req *llm.Request, live traces.ID) (*Miss, error) {
	miss := &Miss{Turn: i, Live: live}
	if rec == nil {
		miss.Differences = []Difference{{Component: ComponentTurn, Name: fmt.Sprintf("%d", i), Change: Added,
			Detail: []string{fmt.Sprintf("the recorded run ended after %d turns; the live run asks for another", len(m.turns))}}}
		return miss, nil
	}
	miss.Recorded = rec.key
	var recorded llm.Request
	if err := json.Unmarshal(rec.request, &recorded); err != nil {
		return nil, fmt.Errorf("recorded request: %w", err)
	}
	diffs, err := ExplainBy(&recorded, req, m.opts.Normalize)
	if err != nil {
		return nil, err
	}
	if len(diffs) == 0 {
		diffs = []Difference{{Component: ComponentKey, Change: Changed,
			Detail: []string{"the requests are the same; the key's other inputs differ (model, scenario, run index or encoding version " + reqkey.Version + ")"}}}
	}
	miss.Differences = diffs
	return miss, nil
}

// Misses returns the misses so far, in turn order.
func (m *Model) Misses() []Miss {
	m.mu.Lock()
	defer m.mu.Unlock()
	return append([]Miss(nil), m.misses...)
}

// Diverged reports the first turn served after a miss (Lenient mode).
func (m *Model) Diverged() (turn int, ok bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.divergedAt, m.divergedAt >= 0
}

// WentLive reports whether a live model answered some turn (Live mode).
func (m *Model) WentLive() bool {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.live
}

// Served is the number of recorded turns served.
func (m *Model) Served() int {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.served
}

// RecordedSampling is the sampling a recorded run sent: its first
// request's, else what its manifest says. A replay sends the same.
func RecordedSampling(run *traces.Run) llm.Sampling {
	for _, e := range run.Events {
		if e.Kind == traces.KindTurn && e.Turn != nil {
			// A stored request is canonical: its sampling member is read
			// without decoding the tools and messages around it.
			if v, ok := traces.CanonicalMember(e.Turn.Request, "sampling"); ok {
				var sp llm.Sampling
				if json.Unmarshal(v, &sp) == nil {
					return sp
				}
			}
			var req llm.Request
			if json.Unmarshal(e.Turn.Request, &req) == nil {
				return req.Sampling
			}
		}
	}
	m := run.Manifest.Model
	return llm.Sampling{Temperature: m.Temperature, TopP: m.TopP, MaxTokens: m.MaxTokens}
}
