package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/mcpbench/bench/batch"
	"github.com/mcpbench/bench/internal/escape"
	"github.com/mcpbench/bench/llm"
	"github.com/mcpbench/bench/recorder"
	"github.com/mcpbench/bench/scenarios"
	"github.com/mcpbench/bench/traces"
)

type recordOptions struct {
	sel         selection
	server      string
	model       string
	runs        int
	seed        int64
	temperature float64
	hasTemp     bool
	runsSet     bool // --runs was given
	parallel    int
	shard       string
	force       bool
	reuse       bool
	callTimeout time.Duration
	runTimeout  time.Duration
	maxTokens   int
	requestTO   time.Duration
	passEnv     []string
	isolation   string
}

func newRecordCmd(a *app) *cobra.Command {
	opts := &recordOptions{}
	cmd := &cobra.Command{
		Use:   "record --server PROFILE --model SPEC (--suite S | --stage S | --scenario ID) [--scenarios PATH]",
		Short: "Run scenarios live against a server and the fake Central, and store every run",
		Long:  recordLong,
		Example: `  bench record --stage smoke --server servers/reference.yaml --model baseline --runs 5
  bench record --suite alerts --server servers/reference.yaml --model openai:gpt-4.1 --seed 7 --parallel 4`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			opts.hasTemp = cmd.Flags().Changed("temperature")
			opts.runsSet = cmd.Flags().Changed("runs")
			return runRecord(cmd.Context(), a, opts)
		},
	}
	f := cmd.Flags()
	opts.sel.register(f, "record")
	opts.sel.registerExpectations(f)
	f.StringVar(&opts.server, "server", "", "server profile (servers/*.yaml, or an mcpServers JSON file[#NAME])")
	f.StringVar(&opts.model, "model", "", `model spec: "openai:MODEL", "anthropic:MODEL", "baseline" or "oracle"`)
	intVarMin(f, &opts.runs, "runs", scenarios.DefaultRuns, 1, "runs per scenario (default: the stage's runs with --stage, else 5)")
	f.Int64Var(&opts.seed, "seed", 0, "seed of a live model's first run; run i of a scenario gets seed+i (sent and recorded)")
	floatVarRange(f, &opts.temperature, "temperature", 0, 0, 2, "sampling temperature (default: the provider's)")
	intVarMin(f, &opts.parallel, "parallel", 1, 1, "runs executed at once")
	f.StringVar(&opts.shard, "shard", "", "record only slice i of n of the run list, as i/n")
	f.BoolVar(&opts.force, "force", false, "record runs that are already stored again")
	f.BoolVar(&opts.reuse, "reuse-server", false, "keep one server per profile and fixture, resetting the fake between runs")
	durationVarPositive(f, &opts.callTimeout, "call-timeout", 60*time.Second, "bound on one tool call")
	durationVarPositive(f, &opts.runTimeout, "run-timeout", 15*time.Minute, "bound on one run")
	intVarMin(f, &opts.maxTokens, "max-tokens", 1024, 0, "a live model's output limit per turn, sent and recorded (0: the provider's default)")
	durationVarPositive(f, &opts.requestTO, "request-timeout", defaultRequestTimeout, "bound on one HTTP request to a live model's provider (each attempt; retried past it)")
	addPassEnvFlag(f, &opts.passEnv)
	addIsolationFlag(f, &opts.isolation)
	return cmd
}

