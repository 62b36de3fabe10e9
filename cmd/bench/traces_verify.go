package main

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/spf13/cobra"
)

type tracesVerifyOptions struct{ json bool }

func newTracesVerifyCmd(a *app) *cobra.Command {
	opts := &tracesVerifyOptions{}
	cmd := &cobra.Command{
		Use:   "verify",
		Short: "Read every key, run and ref back, past damage; name what cannot be read; exit 4 on any problem",
		Long: `Verify reads the whole store back: every key (run records, the bases,
families and anchors runs are compressed against, refs, the store's own
counters), every run decompressed and re-hashed against its ID, every ref
resolved. A damaged block of the store's files (a checksum that does not
match) does not stop it: it reads on past the block and names the keys
around it. Each problem is printed with the run, ref or keys it concerns:
every run that cannot be read and every ref that points at one (or at a run
the store lacks). It exits 4 when there is any; bench traces repair drops
them, so that a resumed record records those refs again.

Verify reads a snapshot of the store, so it also works while a record
writes it.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return runTracesVerify(cmd.Context(), a, opts)
		},
	}
	cmd.Flags().BoolVar(&opts.json, "json", false, "print the report as JSON")
	return cmd
}

func runTracesVerify(ctx context.Context, a *app, opts *tracesVerifyOptions) error {
	s, err := openStoreRead(a)
	if err != nil {
		return err
	}
	defer s.Close()
	rep, err := s.Verify(ctx)
	if err != nil {
		return err
	}
	if opts.json {
		enc := json.NewEncoder(a.stdout)
		enc.SetIndent("", "  ")
		if err := enc.Encode(rep); err != nil {
			return err
		}
	} else {
		for _, p := range rep.Problems {
			fmt.Fprintf(a.stdout, "corrupt: %s\n", p)
		}
		fmt.Fprintf(a.stdout, "checked %d runs (%d bases), %d refs: %d problems\n", rep.Runs, rep.Bases, rep.Refs, len(rep.Problems))
		if !rep.OK() {
			fmt.Fprintf(a.stdout, "read %d keys; %d runs cannot be read, %d refs point at them or at missing runs, %d stretches of keys are lost\n",
				rep.Keys, len(rep.UnreadableRuns), len(rep.BrokenRefs), rep.LostStretches)
			fmt.Fprintf(a.stdout, "run `bench traces repair --store %s` to drop them; a resumed `bench record` then records those refs again\n", a.storeDir)
		}
	}
	if !rep.OK() {
		return &silentExit{code: exitSetup}
	}
	return nil
}
