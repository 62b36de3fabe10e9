package main

import (
	"context"
	"io"
	"os"
	"os/signal"
	"runtime"
	"runtime/pprof"
	"syscall"

	"github.com/spf13/cobra"
)

// app holds what every command shares: the injected streams and the global
// flags. Commands receive it from newRootCmd; nothing here is global.
type app struct {
	stdin  io.Reader
	stdout io.Writer
	stderr io.Writer

	storeDir   string // --store
	cpuProfile string // --cpuprofile (hidden: for measuring bench itself)
	memProfile string // --memprofile (hidden): heap profile at the end
	// getenv is os.Getenv in production; tests inject their own.
	getenv func(string) string

	stopProfile func() // set while a --cpuprofile is being written
}

const defaultStoreDir = ".bench/store"

func newRootCmd(a *app) *cobra.Command {
	root := &cobra.Command{
		Use:   "bench",
		Short: "Benchmark MCP servers for HPE Aruba Networking Central, offline and reproducibly",
		Long: `bench records LLM agent runs of MCP servers against a deterministic fake
Central, stores every model turn, MCP message and HTTP call in a
content-addressed trace store, replays the recorded model turns offline in
per-PR CI, scores the runs and gates pull requests.

Exit codes: 0 ok, 1 gate failed, 2 invalid input or usage, 3 safety failure,
4 setup failure, 5 inconclusive.`,
		SilenceUsage:  true,
		SilenceErrors: true,
	}
	root.SetIn(a.stdin)
	root.SetOut(a.stdout)
	root.SetErr(a.stderr)
	root.PersistentFlags().StringVar(&a.storeDir, "store", defaultStoreDir, "trace store directory")
	root.PersistentFlags().StringVar(&a.cpuProfile, "cpuprofile", "", "write a Go CPU profile of this command to FILE")
	root.PersistentFlags().MarkHidden("cpuprofile")
	root.PersistentFlags().StringVar(&a.memProfile, "memprofile", "", "write a Go heap profile to FILE when the command ends")
	root.PersistentFlags().MarkHidden("memprofile")
	root.PersistentPreRunE = func(cmd *cobra.Command, _ []string) error {
		if a.memProfile != "" {
			prev := a.stopProfile
			a.stopProfile = func() {
				if prev != nil {
					prev()
				}
				if f, err := os.Create(a.memProfile); err == nil {
					runtime.GC()
					pprof.WriteHeapProfile(f)
					f.Close()
				}
			}
		}
		if a.cpuProfile == "" {
			return nil
		}
		f, err := os.Create(a.cpuProfile)
		if err != nil {
			return usageErr(err)
		}
		next := a.stopProfile
		a.stopProfile = func() {
			pprof.StopCPUProfile()
			f.Close()
			if next != nil {
				next()
			}
		}
		return pprof.StartCPUProfile(f)
	}
	root.SetFlagErrorFunc(func(_ *cobra.Command, err error) error { return usageErr(err) })

	root.AddCommand(
		newDiffCmd(a),
		newFakeCmd(a),
		newJudgeCmd(a),
		newRecordCmd(a),
		newReplayCmd(a),
		newReportCmd(a),
		newScenariosCmd(a),
		newServersCmd(a),
		newTracesCmd(a),
		newVersionCmd(a),
	)
	return root
}

func run(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	a := &app{stdin: stdin, stdout: stdout, stderr: stderr, getenv: os.Getenv}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	return runWith(ctx, a, args)
}

func runWith(ctx context.Context, a *app, args []string) int {
	root := newRootCmd(a)
	root.SetArgs(args)
	_, err := root.ExecuteContextC(ctx)
	if a.stopProfile != nil {
		a.stopProfile()
	}
	if isArgsError(err) {
		err = usageErr(err)
	}
	return exitCode(err, a.stderr)
}