func runRecord(ctx context.Context, a *app, opts *recordOptions) error {
	if opts.server == "" || opts.model == "" {
		return usageErr(errors.New("record needs --server PROFILE and --model SPEC"))
	}
	if opts.runs < 1 || opts.parallel < 1 {
		return usageErr(errors.New("--runs and --parallel must be at least 1"))
	}
	if !opts.sel.narrows() && len(opts.sel.paths) == 0 {
		return usageErr(errors.New("record needs --suite, --stage or --scenario (or --scenarios PATH: every scenario it loads)"))
	}
	sh, err := batch.ParseShard(opts.shard)
	if err != nil {
		return usageErr(err)
	}
	spec, err := llm.ParseSpec(opts.model)
	if err != nil {
		return usageErr(err)
	}
	if err := checkLoopback(); err != nil {
		return err
	}
	profile, err := loadProfile(a, opts.server, nil, opts.passEnv)
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
	selected := ld.selected
	if opts.sel.stage != "" && !opts.runsSet {
		opts.runs = ld.cfg.Stage(opts.sel.stage).RunsAsked() // the stage says how many
	}
	newModel, secrets, err := modelFactory(a, spec, profile, opts.requestTO)
	if err != nil {
		return err
	}
	// The oracle has no plan where the server has no expected tools: those
	// scenarios are absent for it, not recorded.
	if spec.Provider == llm.ProviderOracle {
		var absent []string
		if selected, absent = recorder.OracleCovers(selected, profile.Name, profile.VariantOf); len(absent) > 0 {
			fmt.Fprintf(a.stderr, "record: the oracle has no plan for server %s in %d scenario(s) (no expected tools for it there): absent, not recorded: %s\n",
				escape.Line(profile.Name), len(absent), strings.Join(absent, ", "))
		}
	}
	var runs []batch.RunSpec
	for _, sc := range selected {
		for i := 0; i < opts.runs; i++ {
			runs = append(runs, batch.RunSpec{Scenario: sc, Index: i})
		}
	}
	runs = sh.Of(runs)
	store, err := createStore(a)
	if err != nil {
		return err
	}
	defer store.Close()
	sampling := llm.Sampling{}
	if opts.hasTemp {
		t := opts.temperature
		sampling.Temperature = &t
	}
	if spec.Live() { // the offline models ignore sampling: their requests (and keys) stay as they were
		s := opts.seed
		sampling.Seed = &s
		sampling.MaxTokens = opts.maxTokens
	}
	prog := newProgress(a.stderr, len(runs))
	res, err := (&batch.Record{
		Options: batch.Options{Parallel: opts.parallel, Recorder: recorder.Options{
			Harness: version, Environ: os.Environ(), PassEnv: opts.passEnv, Isolation: opts.isolation, Secrets: secrets, CallTimeout: opts.callTimeout, RunTimeout: opts.runTimeout,
		}},
		Store: store, Profile: profile, Suite: "golden", Runs: runs,
		ModelRef: traces.ModelRef{Provider: string(spec.Provider), Name: spec.String(), Seed: opts.seed},
		Sampling: sampling, NewModel: newModel, ReuseServer: opts.reuse, Force: opts.force,
		Progress: func(r *batch.Recorded) {
			switch {
			case r.Skipped:
				prog.done(r.Ref, "skipped (already stored)", false)
			case r.Err != nil:
				prog.done(r.Ref, "setup failure: "+r.Err.Error(), true)
			case r.NoResult != nil:
				prog.done(r.Ref, "not stored: "+r.NoResult.Error(), true)
			case r.Retried:
				prog.done(r.Ref, string(r.Outcome)+" (recorded again: stored with an error, or from another definition of its scenario)", r.Outcome == traces.OutcomeError)
			default:
				prog.done(r.Ref, string(r.Outcome), r.Outcome == traces.OutcomeError)
			}
		},
	}).Run(ctx)
	prog.finish()
	if res != nil {
		a.stats.batchTimes(res.Times)
		printRecordSummary(a.stdout, res, len(runs))
	}
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("interrupted; rerun the same command to resume: %w", err)
	}
	if err != nil {
		return setupErr(err)
	}
	if len(res.SetupFailures) > 0 {
		return setupErr(errors.Join(res.SetupFailures...))
	}
	if n := res.NotStoredCount(); n > 0 {
		return setupErr(fmt.Errorf("%d run(s) not stored: they say nothing about server %s; rerun the same command to record them", n, profile.Name))
	}
	return nil
}
