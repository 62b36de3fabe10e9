package main

import (
	"context"
	"errors"
	"fmt"
	"regexp"

	"github.com/spf13/cobra"

	"github.com/mcpbench/bench/internal/escape"
	"github.com/mcpbench/bench/judge"
	"github.com/mcpbench/bench/scenarios"
	"github.com/mcpbench/bench/scoring"
	"github.com/mcpbench/bench/traces"
)

type reportOptions struct {
	release string
	from    []string
	outDir  string
	format  string
	sel     selection
	seed    uint64
	k       int
	runs    int
	runsSet bool
	// judgeMinKappa is the bar of the judges' calibration (--judge-min-kappa).
	judgeMinKappa float64
	bundle        string
}

func newReportCmd(a *app) *cobra.Command {
	opts := &reportOptions{}
	cmd := &cobra.Command{
		Use:   "report [--release VERSION] [--from REF-PREFIX...]",
		Short: "Score stored runs: the scoreboard, or the results page of a release",
		Long: `Report scores the stored runs under the --from ref prefixes and prints the
scoreboard. Without --from it scores every recorded run and leaves out the
replay runs (bench replay's, under replay/), saying how many; with --from it
scores every run under the prefixes, recorded or replayed, and says what it
pooled when it holds both. The scoreboard (docs/methodology.md,
"Aggregation": scenarios are the unit, each scenario's runs averaged first):
per server and suite, task success, tool selection, param_acc and
param_field_acc, avg_turns, invalid_call_rate, tokens and latency (mean and
p95 over the scenarios), excess API calls, and safety (a suite with a safety
failure is FAILED); per scenario, median [IQR] over its runs. Servers
without a tool for a scenario are shown as absent. A scenario with fewer
scored runs than --runs (default 5, the methodology's minimum) is named in a
warning, and pass@k is not computed for fewer than --k runs.

Runs graded by an LLM judge (bench judge run) add a section per judge and
setting, in every format and on the results page: the judge's pass rate and
mean scores per server beside the rule-based task success of the same runs,
shown only where the judge's calibration stored in the store (bench judge
calibrate, same model and setting) has a kappa of at least
--judge-min-kappa, and otherwise the reason they are left out. Task success
never depends on the judge.

With --release VERSION it writes the results page instead:
<out-dir>/benchmark-results-<VERSION>.md (methodology version, servers with
repository and SHA, models with sampling parameters and seeds, fixture
versions, harness version, the scoreboard per suite, every pair of servers
head to head with bootstrap intervals and McNemar's test, each scenario's
median [IQR], pass@k and pass^k), an SVG chart beside it and the same data
as JSON. A file <out-dir>/benchmark-results-<VERSION>.notes.md, if there is
one, is the maintainer's note on the run (the model and how it was served,
say): the page prints it under "About this run". With --bundle DIR
the page links the bench view bundle in DIR (written by bench view
--export; DIR/index.html, linked relative to the page). A release asks
every covered scenario for at least 5 scored runs: fewer is an error that
names the scenarios. The page holds no date and no path: re-running at
the same SHAs and store reproduces it byte for byte. Each file is written
whole and renamed into place: a symlink planted at its name is replaced,
not followed.`,
		Example: `  bench report --from golden/
  bench report --release 1.2.0 --from golden/ --out-dir docs`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			setMemoryLimit(readMemoryLimit)
			opts.runsSet = cmd.Flags().Changed("runs")
			return runReport(cmd.Context(), a, opts)
		},
	}
	cmd.Flags().StringVar(&opts.release, "release", "", "write the results page of release VERSION")
	cmd.Flags().StringSliceVar(&opts.from, "from", nil, "ref prefixes of the runs to score (repeatable; default: every recorded run, no replay run)")
	cmd.Flags().StringVar(&opts.outDir, "out-dir", "docs", "directory of the results page (with --release)")
	cmd.Flags().StringVar(&opts.bundle, "bundle", "", "with --release: link the bench view bundle in DIR from the page")
	cmd.Flags().StringVar(&opts.format, "format", "text", "output format without --release: text, json, md or junit")
	opts.sel.register(cmd.Flags(), "score only the runs of")
	opts.sel.registerExpectations(cmd.Flags())
	cmd.Flags().Uint64Var(&opts.seed, "seed", 1, "bootstrap seed")
	intVarMin(cmd.Flags(), &opts.k, "k", scoring.DefaultK, 1, "k of pass@k and pass^k (not computed for a scenario with fewer runs)")
	intVarMin(cmd.Flags(), &opts.runs, "runs", scenarios.DefaultRuns, 1, "runs per scenario asked: fewer is a warning, and an error with --release (which asks at least 5)")
	floatVarRange(cmd.Flags(), &opts.judgeMinKappa, "judge-min-kappa", judge.DefaultMinKappa, -1, 1, "an LLM judge's scores (bench judge run) are shown only when its stored calibration's kappa reaches this")
	return cmd
}

