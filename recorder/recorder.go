package recorder

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"slices"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpbench/bench/fakecentral"
	"github.com/mcpbench/bench/internal/memo"
	"github.com/mcpbench/bench/internal/sandbox"
	"github.com/mcpbench/bench/llm"
	"github.com/mcpbench/bench/llm/reqkey"
	"github.com/mcpbench/bench/scenarios"
	"github.com/mcpbench/bench/traces"
)

// Options configure a Recorder. A nil *Options means the defaults.
type Options struct {
	// Harness is bench's version, written into every manifest and the MCP
	// handshake. Default "dev".
	Harness string
	// Now is the clock for event times and model latency. Default
	// time.Now. (The manifest's StartedAt is for people only.)
	Now func() time.Time
	// Wall measures how long each tool call takes. Default Now. A replay's
	// Now is its virtual clock; its tool calls are still measured on the
	// wall clock, as a recording measures them, so that both are scored
	// by the same rule (scoring.LatencyResolution).
	Wall func() time.Time
	// Environ is the caller's environment (the CLI passes os.Environ()).
	// A server inherits only its base variables and those PassEnv or the
	// profile's pass_env name ([ChildEnv]); the values of the others that
	// the server writes into a run are redacted from it. Default none.
	Environ []string
	// PassEnv names more variables of Environ that servers inherit (the
	// CLI's --pass-env), beside the profile's pass_env.
	PassEnv []string
	// Secrets are scrubbed from every run before it is hashed: model API
	// keys and anything else that must never reach a trace. Values shorter
	// than 4 bytes are ignored.
	Secrets []string
	// CallTimeout bounds one tool call. Default 60 s.
	CallTimeout time.Duration
	// TurnTimeout bounds one model call, its retries included. Default
	// none but the run's: a live provider bounds each of its HTTP requests
	// (llm.RetryPolicy.AttemptTimeout, the CLI's --request-timeout), and a
	// bound on the turn as well would cut the retry of a request that
	// timed out.
	TurnTimeout time.Duration
	// RunTimeout bounds a whole run, start-up included. Default 15 min.
	RunTimeout time.Duration
	// StopGrace is how long a server may take to exit after stdin closes,
	// and again after SIGTERM. Default DefaultStopGrace.
	StopGrace time.Duration
	// StderrLimit bounds the server stderr kept per run. Default
	// DefaultStderrLimit.
	StderrLimit int
	// MaxResultBytes bounds a tool result: a larger one is stored as a
	// stub, reported to the model as an error and recorded as a
	// result_too_large error. Default 1 MiB.
	MaxResultBytes int
	// MaxMessageBytes bounds one MCP message from a server, on every
	// transport: a line on stdio, the body of an HTTP answer, an event of
	// an SSE stream. A server that sends more breaks the session with a
	// message_too_large error that names the limit. Default
	// DefaultMaxMessageBytes.
	MaxMessageBytes int
	// ReuseServer keeps one server per (profile, fixture, write gate) and
	// resets the fake between runs instead of starting both afresh.
	// Default false.
	ReuseServer bool
	// Tokens estimates the usage of models that report none. Default: the
	// Recorder's own.
	Tokens *TokenCounter
	// Isolation is how servers are confined: IsolationAuto (the default)
	// runs each in a sandbox when the kernel allows and under the proxy
	// convention otherwise; IsolationKernel requires the sandbox (a server
	// that cannot have one does not start); IsolationProxy never uses it.
	// See docs/architecture.md, "Isolation".
	Isolation string
	// HTTPTransport carries bench's HTTP to streamable HTTP servers.
	// Default http.DefaultTransport. For a server in a sandbox, bench
	// dials through the sandbox: an *http.Transport is cloned with that
	// dialer, any other RoundTripper replaced by such a clone of the
	// default.
	HTTPTransport http.RoundTripper
	// Connect, when set, replaces launching the profile's server: it returns
	// a connection to a server that the caller runs in process, speaking
	// MCP's stdio framing (newline-delimited JSON-RPC), given the
	// environment the server would have been started with. For benchmarks
	// and tests that measure bench without a process in between
	// (examples/central-mcp's BenchmarkRecordOverhead).
	Connect func(ctx context.Context, env []string) (io.ReadWriteCloser, error)
}

func (o *Options) withDefaults() Options {
	var d Options
	if o != nil {
		d = *o
	}
	if d.Harness == "" {
		d.Harness = "dev"
	}
	if d.Now == nil {
		d.Now = time.Now
	}
	if d.Wall == nil {
		d.Wall = d.Now
	}
	if d.CallTimeout <= 0 {
		d.CallTimeout = 60 * time.Second
	}
	if d.RunTimeout <= 0 {
		d.RunTimeout = 15 * time.Minute
	}
	if d.StopGrace <= 0 {
		d.StopGrace = DefaultStopGrace
	}
	if d.StderrLimit <= 0 {
		d.StderrLimit = DefaultStderrLimit
	}
	if d.MaxResultBytes <= 0 {
		d.MaxResultBytes = 1 << 20
	}
	if d.MaxMessageBytes <= 0 {
		d.MaxMessageBytes = DefaultMaxMessageBytes
	}
	if d.HTTPTransport == nil {
		d.HTTPTransport = http.DefaultTransport
	}
	if d.Isolation == "" {
		d.Isolation = IsolationAuto
	}
	if d.Tokens == nil {
		d.Tokens = NewTokenCounter()
	}
	return d
}

