package sandbox

import (
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"os/signal"
	"runtime"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// runInit is the sandbox's process 1. Before its spec comes (a Starter
// starts it ahead of its server) it brings the loopback up, remounts /proc
// and installs the connect(2) notifier; then it reads the spec from the
// control socket (fd 3), opens the listeners, passes their descriptors and
// the notifier's back, and starts the server at once (the listeners queue
// what the server sends them, and a connect(2) waits for the caller's
// answer, until the caller serves them); then it makes the caller's dials,
// and exits with the server's status — at which the kernel kills whatever
// else is left in the namespace.
func runInit() int {
	// The caller signals the whole process group, which the server is in
	// too: the init only waits for it.
	c, err := stageConn("sandbox-ctl")
	if err != nil {
		return 125
	}
	fail := func(format string, args ...any) int {
		sendMsg(c, ctlMsg{Error: fmt.Sprintf(format, args...)})
		return 125
	}

	// What every sandbox needs, before its spec. A failure is told in
	// answer to the spec, where the caller waits for it.
	early := ""
	if err := loopbackUp(); err != nil {
		early = fmt.Sprintf("bringing the loopback up: %v", err)
	}
	var notes []string
	proc := false
	// Mounts only once / is private: nothing may propagate out.
	if err := unix.Mount("", "/", "", unix.MS_REC|unix.MS_PRIVATE, ""); err != nil {
		notes = append(notes, "no mounts of its own (making / private: "+err.Error()+"): the server sees the caller's processes, not their environment, and shares /dev/shm")
	} else {
		if err := mountProc(); err != nil {
			notes = append(notes, "/proc not remounted ("+err.Error()+"): the server sees the caller's processes, not their environment")
		} else {
			proc = true
		}
		if err := mountShm(); err != nil {
			notes = append(notes, "/dev/shm shared with the caller ("+err.Error()+")")
		}
	}
	nfd, nerr := -1, error(nil)
	if early == "" {
		if nfd, nerr = installNotifier(); nerr != nil {
			notes = append(notes, "connect(2) not journaled ("+nerr.Error()+"): refused attempts are still refused")
		} else {
			defer unix.Close(nfd)
		}
	}

	m, err := recvMsg(c, maxCtlMsg)
	if err != nil || m.Spec == nil {
		return fail("reading the spec: %v", err)
	}
	if early != "" {
		return fail("%s", early)
	}
	spec := m.Spec
	var fds []int
	for _, a := range spec.Listen {
		l, err := net.Listen("tcp", a)
		if err != nil {
			return fail("listening on %s: %v", a, err)
		}
		lf, err := l.(*net.TCPListener).File()
		l.Close()
		if err != nil {
			return fail("listening on %s: %v", a, err)
		}
		fds = append(fds, int(lf.Fd()))
		defer lf.Close()
	}
	seccomp := nfd >= 0
	if seccomp {
		fds = append(fds, nfd)
	}
	if err := sendMsg(c, ctlMsg{Proc: proc, Seccomp: seccomp, Notes: notes}, fds...); err != nil {
		return 125
	}

	cmd, err := startServer(spec)
	if err != nil {
		return fail("%v", err)
	}
	sendMsg(c, ctlMsg{Started: cmd.Process.Pid})
	go serveDials(c)
	err = cmd.Wait()
	st := cmd.ProcessState
	sendMsg(c, ctlMsg{Exit: st.String()})
	if ws, ok := st.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
		return 128 + int(ws.Signal())
	}
	if err != nil && st.ExitCode() < 0 {
		return 125
	}
	return st.ExitCode()
}

