package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/spf13/cobra"

	"github.com/mcpbench/bench/fakecentral"
	"github.com/mcpbench/bench/llm"
	"github.com/mcpbench/bench/llm/anthropic"
	"github.com/mcpbench/bench/llm/baseline"
	"github.com/mcpbench/bench/llm/openai"
	"github.com/mcpbench/bench/recorder"
	"github.com/mcpbench/bench/scenarios"
	"github.com/mcpbench/bench/traces"
)

type recordOptions struct {
	suite       string
	stage       string
	scenarioIDs []string
	config      string
	server      string
	model       string
	runs        int
	seed        int64
	temperature float64
	hasTemp     bool
	parallel    int
	shard       string
	force       bool
	reuse       bool
	callTimeout time.Duration
	runTimeout  time.Duration
}

func newRecordCmd(a *app) *cobra.Command {
	opts := &recordOptions{}
	cmd := &cobra.Command{
		Use:   "record --server PROFILE --model SPEC (--suite S | --stage S | --scenario ID)",
		Short: "Run scenarios live against a server and the fake Central, and store every run",
		Long: `record runs each selected scenario --runs times against the server a profile
describes, each run with a fresh fake Central (the scenario's fixture and
faults) and the model --model names, and stores every run in the trace store
under <suite>/<server>/<model>/<scenario>/<run-index>.

While a run runs, the server the next run needs starts in the background,
so a server's start-up (seconds for many Python servers) overlaps the run
before; the requests it makes while it starts are journaled at the start
of its run. --reuse-server keeps one server per fixture instead.

Runs already stored are skipped unless --force, so an interrupted recording
resumes where it stopped. --shard i/n records the i-th of n deterministic
slices of the run list (1 <= i <= n), for several CI machines; merge their
stores with bench traces export/import.

A run that fails (the server crashes, hangs or misbehaves; the model errs) is
stored with its error and counted in the summary; bench exits non-zero only
when it cannot set up (bad flags, no store, a server that never starts).

Models: openai:MODEL (OPENAI_API_KEY, OPENAI_BASE_URL), anthropic:MODEL
(ANTHROPIC_API_KEY or ANTHROPIC_AUTH_TOKEN, ANTHROPIC_BASE_URL), baseline
(offline, lexical), oracle (follows the scenario's expected tools and
parameters for this server, then submits its reference result).`,
		Example: `  bench record --stage smoke --server servers/reference.yaml --model baseline --runs 5
  bench record --suite alerts --server servers/reference.yaml --model openai:gpt-4.1 --seed 7 --parallel 4`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			opts.hasTemp = cmd.Flags().Changed("temperature")
			return runRecord(cmd.Context(), a, opts)
		},
	}
	f := cmd.Flags()
	f.StringVar(&opts.suite, "suite", "", "record the scenarios of this suite (intent family, or adversarial)")
	f.StringVar(&opts.stage, "stage", "", "record the scenarios of this bench.yaml stage (smoke, core, safety)")
	f.StringSliceVar(&opts.scenarioIDs, "scenario", nil, "record this scenario (repeatable)")
	f.StringVar(&opts.config, "config", defaultConfigFile, "bench.yaml with the stages")
	f.StringVar(&opts.server, "server", "", "server profile (servers/*.yaml, or an mcpServers JSON file[#NAME])")
	f.StringVar(&opts.model, "model", "", `model spec: "openai:MODEL", "anthropic:MODEL", "baseline" or "oracle"`)
	f.IntVar(&opts.runs, "runs", 5, "runs per scenario")
	f.Int64Var(&opts.seed, "seed", 0, "seed passed to the model and recorded")
	f.Float64Var(&opts.temperature, "temperature", 0, "sampling temperature (default: the provider's)")
	f.IntVar(&opts.parallel, "parallel", 1, "runs executed at once")
	f.StringVar(&opts.shard, "shard", "", "record only slice i of n of the run list, as i/n")
	f.BoolVar(&opts.force, "force", false, "record runs that are already stored again")
	f.BoolVar(&opts.reuse, "reuse-server", false, "keep one server per profile and fixture, resetting the fake between runs")
	f.DurationVar(&opts.callTimeout, "call-timeout", 60*time.Second, "bound on one tool call")
	f.DurationVar(&opts.runTimeout, "run-timeout", 15*time.Minute, "bound on one run")
	return cmd
}

