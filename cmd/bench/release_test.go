package main

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

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
