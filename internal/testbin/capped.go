package testbin

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strconv"
	"sync"
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

var capper struct {
	once sync.Once
	path string
	err  error
}

// RunCapped runs cmd (not yet started) under an address-space limit of
// MemoryCap bytes, kills it after timeout, and reports its exit and peak
// RSS. It runs cmd through the small program internal/testbin/capped,
// which sets the limit before cmd starts and measures cmd's own peak (see
// there why a test cannot measure it itself).
func RunCapped(cmd *exec.Cmd, timeout time.Duration) (*Result, error) {
	capper.once.Do(func() { capper.path, capper.err = build("./internal/testbin/capped") })
	if capper.err != nil {
		return nil, capper.err
	}
	pr, pw, err := os.Pipe()
	if err != nil {
		return nil, err
	}
	defer pr.Close()
	c := exec.Command(capper.path, append([]string{strconv.Itoa(MemoryCap), cmd.Path}, cmd.Args[1:]...)...)
	c.Dir, c.Env, c.Stdin = cmd.Dir, cmd.Env, cmd.Stdin
	var out, errb bytes.Buffer
	c.Stdout, c.Stderr = &out, &errb
	c.ExtraFiles = []*os.File{pw}
	c.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := c.Start(); err != nil {
		pw.Close()
		return nil, err
	}
	pw.Close()
	r := &Result{}
	timer := time.AfterFunc(timeout, func() {
		r.TimedOut = true
		syscall.Kill(-c.Process.Pid, syscall.SIGKILL)
	})
	rep, _ := io.ReadAll(pr)
	err = c.Wait()
	timer.Stop()
	r.Stdout, r.Stderr = out.Bytes(), errb.Bytes()
	var got struct {
		Exit    int    `json:"exit"`
		Signal  string `json:"signal"`
		MaxRSSK int64  `json:"maxrss_kb"`
	}
	if jerr := json.Unmarshal(rep, &got); jerr != nil {
		if r.TimedOut {
			r.ExitCode, r.Signal = -1, "killed"
			return r, nil
		}
		return nil, fmt.Errorf("%s: no report from the capper (%v): %v\n%s", cmd.Path, jerr, err, errb.Bytes())
	}
	r.ExitCode, r.Signal, r.PeakRSS = got.Exit, got.Signal, got.MaxRSSK<<10
	return r, nil
}

// String summarises r for a test failure.
func (r *Result) String() string {
	return fmt.Sprintf("exit %d signal %q peak RSS %d MB timed out %v\nstdout:\n%s\nstderr:\n%s",
		r.ExitCode, r.Signal, r.PeakRSS>>20, r.TimedOut, r.Stdout, r.Stderr)
}
