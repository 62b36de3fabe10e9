package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"maps"
	"slices"
	"strings"

	"github.com/mcpbench/bench/batch"
	"github.com/mcpbench/bench/internal/atomicfile"
	"github.com/mcpbench/bench/internal/otlp"
	"github.com/mcpbench/bench/traces"
)

// runTracesExportOTLP writes the selected runs as OTLP JSON, one run at a
// time (read, scored, written, dropped).
func runTracesExportOTLP(_ context.Context, a *app, opts *tracesExportOptions) error {
	ld, err := opts.sel.load()
	if err != nil {
		return err
	}
	keep := map[string]bool{}
	for _, sc := range ld.selected {
		keep[sc.ID] = true
	}
	s, err := openStoreRead(a)
	if err != nil {
		return err
	}
	defer s.Close()
	prefixes := opts.refs
	if len(prefixes) == 0 {
		prefixes = []string{""}
	}
	var refs []traces.Ref
	judgements := 0
	for _, p := range prefixes {
		rs, err := resolveRuns(s, p)
		if err != nil {
			return err
		}
		for _, r := range rs {
			if strings.HasPrefix(r.Name, traces.JudgeRefPrefix) {
				judgements++ // written on the run it grades
				continue
			}
			refs = append(refs, r)
		}
	}
	slices.SortFunc(refs, func(x, y traces.Ref) int { return strings.Compare(x.Name, y.Name) })
	refs = slices.CompactFunc(refs, func(x, y traces.Ref) bool { return x.Name == y.Name })
	judged, err := judgeRefIndex(s)
	if err != nil {
		return err
	}
	judges := slices.Sorted(maps.Keys(judged))
	scorer := batch.NewScorer(ld.all)
	var runs, unscored int
	write := func(w io.Writer) error {
		for _, r := range refs {
			run, err := s.GetRun(r.Run)
			if err != nil {
				return damageHint(a, err)
			}
			if !keep[run.Manifest.Scenario.ID] {
				continue
			}
			var evals []otlp.Evaluation
			switch rm, err := scorer.Score(run); {
			case errors.Is(err, batch.ErrNotScorable):
				unscored++
			case err != nil:
				return err
			default:
				evals = otlp.Evaluations(rm, opts.includeContent)
			}
			for _, seg := range judges {
				jid, ok := judged[seg][r.Name]
				if !ok {
					continue
				}
				j, res, err := judgementOf(s, jid, r.Run)
				if err != nil {
					return damageHint(a, err)
				}
				evals = append(evals, otlp.JudgeEvaluations(j.Manifest.Model.Name, res, opts.includeContent)...)
			}
			if err := otlp.Write(w, []otlp.Run{{Ref: r.Name, Run: run, Evaluations: evals}}, &otlp.Options{IncludeContent: opts.includeContent}); err != nil {
				return err
			}
			runs++
		}
		if runs == 0 && judgements > 0 && len(refs) == 0 {
			return usageErr(fmt.Errorf("the refs under %q are LLM judge gradings only: they are written as evaluation events on the runs they grade (export those)", prefixes))
		}
		if runs == 0 {
			return usageErr(fmt.Errorf("no runs of %s under %q in %s", opts.sel.label(), prefixes, s.Dir()))
		}
		return nil
	}
	if opts.output == "" || opts.output == "-" {
		err = write(a.stdout)
	} else {
		err = atomicfile.Write(opts.output, 0o644, write)
	}
	if err != nil {
		return err
	}
	if unscored > 0 {
		fmt.Fprintf(a.stderr, "bench: %d of %d runs have no evaluation events: their scenarios are not in %s\n", unscored, runs, opts.sel.source())
	}
	if opts.output != "" && opts.output != "-" {
		fmt.Fprintf(a.stderr, "exported %d runs as OTLP JSON to %s\n", runs, opts.output)
	}
	return nil
}