// Recorder executes jobs. It is safe for concurrent use; Close stops the
// servers it keeps for reuse.
type Recorder struct {
	opts Options

	mu       sync.Mutex
	idle     map[string][]*slot // reusable servers by poolKey
	all      []*slot
	pending  map[string][]*prestart // servers started ahead of their runs (Prestart)
	failed   PrestartFailures       // of them, those a run could not use
	closed   bool
	bg       context.Context // cancelled by Close: bounds prestarts
	stopBg   context.CancelFunc
	starting sync.WaitGroup
	stopping sync.WaitGroup // idle servers being stopped (Retire)
	// starter starts the sandboxes of the kernel isolation, one ahead of
	// its server (nothing before the first); closed by Close, after which
	// it starts none.
	starter  *sandbox.Starter
	fixtures map[string]*fakecentral.Fixture // parsed once: a fake only reads its fixture
	preps    map[*scenarios.Scenario]*scenarioPrep
	keys     *reqkey.ToolCache // tool definitions encoded for request keys, across runs
	plans    sync.Map          // profile hash and dir -> ClockPlan (clockPlan)
	hashes   sync.Map          // *Profile -> its Hash (profileHash)
	schemas  schemaCache       // tools' input schemas, compiled once across servers
	toolSets toolSets          // tool lists as the model and the trace see them, across servers
}

// profileHash is p.Hash() once per Recorder: a profile is not changed
// while a Recorder runs it, and every run asks for its hash three times
// (a JSON encoding and a SHA-256 each, some 10 µs).
func (r *Recorder) profileHash(p *Profile) string {
	if h, ok := r.hashes.Load(p); ok {
		return h.(string)
	}
	h := p.Hash()
	r.hashes.Store(p, h)
	return h
}

// fixture loads a fixture bundle once per Recorder.
func (r *Recorder) fixture(name string) (*fakecentral.Fixture, error) {
	r.mu.Lock()
	fx := r.fixtures[name]
	r.mu.Unlock()
	if fx != nil {
		return fx, nil
	}
	fx, err := fakecentral.LoadFixture(name)
	if err != nil {
		return nil, err
	}
	r.mu.Lock()
	r.fixtures[name] = fx
	r.mu.Unlock()
	return fx, nil
}

// scenarioPrep is what a run needs of its scenario, worked out once per
// Recorder.
type scenarioPrep struct {
	hash         string
	resultSchema json.RawMessage // submit_result's input schema; nil: none
	validate     func(json.RawMessage) error
}

// Prepare works out ahead what a run of sc needs of its scenario (its hash
// and its compiled result schema), so that the run does not: a batch calls
// it for its next run while the one before executes. A run of a scenario
// no one prepared prepares it itself, and reports what fails; Prepare
// reports nothing. It is safe for concurrent use.
func (r *Recorder) Prepare(sc *scenarios.Scenario) {
	if sc != nil {
		r.prepare(sc)
	}
}

// prepare returns sc's prep, computing it on first use. Scenarios are not
// changed once loaded, so the pointer identifies them.
func (r *Recorder) prepare(sc *scenarios.Scenario) (*scenarioPrep, error) {
	r.mu.Lock()
	sp := r.preps[sc]
	r.mu.Unlock()
	if sp != nil {
		return sp, nil
	}
	sp = &scenarioPrep{hash: scenarioHash(sc)}
	shape, err := sc.ResultShape()
	if err != nil {
		return nil, fmt.Errorf("scenario %s: result_schema: %w", sc.ID, err)
	}
	if shape != nil {
		sp.resultSchema = shape
		sp.validate = func(args json.RawMessage) error { return oneLine(sc.CheckShape(args)) }
	}
	r.mu.Lock()
	r.preps[sc] = sp
	r.mu.Unlock()
	return sp, nil
}

// toolSet is a session's tool list as the model and the trace see it.
type toolSet struct {
	model    []llm.Tool        // after the adapter; read-only
	toServer map[string]string // model name -> server name; read-only
	listed   json.RawMessage   // the tools event: the MCP tools, renamed
	json     []byte            // json.Marshal(model), for the loop's usage estimates
}

// toolSet returns the session's tools after p's adapter, built on first
// use: a reused session lists its tools once, so every run sees the same.
// A session that lists the tools another listed (a fresh server per run)
// takes the set built for that one from sets (the Recorder's), when given.
func (c *conn) toolSet(p *Profile, sets *toolSets, profileHash string) *toolSet {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.ts != nil {
		return c.ts
	}
	if sets != nil {
		if b, err := json.Marshal(c.tools); err == nil {
			c.ts = sets.Get(append([]byte(profileHash+"\x00"), b...), func([]byte) *toolSet { return c.buildToolSet(p) })
			return c.ts
		}
	}
	c.ts = c.buildToolSet(p)
	return c.ts
}

// buildToolSet builds the tool set of the session's tools after p's
// adapter.
func (c *conn) buildToolSet(p *Profile) *toolSet {
	ts := &toolSet{toServer: map[string]string{}}
	var listed []json.RawMessage
	for _, t := range c.tools {
		name := t.Name
		if to, ok := p.Adapter.Rename[t.Name]; ok {
			name = to
		}
		ts.toServer[name] = t.Name
		schema := mustJSON(t.InputSchema)
		if !llm.IsJSONObject(schema) {
			schema = json.RawMessage(`{"type":"object"}`)
		}
		ts.model = append(ts.model, llm.Tool{Name: name, Description: t.Description, InputSchema: schema})
		tc := *t
		tc.Name = name
		listed = append(listed, mustJSON(&tc))
	}
	ts.listed, _ = json.Marshal(listed)
	if listed == nil {
		ts.listed = json.RawMessage("[]")
	}
	// In the trace's form once, not at every run's store.
	if c, err := traces.Canonical(ts.listed); err == nil {
		ts.listed = c
	}
	// A list that does not encode is left to the loop, which reports it.
	ts.json, _ = json.Marshal(ts.model)
	return ts
}

// toolSets are the tool sets built so far, by the profile's hash and the
// tools listed: a toolSet is read-only once built.
type toolSets = memo.Bytes[*toolSet]

const toolSetsMax = 64

// slot is a fake Central and a server connected to it.
type slot struct {
	key  string
	fake *fakecentral.Server
	conn *conn
	// withheld are the values of the caller's environment the server was
	// not given: redacted from what it writes into a run.
	withheld []withheldValue
	// places names the values that differ from run to run (the fake's
	// addresses, its CA file) in tool results (runPlaces).
	places *runValues
}

