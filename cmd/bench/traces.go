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
		Short: "Inspect and maintain the trace store (ls, show, verify, repair, gc, export, import, stats)",
		Long: `The trace store holds every recorded and replayed run, content-addressed:
a run's ID is the SHA-256 of its canonical document, each run is compressed
against a similar run already stored (the first run of its scenario), and
every read re-hashes what it returns.

Runs are named by refs, <suite>/<server>/<model>/<scenario>/<run-index>, or
by their run ID (any unique prefix of at least 4 hex digits). The store is
` + defaultStoreDir + ` under the working directory unless --store says otherwise.

Only record and import create a store: every other command refuses a
directory that holds none (exit 2, "no store at PATH"). ls, show, verify,
stats, export, report and diff read a snapshot of the store, so they work
while a record writes it; the commands that write it (record, replay, gc,
import, migrate, repair) take the store for themselves, and one refused
says which process holds it.`,
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
		newTracesRepairCmd(a),
	)
	return cmd
}

// openStore opens the store named by --store for writing; it must exist.
// A directory that holds no store is bad input (exit 2); a store in use,
// damaged or unreadable is a setup failure (exit 4) with the store's own
// message.
func openStore(a *app) (*traces.Store, error) { return openStoreWith(a, writeExisting()) }

// writeExisting is how openStore and openStoreAhead open a store.
func writeExisting() *traces.Options { return &traces.Options{MustExist: true} }

// createStore opens the store named by --store for writing, and creates it
// when there is none (record, import).
func createStore(a *app) (*traces.Store, error) { return openStoreWith(a, nil) }

// openStoreRead opens the store named by --store for reading, also while
// another bench writes it (a record): it reads a snapshot of the store as it
// was (traces.Options.ReadOnly).
func openStoreRead(a *app) (*traces.Store, error) {
	return openStoreWith(a, &traces.Options{ReadOnly: true})
}

func openStoreWith(a *app, o *traces.Options) (*traces.Store, error) {
	return storeOpened(traces.Open(a.storeDir, o))
}

// openStoreAhead starts openStore in the background, for a command that
// loads its scenarios meanwhile: Wait gives what openStore would have
// given; a command that returns before it defers Close.
func openStoreAhead(a *app) *storeAhead {
	return &storeAhead{traces.OpenAhead(a.storeDir, writeExisting())}
}

type storeAhead struct{ op *traces.Opening }

func (s *storeAhead) Wait() (*traces.Store, error) { return storeOpened(s.op.Wait()) }
func (s *storeAhead) Close()                       { s.op.Close() }

// storeOpened says what an open's error means for bench's exit code.
func storeOpened(s *traces.Store, err error) (*traces.Store, error) {
	switch {
	case errors.Is(err, traces.ErrNoStore):
		return nil, usageErr(err)
	case err != nil:
		return nil, setupErr(err)
	}
	return s, nil
}

// damageHint adds to an error that says the store is damaged what to do
// about it, once: run bench traces repair. It is a setup failure (exit 4).
func damageHint(a *app, err error) error {
	var h *hintedDamage
	if err == nil || !errors.Is(err, traces.ErrCorrupt) || errors.Is(err, traces.ErrBadPack) || errors.As(err, &h) {
		return err
	}
	return &hintedDamage{err: err, store: a.storeDir}
}

type hintedDamage struct {
	err   error
	store string
}

func (h *hintedDamage) Error() string {
	return fmt.Sprintf("%v\nstore %s is damaged: run `bench traces repair --store %s` to drop what cannot be read (`bench traces verify --store %s` lists it), then record again: a resumed record records what was dropped",
		h.err, h.store, h.store, h.store)
}

func (h *hintedDamage) Unwrap() error { return setupErr(h.err) }

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
