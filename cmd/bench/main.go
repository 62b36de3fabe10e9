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

func main() {
	if os.Getenv("GOMEMLIMIT") == "" {
		debug.SetMemoryLimit(memoryLimit)
	}
	os.Exit(run(os.Args[1:], os.Stdin, os.Stdout, os.Stderr))
}
