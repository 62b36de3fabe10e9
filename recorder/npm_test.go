package recorder

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/mcpbench/bench/llm"
	"github.com/mcpbench/bench/llm/baseline"
	"github.com/mcpbench/bench/scenarios"
	"github.com/mcpbench/bench/traces"
)

// npmServer returns the entry point of an npm MCP server installed by
// scripts/install-test-servers.sh, or skips the test saying how to get it.
func npmServer(t *testing.T, pkg string) (node, entry string) {
	t.Helper()
	node, err := exec.LookPath("node")
	if err != nil {
		t.Skip("Node.js is not installed: the tests against npm MCP servers need it")
	}
	entry, _ = filepath.Abs(filepath.Join("..", ".cache", "npm", "node_modules", "@modelcontextprotocol", pkg, "dist", "index.js"))
	if _, err := os.Stat(entry); err != nil {
		t.Skipf("@modelcontextprotocol/%s is not installed: run scripts/install-test-servers.sh", pkg)
	}
	return node, entry
}

func npmProfile(t *testing.T, name, transport string, argv ...string) *Profile {
	p := &Profile{Name: name, Transport: transport, Command: argv, StartTimeout: Duration(30 * time.Second)}
	if transport == TransportHTTP {
		p.Env = map[string]string{"PORT": "{port}"}
		p.URL = "http://127.0.0.1:{port}/mcp"
	}
	if err := p.fill(); err != nil {
		t.Fatal(err)
	}
	p.Dir = t.TempDir()
	return p
}

// TestNPMServers runs bench against MCP servers nobody here wrote: the
// server-everything (stdio and streamable HTTP) and server-filesystem npm
// packages, through Check and a run recorded with the baseline model.
func TestNPMServers(t *testing.T) {
	root := t.TempDir()
	os.WriteFile(filepath.Join(root, "notes.txt"), []byte("bench was here\n"), 0o644)
	cases := []struct {
		name, pkg, transport string
		args                 []string
		intent               string
		minTools             int
	}{
		{"everything-stdio", "server-everything", TransportStdio, []string{"stdio"}, "Get the sum of the numbers a=2 and b=40.", 10},
		{"everything-http", "server-everything", TransportHTTP, []string{"streamableHttp"}, "Get the sum of the numbers a=2 and b=40.", 10},
		{"filesystem", "server-filesystem", TransportStdio, []string{root}, "List the allowed directories.", 10},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			node, entry := npmServer(t, c.pkg)
			p := npmProfile(t, c.name, c.transport, append([]string{node, entry}, c.args...)...)
			rec := New(&Options{Environ: os.Environ(), PassEnv: []string{ownerVar}, StopGrace: 200 * time.Millisecond})
			defer rec.Close()
			res, err := rec.Check(context.Background(), p, "")
			if err != nil {
				t.Fatalf("check: %v", err)
			}
			if len(res.Tools) < c.minTools {
				t.Errorf("check lists %d tools, want at least %d", len(res.Tools), c.minTools)
			}
			if _, err := testTokens.MeasureTools(res.Tools); err != nil {
				t.Error(err)
			}
			sc := &scenarios.Scenario{Format: 1, ID: "npm-" + c.name, Suite: "alerts", Category: "edge", Intent: c.intent,
				Fixture: "site-a", WriteGate: scenarios.GateRead, ResultSchema: map[string]any{"type": "object"}}
			run, err := rec.Run(context.Background(), &Job{Suite: "npm", Scenario: sc, Profile: p, Model: baseline.New(nil)})
			if err != nil {
				t.Fatal(err)
			}
			if run.Manifest.Outcome == traces.OutcomeError || len(kinds(run, traces.KindError)) > 0 {
				t.Errorf("outcome %s: %s", run.Manifest.Outcome, summary(run))
			}
			called := false
			for _, e := range kinds(run, traces.KindCall) {
				called = called || e.Call.Tool != llm.SubmitTool && e.Call.Invalid == ""
				t.Logf("call %s %s invalid=%q result=%s", e.Call.Tool, e.Call.Arguments, e.Call.Invalid, llm.Truncate(string(e.Call.Result), 300))
			}
			if !called {
				t.Errorf("the baseline called no server tool: %s", summary(run))
			}
			if _, err := traces.Marshal(run); err != nil {
				t.Errorf("the run does not encode: %v", err)
			}
			rec.Close()
			checkNoCmdline(t, entry) // server-everything ignores stdin close: it needs the signals
		})
	}
}
