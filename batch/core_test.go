package batch

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/mcpbench/bench/internal/testbin"
	"github.com/mcpbench/bench/recorder"
	"github.com/mcpbench/bench/scenarios"
	"github.com/mcpbench/bench/traces"
)

// coreRuns records the core stage once with the baseline model against
// bench's reference server and returns its scenarios and the runs as a
// replay reads them back from the store.
func coreRuns(tb testing.TB) ([]*scenarios.Scenario, []*traces.Run) {
	tb.Helper()
	all, err := scenarios.Golden()
	if err != nil {
		tb.Fatal(err)
	}
	list := scenarios.DefaultConfig().Stage("core").Select(all)
	bin := testbin.Build(tb, "./examples/central-mcp")
	p, err := recorder.ParseProfile("reference.yaml", []byte(testbin.ReferenceProfile(`["`+bin+`"]`)), "")
	if err != nil {
		tb.Fatal(err)
	}
	store, err := traces.Open(tb.TempDir(), nil)
	if err != nil {
		tb.Fatal(err)
	}
	defer store.Close()
	var specs []RunSpec
	for _, sc := range list {
		specs = append(specs, RunSpec{Scenario: sc})
	}
	var runs []*traces.Run
	_, err = (&Record{
		Options: Options{Parallel: 1}, ReuseServer: true, Store: store, Profile: p, Suite: "golden", Runs: specs,
		ModelRef: traces.ModelRef{Provider: "baseline", Name: "baseline"}, NewModel: baselineModel,
		Progress: func(r *Recorded) {
			id, err := store.Ref(r.Ref)
			if err != nil {
				tb.Fatal(err)
			}
			run, err := store.GetRun(id)
			if err != nil {
				tb.Fatal(err)
			}
			runs = append(runs, run)
		},
	}).Run(context.Background())
	if err != nil {
		tb.Fatal(err)
	}
	return list, runs
}

// A Scorer's cache changes no score: each run of the core stage scores the
// same with it (twice, the second time from what the first remembered:
// decoded arguments and responses, checked answers, tool lists) as with
// none.
func TestScorerCacheChangesNothing(t *testing.T) {
	if testing.Short() {
		t.Skip("records the core stage")
	}
	list, runs := coreRuns(t)
	cached, plain := NewScorer(list), NewScorer(list)
	plain.cache = nil
	score := func(s *Scorer, run *traces.Run) string {
		m, err := s.Score(run)
		if err != nil {
			t.Fatal(err)
		}
		b, err := json.Marshal(m)
		if err != nil {
			t.Fatal(err)
		}
		return string(b)
	}
	for pass := range 2 {
		for _, run := range runs {
			if got, want := score(cached, run), score(plain, run); got != want {
				t.Fatalf("pass %d, run %s of %s: with the cache\n%s\nwithout\n%s", pass, run.Manifest.RunID.Short(), run.Manifest.Scenario.ID, got, want)
			}
		}
	}
}

// BenchmarkScore scores real runs (coreRuns) as a replay scores them, by
// one Scorer for the batch. An op is one run.
func BenchmarkScore(b *testing.B) {
	list, runs := coreRuns(b)
	s := NewScorer(list)
	b.ResetTimer()
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		if _, err := s.Score(runs[i%len(runs)]); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkStoreRun stores real runs (coreRuns) as a replay stores its own
// (traces.Store.PutRunNoSyncRead), then reads one back as a replay reads a
// recorded run (GetRun): an op is one run stored and one read.
func BenchmarkStoreRun(b *testing.B) {
	_, runs := coreRuns(b)
	store, err := traces.Open(b.TempDir(), nil)
	if err != nil {
		b.Fatal(err)
	}
	defer store.Close()
	b.ResetTimer()
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		run := *runs[i%len(runs)]
		run.Manifest.RunIndex = i // a new run each time, as the runs of a replay are
		stored, err := store.PutRunNoSyncRead(&run)
		if err != nil {
			b.Fatal(err)
		}
		if _, err := store.GetRun(stored.Manifest.RunID); err != nil {
			b.Fatal(err)
		}
	}
}
