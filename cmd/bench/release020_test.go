package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// The 0.2.0 results page: the smoke stage recorded with a real language
// model (the local model of scripts/local-model.sh, 5 runs at temperature
// 0.7, seeds 1-5) against the reference server and a compared one. Its runs
// are docs/benchmark-results-0.2.0.benchpack and its maintainer's note
// docs/benchmark-results-0.2.0.notes.md; bench report --release 0.2.0
// writes the page from them byte for byte, and the page says what the
// model is: its quantisation, the repair policy of its server, the
// temperature and the seeds.
//
// After a change of the scoring, regenerate it with
// go test ./cmd/bench -run TestRelease020 -update-golden.
func TestRelease020Reproduces(t *testing.T) {
	docs := filepath.Join("..", "..", "docs")
	store := filepath.Join(t.TempDir(), "store")
	if code, _, stderr := runBench(t, "--store", store, "traces", "import", filepath.Join(docs, "benchmark-results-0.2.0.benchpack")); code != exitOK {
		t.Fatalf("import: exit %d\n%s", code, stderr)
	}
	out := t.TempDir()
	notes, err := os.ReadFile(filepath.Join(docs, "benchmark-results-0.2.0.notes.md"))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(out, "benchmark-results-0.2.0.notes.md"), notes, 0o644); err != nil {
		t.Fatal(err)
	}
	if code, _, stderr := runBench(t, "--store", store, "report", "--release", "0.2.0", "--from", "golden/", "--out-dir", out); code != exitOK {
		t.Fatalf("report --release: exit %d\n%s", code, stderr)
	}
	var page string
	for _, ext := range []string{".md", ".json", ".svg"} {
		name := "benchmark-results-0.2.0" + ext
		got, err := os.ReadFile(filepath.Join(out, name))
		if err != nil {
			t.Fatal(err)
		}
		if ext == ".md" {
			page = string(got)
		}
		if *updateGolden {
			if err := os.WriteFile(filepath.Join(docs, name), got, 0o644); err != nil {
				t.Fatal(err)
			}
			continue
		}
		want, err := os.ReadFile(filepath.Join(docs, name))
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(want, got) {
			t.Errorf("docs/%s is not what bench report --release 0.2.0 writes from its pack (-want +got):\n%s", name, cmp.Diff(string(want), string(got)))
		}
	}
	for _, want := range []string{
		"qwen2.5-coder-1.5b-instruct-q4_k_m-repair-tagless-json", // the model, its quantisation and repair, as its id
		"Q4_K_M", "`tagless-json`", "temperature **0.7**", // the note
		"| 0.7 |", "| 1, 2, 3, 4, 5 |", // the model table: temperature, the seeds the runs had
		"## Head to head", "McNemar", "pass@5",
	} {
		if !strings.Contains(page, want) {
			t.Errorf("the 0.2.0 page does not say %q", want)
		}
	}
}
