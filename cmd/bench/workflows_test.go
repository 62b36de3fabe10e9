package main

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/rhysd/actionlint"
)

// TestWorkflowsLint checks the GitHub Actions workflows with actionlint:
// YAML syntax, workflow schema, expressions, action inputs, job needs.
func TestWorkflowsLint(t *testing.T) {
	files, _ := filepath.Glob("../../.github/workflows/*.yml")
	if len(files) < 2 {
		t.Fatalf("want benchmark.yml and head-to-head.yml, found %v", files)
	}
	var out bytes.Buffer
	l, err := actionlint.NewLinter(&out, &actionlint.LinterOptions{})
	if err != nil {
		t.Fatal(err)
	}
	errs, err := l.LintFiles(files, nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range errs {
		t.Errorf("%s:%d:%d: %s [%s]", e.Filepath, e.Line, e.Column, e.Message, e.Kind)
	}
}

// TestPRGateScript runs scripts/pr-gate.sh, the per-PR path of
// .github/workflows/benchmark.yml, for real: a pack recorded with the
// baseline model is replayed against the unchanged reference server (pass)
// and against one that pages one item at a time (api_call_count excess, exit 1);
// a report planted where the reports go (a symlink to a secret, as a pull
// request can commit one) never reaches the step summary (issue 16, row 10).
func TestPRGateScript(t *testing.T) {
	if testing.Short() {
		t.Skip("records and replays a stage; skipped with -short")
	}
	dir := t.TempDir()
	bench := filepath.Join(dir, "bench")
	build := exec.Command("go", "build", "-o", bench, "./cmd/bench")
	build.Dir = "../.."
	build.Env = append(os.Environ(), "CGO_ENABLED=0")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("building bench: %v\n%s", err, out)
	}
	prof := referenceProfileFile(t, dir)
	store := filepath.Join(dir, "base")
	pack := filepath.Join(dir, "baseline.benchpack")
	for _, args := range [][]string{
		{"--store", store, "record", "--stage", "smoke", "--server", prof, "--model", "baseline", "--runs", "1"},
		{"--store", store, "traces", "export", "-o", pack},
	} {
		cmd := exec.Command(bench, args...)
		cmd.Dir = "../.."
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("bench %s: %v\n%s", strings.Join(args, " "), err, out)
		}
	}
	leaky := filepath.Join(dir, "leaky.yaml")
	b, _ := os.ReadFile(prof)
	os.WriteFile(leaky, bytes.Replace(b, []byte("env:\n"), []byte("env:\n  CENTRAL_INJECT: extra-pagination\n"), 1), 0o644)

	secret := filepath.Join(dir, "secret")
	os.WriteFile(secret, []byte("SECRET-TOKEN\n"), 0o600)
	tests := []struct {
		name    string
		profile string
		code    int
		plant   bool // a symlink to secret at REPORT.md, and a replay that writes no report
	}{
		{"unchanged server passes", prof, 0, false},
		{"paging one item at a time fails the gate", leaky, exitGateFailed, false},
		{"a planted report is not published", filepath.Join(dir, "missing.yaml"), exitInvalidInput, true},
		// The pack benchmark.yml replays before a release has one: the
		// smoke stage recorded with a real model (docs/benchmark-results-0.2.0.*).
		{"the release recording passes unchanged", prof, 0, false},
		{"the release recording catches paging one item at a time", leaky, exitGateFailed, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			work := filepath.Join(dir, strings.ReplaceAll(tt.name, " ", "-"))
			summary := filepath.Join(work, "summary.md")
			os.MkdirAll(work, 0o755)
			if tt.plant {
				os.MkdirAll(filepath.Join(work, "reports", "smoke"), 0o755)
				os.Symlink(secret, filepath.Join(work, "reports", "smoke", "REPORT.md"))
			}
			pk, env := pack, []string{}
			if strings.HasPrefix(tt.name, "the release recording") {
				// Recorded with a small local model, far below the floors.
				pk, env = filepath.Join("docs", "benchmark-results-0.2.0.benchpack"), []string{"FLOORS=off"}
			}
			cmd := exec.Command("bash", "scripts/pr-gate.sh", pk)
			cmd.Dir = "../.."
			cmd.Env = append(append(os.Environ(), "BENCH="+bench, "PROFILE="+tt.profile, "STAGES=smoke",
				"WORK="+work, "GITHUB_STEP_SUMMARY="+summary), env...)
			out, _ := cmd.CombinedOutput()
			if got := cmd.ProcessState.ExitCode(); got != tt.code {
				t.Fatalf("pr-gate.sh exit %d, want %d\n%s", got, tt.code, out)
			}
			if tt.plant {
				if s, _ := os.ReadFile(summary); bytes.Contains(s, []byte("SECRET-TOKEN")) {
					t.Errorf("the planted report reached the step summary:\n%s", s)
				}
				return
			}
			for _, f := range []string{"REPORT.json", "REPORT.md", "REPORT.xml", "REPORT.txt"} {
				if _, err := os.Stat(filepath.Join(work, "reports", "smoke", f)); err != nil {
					t.Errorf("report %s missing: %v", f, err)
				}
			}
			if s, err := os.ReadFile(summary); err != nil || !bytes.Contains(s, []byte("## bench: stage smoke")) {
				t.Errorf("step summary not written: %v\n%s", err, s)
			}
		})
	}

	// The GitHub Action's step (action.yml runs scripts/action.sh), in a
	// repository that is not bench's: a directory outside the checkout
	// with its own profile and a bench.yaml adding a stage; the pack given
	// as a path and as a URL.
	repo := filepath.Join(dir, "their-repo")
	os.MkdirAll(repo, 0o755)
	b, _ = os.ReadFile(prof)
	os.WriteFile(filepath.Join(repo, "server.yaml"), b, 0o644)
	os.WriteFile(filepath.Join(repo, "bench.yaml"), []byte("format: 1\nstages:\n  - name: alerts-only\n    runs: 1\n    include:\n      - suites: [alerts]\n      - tags: [smoke]\n"), 0o644)
	script, _ := filepath.Abs("../../scripts/action.sh")
	for _, pk := range []string{pack, "file://" + pack} {
		t.Run("the Action outside the checkout, pack "+strings.SplitN(pk, ":", 2)[0], func(t *testing.T) {
			runner := t.TempDir()
			out, summary := filepath.Join(runner, "output"), filepath.Join(runner, "summary.md")
			cmd := exec.Command("bash", script)
			cmd.Dir = repo
			cmd.Env = append(os.Environ(), "BENCH="+bench, "BENCH_PACK="+pk, "BENCH_PROFILE=server.yaml", "BENCH_STAGES=smoke alerts-only",
				"BENCH_FLOORS=off", "RUNNER_TEMP="+runner, "GITHUB_OUTPUT="+out, "GITHUB_STEP_SUMMARY="+summary)
			res, _ := cmd.CombinedOutput()
			if got := cmd.ProcessState.ExitCode(); got != exitOK {
				t.Fatalf("action.sh exit %d, want 0\n%s", got, res)
			}
			o, _ := os.ReadFile(out)
			if !bytes.Contains(o, []byte("exit-code=0\n")) || !bytes.Contains(o, []byte("report-dir="+filepath.Join(runner, "bench", "reports"))) {
				t.Errorf("outputs:\n%s", o)
			}
			s, _ := os.ReadFile(summary)
			for _, want := range []string{"## bench: stage smoke", "## bench: stage alerts-only", "bench: PASS · stage alerts-only"} {
				if !bytes.Contains(s, []byte(want)) {
					t.Errorf("step summary lacks %q:\n%s", want, s)
				}
			}
		})
	}
}
