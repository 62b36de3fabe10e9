package batch

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mcpbench/bench/llm"
	"github.com/mcpbench/bench/recorder"
	"github.com/mcpbench/bench/replayer"
	"github.com/mcpbench/bench/scenarios"
	"github.com/mcpbench/bench/traces"

	"github.com/mcpbench/bench/internal/testbin"
)

// The tests of docs/clock.md: a server that prints the current time in a
// tool result and puts it in a query to the fake replays clean an hour
// later, and two recordings an hour apart are the same run.

// clockServer builds testdata/clockserver (a Go server: its clock cannot
// be pinned) once per test binary.
func clockServer(t *testing.T) string {
	t.Helper()
	return testbin.Build(t, "./batch/testdata/clockserver")
}

// clockScenario asks for the last hour's events; the oracle calls
// events_now once, then answers.
func clockScenario() *scenarios.Scenario {
	return &scenarios.Scenario{Format: 1, ID: "clock-001", Suite: "clock", Intent: "What happened at HQ-Building-A in the last hour?",
		Fixture: "site-a", WriteGate: scenarios.GateRead, ReferenceResult: "Nothing unusual.",
		ExpectedTools: map[string][]string{"clock": {"events_now"}}}
}

const timeRule = `normalize:
  - pattern: '\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?(Z|[+-]\d\d:\d\d)'
    placeholder: <time>
`

func clockProfile(t *testing.T, command []string, extra string) *recorder.Profile {
	t.Helper()
	q := make([]string, len(command))
	for i, c := range command {
		q[i] = fmt.Sprintf("%q", c)
	}
	p, err := recorder.ParseProfile("clock.yaml", []byte(`name: clock
command: [`+strings.Join(q, ", ")+`]
env:
  HTTPS_PROXY: "{proxy_url}"
  NO_PROXY: "127.0.0.1,localhost"
  SSL_CERT_FILE: "{ca_file}"
`+extra), "")
	if err != nil {
		t.Fatal(err)
	}
	p.Dir = t.TempDir()
	return p
}

func oracleModel(sc *scenarios.Scenario) (llm.Model, error) {
	plan, result, err := recorder.OraclePlan(sc, "clock", nil, nil)
	if err != nil {
		return nil, err
	}
	return llm.NewOracle(plan, result)
}

