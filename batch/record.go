package batch

import (
	"context"
	"errors"
	"fmt"
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
	Sampling llm.Sampling
	// NewModel builds the model of a run.
	NewModel func(*scenarios.Scenario) (llm.Model, error)
	// ReuseServer keeps one server per server group, resetting the fake
	// Central between runs.
	ReuseServer bool
	// Force records runs whose ref is stored already; otherwise they are
	// skipped, so an interrupted recording resumes where it stopped.
	Force bool
	// Progress receives each run, in the order of Runs.
	Progress func(*Recorded)
}

// Recorded is what is kept of one run of a recording.
type Recorded struct {
	Ref     string
	Index   int // its place in Runs
	Skipped bool
	// Err is bench's own failure to set the run up (not a failure of the
	// server or the model, which is a stored run with outcome error).
	Err     error
	Outcome traces.Outcome
	// FirstError is the kind of the run's first error event, if any.
	FirstError traces.ErrorKind
	In, Out    int // tokens
}

// RecordResult sums up a recording.
type RecordResult struct {
	Recorded, Skipped, StartFailures int
	ByOutcome                        map[traces.Outcome]int
	Failures                         map[traces.ErrorKind]int // error kind of the failed runs
	In, Out                          int
	Elapsed                          time.Duration
	// SetupFailures are the runs bench could not set up.
	SetupFailures []error
	Times
}

// Run records the runs. It returns an error only when the recording could
// not go on (an interruption); a run bench could not set up is a setup
// failure of the result, and the recording goes on.
func (r *Record) Run(ctx context.Context) (*RecordResult, error) {
	if r.Store == nil || r.Profile == nil || r.NewModel == nil {
		return nil, errors.New("batch: a recording needs a store, a profile and a model")
	}
	start := time.Now()
	o := r.Recorder
	o.ReuseServer = r.ReuseServer
	rec := recorder.New(&o)
	defer rec.Close()
	res := &RecordResult{ByOutcome: map[traces.Outcome]int{}, Failures: map[traces.ErrorKind]int{}}
	job := func(rs RunSpec) *recorder.Job {
		return &recorder.Job{Suite: r.Suite, Scenario: rs.Scenario, Profile: r.Profile, ModelRef: r.ModelRef,
			Sampling: r.Sampling, RunIndex: rs.Index}
	}
	// stored: the run is in the store and not to be recorded again. The
	// model ref names the model: the job needs no model to name its ref.
	stored := func(ref string) bool {
		if r.Force {
			return false
		}
		_, err := r.Store.Ref(ref)
		return err == nil
	}
	// A run whose ref is stored is skipped: its run must be readable. One
	// that is not is damage to repair (bench traces repair), said once,
	// not a run recorded.
	if !r.Force {
		for _, rs := range r.Runs {
			if err := r.Store.CheckRef(job(rs).Ref()); err != nil {
				return nil, fmt.Errorf("store %s: %w", r.Store.Dir(), err)
			}
		}
	}
	items := make([]item, len(r.Runs))
	for i, rs := range r.Runs {
		items[i] = item{index: i, sc: rs.Scenario}
		if r.ReuseServer {
			items[i].group = recorder.ServerGroup(rs.Scenario)
		}
	}
	type executed struct {
		ref     string
		run     *traces.Run
		err     error
		skipped bool
	}
	p := &pipeline[struct{}, *executed, *Recorded]{
		workers: r.parallel(), reuse: r.ReuseServer, items: items,
		prestart: func(_ int, it item) {
			if rs := r.Runs[it.index]; !stored(job(rs).Ref()) {
				rec.Prestart(r.Profile, rs.Scenario)
			}
		},
		execute: func(ctx context.Context, _ int, it item, _ struct{}) (*executed, error) {
			j := job(r.Runs[it.index])
			ref := j.Ref()
			if stored(ref) {
				return &executed{ref: ref, skipped: true}, nil
			}
			m, err := r.NewModel(j.Scenario)
			if err != nil {
				return &executed{ref: ref, err: err}, nil
			}
			j.Model = m
			run, err := rec.Run(ctx, j)
			if ctx.Err() != nil {
				// Interrupted: the run is not stored; a rerun resumes here.
				return nil, fmt.Errorf("interrupted: %w", ctx.Err())
			}
			return &executed{ref: ref, run: run, err: err}, nil
		},
		finish: func(it item, e *executed) (*Recorded, error) {
			out := &Recorded{Ref: e.ref, Index: it.index, Skipped: e.skipped, Err: e.err}
			if e.skipped || e.err != nil {
				return out, nil
			}
			if _, err := r.Store.PutRun(e.run, e.ref); err != nil {
				if errors.Is(err, traces.ErrCorrupt) {
					// The store is damaged: every later run would fail
					// the same way. Stop, and say it once.
					return nil, fmt.Errorf("store %s: %s: %w", r.Store.Dir(), e.ref, err)
				}
				out.Err = err
				return out, nil
			}
			out.Outcome, out.FirstError = e.run.Manifest.Outcome, e.run.FirstError()
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
			default:
				res.Recorded++
				res.ByOutcome[out.Outcome]++
				res.In += out.In
				res.Out += out.Out
				if out.Outcome == traces.OutcomeError {
					res.Failures[out.FirstError]++
					if out.FirstError == traces.ErrorStart {
						res.StartFailures++
					}
				}
			}
			if r.Progress != nil {
				r.Progress(out)
			}
		},
	}
	err := p.run(ctx)
	res.Times = p.times()
	res.Elapsed = time.Since(start)
	return res, err
}