var releasePattern = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._+-]*$`)

func runReport(_ context.Context, a *app, opts *reportOptions) error {
	if opts.release != "" && !releasePattern.MatchString(opts.release) {
		return usageErr(fmt.Errorf("--release %q: want a version such as 1.2.0", opts.release))
	}
	if opts.bundle != "" && opts.release == "" {
		return usageErr(errors.New("--bundle links a bundle from a results page: it needs --release"))
	}
	switch opts.format {
	case "text", "json", "md", "junit":
	default:
		return usageErr(fmt.Errorf("--format %q: want text, json, md or junit", opts.format))
	}
	s, err := openStoreRead(a)
	if err != nil {
		return err
	}
	defer s.Close()
	prefixes, refs, err := agentRefs(s, opts.from)
	if err != nil {
		return err
	}
	if len(refs) == 0 {
		return usageErr(fmt.Errorf("no runs under %q in %s", prefixes, s.Dir()))
	}
	ld, err := opts.sel.load()
	if err != nil {
		return err
	}
	keep := map[string]bool{}
	for _, sc := range ld.selected {
		keep[sc.ID] = true
	}
	if opts.sel.stage != "" && !opts.runsSet {
		opts.runs = ld.cfg.Stage(opts.sel.stage).RunsAsked()
	}
	if opts.release != "" && opts.runs < scenarios.DefaultRuns {
		return usageErr(fmt.Errorf("--release asking %d runs per scenario: a results page follows the methodology, each scenario runs at least %d times", opts.runs, scenarios.DefaultRuns))
	}
	scorer := newRunScorer(ld.all)
	// Each run is scored as it is read and dropped: what the report needs
	// of it is its metrics, aggregated as they come, and what its manifest
	// adds to the metadata. Only the JSON scoreboard prints every run's
	// metrics; the other reports keep a short summary of each run.
	aggOpts := &scoring.AggregateOptions{K: opts.k, Runs: opts.runs}
	agg := scoring.NewAggregator(aggOpts)
	agg.KeepRuns = opts.release == "" && opts.format == "json"
	var meta scoring.MetaBuilder
	var tools []scoring.ToolDefinitions // per server, the scoreboard's (a results page has none)
	tokenizer := ""
	scored, recorded, replays, leftOut := 0, 0, 0, 0
	var judged []judgedRun
	for _, r := range refs {
		run, err := s.GetRun(r.Run)
		if err != nil {
			return err
		}
		if opts.sel.narrows() && !keep[run.Manifest.Scenario.ID] {
			continue // not selected
		}
		if run.Manifest.Mode == traces.ModeReplay {
			if len(opts.from) == 0 {
				leftOut++
				continue
			}
			replays++
		} else {
			recorded++
		}
		m, err := scorer.score(run)
		if err != nil {
			return err
		}
		m.Ref = r.Name
		if scored == 0 {
			tokenizer = m.Tokenizer
		}
		scored++
		judged = append(judged, judgedRun{ref: r.Name, id: r.Run, server: m.Server, success: m.TaskSuccess})
		meta.Add(&run.Manifest, scoring.Isolation(run))
		agg.Add(m)
		if d, ok := scorer.s.ToolDefinitions(run); ok && opts.release == "" {
			tools = scoring.AddToolDefinitions(tools, d)
		}
	}
	switch {
	case scored == 0:
		return usageErr(fmt.Errorf("no recorded runs in %s, only %d replay run(s) (--from replay/ scores them)", s.Dir(), leftOut))
	case leftOut > 0:
		fmt.Fprintf(a.stderr, "report: scored %d recorded run(s); left out %d replay run(s) (--from replay/ scores them)\n", recorded, leftOut)
	case recorded > 0 && replays > 0:
		fmt.Fprintf(a.stderr, "report: pooled %d recorded and %d replay run(s) under %q\n", recorded, replays, prefixes)
	}
	rmeta := meta.Meta()
	rmeta.Tokenizer = tokenizer
	title := "scoreboard"
	if opts.release != "" {
		title = "release " + opts.release
	}
	rep := scoring.BuildReport(&scoring.ReportInput{
		Title: title, Results: agg.Results(), NoVerdict: true, Meta: rmeta, Secrets: scorer.secrets(),
		Compare: &scoring.CompareOptions{Seed: opts.seed}, Aggregate: aggOpts, ToolDefinitions: tools,
	})
	if rep.Judges, err = judgeReports(s, judged, opts.judgeMinKappa); err != nil {
		return err
	}
	for _, w := range rep.Warnings {
		fmt.Fprintf(a.stderr, "report: warning: %s\n", escape.Line(w))
	}
	if opts.release != "" && len(rep.Warnings) > 0 {
		return usageErr(fmt.Errorf("--release %s: not every scenario has %d scored runs (above); record them with bench record --runs %d", opts.release, opts.runs, opts.runs))
	}
	if opts.release == "" {
		switch opts.format {
		case "json":
			return scoring.WriteJSON(a.stdout, rep)
		case "md":
			return scoring.WriteMarkdown(a.stdout, rep)
		case "junit":
			return scoring.WriteJUnit(a.stdout, rep)
		}
		return scoring.WriteText(a.stdout, rep)
	}
	return writeRelease(a, opts, rep)
}
