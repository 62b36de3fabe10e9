package recorder

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"

	"github.com/mcpbench/bench/internal/testbin"
)

// Helper binaries are built once per test binary, on first use.
var (
	buildOnce sync.Once
	binDir    string
	buildErr  error
)

// ownerVar marks the processes this test binary starts (children inherit
// it through Options.Environ), so that leftover checks by command line do
// not mistake another package's test servers, running in parallel under
// `go test ./...`, for ours.
const ownerVar = "BENCH_RECORDER_TEST_OWNER"

func TestMain(m *testing.M) {
	os.Setenv(ownerVar, strconv.Itoa(os.Getpid()))
	code := m.Run()
	if binDir != "" {
		os.RemoveAll(binDir)
	}
	testbin.RemoveAll()
	os.Exit(code)
}

// helperBin returns the path of a helper built from the module: "hostile"
// (testdata/hostile) or "central-mcp" (the reference server).
func helperBin(t *testing.T, name string) string {
	t.Helper()
	buildOnce.Do(func() {
		binDir, buildErr = os.MkdirTemp("", "recorder-bins-")
		if buildErr != nil {
			return
		}
		cmd := exec.Command("go", "build", "-o", binDir+string(filepath.Separator),
			"./recorder/testdata/hostile", "./examples/central-mcp")
		cmd.Dir = ".."
		cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
		var out bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &out
		if err := cmd.Run(); err != nil {
			buildErr = fmt.Errorf("building helpers: %v\n%s", err, out.String())
		}
	})
	if buildErr != nil {
		t.Fatal(buildErr)
	}
	return filepath.Join(binDir, name)
}

// alive reports whether pid is a running process (zombies count as gone:
// they have exited and only wait to be reaped by init).
func alive(pid int) bool {
	if err := syscall.Kill(pid, 0); err != nil {
		return false
	}
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return false
	}
	s := string(b)
	if i := strings.LastIndexByte(s, ')'); i >= 0 && i+2 < len(s) {
		return s[i+2] != 'Z'
	}
	return true
}

// pids reads a pid file written by the hostile server.
func pids(t *testing.T, file string) []int {
	t.Helper()
	b, err := os.ReadFile(file)
	if os.IsNotExist(err) {
		return nil
	}
	if err != nil {
		t.Fatal(err)
	}
	var out []int
	for _, f := range strings.Fields(string(b)) {
		n, err := strconv.Atoi(f)
		if err != nil {
			t.Fatalf("pid file %s: %v", file, err)
		}
		out = append(out, n)
	}
	return out
}

// checkNoLeftovers fails the test if any process the hostile server
// started runs: it looks for the pid file's variable in the environment of
// every live process, as the pids in the file are the server's own, in its
// sandbox's PID namespace when it has one.
func checkNoLeftovers(t *testing.T, file string) {
	t.Helper()
	mark := []byte("HOSTILE_PIDFILE=" + file + "\x00")
	ents, _ := os.ReadDir("/proc")
	for _, e := range ents {
		pid, err := strconv.Atoi(e.Name())
		if err != nil || !alive(pid) {
			continue
		}
		env, err := os.ReadFile(filepath.Join("/proc", e.Name(), "environ"))
		if err == nil && bytes.Contains(env, mark) {
			syscall.Kill(pid, syscall.SIGKILL)
			t.Errorf("process %d survived the run", pid)
		}
	}
}

// checkNoCmdline fails if a live process's command line contains s (for
// servers run by an interpreter, such as node ENTRY).
func checkNoCmdline(t *testing.T, s string) {
	t.Helper()
	ents, _ := os.ReadDir("/proc")
	for _, e := range ents {
		b, err := os.ReadFile(filepath.Join("/proc", e.Name(), "cmdline"))
		if err != nil || !bytes.Contains(b, []byte(s)) {
			continue
		}
		var pid int
		fmt.Sscan(e.Name(), &pid)
		env, err := os.ReadFile(filepath.Join("/proc", e.Name(), "environ"))
		if err == nil && !bytes.Contains(env, []byte(ownerVar+"="+strconv.Itoa(os.Getpid())+"\x00")) {
			continue // another test binary's process
		}
		if pid != os.Getpid() && alive(pid) {
			t.Errorf("process %d (%s) survived", pid, bytes.ReplaceAll(b, []byte{0}, []byte{' '}))
		}
	}
}
