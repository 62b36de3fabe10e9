package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"sync"
	"time"

	"github.com/spf13/cobra"

	"github.com/mcpbench/bench/fakecentral"
	"github.com/mcpbench/bench/internal/escape"
	"github.com/mcpbench/bench/recorder"
	"github.com/mcpbench/bench/scenarios"
	"github.com/mcpbench/bench/scoring"
	"github.com/mcpbench/bench/traces"
)

type diffOptions struct {
	a, b   string
	sel    selection
	format string
	seed   uint64
}

func newDiffCmd(a *app) *cobra.Command {
	opts := &diffOptions{}
	cmd := &cobra.Command{
		Use:   "diff A B",
		Short: "Compare two runs or two sets of runs, scenario by scenario",
		Long: `Diff scores both sides and aligns them by scenario. A and B are ref
prefixes, run IDs (or unique prefixes) or JSON reports written by bench replay
or bench report.

Scenarios are listed regressions first, then improvements, each metric with
its value before (A) and after (B) and whether the change is significant or
within noise (a paired t test over run-index pairs per scenario; a paired
bootstrap over scenarios for the suite, with McNemar's exact test beside;
docs/methodology.md). --suite, --stage and --scenario compare only the
scenarios they select.

With exactly one --scenario, both sides' first run of that scenario are
also compared turn by turn (tool calls and arguments, tool results, HTTP
calls, answer), with the first divergence marked. That needs traces, not
reports.`,
		Example: `  bench diff golden/reference/baseline golden/reference-pr/baseline
  bench diff main-report.json pr-report.json --format md
  bench diff 3fa9c1 77b0e2 --scenario client-diagnosis-001`,
		Args: cobra.ExactArgs(2),
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.a, opts.b = args[0], args[1]
			return runDiff(cmd.Context(), a, opts)
		},
	}
	opts.sel.register(cmd.Flags(), "compare only")
	cmd.Flags().StringVar(&opts.format, "format", "text", "output format: text, json or md")
	cmd.Flags().Uint64Var(&opts.seed, "seed", 1, "bootstrap seed")
	return cmd
}

// side is one set of scored runs: from the store (with traces) or from a
// report (metrics only).
type side struct {
	label   string
	metrics []*scoring.RunMetrics
	runs    []*traces.Run
}

func runDiff(_ context.Context, a *app, opts *diffOptions) error {
	switch opts.format {
	case "text", "json", "md":
	default:
		return usageErr(fmt.Errorf("--format %q: want text, json or md", opts.format))
	}
	sel, err := opts.sel.load()
	if err != nil {
		return err
	}
	ld := &sideLoader{app: a, paths: opts.sel.paths}
	defer ld.close()
	sa, err := ld.load(opts.a)
	if err != nil {
		return err
	}
	sb, err := ld.load(opts.b)
	if err != nil {
		return err
	}
	if opts.sel.narrows() {
		keep := map[string]bool{}
		for _, sc := range sel.selected {
			keep[sc.ID] = true
		}
		sa.metrics, sa.runs = filterScenarios(sa, keep)
		sb.metrics, sb.runs = filterScenarios(sb, keep)
		if len(sa.metrics) == 0 || len(sb.metrics) == 0 {
			return usageErr(fmt.Errorf("%s: no runs in %s", opts.sel.label(), map[bool]string{true: opts.a, false: opts.b}[len(sa.metrics) == 0]))
		}
	}
	turnByTurn := len(opts.sel.ids) == 1
	c := scoring.Compare(sa.label, sa.metrics, sb.label, sb.metrics, &scoring.CompareOptions{Seed: opts.seed})
	if ld.scorer != nil {
		scoring.Redact(c, ld.scorer.secrets())
	}
	var rd *scoring.RunDiff
	if turnByTurn && len(sa.runs) > 0 && len(sb.runs) > 0 {
		rd = scoring.DiffRuns(sa.runs[0], sb.runs[0])
		if ld.scorer != nil {
			scoring.Redact(rd, ld.scorer.secrets())
		}
	}
	return writeDiff(a.stdout, opts.format, c, rd)
}

func writeDiff(w io.Writer, format string, c *scoring.Comparison, rd *scoring.RunDiff) error {
	switch format {
	case "json":
		out := struct {
			Comparison *scoring.Comparison `json:"comparison"`
			Run        *scoring.RunDiff    `json:"run_diff,omitempty"`
		}{c, rd}
		return writeIndentedJSON(w, out)
	case "md":
		if err := scoring.WriteComparisonMarkdown(w, c); err != nil {
			return err
		}
		if rd != nil {
			fmt.Fprintln(w)
			return scoring.WriteRunDiffMarkdown(w, rd)
		}
		return nil
	}
	if err := scoring.WriteComparisonText(w, c); err != nil {
		return err
	}
	if rd != nil {
		fmt.Fprintln(w)
		return scoring.WriteRunDiffText(w, rd)
	}
	return nil
}

// filterScenarios keeps a side's runs of the scenarios in keep.
func filterScenarios(s *side, keep map[string]bool) ([]*scoring.RunMetrics, []*traces.Run) {
	var ms []*scoring.RunMetrics
	var rs []*traces.Run
	for _, m := range s.metrics {
		if keep[m.Scenario] {
			ms = append(ms, m)
		}
	}
	for _, r := range s.runs {
		if keep[r.Manifest.Scenario.ID] {
			rs = append(rs, r)
		}
	}
	return ms, rs
}

