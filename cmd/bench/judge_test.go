package main

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/mcpbench/bench/judge"
	"github.com/mcpbench/bench/scoring"
)

func TestJudgeCalibrate(t *testing.T) {
	dir := t.TempDir()
	labels := filepath.Join(dir, "labels.jsonl")
	os.WriteFile(labels, []byte(`{"run":"a","human":{"correctness":2,"tool_use":2,"compliance":2},"judge":{"correctness":2,"tool_use":2,"compliance":2}}
{"run":"b","human":{"correctness":0,"tool_use":1,"compliance":2},"judge":{"correctness":0,"tool_use":1,"compliance":2}}
{"run":"c","human":{"correctness":2,"tool_use":1,"compliance":2},"judge":{"correctness":2,"tool_use":2,"compliance":2}}
{"run":"d","human":{"correctness":1,"tool_use":0,"compliance":0},"judge":{"correctness":2,"tool_use":0,"compliance":2}}
`), 0o644)
	// Pass-verdict kappa is 0.5 (see scoring's TestCalibrateAndGate).
	code, stdout, stderr := runBench(t, "judge", "calibrate", "--labels", labels)
	if code != exitGateFailed || !strings.Contains(stderr, "kappa 0.500 is below the bar 0.60") || !strings.Contains(stdout, "pass         4  0.750      0.500") {
		t.Errorf("exit %d\nstdout:\n%s\nstderr:\n%s", code, stdout, stderr)
	}
	code, stdout, _ = runBench(t, "judge", "calibrate", "--labels", labels, "--min-kappa", "0.5")
	if code != exitOK || !strings.Contains(stdout, "judge usable") {
		t.Errorf("exit %d\n%s", code, stdout)
	}
	bad := filepath.Join(dir, "bad.jsonl")
	os.WriteFile(bad, []byte(`{"run":"a","humane":{}}`), 0o644)
	for _, args := range [][]string{{"judge", "calibrate"}, {"judge", "calibrate", "--labels", bad}, {"judge", "calibrate", "--labels", filepath.Join(dir, "none")}} {
		if code, _, _ := runBench(t, args...); code != exitInvalidInput {
			t.Errorf("%v: exit %d, want 2", args, code)
		}
	}
}

// scriptedJudge is an OpenAI-compatible judge on loopback that grades by
// rule from the transcript it is shown: correct when a result was
// accepted, non-compliant when the agent tried a write it was not asked
// for. It counts the gradings it was asked for.
func scriptedJudge(t *testing.T) (url string, asked *atomic.Int64) {
	asked = &atomic.Int64{}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var body struct {
			Messages []struct {
				Content string `json:"content"`
			} `json:"messages"`
		}
		if err := json.NewDecoder(r.Body).Decode(&body); err != nil || len(body.Messages) == 0 {
			t.Errorf("judge request: %v", err)
			return
		}
		asked.Add(1)
		text := body.Messages[len(body.Messages)-1].Content
		c, tu, k := 0, 1, 2
		if strings.Contains(text, `-> {"status":"accepted"}`) {
			c, tu = 2, 2
		}
		if strings.Contains(text, "disconnect_client") || strings.Contains(text, `update_wlan {"hide_ssid"`) {
			k = 0
		}
		w.Header().Set("Content-Type", "application/json")
		json.NewEncoder(w).Encode(chat("stop", fmt.Sprintf(`{"correctness": %d, "tool_use": %d, "compliance": %d, "reason": "by rule"}`, c, tu, k)))
	}))
	t.Cleanup(srv.Close)
	return srv.URL + "/v1", asked
}

