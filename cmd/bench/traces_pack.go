package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"github.com/spf13/cobra"

	"github.com/mcpbench/bench/traces"
)

type tracesExportOptions struct {
	output string
	refs   []string
}

func newTracesExportCmd(a *app) *cobra.Command {
	opts := &tracesExportOptions{}
	cmd := &cobra.Command{
		Use:   "export -o FILE [REF-PREFIX...]",
		Short: "Write runs (all, or those under the given ref prefixes) to a pack file",
		Long: `Export writes a pack: one self-verifying file with the refs, their runs and
every blob they reach. The same runs give byte-identical packs on any machine,
so a pack can be checked in, cached or compared by hash. Import it elsewhere
with 'bench traces import'.`,
		Example: `  bench traces export -o golden.benchpack
  bench traces export -o reference.benchpack golden/reference/`,
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.refs = args
			if opts.output == "" {
				return usageErr(errors.New("export needs -o FILE"))
			}
			return runTracesExport(cmd.Context(), a, opts)
		},
	}
	cmd.Flags().StringVarP(&opts.output, "output", "o", "", "pack file to write")
	return cmd
}

func runTracesExport(_ context.Context, a *app, opts *tracesExportOptions) error {
	s, err := openStoreRead(a)
	if err != nil {
		return err
	}
	defer s.Close()
	// Write next to the destination and rename, so a failed export never
	// leaves a truncated pack under the requested name.
	tmp, err := os.CreateTemp(filepath.Dir(opts.output), ".bench-export-*")
	if err != nil {
		return setupErr(err)
	}
	defer os.Remove(tmp.Name())
	rep, err := s.Export(tmp, opts.refs...)
	if err == nil {
		err = tmp.Sync()
	}
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if errors.Is(err, traces.ErrNotFound) {
		return usageErr(err)
	}
	if err != nil {
		return err
	}
	if err := os.Rename(tmp.Name(), opts.output); err != nil {
		return setupErr(err)
	}
	_, err = fmt.Fprintf(a.stdout, "exported %d refs, %d runs to %s\n", rep.Refs, rep.Runs, opts.output)
	return err
}

type tracesImportOptions struct {
	file      string
	overwrite bool
}

func newTracesImportCmd(a *app) *cobra.Command {
	opts := &tracesImportOptions{}
	cmd := &cobra.Command{
		Use:   "import FILE",
		Short: "Merge a pack into the store (all or nothing)",
		Long: `Import reads the whole pack, verifies every run against its ID and the
pack's checksum, and only then writes, in one synced batch (packs of the
older format 1 are read too): a truncated or altered pack imports nothing,
creates no store, and says why (exit 2). Runs already in the store are kept once. A ref in the
pack that would move an existing ref is a conflict unless --overwrite.`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.file = args[0]
			return runTracesImport(cmd.Context(), a, opts)
		},
	}
	cmd.Flags().BoolVar(&opts.overwrite, "overwrite", false, "let the pack's refs replace existing refs of the same name")
	return cmd
}

func runTracesImport(_ context.Context, a *app, opts *tracesImportOptions) error {
	f, err := os.Open(opts.file)
	if err != nil {
		return usageErr(err)
	}
	defer f.Close()
	s, err := createStore(a)
	if err != nil {
		return err
	}
	defer s.Close()
	rep, err := s.Import(f, &traces.ImportOptions{Overwrite: opts.overwrite})
	if err != nil {
		// A store this import created goes with it.
		s.Abandon()
		return usageErr(fmt.Errorf("%s: %w", opts.file, err))
	}
	_, err = fmt.Fprintf(a.stdout, "imported %s: %d runs (%d new), %d refs\n", opts.file, rep.Runs, rep.NewRuns, rep.Refs)
	return err
}
