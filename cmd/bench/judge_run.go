package main

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/mcpbench/bench/judge"
	"github.com/mcpbench/bench/llm"
	"github.com/mcpbench/bench/scenarios"
	"github.com/mcpbench/bench/traces"
)

// judgeFlags are the judge's settings, shared by run and calibrate: a
// calibration holds for the scores of one model under one setting.
type judgeFlags struct {
	model       string
	offline     bool
	samples     int
	temperature float64
	seed        int64
	maxTokens   int
	requestTO   time.Duration
}

func (f *judgeFlags) register(fs *pflag.FlagSet) {
	fs.StringVar(&f.model, "model", "", `the judge: "openai:MODEL" or "anthropic:MODEL" (required)`)
	fs.BoolVar(&f.offline, "offline", false, "never ask the judge: serve its recorded judgements only (a run whose requests they do not hold is stale)")
	intVarMin(fs, &f.samples, "samples", 3, 1, "gradings per run; each dimension is their majority (a tie goes to the lower score)")
	floatVarRange(fs, &f.temperature, "temperature", 0, 0, 2, "the judge's sampling temperature")
	fs.Int64Var(&f.seed, "judge-seed", 1, "seed of the order of expectation and transcript, and the sampling seed")
	intVarMin(fs, &f.maxTokens, "max-tokens", 256, 1, "the judge's output limit per grading")
	durationVarPositive(fs, &f.requestTO, "request-timeout", defaultRequestTimeout, "bound on one HTTP request to the judge's provider (each attempt; retried past it)")
}

// options builds judge.Options: the live judge unless offline.
func (f *judgeFlags) options(a *app) (*judge.Options, error) {
	if f.model == "" {
		return nil, usageErr(errors.New("--model is required: the judge's model spec, such as openai:gpt-4.1"))
	}
	spec, err := llm.ParseSpec(f.model)
	if err != nil {
		return nil, usageErr(err)
	}
	if spec.Provider != llm.ProviderOpenAI && spec.Provider != llm.ProviderAnthropic {
		return nil, usageErr(fmt.Errorf("--model %s: a judge is a language model (openai:MODEL or anthropic:MODEL)", f.model))
	}
	o := &judge.Options{Model: traces.ModelRef{Provider: string(spec.Provider), Name: spec.String()},
		Samples: f.samples, Temperature: f.temperature, Seed: uint64(f.seed), MaxTokens: f.maxTokens, Harness: version}
	if !f.offline {
		mk, _, err := modelFactory(a, spec, nil, f.requestTO)
		if err != nil {
			return nil, err
		}
		if o.Live, err = mk(nil); err != nil {
			return nil, setupErr(err)
		}
	}
	return o, nil
}

// graded is a run to grade: the ref it is graded under (its judgement's is
// traces.JudgeRef(model, ref)), the run and its scenario.
type graded struct {
	ref string
	run *traces.Run
	sc  *scenarios.Scenario
}

// judgeTally counts the outcomes of a grading batch.
type judgeTally struct {
	judged, stale, failed, served, asked int
}

// gradeAll grades each run, stores each judgement in s and prints a line
// per run on stderr.
func gradeAll(ctx context.Context, a *app, s *traces.Store, items []graded, o *judge.Options) (*judgeTally, error) {
	t := &judgeTally{}
	finder := judge.NewFinder(s, o.Model.Name)
	for i, it := range items {
		recorded, err := finder.Find(it.ref, it.run)
		if err != nil {
			return t, err
		}
		if recorded == nil && o.Live == nil {
			t.stale++
			fmt.Fprintf(a.stderr, "[%d/%d] %s: stale: no recorded judgement by %s (run without --offline to ask it)\n", i+1, len(items), it.ref, o.Model.Name)
			continue
		}
		res, err := judge.Grade(ctx, it.sc, it.run, recorded, o)
		if err != nil {
			return t, err
		}
		if _, err := s.PutRun(res.Judgement, traces.JudgeRef(o.Model.Name, it.ref)); err != nil {
			return t, err
		}
		finder.Add(res.Judgement)
		t.served += res.Served
		t.asked += res.Asked
		line := ""
		switch res.Judgement.Manifest.Outcome {
		case traces.OutcomeAnswered:
			t.judged++
			sc := res.Scores.Scores
			verdict := "fail"
			if sc.Pass() {
				verdict = "pass"
			}
			line = fmt.Sprintf("%s (correctness %d, tool_use %d, compliance %d; %d valid of %d)", verdict, sc.Correctness, sc.ToolUse, sc.Compliance, len(res.Scores.Samples), len(res.Scores.Samples)+res.Scores.Invalid)
		case traces.OutcomeStale:
			t.stale++
			line = "stale: " + res.Miss.Summary()
		default:
			t.failed++
			line = "error: " + lastError(res.Judgement)
		}
		fmt.Fprintf(a.stderr, "[%d/%d] %s: %s\n", i+1, len(items), it.ref, line)
	}
	return t, nil
}