// recordJob is one entry of the run list.
type recordJob struct {
	sc    *scenarios.Scenario
	index int
}

func runRecord(ctx context.Context, a *app, opts *recordOptions) error {
	if opts.server == "" || opts.model == "" {
		return usageErr(errors.New("record needs --server PROFILE and --model SPEC"))
	}
	if opts.runs < 1 || opts.parallel < 1 {
		return usageErr(errors.New("--runs and --parallel must be at least 1"))
	}
	shardI, shardN, err := parseShard(opts.shard)
	if err != nil {
		return usageErr(err)
	}
	spec, err := llm.ParseSpec(opts.model)
	if err != nil {
		return usageErr(err)
	}
	go recorder.Warm() // while the scenarios, the profile and the store load
	profile, err := recorder.LoadProfile(opts.server)
	if err != nil {
		return usageErr(err)
	}
	if err := profile.ExpandEnv(a.getenv); err != nil {
		return usageErr(err)
	}
	selected, suiteName, err := selectScenarios(opts)
	if err != nil {
		return err
	}
	newModel, secrets, err := modelFactory(a, spec, profile.Name)
	if err != nil {
		return err
	}
	var list []recordJob
	for _, sc := range selected {
		for i := 0; i < opts.runs; i++ {
			list = append(list, recordJob{sc: sc, index: i})
		}
	}
	var jobs []recordJob
	for i, j := range list {
		if i%shardN == shardI-1 {
			jobs = append(jobs, j)
		}
	}
	store, err := openStore(a)
	if err != nil {
		return err
	}
	defer store.Close()

	sampling := llm.Sampling{}
	if opts.hasTemp {
		t := opts.temperature
		sampling.Temperature = &t
	}
	if spec.Live() {
		s := opts.seed
		sampling.Seed = &s
	}
	modelRef := traces.ModelRef{Provider: string(spec.Provider), Name: spec.String(), Seed: opts.seed}
	rec := recorder.New(&recorder.Options{
		Harness: version, Environ: os.Environ(), Secrets: secrets, ReuseServer: opts.reuse,
		CallTimeout: opts.callTimeout, RunTimeout: opts.runTimeout,
	})
	defer rec.Close()

	prog := newProgress(a.stderr, len(jobs))
	sum := &recordSummary{byOutcome: map[string]int{}, failures: map[string]int{}}
	start := time.Now()
	// One goroutine stores runs (a synced write each) while the workers go
	// on with the next run, and owns the progress and the summary.
	type result struct {
		j       recordJob
		ref     string
		run     *traces.Run
		err     error
		skipped bool
	}
	results := make(chan result, opts.parallel)
	var setupFailures []error
	storerDone := make(chan struct{})
	go func() {
		defer close(storerDone)
		for r := range results {
			switch {
			case r.skipped:
				sum.skipped++
				prog.done(r.ref, "skipped (already stored)", false)
				continue
			case r.err == nil:
				_, r.err = store.PutRun(r.run, r.ref)
			}
			if r.err != nil {
				setupFailures = append(setupFailures, fmt.Errorf("%s run %d: %w", r.j.sc.ID, r.j.index, r.err))
				prog.done(r.j.sc.ID, "setup failure: "+r.err.Error(), true)
				continue
			}
			sum.add(r.run)
			prog.done(r.ref, string(r.run.Manifest.Outcome), r.run.Manifest.Outcome == traces.OutcomeError)
		}
	}()
	newJob := func(j recordJob) *recorder.Job {
		return &recorder.Job{Suite: suiteName, Scenario: j.sc, Profile: profile, ModelRef: modelRef,
			Sampling: sampling, RunIndex: j.index}
	}
	// stored: the run is in the store and not to be recorded again.
	stored := func(ref string) bool {
		if opts.force {
			return false
		}
		_, err := store.Ref(ref)
		return err == nil
	}
	work := make(chan recordJob)
	var wg sync.WaitGroup
	for w := 0; w < opts.parallel; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for j := range work {
				job := newJob(j)
				ref := job.Ref() // modelRef names the model: no need to build it to skip
				if stored(ref) {
					results <- result{j: j, ref: ref, skipped: true}
					continue
				}
				m, err := newModel(j.sc)
				if err != nil {
					results <- result{j: j, err: err}
					continue
				}
				job.Model = m
				run, err := rec.Run(ctx, job)
				if ctx.Err() != nil {
					return // interrupted: the run is not stored, a rerun resumes here
				}
				results <- result{j: j, ref: ref, run: run, err: err}
			}
		}()
	}
	// While a worker runs a job, the server of the next job to run starts
	// in the background (recorder.Prestart), unless that job is stored
	// already.
	prestart := func(j recordJob) {
		if !stored(newJob(j).Ref()) {
			rec.Prestart(profile, j.sc)
		}
	}
