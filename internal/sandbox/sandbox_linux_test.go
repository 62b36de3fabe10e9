package sandbox

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

func python(t *testing.T) string {
	t.Helper()
	p, err := exec.LookPath("python3")
	if err != nil {
		t.Skip("python3 not installed")
	}
	return p
}

func needSandbox(t *testing.T) {
	t.Helper()
	if err := Available(); err != nil {
		t.Skipf("no sandbox here: %v", err)
	}
}

// started is a sandbox whose server runs.
type started struct {
	starter *Starter
	stdin   io.WriteCloser
	sb      *Sandbox
	stdout  *bufio.Reader
	done    chan struct{}

	mu       sync.Mutex
	attempts []string
}

func start(t *testing.T, listen []string, args ...string) *started {
	t.Helper()
	return startMax(t, listen, 0, args...)
}

func startMax(t *testing.T, listen []string, maxProcs int, args ...string) *started {
	t.Helper()
	st := &started{done: make(chan struct{})}
	spec := &Spec{Path: python(t), Args: append([]string{"python3", "testdata/hostile.py"}, args...),
		Env: []string{"PATH=/usr/bin:/bin"}, Dir: ".", Listen: listen, MaxProcs: maxProcs,
		Attempt: func(a Attempt) {
			st.mu.Lock()
			st.attempts = append(st.attempts, a.Addr)
			st.mu.Unlock()
		}}
	starter := NewStarter()
	starter.ahead = false
	sb, err := starter.Start()
	if err != nil {
		t.Fatal(err)
	}
	inW, outR, errR := sb.Streams()
	go io.Copy(os.Stderr, errR)
	st.starter, st.sb, st.stdin, st.stdout = starter, sb, inW, bufio.NewReader(outR)
	if err := sb.Setup(spec, 10*time.Second); err != nil {
		syscall.Kill(sb.Pid(), syscall.SIGKILL)
		sb.Wait()
		t.Fatal(err)
	}
	t.Cleanup(func() {
		syscall.Kill(-sb.Pid(), syscall.SIGKILL)
		<-st.done
		sb.Close()
		inW.Close()
		outR.Close()
		starter.Close()
	})
	go func() { defer close(st.done); sb.Wait() }()
	return st
}

func (st *started) line(t *testing.T) string {
	t.Helper()
	l, err := st.stdout.ReadString('\n')
	if err != nil {
		t.Fatalf("server output: %v (%q)", err, l)
	}
	return strings.TrimSpace(l)
}

// listenHost opens a loopback listener outside any sandbox that answers
// every request with body.
func listenHost(t *testing.T, body string) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, body) })}
	go srv.Serve(l)
	t.Cleanup(func() { srv.Close() })
	return l.Addr().String()
}

// TestEgress: a server in the sandbox reaches the addresses it was given
// (served by the caller on the listeners passed out) and nothing else: not
// another loopback port of the machine (another run's fake), not an
// outside address. Each refused attempt is reported, in order.
func TestEgress(t *testing.T) {
	needSandbox(t)
	fake := listenHost(t, "host side of the fake: must not be reached directly")
	other := listenHost(t, "another run's fake")
	outside := "192.0.2.1:443" // TEST-NET-1: never routed
	st := start(t, []string{fake}, "egress", fake, other, outside, "[::1]:22")
	// The listener was open before the server started: its first connect
	// waits in the backlog until this serves it.
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, "fake") })}
	go srv.Serve(st.sb.Listeners()[0])
	t.Cleanup(func() { srv.Close() })
	var got map[string]string
	if err := json.Unmarshal([]byte(st.line(t)), &got); err != nil {
		t.Fatal(err)
	}
	if got[fake] != "ok fake" {
		t.Errorf("the fake's address: %q, want the sandbox's listener to answer", got[fake])
	}
	for _, a := range []string{other, outside, "[::1]:22"} {
		if !strings.HasPrefix(got[a], "error ") {
			t.Errorf("%s reached from the sandbox: %q", a, got[a])
		}
	}
	st.mu.Lock()
	defer st.mu.Unlock()
	want := []string{other, outside, "[::1]:22"}
	if !slices.Equal(st.attempts, want) {
		t.Errorf("journaled attempts %q, want %q", st.attempts, want)
	}
	if iso := st.sb.Isolation(); !iso.Namespaces || !iso.Seccomp {
		t.Errorf("isolation %+v", iso)
	}
}

