package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mcpbench/bench/scoring"
)

func TestReportRelease(t *testing.T) {
	store := scoringStore(t)
	render := func() map[string][]byte {
		out := filepath.Join(t.TempDir(), "docs")
		code, _, stderr := runBench(t, "--store", store, "report", "--release", "1.2.0", "--from", "base/", "--from", "leak/", "--scenarios", testScenarios, "--out-dir", out)
		if code != exitOK {
			t.Fatalf("report --release: exit %d\n%s", code, stderr)
		}
		files := map[string][]byte{}
		for _, name := range []string{"benchmark-results-1.2.0.md", "benchmark-results-1.2.0.svg", "benchmark-results-1.2.0.json"} {
			b, err := os.ReadFile(filepath.Join(out, name))
			if err != nil {
				t.Fatal(err)
			}
			files[name] = b
		}
		return files
	}
	first, second := render(), render()
	for name, b := range first {
		if !bytes.Equal(b, second[name]) {
			t.Errorf("%s is not reproducible", name)
		}
		goldenFile(t, "release/"+name, b)
	}
}

// A results page follows the methodology: "Each scenario runs ≥5 times;
// report median and IQR." Fewer runs than asked is an error with --release
// naming the scenario, a warning in every other report.
func TestReportReleaseRefusesFewerRuns(t *testing.T) {
	store := scoringStore(t) // 5 runs of read-001
	out := filepath.Join(t.TempDir(), "docs")
	code, _, stderr := runBench(t, "--store", store, "report", "--release", "1.2.0", "--runs", "6", "--from", "base/", "--scenarios", testScenarios, "--out-dir", out)
	if code != exitInvalidInput || !strings.Contains(stderr, "fewer scored runs than the 6 asked") || !strings.Contains(stderr, "read-001") {
		t.Errorf("--release with 5 of 6 runs: exit %d\n%s", code, stderr)
	}
	if _, err := os.Stat(out); err == nil {
		t.Errorf("a refused release wrote %s", out)
	}
	if code, _, stderr := runBench(t, "--store", store, "report", "--release", "1.2.0", "--runs", "3", "--from", "base/", "--scenarios", testScenarios, "--out-dir", out); code != exitInvalidInput {
		t.Errorf("--release --runs 3: exit %d, want a usage error\n%s", code, stderr)
	}
	code, stdout, stderr := runBench(t, "--store", store, "report", "--runs", "6", "--from", "base/", "--scenarios", testScenarios)
	if code != exitOK || !strings.Contains(stdout, "fewer scored runs than the 6 asked") || !strings.Contains(stderr, "warning") {
		t.Errorf("report with 5 of 6 runs: exit %d, want the warning on both streams\n%s\n%s", code, stdout, stderr)
	}
}

func TestReportFormats(t *testing.T) {
	store := scoringStore(t)
	for _, format := range []string{"text", "md", "junit"} {
		code, stdout, stderr := runBench(t, "--store", store, "report", "--from", "leak/", "--scenarios", testScenarios, "--format", format)
		if code != exitOK {
			t.Fatalf("--format %s: exit %d\n%s", format, code, stderr)
		}
		goldenFile(t, "report_leak."+format, []byte(stdout))
	}
	if code, _, _ := runBench(t, "--store", store, "report", "--release", "../x"); code != exitInvalidInput {
		t.Errorf("bad release name: exit %d", code)
	}
}

// The JSON scoreboard holds every run's metrics; the other formats keep
// summaries only, and their numbers agree with it.
func TestReportJSONKeepsRuns(t *testing.T) {
	store := scoringStore(t)
	code, stdout, stderr := runBench(t, "--store", store, "report", "--from", "base/", "--from", "leak/", "--scenarios", testScenarios, "--format", "json")
	if code != exitOK {
		t.Fatalf("--format json: exit %d\n%s", code, stderr)
	}
	rep, err := scoring.ReadReport(strings.NewReader(stdout))
	if err != nil {
		t.Fatal(err)
	}
	refs := map[string]bool{}
	for _, m := range rep.Runs() {
		refs[m.Ref] = true
	}
	if len(refs) != 15 || !refs["leak/reference/baseline-bm25/read-001/4"] {
		t.Errorf("runs of the JSON report: %v", refs)
	}
	// The text report of the same runs, rendered from the JSON report's
	// results, is the one bench report prints.
	var text bytes.Buffer
	if err := scoring.WriteText(&text, rep); err != nil {
		t.Fatal(err)
	}
	code, stdout, _ = runBench(t, "--store", store, "report", "--from", "base/", "--from", "leak/", "--scenarios", testScenarios)
	if code != exitOK || stdout != text.String() {
		t.Errorf("text report (exit %d) differs from the JSON report's:\n%s\n---\n%s", code, stdout, text.String())
	}
}