func lastError(r *traces.Run) string {
	for i := len(r.Events) - 1; i >= 0; i-- {
		if e := r.Events[i]; e.Kind == traces.KindError && e.Error != nil {
			return e.Error.Message
		}
	}
	return "no valid grading"
}

func (t *judgeTally) String() string {
	return fmt.Sprintf("judged %d, stale %d, failed %d; gradings served from recordings %d, asked of the judge %d", t.judged, t.stale, t.failed, t.served, t.asked)
}

type judgeRunOptions struct {
	judgeFlags
	from []string
	sel  selection
}

func newJudgeRunCmd(a *app) *cobra.Command {
	opts := &judgeRunOptions{}
	cmd := &cobra.Command{
		Use:   "run --model SPEC [--from REF-PREFIX...]",
		Short: "Grade stored runs with the LLM judge, recorded and replayed like model turns",
		Long: `Run grades the stored runs under the --from ref prefixes (default: every
recorded run, no replay run) with the judge --model, and stores each
judgement as a run of its own under judge/<model>/<the run's ref>: the
judge's requests and answers are model turns, keyed as an agent's are.

A run graded before by the same judge (or a replay of one, replay/<ref>)
is graded from the recorded judgement: the requests a run of unchanged
behaviour makes are the recorded ones, and are served with no call to the
judge. A request the recording does not hold is asked of the judge, or,
with --offline, leaves the judgement stale with the request that differed.
So the per-PR job grades replays offline from the release's judgements.

Reports show the judge's scores beside the rule-based ones only where the
judge is calibrated (bench judge calibrate, same model and settings) and
its kappa passes the bar. Exit 1 when a judgement is stale or failed.`,
		Example: `  bench judge run --model openai:gpt-4.1 --from golden/
  bench judge run --model openai:gpt-4.1 --from replay/ --offline`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error { return runJudgeRun(cmd.Context(), a, opts) },
	}
	opts.judgeFlags.register(cmd.Flags())
	cmd.Flags().StringSliceVar(&opts.from, "from", nil, "ref prefixes of the runs to grade (repeatable; default: every recorded run, no replay run)")
	opts.sel.register(cmd.Flags(), "grade only the runs of")
	return cmd
}

func runJudgeRun(ctx context.Context, a *app, opts *judgeRunOptions) error {
	jo, err := opts.options(a)
	if err != nil {
		return err
	}
	ld, err := opts.sel.load()
	if err != nil {
		return err
	}
	byID := map[string]*scenarios.Scenario{}
	for _, sc := range ld.all {
		byID[sc.ID] = sc
	}
	keep := map[string]bool{}
	for _, sc := range ld.selected {
		keep[sc.ID] = true
	}
	s, err := openStore(a)
	if err != nil {
		return err
	}
	defer s.Close()
	prefixes, refs, err := agentRefs(s, opts.from)
	if err != nil {
		return err
	}
	var items []graded
	for _, r := range refs {
		run, err := s.GetRun(r.Run)
		if err != nil {
			return err
		}
		if len(opts.from) == 0 && run.Manifest.Mode == traces.ModeReplay {
			continue
		}
		sc := byID[run.Manifest.Scenario.ID]
		if sc == nil || opts.sel.narrows() && !keep[sc.ID] {
			continue
		}
		items = append(items, graded{ref: r.Name, run: run, sc: sc})
	}
	if len(items) == 0 {
		return usageErr(fmt.Errorf("no runs to grade under %q in %s", prefixes, s.Dir()))
	}
	t, err := gradeAll(ctx, a, s, items, jo)
	if err != nil {
		return err
	}
	fmt.Fprintf(a.stdout, "judge %s: %s\n", jo.Model.Name, t)
	if t.stale+t.failed > 0 {
		return &silentExit{code: exitGateFailed}
	}
	return nil
}

// agentRefs lists the refs under the prefixes (default: every ref), each
// once, sorted by name, without the LLM judge's (judge/): the agents' runs
// a report scores and a judge grades. It returns the prefixes it used.
func agentRefs(s *traces.Store, from []string) ([]string, []traces.Ref, error) {
	prefixes := from
	if len(prefixes) == 0 {
		prefixes = []string{""}
	}
	var refs []traces.Ref
	for _, p := range prefixes {
		rs, err := s.Refs(p)
		if err != nil {
			return nil, nil, err
		}
		refs = append(refs, rs...)
	}
	slices.SortFunc(refs, func(x, y traces.Ref) int { return strings.Compare(x.Name, y.Name) })
	refs = slices.CompactFunc(refs, func(x, y traces.Ref) bool { return x.Name == y.Name })
	refs = slices.DeleteFunc(refs, func(r traces.Ref) bool { return strings.HasPrefix(r.Name, traces.JudgeRefPrefix) })
	return prefixes, refs, nil
}