// TestDialIsNotEgress: the caller's dials into the sandbox (made by the
// init, to a server's own port) are not the server's attempts: one before
// the server listens is refused, and journaled as nothing.
func TestDialIsNotEgress(t *testing.T) {
	needSandbox(t)
	addr := listenHost(t, "a port of the machine, taken for its number")
	_, port, _ := net.SplitHostPort(addr)
	st := start(t, nil, "listen", port)
	if _, err := st.sb.Dial(context.Background(), addr); err == nil {
		t.Fatal("dialled the server before it listens")
	}
	io.WriteString(st.stdin, "go\n")
	if got := st.line(t); got != "listening" {
		t.Fatalf("server said %q", got)
	}
	c, err := st.sb.Dial(context.Background(), addr)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(c)
	c.Close()
	if string(b) != "hello" {
		t.Errorf("the server inside answered %q (the machine's port has the same number)", b)
	}
	st.mu.Lock()
	defer st.mu.Unlock()
	if len(st.attempts) > 0 {
		t.Errorf("the caller's dials journaled as the server's attempts: %q", st.attempts)
	}
}

// TestForkBounded: a server that forks without end stops at the sandbox's
// process limit (a pids cgroup), and the cgroup goes with the sandbox.
func TestForkBounded(t *testing.T) {
	needSandbox(t)
	probe, err := newPidsCgroup(10)
	if err != nil {
		t.Skipf("no pids cgroup here: %v", err)
	}
	probe.remove()
	st := startMax(t, nil, 50, "fork", "200")
	n, err := strconv.Atoi(st.line(t))
	if err != nil {
		t.Fatal(err)
	}
	if iso := st.sb.Isolation(); iso.MaxProcs != 50 {
		t.Errorf("isolation %+v, want MaxProcs 50", iso)
	}
	if n <= 0 || n >= 50 {
		t.Errorf("%d forks succeeded under a limit of 50 processes", n)
	}
	dir := st.sb.cgroup.dir
	syscall.Kill(-st.sb.Pid(), syscall.SIGKILL)
	<-st.done
	st.sb.Close()
	st.starter.Close() // waits for the cgroup's removal
	if _, err := os.Stat(dir); err == nil {
		t.Errorf("cgroup %s left behind", dir)
	}
}

// TestDialCancelledKeepsOrder: a dial whose context ends before its reply
// does not leave that reply to the next dial (each dial reads its own):
// cancelled dials to a closed port, each followed by a dial to the
// listening server, which must connect every time.
func TestDialCancelledKeepsOrder(t *testing.T) {
	needSandbox(t)
	addr := listenHost(t, "a port of the machine, taken for its number")
	_, port, _ := net.SplitHostPort(addr)
	st := start(t, nil, "listen", port)
	io.WriteString(st.stdin, "go\n")
	if got := st.line(t); got != "listening" {
		t.Fatalf("server said %q", got)
	}
	cancelled, cancel := context.WithCancel(context.Background())
	cancel()
	for i := range 50 {
		st.sb.Dial(cancelled, "127.0.0.1:1")
		c, err := st.sb.Dial(context.Background(), addr)
		if err != nil {
			t.Fatalf("dial %d after a cancelled one: %v", i, err)
		}
		c.Close()
	}
}

