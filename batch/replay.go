package batch

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"strings"
	"sync"
	"time"

	"github.com/mcpbench/bench/llm"
	"github.com/mcpbench/bench/llm/reqkey"
	"github.com/mcpbench/bench/recorder"
	"github.com/mcpbench/bench/replayer"
	"github.com/mcpbench/bench/scenarios"
	"github.com/mcpbench/bench/scoring"
	"github.com/mcpbench/bench/traces"
)

// ReplayRefPrefix is the first segment of the refs of replay runs:
// replay/<the recorded run's ref>. The latest replay of a run holds it.
const ReplayRefPrefix = "replay/"

// Replay replays recorded runs with the server live.
type Replay struct {
	Options
	Store   *traces.Store
	Profile *recorder.Profile
	// Refs are the recorded runs to replay, in the order results are
	// delivered. A ref whose run is not a recording, or whose scenario is
	// not in Scenarios, is skipped.
	Refs      []traces.Ref
	Scenarios map[string]*scenarios.Scenario
	// ReuseServer keeps one server per server group.
	ReuseServer bool
	Mode        replayer.Mode
	// Live builds the model asked from a miss on, in live mode.
	Live func(*scenarios.Scenario) (llm.Model, error)
	// Resolution is the replay clock's resolution (replayer.NewClock).
	Resolution time.Duration
	// Score scores a run; it is called beside the replays, from several
	// goroutines at once.
	Score func(*traces.Run) (*scoring.RunMetrics, error)
	// ScoreRecorded also scores each recorded run (the default baseline of
	// a replay: the recording itself).
	ScoreRecorded bool
	// KeepRuns keeps every replay's metrics in the result's Current
	// aggregation (a JSON report prints them); otherwise only what the
	// reports aggregate is kept of each run.
	KeepRuns bool
	// Progress receives each replayed run, in ref order.
	Progress func(*Replayed)
	// Tools measures a run's tool definitions (Scorer.ToolDefinitions);
	// nil measures none. The result then says what the live server's
	// definitions cost and how they changed since the recording.
	Tools func(*traces.Run) (*scoring.ToolDefinitions, bool)
	// Aggregate configures the aggregations (k, the runs per scenario
	// the stage asks); nil means defaults.
	Aggregate *scoring.AggregateOptions
}

// Replayed is what is kept of one replayed run.
type Replayed struct {
	Ref         string // the recorded run's ref
	Index       int    // its place in Refs
	Outcome     traces.Outcome
	StartFailed bool // the server did not start
	// RecordedError: the recorded run ended in an error. The replay ends
	// where it did (replayer.RecordedError); it is not scored, not stale,
	// and no comparison counts its run index.
	RecordedError bool
	Misses        []scoring.Miss
	Manifest      traces.Manifest // the replay's
	Isolation     string          // how the replay's server was confined (scoring.Isolation)
	// Current is the replay's metrics; Recorded the recorded run's, with
	// ScoreRecorded.
	Current, Recorded *scoring.RunMetrics
	// Tools and RecordedTools are the replay's and the recorded run's tool
	// definitions, with Replay.Tools (nil for a run that had none).
	Tools, RecordedTools *scoring.ToolDefinitions

	recordedTokens int  // the recorded run's tokens
	liveTokens     int  // the tokens of the turns a live model answered
	freshOfReused  bool // recorded with a reused server, replayed with a fresh one
	callTime       time.Duration
}

// ReplayResult is what the reports need of a replay: the runs aggregated
// as they were delivered, not the runs.
type ReplayResult struct {
	Runs          int
	StartFailures int
	// RecordedErrors counts the replays of recorded runs that ended in an
	// error.
	RecordedErrors int
	FirstRef       string
	// Current aggregates the replays by server and scenario; CurrentPooled
	// and RecordedPooled, by scenario alone (how a comparison sees them),
	// the replays and, with ScoreRecorded, the recorded runs.
	Current, CurrentPooled, RecordedPooled *scoring.Aggregator
	Misses                                 []scoring.Miss
	Meta                                   scoring.MetaBuilder
	// Stale counts the replays that stopped at a miss (strict mode), and
	// StaleTokens their recorded token usage: about what re-recording
	// exactly those runs with a live model would take. LiveRuns and
	// LiveTokens count the replays that asked the live model (live mode)
	// and the tokens its turns took.
	Stale, StaleTokens, LiveRuns, LiveTokens int
	// FreshOfReused counts the runs recorded with a reused server
	// (traces.ServerRef.Reused) that this replay ran with fresh ones: each
	// fresh server fetches its token, which the recording did once per
	// group, so their api_call_count is higher for no change of the
	// server's.
	FreshOfReused int
	// Prestarts are the servers started ahead of their runs that the runs
	// could not use (each waited for one, then started another).
	Prestarts recorder.PrestartFailures
	// ToolDefinitions is the largest tool list the live server offered
	// (a server may offer more tools to write scenarios), with
	// Replay.Tools; ToolChurn each distinct change between a recorded
	// run's definitions and its replay's.
	ToolDefinitions []scoring.ToolDefinitions
	ToolChurn       []scoring.ToolChurn
	Times
}

