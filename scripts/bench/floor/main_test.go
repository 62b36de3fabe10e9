package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
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