// TestSetsidContained: a grandchild that left the server's session and
// process group dies with the server's init, and is gone once the init has
// been reaped.
func TestSetsidContained(t *testing.T) {
	needSandbox(t)
	pidfile := filepath.Join(t.TempDir(), "pid")
	st := start(t, nil, "setsid", pidfile)
	if got := st.line(t); got != "started" {
		t.Fatalf("server said %q", got)
	}
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(5 * time.Millisecond) {
		if _, err := os.Stat(pidfile); err == nil {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the grandchild did not start")
		}
	}
	if n := running(pidfile); n < 2 {
		t.Fatalf("%d processes hold %s in their argv, want the server and its grandchild", n, pidfile)
	}
	// What process.stop does last: SIGKILL the group, which the grandchild
	// has left.
	syscall.Kill(-st.sb.Pid(), syscall.SIGKILL)
	<-st.done
	if n := running(pidfile); n != 0 {
		t.Errorf("%d processes outlived the sandbox", n)
	}
}

// running counts the live processes whose argv holds marker.
func running(marker string) int {
	ents, _ := os.ReadDir("/proc")
	n := 0
	for _, e := range ents {
		if _, err := strconv.Atoi(e.Name()); err != nil {
			continue
		}
		b, err := os.ReadFile("/proc/" + e.Name() + "/cmdline")
		if err != nil || !strings.Contains(string(b), marker) {
			continue
		}
		st, _ := os.ReadFile("/proc/" + e.Name() + "/stat")
		if i := strings.LastIndexByte(string(st), ')'); i > 0 && len(st) > i+2 && st[i+2] != 'Z' {
			n++
		}
	}
	return n
}

// TestNoSecrets: a server looking for the caller's secret everywhere it
// can (its environment, its parent's /proc/PID/environ, every other
// /proc/*/environ and cmdline) finds none in the sandbox; the same server
// started plainly by the same caller finds it, so the test can fail.
func TestNoSecrets(t *testing.T) {
	needSandbox(t)
	py := python(t)
	for _, mode := range []string{"sandbox", "plain"} {
		// A caller with the secret in its initial environment, as bench
		// has its API keys: os.Setenv would not put it in /proc/self/environ.
		cmd := exec.Command(os.Args[0], "-test.run=^TestSecretCaller$")
		cmd.Env = append(os.Environ(), "BENCH_SANDBOX_TEST_CALLER="+mode, "BENCH_SANDBOX_TEST_KEY=sk-bench-secret-"+strconv.Itoa(os.Getpid()))
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("%s caller: %v\n%s", mode, err, out)
		}
		got := ""
		for _, l := range strings.Split(string(out), "\n") {
			if r, ok := strings.CutPrefix(l, "FOUND "); ok {
				got = r
			}
		}
		switch {
		case mode == "sandbox" && got != "[]":
			t.Errorf("in the sandbox the server found the caller's secret at %s", got)
		case mode == "plain" && !strings.Contains(got, "/proc/"):
			t.Errorf("started plainly, the server found the secret at %q, want the caller's /proc/PID/environ (is the test blind?)", got)
		}
	}
	_ = py
}

// TestSecretCaller is TestNoSecrets' caller, run as a process of its own.
func TestSecretCaller(t *testing.T) {
	mode := os.Getenv("BENCH_SANDBOX_TEST_CALLER")
	if mode == "" {
		t.Skip("run by TestNoSecrets")
	}
	if mode == "plain" {
		out, err := exec.Command(python(t), "testdata/hostile.py", "secrets", "sk-bench-secret-").Output()
		if err != nil {
			t.Fatal(err)
		}
		fmt.Printf("FOUND %s", out)
		return
	}
	if err := SetNonDumpable(); err != nil {
		t.Fatal(err)
	}
	st := start(t, nil, "secrets", "sk-bench-secret-")
	fmt.Printf("FOUND %s\n", st.line(t))
}

