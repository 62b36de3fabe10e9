package recorder

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/mcpbench/bench/internal/sandbox"
)

// DefaultStderrLimit bounds the tail of a server's stderr kept in a trace.
const DefaultStderrLimit = 16 << 10

// DefaultStopGrace is how long a server may take to exit after its stdin is
// closed, and again after SIGTERM, before the next step.
const DefaultStopGrace = 500 * time.Millisecond

// process is a server running as the leader of its own process group.
type process struct {
	pgid   int
	stdin  io.WriteCloser
	stdout io.ReadCloser
	stderr *tail
	done   chan struct{} // closed when the leader has exited and been reaped
	err    error         // the leader's exit status, valid after done
	grace  time.Duration
	// signalFirst skips the stdin step: a server on HTTP does not read
	// stdin, and waiting for it to notice would cost a grace period.
	signalFirst bool
	// sb is the sandbox the server runs in (the process is its init), or
	// nil under the proxy convention.
	sb *sandbox.Sandbox

	stopOnce sync.Once
}

// confine says how to start a server: in a sandbox (see internal/sandbox)
// or, with a nil confine, plainly.
type confine struct {
	starter *sandbox.Starter      // the recorder's, which keeps a sandbox started ahead
	listen  []string              // addresses opened inside and served by the fake
	attempt func(sandbox.Attempt) // a refused connect(2)
	serve   func([]net.Listener)  // serves the listeners once open
	timeout time.Duration         // for the sandbox's set-up
}

// stderrDelay bounds the copy of a server's stderr once its leader has
// exited: a descendant that left the group (setsid) and kept the server's
// stderr open would otherwise hold the wait, and so bench, for ever.
const stderrDelay = 2 * time.Second

// startProcess launches argv in dir with env, in a new process group, with
// pipes for stdin and stdout and stderr kept in a bounded tail; with a
// confine, in a sandbox whose init leads the group.
func startProcess(argv []string, dir string, env []string, stderrLimit int, grace time.Duration, cf *confine) (*process, error) {
	cmd := exec.Command(argv[0], argv[1:]...)
	p := &process{stderr: newTail(stderrLimit), done: make(chan struct{}), grace: grace}
	if cf != nil {
		// exec.Command resolved argv[0] on bench's PATH; the sandbox's
		// init runs exactly that file.
		if cmd.Err != nil {
			return nil, fmt.Errorf("starting %s: %w", strings.Join(argv, " "), cmd.Err)
		}
		if err := p.startSandboxed(&sandbox.Spec{Path: cmd.Path, Args: argv, Env: env, Dir: dir, Listen: cf.listen, Attempt: cf.attempt}, cf); err != nil {
			return nil, fmt.Errorf("starting %s: %w", strings.Join(argv, " "), err)
		}
		return p, nil
	}
	cmd.Dir = dir
	cmd.Env = env
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Stderr = p.stderr
	cmd.WaitDelay = stderrDelay
	var err error
	if p.stdin, err = cmd.StdinPipe(); err != nil {
		return nil, err
	}
	// Our own pipe, not StdoutPipe: Wait must not close the read end
	// before the last line the server wrote has been read.
	pr, pw, err := os.Pipe()
	if err != nil {
		return nil, err
	}
	cmd.Stdout = pw
	p.stdout = pr
	err = cmd.Start()
	pw.Close()
	if err != nil {
		pr.Close()
		return nil, fmt.Errorf("starting %s: %w", strings.Join(argv, " "), err)
	}
	p.pgid = cmd.Process.Pid
	go func() {
		p.err = cmd.Wait()
		close(p.done)
	}()
	return p, nil
}

// startSandboxed takes a started sandbox from the recorder's Starter (its
// init waiting, the server's streams its own pipes), starts the server in
// it and serves its listeners.
func (p *process) startSandboxed(spec *sandbox.Spec, cf *confine) error {
	sb, err := cf.starter.Start()
	if err != nil {
		return err
	}
	var stderr *os.File
	p.stdin, p.stdout, stderr = sb.Streams()
	p.sb, p.pgid = sb, sb.Pid()
	copied := make(chan struct{})
	go func() {
		io.Copy(p.stderr, stderr)
		close(copied)
	}()
	go func() {
		err := sb.Wait()
		t := time.NewTimer(stderrDelay)
		select {
		case <-copied:
		case <-t.C:
			stderr.Close()
			<-copied
			if err == nil {
				err = exec.ErrWaitDelay
			}
		}
		t.Stop()
		stderr.Close()
		p.err = err
		close(p.done)
	}()
	if err := sb.Setup(spec, cf.timeout); err != nil {
		p.kill()
		return err
	}
	cf.serve(sb.Listeners())
	return nil
}

// transport is base, dialling into the sandbox when the server runs in
// one (it listens on the sandbox's loopback, which bench cannot reach
// directly).
func (p *process) transport(base http.RoundTripper) http.RoundTripper {
	if p == nil || p.sb == nil {
		return base
	}
	t, ok := base.(*http.Transport)
	if !ok {
		t = http.DefaultTransport.(*http.Transport)
	}
	t = t.Clone()
	t.Proxy = nil
	sb := p.sb
	t.DialContext = func(ctx context.Context, network, addr string) (net.Conn, error) {
		return sb.Dial(ctx, addr)
	}
	return t
}

