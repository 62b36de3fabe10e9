package sandbox

import (
	"os"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// TestEgressDirect runs TestEgress with the init started by this process
// itself, the way left where no spawner can be started.
func TestEgressDirect(t *testing.T) {
	defer func(v bool) { useSpawner = v }(useSpawner)
	useSpawner = false
	TestEgress(t)
}

// TestSpawnerStartsInits: a sandbox's init is the spawner's child, not
// this process's, and this process still learns how it exited.
func TestSpawnerStartsInits(t *testing.T) {
	needSandbox(t)
	st := start(t, nil, "listen", "1")
	sp, err := theSpawner()
	if err != nil {
		t.Fatal(err)
	}
	if ppid := parentOf(t, st.sb.Pid()); ppid != sp.cmd.Process.Pid {
		t.Errorf("the init's parent is %d, want the spawner %d (this process %d)", ppid, sp.cmd.Process.Pid, os.Getpid())
	}
	syscall.Kill(-st.sb.Pid(), syscall.SIGKILL)
	select {
	case <-st.done:
	case <-time.After(10 * time.Second):
		t.Fatal("the init's exit was not reported")
	}
	if err := st.sb.Wait(); err == nil || !strings.Contains(err.Error(), "killed") {
		t.Errorf("Wait: %v, want the init killed", err)
	}
}

// TestSpawnerDies: when the spawner dies, the inits it started die with it
// (their parent-death signal), each waiter hears so, and the next sandbox
// starts through a new spawner.
func TestSpawnerDies(t *testing.T) {
	needSandbox(t)
	st := start(t, nil, "listen", "1")
	sp, err := theSpawner()
	if err != nil {
		t.Fatal(err)
	}
	pidfd, err := unix.PidfdOpen(st.sb.Pid(), 0)
	if err != nil {
		t.Skipf("no pidfd here: %v", err)
	}
	defer unix.Close(pidfd)
	sp.cmd.Process.Kill()
	select {
	case <-st.done:
	case <-time.After(10 * time.Second):
		t.Fatal("the init's end was not reported")
	}
	// A pidfd polls readable once its process has exited.
	fds := []unix.PollFd{{Fd: int32(pidfd), Events: unix.POLLIN}}
	if n, err := unix.Poll(fds, 10_000); err != nil || n != 1 {
		t.Fatalf("the init (pid %d) outlived its spawner by 10 s (poll: %d, %v)", st.sb.Pid(), n, err)
	}
	st2 := start(t, nil, "listen", "1")
	sp2, err := theSpawner()
	if err != nil {
		t.Fatal(err)
	}
	if sp2 == sp {
		t.Fatal("the dead spawner was used again")
	}
	if ppid := parentOf(t, st2.sb.Pid()); ppid != sp2.cmd.Process.Pid {
		t.Errorf("the new init's parent is %d, want the new spawner %d", ppid, sp2.cmd.Process.Pid)
	}
}

// parentOf reads pid's parent from /proc.
func parentOf(t *testing.T, pid int) int {
	t.Helper()
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		t.Fatal(err)
	}
	s := string(b)
	f := strings.Fields(s[strings.LastIndexByte(s, ')')+1:])
	ppid, err := strconv.Atoi(f[1])
	if err != nil {
		t.Fatal(err)
	}
	return ppid
}

// TestStarterAhead: a Starter keeps one sandbox started ahead, whose init
// waits for its spec; the next Start takes it, and starts another ahead.
// One killed while it waited is not handed out. Close stops the one kept
// ahead and removes its cgroup.
func TestStarterAhead(t *testing.T) {
	needSandbox(t)
	st := NewStarter()
	defer st.Close()
	ahead := func() *Sandbox {
		t.Helper()
		st.mu.Lock()
		filling := st.filling
		st.mu.Unlock()
		if filling != nil {
			<-filling
		}
		st.mu.Lock()
		defer st.mu.Unlock()
		if st.ready == nil {
			t.Fatal("no sandbox started ahead")
		}
		return st.ready
	}
	first, err := st.Start()
	if err != nil {
		t.Fatal(err)
	}
	defer first.discard()
	next := ahead()
	got, err := st.Start()
	if err != nil {
		t.Fatal(err)
	}
	if got != next {
		t.Fatalf("Start returned pid %d, not the sandbox started ahead (pid %d)", got.Pid(), next.Pid())
	}
	// It runs a server like any other.
	in, out, errs := got.Streams()
	defer in.Close()
	defer out.Close()
	defer errs.Close()
	if err := got.Setup(&Spec{Path: "/bin/true", Args: []string{"true"}}, 10*time.Second); err != nil {
		t.Fatal(err)
	}
	if err := got.Wait(); err != nil {
		t.Errorf("the server in the sandbox started ahead: %v", err)
	}
	got.Close()

	killed := ahead()
	syscall.Kill(-killed.Pid(), syscall.SIGKILL)
	killed.Wait()
	again, err := st.Start()
	if err != nil {
		t.Fatal(err)
	}
	defer again.discard()
	if again == killed {
		t.Fatal("Start handed out a sandbox whose init was killed while it waited")
	}

	last := ahead()
	var dir string
	if last.cgroup != nil {
		dir = last.cgroup.dir
	}
	st.Close()
	select {
	case <-last.exited:
	default:
		t.Error("Close left the sandbox kept ahead running")
	}
	if dir != "" {
		if _, err := os.Stat(dir); err == nil {
			t.Errorf("Close left the cgroup %s of the sandbox kept ahead", dir)
		}
	}
	if _, err := st.Start(); err == nil {
		t.Error("Start after Close succeeded")
	}
}
