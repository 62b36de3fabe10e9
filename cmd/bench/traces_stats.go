package main

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/spf13/cobra"

	"github.com/mcpbench/bench/traces"
)

type tracesStatsOptions struct{ json bool }

func newTracesStatsCmd(a *app) *cobra.Command {
	opts := &tracesStatsOptions{}
	cmd := &cobra.Command{
		Use:   "stats",
		Short: "Count runs, refs and blobs; show raw, unique, stored and on-disk bytes",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return runTracesStats(cmd.Context(), a, opts)
		},
	}
	cmd.Flags().BoolVar(&opts.json, "json", false, "print JSON")
	return cmd
}

func runTracesStats(_ context.Context, a *app, opts *tracesStatsOptions) error {
	s, err := openStoreRead(a)
	if err != nil {
		return err
	}
	defer s.Close()
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
