package main

import (
	"errors"
	"fmt"

	"github.com/spf13/cobra"

	"github.com/mcpbench/bench/traces"
)

func newTracesCmd(a *app) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "traces",
		Short: "Inspect and maintain the trace store (ls, show, verify, gc, export, import, stats)",
		Long: `The trace store holds every recorded and replayed run, content-addressed:
a run's ID is the SHA-256 of its canonical document, each run is compressed
against a similar run already stored (the first run of its scenario), and
every read re-hashes what it returns.

Runs are named by refs, <suite>/<server>/<model>/<scenario>/<run-index>, or
by their run ID (any unique prefix of at least 4 hex digits). The store is
` + defaultStoreDir + ` under the working directory unless --store says otherwise.`,
	}
	cmd.AddCommand(
		newTracesLsCmd(a),
		newTracesShowCmd(a),
		newTracesVerifyCmd(a),
		newTracesGCCmd(a),
		newTracesExportCmd(a),
		newTracesImportCmd(a),
		newTracesStatsCmd(a),
		newTracesMigrateCmd(a),
	)
	return cmd
}

// openStore opens the store named by --store. A store in use by another
// process is a setup failure with the store's own message.
func openStore(a *app) (*traces.Store, error) {
	s, err := traces.Open(a.storeDir, nil)
	if err != nil {
		return nil, setupErr(err)
	}
	return s, nil
}

// resolveRuns turns a ref, a ref prefix or a run-ID prefix into the runs
// it names, as (name, ID) pairs sorted by name.
func resolveRuns(s *traces.Store, arg string) ([]traces.Ref, error) {
	if id, err := s.Ref(arg); err == nil {
		return []traces.Ref{{Name: arg, Run: id}}, nil
	}
	refs, err := s.Refs(arg)
	if err != nil {
		return nil, err
	}
	if len(refs) > 0 {
		return refs, nil
	}
	id, err := s.FindRun(arg)
	switch {
	case err == nil:
		return []traces.Ref{{Name: id.Short(), Run: id}}, nil
	case errors.Is(err, traces.ErrAmbiguous):
		return nil, usageErr(err)
	default:
		return nil, usageErr(fmt.Errorf("%q names no ref, ref prefix or run in %s", arg, s.Dir()))
	}
}
