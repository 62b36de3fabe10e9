package sandbox

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"sync"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// stageEnv names the variable that tells a re-executed binary which part
// of the sandbox it is. Nothing else of the caller's environment reaches
// the init.
const stageEnv = "BENCH_SANDBOX_STAGE"

func init() {
	switch os.Getenv(stageEnv) {
	case "init":
		os.Exit(runInit())
	case "probe":
		os.Exit(runProbe())
	case "spawner":
		os.Exit(runSpawner())
	}
}

// Spec is what to run in the sandbox.
type Spec struct {
	Path string   // the program, an absolute path (resolved by the caller)
	Args []string // argv, Args[0] included
	Env  []string
	Dir  string
	// Listen are loopback addresses ("127.0.0.1:port") opened inside the
	// sandbox before the server starts; Listeners returns them, in order,
	// for the caller to serve.
	Listen []string
	// Attempt, when set, is called for each connect(2) of the server's
	// processes to an address nothing in the sandbox listens on: the kernel
	// refuses it, and the caller journals it. It is called from one
	// goroutine, in the order of the attempts.
	Attempt func(Attempt) `json:"-"`
	// MaxProcs bounds the sandbox's processes and threads (a pids cgroup,
	// where this process may make one). Default DefaultMaxProcs.
	MaxProcs int `json:"-"`
}

// Attempt is a refused connection attempt.
type Attempt struct {
	Network string // tcp, tcp6, udp, udp6
	Addr    string // host:port as dialled
}

// Isolation says what a sandbox had.
type Isolation struct {
	Namespaces bool // user, PID, network and mount namespaces
	Proc       bool // /proc remounted for the new PID namespace
	Seccomp    bool // connect(2) journaled through a seccomp notifier
	MaxProcs   int  // the processes it may have (a pids cgroup), or 0: unbounded
	Notes      []string
}

// Sandbox is one started sandbox: a Starter started its init, Setup
// starts its server.
type Sandbox struct {
	starter *Starter
	spec    *Spec
	ctl     *net.UnixConn // bench's end of the control socket
	child   *os.File      // the init's end, passed as fd 3
	streams [3]*os.File   // the caller's ends of the server's stdin, stdout and stderr
	iso     Isolation
	lns     []net.Listener
	notify  *notifier

	dialMu   sync.Mutex
	replies  chan ctlMsg
	reading  bool
	readDone chan struct{}

	initPid int         // the init's pid, outside
	cgroup  *pidsCgroup // nil: none could be made
	cgNote  string
	exited  chan struct{} // closed once the init has exited and been reaped
	waitErr error         // how the init exited, as exec.Cmd.Wait says it; valid after exited

	mu     sync.Mutex
	status string // the server's exit status, as the init saw it
	closed bool
}

// ctlMsg is one message on the control socket, either way.
type ctlMsg struct {
	// bench -> init
	Spec *Spec  `json:"spec,omitempty"`
	Dial string `json:"dial,omitempty"`
	// init -> bench
	Proc    bool     `json:"proc,omitempty"`
	Seccomp bool     `json:"seccomp,omitempty"`
	Notes   []string `json:"notes,omitempty"`
	Started int      `json:"started,omitempty"`
	Exit    string   `json:"exit,omitempty"`
	Error   string   `json:"error,omitempty"`

	fds []int
}

var (
	probeOnce sync.Once
	probeErr  error
)

// runProbe is the probe's process 1: it does what an init must be able to
// do (bring the loopback up). A kernel may let a process make the
// namespaces and yet give it no capability in them (Ubuntu's AppArmor
// restriction of unprivileged user namespaces does): then no sandbox can
// work here, and Available says so.
func runProbe() int {
	if err := loopbackUp(); err != nil {
		fmt.Fprintf(os.Stderr, "the namespaces were made, but bringing their loopback up failed: %v\n", err)
		return 3
	}
	return 0
}

