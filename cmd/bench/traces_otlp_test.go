package main

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestTracesExportOTLP: bench traces export --format otlp-json writes one
// OTLP JSON line per selected run, scored against the built-in suite, the
// same bytes each time; flags of the other format are refused.
func TestTracesExportOTLP(t *testing.T) {
	dir := t.TempDir()
	store := filepath.Join(dir, "store")
	if code, _, stderr := runBench(t, "--store", store, "traces", "import", "../../docs/benchmark-results-0.2.0.benchpack"); code != exitOK {
		t.Fatalf("import: exit %d: %s", code, stderr)
	}
	out := filepath.Join(dir, "runs.jsonl")
	code, _, stderr := runBench(t, "--store", store, "traces", "export", "--format", "otlp-json", "-o", out, "--scenario", "alerts-001", "golden/")
	if code != exitOK || !strings.Contains(stderr, "exported 10 runs as OTLP JSON to "+out) {
		t.Fatalf("export: exit %d: %s", code, stderr)
	}
	file, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	lines := bytes.Split(bytes.TrimSuffix(file, []byte("\n")), []byte("\n"))
	if len(lines) != 10 {
		t.Fatalf("%d lines, want one per run of alerts-001 (10)", len(lines))
	}
	for i, l := range lines {
		var req struct {
			ResourceSpans []struct {
				ScopeSpans []struct {
					Spans []struct {
						Name   string `json:"name"`
						Events []struct {
							Name string `json:"name"`
						} `json:"events"`
					} `json:"spans"`
				} `json:"scopeSpans"`
			} `json:"resourceSpans"`
		}
		if err := json.Unmarshal(l, &req); err != nil {
			t.Fatalf("line %d: %v", i+1, err)
		}
		root := req.ResourceSpans[0].ScopeSpans[0].Spans[0]
		evals := 0
		for _, e := range root.Events {
			if e.Name == "gen_ai.evaluation.result" {
				evals++
			}
		}
		if root.Name != "invoke_agent bench" || evals != 5 {
			t.Errorf("line %d: root %q with %d evaluation events, want invoke_agent bench with 5", i+1, root.Name, evals)
		}
	}
	code, stdout, _ := runBench(t, "--store", store, "traces", "export", "--format", "otlp-json", "--scenario", "alerts-001", "golden/")
	if code != exitOK || stdout != string(file) {
		t.Errorf("export to standard output: exit %d, the same bytes as the file: %v", code, stdout == string(file))
	}
	for _, args := range [][]string{
		{"--format", "zipkin", "-o", out},
		{"--include-content", "-o", filepath.Join(dir, "p.benchpack")},
		{"--format", "otlp-json", "--scenario", "alerts-001", "golden/nobody/"},
	} {
		if code, _, stderr := runBench(t, append([]string{"--store", store, "traces", "export"}, args...)...); code != exitInvalidInput {
			t.Errorf("%v: exit %d, want %d: %s", args, code, exitInvalidInput, stderr)
		}
	}
}