// New returns a Recorder.
func New(o *Options) *Recorder {
	bg, stop := context.WithCancel(context.Background())
	return &Recorder{opts: o.withDefaults(), idle: map[string][]*slot{}, fixtures: map[string]*fakecentral.Fixture{},
		preps: map[*scenarios.Scenario]*scenarioPrep{}, pending: map[string][]*prestart{}, bg: bg, stopBg: stop,
		keys: reqkey.NewToolCache(), starter: sandbox.NewStarter(), schemas: schemaCache{Max: schemaCacheMax}, toolSets: toolSets{Max: toolSetsMax}}
}

// Close stops every server kept for reuse or started ahead.
func (r *Recorder) Close() error {
	r.mu.Lock()
	all := r.all
	r.all, r.idle, r.closed = nil, map[string][]*slot{}, true
	pending := r.pending
	r.pending = map[string][]*prestart{}
	r.mu.Unlock()
	r.stopBg()
	r.starting.Wait()
	r.stopping.Wait()
	for _, list := range pending {
		for _, ps := range list {
			all = append(all, ps.slot)
		}
	}
	for _, s := range all {
		if s != nil {
			s.close()
		}
	}
	r.starter.Close()
	return nil
}

// prestart is a fake Central and a server started ahead of their run.
type prestart struct {
	done  chan struct{}
	slot  *slot
	err   error
	clock *heldClock
}

// heldClock reads a fixed time until it is handed the run's clock: the
// requests a server makes while it starts ahead of its run are journaled
// at the run's start, with no latency, as when it starts in the run under
// a replay's paused clock.
type heldClock struct {
	mu   sync.Mutex
	held time.Time
	now  func() time.Time
}

func (h *heldClock) Now() time.Time {
	h.mu.Lock()
	now, held := h.now, h.held
	h.mu.Unlock()
	if now != nil {
		return now()
	}
	return held
}

func (h *heldClock) hand(now func() time.Time) {
	h.mu.Lock()
	h.now = now
	h.mu.Unlock()
}

// Prestart starts, in the background, the fake Central and the server that
// the next run of sc will need, so that its start-up overlaps the work
// before that run; Run takes it as it would start it. With ReuseServer it
// does nothing when a server of sc's group (ServerGroup) is idle or
// starting already. A prestart that fails is dropped and Run starts the
// server itself (recording the failure). Close stops what was not taken.
func (r *Recorder) Prestart(p *Profile, sc *scenarios.Scenario) {
	key, fx, ok := r.groupOf(p, sc)
	if !ok {
		return
	}
	writes := opensWriteGate(sc)
	r.mu.Lock()
	if r.closed || (r.opts.ReuseServer && (len(r.idle[key]) > 0 || len(r.pending[key]) > 0)) {
		r.mu.Unlock()
		return
	}
	ps := &prestart{done: make(chan struct{}), clock: &heldClock{held: time.Now()}}
	r.pending[key] = append(r.pending[key], ps)
	r.starting.Add(1)
	r.mu.Unlock()
	go func() {
		defer r.starting.Done()
		defer close(ps.done)
		ps.slot, ps.err = r.start(r.bg, key, p, fx, writes, ps.clock.Now)
	}()
}

// Retire stops the idle servers of every server group but sc's: a caller
// that runs its groups one after the other (a replay's worker) calls it at
// a group's first run, so that a finished group's server and fake Central
// (whose state is the largest thing a run leaves in memory) do not stay
// until Close. Servers started ahead (Prestart) are kept.
func (r *Recorder) Retire(p *Profile, sc *scenarios.Scenario) {
	keep, _, ok := r.groupOf(p, sc)
	if !ok {
		return
	}
	var stop []*slot
	r.mu.Lock()
	for key, list := range r.idle {
		if key == keep {
			continue
		}
		stop = append(stop, list...)
		delete(r.idle, key)
	}
	r.all = slices.DeleteFunc(r.all, func(s *slot) bool { return slices.Contains(stop, s) })
	r.stopping.Add(len(stop))
	r.mu.Unlock()
	for _, s := range stop {
		go func() { // beside the run that follows; Close waits for it
			defer r.stopping.Done()
			s.close()
		}()
	}
}

// clockPlan is Options.clockPlan worked out once per profile: it reads the
// server's program (an ELF parse, some 0.1 ms), and every run and server
// start asks for it.
func (r *Recorder) clockPlan(p *Profile) ClockPlan {
	key := r.profileHash(p) + "\x00" + p.Dir
	if c, ok := r.plans.Load(key); ok {
		return c.(ClockPlan)
	}
	c := r.opts.clockPlan(p)
	r.plans.Store(key, c)
	return c
}

// groupOf returns the slot key of sc's server group on p and its fixture;
// ok is false when there is none to go by (no profile or scenario, or a
// fixture that does not load: Run reports that).
func (r *Recorder) groupOf(p *Profile, sc *scenarios.Scenario) (key string, fx *fakecentral.Fixture, ok bool) {
	if p == nil || sc == nil {
		return "", nil, false
	}
	fx, err := r.fixture(sc.Fixture)
	if err != nil {
		return "", nil, false
	}
	return r.slotKey(p, fx, opensWriteGate(sc)), fx, true
}

// Preflight starts the fake Central and the server the next run of sc
// will need, and waits until the server has answered the MCP handshake and
// listed its tools: an error says why it did not start, and nothing is
// left running. The started pair is kept for that run, as Prestart keeps
// one, so the check costs no start of its own.
func (r *Recorder) Preflight(ctx context.Context, p *Profile, sc *scenarios.Scenario) error {
	fx, err := r.fixture(sc.Fixture)
	if err != nil {
		return fmt.Errorf("scenario %s: fixture: %w", sc.ID, err)
	}
	writes := opensWriteGate(sc)
	key := r.slotKey(p, fx, writes)
	ps := &prestart{done: make(chan struct{}), clock: &heldClock{held: time.Now()}}
	close(ps.done)
	ps.slot, err = r.start(ctx, key, p, fx, writes, ps.clock.Now)
	if err != nil {
		if ps.slot != nil {
			ps.slot.close()
		}
		return err
	}
	r.mu.Lock()
	closed := r.closed
	if !closed {
		r.pending[key] = append(r.pending[key], ps)
	}
	r.mu.Unlock()
	if closed {
		ps.slot.close()
		return errors.New("recorder: closed")
	}
	return nil
}

