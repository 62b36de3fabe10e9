// Command bench benchmarks MCP servers for HPE Aruba Networking Central:
// it records agent runs against a deterministic fake Central, replays them
// offline in CI, scores them and gates pull requests.
package main

import (
	"os"
	"runtime/debug"
)

// memoryLimit is bench's soft memory limit (runtime/debug.SetMemoryLimit)
// unless GOMEMLIMIT sets another: a batch's live heap is some 50 MB
// whatever its size (runs are dropped once stored and scored), and without
// a limit the collector lets the heap grow to twice that between cycles,
// so the peak RSS of a long replay drifted up with its length. Above the
// limit the collector works harder, never past half the CPU.
const memoryLimit = 96 << 20

// readMemoryLimit is the soft limit of bench report, which only reads a
// store and scores it: its live heap is some 25 MB (the replay's is twice
// that, with its servers' fakes), and under the general limit its peak RSS
// rose by half from 220 runs to 5,000 (80 -> 117 MB) as the heap filled
// the room it was given; under this one it takes no longer.
const readMemoryLimit = 64 << 20

func main() {
	setMemoryLimit(memoryLimit)
	os.Exit(run(os.Args[1:], os.Stdin, os.Stdout, os.Stderr))
}

// setMemoryLimit sets the soft memory limit to n bytes unless GOMEMLIMIT
// sets one; under its own limit bench also turns the collector's
// proportional pacing off (GOGC=off) unless GOGC sets it, so that the
// limit alone paces the collector. A long batch is paced by the limit
// anyway (its heap reaches it: GOGC=off took no CPU off a 2,200-run
// replay); a short one ran a cycle each time its heap doubled from a few
// megabytes, and a command's start-up (the suite, some 11 MB) two or
// three: GOGC=off took 7% of the CPU and 5 ms of the fixed cost off a
// 220-run replay (five alternated runs each, 2026-12-06), for 20 MB
// more peak RSS there (108 -> 129 MB; the 2,200-run replay's stays at
// 131 MB). With GOMEMLIMIT set (it may be no limit at all) GOGC stays
// the runtime's.
func setMemoryLimit(n int64) {
	if os.Getenv("GOMEMLIMIT") == "" {
		debug.SetMemoryLimit(n)
		if os.Getenv("GOGC") == "" {
			debug.SetGCPercent(-1)
		}
	}
}
