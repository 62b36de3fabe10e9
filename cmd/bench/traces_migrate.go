package main

import (
	"context"
	"errors"
	"fmt"

	"github.com/spf13/cobra"

	"github.com/mcpbench/bench/traces"
)

func newTracesMigrateCmd(a *app) *cobra.Command {
	return &cobra.Command{
		Use:   "migrate",
		Short: "Convert a store of an older layout to this bench's (keeps every run and its ID)",
		Long: `migrate converts the store named by --store from store format 1 (runs kept
as trees of blobs) to store format 2 (each run compressed against a similar
run already stored), in place. Every run keeps its document, and so its run
ID, start time and stderr; every ref stays; replays and reports of the
store are the same before and after. It can be interrupted and run again:
it goes on where it stopped. A store in the current format is left as it
is.`,
		Example: `  bench --store .bench/store traces migrate`,
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return runTracesMigrate(cmd.Context(), a)
		},
	}
}

func runTracesMigrate(ctx context.Context, a *app) error {
	prog := newProgress(a.stderr, 0)
	rep, err := traces.Migrate(ctx, a.storeDir, nil, func(done, total int) {
		prog.total = total
		// A line per tenth on a log, every run on a terminal.
		if prog.tty || done == total || done*10/total != (done-1)*10/total {
			prog.n = done - 1
			prog.done(fmt.Sprintf("run %d", done), "converted", false)
		}
	})
	prog.finish()
	if errors.Is(err, traces.ErrNoStore) {
		return usageErr(err)
	}
	if err != nil {
		return setupErr(err)
	}
	if rep.From == rep.To {
		_, err = fmt.Fprintf(a.stdout, "%s is in store format %d already\n", a.storeDir, rep.To)
		return err
	}
	_, err = fmt.Fprintf(a.stdout, "migrated %s from store format %d to %d: %d runs\n", a.storeDir, rep.From, rep.To, rep.Runs)
	return err
}