// recordClock records the scenario once with the oracle and returns the run.
func recordClock(t *testing.T, store *traces.Store, p *recorder.Profile) *traces.Run {
	t.Helper()
	res, err := (&Record{
		Options: Options{Parallel: 1, Recorder: recorder.Options{Environ: os.Environ()}}, Store: store, Profile: p, Suite: "golden",
		Runs: []RunSpec{{Scenario: clockScenario()}}, ModelRef: traces.ModelRef{Provider: "oracle", Name: "oracle"}, NewModel: oracleModel,
	}).Run(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if res.Recorded != 1 || len(res.SetupFailures) != 0 {
		t.Fatalf("recorded %d, setup failures %v", res.Recorded, res.SetupFailures)
	}
	refs, err := store.Refs("golden/")
	if err != nil || len(refs) != 1 {
		t.Fatalf("refs %v, %v", refs, err)
	}
	run, err := store.GetRun(refs[0].Run)
	if err != nil {
		t.Fatal(err)
	}
	if run.Manifest.Outcome != traces.OutcomeText {
		t.Fatalf("recorded outcome %s, want text; events:\n%s", run.Manifest.Outcome, eventsOf(run))
	}
	return run
}

// replayClock replays the store's recording and returns the outcome.
func replayClock(t *testing.T, store *traces.Store, p *recorder.Profile) *Replayed {
	t.Helper()
	refs, err := store.Refs("golden/")
	if err != nil {
		t.Fatal(err)
	}
	sc := clockScenario()
	var seen []*Replayed
	res, err := (&Replay{
		Options: Options{Parallel: 1, Recorder: recorder.Options{Environ: os.Environ()}}, Store: store, Profile: p, Refs: refs,
		Scenarios: map[string]*scenarios.Scenario{sc.ID: sc}, Mode: replayer.Strict, Resolution: replayer.DefaultResolution,
		Score:    scoreFor([]*scenarios.Scenario{sc}),
		Progress: func(r *Replayed) { seen = append(seen, r) },
	}).Run(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if res.Runs != 1 || len(seen) != 1 {
		t.Fatalf("replayed %d runs", res.Runs)
	}
	return seen[0]
}

// callResult is the text of the run's first tool result.
func callResult(t *testing.T, run *traces.Run) string {
	t.Helper()
	for _, e := range run.Events {
		if e.Kind == traces.KindCall {
			var r struct {
				Content []struct{ Text string } `json:"content"`
			}
			json.Unmarshal(e.Call.Result, &r)
			if len(r.Content) == 1 {
				return r.Content[0].Text
			}
		}
	}
	t.Fatalf("no tool result in the run:\n%s", eventsOf(run))
	return ""
}

func eventsOf(run *traces.Run) string {
	var b strings.Builder
	for _, e := range run.Events {
		j, _ := json.Marshal(e)
		b.WriteString(string(j) + "\n")
	}
	return b.String()
}

// withoutSide is the run's document without what is kept beside it
// (measured timings, stderr, Event.Normalized: fields tagged
// trace:"side"), to show how two runs differ.
func withoutSide(t *testing.T, run *traces.Run) string {
	t.Helper()
	c := traces.Run{Manifest: run.Manifest}
	for _, e := range run.Events {
		e.AtUS, e.Normalized = 0, nil
		switch {
		case e.Turn != nil:
			x := *e.Turn
			x.LatencyUS = 0
			e.Turn = &x
		case e.Call != nil:
			x := *e.Call
			x.LatencyUS = 0
			e.Call = &x
		case e.HTTP != nil:
			x := *e.HTTP
			x.LatencyUS = 0
			e.HTTP = &x
		case e.Initialize != nil:
			x := *e.Initialize
			x.Stderr = ""
			e.Initialize = &x
		}
		c.Events = append(c.Events, e)
	}
	b, err := traces.Marshal(&c)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// sameRun checks that two recordings of one behaviour are one run: the
// same run ID (what differs between them, times and the originals the
// rules replaced, is kept beside the run).
func sameRun(t *testing.T, a, b *traces.Run) {
	t.Helper()
	if a.Manifest.RunID != b.Manifest.RunID {
		t.Errorf("two recordings of one behaviour have run IDs %s and %s; their documents without side fields:\n%s\n%s",
			a.Manifest.RunID.Short(), b.Manifest.RunID.Short(), withoutSide(t, a), withoutSide(t, b))
	}
}

// TestGoServerClockNormalized: a Go server (its clock cannot be pinned)
// prints the time and puts it in its events window; with the profile's
// normalize rule, a recording replays clean an hour later and a recording
// made an hour later is the same run. Without the rule the replay is
// stale.
func TestGoServerClockNormalized(t *testing.T) {
	bin := clockServer(t)
	offset := filepath.Join(t.TempDir(), "offset")
	setOffset := func(d string) {
		if err := os.WriteFile(offset, []byte(d), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	p := clockProfile(t, []string{bin, "--offset-file", offset}, timeRule)
	if plan := recorder.PlanClock(p, os.Environ()); plan.Pinned() || plan.Manifest != "" {
		t.Fatalf("a Go server's clock plan: %+v", plan)
	}

	setOffset("0s")
	storeA := openStore(t)
	a := recordClock(t, storeA, p)
	if got := callResult(t, a); !strings.Contains(got, `"now":"<time>"`) {
		t.Errorf("recorded tool result %s: the time is not normalised", got)
	}
	var query string
	var originals []string
	for _, e := range a.Events {
		if e.Kind == traces.KindHTTP && strings.Contains(e.HTTP.Path, "/events") {
			query = e.HTTP.Query
			for _, o := range e.Normalized {
				originals = append(originals, o.Original)
			}
		}
	}
	// The query's two times come first (end-at, start-at: the query's
	// order), then the response body's (the fixture's events).
	if !strings.Contains(query, "start-at=<time>") || !strings.Contains(query, "end-at=<time>") || len(originals) < 2 ||
		!strings.HasPrefix(originals[0], "2026-12") && originals[0] < "2026-11-21" {
		t.Errorf("the events query %q is not normalised, or its originals %q are not kept", query, originals)
	}

	setOffset("1h")
	b := recordClock(t, openStore(t), p)
	sameRun(t, a, b)
	if r := replayClock(t, storeA, p); r.Outcome != traces.OutcomeText || len(r.Misses) != 0 {
		t.Errorf("replay an hour later: outcome %s, misses %v; want text and none", r.Outcome, r.Misses)
	}

	// The control: the same server without the rule goes stale, and two
	// recordings an hour apart are two runs.
	plain := clockProfile(t, []string{bin, "--offset-file", offset}, "")
	setOffset("0s")
	storeC := openStore(t)
	c := recordClock(t, storeC, plain)
	setOffset("1h")
	if r := replayClock(t, storeC, plain); r.Outcome != traces.OutcomeStale {
		t.Errorf("without normalize rules, replay an hour later: outcome %s, want stale", r.Outcome)
	}
	if d := recordClock(t, openStore(t), plain); d.Manifest.RunID == c.Manifest.RunID {
		t.Errorf("without normalize rules, recordings an hour apart have one ID %s: the test proves nothing", c.Manifest.RunID.Short())
	}
}

// pinnedServer returns the command of the interpreted clock server, or
// skips the test saying why it cannot run pinned here.
func pinnedServer(t *testing.T, interpreter, script string) []string {
	t.Helper()
	path, err := exec.LookPath(interpreter)
	if err != nil {
		t.Skipf("%s is not installed: the pinned-clock test of a %s server needs it", interpreter, interpreter)
	}
	abs, _ := filepath.Abs(filepath.Join("testdata", script))
	cmd := []string{path, abs}
	if plan := recorder.PlanClock(clockProfile(t, cmd, ""), os.Environ()); !plan.Pinned() {
		t.Skipf("the %s server cannot be pinned here: %s", interpreter, plan.Note)
	}
	return cmd
}

// testPinnedServer: a server bench can pin prints the fixture's time, not
// the wall clock's, so a replay at any later time is clean and recordings
// made at different times are one run; the same server with clock: wall
// goes stale (it prints the time to the microsecond).
func testPinnedServer(t *testing.T, cmd []string, fixtureNow string) {
	p := clockProfile(t, cmd, "")
	storeA := openStore(t)
	a := recordClock(t, storeA, p)
	if a.Manifest.Clock != recorder.ManifestClockPinned {
		t.Errorf("manifest clock %q, want pinned", a.Manifest.Clock)
	}
	if got := callResult(t, a); !strings.Contains(got, fixtureNow) {
		t.Fatalf("pinned server printed %s; want the fixture's time %s", got, fixtureNow)
	}
	b := recordClock(t, openStore(t), p)
	sameRun(t, a, b)
	if r := replayClock(t, storeA, p); r.Outcome != traces.OutcomeText || len(r.Misses) != 0 {
		t.Errorf("replay: outcome %s, misses %v; want text and none", r.Outcome, r.Misses)
	}

	wall := clockProfile(t, cmd, "clock: wall\n")
	storeC := openStore(t)
	c := recordClock(t, storeC, wall)
	if got := callResult(t, c); strings.Contains(got, fixtureNow) || c.Manifest.Clock != "" {
		t.Errorf("clock: wall: the server printed %s (clock %q)", got, c.Manifest.Clock)
	}
	if r := replayClock(t, storeC, wall); r.Outcome != traces.OutcomeStale {
		t.Errorf("clock: wall: replay outcome %s, want stale", r.Outcome)
	}
	if d := recordClock(t, openStore(t), wall); d.Manifest.RunID == c.Manifest.RunID {
		t.Errorf("clock: wall: two recordings have one ID %s: the test proves nothing", c.Manifest.RunID.Short())
	}
}

func TestNodeServerClockPinned(t *testing.T) {
	testPinnedServer(t, pinnedServer(t, "node", "clockserver.js"), "2026-11-20T10:00:00.000Z")
}

func TestPythonServerClockPinned(t *testing.T) {
	testPinnedServer(t, pinnedServer(t, "python3", "clockserver.py"), "2026-11-20T10:00:00+00:00")
}
