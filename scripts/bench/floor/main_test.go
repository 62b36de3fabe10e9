package main

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"github.com/mcpbench/bench/internal/sandbox"
)

const testProfile = `name: t
command: [server]
env: {CENTRAL_BASE_URL: "{central_url}"}
writes_env: {CENTRAL_WRITES: "1"}
adapter: {rename: {list_alerts: alerts}}
`

func write(t *testing.T, name, data string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(path, []byte(data), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// The floor sends a run's mcp.call events under the server's names, with
// their arguments, and skips what bench never sends the server.
func TestLoadCalls(t *testing.T) {
	prof := write(t, "p.yaml", testProfile)
	runs := write(t, "runs.json", `[{"ref": "golden/t/baseline/alerts-001/0", "run": {
	  "manifest": {"scenario": {"id": "alerts-001"}, "fixture": {"name": "site-a"}},
	  "events": [
	    {"kind": "mcp.tools", "tools": {"tools": []}},
	    {"kind": "mcp.call", "call": {"index": 0, "tool": "alerts", "arguments": {"site": "HQ"}}},
	    {"kind": "mcp.call", "call": {"index": 1, "tool": "nope", "arguments": {}, "invalid": "unknown tool"}},
	    {"kind": "mcp.call", "call": {"index": 2, "tool": "get_site"}},
	    {"kind": "mcp.call", "call": {"index": 3, "tool": "submit_result", "arguments": {"x": 1}}}
	  ]}}]`)
	_, got, err := load(runs, prof)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 1 {
		t.Fatalf("%d runs, want 1", len(got))
	}
	r := got[0]
	if r.fx == nil || r.writes || r.elicit != "approve" {
		t.Errorf("run: fixture %v, writes %t, elicit %q", r.fx, r.writes, r.elicit)
	}
	var calls []string
	for _, c := range r.calls {
		calls = append(calls, c.tool+" "+string(c.args))
	}
	if want := `list_alerts {"site":"HQ"}|get_site {}`; strings.Join(calls, "|") != want {
		t.Errorf("calls %q, want %q", strings.Join(calls, "|"), want)
	}
}

func TestLoadErrors(t *testing.T) {
	prof := write(t, "p.yaml", testProfile)
	for _, tc := range []struct{ input, want string }{
		{`{}`, "want the JSON array of bench traces show --json"},
		{`[]`, "no runs"},
		{`[{"ref": "r"}]`, `run 0 (r): no "run"`},
		{`[{"ref": "r", "run": {"manifest": {"scenario": {"id": "zzz"}}}}]`, `manifest.scenario.id "zzz" is not a scenario of the golden suite`},
		{`[{"ref": "r", "run": {"manifest": {"scenario": {"id": "alerts-001"}, "fixture": {"name": "campus"}}}}]`, `manifest.fixture.name "campus", but scenario alerts-001 now uses fixture`},
		{`[{"ref": "r", "run": {"manifest": {"scenario": {"id": "alerts-001"}, "fixture": {"name": "site-a"}}, "events": [{"kind": "mcp.call"}]}}]`, "events[0]: an mcp.call without call.tool"},
	} {
		_, _, err := load(write(t, "runs.json", tc.input), prof)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: error %v, want %q", tc.input, err, tc.want)
		}
	}
	if _, _, err := load(filepath.Join(t.TempDir(), "missing.json"), prof); err == nil || !strings.Contains(err.Error(), "--runs") {
		t.Errorf("missing file: %v", err)
	}
}

// The floor starts a server in bench's sandbox (--isolation kernel), sends
// a run's calls to it, and the fake serves them inside: the server reached
// the fake's API through the ports opened in its namespace. Then it stops
// the server and leaves no process behind.
func TestSandboxedServer(t *testing.T) {
	if err := sandbox.Available(); err != nil {
		t.Skip("no kernel sandbox here:", err)
	}
	bin := filepath.Join(t.TempDir(), "central-mcp")
	build := exec.Command("go", "build", "-o", bin, "./examples/central-mcp")
	build.Dir = filepath.Join("..", "..", "..")
	build.Env = append(os.Environ(), "CGO_ENABLED=0")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("building the reference server: %v\n%s", err, out)
	}
	ref, err := os.ReadFile(filepath.Join(build.Dir, "servers", "reference.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	prof := write(t, "reference.yaml", regexp.MustCompile(`(?m)^command:.*$`).ReplaceAllString(string(ref), `command: [`+strconv.Quote(bin)+`]`))
	runs := write(t, "runs.json", `[{"ref": "golden/reference/baseline/alerts-001/0", "run": {
	  "manifest": {"scenario": {"id": "alerts-001"}, "fixture": {"name": "site-a"}},
	  "events": [{"kind": "mcp.call", "call": {"index": 0, "tool": "list_alerts", "arguments": {}}}]}}]`)
	p, rs, err := load(runs, prof)
	if err != nil {
		t.Fatal(err)
	}
	f := &floor{p: p, starter: sandbox.NewStarter()}
	defer f.starter.Close()
	ctx := context.Background()
	s, err := f.start(ctx, rs[0])
	if err != nil {
		t.Fatal(err)
	}
	if err := s.send(ctx, rs[0]); err != nil {
		s.close()
		t.Fatal(err)
	}
	var paths []string
	for _, e := range s.fake.Journal() {
		paths = append(paths, e.Path)
	}
	pid := s.sb.Pid()
	s.close()
	if len(paths) == 0 {
		t.Errorf("the fake served no request for the call: the sandboxed server did not reach it")
	}
	if err := syscall.Kill(pid, 0); err == nil {
		t.Errorf("the sandbox's init (pid %d) still runs after close", pid)
	}
}
