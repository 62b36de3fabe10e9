package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/signal"
	"runtime"
	"runtime/pprof"
	"strings"
	"syscall"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/mcpbench/bench/batch"
	"github.com/mcpbench/bench/internal/atomicfile"
	"github.com/mcpbench/bench/scenarios"
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
	statsFile  string // --stats (hidden): the process's wall and CPU time at the end
	// stats is what --stats writes; a command may fill in fields of its own.
	stats runStats
	// getenv is os.Getenv in production; tests inject their own.
	getenv func(string) string
	// retrySleep waits between a live model's retries; nil is a timer.
	// Tests inject one that returns at once.
	retrySleep func(ctx context.Context, d time.Duration) error

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
	root.PersistentFlags().StringVar(&a.statsFile, "stats", "", "write this process's wall and CPU time to FILE as one JSON line when the command ends")
	root.PersistentFlags().MarkHidden("stats")
	root.PersistentPreRunE = func(cmd *cobra.Command, _ []string) error {
		if a.memProfile != "" {
			prev := a.stopProfile
			a.stopProfile = func() {
				if prev != nil {
					prev()
				}
				atomicfile.Write(a.memProfile, 0o644, func(w io.Writer) error {
					runtime.GC()
					return pprof.WriteHeapProfile(w)
				})
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
	root.SetFlagErrorFunc(func(c *cobra.Command, err error) error { return usageErr(flagError(c, err)) })

	root.AddCommand(
		newDiffCmd(a),
		newFakeCmd(a),
		newInitCmd(a),
		newJudgeCmd(a),
		newRecordCmd(a),
		newReplayCmd(a),
		newReportCmd(a),
		newScenariosCmd(a),
		newServersCmd(a),
		newTracesCmd(a),
		newVersionCmd(a),
		newViewCmd(a),
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
	if a.statsFile != "" {
		if werr := a.stats.write(a.statsFile); werr != nil {
			fmt.Fprintf(a.stderr, "bench: --stats: %v\n", werr)
		}
	}
	if isArgsError(err) {
		err = usageErr(err)
	}
	return exitCode(damageHint(a, err), a.stderr)
}

// processStart is as close to the process's start as bench can read: the
// runtime's and the imported packages' initialization come before it (the
// CPU figures count them).
var processStart = time.Now()

// runStats is the line --stats writes (scripts/bench/replay.sh reads it):
// times in microseconds since processStart, CPU time (getrusage
// RUSAGE_SELF: every thread of bench, no child process) since the process
// started.
type runStats struct {
	WallUS    int64 `json:"wall_us"`
	CPUUserUS int64 `json:"cpu_user_us"`
	CPUSysUS  int64 `json:"cpu_sys_us"`
	// FirstRunUS and LastRunUS, for a command that runs a batch, are when
	// its first run started and its last run was done (stored, scored).
	FirstRunUS int64 `json:"first_run_us,omitempty"`
	LastRunUS  int64 `json:"last_run_us,omitempty"`
	// CallsUS is the wall time its runs spent in tool calls sent to the
	// server (batch.Times.Calls).
	CallsUS int64 `json:"calls_us,omitempty"`
}

// batchTimes records a batch's first start, last end and time in tool
// calls in s.
func (s *runStats) batchTimes(t batch.Times) {
	if !t.FirstStart.IsZero() {
		s.FirstRunUS = t.FirstStart.Sub(processStart).Microseconds()
		s.LastRunUS = t.LastEnd.Sub(processStart).Microseconds()
		s.CallsUS = t.Calls.Microseconds()
	}
}

// write fills in the times and writes s to file.
func (s *runStats) write(file string) error {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return err
	}
	s.WallUS = time.Since(processStart).Microseconds()
	s.CPUUserUS = ru.Utime.Nano() / 1e3
	s.CPUSysUS = ru.Stime.Nano() / 1e3
	b, err := json.Marshal(s)
	if err != nil {
		return err
	}
	return atomicfile.WriteFile(file, append(b, '\n'), 0o644)
}

// flagError adds the nearest flag of the command to an unknown flag's
// error: "unknown flag: --stag (did you mean --stage?)".
func flagError(c *cobra.Command, err error) error {
	name, ok := strings.CutPrefix(err.Error(), "unknown flag: --")
	if !ok {
		return err
	}
	var names []string
	c.Flags().VisitAll(func(f *pflag.Flag) {
		if !f.Hidden {
			names = append(names, f.Name)
		}
	})
	c.InheritedFlags().VisitAll(func(f *pflag.Flag) {
		if !f.Hidden {
			names = append(names, f.Name)
		}
	})
	if near := scenarios.Nearest(name, names, 1); len(near) > 0 {
		return fmt.Errorf("%w (did you mean --%s?)", err, near[0])
	}
	return err
}
