package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"slices"
	"time"

	"github.com/spf13/cobra"

	"github.com/mcpbench/bench/batch"
	"github.com/mcpbench/bench/llm"
	"github.com/mcpbench/bench/recorder"
	"github.com/mcpbench/bench/replayer"
	"github.com/mcpbench/bench/scenarios"
	"github.com/mcpbench/bench/scoring"
)

type replayOptions struct {
	sel        selection
	from       string
	server     string
	serverEnv  []string
	mode       string
	liveModel  string
	baseline   string
	reportDir  string
	formats    []string
	reuse      bool
	reuseSet   bool // --reuse-server was given
	parallel   int
	resolution time.Duration
	callTO     time.Duration
	runTO      time.Duration
	requestTO  time.Duration
	passEnv    []string
	isolation  string
}

func newReplayCmd(a *app) *cobra.Command {
	opts := &replayOptions{}
	cmd := &cobra.Command{
		Use:   "replay (--suite S | --stage S | --scenario ID) --server PROFILE [--from REF-PREFIX] [--mode strict|lenient|live] [--baseline REF-PREFIX|REPORT.json]",
		Short: "Replay recorded runs against the current server; score; gate; report",
		Long:  replayLong,
		Example: `  bench replay --stage core --server servers/reference.yaml
  bench replay --stage safety --server servers/reference.yaml --report-dir out --format text,json,md,junit
  bench replay --stage core --server servers/reference.yaml --server-env CENTRAL_INJECT=verbose-tools --mode lenient`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			opts.reuseSet = cmd.Flags().Changed("reuse-server")
			return runReplay(cmd.Context(), a, opts)
		},
	}
	f := cmd.Flags()
	opts.sel.register(f, "replay the runs of")
	opts.sel.registerExpectations(f)
	f.StringVar(&opts.from, "from", "", "ref prefix of the recorded runs (default golden/<server name>/)")
	f.StringVar(&opts.server, "server", "", "profile of the server under test")
	f.StringArrayVar(&opts.serverEnv, "server-env", nil, "KEY=VALUE added to the server's environment (repeatable)")
	f.StringVar(&opts.mode, "mode", "strict", "what a miss does: strict, lenient or live")
	f.StringVar(&opts.liveModel, "live-model", "", "model spec asked from a miss on, in live mode")
	f.StringVar(&opts.baseline, "baseline", "", "runs to compare with: a ref prefix or a REPORT.json (default: the recorded runs)")
	f.StringVar(&opts.reportDir, "report-dir", "", "write the reports (REPORT.txt, .json, .md, .xml) here")
	f.StringSliceVar(&opts.formats, "format", []string{"text"}, "report formats: text, json, md, junit")
	f.BoolVar(&opts.reuse, "reuse-server", false, "keep one server per profile and fixture, resetting the fake between runs (default: as the runs were recorded)")
	intVarMin(f, &opts.parallel, "parallel", 1, 1, "runs replayed at once, each with its own server and fake Central")
	durationVarNonNegative(f, &opts.resolution, "latency-resolution", replayer.DefaultResolution, "step of live time on the replay clock (event times, the fake's clock); 0 counts recorded model time only")
	durationVarPositive(f, &opts.callTO, "call-timeout", 60*time.Second, "bound on one tool call")
	durationVarPositive(f, &opts.runTO, "run-timeout", 15*time.Minute, "bound on one run")
	durationVarPositive(f, &opts.requestTO, "request-timeout", defaultRequestTimeout, "bound on one HTTP request to --live-model's provider (each attempt; retried past it)")
	addPassEnvFlag(f, &opts.passEnv)
	addIsolationFlag(f, &opts.isolation)
	return cmd
}

