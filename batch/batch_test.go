package batch

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/mcpbench/bench/fakecentral"
	"github.com/mcpbench/bench/llm"
	"github.com/mcpbench/bench/llm/baseline"
	"github.com/mcpbench/bench/recorder"
	"github.com/mcpbench/bench/replayer"
	"github.com/mcpbench/bench/scenarios"
	"github.com/mcpbench/bench/scoring"
	"github.com/mcpbench/bench/traces"

	"github.com/mcpbench/bench/internal/testbin"
)

// TestMain removes the programs built for the tests.
func TestMain(m *testing.M) {
	code := m.Run()
	testbin.RemoveAll()
	os.Exit(code)
}

// reference builds examples/central-mcp, bench's own real MCP server, once
// per test binary and returns a profile that launches it over stdio.
func reference(t *testing.T) *recorder.Profile {
	t.Helper()
	refBin := testbin.Build(t, "./examples/central-mcp")
	p, err := recorder.ParseProfile("reference.yaml", []byte(testbin.ReferenceProfile(`["`+refBin+`"]`)), "")
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// pick returns golden scenarios by id: three fixtures' worth, so that
// replays have several server groups.
func pick(t *testing.T, ids ...string) []*scenarios.Scenario {
	t.Helper()
	all, err := scenarios.Golden()
	if err != nil {
		t.Fatal(err)
	}
	var out []*scenarios.Scenario
	for _, id := range ids {
		i := slices.IndexFunc(all, func(s *scenarios.Scenario) bool { return s.ID == id })
		if i < 0 {
			t.Fatalf("no golden scenario %s", id)
		}
		out = append(out, all[i])
	}
	return out
}

func baselineModel(sc *scenarios.Scenario) (llm.Model, error) {
	fx, err := fakecentral.LoadFixture(sc.Fixture)
	if err != nil {
		return nil, err
	}
	return baseline.New(&baseline.Options{Now: fx.Now}), nil
}

func record(t *testing.T, store *traces.Store, p *recorder.Profile, list []*scenarios.Scenario, runs int, force bool) (*RecordResult, []*Recorded) {
	t.Helper()
	var specs []RunSpec
	for _, sc := range list {
		for i := range runs {
			specs = append(specs, RunSpec{Scenario: sc, Index: i})
		}
	}
	var seen []*Recorded
	res, err := (&Record{
		Options: Options{Parallel: 2}, Store: store, Profile: p, Suite: "golden", Runs: specs,
		ModelRef: traces.ModelRef{Provider: "baseline", Name: "baseline"}, NewModel: baselineModel, Force: force,
		Progress: func(r *Recorded) { seen = append(seen, r) },
	}).Run(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	return res, seen
}

func scoreFor(list []*scenarios.Scenario) func(*traces.Run) (*scoring.RunMetrics, error) {
	byID := map[string]*scenarios.Scenario{}
	for _, sc := range list {
		byID[sc.ID] = sc
	}
	return func(run *traces.Run) (*scoring.RunMetrics, error) {
		return scoring.Score(run, byID[run.Manifest.Scenario.ID], nil)
	}
}

// openStore opens a store in a temporary directory, closed with the test.
func openStore(t *testing.T) *traces.Store {
	t.Helper()
	s, err := traces.Open(t.TempDir(), nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

var testScenarios = []string{"alerts-001", "nac-001", "firmware-001", "client-diagnosis-001"}

// A recording stores every run under its ref, reports them in order, and
// resumes: what is stored is skipped unless forced.
func TestRecordResumes(t *testing.T) {
	store := openStore(t)
	p, list := reference(t), pick(t, testScenarios...)
	res, seen := record(t, store, p, list, 2, false)
	if res.Recorded != 8 || res.Skipped != 0 || len(res.SetupFailures) != 0 {
		t.Fatalf("recorded %d, skipped %d, setup failures %v; want 8 runs recorded", res.Recorded, res.Skipped, res.SetupFailures)
	}
	for i, r := range seen {
		if r.Index != i {
			t.Errorf("progress %d is run %d: results must arrive in run order", i, r.Index)
		}
		if _, err := store.Ref(r.Ref); err != nil {
			t.Errorf("%s: not stored: %v", r.Ref, err)
		}
	}
	res, _ = record(t, store, p, list, 2, false)
	if res.Recorded != 0 || res.Skipped != 8 {
		t.Errorf("second recording: %d recorded, %d skipped; want all skipped", res.Recorded, res.Skipped)
	}
	res, _ = record(t, store, p, list[:1], 1, true)
	if res.Recorded != 1 {
		t.Errorf("forced: %d recorded, want 1", res.Recorded)
	}
}

// replay replays every recorded run of the store and returns the results
// in delivery order.
func replay(t *testing.T, store *traces.Store, p *recorder.Profile, list []*scenarios.Scenario, parallel int, reuse bool) (*ReplayResult, []*Replayed) {
	t.Helper()
	refs, err := store.Refs("golden/")
	if err != nil {
		t.Fatal(err)
	}
	sel := map[string]*scenarios.Scenario{}
	for _, sc := range list {
		sel[sc.ID] = sc
	}
	var seen []*Replayed
	res, err := (&Replay{
		Options: Options{Parallel: parallel}, Store: store, Profile: p, Refs: refs, Scenarios: sel, ReuseServer: reuse,
		Mode: replayer.Strict, Resolution: replayer.DefaultResolution, Score: scoreFor(list), ScoreRecorded: true,
		Progress: func(r *Replayed) { seen = append(seen, r) },
	}).Run(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	return res, seen
}

// A replay's results do not depend on how many workers replay it: the same
// runs, in ref order, with the same replay IDs. (Reuse may change them: a
// reused server has its token already, so it makes fewer calls.)
func TestReplayIndependentOfParallel(t *testing.T) {
	store := openStore(t)
	p, list := reference(t), pick(t, testScenarios...)
	record(t, store, p, list, 2, false)
	type row struct {
		Ref     string
		Outcome traces.Outcome
		ID      string
	}
	for _, reuse := range []bool{false, true} {
		var want []row
		for _, parallel := range []int{1, 3} {
			res, seen := replay(t, store, p, list, parallel, reuse)
			var got []row
			for i, r := range seen {
				if r.Index != i {
					t.Errorf("parallel %d: result %d is ref %d; want ref order", parallel, i, r.Index)
				}
				if len(r.Misses) > 0 {
					t.Errorf("parallel %d reuse %v: %s missed: %s", parallel, reuse, r.Ref, r.Misses[0].Explanation)
				}
				got = append(got, row{r.Ref, r.Outcome, r.Manifest.RunID.String()})
			}
			if res.Runs != 8 || len(res.Current.Results().Scenarios) != 4 || len(res.RecordedPooled.Results().Scenarios) != 4 {
				t.Fatalf("parallel %d: %d runs, %d current, %d recorded scenarios; want 8 runs of 4 scenarios", parallel, res.Runs,
					len(res.Current.Results().Scenarios), len(res.RecordedPooled.Results().Scenarios))
			}
			// The runs' time in tool calls is some of the span of the
			// runs, on each worker.
			if c, span := res.Times.Calls, res.Times.LastEnd.Sub(res.Times.FirstStart); c <= 0 || c > time.Duration(parallel)*span {
				t.Errorf("parallel %d reuse %v: %s in tool calls over a span of %s", parallel, reuse, c, span)
			}
			if want == nil {
				want = got
				continue
			}
			if d := cmp.Diff(want, got); d != "" {
				t.Errorf("parallel %d reuse %v differs from parallel 1 (-want +got):\n%s", parallel, reuse, d)
			}
		}
	}
}

// An error stops the replay and is returned; of several, the earliest
// ref's. Nothing of the workers outlives Run.
func TestReplayStopsAtError(t *testing.T) {
	store := openStore(t)
	p, list := reference(t), pick(t, testScenarios...)
	record(t, store, p, list, 1, false)
	refs, _ := store.Refs("golden/")
	// A ref to a run the store does not hold reads as an error.
	refs[2].Run = traces.Hash([]byte("missing"))
	sel := map[string]*scenarios.Scenario{}
	for _, sc := range list {
		sel[sc.ID] = sc
	}
	before := runtime.NumGoroutine()
	_, err := (&Replay{
		Options: Options{Parallel: 2}, Store: store, Profile: p, Refs: refs, Scenarios: sel,
		Mode: replayer.Strict, Score: scoreFor(list),
	}).Run(context.Background())
	if !errors.Is(err, traces.ErrNotFound) || !strings.Contains(err.Error(), refs[2].Name) {
		t.Fatalf("err = %v, want the missing run of %s", err, refs[2].Name)
	}
	waitGoroutines(t, before)
}

// Cancelling stops a replay with an error that says so.
func TestReplayCancelled(t *testing.T) {
	store := openStore(t)
	p, list := reference(t), pick(t, testScenarios...)
	record(t, store, p, list, 2, false)
	refs, _ := store.Refs("golden/")
	sel := map[string]*scenarios.Scenario{}
	for _, sc := range list {
		sel[sc.ID] = sc
	}
	ctx, cancel := context.WithCancel(context.Background())
	n := 0
	before := runtime.NumGoroutine()
	_, err := (&Replay{
		Options: Options{Parallel: 2}, Store: store, Profile: p, Refs: refs, Scenarios: sel,
		Mode: replayer.Strict, Score: scoreFor(list),
		Progress: func(*Replayed) {
			if n++; n == 2 {
				cancel()
			}
		},
	}).Run(ctx)
	if !errors.Is(err, context.Canceled) || !strings.Contains(err.Error(), "interrupted") {
		t.Fatalf("err = %v, want an interruption", err)
	}
	waitGoroutines(t, before)
}

// waitGoroutines fails if goroutines started since before are still
// running once the servers' own goroutines have had time to end.
func waitGoroutines(t *testing.T, before int) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for runtime.NumGoroutine() > before+2 { // the test's own HTTP keep-alives may linger
		if time.Now().After(deadline) {
			buf := make([]byte, 1<<16)
			t.Fatalf("%d goroutines after Run, %d before:\n%s", runtime.NumGoroutine(), before, buf[:runtime.Stack(buf, true)])
		}
		runtime.Gosched()
	}
}

// assign keeps each server group on one worker, the largest groups first
// to the least loaded worker; a queue holds its groups one after the other,
// in the order of their first items, and marks each group's first item.
func TestAssign(t *testing.T) {
	items := []item{{index: 0, group: "a"}, {index: 1, group: "b"}, {index: 2, group: "a"}, {index: 3, group: "c"},
		{index: 4, group: "a"}, {index: 5, group: ""}, {index: 6, group: "b"}}
	queues := assign(items, 2)
	type q struct {
		Index int
		Group string
		First bool
	}
	var got [][]q
	for _, list := range queues {
		var row []q
		for _, it := range list {
			row = append(row, q{it.index, it.group, it.first})
		}
		got = append(got, row)
	}
	want := [][]q{
		{{0, "a", true}, {2, "a", false}, {4, "a", false}, {5, "", true}},
		{{1, "b", true}, {6, "b", false}, {3, "c", true}},
	}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("queues (-want +got):\n%s", d)
	}
}

// With server reuse a recording starts one server per server group, not
// one more for each run whose group's server is busy with the run before.
func TestRecordReuseStartsOneServerPerGroup(t *testing.T) {
	store := openStore(t)
	// Four server groups, one met again after another.
	p, list := reference(t), pick(t, "alerts-001", "alerts-012", "alerts-002", "incident-response-001", "wlan-change-003")
	starts := filepath.Join(t.TempDir(), "starts")
	p.Command = []string{"/bin/sh", "-c", `echo started >> "$0" && exec "$1"`, starts, p.Command[0]}
	var specs []RunSpec
	groups := map[string]bool{}
	for _, sc := range list {
		groups[recorder.ServerGroup(sc)] = true
		for i := range 2 {
			specs = append(specs, RunSpec{Scenario: sc, Index: i})
		}
	}
	res, err := (&Record{Store: store, Profile: p, Suite: "golden", Runs: specs, ReuseServer: true,
		ModelRef: traces.ModelRef{Provider: "baseline", Name: "baseline"}, NewModel: baselineModel}).Run(context.Background())
	if err != nil || res.Recorded != len(specs) {
		t.Fatalf("recorded %v, %v", res, err)
	}
	b, _ := os.ReadFile(starts)
	if n := strings.Count(string(b), "started"); n != len(groups) {
		t.Errorf("%d servers started for %d server groups", n, len(groups))
	}
}

// meeting is a model whose first turn waits until every run of a batch is
// in its first turn at once, or the run's context ends.
type meeting struct {
	llm.Model
	met   chan struct{}
	mu    *sync.Mutex
	count *int
	want  int
}

func (m meeting) Generate(ctx context.Context, req *llm.Request) (*llm.Response, error) {
	if len(req.Messages) == 1 {
		m.mu.Lock()
		if *m.count++; *m.count == m.want {
			close(m.met)
		}
		m.mu.Unlock()
		select {
		case <-m.met:
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
	return m.Model.Generate(ctx, req)
}

// With server reuse and several workers, a recording still runs a server
// group's runs at once (the recorder starts a server for each), not one
// group to a worker: two runs of one scenario with --parallel 2 meet.
func TestRecordReuseParallelRunsAtOnce(t *testing.T) {
	store := openStore(t)
	p, list := reference(t), pick(t, "alerts-001")
	var mu sync.Mutex
	count := 0
	met := make(chan struct{})
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second) // a bound on the failure, never reached when it passes
	defer cancel()
	res, err := (&Record{Store: store, Profile: p, Suite: "golden", ReuseServer: true, Options: Options{Parallel: 2},
		Runs:     []RunSpec{{Scenario: list[0], Index: 0}, {Scenario: list[0], Index: 1}},
		ModelRef: traces.ModelRef{Provider: "baseline", Name: "baseline"},
		NewModel: func(sc *scenarios.Scenario) (llm.Model, error) {
			m, err := baselineModel(sc)
			return meeting{Model: m, met: met, mu: &mu, count: &count, want: 2}, err
		}}).Run(ctx)
	if err != nil || res.Recorded != 2 {
		t.Fatalf("recorded %+v, %v", res, err)
	}
	select {
	case <-met:
	default:
		t.Error("the two runs never ran at once")
	}
}
