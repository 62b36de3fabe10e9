// Package judge runs the optional LLM judge over stored runs and keeps what
// it said as runs of their own: a judgement is a traces.Run whose
// Manifest.Grades names the graded run, whose Model is the judge's, and
// whose events are the judge's model turns, each with its request key
// computed as an agent's is (package reqkey, in the scope of the judge's
// model and the graded run's scenario and run index). A judgement is
// therefore recorded once and replayed like an agent's run: grading a
// replay of a run whose behaviour did not change asks the same requests,
// which hit the recorded turns, offline and keyless; a run that changed
// asks other requests, and the miss says which message differed.
//
// The rubric, the majority over samples and Cohen's kappa are package
// scoring's (scoring.Judge, scoring.Calibrate).
package judge

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/mcpbench/bench/llm"
	"github.com/mcpbench/bench/llm/reqkey"
	"github.com/mcpbench/bench/replayer"
	"github.com/mcpbench/bench/scenarios"
	"github.com/mcpbench/bench/scoring"
	"github.com/mcpbench/bench/traces"
)

// Options configure a grading. Model names the judge; Live asks it. With
// no Live model a grading is offline: it is served from a recorded
// judgement only.
type Options struct {
	// Model is the judge's provider and name ("openai",
	// "openai:gpt-4.1"). Its Temperature and Seed are filled in from the
	// fields below.
	Model traces.ModelRef
	// Live answers the requests no recorded judgement holds; nil for an
	// offline grading.
	Live llm.Model
	// Samples, Temperature, Seed and MaxTokens are scoring.Judge's.
	Samples     int
	Temperature float64
	Seed        uint64
	MaxTokens   int
	// Harness is the bench version recorded in the judgement.
	Harness string
	// Now is the clock of the turns' latencies. Default time.Now.
	Now func() time.Time
}

func (o *Options) judge(m llm.Model) *scoring.Judge {
	return &scoring.Judge{Model: m, Samples: o.Samples, Temperature: o.Temperature, Seed: o.Seed, MaxTokens: o.MaxTokens}
}

// Result is one grading.
type Result struct {
	// Judgement is the run to store (traces.JudgeRef names its ref).
	Judgement *traces.Run
	// Scores are the judge's, nil unless Judgement's outcome is answered.
	Scores *scoring.JudgeResult
	// Served counts the samples served from the recorded judgement, Asked
	// those asked of the live judge.
	Served, Asked int
	// Miss is the first request the recorded judgement did not hold
	// (offline, the grading then stops stale), nil if none.
	Miss *replayer.Miss
}

// Grade grades run, a run of scenario sc. recorded is an earlier judgement
// of the same behaviour by the same judge (of run itself, or of the run it
// replays), nil if there is none: its turns are served where the requests'
// keys match, and the live judge, if any, asked from the first miss on.
// The judge's failures are the judgement's outcome (error, stale), not
// Grade's error, which is for harness errors only.
func Grade(ctx context.Context, sc *scenarios.Scenario, run *traces.Run, recorded *traces.Run, o *Options) (*Result, error) {
	if run.Manifest.RunID.IsZero() {
		return nil, errors.New("judge: the graded run has no ID (load it from the store)")
	}
	if run.Manifest.Grades != nil {
		return nil, fmt.Errorf("judge: run %s is a judgement, not an agent's run", run.Manifest.RunID.Short())
	}
	now := o.Now
	if now == nil {
		now = time.Now
	}
	temp, seed := o.Temperature, int64(o.Seed)
	if seed == 0 {
		seed = 1
	}
	ref := o.Model
	ref.Temperature, ref.Seed = &temp, seed
	id := run.Manifest.RunID
	man := traces.Manifest{
		Format: traces.FormatVersion, Mode: traces.ModeRecord, Grades: &id,
		Suite: run.Manifest.Suite, Scenario: run.Manifest.Scenario, Server: run.Manifest.Server,
		Model: ref, RunIndex: run.Manifest.RunIndex, Fixture: run.Manifest.Fixture,
		Harness: o.Harness, SystemPrompt: scoring.JudgeRubric(), StartedAt: now().UTC(),
	}
	var model llm.Model = o.Live
	var rm *replayer.Model
	if recorded != nil && recorded.Manifest.Outcome == traces.OutcomeError && o.Live != nil {
		recorded = nil // a judge that failed is asked again, not replayed failing
	}
	if recorded != nil {
		if recorded.Manifest.Grades == nil {
			return nil, fmt.Errorf("judge: run %s is no judgement", recorded.Manifest.RunID.Short())
		}
		mode := replayer.Strict
		if o.Live != nil {
			mode = replayer.Live
		}
		var err error
		if rm, err = replayer.New(recorded, &replayer.Options{Mode: mode, Live: o.Live}); err != nil {
			return nil, err
		}
		model = rm
		rid := recorded.Manifest.RunID
		man.Mode, man.Replays = traces.ModeReplay, &rid
	}
	if model == nil {
		return nil, errors.New("judge: offline, and no recorded judgement of this run by this judge")
	}
	rec := &recording{inner: model, now: now, start: now(),
		enc: reqkey.NewEncoder(reqkey.Scope{Provider: ref.Provider, Model: ref.Name, Scenario: sc.ID, RunIndex: run.Manifest.RunIndex}, nil)}
	res := &Result{}
	scores, err := o.judge(rec).Grade(ctx, sc, run)
	out := &traces.Run{Manifest: man, Events: rec.events}
	switch {
	case err == nil:
		out.Manifest.Outcome = traces.OutcomeAnswered
		res.Scores = scores
	default:
		var miss *replayer.MissError
		if errors.As(err, &miss) {
			out.Manifest.Outcome = traces.OutcomeStale
			m := miss.Miss
			res.Miss = &m
		} else {
			out.Manifest.Outcome = traces.OutcomeError
		}
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		out.Events = append(out.Events, traces.Event{Kind: traces.KindError, AtUS: now().Sub(rec.start).Microseconds(),
			Error: &traces.Error{Kind: traces.ErrorModel, Message: err.Error()}})
	}
	if rm != nil {
		res.Served = rm.Served()
	}
	res.Asked = rec.turn - res.Served
	if res.Miss != nil {
		res.Asked = 0
	}
	res.Judgement = out
	return res, nil
}

