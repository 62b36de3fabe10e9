package batch

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/mcpbench/bench/llm"
	"github.com/mcpbench/bench/recorder"
	"github.com/mcpbench/bench/scenarios"
	"github.com/mcpbench/bench/traces"
)

// RunSpec is one run of a recording: a scenario and a run index.
type RunSpec struct {
	Scenario *scenarios.Scenario
	Index    int
}

// Record runs scenarios live and stores every run.
type Record struct {
	Options
	Store   *traces.Store
	Profile *recorder.Profile
	// Suite is the first segment of the runs' refs and the manifests' suite.
	Suite    string
	Runs     []RunSpec
	ModelRef traces.ModelRef
	// Sampling is sent with every run's requests. A seed is the first
	// run's: run i of a scenario is sent seed+i, so that repeats at a
	// temperature above 0 sample differently and each stays reproducible
	// from the seed recorded in its requests.
	Sampling llm.Sampling
	// NewModel builds the model of a run.
	NewModel func(*scenarios.Scenario) (llm.Model, error)
	// ReuseServer keeps one server per server group, resetting the fake
	// Central between runs.
	ReuseServer bool
	// Force records runs whose ref is stored already; otherwise a stored
	// run is skipped, so an interrupted recording resumes where it
	// stopped, unless it ended in an error: that one is recorded again.
	Force bool
	// Progress receives each run, in the order of Runs, from one
	// goroutine, once the run is durable (a stored run has been synced);
	// every call is made before Run returns.
	Progress func(*Recorded)
}

// Recorded is what is kept of one run of a recording.
type Recorded struct {
	Ref     string
	Index   int // its place in Runs
	Skipped bool
	// Retried: a run stored with outcome error was recorded again.
	Retried bool
	// Err is bench's own failure to set the run up (not a failure of the
	// server or the model, which is a stored run with outcome error).
	Err error
	// NoResult says why the run, recorded, was not stored: it says
	// nothing about the server (recorder.NoResultReason).
	NoResult *recorder.NoResult
	Outcome  traces.Outcome
	// FirstError is the kind of the run's first error event, if any.
	FirstError traces.ErrorKind
	In, Out    int // tokens

	callTime time.Duration
}

// RecordResult sums up a recording.
type RecordResult struct {
	// Recorded counts the runs stored, Retried those of them that replace
	// a stored error run, Skipped the runs stored already.
	Recorded, Skipped, Retried int
	ByOutcome                  map[traces.Outcome]int
	Failures                   map[traces.ErrorKind]int // error kind of the failed runs
	In, Out                    int
	Elapsed                    time.Duration
	// SetupFailures are the runs bench could not set up.
	SetupFailures []error
	// NotStored are the runs recorded but not stored, being no result
	// about the server, by reason.
	NotStored map[recorder.NoResultReason][]error
	// Prestarts are the servers started ahead of their runs that the runs
	// could not use (each waited for one, then started another).
	Prestarts recorder.PrestartFailures
	Times
}

// NotStoredCount is the number of runs recorded but not stored.
func (r *RecordResult) NotStoredCount() int {
	n := 0
	for _, l := range r.NotStored {
		n += len(l)
	}
	return n
}

