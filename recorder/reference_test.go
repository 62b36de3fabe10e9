package recorder

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mcpbench/bench/fakecentral"
	"github.com/mcpbench/bench/llm"
	"github.com/mcpbench/bench/scenarios"
	"github.com/mcpbench/bench/traces"
)

// referenceProfile launches the reference server (built once) the way
// servers/reference.yaml does, over stdio or streamable HTTP.
func referenceProfile(t *testing.T, transport string) *Profile {
	bin := helperBin(t, "central-mcp")
	p := &Profile{Name: "reference", Repo: "local", Transport: transport, Command: []string{bin},
		Env: map[string]string{
			"CENTRAL_BASE_URL": "{central_url}", "CENTRAL_CLIENT_ID": "bench-reference", "CENTRAL_CLIENT_SECRET": "bench-reference-secret",
			"HTTPS_PROXY": "{proxy_url}", "NO_PROXY": "127.0.0.1,localhost", "SSL_CERT_FILE": "{ca_file}",
		},
		WritesEnv: map[string]string{"CENTRAL_WRITES": "1"}, StartTimeout: Duration(30 * time.Second)}
	if transport == TransportHTTP {
		p.Command = append(p.Command, "--transport", "http", "--addr", "127.0.0.1:{port}")
		p.URL = "http://127.0.0.1:{port}/mcp"
		p.Ready = "http://127.0.0.1:{port}/readyz"
	}
	if err := p.fill(); err != nil {
		t.Fatal(err)
	}
	p.Dir = t.TempDir()
	return p
}

func goldenScenarios(t *testing.T, ids ...string) []*scenarios.Scenario {
	t.Helper()
	all, err := scenarios.Golden()
	if err != nil {
		t.Fatal(err)
	}
	var out []*scenarios.Scenario
	for _, id := range ids {
		for _, sc := range all {
			if sc.ID == id {
				out = append(out, sc)
			}
		}
	}
	if len(out) != len(ids) {
		t.Fatalf("golden suite lacks some of %v", ids)
	}
	return out
}

func smokeScenarios(t *testing.T) []*scenarios.Scenario {
	t.Helper()
	cfg, err := scenarios.LoadConfigFile("../scenarios/stages.yaml")
	if err != nil {
		t.Fatal(err)
	}
	all, err := scenarios.Golden()
	if err != nil {
		t.Fatal(err)
	}
	return cfg.Stage("smoke").Select(all)
}