// recording is the llm.Model that keeps each of the judge's turns as a
// trace event, keyed as the recorder keys an agent's.
type recording struct {
	inner  llm.Model
	enc    *reqkey.Encoder
	now    func() time.Time
	start  time.Time
	turn   int
	events []traces.Event
}

func (r *recording) Name() string { return r.inner.Name() }

func (r *recording) Generate(ctx context.Context, req *llm.Request) (*llm.Response, error) {
	reqJSON, key, err := r.enc.Encode(req)
	if err != nil {
		return nil, err
	}
	t0 := r.now()
	resp, err := r.inner.Generate(ctx, req)
	if err != nil {
		return nil, err
	}
	lat := r.now().Sub(t0)
	respJSON, err := json.Marshal(resp)
	if err != nil {
		return nil, err
	}
	if c, err := traces.Canonical(respJSON); err == nil {
		respJSON = c
	}
	r.events = append(r.events, traces.Event{Kind: traces.KindTurn, AtUS: t0.Sub(r.start).Microseconds(), Turn: &traces.Turn{
		Index: r.turn, Key: key, Request: reqJSON, Response: respJSON, LatencyUS: lat.Microseconds(),
		Usage: traces.Usage{Input: int(resp.Usage.InputTokens), Output: int(resp.Usage.OutputTokens), Cached: int(resp.Usage.CachedTokens)},
	}})
	r.turn++
	return resp, nil
}

// Finder finds the judgement to replay for a run: the judge's judgement
// of that very run, or, for a replay, of the run it replays; under the
// run's own ref first (judge/<model>/<ref>), then under any other (the
// same run graded under another name, such as in the calibration set).
type Finder struct {
	s         *traces.Store
	model     string
	byGraded  map[traces.ID]traces.ID // graded run -> a judgement of it
	indexErr  error
	indexDone bool
}

// NewFinder returns a Finder of the judgements by model in s.
func NewFinder(s *traces.Store, model string) *Finder {
	return &Finder{s: s, model: model}
}

// Find returns the judgement to replay for the run stored under ref, nil
// when there is none.
func (f *Finder) Find(ref string, run *traces.Run) (*traces.Run, error) {
	want := []traces.ID{run.Manifest.RunID}
	if run.Manifest.Replays != nil {
		want = append(want, *run.Manifest.Replays)
	}
	// Under the ref itself, or the recorded run's ref for a replay.
	names := []string{traces.JudgeRef(f.model, ref)}
	if base, ok := strings.CutPrefix(ref, "replay/"); ok {
		names = append(names, traces.JudgeRef(f.model, base))
	}
	for _, name := range names {
		id, err := f.s.Ref(name)
		if errors.Is(err, traces.ErrNotFound) {
			continue
		}
		if err != nil {
			return nil, err
		}
		j, err := f.s.GetRun(id)
		if err != nil {
			return nil, err
		}
		if g := j.Manifest.Grades; g != nil && complete(j) && (*g == want[0] || len(want) > 1 && *g == want[1]) {
			return j, nil
		}
	}
	if err := f.index(); err != nil {
		return nil, err
	}
	for _, w := range want {
		if id, ok := f.byGraded[w]; ok {
			return f.s.GetRun(id)
		}
	}
	return nil, nil
}

// index maps every run the model graded to one of its judgements (the
// first by ref name).
func (f *Finder) index() error {
	if f.indexDone {
		return f.indexErr
	}
	f.indexDone = true
	f.byGraded = map[traces.ID]traces.ID{}
	refs, err := f.s.Refs(traces.JudgeRef(f.model, ""))
	if err != nil {
		f.indexErr = err
		return err
	}
	for _, r := range refs {
		j, err := f.s.GetRun(r.Run)
		if err != nil {
			f.indexErr = err
			return err
		}
		if g := j.Manifest.Grades; g != nil && complete(j) {
			if _, ok := f.byGraded[*g]; !ok {
				f.byGraded[*g] = r.Run
			}
		}
	}
	return nil
}

// Add records that judgement j (stored) grades its run, for later Finds.
func (f *Finder) Add(j *traces.Run) {
	if f.byGraded != nil && j.Manifest.Grades != nil && complete(j) {
		f.byGraded[*j.Manifest.Grades] = j.Manifest.RunID
	}
}

// complete reports whether judgement j asked every sample: answered, or
// an error of the judge's (no valid rubric JSON), which replays to the
// same error. A stale judgement stopped at a miss, and holds less.
func complete(j *traces.Run) bool {
	return j.Manifest.Outcome == traces.OutcomeAnswered || j.Manifest.Outcome == traces.OutcomeError
}
