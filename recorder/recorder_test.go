package recorder

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mcpbench/bench/llm"
	"github.com/mcpbench/bench/scenarios"
	"github.com/mcpbench/bench/traces"
)

// hostileScenario is a minimal read scenario on the site-a fixture.
func hostileScenario() *scenarios.Scenario {
	return &scenarios.Scenario{Format: 1, ID: "hostile-001", Suite: "alerts", Category: "edge",
		Intent: "Get the status of the network.", Fixture: "site-a", WriteGate: scenarios.GateRead,
		ResultSchema: map[string]any{"type": "object", "required": []any{"status"}}}
}

func hostileProfile(t *testing.T, mode, pidfile string, extraEnv map[string]string) *Profile {
	env := map[string]string{"HOSTILE_MODE": mode, "HOSTILE_PIDFILE": pidfile}
	for k, v := range extraEnv {
		env[k] = v
	}
	p := &Profile{Name: "hostile-" + mode, Command: []string{helperBin(t, "hostile")}, Env: env, StartTimeout: Duration(20 * time.Second)}
	if err := p.fill(); err != nil {
		t.Fatal(err)
	}
	p.Dir = t.TempDir()
	return p
}

func oracle(t *testing.T, plan []llm.PlanStep, result string) llm.Model {
	m, err := llm.NewOracle(plan, json.RawMessage(result))
	if err != nil {
		t.Fatal(err)
	}
	return m
}

func kinds(run *traces.Run, k traces.Kind) []traces.Event {
	var out []traces.Event
	for _, e := range run.Events {
		if e.Kind == k {
			out = append(out, e)
		}
	}
	return out
}

// TestHostileServers runs one batch over servers that misbehave: each run
// is recorded with a clear error, the batch goes on, and no process
// survives.
func TestHostileServers(t *testing.T) {
	cases := []struct {
		mode      string
		outcome   traces.Outcome
		errorKind traces.ErrorKind // an error event of this kind is expected
		why       string
		message   string // ... whose message says this
	}{
		{"ok", traces.OutcomeAnswered, "", "control: a well-behaved server answers", ""},
		{"exit-at-start", traces.OutcomeError, "start", "a server that exits at start gives a start error, not a wait for the timeout", ""},
		{"mute", traces.OutcomeError, "start", "a server that never answers the handshake fails at the start timeout", ""},
		{"crash", traces.OutcomeError, "server_exited", "a crash mid-call ends the run with the exit status", ""},
		{"hang", traces.OutcomeAnswered, "call_timeout", "a hung call times out, the model is told, the run goes on", "the fake Central was answering no request; the server sent no message after the call"},
		{"hang-partial", traces.OutcomeAnswered, "call_timeout", "a call whose answer stops half way says what came back", "the server sent 1 message after the call, not its answer, and 72 bytes of one it did not finish"},
		{"hang-on-fake", traces.OutcomeAnswered, "call_timeout", "a call that hangs on a request to the fake says which", "the fake Central was still answering POST /monitoring/v2/aps"},
		{"garbage", traces.OutcomeError, "", "garbage on stdout breaks the session: an error, not a hang", ""},
		{"big", traces.OutcomeAnswered, "result_too_large", "a 10 MB result is refused with a clear error", ""},
		{"flood", traces.OutcomeAnswered, "", "a notification flood does not break the session", ""},
		{"ignore-stdin", traces.OutcomeAnswered, "", "a server that ignores stdin close and SIGTERM is killed with its grandchild", ""},
	}
	dir := t.TempDir()
	plan := []llm.PlanStep{{Tool: "get_status"}}
	for _, c := range cases {
		t.Run(c.mode, func(t *testing.T) {
			pidfile := filepath.Join(dir, c.mode+".pids")
			p := hostileProfile(t, c.mode, pidfile, map[string]string{"HOSTILE_CALL_URL": "{central_url}/monitoring/v2/aps"})
			timeout := 30 * time.Second
			switch c.mode {
			case "hang", "hang-on-fake", "hang-partial":
				timeout = 300 * time.Millisecond // a wait this test cannot avoid
			case "mute":
				p.StartTimeout = Duration(300 * time.Millisecond) // likewise
			}
			rec := New(&Options{CallTimeout: timeout, StopGrace: 100 * time.Millisecond, Environ: os.Environ()})
			defer rec.Close()
			run, err := rec.Run(context.Background(), &Job{Suite: "test", Scenario: hostileScenario(), Profile: p,
				Model: oracle(t, plan, `{"status":"ok"}`)})
			if err != nil {
				t.Fatalf("%s: Run returned an error instead of a recorded run: %v", c.why, err)
			}
			checkNoLeftovers(t, pidfile)
			if run.Manifest.Outcome != c.outcome {
				t.Errorf("%s: outcome %q, want %q; events: %s", c.why, run.Manifest.Outcome, c.outcome, summary(run))
			}
			if c.errorKind != "" {
				found := false
				for _, e := range kinds(run, traces.KindError) {
					found = found || (e.Error.Kind == c.errorKind && strings.Contains(e.Error.Message, c.message))
				}
				if !found {
					t.Errorf("%s: no error event of kind %s saying %q; events: %s", c.why, c.errorKind, c.message, summary(run))
				}
			}
			if c.outcome == traces.OutcomeError && len(kinds(run, traces.KindError)) == 0 {
				t.Errorf("%s: outcome error without an error event", c.why)
			}
			s, err := traces.Open(t.TempDir(), nil)
			if err != nil {
				t.Fatal(err)
			}
			defer s.Close()
			if _, err := s.PutRun(run, (&Job{Suite: "test", Scenario: hostileScenario(), Profile: p, Model: oracle(t, plan, `{}`)}).Ref()); err != nil {
				t.Errorf("%s: the run does not store: %v", c.why, err)
			}
		})
	}
}

