package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/mcpbench/bench/scenarios"
	"github.com/mcpbench/bench/scoring"
)

// The 0.1.0 head-to-head under the current methodology: its runs are kept
// in docs/benchmark-results-0.1.0.benchpack (recorded at 4e96cf9 with the
// baseline model, 5 runs per scenario, as .github/workflows/head-to-head.yml
// records), and its page is the one bench report --release writes from
// them, byte for byte. On every suite of it the page, the JSON report and
// the gate show the same numbers (issue 17: the methodology's "the harness,
// the CI gate, and the published results page consume them verbatim").
//
// After a change of the scoring or of the golden scenarios, regenerate the
// page with go test ./cmd/bench -run TestRelease010 -update-golden.
func TestRelease010AgreesEverywhere(t *testing.T) {
	release := "0.1.0-m" + scoring.MethodologyVersion // a page per methodology version
	docs := filepath.Join("..", "..", "docs")
	pack := filepath.Join(docs, "benchmark-results-0.1.0.benchpack")
	store := filepath.Join(t.TempDir(), "store")
	if code, _, stderr := runBench(t, "--store", store, "traces", "import", pack); code != exitOK {
		t.Fatalf("import %s: exit %d\n%s", pack, code, stderr)
	}
	out := t.TempDir()
	if code, _, stderr := runBench(t, "--store", store, "report", "--release", release, "--from", "golden/", "--out-dir", out); code != exitOK {
		t.Fatalf("report --release: exit %d\n%s", code, stderr)
	}
	base := "benchmark-results-" + release
	files := map[string][]byte{}
	for _, ext := range []string{".md", ".json", ".svg"} {
		got, err := os.ReadFile(filepath.Join(out, base+ext))
		if err != nil {
			t.Fatal(err)
		}
		files[ext] = got
		path := filepath.Join(docs, base+ext)
		if *updateGolden {
			if err := os.WriteFile(path, got, 0o644); err != nil {
				t.Fatal(err)
			}
			continue
		}
		want, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(want, got) {
			t.Errorf("%s is not what bench report --release writes from its pack (-want +got):\n%s", path, cmp.Diff(string(want), string(got)))
		}
	}

	rep, err := scoring.ReadReport(bytes.NewReader(files[".json"]))
	if err != nil {
		t.Fatal(err)
	}
	if rep.Methodology != scoring.MethodologyVersion || !strings.Contains(string(files[".md"]), "Methodology version **"+scoring.MethodologyVersion+"**") {
		t.Errorf("the page does not say it used methodology %s", scoring.MethodologyVersion)
	}
	board := scoreboard(t, string(files[".md"]))
	checked := 0
	for _, s := range rep.Results.Suites {
		cells := board[s.Suite]
		if cells == nil {
			t.Errorf("no scoreboard for suite %s", s.Suite)
			continue
		}
		cell := func(label string) string { return cells[label][s.Server] }
		want := map[string]string{"safety_failure": "pass (0)", "scenarios (absent)": fmt.Sprintf("%d (%d)", s.Scenarios, s.Absent)}
		if s.Failed {
			want["safety_failure"] = fmt.Sprintf("**FAILED** (%d run(s))", s.SafetyFailures)
		}
		if s.Scenarios > 0 {
			want["task_success (rate)"] = fmt.Sprintf("%.0f%%", 100*s.TaskSuccessRate)
			want["tool_selection_accuracy"] = fmt.Sprintf("%.0f%%", 100*s.ToolSelectionRate)
			want["param_acc"] = fmt.Sprintf("%.0f%%", 100*s.ParamAcc)
			want["param_field_acc"] = fmt.Sprintf("%.0f%%", 100*s.ParamFieldAcc)
			want["token_usage mean / p95"] = fmt.Sprintf("%.0f / %.0f", s.Tokens.Mean, s.Tokens.P95)
			want["avg_turns"] = fmt.Sprintf("%.2f", s.AvgTurns)
			want["invalid_call_rate"] = fmt.Sprintf("%.3f", s.InvalidCallRate)
			want["api_call_excess"] = fmt.Sprintf("%.2f", s.APICallExcess)
		}
		for label, v := range want {
			if got := cell(label); got != v {
				t.Errorf("%s/%s %s: page %q, JSON report %q", s.Server, s.Suite, label, got, v)
			}
		}
		checked++
	}
	if checked < 4*9 {
		t.Errorf("checked %d suites, want the 9 suites and all of 4 servers", checked)
	}

	// The gate reads the same figures: core's floors, as bench replay
	// --stage core applies them, name the page's numbers.
	g, err := scoring.ParseGate("core", nil)
	if err != nil {
		t.Fatal(err)
	}
	v := scoring.Evaluate(g, rep.Results, nil)
	floors := regexp.MustCompile(`^(\S+): (task_success_rate|tool_selection_accuracy) ([0-9.]+) < `)
	seen := 0
	for _, reason := range v.Reasons {
		m := floors.FindStringSubmatch(reason)
		if m == nil {
			continue
		}
		all := rep.Results.Suite(m[1], scoring.AllSuites)
		fig := all.TaskSuccessRate
		label := "task_success (rate)"
		if m[2] == "tool_selection_accuracy" {
			fig, label = all.ToolSelectionRate, "tool_selection_accuracy"
		}
		if m[3] != fmt.Sprintf("%.3f", fig) || board[scoring.AllSuites][label][m[1]] != fmt.Sprintf("%.0f%%", 100*fig) {
			t.Errorf("gate: %q; JSON %v, page %q", reason, fig, board[scoring.AllSuites][label][m[1]])
		}
		seen++
	}
	if seen != 8 { // the baseline model misses both floors on every server
		t.Errorf("gate reasons %q: want both core floors missed by each of 4 servers", v.Reasons)
	}
}

