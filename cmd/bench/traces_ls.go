package main

import (
	"context"
	"encoding/json"
	"fmt"
	"text/tabwriter"

	"github.com/spf13/cobra"
)

type tracesLsOptions struct {
	prefix string
	json   bool
}

func newTracesLsCmd(a *app) *cobra.Command {
	opts := &tracesLsOptions{}
	cmd := &cobra.Command{
		Use:   "ls [PREFIX]",
		Short: "List refs (optionally those starting with PREFIX) and the runs they point to",
		Example: `  bench traces ls
  bench traces ls golden/reference/baseline/`,
		Args: cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if len(args) == 1 {
				opts.prefix = args[0]
			}
			return runTracesLs(cmd.Context(), a, opts)
		},
	}
	cmd.Flags().BoolVar(&opts.json, "json", false, "print JSON")
	return cmd
}

func runTracesLs(_ context.Context, a *app, opts *tracesLsOptions) error {
	s, err := openStoreRead(a)
	if err != nil {
		return err
	}
	defer s.Close()
	refs, err := s.Refs(opts.prefix)
	if err != nil {
		return err
	}
	if opts.json {
		enc := json.NewEncoder(a.stdout)
		enc.SetIndent("", "  ")
		if refs == nil {
			return enc.Encode([]any{})
		}
		return enc.Encode(refs)
	}
	tw := tabwriter.NewWriter(a.stdout, 0, 4, 2, ' ', 0)
	for _, r := range refs {
		fmt.Fprintf(tw, "%s\t%s\n", r.Run.Short(), r.Name)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	if len(refs) == 0 {
		fmt.Fprintf(a.stderr, "no refs%s in %s\n", map[bool]string{true: " under " + opts.prefix, false: ""}[opts.prefix != ""], s.Dir())
	}
	return nil
}