func summary(run *traces.Run) string {
	var b strings.Builder
	for _, e := range run.Events {
		b.WriteString(string(e.Kind))
		switch {
		case e.Error != nil:
			b.WriteString("(" + string(e.Error.Kind) + ": " + llm.Truncate(e.Error.Message, 200) + ")")
		case e.Call != nil:
			b.WriteString("(" + e.Call.Tool + ")")
		}
		b.WriteString(" ")
	}
	return b.String()
}

// TestCancelStopsServer cancels a run in the middle of a hung call (as
// Ctrl-C does) and checks that the server and its grandchild are gone.
func TestCancelStopsServer(t *testing.T) {
	pidfile := filepath.Join(t.TempDir(), "pids")
	p := hostileProfile(t, "ignore-stdin", pidfile, nil)
	p.Env["HOSTILE_MODE"] = "ignore-stdin"
	ctx, cancel := context.WithCancel(context.Background())
	// The model cancels the run on its second turn, while the server runs.
	var turns atomic.Int32
	m := modelFunc(func(ctx context.Context, req *llm.Request) (*llm.Response, error) {
		if turns.Add(1) == 2 {
			cancel()
			<-ctx.Done()
			return nil, ctx.Err()
		}
		return &llm.Response{ToolCalls: []llm.ToolCall{{ID: "c1", Name: "get_status", Arguments: json.RawMessage(`{}`)}}, StopReason: llm.StopToolUse}, nil
	})
	rec := New(&Options{StopGrace: 100 * time.Millisecond, Environ: os.Environ()})
	defer rec.Close()
	run, err := rec.Run(ctx, &Job{Suite: "test", Scenario: hostileScenario(), Profile: p, Model: m})
	if err != nil {
		t.Fatal(err)
	}
	if run.Manifest.Outcome != traces.OutcomeError {
		t.Errorf("outcome %q after cancellation, want error", run.Manifest.Outcome)
	}
	if n := len(pids(t, pidfile)); n != 2 {
		t.Errorf("pid file lists %d processes, want the server and its grandchild", n)
	}
	checkNoLeftovers(t, pidfile)
}

