package main

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/rogpeppe/go-internal/testscript"

	"github.com/mcpbench/bench/traces"

	"github.com/mcpbench/bench/internal/testbin"
	"github.com/mcpbench/bench/recorder"
)

// TestMain lets testscript run `bench` in-process: scripts under
// testdata/script call it like a user would.
func TestMain(m *testing.M) {
	testscript.Main(removingDirs{m}, map[string]func(){
		"bench": func() { os.Exit(run(os.Args[1:], os.Stdin, os.Stdout, os.Stderr)) },
	})
}

// sharedDirs are the directories tests share across the process (built
// binaries, a recorded fixture store), removed when the tests end.
var sharedDirs struct {
	sync.Mutex
	list []string
}

// sharedTempDir makes a directory that lives as long as the test process.
func sharedTempDir(prefix string) (string, error) {
	dir, err := os.MkdirTemp("", prefix)
	if err == nil {
		sharedDirs.Lock()
		sharedDirs.list = append(sharedDirs.list, dir)
		sharedDirs.Unlock()
	}
	return dir, err
}

// removingDirs runs the tests, then removes the shared directories.
type removingDirs struct{ m *testing.M }

func (r removingDirs) Run() int {
	code := r.m.Run()
	testbin.RemoveAll()
	sharedDirs.Lock()
	defer sharedDirs.Unlock()
	for _, d := range sharedDirs.list {
		os.RemoveAll(d)
	}
	return code
}

// TestScripts runs the end-to-end CLI scripts in testdata/script.
// Regenerate expected output with: go test ./cmd/bench -run TestScripts -update
func TestScripts(t *testing.T) {
	testscript.Run(t, testscript.Params{
		Dir:           "testdata/script",
		UpdateScripts: updateScripts,
		// $BENCH_REFERENCE_SERVER is bench's reference MCP server, built once:
		// a profile in a script runs it as command: ["${BENCH_REFERENCE_SERVER}"].
		// [netns] holds where `unshare -rn` makes a network namespace
		// (its loopback is down): scripts use it to take loopback away.
		// [sandbox] holds where servers run in bench's sandbox
		// (--isolation auto gives them kernel isolation).
		Condition: func(cond string) (bool, error) {
			switch cond {
			case "netns":
				return exec.Command("unshare", "-rn", "true").Run() == nil, nil
			case "sandbox":
				return recorder.KernelIsolation() == nil, nil
			case "pymcp":
				_, err := os.Stat(pythonMCP())
				return err == nil, nil
			}
			return false, fmt.Errorf("unknown condition %q", cond)
		},
		Setup: func(env *testscript.Env) error {
			env.Setenv("BENCH_REFERENCE_SERVER", referenceServer(t))
			env.Setenv("BENCH_PYTHON_MCP", pythonMCP())
			netdesk, err := filepath.Abs("testdata/pyserver/netdesk.py")
			env.Setenv("BENCH_NETDESK", netdesk)
			return err
		},
		Cmds: map[string]func(ts *testscript.TestScript, neg bool, args []string){
			"mkruns":       cmdMkruns,
			"corruptstore": cmdCorruptStore,
			"corruptrun":   cmdCorruptRun,
			"resumed":      cmdResumed,
		},
	})
}

var updateScripts = os.Getenv("UPDATE_SCRIPTS") != ""

// pythonMCP is the Python of the virtual environment holding the official
// MCP SDK (scripts/install-test-servers.sh, run by make test).
func pythonMCP() string {
	p, _ := filepath.Abs(filepath.Join("..", "..", ".cache", "pyvenv", "bin", "python"))
	return p
}

// mkruns STORE SCENARIOS RUNS stores synthetic runs, shaped like recorded
// ones, under golden/reference/baseline/<scenario>/<i>.
func cmdMkruns(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 3 {
		ts.Fatalf("usage: mkruns STORE SCENARIOS RUNS")
	}
	nsc, _ := strconv.Atoi(args[1])
	nruns, _ := strconv.Atoi(args[2])
	s, err := traces.Open(ts.MkAbs(args[0]), nil)
	ts.Check(err)
	defer s.Close()
	for sc := 0; sc < nsc; sc++ {
		for i := 0; i < nruns; i++ {
			run := syntheticRun(sc, i)
			ref := traces.RunRef("golden", "reference", "baseline", run.Manifest.Scenario.ID, i)
			_, err := s.PutRun(run, ref)
			ts.Check(err)
		}
	}
}