// takePrestart returns the server started ahead for key, if there is one
// that started; nil otherwise.
func (r *Recorder) takePrestart(ctx context.Context, key string) *slot {
	r.mu.Lock()
	list := r.pending[key]
	if len(list) == 0 {
		r.mu.Unlock()
		return nil
	}
	ps := list[0]
	r.pending[key] = list[1:]
	r.mu.Unlock()
	waitStart := time.Now()
	select {
	case <-ps.done:
	case <-ctx.Done():
		// Not wanted by this run: back to the pool, for a later run or
		// for Close; if Close has run, stopped here.
		r.mu.Lock()
		closed := r.closed
		if !closed {
			r.pending[key] = append(r.pending[key], ps)
		}
		r.mu.Unlock()
		if closed {
			<-ps.done // Close cancelled its start
			if ps.slot != nil {
				ps.slot.close()
			}
		}
		return nil
	}
	if ps.err != nil || ps.slot == nil || ps.slot.conn == nil || ps.slot.conn.dead() {
		why := ps.err
		if why == nil {
			why = errors.New("its server had exited")
		}
		r.mu.Lock()
		r.failed.add(why, time.Since(waitStart))
		r.mu.Unlock()
		if ps.slot != nil {
			ps.slot.close()
		}
		return nil
	}
	ps.clock.hand(r.opts.Now)
	ps.slot.fake.ResetClock()
	return ps.slot
}

// PrestartFailures counts the servers started ahead of their runs
// (Prestart) that a run came to take and could not use: their start
// failed, or their server had exited. Such a run starts another server,
// after waiting for the failed one (a start that hangs, up to the
// profile's start_timeout): a replay or recording that took longer than
// it should says why.
type PrestartFailures struct {
	N       int
	First   string        // why the first failed
	Longest time.Duration // the longest a run waited for one
}

func (f *PrestartFailures) add(why error, waited time.Duration) {
	if f.N == 0 {
		f.First = why.Error()
	}
	f.N++
	f.Longest = max(f.Longest, waited)
}

// Merge adds g's failures to f's (g's first is kept when f has none).
func (f *PrestartFailures) Merge(g PrestartFailures) {
	if f.N == 0 {
		f.First = g.First
	}
	f.N += g.N
	f.Longest = max(f.Longest, g.Longest)
}

// PrestartFailures returns the servers started ahead that runs could not
// use, so far.
func (r *Recorder) PrestartFailures() PrestartFailures {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.failed
}

func (s *slot) close() {
	if s.conn != nil {
		s.conn.close()
	}
	if s.fake != nil {
		s.fake.Close()
	}
}

// Job is one run to execute.
type Job struct {
	Suite    string // the ref's first segment and the manifest's suite
	Scenario *scenarios.Scenario
	Profile  *Profile
	Model    llm.Model
	// ModelRef names the model in the manifest and in request keys. In a
	// replay it is the recorded run's. Provider and Name default to what
	// Model.Name() says; Temperature, TopP and MaxTokens default to
	// Sampling.
	ModelRef traces.ModelRef
	Sampling llm.Sampling
	RunIndex int
	// Mode defaults to traces.ModeRecord; a replay sets ModeReplay and
	// Replays.
	Mode    traces.Mode
	Replays *traces.ID
	// Keys, when set, is the Encoder of the run's request keys, shared
	// with Model (Loop.Keys): a replay's, whose scope is the recorded
	// run's, the one ModelRef, Scenario and RunIndex give.
	Keys *reqkey.Encoder
}

// Ref is the conventional ref name of the job's run.
func (j *Job) Ref() string {
	m := j.modelRef()
	name := m.Name
	// The ref names the recording's seed (--seed), not the run's own.
	if j.ModelRef.Seed != 0 {
		name = fmt.Sprintf("%s@seed=%d", name, j.ModelRef.Seed)
	}
	return traces.RunRef(j.Suite, j.Profile.Name, name, j.Scenario.ID, j.RunIndex)
}

func (j *Job) modelRef() traces.ModelRef {
	m := j.ModelRef
	if m.Name == "" && j.Model != nil {
		m.Name = j.Model.Name()
	}
	if m.Provider == "" {
		p, _, ok := strings.Cut(m.Name, ":")
		if !ok {
			p, _, _ = strings.Cut(m.Name, "-")
		}
		m.Provider = p
	}
	if m.Temperature == nil {
		m.Temperature = j.Sampling.Temperature
	}
	if m.TopP == nil {
		m.TopP = j.Sampling.TopP
	}
	if m.MaxTokens == 0 {
		m.MaxTokens = j.Sampling.MaxTokens
	}
	// The seed the run's requests were sent with (record sends run i
	// seed+i), so that reports list the seeds the runs had.
	if j.Sampling.Seed != nil {
		m.Seed = *j.Sampling.Seed
	}
	return m
}

// Run executes job and returns its run, ready to store. A server that does
// not start, crashes, hangs or misbehaves gives a run with an error event
// and outcome "error", not an error: the batch goes on. Run returns an
// error only when bench itself cannot set the run up (an unknown fixture,
// an invalid result schema, a fake Central that does not start).
func (r *Recorder) Run(ctx context.Context, job *Job) (*traces.Run, error) {
	run, _, err := r.Attempt(ctx, job)
	return run, err
}

// NoResultReason says why a run is no result about the server.
type NoResultReason string