// Available reports whether this process can start sandboxes: nil, or why
// not. It starts one trivial sandbox the first time it is called, which
// brings its loopback up.
func Available() error {
	probeOnce.Do(func() {
		self, err := os.Executable()
		if err != nil {
			probeErr = fmt.Errorf("sandbox: cannot find this program to re-execute: %w", err)
			return
		}
		cmd := exec.Command(self)
		cmd.Args = []string{"bench-sandbox-probe"}
		cmd.Env = []string{stageEnv + "=probe"}
		cmd.SysProcAttr = sysProcAttr()
		if out, err := cmd.CombinedOutput(); err != nil {
			why := ""
			switch {
			case errors.Is(err, syscall.ENOSPC):
				why = " (no user namespace may be made: see /proc/sys/user/max_user_namespaces)"
			case errors.Is(err, syscall.EPERM), errors.Is(err, syscall.EACCES):
				why = " (not permitted here: user namespaces disabled, or a container's seccomp or AppArmor policy)"
			}
			probeErr = fmt.Errorf("sandbox: the kernel refused user, PID, network and mount namespaces%s: %v%s", why, err, trimOut(out))
		}
	})
	return probeErr
}

func trimOut(b []byte) string {
	if len(b) == 0 {
		return ""
	}
	if len(b) > 300 {
		b = b[:300]
	}
	return ": " + string(b)
}

// sysProcAttr is how the init is cloned: in new namespaces, in a process
// group of its own (the caller signals the group), killed if the caller
// dies.
func sysProcAttr() *syscall.SysProcAttr {
	uid, gid := os.Getuid(), os.Getgid()
	a := &syscall.SysProcAttr{
		Setpgid:    true,
		Pdeathsig:  syscall.SIGKILL,
		Cloneflags: syscall.CLONE_NEWUSER | syscall.CLONE_NEWPID | syscall.CLONE_NEWNET | syscall.CLONE_NEWNS,
	}
	if uid == 0 {
		// Root maps every id onto itself: files look exactly as outside,
		// and only the capabilities are confined to the namespaces.
		a.UidMappings = []syscall.SysProcIDMap{{ContainerID: 0, HostID: 0, Size: 1<<32 - 1}}
		a.GidMappings = []syscall.SysProcIDMap{{ContainerID: 0, HostID: 0, Size: 1<<32 - 1}}
		a.GidMappingsEnableSetgroups = true
	} else {
		// Anyone else keeps their own ids; the init gets the two
		// capabilities it needs inside (loopback up, /proc) as ambient
		// ones, and drops them before it starts the server.
		a.UidMappings = []syscall.SysProcIDMap{{ContainerID: uid, HostID: uid, Size: 1}}
		a.GidMappings = []syscall.SysProcIDMap{{ContainerID: gid, HostID: gid, Size: 1}}
		a.AmbientCaps = []uintptr{unix.CAP_SYS_ADMIN, unix.CAP_NET_ADMIN}
	}
	return a
}

// initCommand is the command that runs the sandbox's init, its end of the
// control socket as fd 3: this binary again, in new namespaces.
func initCommand(self string, ctl *os.File) *exec.Cmd {
	cmd := exec.Command(self)
	cmd.Args = []string{"bench-sandbox-init"}
	cmd.Env = []string{stageEnv + "=init"}
	cmd.ExtraFiles = []*os.File{ctl}
	cmd.SysProcAttr = sysProcAttr()
	return cmd
}

// startMu serialises the starts that make this process dumpable for a
// moment (see startClone).
var startMu sync.Mutex

// Pid is the init's pid (outside the sandbox), the leader of its process
// group.
func (s *Sandbox) Pid() int { return s.initPid }

// Wait waits until the init has exited and been reaped, and says how it
// exited as exec.Cmd.Wait does: nil for status 0.
func (s *Sandbox) Wait() error {
	<-s.exited
	return s.waitErr
}

// startClone starts cmd, whose clone makes the sandbox's namespaces. A process
// that is not root and made itself non-dumpable is dumpable again for the
// length of the start: the kernel lets it write the new user namespace's
// id maps (/proc/PID/uid_map of a child that inherited non-dumpability is
// root's) only then. Root maps ids with CAP_SETUID and stays non-dumpable.
func startClone(cmd *exec.Cmd) error {
	if os.Geteuid() == 0 {
		return cmd.Start()
	}
	startMu.Lock()
	defer startMu.Unlock()
	d, err := unix.PrctlRetInt(unix.PR_GET_DUMPABLE, 0, 0, 0, 0)
	if err != nil || d != 0 {
		return cmd.Start()
	}
	unix.Prctl(unix.PR_SET_DUMPABLE, 1, 0, 0, 0)
	defer unix.Prctl(unix.PR_SET_DUMPABLE, 0, 0, 0, 0)
	return cmd.Start()
}