// addTools keeps what a replayed run says of the tool definitions.
func (res *ReplayResult) addTools(out *Replayed) {
	if out.Tools == nil {
		return
	}
	res.ToolDefinitions = scoring.AddToolDefinitions(res.ToolDefinitions, out.Tools)
	if out.RecordedTools == nil {
		return
	}
	c := scoring.DiffToolDefinitions(out.RecordedTools, out.Tools)
	if c.Empty() {
		return
	}
	for _, seen := range res.ToolChurn {
		if reflect.DeepEqual(seen, c) {
			return
		}
	}
	res.ToolChurn = append(res.ToolChurn, c)
}

// readRun is a recorded run as read ahead of its replay: the run, and
// its model turns decoded (or why they could not be) when it is a run to
// replay.
type readRun struct {
	run   *traces.Run
	turns *replayer.Recorded
	err   error
}

// replayable reports whether run is a run this replay replays: a
// recording of a selected scenario.
func (r *Replay) replayable(run *traces.Run) bool {
	return run != nil && run.Manifest.Mode == traces.ModeRecord && r.Scenarios[run.Manifest.Scenario.ID] != nil
}

// replayed is a replay between its execution and its finishing.
type replayedRun struct {
	ref      string
	recorded *traces.Run
	turns    *replayer.Recorded // recorded's turns, decoded
	turnsErr error              // why they could not be
	replay   *traces.Run
	misses   []replayer.Miss
}

