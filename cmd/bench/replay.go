package main

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/spf13/cobra"

	"github.com/mcpbench/bench/llm"
	"github.com/mcpbench/bench/recorder"
	"github.com/mcpbench/bench/replayer"
	"github.com/mcpbench/bench/scenarios"
	"github.com/mcpbench/bench/scoring"
	"github.com/mcpbench/bench/traces"
)

// replayRefPrefix is the first segment of the refs of replay runs:
// replay/<the recorded run's ref>.
const replayRefPrefix = "replay/"

type replayOptions struct {
	suite      string
	stage      string
	from       string
	server     string
	serverEnv  []string
	mode       string
	liveModel  string
	baseline   string
	config     string
	reportDir  string
	formats    []string
	scenarios  []string
	reuse      bool
	parallel   int
	resolution time.Duration
	callTO     time.Duration
	runTO      time.Duration
}

func newReplayCmd(a *app) *cobra.Command {
	opts := &replayOptions{}
	cmd := &cobra.Command{
		Use:   "replay (--suite S | --stage S) --server PROFILE [--from REF-PREFIX] [--mode strict|lenient|live] [--baseline REF-PREFIX|REPORT.json]",
		Short: "Replay recorded runs against the current server; score; gate; report",
		Long: `replay serves the recorded model turns of every stored run under --from
(default golden/<server>/) whose scenario is in the selection, while the
server the profile describes runs live against a fresh fake Central, exactly
as in a recording. No model, no key and no network are needed.

At each turn the request the live run builds is compared with the recorded
one by its key. Equal: the recorded response is served, with its recorded
usage and latency (as data; replay never waits). Different: a miss,
explained by component (tool definitions added, removed or changed, with a
word diff of the description and a JSON-path diff of the schema; the
message that differs, with a JSON-path diff of the tool result; sampling;
system prompt) and handled by --mode: strict stops the run (outcome stale),
lenient serves the recorded turn anyway (outcome diverged), live asks
--live-model from the miss on.

The replay runs are stored under replay/<recorded ref>, scored, compared
with the baseline (default: the recorded runs themselves; or a ref prefix,
or a REPORT.json) and gated by the stage's gate: section in --config.
Reports go to stdout (text) and, with --report-dir, to REPORT.txt,
REPORT.json, REPORT.md and REPORT.xml (JUnit) in that directory, as
--format lists them. Replay runs are stored under replay/<recorded ref>;
the latest replay of a recorded run holds the ref.

Latency in a replay is the recorded model time plus the server's time
while tools ran, each interval rounded down to --latency-resolution (default
500ms), so that two replays of one store give byte-identical reports and a
server that got a second slower still shows. 0 counts model time only.

The server a run needs starts in the background while the run before it
replays (with --reuse-server, each fixture's server while the previous
fixture's runs replay), so start-up does not add to the replay's time.

--parallel N replays N runs at once, each with its own server and fake
Central; the reports are the same as with one at a time (results are
collected in ref order). Parallel runs share the CPU, so a tool call that
takes close to a multiple of --latency-resolution may round differently:
keep the default of 1 where latency is gated and the machine is small.

Exit codes: 0 pass, 1 regression past a threshold, 2 bad input, 3 safety
failure, 4 setup failure (the server or the fake did not start), 5
inconclusive (more stale runs than the gate allows).`,
		Example: `  bench replay --stage core --server servers/reference.yaml
  bench replay --stage safety --server servers/reference.yaml --report-dir out --format text,json,md,junit
  bench replay --stage core --server servers/reference.yaml --server-env CENTRAL_INJECT=verbose-tools --mode lenient`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return runReplay(cmd.Context(), a, opts)
		},
	}
	f := cmd.Flags()
	f.StringVar(&opts.suite, "suite", "", "replay the runs of this suite's scenarios")
	f.StringVar(&opts.stage, "stage", "", "replay the runs of this bench.yaml stage's scenarios, gated by its gate")
	f.StringVar(&opts.from, "from", "", "ref prefix of the recorded runs (default golden/<server name>/)")
	f.StringVar(&opts.server, "server", "", "profile of the server under test")
	f.StringArrayVar(&opts.serverEnv, "server-env", nil, "KEY=VALUE added to the server's environment (repeatable)")
	f.StringVar(&opts.mode, "mode", "strict", "what a miss does: strict, lenient or live")
	f.StringVar(&opts.liveModel, "live-model", "", "model spec asked from a miss on, in live mode")
	f.StringVar(&opts.baseline, "baseline", "", "runs to compare with: a ref prefix or a REPORT.json (default: the recorded runs)")
	f.StringVar(&opts.config, "config", defaultConfigFile, "bench.yaml with the stages and their gates")
	f.StringVar(&opts.reportDir, "report-dir", "", "write the reports (REPORT.txt, .json, .md, .xml) here")
	f.StringSliceVar(&opts.formats, "format", []string{"text"}, "report formats: text, json, md, junit")
	f.StringSliceVar(&opts.scenarios, "scenarios", nil, "scenario manifests (default: the built-in golden suite)")
	f.BoolVar(&opts.reuse, "reuse-server", false, "keep one server per profile and fixture, resetting the fake between runs")
	f.IntVar(&opts.parallel, "parallel", 1, "runs replayed at once, each with its own server and fake Central")
	f.DurationVar(&opts.resolution, "latency-resolution", replayer.DefaultResolution, "resolution of live tool time; 0 counts recorded model time only")
	f.DurationVar(&opts.callTO, "call-timeout", 60*time.Second, "bound on one tool call")
	f.DurationVar(&opts.runTO, "run-timeout", 15*time.Minute, "bound on one run")
	return cmd
}