// Setup sends spec to the started init and waits, up to timeout, until
// the server runs: the listeners are open and connect(2) is watched.
func (s *Sandbox) Setup(spec *Spec, timeout time.Duration) error {
	s.spec = spec
	if spec.MaxProcs > 0 && s.cgroup != nil && spec.MaxProcs != s.iso.MaxProcs {
		if err := s.cgroup.limit(spec.MaxProcs); err != nil {
			return fmt.Errorf("sandbox: %w", err)
		}
		s.iso.MaxProcs = spec.MaxProcs
	}
	s.ctl.SetDeadline(time.Now().Add(timeout))
	if err := s.send(ctlMsg{Spec: s.spec}); err != nil {
		return fmt.Errorf("sandbox: sending the server's spec: %w", err)
	}
	m, err := s.recv()
	if err != nil {
		return fmt.Errorf("sandbox: the init did not answer: %w", err)
	}
	if m.Error != "" {
		closeFDs(m.fds)
		return fmt.Errorf("sandbox: %s", m.Error)
	}
	want := len(s.spec.Listen)
	if m.Seccomp {
		want++
	}
	if len(m.fds) != want {
		closeFDs(m.fds)
		return fmt.Errorf("sandbox: the init passed %d descriptors, want %d", len(m.fds), want)
	}
	for i, fd := range m.fds[:len(s.spec.Listen)] {
		f := os.NewFile(uintptr(fd), "sandbox-listener")
		ln, err := net.FileListener(f)
		f.Close()
		if err != nil {
			closeFDs(m.fds[i+1:])
			return fmt.Errorf("sandbox: listener %s: %w", s.spec.Listen[i], err)
		}
		s.lns = append(s.lns, ln)
	}
	s.iso = Isolation{Namespaces: true, Proc: m.Proc, Seccomp: m.Seccomp, MaxProcs: s.iso.MaxProcs, Notes: m.Notes}
	if s.cgNote != "" {
		s.iso.Notes = append(s.iso.Notes, s.cgNote)
	}
	if m.Seccomp {
		s.notify = watch(m.fds[len(m.fds)-1], s.spec, s.initPid)
	}
	// The init has started the server meanwhile.
	m, err = s.recv()
	if err != nil {
		return fmt.Errorf("sandbox: the init did not start the server: %w", err)
	}
	if m.Error != "" {
		return errors.New(m.Error)
	}
	s.ctl.SetDeadline(time.Time{})
	s.reading = true
	go s.read()
	return nil
}

// read takes the init's messages after start-up: dial replies and, last,
// the server's exit status.
func (s *Sandbox) read() {
	defer close(s.readDone)
	for {
		m, err := s.recv()
		if err != nil {
			close(s.replies)
			return
		}
		if m.Exit != "" {
			s.mu.Lock()
			s.status = m.Exit
			s.mu.Unlock()
			continue
		}
		s.replies <- m
	}
}

// Listeners are the sockets opened inside for Spec.Listen, in its order.
func (s *Sandbox) Listeners() []net.Listener { return s.lns }

// Isolation says what this sandbox has.
func (s *Sandbox) Isolation() Isolation { return s.iso }

