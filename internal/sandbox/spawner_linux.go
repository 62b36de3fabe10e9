package sandbox

import (
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

// The spawner is a small helper process, this binary run again once per
// caller, that clones every sandbox's init on the caller's behalf.
//
// Why: Go's os/exec clones with CLONE_VFORK|CLONE_VM unless the clone
// makes a user namespace (the child must wait for its id maps, which the
// parent writes after the clone; syscall/exec_linux.go). A sandbox's clone
// therefore copies the page tables of the process that makes it and marks
// its memory copy-on-write, and each page that process writes afterwards
// takes a fault: some 10 ms of CPU a start from a caller with a heap of
// tens of megabytes (BenchmarkStartCost), most of the cost of a fresh
// server. The spawner's heap is a few hundred kilobytes, so its clones are
// cheap, and the caller starts the spawner itself with a plain vfork.
//
// The protocol, on a SOCK_SEQPACKET socket (the spawner's fd 3): the
// caller sends {"id":N} with four descriptors (the init's stdin, stdout
// and stderr, and its end of the sandbox's control socket); the spawner
// answers {"id":N,"pid":P} or {"id":N,"error":...}, and once that init has
// exited and been reaped, {"id":N,"exit":"exit status 1","code":1}. The
// spawner exits when the caller closes its end; the inits it started are
// killed with it (their parent-death signal), and it with the caller.
// Everything else of a sandbox (its set-up, dials, the server's exit
// status) goes between the caller and the init on the control socket, as
// without a spawner.

// spawnMsg is one message between the caller and its spawner.
type spawnMsg struct {
	ID    uint64 `json:"id"`
	Pid   int    `json:"pid,omitempty"`
	Error string `json:"error,omitempty"`
	// Exit is how the init ended, as os.ProcessState.String says it, and
	// Code its exit code (-1 when a signal ended it); Exited says the
	// message is the exit one.
	Exited bool   `json:"exited,omitempty"`
	Exit   string `json:"exit,omitempty"`
	Code   int    `json:"code,omitempty"`
}

// spawnTimeout bounds the spawner's answer to one start: a clone and an
// exec, which take milliseconds. Past it the spawner is taken for broken,
// killed (and with it every init it started), and the start fails.
const spawnTimeout = 30 * time.Second

// useSpawner says whether sandboxes start through the spawner; tests and
// benchmarks of this package compare both ways.
var useSpawner = true

// runSpawner is the spawner's main.
func runSpawner() int {
	// The caller's terminal signals are the caller's to act on: it stops
	// its servers itself, then closes the socket.
	c, err := stageConn("sandbox-spawner")
	if err != nil {
		return 125
	}
	// As the caller: a server must not read or write this process's
	// memory through /proc (it runs outside the sandbox).
	SetNonDumpable()
	self, err := os.Executable()
	if err != nil {
		fmt.Fprintf(os.Stderr, "bench sandbox spawner: %v\n", err)
		return 125
	}
	var wmu sync.Mutex
	send := func(m spawnMsg) {
		wmu.Lock()
		defer wmu.Unlock()
		sendJSON(c, m)
	}
	for {
		var m spawnMsg
		fds, err := recvJSON(c, 4<<10, &m)
		if err != nil {
			return 0 // the caller is gone, or closed its end
		}
		if len(fds) != 4 {
			closeFDs(fds)
			send(spawnMsg{ID: m.ID, Error: fmt.Sprintf("a start needs 4 descriptors, got %d", len(fds))})
			continue
		}
		files := make([]*os.File, 4)
		for i, fd := range fds {
			files[i] = os.NewFile(uintptr(fd), "sandbox-init-stdio")
		}
		cmd := initCommand(self, files[3])
		cmd.Stdin, cmd.Stdout, cmd.Stderr = files[0], files[1], files[2]
		err = startClone(cmd)
		for _, f := range files {
			f.Close()
		}
		if err != nil {
			send(spawnMsg{ID: m.ID, Error: err.Error()})
			continue
		}
		send(spawnMsg{ID: m.ID, Pid: cmd.Process.Pid})
		go func(id uint64) {
			cmd.Wait()
			st := cmd.ProcessState
			send(spawnMsg{ID: id, Exited: true, Exit: st.String(), Code: st.ExitCode()})
		}(m.ID)
	}
}

// spawner is the caller's side of one spawner process.
type spawner struct {
	conn *net.UnixConn
	cmd  *exec.Cmd
	wmu  sync.Mutex // one message written at a time

	mu      sync.Mutex
	next    uint64
	started map[uint64]chan spawnMsg // the answer to a start
	exited  map[uint64]chan spawnMsg // the exit of a started init
	pids    map[uint64]int           // the pid of a started init
	err     error                    // set once the spawner is gone
}

var (
	spawnerMu sync.Mutex
	current   *spawner
)

// theSpawner returns this process's spawner, starting one the first time
// and again after one is gone.
func theSpawner() (*spawner, error) {
	spawnerMu.Lock()
	defer spawnerMu.Unlock()
	if current != nil && current.alive() {
		return current, nil
	}
	s, err := startSpawner()
	if err != nil {
		return nil, err
	}
	current = s
	return s, nil
}

func startSpawner() (*spawner, error) {
	self, err := os.Executable()
	if err != nil {
		return nil, fmt.Errorf("sandbox: cannot find this program to re-execute: %w", err)
	}
	fds, err := unix.Socketpair(unix.AF_UNIX, unix.SOCK_SEQPACKET|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		return nil, fmt.Errorf("sandbox: spawner socket: %w", err)
	}
	mine := os.NewFile(uintptr(fds[0]), "sandbox-spawner")
	theirs := os.NewFile(uintptr(fds[1]), "sandbox-spawner-child")
	defer theirs.Close()
	fc, err := net.FileConn(mine)
	mine.Close()
	if err != nil {
		return nil, fmt.Errorf("sandbox: spawner socket: %w", err)
	}
	cmd := exec.Command(self)
	cmd.Args = []string{"bench-sandbox-spawner"}
	cmd.Env = []string{stageEnv + "=spawner"}
	cmd.ExtraFiles = []*os.File{theirs}
	cmd.Stderr = os.Stderr // only a crash of the spawner itself writes here
	// Its own process group: a signal to the caller's (Ctrl-C) must not
	// kill the servers before the caller stops them. Killed if the caller
	// dies.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	if err := cmd.Start(); err != nil {
		fc.Close()
		return nil, fmt.Errorf("sandbox: starting the spawner: %w", err)
	}
	s := &spawner{conn: fc.(*net.UnixConn), cmd: cmd, started: map[uint64]chan spawnMsg{}, exited: map[uint64]chan spawnMsg{}, pids: map[uint64]int{}}
	go s.read()
	return s, nil
}