// reportFiles names the files --report-dir gets, by format.
var reportFiles = map[string]string{"json": "REPORT.json", "md": "REPORT.md", "junit": "REPORT.xml", "text": "REPORT.txt"}

// replayed is one recorded run and its replay.
type replayed struct {
	ref      string
	recorded *traces.Run
	replay   *traces.Run
	misses   []replayer.Miss
}

func runReplay(ctx context.Context, a *app, opts *replayOptions) error {
	if (opts.suite == "") == (opts.stage == "") {
		return usageErr(errors.New("replay needs exactly one of --suite and --stage"))
	}
	if opts.server == "" {
		return usageErr(errors.New("replay needs --server PROFILE"))
	}
	mode, err := replayer.ParseMode(opts.mode)
	if err != nil {
		return usageErr(err)
	}
	if opts.parallel < 1 {
		return usageErr(fmt.Errorf("--parallel %d: want at least 1", opts.parallel))
	}
	go recorder.Warm() // while the scenarios, the profile and the store load
	for _, f := range opts.formats {
		if _, ok := reportFiles[f]; !ok {
			return usageErr(fmt.Errorf("--format %q: want text, json, md or junit", f))
		}
	}
	profile, err := recorder.LoadProfile(opts.server)
	if err != nil {
		return usageErr(err)
	}
	if err := profile.ExpandEnv(a.getenv); err != nil {
		return usageErr(err)
	}
	for _, kv := range opts.serverEnv {
		k, v, ok := strings.Cut(kv, "=")
		if !ok || k == "" {
			return usageErr(fmt.Errorf("--server-env %q: want KEY=VALUE", kv))
		}
		if profile.Env == nil {
			profile.Env = map[string]string{}
		}
		profile.Env[k] = v
	}
	selected, gate, label, err := replaySelection(opts)
	if err != nil {
		return err
	}
	var live func(*scenarios.Scenario) (llm.Model, error)
	var secrets []string
	if mode == replayer.Live {
		if opts.liveModel == "" {
			return usageErr(errors.New("--mode live needs --live-model SPEC"))
		}
		spec, err := llm.ParseSpec(opts.liveModel)
		if err != nil {
			return usageErr(err)
		}
		if live, secrets, err = modelFactory(a, spec, profile.Name); err != nil {
			return err
		}
	}

	store, err := openStore(a)
	if err != nil {
		return err
	}
	defer store.Close()
	from := opts.from
	if from == "" {
		from = "golden/" + profile.Name + "/"
	}
	refs, err := candidateRefs(store, from, selected)
	if err != nil {
		return err
	}
	scorer, err := newRunScorer(opts.scenarios)
	if err != nil {
		return err
	}

	wallStart := time.Now()
	// Workers replay, store and score runs at once (--parallel), each with
	// its own clock, recorder and servers; a collector takes their results
	// in the order of refs, so reports and progress lines do not depend on
	// which worker finished first. A run is kept only while it is worked
	// on: what the report needs of it (metrics, manifest, misses) is all
	// that is collected, so memory stays flat however many runs replay.
	type result struct {
		skip            bool
		ref             string
		outcome         traces.Outcome
		note            string
		startFailed     bool
		misses          []scoring.Miss
		current, before *scoring.RunMetrics
		manifest        traces.Manifest
	}
	// replay replays one recorded run; nil, nil: not a run to replay.
	replay := func(ctx context.Context, rec *recorder.Recorder, clock *replayer.Clock, ref traces.Ref, get func() (*traces.Run, error)) (*replayed, error) {
		recorded, err := get()
		if err != nil {
			return nil, setupErr(fmt.Errorf("reading %s: %w", ref.Name, err))
		}
		sc := selected[recorded.Manifest.Scenario.ID]
		if recorded.Manifest.Mode != traces.ModeRecord || sc == nil {
			return nil, nil
		}
		r := &replayed{ref: ref.Name, recorded: recorded}
		if err := replayOne(ctx, rec, clock, profile, sc, mode, live, r); err != nil {
			return nil, setupErr(fmt.Errorf("replaying %s: %w", r.ref, err))
		}
		if ctx.Err() != nil {
			return nil, fmt.Errorf("interrupted: %w", ctx.Err())
		}
		return r, nil
	}
	// finish stores and scores a replay.
	finish := func(r *replayed) (*result, error) {
		r.replay.Manifest.StartedAt = time.Now().UTC()
		// Replays can be recomputed: written without waiting for the disk,
		// made durable together below. Score what was stored (canonical
		// payloads, run ID filled in), as the recorded runs are: the same
		// bytes measure the same.
		stored, err := store.PutRunNoSyncRead(r.replay, replayRefPrefix+r.ref)
		if err != nil {
			return nil, setupErr(fmt.Errorf("storing the replay of %s: %w", r.ref, err))
		}
		r.replay = stored
		res := &result{ref: r.ref, outcome: r.replay.Manifest.Outcome, startFailed: r.replay.FirstError() == traces.ErrorStart,
			misses: missRows(r, profile.Name), manifest: r.replay.Manifest}
		if len(r.misses) > 0 {
			res.note = fmt.Sprintf(" (%d miss(es), first at turn %d)", len(r.misses), r.misses[0].Turn)
		}
		if res.current, err = scorer.score(r.replay); err != nil {
			return nil, err
		}
		res.current.Ref = replayRefPrefix + r.ref
		if opts.baseline == "" {
			if res.before, err = scorer.score(r.recorded); err != nil {
				return nil, err
			}
			res.before.Ref = r.ref
		}
		return res, nil
	}

	var misses []scoring.Miss
	var current, recordedMetrics []*scoring.RunMetrics
	var manifests []*traces.Run
	startFailures, replayedRuns, firstRef := 0, 0, ""
	collect := func(i int, res *result) {
		if res.skip {
			return
		}
		replayedRuns++
		if firstRef == "" {
			firstRef = res.ref
		}
		if res.startFailed {
			startFailures++
		}
		fmt.Fprintf(a.stderr, "[%d/%d] %s: %s%s\n", i+1, len(refs), res.ref, res.outcome, res.note)
		misses = append(misses, res.misses...)
		current = append(current, res.current)
		manifests = append(manifests, &traces.Run{Manifest: res.manifest})
		if res.before != nil {
			recordedMetrics = append(recordedMetrics, res.before)
		}
	}

	wctx, stop := context.WithCancel(ctx)
	defer stop()
	type job struct {
		i     int
		ref   traces.Ref
		sc    *scenarios.Scenario // nil: not of the selection
		first bool                // the first run of its group
	}
	// With --reuse-server the runs that would share a server when replayed
	// one at a time (same fixture and write gate) form a group that one
	// worker replays in ref order, on one server: each run then meets the
	// server in the state it would meet it sequentially (its token cache,
	// say), and the results do not depend on --parallel. Without it every
	// run has a fresh server and is a group of its own.
	var groups [][]job
	groupOf := map[string]int{}
	for i, ref := range refs {
		sc := refScenario(ref.Name, selected)
		key := strconv.Itoa(i)
		if opts.reuse {
			key = ""
			if sc != nil {
				key = recorder.ServerGroup(sc)
			}
		}
		g, ok := groupOf[key]
		if !ok {
			g = len(groups)
			groupOf[key] = g
			groups = append(groups, nil)
		}
		groups[g] = append(groups[g], job{i: i, ref: ref, sc: sc, first: len(groups[g]) == 0})
	}
	type done struct {
		i   int
		res *result
		err error
	}
	// Groups go to workers ahead of time, the largest first to the least
	// loaded, so that each worker knows its next group and starts that
	// group's server (recorder.Prestart) while it replays the current one.
	assigned := make([][][]job, opts.parallel)
	load := make([]int, opts.parallel)
	order := make([]int, len(groups))
	for i := range order {
		order[i] = i
	}
	slices.SortStableFunc(order, func(a, b int) int { return cmp.Compare(len(groups[b]), len(groups[a])) })
	for _, g := range order {
		w := slices.Index(load, slices.Min(load))
		assigned[w] = append(assigned[w], groups[g])
		load[w] += len(groups[g])
	}
	queues := make([][]job, opts.parallel) // each worker's runs, its groups in ref order
	for w, q := range assigned {
		slices.SortFunc(q, func(a, b []job) int { return cmp.Compare(a[0].i, b[0].i) })
		queues[w] = slices.Concat(q...)
	}
	dones := make(chan done, opts.parallel)
	var wg sync.WaitGroup
	for w := range opts.parallel {
		clock := replayer.NewClock(wallStart, time.Now, opts.resolution)
		rec := recorder.New(&recorder.Options{
			Harness: version, Now: clock.Now, Environ: os.Environ(), Secrets: secrets, ReuseServer: opts.reuse,
			CallTimeout: opts.callTO, RunTimeout: opts.runTO,
		})
		defer rec.Close()
		wg.Add(1)
		go func() {
			defer wg.Done()
			// Each worker stores and scores earlier runs while it replays
			// the next: at most two of those in flight.
			var finishing sync.WaitGroup
			defer finishing.Wait()
			slots := make(chan struct{}, 2)
			queue := queues[w]
			// The next recorded run is read while this one replays.
			type read struct {
				run *traces.Run
				err error
			}
			reading := func(ref traces.Ref) func() (*traces.Run, error) {
				ch := make(chan read, 1)
				go func() {
					run, err := store.GetRun(ref.Run)
					ch <- read{run, err}
				}()
				return func() (*traces.Run, error) { r := <-ch; return r.run, r.err }
			}
			var next func() (*traces.Run, error)
			if len(queue) > 0 {
				next = reading(queue[0].ref)
			}
			for k, j := range queue {
				get := next
				next = nil
				if k+1 < len(queue) {
					next = reading(queue[k+1].ref)
				}
				if wctx.Err() != nil {
					// An error stopped the replay: let the reads in flight
					// finish before the store closes.
					get()
					if next != nil {
						next()
					}
					return
				}
				// The server the next run needs starts now: the next run's,
				// or with --reuse-server the next group's, at this group's
				// first run.
				switch {
				case !opts.reuse && k+1 < len(queue):
					rec.Prestart(profile, queue[k+1].sc)
				case opts.reuse && j.first:
					for _, later := range queue[k+1:] {
						if later.first {
							rec.Prestart(profile, later.sc)
							break
						}
					}
				}
				r, err := replay(wctx, rec, clock, j.ref, get)
				if err != nil || r == nil {
					dones <- done{i: j.i, res: &result{skip: true}, err: err}
					continue
				}
				slots <- struct{}{}
				finishing.Add(1)
				go func() {
					defer func() { <-slots; finishing.Done() }()
					res, err := finish(r)
					dones <- done{i: j.i, res: res, err: err}
				}()
			}
		}()
	}
	go func() { wg.Wait(); close(dones) }()
	// Results arrive in any order; they are collected in ref order. An
	// error stops the workers; of the errors seen, the one of the earliest
	// ref is returned.
	pending := map[int]*result{}
	next, errAt := 0, len(refs)
	var loopErr error
	for d := range dones {
		if d.err != nil {
			if d.i < errAt {
				loopErr, errAt = d.err, d.i
			}
			stop()
			continue
		}
		if loopErr != nil {
			continue
		}
		pending[d.i] = d.res
		for pending[next] != nil {
			collect(next, pending[next])
			delete(pending, next)
			next++
		}
	}
	if err := cmp.Or(loopErr, ctx.Err(), store.Sync()); err != nil {
		if ctx.Err() != nil && loopErr == nil {
			return fmt.Errorf("interrupted: %w", ctx.Err())
		}
		return err
	}
	if replayedRuns == 0 {
		return usageErr(fmt.Errorf("no recorded run of the selection under %q in %s (record them with bench record)", from, store.Dir()))
	}
	if startFailures == replayedRuns {
		return setupErr(fmt.Errorf("server %s never started (see bench traces show %s%s for its stderr)", profile.Name, replayRefPrefix, firstRef))
	}
	base, baseLabel := recordedMetrics, "recorded ("+from+")"
	if opts.baseline != "" {
		baseLabel = opts.baseline
		if base, err = baselineRuns(a, store, scorer, opts.baseline, selected); err != nil {
			return err
		}
	}
	rep := scoring.BuildReport(&scoring.ReportInput{
		Title: "bench replay: " + label, Stage: opts.stage,
		Current: current, Baseline: base, BaselineLabel: baseLabel, CurrentLabel: "replay (" + profile.Name + ")",
		Gate: gate, Meta: scoring.MetaFromRuns(manifests), Misses: foldMisses(misses), ExitCode: verdictExit,
	})
	if err := writeReplayReports(a, opts, rep); err != nil {
		return err
	}
	fmt.Fprintf(a.stderr, "replayed %d runs in %s: %d miss(es), verdict %s (exit %d)\n",
		replayedRuns, time.Since(wallStart).Round(time.Millisecond), len(misses), rep.Verdict.Status, rep.Verdict.ExitCode)
	if rep.Verdict.ExitCode != 0 {
		return &silentExit{code: rep.Verdict.ExitCode}
	}
	return nil
}