// ExitStatus is how the server exited, as its init saw it ("exit status
// 1", "signal: killed"), or "" when the init did not say (it was killed).
// Call it after the init was reaped: it waits until the init's last
// message has been read.
func (s *Sandbox) ExitStatus() string {
	if s.reading {
		<-s.readDone
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.status
}

// Dial connects to addr inside the sandbox (a server listening on its own
// loopback). Dials are made by the init, one at a time.
func (s *Sandbox) Dial(ctx context.Context, addr string) (net.Conn, error) {
	s.dialMu.Lock()
	if err := s.send(ctlMsg{Dial: addr}); err != nil {
		s.dialMu.Unlock()
		return nil, fmt.Errorf("dial %s in the sandbox: %w", addr, err)
	}
	var m ctlMsg
	var ok bool
	select {
	case m, ok = <-s.replies:
		s.dialMu.Unlock()
	case <-ctx.Done():
		// The reply still comes: take it, and only then let the next dial
		// send, so that it reads its own reply.
		go func() {
			if m, ok := <-s.replies; ok {
				closeFDs(m.fds)
			}
			s.dialMu.Unlock()
		}()
		return nil, ctx.Err()
	}
	if !ok {
		return nil, fmt.Errorf("dial %s in the sandbox: the sandbox is gone", addr)
	}
	if m.Error != "" {
		closeFDs(m.fds)
		return nil, fmt.Errorf("dial %s in the sandbox: %s", addr, m.Error)
	}
	if len(m.fds) != 1 {
		closeFDs(m.fds)
		return nil, fmt.Errorf("dial %s in the sandbox: no connection passed", addr)
	}
	f := os.NewFile(uintptr(m.fds[0]), "sandbox-conn")
	defer f.Close()
	return net.FileConn(f)
}

// Close releases the sandbox's descriptors after its init was reaped (not
// the streams: the caller closes those it took).
func (s *Sandbox) Close() {
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return
	}
	s.closed = true
	s.mu.Unlock()
	s.child.Close()
	s.ctl.Close()
	for _, l := range s.lns {
		l.Close()
	}
	if s.notify != nil {
		s.notify.close()
	}
	if s.cgroup != nil {
		// The kernel takes a millisecond or more to remove a cgroup: not
		// on the caller's path (its Starter waits for it in Close).
		s.starter.cleanup.Add(1)
		go func() {
			defer s.starter.cleanup.Done()
			s.cgroup.remove()
		}()
	}
}

const maxCtlMsg = 1 << 20

func (s *Sandbox) send(m ctlMsg) error {
	b, err := json.Marshal(m)
	if err != nil {
		return err
	}
	if len(b) > maxCtlMsg {
		return fmt.Errorf("control message of %d bytes is over %d", len(b), maxCtlMsg)
	}
	_, _, err = s.ctl.WriteMsgUnix(b, nil, nil)
	return err
}

func (s *Sandbox) recv() (ctlMsg, error) {
	return recvMsg(s.ctl, 64<<10)
}

// recvMsg reads one control message of at most size bytes, with the
// descriptors passed along.
func recvMsg(c *net.UnixConn, size int) (ctlMsg, error) {
	var m ctlMsg
	fds, err := recvJSON(c, size, &m)
	m.fds = fds
	return m, err
}

func sendMsg(c *net.UnixConn, m ctlMsg, fds ...int) error {
	return sendJSON(c, m, fds...)
}

// recvJSON reads one message of at most size bytes into v, and returns
// the descriptors passed along (none on error: they are closed).
func recvJSON(c *net.UnixConn, size int, v any) ([]int, error) {
	buf := make([]byte, size)
	oob := make([]byte, unix.CmsgSpace(16*4))
	n, oobn, flags, _, err := c.ReadMsgUnix(buf, oob)
	if err != nil {
		return nil, err
	}
	var fds []int
	if oobn > 0 {
		cms, err := unix.ParseSocketControlMessage(oob[:oobn])
		if err != nil {
			return nil, err
		}
		for i := range cms {
			f, err := unix.ParseUnixRights(&cms[i])
			if err == nil {
				fds = append(fds, f...)
			}
		}
	}
	if flags&(unix.MSG_TRUNC|unix.MSG_CTRUNC) != 0 {
		closeFDs(fds)
		return nil, errors.New("control message truncated")
	}
	if n == 0 {
		closeFDs(fds)
		return nil, errors.New("control socket closed")
	}
	if err := json.Unmarshal(buf[:n], v); err != nil {
		closeFDs(fds)
		return nil, fmt.Errorf("control message: %w", err)
	}
	return fds, nil
}

// sendJSON writes v as one message, passing fds along.
func sendJSON(c *net.UnixConn, v any, fds ...int) error {
	b, err := json.Marshal(v)
	if err != nil {
		return err
	}
	var oob []byte
	if len(fds) > 0 {
		oob = unix.UnixRights(fds...)
	}
	_, _, err = c.WriteMsgUnix(b, oob, nil)
	return err
}

func closeFDs(fds []int) {
	for _, fd := range fds {
		unix.Close(fd)
	}
}

// SetNonDumpable makes this process non-dumpable: its /proc entries
// (environ, mem, fd) are then owned by root and readable only with
// CAP_SYS_PTRACE in its user namespace, which a sandboxed server has not —
// and a server outside a sandbox running as another user has not either.
func SetNonDumpable() error {
	return unix.Prctl(unix.PR_SET_DUMPABLE, 0, 0, 0, 0)
}
