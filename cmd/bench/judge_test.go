package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
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