// stageConn is the socket a re-executed stage (the init, the spawner) is
// given as fd 3, with the signals a terminal or the caller sends its
// process group ignored: the caller ends the stage by other means.
func stageConn(name string) (*net.UnixConn, error) {
	f := os.NewFile(3, name)
	fc, err := net.FileConn(f)
	f.Close()
	if err != nil {
		fmt.Fprintf(os.Stderr, "bench %s: %v\n", name, err)
		return nil, err
	}
	signal.Ignore(syscall.SIGTERM, syscall.SIGINT, syscall.SIGHUP, syscall.SIGPIPE, syscall.SIGQUIT)
	return fc.(*net.UnixConn), nil
}

// startServer starts the server on a thread whose ambient capabilities are
// cleared (the init of a non-root caller holds two), so the server has
// only what its user has in the namespace.
func startServer(spec *Spec) (*exec.Cmd, error) {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	unix.Prctl(unix.PR_CAP_AMBIENT, unix.PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0)
	cmd := &exec.Cmd{Path: spec.Path, Args: spec.Args, Env: spec.Env, Dir: spec.Dir,
		Stdin: os.Stdin, Stdout: os.Stdout, Stderr: os.Stderr}
	if len(cmd.Args) == 0 {
		cmd.Args = []string{spec.Path}
	}
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("starting %s: %w", spec.Path, err)
	}
	return cmd, nil
}

// serveDials connects to loopback addresses inside for the caller, one at
// a time, and passes each connection back.
func serveDials(c *net.UnixConn) {
	for {
		m, err := recvMsg(c, 64<<10)
		if err != nil {
			return
		}
		if m.Dial == "" {
			continue
		}
		conn, err := dialInside(m.Dial)
		if err != nil {
			sendMsg(c, ctlMsg{Error: err.Error()})
			continue
		}
		cf, err := conn.File()
		conn.Close()
		if err != nil {
			sendMsg(c, ctlMsg{Error: err.Error()})
			continue
		}
		sendMsg(c, ctlMsg{}, int(cf.Fd()))
		cf.Close()
	}
}

func dialInside(addr string) (*net.TCPConn, error) {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return nil, err
	}
	if ip := net.ParseIP(host); host != "localhost" && (ip == nil || !ip.IsLoopback()) {
		return nil, fmt.Errorf("%s is not a loopback address", addr)
	}
	conn, err := net.DialTimeout("tcp", addr, 10*time.Second)
	if err != nil {
		return nil, err
	}
	return conn.(*net.TCPConn), nil
}

// loopbackUp sets IFF_UP on lo: a new network namespace has its loopback
// down.
func loopbackUp() error {
	fd, err := unix.Socket(unix.AF_INET, unix.SOCK_DGRAM|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		return err
	}
	defer unix.Close(fd)
	ifr, err := unix.NewIfreq("lo")
	if err != nil {
		return err
	}
	if err := unix.IoctlIfreq(fd, unix.SIOCGIFFLAGS, ifr); err != nil {
		return err
	}
	ifr.SetUint16(ifr.Uint16() | unix.IFF_UP)
	return unix.IoctlIfreq(fd, unix.SIOCSIFFLAGS, ifr)
}

// mountProc mounts a /proc of the new PID namespace over the old one, in
// the sandbox's own mount namespace.
func mountProc() error {
	if err := unix.Mount("proc", "/proc", "proc", unix.MS_NOSUID|unix.MS_NODEV|unix.MS_NOEXEC, ""); err != nil {
		if errors.Is(err, unix.EPERM) {
			return errors.New("the kernel refused a new proc mount here")
		}
		return err
	}
	return nil
}

// mountShm gives the sandbox a /dev/shm of its own: POSIX shared memory
// and semaphores (libfaketime's, named by a pid that every sandbox has)
// neither collide between sandboxes nor outlive this one; 256 MiB at most,
// so that a server cannot fill the machine's memory through it.
func mountShm() error {
	if fi, err := os.Stat("/dev/shm"); err != nil || !fi.IsDir() {
		return nil
	}
	return unix.Mount("tmpfs", "/dev/shm", "tmpfs", unix.MS_NOSUID|unix.MS_NODEV, "mode=1777,size=256m")
}