// Run records the runs. It returns an error only when the recording could
// not go on; a run bench could not set up is a setup failure of the
// result, and the recording goes on.
//
// Before the first run, Run starts the server the first run to record
// needs (recorder.Preflight): a server that does not start stops the
// recording with nothing stored (*NotStartedError). A run that is no
// result about the server (recorder.NoResultReason) is reported and not
// stored, so that a rerun records it; a model that no one answers
// (recorder.ModelUnavailable) stops the recording (*ModelUnavailableError),
// as every later run would fail the same way. A stored run that could not
// be read stops it too, before the first run.
func (r *Record) Run(ctx context.Context) (*RecordResult, error) {
	if r.Store == nil || r.Profile == nil || r.NewModel == nil {
		return nil, errors.New("batch: a recording needs a store, a profile and a model")
	}
	start := time.Now()
	o := r.Recorder
	o.ReuseServer = r.ReuseServer
	rec := recorder.New(&o)
	defer rec.Close()
	res := &RecordResult{ByOutcome: map[traces.Outcome]int{}, Failures: map[traces.ErrorKind]int{},
		NotStored: map[recorder.NoResultReason][]error{}}
	job := func(rs RunSpec) *recorder.Job {
		s := r.Sampling
		if s.Seed != nil {
			seed := *s.Seed + int64(rs.Index)
			s.Seed = &seed
		}
		return &recorder.Job{Suite: r.Suite, Scenario: rs.Scenario, Profile: r.Profile, ModelRef: r.ModelRef,
			Sampling: s, RunIndex: rs.Index}
	}
	// The runs' state in the store: to record, stored (skipped), or
	// stored with outcome error (recorded again).
	const (
		todo = iota
		stored
		retry
	)
	state := make([]int, len(r.Runs))
	first := -1
	for i, rs := range r.Runs {
		if !r.Force {
			ref := job(rs).Ref()
			if id, err := r.Store.Ref(ref); err == nil {
				// A run whose ref is stored is skipped (or retried): it
				// must be readable. One that is not is damage to repair
				// (bench traces repair), said once, not a run recorded.
				run, err := r.Store.GetRun(id)
				if err != nil {
					return nil, fmt.Errorf("store %s: %s: %w", r.Store.Dir(), ref, err)
				}
				state[i] = stored
				// A run that ended in an error is recorded again, and so is
				// one recorded from another definition of its scenario (the
				// manifest changed, or another manifest has its id).
				if run.Manifest.Outcome == traces.OutcomeError || run.Manifest.Scenario.Hash != recorder.ScenarioHash(rs.Scenario) {
					state[i] = retry
				}
			}
		}
		if state[i] != stored && first < 0 {
			first = i
		}
	}
	if first >= 0 {
		if err := rec.Preflight(ctx, r.Profile, r.Runs[first].Scenario); err != nil {
			if ctx.Err() != nil {
				return res, fmt.Errorf("interrupted: %w", ctx.Err())
			}
			return res, &NotStartedError{Server: r.Profile.Name, Err: err}
		}
	}
	report := newSyncedReports(r.Store.Sync, r.Progress)
	items := make([]item, len(r.Runs))
	for i, rs := range r.Runs {
		items[i] = item{index: i, sc: rs.Scenario}
		if r.ReuseServer {
			items[i].group = recorder.ServerGroup(rs.Scenario)
		}
	}
	type executed struct {
		ref      string
		run      *traces.Run
		err      error
		noResult *recorder.NoResult
		skipped  bool
	}
	p := &pipeline[struct{}, *executed, *Recorded]{
		// With reuse and one worker, each server group's runs go one after
		// the other in item order, as a replay runs a group's (whose
		// items are refs by name: the same order while a scenario has at
		// most ten runs), and the next group's server starts while the
		// group before runs. Several workers take the next item whichever
		// group it is of, and the recorder pools the servers: a live
		// model's runs take as long as they take, and a group kept to one
		// worker would leave the others idle.
		workers: r.parallel(), static: r.ReuseServer && r.parallel() == 1, reuse: r.ReuseServer, items: items,
		prestart: func(_ int, it item) {
			if state[it.index] != stored {
				rec.Prestart(r.Profile, r.Runs[it.index].Scenario)
			}
		},
		prepare: func(_ int, it item) {
			if state[it.index] != stored {
				rec.Prepare(it.sc)
			}
		},
		execute: func(ctx context.Context, _ int, it item, _ struct{}) (*executed, error) {
			j := job(r.Runs[it.index])
			ref := j.Ref()
			if state[it.index] == stored {
				return &executed{ref: ref, skipped: true}, nil
			}
			m, err := r.NewModel(j.Scenario)
			if err != nil {
				return &executed{ref: ref, err: err}, nil
			}
			j.Model = m
			run, nr, err := rec.Attempt(ctx, j)
			if ctx.Err() != nil {
				// Interrupted: the run is not stored; a rerun resumes here.
				return nil, fmt.Errorf("interrupted: %w", ctx.Err())
			}
			if nr != nil && nr.Reason == recorder.ModelUnavailable {
				return nil, &ModelUnavailableError{Model: r.ModelRef.Name, Ref: ref, Err: nr.Err}
			}
			return &executed{ref: ref, run: run, err: err, noResult: nr}, nil
		},
		finish: func(it item, e *executed) (*Recorded, error) {
			out := &Recorded{Ref: e.ref, Index: it.index, Skipped: e.skipped, Err: e.err, NoResult: e.noResult,
				Retried: state[it.index] == retry}
			if e.skipped || e.err != nil || e.noResult != nil {
				return out, nil
			}
			// Durable before it is reported (syncs, below).
			if _, err := r.Store.PutRunUnsynced(e.run, e.ref); err != nil {
				if errors.Is(err, traces.ErrCorrupt) {
					// The store is damaged: every later run would fail
					// the same way. Stop, and say it once.
					return nil, fmt.Errorf("store %s: %s: %w", r.Store.Dir(), e.ref, err)
				}
				out.Err = err
				return out, nil
			}
			out.Outcome, out.FirstError = e.run.Manifest.Outcome, e.run.FirstError()
			out.callTime = callTime(e.run)
			for _, ev := range e.run.Events {
				if ev.Turn != nil {
					out.In += ev.Turn.Usage.Input
					out.Out += ev.Turn.Usage.Output
				}
			}
			return out, nil
		},
		deliver: func(it item, out *Recorded) {
			switch {
			case out.Skipped:
				res.Skipped++
			case out.Err != nil:
				rs := r.Runs[it.index]
				res.SetupFailures = append(res.SetupFailures, fmt.Errorf("%s run %d: %w", rs.Scenario.ID, rs.Index, out.Err))
			case out.NoResult != nil:
				res.NotStored[out.NoResult.Reason] = append(res.NotStored[out.NoResult.Reason], fmt.Errorf("%s: %w", out.Ref, out.NoResult))
			default:
				res.Recorded++
				if out.Retried {
					res.Retried++
				}
				res.ByOutcome[out.Outcome]++
				res.Times.Calls += out.callTime
				res.In += out.In
				res.Out += out.Out
				if out.Outcome == traces.OutcomeError {
					res.Failures[out.FirstError]++
				}
			}
			report.add(out, out.Err == nil && !out.Skipped && out.NoResult == nil)
		},
	}
	err := p.run(ctx)
	if serr := report.close(); err == nil && serr != nil {
		err = fmt.Errorf("store %s: %w", r.Store.Dir(), serr)
	}
	calls := res.Times.Calls
	res.Times = p.times()
	res.Times.Calls = calls
	res.Elapsed = time.Since(start)
	res.Prestarts = rec.PrestartFailures()
	return res, err
}

