package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"github.com/spf13/cobra"

	"github.com/mcpbench/bench/internal/escape"
	"github.com/mcpbench/bench/traces"
)

type tracesExportOptions struct {
	output string
	refs   []string
	format string
	// For --format otlp-json: contents in clear, and the scenarios that
	// select and score the runs.
	includeContent bool
	sel            selection
}

func newTracesExportCmd(a *app) *cobra.Command {
	opts := &tracesExportOptions{}
	cmd := &cobra.Command{
		Use:   "export [-o FILE] [--format pack|otlp-json] [REF-PREFIX...]",
		Short: "Write runs (all, or those under the given ref prefixes) to a pack file, or as OpenTelemetry traces (OTLP JSON)",
		Long: `Export writes a pack: one self-verifying file with the refs and their runs.
The same runs give byte-identical packs on any machine, so a pack can be
checked in, cached or compared by hash. Import it elsewhere with 'bench
traces import'.

--format otlp-json writes the runs as OpenTelemetry traces instead, in the
OTLP JSON file format as the OpenTelemetry Collector's file exporter writes
it and its otlpjsonfile receiver reads it: one ExportTraceServiceRequest
per line, one line per run, to -o FILE or standard output. Spans follow
the OpenTelemetry GenAI and MCP semantic conventions: the run is an
invoke_agent span, each model turn a "chat MODEL" span (tokens, finish
reason), each tool call an "execute_tool TOOL" span over its MCP
"tools/call TOOL" client span, and each request the fake Central served an
HTTP client span under the tool call that made it (the MCP handshake for
boot calls). The run's scores (task_success, tool_selection_accuracy,
param_acc, param_field_acc, safety) are gen_ai.evaluation.result events on
the run's span, scored against the scenarios (--scenarios, default the
built-in golden suite; --scenario, --suite and --stage select runs), and
so are an LLM judge's gradings of it (bench judge run: llm_judge.pass,
.correctness, .tool_use, .compliance, naming the judge model); the
judgements themselves (judge/ refs) are not written as runs. Times
are the run's recorded start and event times, trace and span IDs derive
from the run ID: the same runs give the same bytes. Message contents
(prompts, responses, tool arguments and results, the answer) are written
as SHA-256 hashes unless --include-content.`,
		Example: `  bench traces export -o golden.benchpack
  bench traces export -o reference.benchpack golden/reference/
  bench traces export --format otlp-json -o runs.otlp.jsonl golden/reference/
  bench traces export --format otlp-json --stage smoke --include-content golden/ > smoke.jsonl`,
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.refs = args
			switch opts.format {
			case "otlp-json":
				return runTracesExportOTLP(cmd.Context(), a, opts)
			case "pack":
			default:
				return usageErr(fmt.Errorf("--format %q: want pack or otlp-json", opts.format))
			}
			if opts.output == "" {
				return usageErr(errors.New("export needs -o FILE"))
			}
			if opts.includeContent || opts.sel.narrows() || len(opts.sel.paths) > 0 {
				return usageErr(errors.New("--include-content, --scenarios, --scenario, --suite and --stage go with --format otlp-json: a pack exports whole refs, by prefix"))
			}
			return runTracesExport(cmd.Context(), a, opts)
		},
	}
	cmd.Flags().StringVarP(&opts.output, "output", "o", "", "file to write (a pack: required; otlp-json: default standard output)")
	cmd.Flags().StringVar(&opts.format, "format", "pack", "pack, or otlp-json (OpenTelemetry traces)")
	cmd.Flags().BoolVar(&opts.includeContent, "include-content", false, "otlp-json: write messages, tool arguments and results in clear instead of their SHA-256")
	opts.sel.register(cmd.Flags(), "otlp-json: export and score the runs of")
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
	files     []string
	overwrite bool
	maxRunMiB int
	maxMiB    int
}

func newTracesImportCmd(a *app) *cobra.Command {
	opts := &tracesImportOptions{}
	cmd := &cobra.Command{
		Use:   "import FILE...",
		Short: "Merge packs into the store (each all or nothing): the shards of a recording, a release pack",
		Long: `Import reads the whole pack, verifies every run against its ID and the
pack's checksum, checks that each is a run this bench can read (as show,
report and replay will read it), and only then writes, in one synced batch
(packs of the older formats 1 and 2 are read too): a truncated, altered or
unreadable pack imports nothing, creates no store, and says why (exit 2).
Runs already in the store are kept once. A ref in the pack that would move
an existing ref is a conflict unless --overwrite.

A pack may come from anywhere, so what it may cost is bounded, each bound
checked before what would pass it is read or expanded: one run (its
document and what is kept beside it; for a pack of format 1, also what its
blobs expand to, and all its blobs together) at most --max-run-mib, and
the whole pack, decompressed and expanded, at most --max-mib.`,
		Args: cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.files = args
			if opts.maxRunMiB > maxRunMiB {
				return usageErr(fmt.Errorf("invalid argument \"%d\" for \"--max-run-mib\" flag: %d is out of range: want at most %d", opts.maxRunMiB, opts.maxRunMiB, maxRunMiB))
			}
			return runTracesImport(cmd.Context(), a, opts)
		},
	}
	cmd.Flags().BoolVar(&opts.overwrite, "overwrite", false, "let the pack's refs replace existing refs of the same name")
	intVarMin(cmd.Flags(), &opts.maxRunMiB, "max-run-mib", traces.DefaultMaxRunBytes>>20, 1, fmt.Sprintf("the largest run the pack may hold, in MiB (at most %d)", maxRunMiB))
	intVarMin(cmd.Flags(), &opts.maxMiB, "max-mib", traces.DefaultMaxImportBytes>>20, 1, "the most the whole pack may decompress and expand to, in MiB")
	return cmd
}

// maxRunMiB is the largest run the store reads (1 GiB).
const maxRunMiB = 1024

// runTracesImport imports each pack in turn, each whole or not at all:
// the shards of a recording merge into one store with one command.
func runTracesImport(_ context.Context, a *app, opts *tracesImportOptions) error {
	s, err := createStore(a)
	if err != nil {
		return err
	}
	defer s.Close()
	for i, file := range opts.files {
		if err := importPack(a, s, file, opts); err != nil {
			if i == 0 {
				// A store this import created goes with it.
				s.Abandon()
			} else {
				fmt.Fprintf(a.stderr, "bench: %d pack(s) before %s were imported and stay\n", i, escape.Line(file))
			}
			return err
		}
	}
	return nil
}

func importPack(a *app, s *traces.Store, file string, opts *tracesImportOptions) error {
	f, err := os.Open(file)
	if err != nil {
		return usageErr(err)
	}
	defer f.Close()
	rep, err := s.Import(f, &traces.ImportOptions{Overwrite: opts.overwrite,
		MaxRunBytes: int64(opts.maxRunMiB) << 20, MaxBytes: int64(opts.maxMiB) << 20})
	if err != nil {
		var le *traces.LimitError
		if errors.As(err, &le) {
			flag := "--max-run-mib"
			if le.Limit == "import" {
				flag = "--max-mib"
			}
			err = fmt.Errorf("%w (%s raises it, for a pack you trust)", err, flag)
		}
		return usageErr(fmt.Errorf("%s: %w", file, err))
	}
	_, err = fmt.Fprintf(a.stdout, "imported %s: %d runs (%d new), %d refs\n", file, rep.Runs, rep.NewRuns, rep.Refs)
	return err
}