// The reasons. Every other run is a result, errors included: a server
// that exits, hangs (call_timeout, timeout), breaks the session
// (transport) or answers too much (result_too_large) mid-run did so, and a
// provider that refused what the run sent (llm.ClassRefused) answered it.
const (
	// NotStarted: the server did not start: it could not be launched, it
	// exited or hung during start-up, or it failed the MCP handshake or
	// the tool list (the run's error is of kind start).
	NotStarted NoResultReason = "server did not start"
	// ModelUnavailable: no model answered: the provider could not be
	// reached or refused the key or the model (llm.ClassUnavailable).
	ModelUnavailable NoResultReason = "model unavailable"
	// ModelTransient: the provider failed in a way that may pass: rate
	// limits or 5xx past the retries, a broken connection, a request past
	// its timeout on every attempt, a turn past TurnTimeout
	// (llm.ClassTransient).
	ModelTransient NoResultReason = "model failed transiently"
)

// NoResult says why a run is no result about the server: a recording does
// not store it as one.
type NoResult struct {
	Reason NoResultReason
	Err    error // what failed, in bench's words
}

func (n *NoResult) Error() string { return string(n.Reason) + ": " + n.Err.Error() }
func (n *NoResult) Unwrap() error { return n.Err }

// Attempt is Run, and says besides when the run is no result about the
// server (see NoResultReason); its run is then complete, for a report.
func (r *Recorder) Attempt(ctx context.Context, job *Job) (*traces.Run, *NoResult, error) {
	run, nr, err := r.attempt(ctx, job)
	if err != nil || run == nil {
		return run, nil, err
	}
	if nr != nil {
		// In bench's words, after the scrub: the model's error may quote a key.
		msg := ""
		for _, e := range run.Events {
			if e.Kind == traces.KindError && e.Error != nil {
				msg = e.Error.Message
				break
			}
		}
		nr.Err = errors.New(msg)
	}
	return run, nr, nil
}

func (r *Recorder) attempt(ctx context.Context, job *Job) (*traces.Run, *NoResult, error) {
	o := r.opts
	sc, p := job.Scenario, job.Profile
	if sc == nil || p == nil || job.Model == nil {
		return nil, nil, errors.New("recorder: job needs a scenario, a profile and a model")
	}
	fx, err := r.fixture(sc.Fixture)
	if err != nil {
		return nil, nil, fmt.Errorf("scenario %s: fixture: %w", sc.ID, err)
	}
	sp, err := r.prepare(sc)
	if err != nil {
		return nil, nil, err
	}
	resultSchema, validate := sp.resultSchema, sp.validate
	mref := job.modelRef()
	mode := job.Mode
	if mode == "" {
		mode = traces.ModeRecord
	}
	start := o.Now()
	run := &traces.Run{Manifest: traces.Manifest{
		Format: traces.FormatVersion, StartedAt: start, Mode: mode, Replays: job.Replays,
		Suite: job.Suite, Scenario: traces.ScenarioRef{ID: sc.ID, Hash: sp.hash},
		Server: traces.ServerRef{Name: p.Name, Repo: p.Repo, SHA: p.SHA, ProfileHash: r.profileHash(p), VariantOf: p.VariantOf, Routes: p.Adapter.Routes,
			Reused: mode == traces.ModeRecord && o.ReuseServer},
		Model: mref, RunIndex: job.RunIndex,
		Fixture: traces.FixtureRef{Name: sc.Fixture, Hash: fx.Version()},
		Harness: o.Harness, SystemPrompt: SystemPromptID(), Clock: r.clockPlan(p).Manifest,
	}}
	rc := &capture{start: start}
	ctx, cancel := context.WithTimeout(ctx, o.RunTimeout)
	defer cancel()

	writes := opensWriteGate(sc)
	s, err := r.acquire(ctx, p, fx, writes)
	if s == nil {
		return nil, nil, err // the fake did not start: bench's own failure
	}
	s.fake.SetFaults(FaultsOf(sc.Faults))
	s.fake.SetPageSize(sc.PageSize)
	if err != nil {
		rc.emit(o.Now(), traces.Event{Kind: traces.KindError, Error: &traces.Error{Kind: traces.ErrorStart, Message: err.Error()}})
		run.Manifest.Outcome = traces.OutcomeError
		rc.addJournal(s.fake.Journal(), nil)
		s.fake.Close()
		run.Events = rc.events
		run, serr := r.scrub(run, s.withheld)
		return run, &NoResult{Reason: NotStarted, Err: err}, serr
	}
	c := s.conn
	initEv := c.init
	rc.emit(start, traces.Event{Kind: traces.KindInitialize, Initialize: &initEv})
	ts := c.toolSet(p, &r.toolSets, r.profileHash(p))
	modelTools, toServer := ts.model, ts.toServer
	rc.emit(o.Now(), traces.Event{Kind: traces.KindTools, Tools: &traces.Tools{Tools: ts.listed}})
	c.elic.set(sc.Elicit(), -1, func(e traces.Elicitation) {
		rc.emit(o.Now(), traces.Event{Kind: traces.KindElicitation, Elicitation: &e})
	})
	callIdx := map[int]int{} // call index -> position of its event, for HTTP placement
	exec := func(ctx context.Context, idx int, call llm.ToolCall) ToolResult {
		if sch := c.schema(toServer[call.Name]); sch != nil {
			if err := oneLine(sch.Validate(call.Arguments)); err != nil {
				return ToolResult{Invalid: "arguments fail the input schema: " + err.Error(), IsError: true,
					Content: fmt.Sprintf("error: invalid arguments for %s: %s", call.Name, err)}
			}
		}
		c.elic.setCall(idx)
		// The fake journals each request before it answers it, so once the
		// tool's result is here every request the call waited on is in the
		// journal: the marker can come off. Requests a server makes between
		// calls are then attributed to no call (-1), as they should be.
		s.fake.BeginToolCall(idx)
		cctx, ccancel := context.WithTimeout(ctx, o.CallTimeout)
		defer ccancel()
		cctx, unbind := c.watch.bind(cctx)
		defer unbind()
		sent := c.watch.traffic()
		res, err := c.cs.CallTool(cctx, &mcp.CallToolParams{Name: toServer[call.Name], Arguments: call.Arguments})
		s.fake.EndToolCall()
		if err != nil {
			return callError(c, cctx, ctx, o, err, s.fake.InFlight, sent)
		}
		raw := mustJSON(res)
		if len(raw) > o.MaxResultBytes {
			sum := sha256.Sum256(raw)
			stub := mustJSON(map[string]any{"bench_truncated": map[string]any{"bytes": len(raw), "sha256": hex.EncodeToString(sum[:])}})
			msg := fmt.Sprintf("error: the tool result is %d bytes, above bench's limit of %d", len(raw), o.MaxResultBytes)
			return ToolResult{Result: stub, IsError: true, Content: msg, ErrorKind: traces.ErrorResultTooLarge}
		}
		text := resultText(res)
		if s.places != nil {
			raw, text = json.RawMessage(s.places.Replace(string(raw))), s.places.Replace(text)
		}
		return ToolResult{Result: raw, IsError: res.IsError, Content: text}
	}
	loop := &Loop{
		Model: job.Model, Key: reqkey.Scope{Provider: mref.Provider, Model: mref.Name, Scenario: sc.ID, RunIndex: job.RunIndex},
		Keys: job.Keys, ToolCache: r.keys, Intent: sc.Intent, Tools: modelTools, toolsJSON: ts.json, ResultSchema: resultSchema, ValidateResult: validate,
		Sampling: job.Sampling, MaxTurns: sc.Turns(), Tokens: o.Tokens,
		Exec: exec, TurnTimeout: o.TurnTimeout, Now: o.Now, Wall: o.Wall, Normalize: p.Normalizer(),
		Emit: func(at time.Time, e traces.Event) {
			pos := rc.emit(at, e)
			if e.Kind == traces.KindCall {
				callIdx[e.Call.Index] = pos
			}
		},
	}
	run.Manifest.Outcome = loop.Run(ctx)
	if ctx.Err() != nil && run.Manifest.Outcome != traces.OutcomeError {
		rc.emit(o.Now(), traces.Event{Kind: traces.KindError, Error: &traces.Error{Kind: traces.ErrorTimeout, Message: "run: " + ctx.Err().Error()}})
		run.Manifest.Outcome = traces.OutcomeError
	}
	var nr *NoResult
	if merr := loop.ModelError(); run.Manifest.Outcome == traces.OutcomeError && merr != nil && ctx.Err() == nil {
		switch llm.Classify(merr) {
		case llm.ClassUnavailable:
			nr = &NoResult{Reason: ModelUnavailable, Err: merr}
		case llm.ClassTransient:
			nr = &NoResult{Reason: ModelTransient, Err: merr}
		}
	}
	// A reused server is restarted only when it is at fault: a model's
	// error or a replay miss says nothing of the server's state.
	healthy := !c.dead() && !rc.serverAtFault()
	r.release(s, healthy) // a fresh server is stopped here, before the journal is read
	s.fake.EndToolCall()
	initEv.Stderr = c.proc.stderrTail()
	rc.addJournal(s.fake.Journal(), callIdx)
	if dropped := s.fake.JournalDropped(); dropped > 0 {
		rc.emit(o.Now(), traces.Event{Kind: traces.KindError, Error: &traces.Error{Kind: traces.ErrorJournalDropped, Message: fmt.Sprintf("the fake Central dropped %d journal entries", dropped)}})
	}
	if !(o.ReuseServer && healthy) {
		s.fake.Close()
	}
	normalizeEvents(p, rc.events)
	run.Events = rc.events
	run, err = r.scrub(run, s.withheld)
	return run, nr, err
}