type modelFunc func(ctx context.Context, req *llm.Request) (*llm.Response, error)

func (f modelFunc) Name() string { return "test:func" }
func (f modelFunc) Generate(ctx context.Context, req *llm.Request) (*llm.Response, error) {
	return f(ctx, req)
}

// TestRedaction records with a fake API key that the server prints to
// stderr and returns in its results, and checks that the key's bytes are
// nowhere in the store's files.
func TestRedaction(t *testing.T) {
	const key = "sk-test-FAKEKEY-0123456789abcdef"
	pidfile := filepath.Join(t.TempDir(), "pids")
	p := hostileProfile(t, "ok", pidfile, map[string]string{"HOSTILE_ECHO": key})
	rec := New(&Options{Secrets: []string{key}, Environ: append(os.Environ(), "OPENAI_API_KEY="+key)})
	defer rec.Close()
	run, err := rec.Run(context.Background(), &Job{Suite: "test", Scenario: hostileScenario(), Profile: p,
		Model: oracle(t, []llm.PlanStep{{Tool: "get_status"}}, `{"status":"ok"}`)})
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	s, err := traces.Open(dir, nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.PutRun(run, "test/redaction/0"); err != nil {
		t.Fatal(err)
	}
	s.Close()
	b, _ := json.Marshal(run)
	if !bytes.Contains(b, []byte("[REDACTED]")) {
		t.Fatalf("the key was not in the run to begin with, so the test proves nothing: %s", llm.Truncate(string(b), 500))
	}
	filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		data, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		if bytes.Contains(data, []byte(key)) {
			t.Errorf("store file %s holds the API key", path)
		}
		return nil
	})
}

// TestStderrTimestampsKeepRunIDs records one scenario twice against a
// server that logs the wall-clock time to stderr: the stderr differs, the
// run IDs do not, and the store keeps each run's stderr beside it.
func TestStderrTimestampsKeepRunIDs(t *testing.T) {
	p := hostileProfile(t, "log-time", filepath.Join(t.TempDir(), "pids"), nil)
	s, err := traces.Open(t.TempDir(), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	var ids []traces.ID
	var stderr []string
	for i := range 2 {
		clock := time.Unix(1_700_000_000, 0)
		rec := New(&Options{Now: func() time.Time { clock = clock.Add(time.Millisecond); return clock }})
		run, err := rec.Run(context.Background(), &Job{Suite: "test", Scenario: hostileScenario(), Profile: p,
			Model: oracle(t, []llm.PlanStep{{Tool: "get_status"}}, `{"status":"ok"}`)})
		rec.Close()
		if err != nil {
			t.Fatal(err)
		}
		stored, err := s.PutRunNoSyncRead(run, fmt.Sprintf("test/log-time/%d", i))
		if err != nil {
			t.Fatal(err)
		}
		ids = append(ids, stored.Manifest.RunID)
		back, err := s.GetRun(stored.Manifest.RunID)
		if err != nil {
			t.Fatal(err)
		}
		init := kinds(back, traces.KindInitialize)
		if len(init) != 1 || !strings.Contains(init[0].Initialize.Stderr, "INFO hostile: tools/call") {
			t.Fatalf("run %d: stderr not kept: %+v", i, init)
		}
		stderr = append(stderr, kinds(run, traces.KindInitialize)[0].Initialize.Stderr)
	}
	if stderr[0] == stderr[1] {
		t.Fatalf("the server logged the same stderr twice, so the test proves nothing: %q", stderr[0])
	}
	if ids[0] != ids[1] {
		t.Errorf("stderr timestamps changed the run ID: %v, %v", ids[0], ids[1])
	}
}