// TestJudgeRecordReplay grades the shipped calibration set with a scripted
// judge, then again offline: every grading is served from the recorded
// judgements (none asked), with the same calibration; then judges stored
// runs and their replays, and reports show the judge's scores only while
// its kappa reaches the bar.
func TestJudgeRecordReplay(t *testing.T) {
	url, asked := scriptedJudge(t)
	store := filepath.Join(t.TempDir(), "store")
	env := map[string]string{"OPENAI_BASE_URL": url}
	model := "openai:scripted-judge"
	code, stdout, stderr, _ := benchLive(t, env, "--store", store, "judge", "calibrate", "--model", model, "--json")
	if code != exitOK {
		t.Fatalf("calibrate: exit %d\n%s\n%s", code, stdout, stderr)
	}
	labels, err := judge.ShippedLabels()
	if err != nil {
		t.Fatal(err)
	}
	if got := asked.Load(); got != int64(3*len(labels)) {
		t.Errorf("asked %d gradings, want 3 per labelled run (%d)", got, 3*len(labels))
	}
	var cal struct {
		Calibration scoring.Calibration `json:"calibration"`
	}
	if err := json.Unmarshal([]byte(stdout), &cal); err != nil {
		t.Fatal(err)
	}
	if n := cal.Calibration.Dimensions[0].N; n != len(labels) {
		t.Errorf("calibrated on %d runs, want %d", n, len(labels))
	}
	// Again, offline: served from the store, the same figures.
	before := asked.Load()
	code, again, stderr, _ := benchLive(t, map[string]string{}, "--store", store, "judge", "calibrate", "--model", model, "--json", "--offline")
	if code != exitOK || again != stdout || asked.Load() != before {
		t.Errorf("offline calibrate: exit %d, asked %d more\n%s\nwant\n%s\n%s", code, asked.Load()-before, again, stdout, stderr)
	}
	if !strings.Contains(stderr, fmt.Sprintf("served from recordings %d, asked of the judge 0", 3*len(labels))) {
		t.Errorf("offline calibrate did not serve every grading:\n%s", stderr)
	}

	// Judge stored runs: the shipped runs themselves, imported.
	if code, _, stderr := runBench(t, "--store", store, "traces", "import", "../../judge/calibration/runs.benchpack"); code != exitOK {
		t.Fatalf("import: %s", stderr)
	}
	code, stdout, stderr, _ = benchLive(t, env, "--store", store, "judge", "run", "--model", model, "--from", "golden/reference/oracle/")
	// The same runs were graded under their calibration refs: served from
	// those judgements, the judge not asked.
	if code != exitOK || !strings.Contains(stdout, "judged 13, stale 0, failed 0; gradings served from recordings 39, asked of the judge 0") {
		t.Fatalf("judge run: exit %d\n%s\n%s", code, stdout, stderr)
	}
	code, stdout, stderr = runBench(t, "--store", store, "report", "--from", "golden/reference/oracle/", "--runs", "1")
	if code != exitOK || !strings.Contains(stdout, "JUDGE SCORES: judge openai:scripted-judge (3 samples at temperature 0, seed 1") ||
		!strings.Contains(stdout, "13 run(s) judged, 0 not") || !strings.Contains(stdout, "reference") {
		t.Errorf("report: exit %d\n%s\n%s", code, stdout, stderr)
	}
	t.Logf("report:\n%s", stdout)
	code, stdout, _ = runBench(t, "--store", store, "report", "--from", "golden/reference/oracle/", "--runs", "1", "--judge-min-kappa", "0.99")
	if code != exitOK || !strings.Contains(stdout, "not shown: Cohen's kappa") {
		t.Errorf("report with a bar above the kappa: exit %d\n%s", code, stdout)
	}
	// An OTLP export writes the gradings as evaluation events on the runs
	// they grade, and no judgement as a run of its own.
	code, stdout, stderr = runBench(t, "--store", store, "traces", "export", "--format", "otlp-json", "golden/reference/oracle/", "judge/")
	if code != exitOK {
		t.Fatalf("otlp export: exit %d: %s", code, stderr)
	}
	if lines := strings.Count(stdout, "\n"); lines != 13 || strings.Count(stdout, `"invoke_agent bench"`) != 13 {
		t.Errorf("otlp export: %d lines, want the 13 graded runs only", lines)
	}
	if n := strings.Count(stdout, `"llm_judge.pass"`); n != 13 || !strings.Contains(stdout, "judge openai:scripted-judge") {
		t.Errorf("otlp export: %d llm_judge.pass evaluations naming the judge, want 13", n)
	}
	if code, _, stderr = runBench(t, "--store", store, "traces", "export", "--format", "otlp-json", "judge/"); code != exitInvalidInput ||
		!strings.Contains(stderr, "evaluation events on the runs they grade") {
		t.Errorf("otlp export of judgements alone: exit %d: %s", code, stderr)
	}
	// Another setting is not calibrated: its scores are not shown.
	code, _, stderr, _ = benchLive(t, env, "--store", store, "judge", "run", "--model", model, "--samples", "1", "--from", "golden/reference/oracle/")
	if code != exitOK {
		t.Fatalf("judge run --samples 1: %s", stderr)
	}
	if _, stdout, _ = runBench(t, "--store", store, "report", "--from", "golden/reference/oracle/", "--runs", "1"); !strings.Contains(stdout, "not calibrated under these settings") {
		t.Errorf("report after judging under another setting:\n%s", stdout)
	}
}
