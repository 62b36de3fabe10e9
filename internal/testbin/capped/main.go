// Command capped runs a program under an address-space limit and reports
// how it ended and its peak resident set on file descriptor 3, as JSON:
//
//	capped LIMIT_BYTES PROGRAM [ARG...]
//
// testbin.RunCapped runs programs through it rather than straight from a
// test: Linux carries the peak RSS of the process that starts a program
// over into the program's own (a vfork'd child shares its parent's memory
// until exec), so a test process that had grown large would inflate every
// figure. This process is small, so the figure it reports is the
// program's.
package main

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"syscall"
)

type report struct {
	Exit    int    `json:"exit"`
	Signal  string `json:"signal,omitempty"`
	MaxRSSK int64  `json:"maxrss_kb"`
}

func main() {
	if len(os.Args) < 3 {
		fmt.Fprintln(os.Stderr, "usage: capped LIMIT_BYTES PROGRAM [ARG...]")
		os.Exit(2)
	}
	limit, err := strconv.ParseUint(os.Args[1], 10, 64)
	if err != nil {
		fmt.Fprintln(os.Stderr, "capped:", err)
		os.Exit(2)
	}
	out := os.NewFile(3, "report")
	cmd := exec.Command(os.Args[2], os.Args[3:]...)
	cmd.Stdin, cmd.Stdout, cmd.Stderr = os.Stdin, os.Stdout, os.Stderr
	// The limit is set here, after this program started, and inherited:
	// the program runs no instruction without it.
	if err := syscall.Setrlimit(syscall.RLIMIT_AS, &syscall.Rlimit{Cur: limit, Max: limit}); err != nil {
		fmt.Fprintln(os.Stderr, "capped:", err)
		os.Exit(2)
	}
	if err := cmd.Start(); err != nil {
		fmt.Fprintln(os.Stderr, "capped:", err)
		os.Exit(127)
	}
	cmd.Wait()
	st := cmd.ProcessState
	r := report{Exit: st.ExitCode()}
	if ws, ok := st.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
		r.Signal = ws.Signal().String()
	}
	if ru, ok := st.SysUsage().(*syscall.Rusage); ok {
		r.MaxRSSK = ru.Maxrss
	}
	json.NewEncoder(out).Encode(r)
	os.Exit(0)
}
