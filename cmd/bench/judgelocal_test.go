package main

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// The LLM judge exercised with the real local model (scripts/local-model.sh,
// the model of docs/benchmark-results-0.2.0.md) on the shipped calibration
// set: docs/judge-calibration-local-model.benchpack holds its 73
// judgements, recorded once; here they are replayed offline and must give
// the figures the page publishes, byte for byte, and a report of the 0.2.0
// runs must leave the judge's scores out for its kappa.
//
// Regenerate the page's figures with
// go test ./cmd/bench -run TestJudgeLocalModel -update-golden.
const localJudge = "openai:qwen2.5-coder-1.5b-instruct-q4_k_m-repair-tagless-json"

func TestJudgeLocalModelCalibration(t *testing.T) {
	docs := filepath.Join("..", "..", "docs")
	store := filepath.Join(t.TempDir(), "store")
	for _, pack := range []string{"judge-calibration-local-model.benchpack", "benchmark-results-0.2.0.benchpack"} {
		if code, _, stderr := runBench(t, "--store", store, "traces", "import", filepath.Join(docs, pack)); code != exitOK {
			t.Fatalf("import %s: exit %d\n%s", pack, code, stderr)
		}
	}
	args := []string{"--store", store, "judge", "calibrate", "--model", localJudge, "--samples", "1", "--max-tokens", "96", "--offline"}
	code, stdout, stderr := runBench(t, args...)
	if !strings.Contains(stderr, "served from recordings 73, asked of the judge 0") {
		t.Fatalf("calibrate --offline: exit %d\n%s\n%s", code, stdout, stderr)
	}
	// Every run of the 0.2.0 release the set holds is graded from those
	// judgements; the others are stale (offline, never graded).
	jcode, jout, jerr := runBench(t, "--store", store, "judge", "run", "--model", localJudge, "--samples", "1", "--max-tokens", "96", "--offline", "--from", "golden/")
	if jcode != exitGateFailed || !strings.Contains(jout, "judged 24, stale 54, failed 12; gradings served from recordings 36, asked of the judge 0") {
		t.Errorf("judge run --offline: exit %d\n%s\n%s", jcode, jout, jerr)
	}
	_, report, _ := runBench(t, "--store", store, "report", "--from", "golden/")
	section := report[strings.Index(report, "\nJUDGE SCORES"):]
	got := "$ bench judge calibrate --model " + localJudge + " --samples 1 --max-tokens 96 --offline\n" + stdout +
		"(exit " + strconv.Itoa(code) + ")\n\n$ bench report --from golden/   # the 0.2.0 runs: 36 in the set, 24 of them validly judged\n" + strings.TrimPrefix(section, "\n")
	page := filepath.Join(docs, "judge-calibration-local-model.md")
	doc, err := os.ReadFile(page)
	if err != nil {
		t.Fatal(err)
	}
	const begin, end = "<!-- begin: TestJudgeLocalModelCalibration -->\n```text\n", "```\n<!-- end -->"
	i, j := strings.Index(string(doc), begin), strings.Index(string(doc), end)
	if i < 0 || j < i {
		t.Fatalf("%s has no block between %q and %q", page, begin, end)
	}
	if *updateGolden {
		out := string(doc[:i+len(begin)]) + got + string(doc[j:])
		if err := os.WriteFile(page, []byte(out), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	if want := string(doc[i+len(begin) : j]); want != got {
		t.Errorf("%s is out of date (go test ./cmd/bench -run TestJudgeLocalModel -update-golden):\ngot\n%s\nwant\n%s", page, got, want)
	}
}