// serverFaults are the error kinds that leave a server in a state the
// next run must not meet: exited, wedged on a call, its session broken.
var serverFaults = map[traces.ErrorKind]bool{
	traces.ErrorStart: true, traces.ErrorServerExited: true, traces.ErrorTransport: true,
	traces.ErrorMessageTooLarge: true, traces.ErrorCallTimeout: true, traces.ErrorTimeout: true,
}

// serverAtFault reports whether an error event of the run is the server's.
func (c *capture) serverAtFault() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, e := range c.events {
		if e.Kind == traces.KindError && e.Error != nil && serverFaults[e.Error.Kind] {
			return true
		}
	}
	return false
}

// callError turns a failed tools/call into a result for the model. A
// JSON-RPC error from the server is a tool error; anything else means the
// session is broken (the server exited, broke the wire protocol, or wrote
// something that is not JSON-RPC) and ends the run. A breach of the wire
// protocol bench saw (wireWatch) is the cause, whatever it led to: the SDK
// then reports a cancelled call, an "invalid request" answer, or nothing
// but a server that exits once its stdin is closed.
func callError(c *conn, cctx, runCtx context.Context, o Options, err error, inflight func() []string, sent traffic) ToolResult {
	var wire *jsonrpc.Error
	switch b := c.watch.err(); {
	case runCtx.Err() != nil:
		return ToolResult{IsError: true, Content: "error: the run was stopped", ErrorKind: traces.ErrorTimeout, Fatal: runCtx.Err()}
	case b != nil:
		return ToolResult{IsError: true, Content: "error: " + b.msg, ErrorKind: b.kind, Fatal: b}
	case cctx.Err() != nil && !c.dead():
		// Where it hangs: waiting on the fake Central, or on nothing the
		// fake holds (the server itself, or the pipe between us).
		// What the server sent after the call tells a server that never
		// answered from one whose answer was lost or cut short.
		detail := "the fake Central was answering no request"
		if l := inflight(); len(l) > 0 {
			detail = fmt.Sprintf("the fake Central was still answering %s", strings.Join(l, ", "))
		}
		detail += "; " + c.watch.since(sent)
		return ToolResult{IsError: true, Content: fmt.Sprintf("error: the tool did not answer within %s", o.CallTimeout), ErrorKind: traces.ErrorCallTimeout,
			Detail: detail}
	case errors.As(err, &wire) && !c.dead():
		return ToolResult{IsError: true, Content: "error: " + err.Error()}
	}
	// Give a crashing server the time to be reaped, for its exit status.
	if c.proc != nil {
		t := time.NewTimer(o.StopGrace)
		select {
		case <-c.proc.done:
		case <-t.C:
		}
		t.Stop()
	}
	msg, kind := "the session broke: "+err.Error(), traces.ErrorTransport
	if c.dead() {
		msg, kind = "the server exited: "+c.proc.exitStatus(), traces.ErrorServerExited
	}
	if f := c.wire.failures(); len(f) > 0 {
		last := f[len(f)-1]
		msg += fmt.Sprintf(" (last failed HTTP exchange: %s %s -> %d %s)", last.Method, last.Path, last.Status, last.Error)
	}
	return ToolResult{IsError: true, Content: "error: " + msg, ErrorKind: kind, Fatal: errors.New(msg)}
}