func runReplay(ctx context.Context, a *app, opts *replayOptions) error {
	if !opts.sel.narrows() && len(opts.sel.paths) == 0 {
		return usageErr(errors.New("replay needs --suite, --stage or --scenario, or --scenarios PATH (every scenario it loads); a stage's gate gates the replay"))
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
	for _, f := range opts.formats {
		if _, ok := reportFiles[f]; !ok {
			return usageErr(fmt.Errorf("--format %q: want text, json, md or junit", f))
		}
	}
	if err := checkLoopback(); err != nil {
		return err
	}
	// The store opens while the profile and the scenarios load.
	ahead := openStoreAhead(a)
	defer ahead.Close()
	profile, err := loadProfile(a, opts.server, opts.serverEnv, opts.passEnv)
	if err != nil {
		return err
	}
	if err := checkPassEnv(a, a.stderr, profile, opts.passEnv); err != nil {
		return err
	}
	if err := probeIsolation(opts.isolation); err != nil {
		return err
	}
	ld, err := opts.sel.load()
	if err != nil {
		return err
	}
	if err := checkIsolation(a.stderr, opts.isolation); err != nil {
		return err
	}
	if err := ld.attachProfile(profile); err != nil {
		return err
	}
	selected := map[string]*scenarios.Scenario{}
	for _, sc := range ld.selected {
		selected[sc.ID] = sc
	}
	gate, label := scoring.DefaultGate(""), opts.sel.label()
	agg := &scoring.AggregateOptions{Runs: scenarios.DefaultRuns}
	if stage := opts.sel.stage; stage != "" {
		if gate, err = scoring.StageGate(ld.cfg, stage); err != nil {
			return usageErr(err)
		}
		agg.Runs = ld.cfg.Stage(stage).RunsAsked()
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
		if live, secrets, err = modelFactory(a, spec, profile, opts.requestTO); err != nil {
			return err
		}
	}
	store, err := ahead.Wait()
	if err != nil {
		return err
	}
	defer store.Close()
	from := opts.from
	if from == "" {
		from = "golden/" + profile.Name + "/"
	}
	refs, err := batch.RecordedRefs(store, from, selected)
	if err != nil {
		return setupErr(err)
	}
	if len(refs) == 0 {
		return usageErr(fmt.Errorf("no recorded run of the selection under %q in %s (record them with bench record)", from, store.Dir()))
	}
	if !opts.reuseSet {
		// As recorded: a reused server fetches its token once, a fresh one
		// at every run, and api_call_count counts it.
		if opts.reuse, err = batch.RecordedReuse(store, refs); err != nil {
			return setupErr(err)
		}
		if opts.reuse {
			fmt.Fprintln(a.stderr, "replay: the runs were recorded with --reuse-server, and are replayed so (--reuse-server=false starts a server for every run)")
		}
	}
	scorer := newRunScorer(ld.all)
	start := time.Now()
	res, err := (&batch.Replay{
		Options: batch.Options{Parallel: opts.parallel, Recorder: recorder.Options{
			Harness: version, Environ: os.Environ(), PassEnv: opts.passEnv, Isolation: opts.isolation, Secrets: secrets, CallTimeout: opts.callTO, RunTimeout: opts.runTO,
		}},
		Store: store, Profile: profile, Refs: refs, Scenarios: selected, ReuseServer: opts.reuse,
		Mode: mode, Live: live, Resolution: opts.resolution, Score: scorer.score, ScoreRecorded: opts.baseline == "",
		KeepRuns: slices.Contains(opts.formats, "json"), Aggregate: agg, Tools: scorer.s.ToolDefinitions,
		Progress: func(r *batch.Replayed) {
			note := ""
			if len(r.Misses) > 0 {
				note = fmt.Sprintf(" (%d miss(es), first at turn %d)", len(r.Misses), r.Misses[0].Turn)
			}
			outcome := string(r.Outcome)
			if r.RecordedError {
				outcome = "recorded error (the recording ended in an error; not scored, not compared)"
			}
			fmt.Fprintf(a.stderr, "[%d/%d] %s: %s%s\n", r.Index+1, len(refs), r.Ref, outcome, note)
		},
	}).Run(ctx)
	var ee *exitError
	switch {
	case err != nil && ctx.Err() != nil:
		return fmt.Errorf("interrupted: %w", ctx.Err())
	case err != nil && !errors.As(err, &ee):
		return setupErr(err)
	case err != nil:
		return err
	case res.Runs == 0:
		return usageErr(fmt.Errorf("no recorded run of the selection under %q in %s (record them with bench record)", from, store.Dir()))
	case res.StartFailures == res.Runs:
		return setupErr(fmt.Errorf("server %s never started (see bench traces show %s%s for its stderr)", profile.Name, batch.ReplayRefPrefix, res.FirstRef))
	}
	a.stats.batchTimes(res.Times)
	base, baseLabel := res.RecordedPooled, "recorded ("+from+")"
	if opts.baseline != "" {
		baseLabel = opts.baseline
		runs, err := baselineRuns(a, store, scorer, opts.baseline, selected)
		if err != nil {
			return err
		}
		base = scoring.NewAggregator(agg)
		base.PoolServers = true
		for _, m := range runs {
			base.Add(m)
		}
	}
	r := scoring.ResultsOf(res.Current, base, res.CurrentPooled)
	rep := scoring.BuildReport(&scoring.ReportInput{
		Title: "bench replay: " + label, Stage: opts.sel.stage, Results: r[0],
		Comparison: scoring.CompareResults(baseLabel, r[1], "replay ("+profile.Name+")", r[2], nil),
		Gate:       gate, Meta: res.Meta.Meta(), Misses: scoring.FoldMisses(res.Misses), ExitCode: verdictExit,
		Secrets: scorer.secrets(), Aggregate: agg, ToolDefinitions: res.ToolDefinitions, ToolChurn: res.ToolChurn,
	})
	rep.Warnings = append(rep.Warnings, replayWarnings(res)...)
	if err := writeReplayReports(a, opts, rep); err != nil {
		return err
	}
	recErrs := ""
	if res.RecordedErrors > 0 {
		recErrs = fmt.Sprintf(", %d recorded error(s)", res.RecordedErrors)
	}
	if note := prestartNote(res.Prestarts); note != "" {
		fmt.Fprintln(a.stderr, "replay:", note) // timing, not the server's behaviour: not in the reports
	}
	fmt.Fprintf(a.stderr, "replayed %d runs in %s: %d miss(es)%s, verdict %s (exit %d)\n",
		res.Runs, time.Since(start).Round(time.Millisecond), len(res.Misses), recErrs, rep.Verdict.Status, rep.Verdict.ExitCode)
	if rep.Verdict.ExitCode != 0 {
		return &silentExit{code: rep.Verdict.ExitCode}
	}
	return nil
}
