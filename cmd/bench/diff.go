package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/spf13/cobra"

	"github.com/mcpbench/bench/batch"
	"github.com/mcpbench/bench/internal/escape"
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
	opts.sel.registerExpectations(cmd.Flags())
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
	ld := &sideLoader{app: a, list: sel.all}
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
	list   []*scenarios.Scenario // every scenario loaded, to score against
	store  *traces.Store
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
		l.scorer = newRunScorer(l.list)
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

// runScorer scores stored runs (batch.Scorer), its errors of input
// marked as usage errors.
type runScorer struct{ s *batch.Scorer }

// newRunScorer scores against list: the scenarios a selection loaded
// (loaded.all), so that no command loads its manifests twice.
func newRunScorer(list []*scenarios.Scenario) *runScorer {
	return &runScorer{s: batch.NewScorer(list)}
}

func (rs *runScorer) score(run *traces.Run) (*scoring.RunMetrics, error) {
	m, err := rs.s.Score(run)
	if errors.Is(err, batch.ErrNotScorable) {
		return nil, usageErr(err)
	}
	return m, err
}

// secrets returns the canaries of every fixture scored so far.
func (rs *runScorer) secrets() []string { return rs.s.Secrets() }

// writeIndentedJSON writes v as indented JSON with a final newline.
func writeIndentedJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(v)
}