func oracleJob(t *testing.T, sc *scenarios.Scenario, p *Profile, runIndex int) *Job {
	t.Helper()
	plan, result, err := OraclePlan(sc, "reference", nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	m, err := llm.NewOracle(plan, result)
	if err != nil {
		t.Fatal(err)
	}
	return &Job{Suite: "golden", Scenario: sc, Profile: p, Model: m, RunIndex: runIndex}
}

// checkAttribution asserts what every recorded run against the reference
// server must show: a handshake, tools, no error, and every Central call
// attributed to a real tool call (the reference server makes no boot call).
func checkAttribution(t *testing.T, run *traces.Run) {
	t.Helper()
	calls := map[int]string{}
	for _, e := range kinds(run, traces.KindCall) {
		calls[e.Call.Index] = e.Call.Tool
	}
	if len(kinds(run, traces.KindInitialize)) != 1 || len(kinds(run, traces.KindTools)) != 1 {
		t.Errorf("%s: want one initialize and one tools event: %s", run.Manifest.Scenario.ID, summary(run))
	}
	if errs := kinds(run, traces.KindError); len(errs) > 0 {
		t.Errorf("%s: errors: %s", run.Manifest.Scenario.ID, summary(run))
	}
	// Chunked, memoized token counts are exact on real traffic: the
	// requests (tool list, results) and the listed tools.
	var texts [][]byte
	for _, e := range kinds(run, traces.KindTools) {
		texts = append(texts, e.Tools.Tools)
	}
	for _, e := range kinds(run, traces.KindTurn) {
		texts = append(texts, e.Turn.Request, e.Turn.Response)
	}
	for _, b := range texts {
		if got, want := testTokens.Count(b), testTokens.countOnce(b); got != want || len(cuts(b)) < 2 && len(b) > 4*minChunk {
			t.Errorf("%s: CountTokens = %d, one pass %d, over %d bytes in %d chunks", run.Manifest.Scenario.ID, got, want, len(b), len(cuts(b)))
		}
	}
	for i, e := range run.Events {
		if e.HTTP == nil {
			continue
		}
		tool, ok := calls[e.HTTP.Call]
		if e.HTTP.Boot || !ok || tool == llm.SubmitTool {
			t.Errorf("%s: %s %s attributed to call %d (boot %v), not to a server tool call", run.Manifest.Scenario.ID, e.HTTP.Method, e.HTTP.Path, e.HTTP.Call, e.HTTP.Boot)
		}
		// It follows its call's event (or another request of that call).
		prev := run.Events[i-1]
		if !(prev.Call != nil && prev.Call.Index == e.HTTP.Call || prev.HTTP != nil && prev.HTTP.Call == e.HTTP.Call) {
			t.Errorf("%s: HTTP seq %d is not placed after call %d", run.Manifest.Scenario.ID, e.HTTP.Seq, e.HTTP.Call)
		}
	}
}

// TestReferenceServer records the smoke stage and two confirmation
// scenarios with the oracle against the reference server over stdio, and
// one over streamable HTTP, and stores them.
// checkCanonical fails the test for a payload of run's events that is not
// in canonical form: the capture puts every one in it (emit, addJournal),
// so that the store writes the run without decoding it again.
func checkCanonical(t *testing.T, run *traces.Run) {
	t.Helper()
	raw := reflect.TypeFor[json.RawMessage]()
	for i := range run.Events {
		ev := reflect.ValueOf(run.Events[i])
		for f := range ev.NumField() {
			p := ev.Field(f)
			if p.Kind() != reflect.Pointer || p.IsNil() || p.Elem().Kind() != reflect.Struct {
				continue
			}
			for k := range p.Elem().NumField() {
				v := p.Elem().Field(k)
				if v.Type() != raw || v.Len() == 0 {
					continue
				}
				if c, err := traces.Canonical(v.Bytes()); err == nil && !bytes.Equal(c, v.Bytes()) {
					t.Errorf("%s: event %d (%s): %s.%s is not canonical: %.80s", run.Manifest.Scenario.ID, i, run.Events[i].Kind,
						p.Elem().Type().Name(), p.Elem().Type().Field(k).Name, v.Bytes())
				}
			}
		}
	}
}

func TestReferenceServer(t *testing.T) {
	rec := New(&Options{Environ: os.Environ()})
	defer rec.Close()
	store, err := traces.Open(t.TempDir(), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer store.Close()
	stdio := referenceProfile(t, TransportStdio)
	list := append(smokeScenarios(t), goldenScenarios(t, "client-diagnosis-010", "alerts-004")...)
	for _, sc := range list {
		job := oracleJob(t, sc, stdio, 0)
		run, err := rec.Run(context.Background(), job)
		if err != nil {
			t.Fatalf("%s: %v", sc.ID, err)
		}
		checkAttribution(t, run)
		checkCanonical(t, run)
		if run.Manifest.Outcome != traces.OutcomeAnswered {
			t.Errorf("%s: outcome %s, want answered (the oracle submits the reference result): %s", sc.ID, run.Manifest.Outcome, summary(run))
		}
		if _, err := store.PutRun(run, job.Ref()); err != nil {
			t.Fatalf("%s: %v", sc.ID, err)
		}
		switch sc.ID {
		case "client-diagnosis-010":
			el := kinds(run, traces.KindElicitation)
			if len(el) != 1 || el[0].Elicitation.Action != "decline" || el[0].Elicitation.Call != 0 {
				t.Errorf("%s: want one declined elicitation on call 0: %s", sc.ID, summary(run))
			}
			for _, e := range kinds(run, traces.KindHTTP) {
				if e.HTTP.Method == "POST" && strings.Contains(e.HTTP.Path, "disconnect") {
					t.Errorf("%s: disconnect reached Central after a decline", sc.ID)
				}
			}
		case "alerts-004":
			el := kinds(run, traces.KindElicitation)
			posted := false
			for _, e := range kinds(run, traces.KindHTTP) {
				posted = posted || e.HTTP.Method == "POST" && strings.HasSuffix(e.HTTP.Path, "/alerts/clear")
			}
			// clear_alerts is a write, not destructive: the reference server
			// asks for no confirmation, the write gate (writes_env) lets it
			// through.
			if len(el) != 0 || !posted {
				t.Errorf("%s: want the clear to reach Central through the open write gate: %s", sc.ID, summary(run))
			}
		}
	}
	// The same destructive scenario, approved: the confirmation is accepted
	// and the disconnect reaches Central.
	approved := *goldenScenarios(t, "client-diagnosis-010")[0]
	approved.Elicitation = scenarios.ElicitApprove
	run, err := rec.Run(context.Background(), oracleJob(t, &approved, stdio, 0))
	if err != nil {
		t.Fatal(err)
	}
	checkAttribution(t, run)
	posted := false
	for _, e := range kinds(run, traces.KindHTTP) {
		posted = posted || e.HTTP.Method == "POST" && strings.Contains(e.HTTP.Path, "disconnect") && e.HTTP.Call == 0
	}
	if el := kinds(run, traces.KindElicitation); len(el) != 1 || el[0].Elicitation.Action != "accept" || !posted {
		t.Errorf("approved disconnect: want an accepted elicitation and the POST on call 0: %s", summary(run))
	}

	httpP := referenceProfile(t, TransportHTTP)
	run, err = rec.Run(context.Background(), oracleJob(t, list[0], httpP, 0))
	if err != nil {
		t.Fatal(err)
	}
	checkAttribution(t, run)
	if run.Manifest.Outcome != traces.OutcomeAnswered {
		t.Errorf("http: outcome %s: %s", run.Manifest.Outcome, summary(run))
	}
	checkNoProcess(t, helperBin(t, "central-mcp"))
}

// TestReuseServer runs a write scenario three times on one server and
// checks that each run sees a reset fake: the same calls, the same answers,
// one server.
func TestReuseServer(t *testing.T) {
	rec := New(&Options{Environ: os.Environ(), ReuseServer: true})
	p := referenceProfile(t, TransportStdio)
	sc := goldenScenarios(t, "alerts-004")[0] // a write: the reset must undo it
	var first string
	for i := 0; i < 3; i++ {
		run, err := rec.Run(context.Background(), oracleJob(t, sc, p, i))
		if err != nil {
			t.Fatal(err)
		}
		checkAttribution(t, run)
		var b strings.Builder
		for _, e := range run.Events {
			switch {
			case e.HTTP != nil && e.HTTP.Class == "auth":
				// The server keeps its token across runs; that is its state,
				// not the fake's.
			case e.HTTP != nil:
				fmt.Fprintf(&b, "%s %s %d|", e.HTTP.Method, e.HTTP.Path, e.HTTP.Status)
			case e.Call != nil:
				fmt.Fprintf(&b, "%s %s|", e.Call.Tool, e.Call.Result)
			}
		}
		if i == 0 {
			first = b.String()
		} else if b.String() != first {
			t.Errorf("run %d differs from run 0 on a reused server:\n%s\n%s", i, first, b.String())
		}
	}
	if n := len(rec.all); n != 1 {
		t.Errorf("%d servers for three runs with reuse, want 1", n)
	}
	rec.Close()
	checkNoProcess(t, helperBin(t, "central-mcp"))
}

// TestRetire runs a read and a write scenario of one fixture (two server
// groups) on one Recorder with reuse, retires the first group at the
// second's start and checks that the first group's server is gone before
// Close while the second's stays and is reused.
func TestRetire(t *testing.T) {
	rec := New(&Options{Environ: os.Environ(), ReuseServer: true})
	defer rec.Close()
	p := referenceProfile(t, TransportStdio)
	list := goldenScenarios(t, "alerts-001", "alerts-004")
	if len(list) != 2 || opensWriteGate(list[0]) == opensWriteGate(list[1]) {
		t.Fatalf("want a read and a write scenario, got %d", len(list))
	}
	read, write := list[0], list[1]
	if _, err := rec.Run(context.Background(), oracleJob(t, read, p, 0)); err != nil {
		t.Fatal(err)
	}
	if _, err := rec.Run(context.Background(), oracleJob(t, write, p, 0)); err != nil {
		t.Fatal(err)
	}
	if n := len(rec.all); n != 2 {
		t.Fatalf("%d servers before Retire, want 2", n)
	}
	rec.mu.Lock()
	var retired *slot
	for _, s := range rec.all {
		if s.key != rec.slotKey(p, mustFixture(t, write.Fixture), true) {
			retired = s
		}
	}
	rec.mu.Unlock()
	rec.Retire(p, write)
	rec.stopping.Wait()
	if n := len(rec.all); n != 1 || rec.all[0] == retired {
		t.Fatalf("after Retire: %d servers kept, want only the write group's", n)
	}
	select {
	case <-retired.conn.proc.done: // stopped and reaped
	default:
		t.Errorf("the retired server (pid %d) still runs", retired.conn.proc.pgid)
	}
	if _, err := rec.Run(context.Background(), oracleJob(t, write, p, 1)); err != nil {
		t.Fatal(err)
	}
	if n := len(rec.all); n != 1 {
		t.Errorf("%d servers after another run of the kept group, want 1", n)
	}
	rec.Retire(nil, nil) // nothing to go by: keeps everything
	if n := len(rec.all); n != 1 {
		t.Errorf("Retire(nil, nil) stopped a server")
	}
}

// checkNoProcess fails if a process runs the executable bin.
func checkNoProcess(t *testing.T, bin string) {
	t.Helper()
	ents, _ := os.ReadDir("/proc")
	for _, e := range ents {
		exe, err := os.Readlink(filepath.Join("/proc", e.Name(), "exe"))
		if err == nil && exe == bin {
			var pid int
			fmt.Sscan(e.Name(), &pid)
			if alive(pid) {
				t.Errorf("process %s (%s) survived", e.Name(), bin)
			}
		}
	}
}

// TestPrestart takes a server started ahead of its run (Prestart) and
// checks that, under a clock paused while servers start (a replay's), the
// run is the one an on-demand start gives, boot call included, and that
// no process outlives Close, taken or not.
func TestPrestart(t *testing.T) {
	// The clock stands still until the model's first turn, as a replay's
	// does while servers start, then moves a millisecond a reading.
	var mu sync.Mutex
	var at time.Time
	var moving bool
	now := func() time.Time {
		mu.Lock()
		defer mu.Unlock()
		if moving {
			at = at.Add(time.Millisecond)
		}
		return at
	}
	pidfile := filepath.Join(t.TempDir(), "pids")
	p := hostileProfile(t, "ok", pidfile, map[string]string{
		"HOSTILE_BOOT_URL": "{central_url}/monitoring/v2/aps", "HOSTILE_CALL_URL": "{central_url}/monitoring/v2/aps"})
	sc := hostileScenario()
	record := func(ahead bool) *traces.Run {
		mu.Lock()
		at, moving = time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC), false
		mu.Unlock()
		rec := New(&Options{Environ: os.Environ(), Now: now})
		defer rec.Close()
		if ahead {
			rec.Prestart(p, sc)
			rec.mu.Lock()
			var pending []*prestart
			for _, l := range rec.pending {
				pending = append(pending, l...)
			}
			rec.mu.Unlock()
			if len(pending) != 1 {
				t.Fatalf("%d prestarts pending, want 1", len(pending))
			}
			<-pending[0].done // started, boot call made, before the run
		}
		o := oracle(t, []llm.PlanStep{{Tool: "get_status"}}, `{"status":"ok"}`)
		m := modelFunc(func(ctx context.Context, req *llm.Request) (*llm.Response, error) {
			mu.Lock()
			moving = true
			mu.Unlock()
			return o.Generate(ctx, req)
		})
		run, err := rec.Run(context.Background(), &Job{Suite: "test", Scenario: sc, Profile: p, Model: m,
			ModelRef: traces.ModelRef{Provider: "test", Name: "oracle"}})
		if err != nil {
			t.Fatal(err)
		}
		return run
	}
	want := record(false)
	before := len(pids(t, pidfile))
	got := record(true)
	if n := len(pids(t, pidfile)) - before; n != 1 {
		t.Errorf("the run with a prestart started %d servers, want 1 (the prestarted one)", n)
	}
	boot, calls := 0, 0
	for _, e := range got.Events {
		switch {
		case e.HTTP != nil && e.HTTP.Boot:
			boot++
		case e.HTTP != nil:
			calls++
			if e.AtUS <= 0 {
				t.Errorf("a tool call's request at %d µs into the run", e.AtUS)
			}
		}
	}
	if boot != 1 || calls != 1 {
		t.Errorf("%d boot calls in the run, want 1: %s", boot, summary(got))
	}
	wb, _ := traces.Marshal(want)
	gb, _ := traces.Marshal(got)
	if string(wb) != string(gb) {
		t.Errorf("a prestarted server gives another run:\n%s\n%s", wb, gb)
	}

	// Started and never taken: stopped by Close.
	p2 := hostileProfile(t, "ignore-stdin", pidfile, nil)
	rec := New(&Options{Environ: os.Environ(), StopGrace: 100 * time.Millisecond})
	rec.Prestart(p2, sc)
	rec.mu.Lock()
	ps := rec.pending[rec.slotKey(p2, mustFixture(t, sc.Fixture), false)][0]
	rec.mu.Unlock()
	<-ps.done
	rec.Close()
	checkNoLeftovers(t, pidfile)
}

// A server started ahead whose start failed is not used: the run that
// came for it starts another, and the Recorder says so (the batch prints
// it), with why and how long the run waited; a prestart a run used is no
// failure.
func TestPrestartFailures(t *testing.T) {
	pidfile := filepath.Join(t.TempDir(), "pids")
	sc := hostileScenario()
	o := oracle(t, []llm.PlanStep{{Tool: "get_status"}}, `{"status":"ok"}`)
	for _, tc := range []struct {
		mode    string
		failed  int
		outcome traces.Outcome
	}{{"ok", 0, traces.OutcomeAnswered}, {"exit-at-start", 1, traces.OutcomeError}} {
		p := hostileProfile(t, tc.mode, pidfile, nil)
		rec := New(&Options{Environ: os.Environ()})
		rec.Prestart(p, sc)
		run, err := rec.Run(context.Background(), &Job{Suite: "test", Scenario: sc, Profile: p, Model: o,
			ModelRef: traces.ModelRef{Provider: "test", Name: "oracle"}})
		if err != nil {
			t.Fatal(err)
		}
		f := rec.PrestartFailures()
		rec.Close()
		if run.Manifest.Outcome != tc.outcome || f.N != tc.failed {
			t.Errorf("%s: outcome %s and %d prestart failure(s) %+v, want %s and %d", tc.mode, run.Manifest.Outcome, f.N, f, tc.outcome, tc.failed)
		}
		if tc.failed > 0 && (!strings.Contains(f.First, "exiting at start") || f.Longest <= 0) {
			t.Errorf("%s: the failure says %q after %s; want the server's own words and the wait", tc.mode, f.First, f.Longest)
		}
	}
	checkNoLeftovers(t, pidfile)
}

func mustFixture(t *testing.T, name string) *fakecentral.Fixture {
	t.Helper()
	fx, err := fakecentral.LoadFixture(name)
	if err != nil {
		t.Fatal(err)
	}
	return fx
}