// resultText is what the model sees of a tool result: its text content,
// or its structured content when it has no text.
func resultText(res *mcp.CallToolResult) string {
	var parts []string
	for _, c := range res.Content {
		if t, ok := c.(*mcp.TextContent); ok {
			parts = append(parts, t.Text)
		} else {
			parts = append(parts, string(mustJSON(c)))
		}
	}
	if len(parts) == 0 && res.StructuredContent != nil {
		return string(mustJSON(res.StructuredContent))
	}
	return strings.Join(parts, "\n")
}

func (p *process) stderrTail() string {
	if p == nil {
		return ""
	}
	return p.stderr.String()
}

// acquire returns a fake Central and a server connected to it: a reused
// pair when allowed and one is idle, else a new pair. A nil slot means the
// fake did not start; a slot with an error means the server did not.
func (r *Recorder) acquire(ctx context.Context, p *Profile, fx *fakecentral.Fixture, writes bool) (*slot, error) {
	key := r.slotKey(p, fx, writes)
	if r.opts.ReuseServer {
		r.mu.Lock()
		if list := r.idle[key]; len(list) > 0 {
			s := list[len(list)-1]
			r.idle[key] = list[:len(list)-1]
			r.mu.Unlock()
			s.fake.Reset()
			if s.conn.proc != nil {
				s.conn.proc.stderr.Reset()
			}
			return s, nil
		}
		r.mu.Unlock()
	}
	if s := r.takePrestart(ctx, key); s != nil {
		return s, nil
	}
	return r.start(ctx, key, p, fx, writes, r.opts.Now)
}

// slotKey names the servers that are interchangeable: one profile, one
// fixture, one write gate.
func (r *Recorder) slotKey(p *Profile, fx *fakecentral.Fixture, writes bool) string {
	return fmt.Sprintf("%s|%s|%s|%t", r.profileHash(p), p.Dir, fx.Version(), writes)
}

// start starts a fake Central reading now and a server connected to it,
// for the slots of key.
func (r *Recorder) start(ctx context.Context, key string, p *Profile, fx *fakecentral.Fixture, writes bool, now func() time.Time) (*slot, error) {
	fake, err := fakecentral.Start(&fakecentral.Options{Fixture: fx, Now: now, CaptureBodies: true})
	if err != nil {
		return nil, fmt.Errorf("starting the fake Central: %w", err)
	}
	s := &slot{key: key, fake: fake}
	v := Vars{CentralURL: fake.BaseURL, TokenURL: fake.TokenURL, ProxyURL: fake.ProxyURL, CAFile: fake.CAFile, Writes: writes}
	if p.usesPort() {
		if v.Port, err = freePort(); err != nil {
			return s, fmt.Errorf("picking a port: %w", err)
		}
	}
	s.places = runPlaces(v)
	pass := append(slices.Clone(p.PassEnv), r.opts.PassEnv...)
	env := append(ChildEnv(r.opts.Environ, pass), fake.Env()...)
	for _, k := range sortedKeys(p.Env) {
		env = append(env, k+"="+v.Expand(p.Env[k]))
	}
	if writes {
		for _, k := range sortedKeys(p.WritesEnv) {
			env = append(env, k+"="+v.Expand(p.WritesEnv[k]))
		}
	}
	s.withheld = withheld(r.opts.Environ, pass, env)
	env = r.clockPlan(p).Env(env, fx.Now())
	cf, iso, err := r.confine(fake)
	if err != nil {
		return s, fmt.Errorf("server %s: %w", p.Name, err)
	}
	c, err := launch(ctx, p, v, env, &r.opts, cf, &r.schemas)
	if err != nil {
		return s, fmt.Errorf("server %s: %w", p.Name, err)
	}
	if c.proc != nil {
		c.init.Isolation = iso
	}
	s.conn = c
	return s, nil
}

// release returns a healthy server to the pool (with reuse) or stops it.
func (r *Recorder) release(s *slot, healthy bool) {
	if r.opts.ReuseServer && healthy {
		r.mu.Lock()
		if !containsSlot(r.all, s) {
			r.all = append(r.all, s)
		}
		r.idle[s.key] = append(r.idle[s.key], s)
		r.mu.Unlock()
		return
	}
	r.mu.Lock()
	for i, x := range r.all {
		if x == s {
			r.all = append(r.all[:i], r.all[i+1:]...)
			break
		}
	}
	r.mu.Unlock()
	s.conn.close()
}

func containsSlot(list []*slot, s *slot) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// capture collects a run's events with their times.
type capture struct {
	mu     sync.Mutex
	start  time.Time
	events []traces.Event
}

func (c *capture) emit(at time.Time, e traces.Event) int {
	c.mu.Lock()
	defer c.mu.Unlock()
	e.AtUS = at.Sub(c.start).Microseconds()
	if e.AtUS < 0 {
		e.AtUS = 0
	}
	// A turn's request and response are canonical already, and so is the
	// tool list (toolSet), unless it cannot be: Canonicalize would leave it.
	if e.Kind != traces.KindTurn && e.Kind != traces.KindTools {
		e.Canonicalize() // once, here: the store then need not decode the run again
	}
	c.events = append(c.events, e)
	return len(c.events) - 1
}

