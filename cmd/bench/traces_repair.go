package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/spf13/cobra"

	"github.com/mcpbench/bench/traces"
)

type tracesRepairOptions struct {
	dryRun bool
	json   bool
}

func newTracesRepairCmd(a *app) *cobra.Command {
	opts := &tracesRepairOptions{}
	cmd := &cobra.Command{
		Use:   "repair",
		Short: "Drop what cannot be read from a damaged store, say what, keep everything else",
		Long: `Repair reads the store as verify does, past damage, and drops what cannot be
read: every run whose record (or a base it is compressed against) is damaged
or missing, every ref that points at such a run or at a run the store lacks,
the bases those runs were, and the families and anchor lists that name such
a base. It prints every ref and run it drops, and the stretches of keys the
damage took (those are gone already). Everything else is kept as it was:
every other run keeps its ID, start time and stderr, every other ref stays.
A resumed bench record, the same command as before, then records exactly
the dropped refs again.

Repair writes the kept keys into a fresh database and swaps it in; the
damaged database is kept beside it as db.damaged.N in the store's directory
(named at the end; delete it once you no longer need it). Interrupted, it
leaves the store as it was, or the next open finishes the swap. A log
pebble refuses to replay (cut short, or a chunk that fails its checksum)
is cut where pebble stopped reading it: the writes after that point are
lost, and said so.

Repair needs the store to itself: run it when no record or replay writes
it. With --dry-run it only prints what it would drop.`,
		Example: `  bench traces verify --store .bench/store
  bench traces repair --store .bench/store --dry-run
  bench traces repair --store .bench/store`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return runTracesRepair(cmd.Context(), a, opts)
		},
	}
	cmd.Flags().BoolVar(&opts.dryRun, "dry-run", false, "print what would be dropped, change nothing")
	cmd.Flags().BoolVar(&opts.json, "json", false, "print the report as JSON")
	return cmd
}

func runTracesRepair(ctx context.Context, a *app, opts *tracesRepairOptions) error {
	rep, err := traces.Repair(ctx, a.storeDir, nil, opts.dryRun)
	switch {
	case errors.Is(err, traces.ErrNoStore):
		return usageErr(err)
	case err != nil:
		return setupErr(err)
	}
	if opts.json {
		enc := json.NewEncoder(a.stdout)
		enc.SetIndent("", "  ")
		return enc.Encode(rep)
	}
	w := a.stdout
	if !rep.Changed() {
		_, err := fmt.Fprintf(w, "store %s reads whole: %d runs, %d refs; nothing to repair\n", a.storeDir, rep.KeptRuns, rep.KeptRefs)
		return err
	}
	verb := "dropped"
	if rep.DryRun {
		verb = "would drop"
	}
	for _, c := range rep.Salvaged {
		fmt.Fprintf(w, "salvaged: %s\n", c)
	}
	for _, l := range rep.Lost {
		fmt.Fprintf(w, "lost: %s\n", l)
	}
	for _, r := range rep.DroppedRefs {
		fmt.Fprintf(w, "%s ref %s (run %s: %s)\n", verb, r.Name, r.Run.Short(), r.Cause)
	}
	for _, r := range rep.DroppedRuns {
		fmt.Fprintf(w, "%s run %s: %s\n", verb, r.Run, r.Cause)
	}
	for _, b := range rep.DroppedBases {
		fmt.Fprintf(w, "%s base %d\n", verb, b)
	}
	for _, k := range rep.DroppedKeys {
		fmt.Fprintf(w, "%s %s\n", verb, k)
	}
	fmt.Fprintf(w, "%s %d runs, %d refs, %d bases; kept %d runs, %d refs\n", verb, len(rep.DroppedRuns), len(rep.DroppedRefs), len(rep.DroppedBases), rep.KeptRuns, rep.KeptRefs)
	if rep.DryRun {
		_, err := fmt.Fprintf(w, "dry run: store %s is unchanged; run without --dry-run to repair it\n", a.storeDir)
		return err
	}
	fmt.Fprintf(w, "repaired store %s; the damaged database is kept in %s (delete it once you no longer need it)\n", a.storeDir, rep.Backup)
	_, err = fmt.Fprintf(w, "a resumed `bench record` (the same command as before) records the %d dropped refs again\n", len(rep.DroppedRefs))
	return err
}
