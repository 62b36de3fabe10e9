package main

import (
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/mcpbench/bench/internal/escape"
	"github.com/mcpbench/bench/traces"
)

type tracesStatsOptions struct {
	json       bool
	byScenario bool
	expectRuns int
}

func newTracesStatsCmd(a *app) *cobra.Command {
	opts := &tracesStatsOptions{}
	cmd := &cobra.Command{
		Use:   "stats [--by-scenario [--expect-runs N]]",
		Short: "Count runs, refs and blobs; show raw, unique, stored and on-disk bytes",
		Long: `stats counts the store's runs, refs and bases and its bytes: raw, stored
and on disk. With --by-scenario it counts the recorded runs of each server,
model and scenario instead (refs suite/server/model/scenario/i, replays left
out); with --expect-runs N it also checks each has N, and exits 4 naming
those that have not: the check of a store merged from the shards of a
recording (bench traces import SHARD...).`,
		Example: `  bench traces import shard-*.benchpack && bench traces verify && bench traces stats --by-scenario --expect-runs 5`,
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return runTracesStats(cmd.Context(), a, opts)
		},
	}
	cmd.Flags().BoolVar(&opts.json, "json", false, "print JSON")
	cmd.Flags().BoolVar(&opts.byScenario, "by-scenario", false, "count the recorded runs of each server, model and scenario")
	cmd.Flags().IntVar(&opts.expectRuns, "expect-runs", 0, "with --by-scenario: check each has this many runs (exit 4 if not)")
	return cmd
}

func runTracesStats(_ context.Context, a *app, opts *tracesStatsOptions) error {
	s, err := openStoreRead(a)
	if err != nil {
		return err
	}
	defer s.Close()
	if opts.byScenario {
		return runsByScenario(a, s, opts)
	}
	if opts.expectRuns != 0 {
		return usageErr(fmt.Errorf("--expect-runs goes with --by-scenario"))
	}
	st, err := s.Stats()
	if err != nil {
		return err
	}
	if opts.json {
		enc := json.NewEncoder(a.stdout)
		enc.SetIndent("", "  ")
		return enc.Encode(struct {
			*traces.Stats
			CompressionRatio float64 `json:"compression_ratio"`
		}{st, round3(st.CompressionRatio())})
	}
	w := a.stdout
	fmt.Fprintf(w, "runs          %d\n", st.Runs)
	fmt.Fprintf(w, "refs          %d\n", st.Refs)
	fmt.Fprintf(w, "bases         %d  (runs others are compressed against)\n", st.Bases)
	fmt.Fprintf(w, "raw bytes     %s  (every run's canonical document)\n", humanBytes(st.RawBytes))
	fmt.Fprintf(w, "stored bytes  %s  (the run records, compressed)\n", humanBytes(st.StoredBytes))
	fmt.Fprintf(w, "disk bytes    %s  (the store's database, every file)\n", humanBytes(st.DiskBytes))
	fmt.Fprintf(w, "compression   %.2fx\n", st.CompressionRatio())
	return nil
}

func round3(f float64) float64 { return float64(int64(f*1000+0.5)) / 1000 }

// scenarioCount is the recorded runs of one server, model and scenario.
type scenarioCount struct {
	Suite    string `json:"suite"`
	Server   string `json:"server"`
	Model    string `json:"model"`
	Scenario string `json:"scenario"`
	Runs     int    `json:"runs"`
}

func runsByScenario(a *app, s *traces.Store, opts *tracesStatsOptions) error {
	refs, err := s.Refs("")
	if err != nil {
		return err
	}
	counts := map[scenarioCount]int{}
	for _, r := range refs {
		p, ok := traces.ParseRunRef(r.Name)
		if !ok || p.Prefix != "" {
			continue // not a recording's ref (replays are under replay/)
		}
		counts[scenarioCount{Suite: p.Suite, Server: p.Server, Model: p.Model, Scenario: p.Scenario}]++
	}
	rows := make([]scenarioCount, 0, len(counts))
	for k, n := range counts {
		k.Runs = n
		rows = append(rows, k)
	}
	slices.SortFunc(rows, func(x, y scenarioCount) int {
		return cmp.Or(cmp.Compare(x.Suite, y.Suite), cmp.Compare(x.Server, y.Server), cmp.Compare(x.Model, y.Model), cmp.Compare(x.Scenario, y.Scenario))
	})
	var short []scenarioCount
	for _, r := range rows {
		if opts.expectRuns > 0 && r.Runs != opts.expectRuns {
			short = append(short, r)
		}
	}
	if opts.json {
		enc := json.NewEncoder(a.stdout)
		enc.SetIndent("", "  ")
		if err := enc.Encode(rows); err != nil {
			return err
		}
	} else {
		tw := tabwriter.NewWriter(a.stdout, 0, 4, 2, ' ', 0)
		fmt.Fprintln(tw, "SUITE\tSERVER\tMODEL\tSCENARIO\tRUNS")
		for _, r := range rows {
			fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%d\n", escape.Line(r.Suite), escape.Line(r.Server), escape.Line(r.Model), escape.Line(r.Scenario), r.Runs)
		}
		tw.Flush()
		fmt.Fprintf(a.stdout, "%d server/model/scenario groups, %d recorded runs\n", len(rows), sum(rows))
	}
	if len(short) > 0 {
		for _, r := range short {
			fmt.Fprintf(a.stderr, "bench: %s/%s/%s/%s: %d run(s), want %d\n", escape.Line(r.Suite), escape.Line(r.Server), escape.Line(r.Model), escape.Line(r.Scenario), r.Runs, opts.expectRuns)
		}
		return setupErr(fmt.Errorf("%d of %d groups do not have %d runs", len(short), len(rows), opts.expectRuns))
	}
	if opts.expectRuns > 0 && len(rows) == 0 {
		return setupErr(fmt.Errorf("no recorded runs to check"))
	}
	return nil
}

func sum(rows []scenarioCount) int {
	n := 0
	for _, r := range rows {
		n += r.Runs
	}
	return n
}
