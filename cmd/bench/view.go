package main

import (
	"context"
	"errors"
	"fmt"
	"net"
	"path/filepath"

	"github.com/spf13/cobra"

	"github.com/mcpbench/bench/batch"
	"github.com/mcpbench/bench/internal/escape"
	"github.com/mcpbench/bench/view"
)

type viewOptions struct {
	addr      string
	export    string
	from      []string
	server    string
	model     string
	outcome   string
	sel       selection
	noMask    bool
	maskLeaks bool
	// ready, when set, is told the page's URL once it is served (tests).
	ready func(url string)
}

func newViewCmd(a *app) *cobra.Command {
	opts := &viewOptions{}
	cmd := &cobra.Command{
		Use:   "view [--addr HOST:PORT | --export DIR]",
		Short: "A web page over the store: runs, timelines, diffs, the scoreboard; --export writes it as static files",
		Long: `View serves a page over the store on a loopback address (127.0.0.1 or ::1
only; the default port is any free one, printed) until interrupted. It reads
the store as bench traces does, beside a recording that holds it; the page's
"reload the store" button shows the runs stored since.

The page has four views:
  runs        the refs of the store, filtered by server, model, scenario,
              suite, outcome and recorded/replayed, a page at a time; tick
              two runs to compare them
  a run       its timeline: model turns with their tokens, tool calls with
              arguments and results, under each call the HTTP calls it made
              (status, class), elicitations and egress attempts, safety
              findings in red, the answer against the result schema; for a
              replay, the recording it replays and its first miss explained;
              an LLM judge's gradings of it (bench judge run), each with
              its stored calibration and whether bench report shows it
  two runs    side by side, step by step, the first divergence marked
  scoreboard  what bench report scores (recorded runs), its chart, and per
              scenario a strip of pass/fail over the repeats

With --export DIR it writes the page and the data of the runs the selection
flags choose (every ref by default) into DIR instead: a bundle that opens
from disk (DIR/index.html, file://) with no server and nothing fetched from
elsewhere, each run in its own data file loaded when shown. The fixtures'
canaries are masked wherever they appear (--no-mask shows them, and then
export refuses to publish them). Export refuses, writing nothing and naming
the run and the field, when a canary is in what a server or a model said
(a tool result, a model's message, the answer: the run leaked it) unless
--mask-leaks, or when a value looks like a credential (a private key, an
API key or token). bench report --release --bundle DIR links a bundle.`,
		Example: `  # browse the store of the working directory
  bench view
  bench view --store runs/store --addr 127.0.0.1:8080

  # publish the recorded runs of the reference server, beside a results page
  bench view --export docs/bundle-1.2.0 --from golden/ --server reference
  bench report --release 1.2.0 --from golden/ --bundle docs/bundle-1.2.0`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			return runView(cmd.Context(), a, opts)
		},
	}
	f := cmd.Flags()
	f.StringVar(&opts.addr, "addr", "127.0.0.1:0", "loopback address to serve on (port 0: any free port)")
	f.StringVar(&opts.export, "export", "", "write a static bundle of the selected runs into DIR instead of serving")
	f.StringSliceVar(&opts.from, "from", nil, "export the runs under these ref prefixes (repeatable; default: every ref)")
	f.StringVar(&opts.server, "server", "", "export the runs of this server (as its refs name it)")
	f.StringVar(&opts.model, "model", "", "export the runs of this model (as its refs name it)")
	f.StringVar(&opts.outcome, "outcome", "", "export the runs that ended so (answered, text, error, stale, ...)")
	opts.sel.register(f, "export the runs of")
	opts.sel.registerExpectations(f)
	f.BoolVar(&opts.noMask, "no-mask", false, "show the fixtures' canaries as they are (export then refuses to publish them)")
	f.BoolVar(&opts.maskLeaks, "mask-leaks", false, "export runs in which a server or a model said a canary, the canary masked")
	return cmd
}

func runView(ctx context.Context, a *app, opts *viewOptions) error {
	// The address is checked before anything is opened: a non-loopback
	// one is refused at once.
	var lis net.Listener
	if opts.export == "" {
		if len(opts.from) > 0 || opts.server != "" || opts.model != "" || opts.outcome != "" || opts.sel.narrows() {
			return usageErr(errors.New("--from, --server, --model, --outcome, --scenario, --suite and --stage select what --export writes; the page has filters of its own"))
		}
		var err error
		if lis, err = view.Listen(opts.addr); err != nil {
			return usageErr(err)
		}
		defer lis.Close()
	}
	ld, err := opts.sel.load()
	if err != nil {
		return err
	}
	s, err := openStoreRead(a)
	if err != nil {
		return err
	}
	defer s.Close()
	v, err := view.New(&view.Options{Store: s, Scorer: batch.NewScorer(ld.all), Scenarios: ld.all, NoMask: opts.noMask,
		Reopen: func() (view.Store, error) { return openStoreRead(a) }})
	if err != nil {
		return setupErr(err)
	}
	defer v.Close()
	if opts.export != "" {
		return exportView(a, v, ld, opts)
	}
	url := "http://" + lis.Addr().String() + "/"
	fmt.Fprintf(a.stdout, "bench view: %s on %s (interrupt to stop)\n", escape.Line(s.Dir()), url)
	if opts.ready != nil {
		opts.ready(url)
	}
	if err := v.Serve(ctx, lis); err != nil {
		return setupErr(err)
	}
	return nil
}

// exportView writes the bundle of the runs the flags select.
func exportView(a *app, v *view.View, ld *loaded, opts *viewOptions) error {
	q := view.Query{Server: opts.server, Model: opts.model, Outcome: opts.outcome, Prefixes: opts.from}
	if opts.sel.narrows() {
		for _, sc := range ld.selected {
			q.Scenarios = append(q.Scenarios, sc.ID)
		}
	}
	rep, err := v.Export(opts.export, &view.ExportOptions{Query: q, MaskLeaks: opts.maskLeaks})
	var leak *view.LeakError
	switch {
	case errors.As(err, &leak):
		return withCode(exitSafety, fmt.Errorf("--export %s: %w (leave those runs out with the selection flags, or --mask-leaks to publish them masked)", opts.export, err))
	case err != nil:
		return usageErr(fmt.Errorf("--export %s: %w", opts.export, err))
	}
	fmt.Fprintf(a.stdout, "wrote %d runs to %s (%d files, %d bytes): open %s\n", rep.Runs, escape.Line(rep.Dir), rep.Files, rep.Bytes,
		escape.Line(filepath.Join(rep.Dir, "index.html")))
	return nil
}
