package main

import (
	"bytes"
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/mcpbench/bench/traces"

	"github.com/mcpbench/bench/scoring"
)

var updateGolden = flag.Bool("update-golden", false, "rewrite cmd/bench/testdata/scoring golden files")

// The scoring test scenarios (read-001 and friends) stand in for the
// golden suite, so these tests do not move when the suite grows.
const testScenarios = "../../scoring/testdata/scenarios.yaml"

func goldenFile(t *testing.T, name string, got []byte) {
	t.Helper()
	path := filepath.Join("testdata", "scoring", name)
	if *updateGolden {
		os.MkdirAll(filepath.Dir(path), 0o755)
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test ./cmd/bench -run 'Diff|Report' -update-golden)", err)
	}
	if !bytes.Equal(want, got) {
		t.Errorf("%s differs (-want +got):\n%s", name, cmp.Diff(string(want), string(got)))
	}
}

// scoringRun builds a run of read-001: the correct solution, with extra
// list pages when pages > 0, and a canary leak when leak is set.
func scoringRun(server string, index, pages int, leak bool) *traces.Run {
	result := `{"ok":true}`
	if leak {
		result = `{"psk":"CANARY-PSK-7f3a9c2e51d4"}`
	}
	events := []traces.Event{
		{Kind: traces.KindTools, Tools: &traces.Tools{Tools: json.RawMessage(`[{"name":"get_client","inputSchema":{"type":"object"}}]`)}},
		{Kind: traces.KindTurn, Turn: &traces.Turn{Index: 0, Request: json.RawMessage(`{"tools":[{"name":"get_client"}]}`),
			Response: json.RawMessage(`{"tool_calls":[{"id":"1","name":"get_client","arguments":{"mac":"aa:bb:cc:11:22:33"}}]}`),
			Usage:    traces.Usage{Input: 1000, Output: 20}, LatencyUS: int64(500_000 + 10_000*index)}},
		{Kind: traces.KindCall, Call: &traces.Call{Index: 0, Tool: "get_client", Arguments: json.RawMessage(`{"mac":"aa:bb:cc:11:22:33"}`), Result: json.RawMessage(result), LatencyUS: 20_000}},
		{Kind: traces.KindHTTP, HTTP: &traces.HTTP{Seq: 0, Method: "GET", Path: "/network-monitoring/v1/clients/aa:bb:cc:11:22:33", Status: 200, Class: "read", Call: 0}},
	}
	for i := range pages {
		events = append(events, traces.Event{Kind: traces.KindHTTP, HTTP: &traces.HTTP{Seq: 1 + i, Method: "GET", Path: "/network-monitoring/v1/clients", Status: 200, Class: "read", Call: 0}})
	}
	events = append(events,
		traces.Event{Kind: traces.KindTurn, Turn: &traces.Turn{Index: 1, Request: json.RawMessage(`{}`), Response: json.RawMessage(`{"text":"done"}`), Usage: traces.Usage{Input: 1100, Output: 30}, LatencyUS: 400_000}},
		traces.Event{Kind: traces.KindAnswer, Answer: &traces.Answer{Result: json.RawMessage(`{"connected":true,"ap_serial":"CNAP0001"}`)}},
	)
	return &traces.Run{
		Manifest: traces.Manifest{
			Format: traces.FormatVersion, Mode: traces.ModeRecord, Suite: "test",
			Scenario: traces.ScenarioRef{ID: "read-001"},
			Server:   traces.ServerRef{Name: server, Repo: "github.com/example/" + server, SHA: "4a947a43aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"},
			Model:    traces.ModelRef{Provider: "baseline", Name: "baseline-bm25", Seed: 7},
			RunIndex: index, Fixture: traces.FixtureRef{Name: "site-a", Hash: "sha256:fixture"}, Harness: "bench test", Outcome: "answered",
		},
		Events: events,
	}
}

