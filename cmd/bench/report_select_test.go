package main

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/mcpbench/bench/traces"
)

// A bare bench report scores the recorded runs only, and says how many
// replays it left out; --from pools what it names, and says so.
func TestReportSelectsRecordedRuns(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "store")
	s, err := traces.Open(dir, nil)
	if err != nil {
		t.Fatal(err)
	}
	for i := range 3 {
		ref := "golden/reference/baseline-bm25/read-001/" + string(rune('0'+i))
		id, err := s.PutRun(scoringRun("reference", i, 0, false), ref)
		if err != nil {
			t.Fatal(err)
		}
		replay := scoringRun("reference", i, 0, false)
		replay.Manifest.Mode, replay.Manifest.Replays = traces.ModeReplay, &id
		if _, err := s.PutRun(replay, "replay/"+ref); err != nil {
			t.Fatal(err)
		}
	}
	s.Close()
	code, stdout, stderr := runBench(t, "--store", dir, "report", "--scenarios", testScenarios, "--format", "json")
	if code != exitOK || !strings.Contains(stdout, `"runs": 3,`) || strings.Contains(stdout, `"runs": 6,`) {
		t.Errorf("bare report: exit %d, want the 3 recorded runs scored:\n%s\n%s", code, stdout, stderr)
	}
	if !strings.Contains(stderr, "left out 3 replay run(s)") {
		t.Errorf("bare report does not say it left the replays out: %q", stderr)
	}
	code, stdout, stderr = runBench(t, "--store", dir, "report", "--from", "golden/", "--from", "replay/", "--scenarios", testScenarios, "--format", "json")
	if code != exitOK || !strings.Contains(stdout, `"runs": 6,`) || !strings.Contains(stderr, "pooled 3 recorded and 3 replay run(s)") {
		t.Errorf("--from both: exit %d, want 6 runs pooled and said so:\n%s", code, stderr)
	}
	code, _, stderr = runBench(t, "--store", dir, "report", "--from", "replay/", "--scenarios", testScenarios)
	if code != exitOK || strings.Contains(stderr, "pooled") {
		t.Errorf("--from replay/: exit %d, %q", code, stderr)
	}
}
