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
		Short: "Re-hash every blob, load every run, resolve every ref; exit 4 on any problem",
		Long: `Verify reads the whole store back: every blob is expanded and re-hashed
against its ID, every run's document must be present, every ref must point to
a run. Each problem is printed with the ID or ref it concerns, and the command
exits 4 when there is any.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return runTracesVerify(cmd.Context(), a, opts)
		},
	}
	cmd.Flags().BoolVar(&opts.json, "json", false, "print the report as JSON")
	return cmd
}

func runTracesVerify(ctx context.Context, a *app, opts *tracesVerifyOptions) error {
	s, err := openStore(a)
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
	}
	if !rep.OK() {
		return &silentExit{code: exitSetup}
	}
	return nil
}