// replaySelection returns the selected scenarios by id, the gate and a
// label for the report's title.
func replaySelection(opts *replayOptions) (map[string]*scenarios.Scenario, *scoring.Gate, string, error) {
	all, errs := loadScenarios(opts.scenarios)
	if len(errs) > 0 {
		return nil, nil, "", usageErr(fmt.Errorf("loading scenarios: %w", errs))
	}
	list, label := all, "suite "+opts.suite
	gate := scoring.DefaultGate("")
	if opts.stage != "" {
		label = "stage " + opts.stage
		cfg, err := loadConfig(opts.config)
		if err != nil {
			return nil, nil, "", usageErr(err)
		}
		st := cfg.Stage(opts.stage)
		if st == nil {
			var names []string
			for _, s := range cfg.Stages {
				names = append(names, s.Name)
			}
			return nil, nil, "", usageErr(fmt.Errorf("%s has no stage %q (have %s)", opts.config, opts.stage, strings.Join(names, ", ")))
		}
		if gate, err = scoring.StageGate(cfg, opts.stage); err != nil {
			return nil, nil, "", usageErr(err)
		}
		list = st.Select(list)
	}
	out := map[string]*scenarios.Scenario{}
	for _, sc := range list {
		if opts.suite == "" || sc.Suite == opts.suite {
			out[sc.ID] = sc
		}
	}
	if len(out) == 0 {
		return nil, nil, "", usageErr(errors.New("the selection matches no scenario"))
	}
	return out, gate, label, nil
}