// scoreboard parses a results page's scoreboard: suite -> row label ->
// server -> cell.
func scoreboard(t *testing.T, page string) map[string]map[string]map[string]string {
	t.Helper()
	out := map[string]map[string]map[string]string{}
	board := page[strings.Index(page, "## Scoreboard"):]
	board = board[:strings.Index(board, "## Per scenario")]
	for _, sec := range strings.Split(board, "\n### ")[1:] {
		lines := strings.Split(sec, "\n")
		suite := lines[0]
		var servers []string
		rows := map[string]map[string]string{}
		for _, l := range lines[1:] {
			if !strings.HasPrefix(l, "| ") || strings.HasPrefix(l, "|---") {
				continue
			}
			cells := strings.Split(strings.Trim(l, "| "), " | ")
			if cells[0] == "metric" {
				servers = cells[1:]
				continue
			}
			rows[cells[0]] = map[string]string{}
			for i, s := range servers {
				rows[cells[0]][s] = cells[i+1]
			}
		}
		out[suite] = rows
	}
	return out
}

// Methodology 1.5 judges the servers a scenario leaves out from the API
// layer and adds API parameters; the scenario × server pairs a scenario
// judges by the server's expected tools must come out of the 0.1.0 runs
// exactly as 1.4 scored them. Every other difference is a pair a scenario
// leaves out (docs/methodology.md, 1.5), or a pair whose parameter rules
// were corrected since (testdata/release/params-fixed-after-1.5.txt),
// where only the parameter metrics may move.
func TestRelease010ToolsLayerAsUnder14(t *testing.T) {
	golden, err := scenarios.Golden()
	if err != nil {
		t.Fatal(err)
	}
	byID := map[string]*scenarios.Scenario{}
	for _, s := range golden {
		byID[s.ID] = s
	}
	read := func(version string) map[string]json.RawMessage {
		t.Helper()
		data, err := os.ReadFile(filepath.Join("..", "..", "docs", "benchmark-results-0.1.0-m"+version+".json"))
		if err != nil {
			t.Fatal(err)
		}
		var doc struct {
			Results struct {
				Scenarios []json.RawMessage `json:"scenarios"`
			} `json:"results"`
		}
		if err := json.Unmarshal(data, &doc); err != nil {
			t.Fatal(err)
		}
		out := map[string]json.RawMessage{}
		for _, raw := range doc.Results.Scenarios {
			var k struct{ Scenario, Server string }
			if err := json.Unmarshal(raw, &k); err != nil {
				t.Fatal(err)
			}
			out[k.Server+"/"+k.Scenario] = raw
		}
		return out
	}
	before, after := read("1.4"), read(scoring.MethodologyVersion)
	fixed := paramsFixedAfter15(t)
	same, leftOut := 0, 0
	for key, b := range before {
		server, id, _ := strings.Cut(key, "/")
		sc := byID[id]
		if sc == nil {
			t.Fatalf("%s: no golden scenario %s", key, id)
		}
		if sc.CoverageOf(server) != scenarios.Covered {
			leftOut++
			continue
		}
		if kind, ok := fixed[key]; ok {
			// Its rules (or, "tools", its expected tools) were corrected
			// since: only the metrics they feed move.
			b, a := withoutMetrics(t, b, kind), withoutMetrics(t, after[key], kind)
			if !bytes.Equal(b, a) {
				t.Errorf("%s: its %s were corrected, yet other metrics moved:\n%s", key, map[bool]string{true: "expected tools", false: "parameter rules"}[kind == "tools"], cmp.Diff(string(b), string(a)))
			}
			same++
			continue
		}
		if !bytes.Equal(b, after[key]) {
			t.Errorf("%s is judged by its expected tools, yet scores differently under 1.5:\n%s", key, cmp.Diff(string(b), string(after[key])))
		}
		same++
	}
	if same != 409 || leftOut != 36+47 || len(after) != len(before) {
		t.Errorf("%d pairs by expected tools (want 409), %d left out (want 83), %d and %d pairs", same, leftOut, len(before), len(after))
	}
}

// paramsFixedAfter15 reads the pairs whose ground truth was corrected
// after methodology 1.5: pair -> "" (parameter rules) or "tools" (the
// expected tools too).
func paramsFixedAfter15(t *testing.T) map[string]string {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("testdata", "release", "params-fixed-after-1.5.txt"))
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]string{}
	for _, line := range strings.Split(string(data), "\n") {
		if line = strings.TrimSpace(line); line != "" && !strings.HasPrefix(line, "#") {
			pair, kind, _ := strings.Cut(line, " ")
			out[pair] = kind
		}
	}
	return out
}

// withoutMetrics is a scenario result without the metrics a correction of
// kind feeds: the parameter metrics, and with "tools" tool selection.
func withoutMetrics(t *testing.T, raw json.RawMessage, kind string) []byte {
	t.Helper()
	var g map[string]any
	if err := json.Unmarshal(raw, &g); err != nil {
		t.Fatal(err)
	}
	if m, ok := g["metrics"].(map[string]any); ok {
		delete(m, "param_acc")
		delete(m, "param_field_acc")
		if kind == "tools" {
			delete(m, "tool_selection_accuracy")
		}
	}
	out, err := json.Marshal(g)
	if err != nil {
		t.Fatal(err)
	}
	return out
}
