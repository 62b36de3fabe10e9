package main

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/mcpbench/bench/internal/testbin"
	"github.com/mcpbench/bench/recorder"
)

// TestHostileIsolation runs bench, under the memory cap of the hostile-
// input tests, against a server that tries every way out of issue 16's
// rows 6, 7, 8 and 11: a profile that names the caller's API key in its
// command, a server that reads every /proc/*/environ for it, that tries a
// loopback port of the machine, another run's fake and an outside address
// directly, and that leaves a grandchild in a session of its own. The key
// goes nowhere, only the fake and its proxy answer, every attempt is in
// the trace, and nothing outlives bench.
func TestHostileIsolation(t *testing.T) {
	if err := recorder.KernelIsolation(); err != nil {
		t.Skipf("no sandbox here: %v", err)
	}
	py, err := exec.LookPath("python3")
	if err != nil {
		t.Skip("python3 not installed")
	}
	bench := testbin.Build(t, "./cmd/bench")
	script, _ := filepath.Abs("../../recorder/testdata/escape/server.py")
	dir := t.TempDir()
	key := "sk-escape-" + strconv.Itoa(os.Getpid()) + "-0123456789abcdef"
	mark := "escape-" + strconv.FormatInt(time.Now().UnixNano(), 36)

	targets, stop, err := testbin.EscapeTargets()
	if err != nil {
		t.Fatal(err)
	}
	defer stop()
	write := func(name, body string) {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("leaky.yaml", fmt.Sprintf("name: leaky\nrepo: local\ncommand: [%q, %q, \"${OPENAI_API_KEY}\"]\n", py, script))
	write("escape.yaml", fmt.Sprintf(`name: escape
repo: local
command: [%q, %q]
env:
  ESCAPE_AT_START: "1"
  ESCAPE_MARK: %q
  ESCAPE_TARGETS: %q
`, py, script, mark, strings.Join(targets, " ")))
	run := func(args ...string) *testbin.Result {
		t.Helper()
		cmd := exec.Command(bench, append([]string{"--store", filepath.Join(dir, "store")}, args...)...)
		cmd.Dir = dir
		cmd.Env = append(os.Environ(), "OPENAI_API_KEY="+key)
		res, err := testbin.RunCapped(cmd, 2*time.Minute)
		if err != nil {
			t.Fatal(err)
		}
		t.Logf("bench %s: exit %d, peak RSS %d MB", strings.Join(args, " "), res.ExitCode, res.PeakRSS>>20)
		if res.PeakRSS >= testbin.PeakRSSLimit {
			t.Errorf("bench %s: peak RSS %d MB, over %d MB", args[0], res.PeakRSS>>20, testbin.PeakRSSLimit>>20)
		}
		if strings.Contains(string(res.Stdout)+string(res.Stderr), key) {
			t.Errorf("bench %s printed the caller's key:\n%s", args[0], res)
		}
		return res
	}

	// Row 6: the key never reaches the argv; the error names it.
	res := run("record", "--scenario", "alerts-001", "--server", "leaky.yaml", "--model", "baseline", "--runs", "1")
	if res.ExitCode != 2 || !strings.Contains(string(res.Stderr), "${OPENAI_API_KEY}, which servers may not see") {
		t.Errorf("a key in the command: want exit 2 naming it\n%s", res)
	}

	// Rows 7, 8, 11.
	res = run("record", "--scenario", "alerts-001", "--server", "escape.yaml", "--model", "baseline", "--runs", "1", "--isolation", "kernel")
	if res.ExitCode != 0 || !strings.Contains(string(res.Stdout), "recorded 1 of 1 runs") {
		t.Fatalf("record: %s", res)
	}
	res = run("traces", "show", "golden/escape/baseline/alerts-001/0", "--json")
	out := string(res.Stdout)
	if !strings.Contains(out, `"isolation": "kernel"`) {
		t.Errorf("the run does not say it had kernel isolation")
	}
	probe := ""
	if i := strings.Index(out, `probe: {`); i >= 0 {
		probe = out[i:]
		probe = probe[:strings.Index(probe, `}`)+1]
	}
	if !strings.Contains(probe, `\"fake\": \"ok HTTP/1.1 `) || !strings.Contains(probe, `\"proxy\": \"ok HTTP/1.1 403`) {
		t.Errorf("the fake and its proxy should answer; the server saw %s", probe)
	}
	if !strings.Contains(probe, `\"secrets\": \"none\"`) {
		t.Errorf("the server found the caller's key in some /proc/*/environ: %s", probe)
	}
	for _, a := range targets {
		if !strings.Contains(probe, fmt.Sprintf(`\"%s\": \"error `, a)) {
			t.Errorf("%s reached from the sandbox: %s", a, probe)
		}
		if !strings.Contains(out, fmt.Sprintf(`"host": %q`, a)) {
			t.Errorf("the attempt on %s is not journaled as egress", a)
		}
	}
	if t.Failed() {
		t.Logf("traces show:\n%s", out)
	}
	// Row 11: the grandchild that left the server's session is gone.
	if n := liveWithEnv("ESCAPE_MARK=" + mark); n > 0 {
		t.Errorf("%d processes of the server outlived bench", n)
	}
}

// liveWithEnv counts the live processes whose environment holds kv, and
// kills them.
func liveWithEnv(kv string) int {
	ents, _ := os.ReadDir("/proc")
	n := 0
	for _, e := range ents {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		env, err := os.ReadFile("/proc/" + e.Name() + "/environ")
		if err != nil || !strings.Contains(string(env), kv+"\x00") {
			continue
		}
		st, _ := os.ReadFile("/proc/" + e.Name() + "/stat")
		if i := strings.LastIndexByte(string(st), ')'); i > 0 && len(st) > i+2 && st[i+2] == 'Z' {
			continue
		}
		n++
		syscall.Kill(pid, syscall.SIGKILL)
	}
	return n
}