feed:
	for i, j := range jobs {
		select {
		case work <- j:
		case <-ctx.Done():
			break feed
		}
		if i+1 < len(jobs) {
			prestart(jobs[i+1])
		}
	}
	close(work)
	wg.Wait()
	close(results)
	<-storerDone
	prog.finish()
	sum.elapsed = time.Since(start)
	sum.print(a.stdout, len(jobs))
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("interrupted; rerun the same command to resume: %w", err)
	}
	if len(setupFailures) > 0 {
		return setupErr(errors.Join(setupFailures...))
	}
	if sum.recorded > 0 && sum.startFailures == sum.recorded {
		return setupErr(fmt.Errorf("server %s never started (see bench traces show for its stderr)", profile.Name))
	}
	return nil
}

func parseShard(s string) (int, int, error) {
	if s == "" {
		return 1, 1, nil
	}
	a, b, ok := strings.Cut(s, "/")
	i, err1 := strconv.Atoi(a)
	n, err2 := strconv.Atoi(b)
	if !ok || err1 != nil || err2 != nil || n < 1 || i < 1 || i > n {
		return 0, 0, fmt.Errorf("--shard %q: want i/n with 1 <= i <= n", s)
	}
	return i, n, nil
}

// selectScenarios picks the scenarios of the golden suite that --suite,
// --stage and --scenario name (all given must agree), and the ref's suite
// segment.
func selectScenarios(opts *recordOptions) ([]*scenarios.Scenario, string, error) {
	if opts.suite == "" && opts.stage == "" && len(opts.scenarioIDs) == 0 {
		return nil, "", usageErr(errors.New("record needs --suite, --stage or --scenario"))
	}
	all, errs := loadScenarios(nil)
	if len(errs) > 0 {
		return nil, "", usageErr(errs)
	}
	list := all
	if opts.stage != "" {
		cfg, err := loadConfig(opts.config)
		if err != nil {
			return nil, "", usageErr(err)
		}
		st := cfg.Stage(opts.stage)
		if st == nil {
			var names []string
			for _, s := range cfg.Stages {
				names = append(names, s.Name)
			}
			return nil, "", usageErr(fmt.Errorf("%s has no stage %q (have %s)", opts.config, opts.stage, strings.Join(names, ", ")))
		}
		list = st.Select(list)
	}
	var out []*scenarios.Scenario
	for _, sc := range list {
		if opts.suite != "" && sc.Suite != opts.suite {
			continue
		}
		if len(opts.scenarioIDs) > 0 && !contains(opts.scenarioIDs, sc.ID) {
			continue
		}
		out = append(out, sc)
	}
	for _, id := range opts.scenarioIDs {
		found := false
		for _, sc := range all {
			found = found || sc.ID == id
		}
		if !found {
			return nil, "", usageErr(fmt.Errorf("no scenario %q in %s", id, scenarios.GoldenDir))
		}
	}
	if len(out) == 0 {
		return nil, "", usageErr(errors.New("the selection matches no scenario"))
	}
	return out, "golden", nil
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// modelFactory returns a constructor of the model for each scenario, and
// the secrets that must never reach a trace.
func modelFactory(a *app, spec llm.Spec, server string) (func(*scenarios.Scenario) (llm.Model, error), []string, error) {
	switch spec.Provider {
	case llm.ProviderOpenAI:
		key := a.getenv("OPENAI_API_KEY")
		m, err := openai.New(spec.Model, &openai.Options{APIKey: key, BaseURL: a.getenv("OPENAI_BASE_URL")})
		if err != nil {
			return nil, nil, usageErr(err)
		}
		return func(*scenarios.Scenario) (llm.Model, error) { return m, nil }, []string{key}, nil
	case llm.ProviderAnthropic:
		key := a.getenv("ANTHROPIC_API_KEY")
		if key == "" {
			key = a.getenv("ANTHROPIC_AUTH_TOKEN")
		}
		m, err := anthropic.New(spec.Model, &anthropic.Options{APIKey: key, BaseURL: a.getenv("ANTHROPIC_BASE_URL")})
		if err != nil {
			return nil, nil, usageErr(err)
		}
		return func(*scenarios.Scenario) (llm.Model, error) { return m, nil }, []string{key}, nil
	case llm.ProviderBaseline:
		// The model's clock is the fixture's (an embedded fixture is parsed
		// once per process).
		return func(sc *scenarios.Scenario) (llm.Model, error) {
			fx, err := fakecentral.LoadFixture(sc.Fixture)
			if err != nil {
				return nil, err
			}
			return baseline.New(&baseline.Options{Now: fx.Now}), nil
		}, nil, nil
	default:
		return func(sc *scenarios.Scenario) (llm.Model, error) { return oracleFor(sc, server) }, nil, nil
	}
}

// oracleFor builds the oracle from the scenario's reference plan on server.
func oracleFor(sc *scenarios.Scenario, server string) (llm.Model, error) {
	plan, result, err := recorder.OraclePlan(sc, server)
	if err != nil {
		return nil, err
	}
	return llm.NewOracle(plan, result)
}

// recordSummary tallies a recording.
type recordSummary struct {
	recorded, skipped, startFailures int
	byOutcome                        map[string]int
	failures                         map[string]int // error kind -> runs
	in, out                          int
	elapsed                          time.Duration
}

func (s *recordSummary) add(run *traces.Run) {
	s.recorded++
	s.byOutcome[string(run.Manifest.Outcome)]++
	for _, e := range run.Events {
		if e.Turn != nil {
			s.in += e.Turn.Usage.Input
			s.out += e.Turn.Usage.Output
		}
	}
	if run.Manifest.Outcome == traces.OutcomeError {
		first := run.FirstError()
		s.failures[string(first)]++
		if first == traces.ErrorStart {
			s.startFailures++
		}
	}
}

func (s *recordSummary) print(w io.Writer, total int) {
	fmt.Fprintf(w, "recorded %d of %d runs (%d already stored) in %s\n", s.recorded, total, s.skipped, s.elapsed.Round(time.Millisecond))
	if len(s.byOutcome) > 0 {
		fmt.Fprintf(w, "  outcomes: %s\n", joinCounts(s.byOutcome))
	}
	if len(s.failures) > 0 {
		fmt.Fprintf(w, "  failures by kind: %s\n", joinCounts(s.failures))
	}
	fmt.Fprintf(w, "  tokens: %d in, %d out\n", s.in, s.out)
}

func joinCounts(m map[string]int) string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var parts []string
	for _, k := range keys {
		parts = append(parts, fmt.Sprintf("%s %d", orDash(k), m[k]))
	}
	return strings.Join(parts, ", ")
}