// candidateRefs lists the refs under prefix that may hold a recorded run of
// the selection, sorted by name: a ref's scenario segment
// (<suite>/<server>/<model>/<scenario>/<index>) must be selected. The
// run's own manifest decides when it is read.
func candidateRefs(store *traces.Store, prefix string, selected map[string]*scenarios.Scenario) ([]traces.Ref, error) {
	refs, err := store.Refs(prefix)
	if err != nil {
		return nil, setupErr(err)
	}
	var out []traces.Ref
	for _, r := range refs {
		if strings.Contains(r.Name, "/") && refScenario(r.Name, selected) == nil {
			continue
		}
		out = append(out, r)
	}
	if len(out) == 0 {
		return nil, usageErr(fmt.Errorf("no recorded run of the selection under %q in %s (record them with bench record)", prefix, store.Dir()))
	}
	slices.SortFunc(out, func(a, b traces.Ref) int { return cmp.Compare(a.Name, b.Name) })
	return out, nil
}

// refScenario is the selected scenario a ref names in its scenario segment
// (<suite>/<server>/<model>/<scenario>/<index>), nil if none.
func refScenario(name string, selected map[string]*scenarios.Scenario) *scenarios.Scenario {
	parts := strings.Split(name, "/")
	if len(parts) < 2 {
		return nil
	}
	return selected[parts[len(parts)-2]]
}