func (s *spawner) alive() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.err == nil
}

// read dispatches the spawner's answers until it is gone; then every init
// it started is gone too, and each waiter hears so.
func (s *spawner) read() {
	var err error
	for {
		var m spawnMsg
		var fds []int
		fds, err = recvJSON(s.conn, 4<<10, &m)
		closeFDs(fds) // the spawner passes none
		if err != nil {
			break
		}
		s.mu.Lock()
		var ch chan spawnMsg
		if m.Exited {
			ch = s.exited[m.ID]
			delete(s.exited, m.ID)
			delete(s.pids, m.ID)
		} else {
			ch = s.started[m.ID]
			delete(s.started, m.ID)
			if m.Error == "" {
				s.pids[m.ID] = m.Pid
			}
		}
		s.mu.Unlock()
		if ch != nil {
			ch <- m
		}
	}
	s.conn.Close()
	s.cmd.Process.Kill()
	werr := s.cmd.Wait()
	gone := fmt.Errorf("sandbox: the spawner is gone (%v; %v)", err, werr)
	s.mu.Lock()
	s.err = gone
	for id, ch := range s.started {
		ch <- spawnMsg{ID: id, Error: gone.Error()}
	}
	for id, ch := range s.exited {
		// Its init is killed with the spawner (parent-death signal); the
		// group is signalled here too, so that it is dying by the time its
		// waiter hears of it. Another process reaps it.
		if pid := s.pids[id]; pid > 0 {
			syscall.Kill(-pid, syscall.SIGKILL)
		}
		ch <- spawnMsg{ID: id, Exited: true, Exit: "signal: killed", Code: -1}
	}
	s.started, s.exited, s.pids = nil, nil, nil
	s.mu.Unlock()
}

// spawn starts an init with the given stdin, stdout, stderr and control
// socket end, and returns its pid and a channel that receives its exit.
func (s *spawner) spawn(files [4]*os.File) (int, <-chan spawnMsg, error) {
	st, ex := make(chan spawnMsg, 1), make(chan spawnMsg, 1)
	s.mu.Lock()
	if s.err != nil {
		err := s.err
		s.mu.Unlock()
		return 0, nil, err
	}
	s.next++
	id := s.next
	s.started[id], s.exited[id] = st, ex
	s.mu.Unlock()
	fds := make([]int, len(files))
	for i, f := range files {
		fds[i] = int(f.Fd())
	}
	s.wmu.Lock()
	err := sendJSON(s.conn, spawnMsg{ID: id}, fds...)
	s.wmu.Unlock()
	if err != nil {
		s.forget(id)
		return 0, nil, fmt.Errorf("sandbox: asking the spawner: %w", err)
	}
	t := time.NewTimer(spawnTimeout)
	defer t.Stop()
	select {
	case m := <-st:
		if m.Error != "" {
			s.forget(id)
			return 0, nil, errors.New(m.Error)
		}
		return m.Pid, ex, nil
	case <-t.C:
		// A spawner that does not answer is killed: read then fails every
		// start and wait, this one's included.
		s.cmd.Process.Kill()
		return 0, nil, fmt.Errorf("sandbox: the spawner did not answer in %v", spawnTimeout)
	}
}

func (s *spawner) forget(id uint64) {
	s.mu.Lock()
	if s.started != nil {
		delete(s.started, id)
		delete(s.exited, id)
		delete(s.pids, id)
	}
	s.mu.Unlock()
}
