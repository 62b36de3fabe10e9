package sandbox

import (
	"errors"
	"fmt"
	"net"
	"os"
	"sync"
	"syscall"

	"golang.org/x/sys/unix"
)

// Starter starts sandboxes, and keeps one started ahead: its init running
// in new namespaces and in its own pids cgroup, waiting for the spec of
// the server it will run. A start then costs its caller only the set-up
// (Setup); the clone, the init's own start-up and its move into the
// cgroup (a write the kernel makes wait for an RCU grace period, some
// milliseconds on a busy machine) are done while the caller does other
// work. A sandbox started ahead is used for one server only, as any other.
//
// Close stops the sandbox kept ahead and waits for the cgroups of closed
// sandboxes to be removed.
type Starter struct {
	mu      sync.Mutex
	ahead   bool          // keep one started ahead
	ready   *Sandbox      // started ahead, waiting for its spec
	filling chan struct{} // closed when the start ahead under way is done
	closed  bool

	cleanup sync.WaitGroup // removals of closed sandboxes' cgroups
}

// NewStarter returns a Starter. Nothing is started before the first
// Start.
func NewStarter() *Starter { return &Starter{ahead: true} }

// Start returns a sandbox whose init runs, waiting for Setup: the one
// started ahead, or a new one. It starts the next one ahead meanwhile.
func (st *Starter) Start() (*Sandbox, error) {
	st.mu.Lock()
	if st.closed {
		st.mu.Unlock()
		return nil, errors.New("sandbox: the starter is closed")
	}
	sb := st.ready
	st.ready = nil
	fill := st.ahead && st.filling == nil
	if fill {
		st.filling = make(chan struct{})
	}
	st.mu.Unlock()
	if fill {
		go st.fill()
	}
	if sb != nil {
		select {
		case <-sb.exited: // killed while it waited
			sb.discard()
		default:
			return sb, nil
		}
	}
	return st.start()
}

// fill starts the sandbox kept ahead.
func (st *Starter) fill() {
	sb, err := st.start()
	st.mu.Lock()
	done := st.filling
	st.filling = nil
	if err == nil && !st.closed && st.ready == nil {
		st.ready, sb = sb, nil
	}
	st.mu.Unlock()
	close(done)
	if sb != nil {
		sb.discard()
	}
}

// Close stops the sandbox kept ahead, and waits for the start ahead under
// way and for the removal of every closed sandbox's cgroup.
func (st *Starter) Close() {
	st.mu.Lock()
	st.closed = true
	filling := st.filling
	sb := st.ready
	st.ready = nil
	st.mu.Unlock()
	if filling != nil {
		<-filling // fill discards what it started
	}
	if sb != nil {
		sb.discard()
	}
	st.cleanup.Wait()
}

// start starts a sandbox's init now: through this process's spawner (see
// spawner_linux.go) or, where no spawner can be started, from here; then
// moves it into a pids cgroup of its own before it can start a server (it
// waits for Setup), so that every process of the sandbox is counted.
func (st *Starter) start() (_ *Sandbox, err error) {
	s := &Sandbox{starter: st, replies: make(chan ctlMsg, 1), readDone: make(chan struct{}), exited: make(chan struct{})}
	var theirs [3]*os.File // the init's ends of the streams
	defer func() {
		for _, f := range theirs {
			if f != nil {
				f.Close()
			}
		}
		if err != nil {
			for _, f := range s.streams {
				if f != nil {
					f.Close()
				}
			}
			if s.ctl != nil {
				s.ctl.Close()
			}
			if s.child != nil {
				s.child.Close()
			}
		}
	}()
	fds, err := unix.Socketpair(unix.AF_UNIX, unix.SOCK_SEQPACKET|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		return nil, fmt.Errorf("sandbox: control socket: %w", err)
	}
	mine := os.NewFile(uintptr(fds[0]), "sandbox-ctl")
	s.child = os.NewFile(uintptr(fds[1]), "sandbox-ctl-child")
	fc, err := net.FileConn(mine)
	mine.Close()
	if err != nil {
		return nil, fmt.Errorf("sandbox: control socket: %w", err)
	}
	s.ctl = fc.(*net.UnixConn)
	// stdin: the init reads, the caller writes; stdout and stderr the
	// other way.
	if theirs[0], s.streams[0], err = os.Pipe(); err != nil {
		return nil, err
	}
	if s.streams[1], theirs[1], err = os.Pipe(); err != nil {
		return nil, err
	}
	if s.streams[2], theirs[2], err = os.Pipe(); err != nil {
		return nil, err
	}

	var sp *spawner
	if useSpawner {
		sp, _ = theSpawner() // none: start the init from here
	}
	if sp != nil {
		var exit <-chan spawnMsg
		if s.initPid, exit, err = sp.spawn([4]*os.File{theirs[0], theirs[1], theirs[2], s.child}); err != nil {
			return nil, err
		}
		go func() {
			m := <-exit
			if m.Code != 0 {
				s.waitErr = errors.New(m.Exit)
			}
			close(s.exited)
		}()
	} else {
		self, err := os.Executable()
		if err != nil {
			return nil, fmt.Errorf("sandbox: cannot find this program to re-execute: %w", err)
		}
		cmd := initCommand(self, s.child)
		cmd.Stdin, cmd.Stdout, cmd.Stderr = theirs[0], theirs[1], theirs[2]
		if err := startClone(cmd); err != nil {
			return nil, err
		}
		s.initPid = cmd.Process.Pid
		go func() {
			s.waitErr = cmd.Wait()
			close(s.exited)
		}()
	}
	s.child.Close() // the init holds its copy

	cg, cerr := newPidsCgroup(DefaultMaxProcs)
	if cerr == nil {
		if cerr = cg.add(s.initPid); cerr != nil {
			cg.remove()
			cg = nil
		}
	}
	if cerr != nil {
		s.cgNote = "processes not bounded (" + cerr.Error() + ")"
	} else {
		s.cgroup = cg
		s.iso.MaxProcs = DefaultMaxProcs
	}
	return s, nil
}

// Streams are the caller's ends of the server's standard streams: stdin
// to write, stdout and stderr to read. The caller closes them.
func (s *Sandbox) Streams() (stdin, stdout, stderr *os.File) {
	return s.streams[0], s.streams[1], s.streams[2]
}

// discard ends a sandbox nobody took: kills its init, waits for it and
// releases everything, the streams included.
func (s *Sandbox) discard() {
	syscall.Kill(-s.initPid, syscall.SIGKILL)
	s.Wait()
	for _, f := range s.streams {
		f.Close()
	}
	s.Close()
}
