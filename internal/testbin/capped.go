package testbin

import (
	"bytes"
	"context"
	"fmt"
	"os/exec"
	"strconv"
	"syscall"
	"time"
)

// MemoryCap is the address-space limit RunCapped puts on a program, and
// PeakRSSLimit the peak resident set a hostile input may cost bench
// (issue 16: every hostile input stays under 300 MB).
const (
	MemoryCap    = 2 << 30
	PeakRSSLimit = 300 << 20
)

// Result is how a capped run ended.
type Result struct {
	Stdout, Stderr []byte
	ExitCode       int    // -1 when killed by a signal
	Signal         string // the signal that ended it, or ""
	PeakRSS        int64  // bytes (getrusage ru_maxrss)
	TimedOut       bool
}

// RunCapped runs cmd (not yet started) under an address-space limit of
// MemoryCap bytes, kills its process group after timeout, and reports its
// exit and peak RSS. The limit is set with sh's ulimit before exec, so the
// program never runs a single instruction without it.
func RunCapped(cmd *exec.Cmd, timeout time.Duration) (*Result, error) {
	argv := append([]string{"-c", `ulimit -v "$0" && exec "$@"`, strconv.Itoa(MemoryCap >> 10), cmd.Path}, cmd.Args[1:]...)
	sh := exec.Command("/bin/sh", argv...)
	sh.Dir, sh.Env, sh.Stdin = cmd.Dir, cmd.Env, cmd.Stdin
	var out, errb bytes.Buffer
	sh.Stdout, sh.Stderr = &out, &errb
	sh.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := sh.Start(); err != nil {
		return nil, err
	}
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	done := make(chan struct{})
	r := &Result{}
	go func() {
		select {
		case <-ctx.Done():
			if ctx.Err() == context.DeadlineExceeded {
				r.TimedOut = true
				syscall.Kill(-sh.Process.Pid, syscall.SIGKILL)
			}
		case <-done:
		}
	}()
	err := sh.Wait()
	close(done)
	r.Stdout, r.Stderr = out.Bytes(), errb.Bytes()
	st := sh.ProcessState
	if st == nil {
		return nil, fmt.Errorf("%s: %v", cmd.Path, err)
	}
	if ru, ok := st.SysUsage().(*syscall.Rusage); ok {
		r.PeakRSS = ru.Maxrss << 10
	}
	r.ExitCode = st.ExitCode()
	if ws, ok := st.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
		r.Signal = ws.Signal().String()
	}
	return r, nil
}

// String summarises r for a test failure.
func (r *Result) String() string {
	return fmt.Sprintf("exit %d signal %q peak RSS %d MB timed out %v\nstdout:\n%s\nstderr:\n%s",
		r.ExitCode, r.Signal, r.PeakRSS>>20, r.TimedOut, r.Stdout, r.Stderr)
}