// progress reports runs as they finish: a redrawn status line on a
// terminal, one plain line per run otherwise.
type progress struct {
	w              io.Writer
	tty            bool
	total, n, fail int
	start          time.Time
}

func newProgress(w io.Writer, total int) *progress {
	tty := false
	if f, ok := w.(*os.File); ok {
		if fi, err := f.Stat(); err == nil && fi.Mode()&os.ModeCharDevice != 0 {
			tty = true
		}
	}
	return &progress{w: w, tty: tty, total: total, start: time.Now()}
}

func (p *progress) done(what, outcome string, failed bool) {
	p.n++
	if failed {
		p.fail++
	}
	if !p.tty {
		fmt.Fprintf(p.w, "[%d/%d] %s: %s\n", p.n, p.total, what, outcome)
		return
	}
	eta := "-"
	if p.n > 0 && p.n < p.total {
		per := time.Since(p.start) / time.Duration(p.n)
		eta = (per * time.Duration(p.total-p.n)).Round(time.Second).String()
	}
	fmt.Fprintf(p.w, "\r\033[K%d/%d runs, %d failed, ETA %s  %s", p.n, p.total, p.fail, eta, llm.Truncate(what, 60))
}

func (p *progress) finish() {
	if p.tty && p.n > 0 {
		fmt.Fprintln(p.w)
	}
}