// Run replays the refs and returns what the reports need. An error means
// the replay could not go on (a store that cannot be read, a server bench
// cannot set up, an interruption); runs that failed are results.
func (r *Replay) Run(ctx context.Context) (*ReplayResult, error) {
	if r.Store == nil || r.Profile == nil || r.Score == nil {
		return nil, errors.New("batch: a replay needs a store, a profile and a scorer")
	}
	// Every recorded run's record (and its bases') is read before a replay
	// is stored: damage is said once, before anything is written to the
	// damaged store. The check runs beside the first runs, and the first
	// replay to be stored waits for it.
	check := make(chan error, 1)
	go func() { check <- r.Store.CheckRunRecords(r.Refs...) }()
	var checkOnce sync.Once
	var damage error
	checked := func() error {
		checkOnce.Do(func() {
			if err := <-check; err != nil {
				damage = fmt.Errorf("store %s: %w", r.Store.Dir(), err)
			}
		})
		return damage
	}
	defer checked() // nothing is left reading the store
	workers := r.parallel()
	wallStart := time.Now()
	clocks := make([]*replayer.Clock, workers)
	recs := make([]*recorder.Recorder, workers)
	keys := reqkey.NewToolCache()
	tokens := r.Recorder.Tokens
	if tokens == nil {
		tokens = recorder.NewTokenCounter() // one memo for every worker
	}
	for w := range workers {
		clocks[w] = replayer.NewClock(wallStart, time.Now, r.Resolution)
		o := r.Recorder
		// Tool calls are measured on the wall clock, as in a recording
		// (recorder.Options.Wall).
		o.Now, o.Wall, o.ReuseServer, o.Tokens = clocks[w].Now, time.Now, r.ReuseServer, tokens
		recs[w] = recorder.New(&o)
	}
	defer func() {
		for _, rec := range recs {
			rec.Close()
		}
	}()
	items := make([]item, len(r.Refs))
	for i, ref := range r.Refs {
		items[i] = item{index: i, sc: r.refScenario(ref.Name)}
		if r.ReuseServer && items[i].sc != nil {
			items[i].group = recorder.ServerGroup(items[i].sc)
		}
	}
	res := &ReplayResult{Current: scoring.NewAggregator(r.Aggregate), CurrentPooled: scoring.NewAggregator(r.Aggregate), RecordedPooled: scoring.NewAggregator(r.Aggregate)}
	res.Current.KeepRuns = r.KeepRuns
	res.CurrentPooled.PoolServers, res.RecordedPooled.PoolServers = true, true
	var calls time.Duration // callTime of the runs delivered
	p := &pipeline[*readRun, *replayedRun, *Replayed]{
		workers: workers, static: true, reuse: r.ReuseServer, items: items,
		read: func(it item) (*readRun, error) {
			run, err := r.Store.GetRun(r.Refs[it.index].Run)
			if err != nil {
				return nil, fmt.Errorf("reading %s: %w", r.Refs[it.index].Name, err)
			}
			rd := &readRun{run: run}
			if r.replayable(run) {
				// Its turns decoded here, off the run's path.
				rd.turns, rd.err = replayer.Parse(run)
			}
			return rd, nil
		},
		prestart: func(w int, it item) { recs[w].Prestart(r.Profile, it.sc) },
		prepare:  func(w int, it item) { recs[w].Prepare(it.sc) },
		execute: func(ctx context.Context, w int, it item, rd *readRun) (*replayedRun, error) {
			if rd == nil || !r.replayable(rd.run) {
				return nil, nil // not a run to replay
			}
			recorded := rd.run
			sc := r.Scenarios[recorded.Manifest.Scenario.ID]
			if it.first && r.ReuseServer {
				recs[w].Retire(r.Profile, sc) // the worker's earlier groups are done
			}
			rr := &replayedRun{ref: r.Refs[it.index].Name, recorded: recorded, turns: rd.turns, turnsErr: rd.err}
			if err := r.replayOne(ctx, recs[w], clocks[w], keys, sc, rr); err != nil {
				return nil, fmt.Errorf("replaying %s: %w", rr.ref, err)
			}
			if ctx.Err() != nil {
				return nil, fmt.Errorf("interrupted: %w", ctx.Err())
			}
			return rr, nil
		},
		finish: func(it item, rr *replayedRun) (*Replayed, error) {
			if rr == nil {
				return nil, nil
			}
			if err := checked(); err != nil {
				return nil, err
			}
			return r.finish(it, rr)
		},
		deliver: func(it item, out *Replayed) {
			if out == nil {
				return
			}
			res.Runs++
			calls += out.callTime
			if res.FirstRef == "" {
				res.FirstRef = out.Ref
			}
			if out.StartFailed {
				res.StartFailures++
			}
			if out.RecordedError {
				res.RecordedErrors++
			}
			res.Misses = append(res.Misses, out.Misses...)
			if out.Outcome == traces.OutcomeStale {
				res.Stale++
				res.StaleTokens += out.recordedTokens
			}
			if out.freshOfReused {
				res.FreshOfReused++
			}
			if out.liveTokens > 0 {
				res.LiveRuns++
				res.LiveTokens += out.liveTokens
			}
			res.Current.Add(out.Current)
			res.CurrentPooled.Add(out.Current)
			if out.Recorded != nil {
				res.RecordedPooled.Add(out.Recorded)
			}
			res.Meta.Add(&out.Manifest, out.Isolation)
			res.addTools(out)
			if r.Progress != nil {
				r.Progress(out)
			}
		},
	}
	err := p.run(ctx)
	res.Times = p.times()
	res.Times.Calls = calls
	for _, rec := range recs {
		res.Prestarts.Merge(rec.PrestartFailures())
	}
	if d := checked(); d != nil {
		return nil, d // what a run read of the damage is said by the check
	}
	if serr := r.Store.Sync(); err == nil {
		err = serr
	}
	if err != nil {
		if ctx.Err() != nil && !errors.Is(err, ctx.Err()) {
			return nil, fmt.Errorf("interrupted: %w", ctx.Err())
		}
		return nil, err
	}
	return res, nil
}

// RecordedRefs lists the refs under prefix that may hold a recorded run of
// the selection, sorted by name: a ref of the conventional shape
// (traces.ParseRunRef) must name a selected scenario; the run's own
// manifest decides for the others, and when it is read.
func RecordedRefs(store *traces.Store, prefix string, selected map[string]*scenarios.Scenario) ([]traces.Ref, error) {
	refs, err := store.Refs(prefix)
	if err != nil {
		return nil, err
	}
	var out []traces.Ref
	for _, r := range refs {
		if strings.HasPrefix(r.Name, traces.JudgeRefPrefix) {
			continue // a judge's run, not an agent's (bench judge run replays it)
		}
		if p, ok := traces.ParseRunRef(r.Name); ok && selected[p.Scenario] == nil {
			continue
		}
		out = append(out, r)
	}
	return out, nil // Refs sorts by name
}

// RecordedReuse says whether the first of refs was recorded with a reused
// server (traces.ServerRef.Reused): how a replay that is not told runs its
// servers, so that it measures what its recording measured. A recording
// is made one way (bench record --reuse-server or not); a run recorded
// before bench said so reads as fresh.
func RecordedReuse(store *traces.Store, refs []traces.Ref) (bool, error) {
	if len(refs) == 0 {
		return false, nil
	}
	run, err := store.GetRun(refs[0].Run)
	if err != nil {
		return false, fmt.Errorf("reading %s: %w", refs[0].Name, err)
	}
	return run.Manifest.Server.Reused, nil
}