// corruptstore STORE flips one byte in the middle of the store's largest
// table file, as bit rot would.
func cmdCorruptStore(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 1 {
		ts.Fatalf("usage: corruptstore STORE")
	}
	files, _ := filepath.Glob(filepath.Join(ts.MkAbs(args[0]), "db", "*.sst"))
	if len(files) == 0 {
		ts.Fatalf("no table files in %s (run 'bench traces gc' first to flush)", args[0])
	}
	sort.Slice(files, func(i, j int) bool { return size(files[i]) > size(files[j]) })
	b, err := os.ReadFile(files[0])
	ts.Check(err)
	b[len(b)*2/3] ^= 0xff // past the first block, which holds the metadata keys
	ts.Check(os.WriteFile(files[0], b, 0o644))
}

func size(path string) int64 {
	fi, err := os.Stat(path)
	if err != nil {
		return 0
	}
	return fi.Size()
}

// syntheticRun builds a small deterministic run: tool list, two turns, one
// tool call with its HTTP calls, an answer.
func syntheticRun(scenario, index int) *traces.Run {
	tools := make([]map[string]any, 12)
	for i := range tools {
		tools[i] = map[string]any{
			"name":        fmt.Sprintf("central_tool_%02d", i),
			"description": fmt.Sprintf("Tool %d of the reference server: lists or reads one kind of Central object, with paging and filters for sites, devices and clients.", i),
			"inputSchema": map[string]any{"type": "object", "properties": map[string]any{"site": map[string]any{"type": "string"}}},
		}
	}
	toolsJSON, _ := traces.Marshal(tools)
	body, _ := traces.Marshal(map[string]any{"items": []any{map[string]any{"macAddr": "aa:bb:cc:00:00:01", "status": "Failed"}}, "total": 1, "next": nil})
	req := func(turn int) json.RawMessage {
		b, _ := traces.Marshal(map[string]any{"turn": turn, "tools": json.RawMessage(toolsJSON), "intent": fmt.Sprintf("scenario %d", scenario)})
		return b
	}
	return &traces.Run{
		Manifest: traces.Manifest{
			Format: traces.FormatVersion, Mode: traces.ModeRecord, Suite: "golden",
			Scenario: traces.ScenarioRef{ID: fmt.Sprintf("client-diagnosis-%03d", scenario+1)},
			Server:   traces.ServerRef{Name: "reference", Repo: "local"},
			Model:    traces.ModelRef{Provider: "baseline", Name: "baseline-bm25", Seed: 1},
			RunIndex: index, Fixture: traces.FixtureRef{Name: "site-a"},
			Harness: "test", Outcome: "answered",
			StartedAt: time.Date(2026, 11, 29, 12, 0, index, 0, time.UTC),
		},
		Events: []traces.Event{
			{Kind: traces.KindInitialize, AtUS: 1000, Initialize: &traces.Initialize{ProtocolVersion: "2025-11-25", ServerInfo: json.RawMessage(`{"name":"central-mcp","version":"0.1.0"}`)}},
			{Kind: traces.KindTools, AtUS: 2000, Tools: &traces.Tools{Tools: toolsJSON}},
			{Kind: traces.KindTurn, AtUS: 3000, Turn: &traces.Turn{Index: 0, Request: req(0), Response: json.RawMessage(`{"tool_calls":[{"arguments":{"site":"site-a"},"id":"call_1","name":"central_tool_01"}]}`), Usage: traces.Usage{Input: 1200, Output: 30}, LatencyUS: 400000}},
			{Kind: traces.KindHTTP, AtUS: 3500, HTTP: &traces.HTTP{Seq: 0, Method: "GET", Path: "/network-monitoring/v1/clients", Query: "site-id=1&limit=100", Status: 200, ResponseBody: body, Class: "read", LatencyUS: 800, Call: 0}},
			{Kind: traces.KindCall, AtUS: 4000, Call: &traces.Call{Index: 0, Tool: "central_tool_01", Arguments: json.RawMessage(`{"site":"site-a"}`), Result: body, LatencyUS: 2100}},
			{Kind: traces.KindTurn, AtUS: 5000, Turn: &traces.Turn{Index: 1, Request: req(1), Response: json.RawMessage(`{"text":"one failing client"}`), Usage: traces.Usage{Input: 1300, Output: 12}, LatencyUS: 350000}},
			{Kind: traces.KindAnswer, AtUS: 5100, Answer: &traces.Answer{Result: json.RawMessage(fmt.Sprintf(`{"failing":1,"run":%d}`, index))}},
		},
	}
}