// sideLoader loads sides of a comparison, opening the store and the
// scenarios only when a side needs them.
type sideLoader struct {
	app    *app
	paths  []string
	store  *traces.Store
	scs    map[string]*scenarios.Scenario
	scorer *runScorer
}

func (l *sideLoader) close() {
	if l.store != nil {
		l.store.Close()
	}
}

func (l *sideLoader) load(arg string) (*side, error) {
	if strings.HasSuffix(arg, ".json") {
		if _, err := os.Stat(arg); err == nil {
			f, err := os.Open(arg)
			if err != nil {
				return nil, usageErr(err)
			}
			defer f.Close()
			rep, err := scoring.ReadReport(f)
			if err != nil {
				return nil, usageErr(fmt.Errorf("%s: %w", arg, err))
			}
			if rep.Methodology != scoring.MethodologyVersion {
				fmt.Fprintf(l.app.stderr, "bench: warning: %s was scored under methodology %s; this bench implements %s\n", escape.Line(arg), escape.Line(rep.Methodology), scoring.MethodologyVersion)
			}
			return &side{label: arg, metrics: rep.Runs()}, nil
		}
	}
	if l.store == nil {
		s, err := openStoreRead(l.app)
		if err != nil {
			return nil, err
		}
		l.store = s
	}
	refs, err := resolveRuns(l.store, arg)
	if err != nil {
		return nil, err
	}
	if l.scorer == nil {
		sc, err := newRunScorer(l.paths)
		if err != nil {
			return nil, err
		}
		l.scorer = sc
	}
	sd := &side{label: arg}
	for _, r := range refs {
		run, err := l.store.GetRun(r.Run)
		if err != nil {
			return nil, err
		}
		m, err := l.scorer.score(run)
		if err != nil {
			return nil, err
		}
		m.Ref = r.Name
		sd.metrics = append(sd.metrics, m)
		sd.runs = append(sd.runs, run)
	}
	return sd, nil
}

// runScorer scores stored runs: it finds each run's scenario and its
// fixture's clock and canaries.
type runScorer struct {
	scenarios map[string]*scenarios.Scenario
	mu        sync.Mutex // guards fixtures: replay workers score at once
	fixtures  map[string]*scoring.Options
	tokens    *recorder.TokenCounter
	cache     *scoring.Cache
	// named are the servers some loaded scenario has expectations for;
	// the others are scored from the API layer.
	named map[string]bool
}

func newRunScorer(paths []string) (*runScorer, error) {
	list, errs := loadScenarios(paths)
	if len(errs) > 0 {
		return nil, usageErr(fmt.Errorf("loading scenarios: %w", errs))
	}
	rs := &runScorer{scenarios: map[string]*scenarios.Scenario{}, fixtures: map[string]*scoring.Options{}, tokens: recorder.NewTokenCounter(), cache: scoring.NewCache(),
		named: map[string]bool{}}
	for _, s := range list {
		rs.scenarios[s.ID] = s
		for server := range s.ExpectedTools {
			rs.named[server] = true
		}
	}
	return rs, nil
}

func (rs *runScorer) options(fixture string) (*scoring.Options, error) {
	rs.mu.Lock()
	defer rs.mu.Unlock()
	if o, ok := rs.fixtures[fixture]; ok {
		return o, nil
	}
	fx, err := fakecentral.LoadFixture(fixture)
	if err != nil {
		return nil, usageErr(err)
	}
	now := fx.Now()
	c := fakecentral.New(&fakecentral.Options{Fixture: fx, Now: func() time.Time { return now }})
	o := &scoring.Options{Now: now, Secrets: c.Secrets(), CountTokens: rs.tokens.Count, Tokenizer: recorder.Tokenizer, Cache: rs.cache, NamedServers: rs.named}
	rs.fixtures[fixture] = o
	return o, nil
}

// secrets returns the canaries of every fixture scored so far, for the
// report to mask (scoring.ReportInput.Secrets).
func (rs *runScorer) secrets() []string {
	rs.mu.Lock()
	defer rs.mu.Unlock()
	var out []string
	for _, o := range rs.fixtures {
		out = append(out, o.Secrets...)
	}
	return out
}

func (rs *runScorer) score(run *traces.Run) (*scoring.RunMetrics, error) {
	id := run.Manifest.Scenario.ID
	sc, ok := rs.scenarios[id]
	if !ok {
		return nil, usageErr(fmt.Errorf("run %s: scenario %q is not in the scenario set (pass --scenarios)", run.Manifest.RunID.Short(), id))
	}
	fixture := run.Manifest.Fixture.Name
	if fixture == "" {
		fixture = sc.Fixture
	}
	o, err := rs.options(fixture)
	if err != nil {
		return nil, err
	}
	m, err := scoring.Score(run, sc, o)
	if errors.Is(err, scoring.ErrScenarioMismatch) {
		return nil, usageErr(err)
	}
	return m, err
}

// writeIndentedJSON writes v as indented JSON with a final newline.
func writeIndentedJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(v)
}