// refScenario is the selected scenario a ref names in its scenario
// segment, nil if none; the run's own manifest decides when it is read.
func (r *Replay) refScenario(name string) *scenarios.Scenario {
	parts, ok := traces.ParseRunRef(name)
	if !ok {
		return nil
	}
	return r.Scenarios[parts.Scenario]
}

// replayOne replays one recorded run with the server live.
func (r *Replay) replayOne(ctx context.Context, rec *recorder.Recorder, clock *replayer.Clock, keys *reqkey.ToolCache, sc *scenarios.Scenario, rr *replayedRun) error {
	var live llm.Model
	if r.Live != nil {
		var err error
		if live, err = r.Live(sc); err != nil {
			return err
		}
	}
	if rr.turnsErr != nil {
		return rr.turnsErr
	}
	m, err := rr.turns.Model(&replayer.Options{Mode: r.Mode, Live: live, Clock: clock, ToolCache: keys, Normalize: r.Profile.Normalizer()})
	if err != nil {
		return err
	}
	man := rr.recorded.Manifest
	id := man.RunID
	job := &recorder.Job{
		Suite: man.Suite, Scenario: sc, Profile: r.Profile, Model: m,
		ModelRef: man.Model, Sampling: replayer.RecordedSampling(rr.recorded), RunIndex: man.RunIndex,
		Mode: traces.ModeReplay, Replays: &id, Keys: m.Keys(),
	}
	clock.Rebase(time.Now())
	run, err := rec.Run(ctx, job)
	clock.Pause()
	if err != nil {
		return err
	}
	if _, diverged := m.Diverged(); diverged && run.Manifest.Outcome != traces.OutcomeStale {
		run.Manifest.Outcome = traces.OutcomeDiverged
	}
	rr.replay, rr.misses = run, m.Misses()
	return nil
}

// finish stores and scores a replay.
func (r *Replay) finish(it item, rr *replayedRun) (*Replayed, error) {
	rr.replay.Manifest.StartedAt = time.Now().UTC()
	// Replays can be recomputed: written without waiting for the disk, made
	// durable together at the end. What was stored is scored (canonical
	// payloads, run ID filled in), as the recorded runs are: the same bytes
	// measure the same.
	stored, err := r.Store.PutRunNoSyncRead(rr.replay, ReplayRefPrefix+rr.ref)
	if err != nil {
		return nil, fmt.Errorf("storing the replay of %s: %w", rr.ref, err)
	}
	man := rr.recorded.Manifest
	out := &Replayed{Ref: rr.ref, Index: it.index, Outcome: stored.Manifest.Outcome,
		StartFailed: stored.FirstError() == traces.ErrorStart, Manifest: stored.Manifest,
		RecordedError: man.Outcome == traces.OutcomeError, Isolation: scoring.Isolation(stored)}
	for _, m := range rr.misses {
		out.Misses = append(out.Misses, scoring.Miss{Scenario: man.Scenario.ID, Server: r.Profile.Name,
			RunIndex: man.RunIndex, Turn: m.Turn, Explanation: m.Explain()})
	}
	out.recordedTokens = turnTokens(rr.recorded, 0)
	out.freshOfReused = man.Server.Reused && !r.ReuseServer
	out.callTime = callTime(stored)
	if r.Mode == replayer.Live && len(rr.misses) > 0 {
		out.liveTokens = turnTokens(stored, rr.misses[0].Turn) // the live model answers from the first miss on
	}
	if out.Current, err = r.Score(stored); err != nil {
		return nil, err
	}
	out.Current.Ref = ReplayRefPrefix + rr.ref
	if out.RecordedError {
		out.Current.RecordedError, out.Current.Stale = true, false
	}
	if r.Tools != nil {
		if d, ok := r.Tools(stored); ok {
			out.Tools = d
		}
		if d, ok := r.Tools(rr.recorded); ok {
			out.RecordedTools = d
		}
	}
	if r.ScoreRecorded {
		if out.Recorded, err = r.Score(rr.recorded); err != nil {
			return nil, err
		}
		out.Recorded.Ref = rr.ref
	}
	return out, nil
}

// turnTokens sums the input and output tokens of run's model turns from
// turn from on.
func turnTokens(run *traces.Run, from int) int {
	n := 0
	for i := range run.Events {
		if t := run.Events[i].Turn; t != nil && t.Index >= from {
			n += t.Usage.Input + t.Usage.Output
		}
	}
	return n
}