// sandboxNotes says what the process's sandbox has, in words, or nil.
func (p *process) sandboxNotes() []string {
	if p == nil || p.sb == nil {
		return nil
	}
	iso := p.sb.Isolation()
	var out []string
	if iso.MaxProcs > 0 {
		out = append(out, fmt.Sprintf("at most %d processes and threads", iso.MaxProcs))
	}
	return append(out, iso.Notes...)
}

// exited reports whether the leader has exited.
func (p *process) exited() bool {
	select {
	case <-p.done:
		return true
	default:
		return false
	}
}

// exitError describes how the leader exited, or "" while it runs.
func (p *process) exitStatus() string {
	if !p.exited() {
		return ""
	}
	if p.sb != nil {
		// The init's own status is the server's, but a signal that killed
		// the server only shows as an exit code there.
		switch st := p.sb.ExitStatus(); st {
		case "":
		case "exit status 0":
			return "exited with status 0"
		default:
			return st
		}
	}
	if p.err == nil {
		return "exited with status 0"
	}
	return p.err.Error()
}

// stop ends the server and everything in its process group: close stdin
// (a polite stdio server exits), wait grace, SIGTERM the group, wait grace,
// SIGKILL the group. The group is always SIGKILLed at the end, so helpers a
// server started (go run's child, node workers) never survive it. stop
// waits for the leader to be reaped.
func (p *process) stop() {
	p.stopOnce.Do(func() {
		p.stdin.Close()
		wait := func() bool {
			t := time.NewTimer(p.grace)
			defer t.Stop()
			select {
			case <-p.done:
				return true
			case <-t.C:
				return false
			}
		}
		if p.signalFirst || !wait() {
			syscall.Kill(-p.pgid, syscall.SIGTERM)
			if !wait() {
				syscall.Kill(-p.pgid, syscall.SIGKILL)
			}
		}
		// The leader is gone or going; clear the rest of its group.
		syscall.Kill(-p.pgid, syscall.SIGKILL)
		<-p.done
		p.stdout.Close()
		awaitGroupGone(p.pgid, 2*time.Second)
		if p.sb != nil {
			// The init was reaped: the kernel has killed and reaped every
			// process of its namespace, setsid'd ones too.
			p.sb.Close()
		}
	})
}

// awaitGroupGone waits, up to limit, until no process of group pgid is
// left: SIGKILL is delivered asynchronously, and a grandchild that has not
// died yet when stop returns would be a process left behind. Processes that
// have died but wait for init to reap them are gone for this purpose.
func awaitGroupGone(pgid int, limit time.Duration) {
	deadline := time.Now().Add(limit)
	for time.Now().Before(deadline) {
		if !groupAlive(pgid) {
			return
		}
		syscall.Kill(-pgid, syscall.SIGKILL)
		time.Sleep(time.Millisecond)
	}
}

// groupAlive reports whether a running (not zombie) process is in group pgid.
func groupAlive(pgid int) bool {
	if err := syscall.Kill(-pgid, 0); err != nil {
		return false // ESRCH: the group is empty
	}
	ents, err := os.ReadDir("/proc")
	if err != nil {
		return true // cannot tell: the signal above found someone
	}
	for _, e := range ents {
		b, err := os.ReadFile("/proc/" + e.Name() + "/stat")
		if err != nil {
			continue
		}
		// pid (comm) state ppid pgrp ...: comm may hold spaces, so parse
		// after the last ')'.
		s := string(b)
		i := strings.LastIndexByte(s, ')')
		if i < 0 {
			continue
		}
		f := strings.Fields(s[i+1:])
		if len(f) >= 3 && f[2] == strconv.Itoa(pgid) && f[0] != "Z" && f[0] != "X" {
			return true
		}
	}
	return false
}

// kill ends the group at once (start-up failure, cancellation).
func (p *process) kill() {
	syscall.Kill(-p.pgid, syscall.SIGKILL)
	p.stop()
}

// tail keeps the last limit bytes written to it.
type tail struct {
	mu      sync.Mutex
	limit   int
	buf     []byte
	dropped int64
}

func newTail(limit int) *tail {
	if limit <= 0 {
		limit = DefaultStderrLimit
	}
	return &tail{limit: limit}
}

func (t *tail) Write(b []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	n := len(b)
	if len(b) >= t.limit {
		t.dropped += int64(len(t.buf) + len(b) - t.limit)
		t.buf = append(t.buf[:0], b[len(b)-t.limit:]...)
		return n, nil
	}
	if over := len(t.buf) + len(b) - t.limit; over > 0 {
		t.dropped += int64(over)
		t.buf = append(t.buf[:0], t.buf[over:]...)
	}
	t.buf = append(t.buf, b...)
	return n, nil
}

// String returns the tail, with a note of how much was dropped before it.
func (t *tail) String() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.dropped > 0 {
		return fmt.Sprintf("[%d bytes dropped]\n%s", t.dropped, t.buf)
	}
	return string(t.buf)
}

// Reset forgets what was written (between runs on a reused server).
func (t *tail) Reset() {
	t.mu.Lock()
	t.buf, t.dropped = t.buf[:0], 0
	t.mu.Unlock()
}

// freePort asks the kernel for an unused loopback port.
func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

var errNotStarted = errors.New("server did not start")