// replayOne replays one recorded run with the server live.
func replayOne(ctx context.Context, rec *recorder.Recorder, clock *replayer.Clock, p *recorder.Profile, sc *scenarios.Scenario,
	mode replayer.Mode, newLive func(*scenarios.Scenario) (llm.Model, error), r *replayed) error {
	var live llm.Model
	if newLive != nil {
		var err error
		if live, err = newLive(sc); err != nil {
			return err
		}
	}
	m, err := replayer.New(r.recorded, &replayer.Options{Mode: mode, Live: live, Clock: clock})
	if err != nil {
		return err
	}
	id := r.recorded.Manifest.RunID
	job := &recorder.Job{
		Suite: r.recorded.Manifest.Suite, Scenario: sc, Profile: p, Model: m,
		ModelRef: r.recorded.Manifest.Model, Sampling: recordedSampling(r.recorded), RunIndex: r.recorded.Manifest.RunIndex,
		Mode: traces.ModeReplay, Replays: &id,
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
	r.replay, r.misses = run, m.Misses()
	return nil
}

// recordedSampling is the sampling the recorded run sent: its first
// request's, else what its manifest says.
func recordedSampling(run *traces.Run) llm.Sampling {
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

// missRows collects a replay's misses, one row per run and turn.
func missRows(r *replayed, server string) []scoring.Miss {
	var out []scoring.Miss
	for _, m := range r.misses {
		out = append(out, scoring.Miss{Scenario: r.recorded.Manifest.Scenario.ID, Server: server,
			RunIndex: r.recorded.Manifest.RunIndex, Turn: m.Turn, Explanation: m.Explain()})
	}
	return out
}

// maxFoldedNames bounds the scenarios a folded miss names.
const maxFoldedNames = 8

// foldMisses folds misses explained alike (same turn, same explanation)
// into the first of them, in report order, which then says where else it
// was seen: a pull request that changes a tool description misses every
// run at turn 0 the same way, and the report (a PR comment) should say so
// once.
func foldMisses(rows []scoring.Miss) []scoring.Miss {
	rows = slices.Clone(rows)
	slices.SortStableFunc(rows, func(a, b scoring.Miss) int {
		return cmp.Or(cmp.Compare(a.Scenario, b.Scenario), cmp.Compare(a.Server, b.Server), cmp.Compare(a.RunIndex, b.RunIndex), cmp.Compare(a.Turn, b.Turn))
	})
	type group struct {
		first     int
		runs      int
		scenarios []string
	}
	groups := map[string]*group{}
	var order []string
	for i, m := range rows {
		k := fmt.Sprintf("%d\x00%s\x00%s", m.Turn, m.Server, m.Explanation)
		g := groups[k]
		if g == nil {
			g = &group{first: i}
			groups[k] = g
			order = append(order, k)
		}
		g.runs++
		if !slices.Contains(g.scenarios, m.Scenario) {
			g.scenarios = append(g.scenarios, m.Scenario)
		}
	}
	out := make([]scoring.Miss, 0, len(order))
	for _, k := range order {
		g := groups[k]
		m := rows[g.first]
		if g.runs > 1 {
			names := g.scenarios
			more := ""
			if len(names) > maxFoldedNames {
				more = fmt.Sprintf(" and %d more", len(names)-maxFoldedNames)
				names = names[:maxFoldedNames]
			}
			m.Explanation += fmt.Sprintf("\n  (the same miss in %d runs of %d scenario(s): %s%s)", g.runs, len(g.scenarios), strings.Join(names, ", "), more)
		}
		out = append(out, m)
	}
	return out
}

// baselineRuns loads the baseline: a REPORT.json's runs, or the stored runs
// under a ref prefix, scored, restricted to the selection.
func baselineRuns(a *app, store *traces.Store, scorer *runScorer, arg string, selected map[string]*scenarios.Scenario) ([]*scoring.RunMetrics, error) {
	var out []*scoring.RunMetrics
	if strings.HasSuffix(arg, ".json") {
		f, err := os.Open(arg)
		if err != nil {
			return nil, usageErr(fmt.Errorf("--baseline: %w", err))
		}
		defer f.Close()
		rep, err := scoring.ReadReport(f)
		if err != nil {
			return nil, usageErr(fmt.Errorf("--baseline %s: %w", arg, err))
		}
		if rep.Methodology != scoring.MethodologyVersion {
			fmt.Fprintf(a.stderr, "bench: warning: %s was scored under methodology %s; this bench implements %s\n", arg, rep.Methodology, scoring.MethodologyVersion)
		}
		for _, m := range rep.Runs() {
			if selected[m.Scenario] != nil {
				out = append(out, m)
			}
		}
	} else {
		refs, err := store.Refs(arg)
		if err != nil {
			return nil, setupErr(err)
		}
		for _, r := range refs {
			run, err := store.GetRun(r.Run)
			if err != nil {
				return nil, setupErr(err)
			}
			if selected[run.Manifest.Scenario.ID] == nil {
				continue
			}
			m, err := scorer.score(run)
			if err != nil {
				return nil, err
			}
			m.Ref = r.Name
			out = append(out, m)
		}
	}
	if len(out) == 0 {
		return nil, usageErr(fmt.Errorf("--baseline %q holds no run of the selection", arg))
	}
	return out, nil
}

// writeReplayReports prints the text report and writes the others: to
// --report-dir, or to stdout after the text when no directory is given.
func writeReplayReports(a *app, opts *replayOptions, rep *scoring.Report) error {
	writers := map[string]func(io.Writer, *scoring.Report) error{
		"text": scoring.WriteText, "json": scoring.WriteJSON, "md": scoring.WriteMarkdown, "junit": scoring.WriteJUnit,
	}
	if opts.reportDir != "" {
		if err := os.MkdirAll(opts.reportDir, 0o755); err != nil {
			return setupErr(err)
		}
	}
	for _, f := range opts.formats {
		if f == "text" || opts.reportDir == "" {
			if err := writers[f](a.stdout, rep); err != nil {
				return err
			}
		}
		if opts.reportDir == "" {
			continue
		}
		file, err := os.Create(filepath.Join(opts.reportDir, reportFiles[f]))
		if err != nil {
			return setupErr(err)
		}
		err = writers[f](file, rep)
		if cerr := file.Close(); err == nil {
			err = cerr
		}
		if err != nil {
			return setupErr(err)
		}
	}
	return nil
}
