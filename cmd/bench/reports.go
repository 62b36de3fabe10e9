package main

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/mcpbench/bench/batch"
	"github.com/mcpbench/bench/internal/atomicfile"
	"github.com/mcpbench/bench/internal/escape"
	"github.com/mcpbench/bench/scenarios"
	"github.com/mcpbench/bench/scoring"
	"github.com/mcpbench/bench/traces"
)

// reportFiles names the files --report-dir gets, by format.
var reportFiles = map[string]string{"json": "REPORT.json", "md": "REPORT.md", "junit": "REPORT.xml", "text": "REPORT.txt"}

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
			fmt.Fprintf(a.stderr, "bench: warning: %s was scored under methodology %s; this bench implements %s\n", escape.Line(arg), escape.Line(rep.Methodology), scoring.MethodologyVersion)
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
// Each file is written whole into a new file and renamed into place
// (atomicfile): a symlink planted at REPORT.md is replaced, not followed.
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
		err := atomicfile.Write(filepath.Join(opts.reportDir, reportFiles[f]), 0o644, func(w io.Writer) error { return writers[f](w, rep) })
		if err != nil {
			return setupErr(err)
		}
	}
	return nil
}

// replayWarnings are what a replay's report says beside its figures: what
// a miss costs (where a pull request's author reads it), how its servers
// differed from the recording's, what a live model answered.
func replayWarnings(res *batch.ReplayResult) []string {
	var w []string
	if res.Stale > 0 {
		w = append(w, fmt.Sprintf("%d run(s) stale: the server changed what the model sees (the misses above say where). "+
			"Re-recording exactly those runs with a live model would take about %d tokens, as recorded; "+
			"--mode live --live-model SPEC asks a live model for them only, from their first miss on", res.Stale, res.StaleTokens))
	}
	if res.FreshOfReused > 0 {
		w = append(w, fmt.Sprintf("%d run(s) recorded with --reuse-server were replayed with a fresh server each: a server that fetches a token does so at every run then, "+
			"and did once per server in the recording, so api_call_count may rise for no change of the server's; replay with --reuse-server to compare like with like", res.FreshOfReused))
	}
	if res.LiveRuns > 0 {
		w = append(w, fmt.Sprintf("the live model answered in %d run(s), from their first miss on: %d tokens; the other runs were served as recorded", res.LiveRuns, res.LiveTokens))
	}
	return w
}