// addJournal places the fake's journal in the trace: boot calls after the
// tool list, each call's requests right after that call's event, the rest
// (after the last call ended) at the end.
func (c *capture) addJournal(entries []fakecentral.Entry, callPos map[int]int) {
	after := map[int][]traces.Event{} // event position -> events to insert after it
	var tail []traces.Event
	bootPos := -1
	for i, e := range c.events {
		if e.Kind == traces.KindTools || e.Kind == traces.KindInitialize {
			bootPos = i
		}
	}
	for _, e := range entries {
		var ev traces.Event
		// From the run's start, as every other event: the fake's own
		// origin is later when the run waited for its server to start
		// (HTTP rows seconds before the call that made them).
		at := max(e.At.Sub(c.start).Microseconds(), 0)
		if e.Egress {
			ev = traces.Event{Kind: traces.KindEgress, AtUS: at, Egress: &traces.Egress{Host: e.Host, Call: e.ToolCall}}
		} else {
			ev = traces.Event{Kind: traces.KindHTTP, AtUS: at, HTTP: &traces.HTTP{
				Seq: e.Seq, Method: e.Method, Path: e.Path, Query: e.Query, Status: e.Status,
				Class: string(e.Class), Call: e.ToolCall, Boot: e.Boot, LatencyUS: e.LatencyUS,
				// Canonical already: the event's only payloads.
				RequestBody: traces.CanonicalBody(e.RequestBody), ResponseBody: traces.CanonicalBody(e.ResponseBody),
			}}
		}
		pos, ok := callPos[e.ToolCall]
		switch {
		case e.Boot && bootPos >= 0:
			after[bootPos] = append(after[bootPos], ev)
		case ok && !e.Boot:
			after[pos] = append(after[pos], ev)
		default:
			tail = append(tail, ev)
		}
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	out := make([]traces.Event, 0, len(c.events)+len(entries))
	for i, e := range c.events {
		out = append(out, e)
		out = append(out, after[i]...)
	}
	c.events = append(out, tail...)
}

// scrub removes the secrets from every string of the run, and the values
// of the caller's environment withheld from the server from what the
// server wrote (scrubEnv), before it is hashed, and checks that it still
// encodes.
func (r *Recorder) scrub(run *traces.Run, env []withheldValue) (*traces.Run, error) {
	run = scrubEnv(run, env)
	var secrets []string
	for _, s := range r.opts.Secrets {
		if len(s) >= 4 {
			secrets = append(secrets, s)
		}
	}
	if len(secrets) == 0 {
		return run, nil
	}
	b, err := json.Marshal(run)
	if err != nil {
		return nil, fmt.Errorf("encoding run: %w", err)
	}
	sort.Slice(secrets, func(i, j int) bool { return len(secrets[i]) > len(secrets[j]) })
	changed := false
	for _, s := range secrets {
		q, _ := json.Marshal(s)
		forms := [][]byte{[]byte(s), q[1 : len(q)-1]}
		for _, f := range forms {
			if bytes.Contains(b, f) {
				b = bytes.ReplaceAll(b, f, []byte("[REDACTED]"))
				changed = true
			}
		}
	}
	if !changed {
		return run, nil
	}
	out := &traces.Run{}
	if err := json.Unmarshal(b, out); err != nil {
		return nil, fmt.Errorf("redacting run: %w", err)
	}
	out.Manifest.StartedAt = run.Manifest.StartedAt
	return out, nil
}

// opensWriteGate reports whether sc's runs get the profile's writes_env.
func opensWriteGate(sc *scenarios.Scenario) bool {
	return sc.WriteGate == scenarios.GateWrite || sc.WriteGate == scenarios.GateDestructive
}

// ServerGroup names the scenarios whose runs share a server under
// ReuseServer, for one profile: those with the same fixture and write gate.
// Runs of one group meet the server in an order that changes what they see
// (a token it already has, say); a caller that spreads runs over several
// Recorders keeps each group on one to get the results of one Recorder.
func ServerGroup(sc *scenarios.Scenario) string {
	return fmt.Sprintf("%s|%t", sc.Fixture, opensWriteGate(sc))
}

// faultsOf maps a scenario's faults onto the fake's: 429 stays 429, any
// other status is served as the fake's 500.
// FaultsOf turns a scenario's faults into the fake Central's.
func FaultsOf(list []scenarios.Fault) []fakecentral.Fault {
	var out []fakecentral.Fault
	for _, f := range list {
		k := fakecentral.Fault500
		if f.Status == 429 {
			k = fakecentral.Fault429
		}
		out = append(out, fakecentral.Fault{Route: f.Route, Kind: k, Times: f.Times, After: f.After, RetryAfter: f.RetryAfter,
			ResetAfter: time.Duration(f.ResetAfter) * time.Second})
	}
	return out
}

// scenarioHash is the SHA-256 of the scenario's content (not where it was
// read from).
// ScenarioHash is the content hash of a scenario that a run's manifest
// records (traces.ScenarioRef.Hash): the same for the same definition,
// whatever file it was read from.
func ScenarioHash(sc *scenarios.Scenario) string { return scenarioHash(sc) }

func scenarioHash(sc *scenarios.Scenario) string {
	c := *sc
	c.File = ""
	b, err := traces.Marshal(normalizeYAML(mustJSON(&c)))
	if err != nil {
		b = mustJSON(&c)
	}
	sum := sha256.Sum256(b)
	return "sha256:" + hex.EncodeToString(sum[:])
}

// normalizeYAML turns values decoded from YAML (map[any]any is not produced
// by yaml.v3 for string keys, but numbers and nested maps may need a JSON
// round trip) into plain JSON values.
func normalizeYAML(v any) any {
	if raw, ok := v.(json.RawMessage); ok {
		var x any
		if json.Unmarshal(raw, &x) == nil {
			return x
		}
		return raw
	}
	var x any
	if json.Unmarshal(mustJSON(v), &x) == nil {
		return x
	}
	return v
}

// oneLine shortens a validation error to one line.
func oneLine(err error) error {
	if err == nil {
		return nil
	}
	msg := strings.Join(strings.Fields(err.Error()), " ")
	msg = strings.TrimPrefix(msg, "jsonschema validation failed with 'mem:///result_schema.json#' - ")
	return errors.New(llm.Truncate(msg, 300))
}