// TestSweepStaleCgroups: the cgroup a killed bench left (its pid gone, or
// a zombie its parent has not reaped) is removed when a sandbox starts;
// those of a live bench, this one included, stay.
func TestSweepStaleCgroups(t *testing.T) {
	parent, err := pidsParent()
	if err == nil {
		var probe *pidsCgroup
		if probe, err = newPidsCgroup(10); err == nil {
			probe.remove()
		}
	}
	if err != nil {
		t.Skipf("no pids cgroup here: %v", err)
	}
	zombie := exec.Command("/bin/true")
	if err := zombie.Start(); err != nil {
		t.Fatal(err)
	}
	// Waited for without being reaped (WNOWAIT): a zombie until the end.
	var info unix.Siginfo
	if err := unix.Waitid(unix.P_PID, zombie.Process.Pid, &info, unix.WEXITED|unix.WNOWAIT, nil); err != nil {
		t.Fatal(err)
	}
	if benchRuns(zombie.Process.Pid) {
		t.Fatal("a zombie counts as running")
	}
	gone := filepath.Join(parent, fmt.Sprintf("bench-sandbox-%d-1", 4194303))
	dead := filepath.Join(parent, fmt.Sprintf("bench-sandbox-%d-1", zombie.Process.Pid))
	mine := filepath.Join(parent, fmt.Sprintf("bench-sandbox-%d-999999", os.Getpid()))
	for _, d := range []string{gone, dead, mine} {
		if err := os.Mkdir(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	defer os.Remove(mine)
	sweep(parent)
	zombie.Wait()
	for _, d := range []string{gone, dead} {
		if _, err := os.Stat(d); err == nil {
			os.Remove(d)
			t.Errorf("%s not swept", d)
		}
	}
	if _, err := os.Stat(mine); err != nil {
		t.Errorf("a live bench's cgroup was swept")
	}
}

// TestAsAnotherUser runs this package's sandbox tests again as nobody
// (when the tests run as root and setpriv is there): a user who is not
// root makes the sandbox differently (its own ids mapped, two ambient
// capabilities for the init, dumpable while it starts one), and CI
// runners are such users.
func TestAsAnotherUser(t *testing.T) {
	if os.Getenv("BENCH_SANDBOX_AS_NOBODY") != "" {
		t.Skip("already nobody")
	}
	needSandbox(t)
	setpriv, err := exec.LookPath("setpriv")
	if os.Geteuid() != 0 || err != nil {
		t.Skip("needs root and setpriv")
	}
	dir, err := os.MkdirTemp("", "bench-sandbox-nobody-")
	if err != nil {
		t.Fatal(err)
	}
	defer os.RemoveAll(dir)
	self, err := os.ReadFile(os.Args[0])
	if err != nil {
		t.Fatal(err)
	}
	bin := filepath.Join(dir, "sandbox.test")
	script, err := os.ReadFile("testdata/hostile.py")
	if err != nil {
		t.Fatal(err)
	}
	must := func(err error) {
		if err != nil {
			t.Fatal(err)
		}
	}
	must(os.WriteFile(bin, self, 0o755))
	must(os.Mkdir(filepath.Join(dir, "testdata"), 0o755))
	must(os.WriteFile(filepath.Join(dir, "testdata", "hostile.py"), script, 0o644))
	must(os.Chmod(dir, 0o755))
	cmd := exec.Command(setpriv, "--reuid=65534", "--regid=65534", "--clear-groups", bin, "-test.v",
		"-test.run=^(TestEgress|TestDialIsNotEgress|TestSetsidContained|TestNoSecrets)$")
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "BENCH_SANDBOX_AS_NOBODY=1")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("as nobody: %v\n%s", err, out)
	}
	for _, name := range []string{"TestEgress", "TestDialIsNotEgress", "TestSetsidContained", "TestNoSecrets"} {
		if !strings.Contains(string(out), "--- PASS: "+name) {
			t.Errorf("as nobody, %s did not pass:\n%s", name, out)
		}
	}
}