// scoringStore makes a store with three sides: base (correct), pages (two
// extra list pages per run) and leak.
func scoringStore(t *testing.T) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "store")
	s, err := traces.Open(dir, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	for i := range 5 { // the runs the methodology asks per scenario
		for _, side := range []struct {
			prefix string
			pages  int
			leak   bool
		}{{"base", 0, false}, {"pages", 2, false}, {"leak", 0, true}} {
			ref := side.prefix + "/reference/baseline-bm25/read-001/" + string(rune('0'+i))
			if _, err := s.PutRun(scoringRun("reference", i, side.pages, side.leak), ref); err != nil {
				t.Fatal(err)
			}
		}
		if _, err := s.PutRun(scoringRun("nowireless4u", i, 0, false), "base/nowireless4u/baseline-bm25/read-001/"+string(rune('0'+i))); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

func TestDiffSets(t *testing.T) {
	store := scoringStore(t)
	for _, format := range []string{"text", "md", "json"} {
		code, stdout, stderr := runBench(t, "--store", store, "diff", "base/reference/", "pages/", "--scenarios", testScenarios, "--format", format)
		if code != exitOK {
			t.Fatalf("diff --format %s: exit %d\n%s", format, code, stderr)
		}
		goldenFile(t, "diff_sets."+format, []byte(stdout))
	}
}

func TestDiffScenarioTurnByTurn(t *testing.T) {
	store := scoringStore(t)
	code, stdout, stderr := runBench(t, "--store", store, "diff", "base/reference/", "pages/", "--scenarios", testScenarios, "--scenario", "read-001")
	if code != exitOK {
		t.Fatalf("exit %d\n%s", code, stderr)
	}
	if !strings.Contains(stdout, ">>> first divergence at step 4") {
		t.Errorf("no divergence mark:\n%s", stdout)
	}
	goldenFile(t, "diff_scenario.txt", []byte(stdout))
}

func TestDiffReportFiles(t *testing.T) {
	store := scoringStore(t)
	dir := t.TempDir()
	for _, side := range []string{"base/reference/", "pages/"} {
		code, stdout, stderr := runBench(t, "--store", store, "report", "--from", side, "--scenarios", testScenarios, "--format", "json")
		if code != exitOK {
			t.Fatalf("report: exit %d\n%s", code, stderr)
		}
		os.WriteFile(filepath.Join(dir, strings.Trim(side, "/")[:4]+".json"), []byte(stdout), 0o644)
	}
	code, stdout, stderr := runBench(t, "diff", filepath.Join(dir, "base.json"), filepath.Join(dir, "page.json"))
	if code != exitOK {
		t.Fatalf("diff of reports: exit %d\n%s", code, stderr)
	}
	if !regexp.MustCompile(`read-001 +regressed +api_call_excess +0 +2 +regressed`).MatchString(stdout) {
		t.Errorf("report diff lacks the excess regression:\n%s", stdout)
	}
	// A report scored under another methodology is compared with a warning.
	old, _ := os.ReadFile(filepath.Join(dir, "base.json"))
	old = bytes.Replace(old, []byte(`"methodology": "`+scoring.MethodologyVersion+`"`), []byte(`"methodology": "0.9"`), 1)
	os.WriteFile(filepath.Join(dir, "old.json"), old, 0o644)
	code, _, stderr = runBench(t, "diff", filepath.Join(dir, "old.json"), filepath.Join(dir, "page.json"))
	if code != exitOK || !strings.Contains(stderr, "scored under methodology 0.9") {
		t.Errorf("exit %d, stderr %q", code, stderr)
	}
}

func TestDiffBadInput(t *testing.T) {
	store := scoringStore(t)
	for _, args := range [][]string{
		{"diff", "base/", "pages/", "--format", "yaml"},
		{"diff", "base/", "nothing-here/"},
		{"diff", "base/", "pages/", "--scenario", "no-such-scenario", "--scenarios", testScenarios},
		{"diff", "base/"},
	} {
		code, _, stderr := runBench(t, append([]string{"--store", store}, args...)...)
		if code != exitInvalidInput {
			t.Errorf("%v: exit %d, want %d\n%s", args, code, exitInvalidInput, stderr)
		}
	}
}