// NotStartedError is a recording stopped before its first run: the server
// did not start. Nothing was stored.
type NotStartedError struct {
	Server string
	Err    error
}

func (e *NotStartedError) Error() string {
	return fmt.Sprintf("server %s never started, so nothing was recorded: %v", e.Server, e.Err)
}
func (e *NotStartedError) Unwrap() error { return e.Err }

// ModelUnavailableError is a recording stopped because no model answered
// a run: the provider could not be reached or refused the key or the
// model. That run was not stored.
type ModelUnavailableError struct {
	Model, Ref string
	Err        error
}

func (e *ModelUnavailableError) Error() string {
	return fmt.Sprintf("model %s did not answer %s, so the recording stopped (that run was not stored): %v", e.Model, e.Ref, e.Err)
}
func (e *ModelUnavailableError) Unwrap() error { return e.Err }

// syncedReports says each run of a recording (Record.Progress) once it is
// durable: runs are written without waiting for the disk, and one sync at a
// time makes every run written before it durable, so that a recording of
// quick runs waits for the disk once per group of runs, not once per run,
// and its runs never wait for the disk at all. What is said was synced:
// a recording killed at any point has stored every run it said it
// recorded (a rerun records the others).
type syncedReports struct {
	sync     func() error
	progress func(*Recorded)
	mu       sync.Mutex
	queue    []pendingReport
	wake     chan struct{}
	done     chan struct{}
	closed   bool
	err      error // the first sync that failed; nothing is said after it
}

type pendingReport struct {
	out    *Recorded
	stored bool // written, and to be synced before it is said
}

func newSyncedReports(sync func() error, progress func(*Recorded)) *syncedReports {
	s := &syncedReports{sync: sync, progress: progress, wake: make(chan struct{}, 1), done: make(chan struct{})}
	go s.loop()
	return s
}

// add queues a delivered run's report, in delivery order.
func (s *syncedReports) add(out *Recorded, stored bool) {
	s.mu.Lock()
	s.queue = append(s.queue, pendingReport{out, stored})
	s.mu.Unlock()
	select {
	case s.wake <- struct{}{}:
	default:
	}
}

// close says what is queued (after a last sync) and returns the first
// sync's error, if one failed.
func (s *syncedReports) close() error {
	s.mu.Lock()
	s.closed = true
	s.mu.Unlock()
	select {
	case s.wake <- struct{}{}:
	default:
	}
	<-s.done
	return s.err
}

func (s *syncedReports) loop() {
	defer close(s.done)
	for {
		<-s.wake
		s.mu.Lock()
		batch, closed := s.queue, s.closed
		s.queue = nil
		s.mu.Unlock()
		s.say(batch)
		if closed {
			s.mu.Lock()
			rest := s.queue
			s.queue = nil
			s.mu.Unlock()
			s.say(rest)
			return
		}
	}
}

// say syncs what batch wrote, then says batch in order.
func (s *syncedReports) say(batch []pendingReport) {
	if len(batch) == 0 || s.err != nil {
		return
	}
	for _, p := range batch {
		if p.stored {
			if err := s.sync(); err != nil {
				s.err = err
				return
			}
			break
		}
	}
	if s.progress == nil {
		return
	}
	for _, p := range batch {
		s.progress(p.out)
	}
}
