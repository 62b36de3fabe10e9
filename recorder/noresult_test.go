package recorder

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/mcpbench/bench/llm"
	"github.com/mcpbench/bench/traces"
)

// failingModel fails every call with err.
func failingModel(err error) llm.Model {
	return modelFunc(func(context.Context, *llm.Request) (*llm.Response, error) { return nil, err })
}

// Attempt tells the runs that say nothing about the server (it never
// started; no model answered; the provider failed transiently) from the
// runs that are results, errors included.
func TestAttemptNoResult(t *testing.T) {
	dir := t.TempDir()
	plan := []llm.PlanStep{{Tool: "get_status"}}
	refused := &llm.APIError{Provider: "openai", StatusCode: 401, Message: "Incorrect API key provided"}
	cases := []struct {
		name   string
		mode   string // hostile server mode
		model  llm.Model
		reason NoResultReason // "": a result
		why    string
	}{
		{"exit-at-start", "exit-at-start", oracle(t, plan, `{"status":"ok"}`), NotStarted, "a server that exits at start measured nothing"},
		{"auth refused", "ok", failingModel(refused), ModelUnavailable, "a refused key: no model answered"},
		{"connection broke", "ok", failingModel(llm.NewTransportError("openai: chat completion: read: connection reset by peer",
			&os.SyscallError{Syscall: "connect", Err: errors.New("x")})), ModelTransient, "a transport error that is no dial error may pass"},
		{"rate limited", "ok", failingModel(&llm.APIError{Provider: "openai", StatusCode: 429}), ModelTransient, "rate limits pass"},
		{"request refused", "ok", failingModel(&llm.APIError{Provider: "openai", StatusCode: 400, Message: "Invalid schema for function"}), "", "the provider's answer to what the run sent is a result"},
		{"crash mid-call", "crash", oracle(t, plan, `{"status":"ok"}`), "", "a crash mid-run is a result about the server"},
		{"offline model error", "ok", failingModel(errors.New("oracle: no tool get_status")), "", "an offline model's own error is a result"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			p := hostileProfile(t, c.mode, filepath.Join(dir, c.mode+".pids"), map[string]string{"HOSTILE_CALL_URL": "{central_url}/monitoring/v2/aps"})
			rec := New(&Options{StopGrace: 100 * time.Millisecond, Environ: os.Environ(), Secrets: []string{"Incorrect API key"}})
			defer rec.Close()
			run, nr, err := rec.Attempt(context.Background(), &Job{Suite: "test", Scenario: hostileScenario(), Profile: p, Model: c.model})
			if err != nil {
				t.Fatal(err)
			}
			if run == nil || run.Manifest.Outcome != traces.OutcomeError {
				t.Fatalf("want an error run, got %+v", run)
			}
			switch {
			case c.reason == "" && nr != nil:
				t.Errorf("%s: no result %q: %v", c.why, nr.Reason, nr)
			case c.reason != "" && (nr == nil || nr.Reason != c.reason):
				t.Errorf("%s: no result %v, want %q", c.why, nr, c.reason)
			case nr != nil && strings.Contains(nr.Error(), "Incorrect API key"):
				t.Errorf("the reason is not scrubbed of the secrets: %v", nr)
			}
		})
	}
}

// With ReuseServer a server is restarted only when it is at fault: runs
// that end in a model error keep it.
func TestReuseKeepsServerAfterModelError(t *testing.T) {
	p := referenceProfile(t, TransportStdio)
	starts := filepath.Join(t.TempDir(), "starts")
	p.Command = []string{"/bin/sh", "-c", `echo started >> "$0" && exec "$1"`, starts, p.Command[0]}
	rec := New(&Options{Environ: os.Environ(), ReuseServer: true})
	sc := goldenScenarios(t, "alerts-001")[0]
	for i := range 3 {
		job := &Job{Suite: "golden", Scenario: sc, Profile: p, RunIndex: i, Model: failingModel(errors.New("oracle: the plan names no tool of this server"))}
		run, err := rec.Run(context.Background(), job)
		if err != nil || run.Manifest.Outcome != traces.OutcomeError {
			t.Fatalf("run %d: %v %v", i, run, err)
		}
	}
	rec.Close()
	b, _ := os.ReadFile(starts)
	if n := strings.Count(string(b), "started"); n != 1 {
		t.Errorf("%d servers started for three runs that failed on the model's side, want 1", n)
	}
	checkNoProcess(t, helperBin(t, "central-mcp"))
}

// Preflight starts the server the first run needs and hands it to that
// run; a server that does not start fails it, naming why (its stderr),
// with nothing left running.
func TestPreflight(t *testing.T) {
	p := referenceProfile(t, TransportStdio)
	starts := filepath.Join(t.TempDir(), "starts")
	p.Command = []string{"/bin/sh", "-c", `echo started >> "$0" && exec "$1"`, starts, p.Command[0]}
	sc := goldenScenarios(t, "alerts-001")[0]
	rec := New(&Options{Environ: os.Environ()})
	if err := rec.Preflight(context.Background(), p, sc); err != nil {
		t.Fatal(err)
	}
	run, err := rec.Run(context.Background(), oracleJob(t, sc, p, 0))
	if err != nil || run.Manifest.Outcome != traces.OutcomeAnswered {
		t.Fatalf("run after the preflight: %v %v", run, err)
	}
	rec.Close()
	if b, _ := os.ReadFile(starts); strings.Count(string(b), "started") != 1 {
		t.Errorf("the run did not take the preflight's server: %q", b)
	}

	pidfile := filepath.Join(t.TempDir(), "pids")
	dead := hostileProfile(t, "exit-at-start", pidfile, nil)
	rec = New(&Options{Environ: os.Environ(), StopGrace: 100 * time.Millisecond})
	defer rec.Close()
	err = rec.Preflight(context.Background(), dead, sc)
	if err == nil || !strings.Contains(err.Error(), "hostile: exiting at start") {
		t.Errorf("preflight of a server that exits at start: %v", err)
	}
	checkNoLeftovers(t, pidfile)
	missing := &Profile{Name: "missing", Command: []string{"/nonexistent/bench-server"}, StartTimeout: Duration(5 * time.Second)}
	if err := missing.fill(); err != nil {
		t.Fatal(err)
	}
	missing.Dir = t.TempDir()
	if err := rec.Preflight(context.Background(), missing, sc); err == nil || !strings.Contains(err.Error(), "/nonexistent/bench-server") {
		t.Errorf("preflight of a command that does not exist: %v", err)
	}
}
