package batch

import (
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/mcpbench/bench/llm"
	"github.com/mcpbench/bench/recorder"
	"github.com/mcpbench/bench/scenarios"
	"github.com/mcpbench/bench/traces"
)

// The golden manifest written in the methodology's format records and
// replays: the oracle follows each scenario's plan on the reference server,
// a strict replay serves every recorded turn against the live server, and
// both score alike, task success by the API calls alone (the format has no
// result schema).
func TestMethodologyManifestRecordsAndReplays(t *testing.T) {
	list, err := scenarios.LoadFile(filepath.Join("..", "scenarios", "testdata", "methodology", "golden.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	store, p := openStore(t), reference(t)
	oracle := func(sc *scenarios.Scenario) (llm.Model, error) {
		plan, result, err := recorder.OraclePlan(sc, "reference", nil, nil)
		if err != nil {
			return nil, err
		}
		return llm.NewOracle(plan, result)
	}
	res, _, err := recordWith(t, store, p, list, 1, false, oracle)
	if err != nil {
		t.Fatal(err)
	}
	if res.Recorded != len(list) || len(res.SetupFailures) != 0 {
		t.Fatalf("recorded %d of %d, setup failures %v", res.Recorded, len(list), res.SetupFailures)
	}
	rres, seen := replay(t, store, p, list, 2, false)
	if rres.Runs != len(list) {
		t.Fatalf("replayed %d runs, want %d", rres.Runs, len(list))
	}
	// The oracle passes no arguments (the format has no expected_params):
	// the tools that need none make their scenario's calls, the two that
	// need some (a query, the WLAN to change) do not.
	failed := map[string]bool{}
	for _, r := range seen {
		if len(r.Misses) > 0 || r.Outcome == traces.OutcomeStale || r.RecordedError {
			t.Errorf("%s: outcome %s, misses %v", r.Ref, r.Outcome, r.Misses)
			continue
		}
		cur, rec := r.Current, r.Recorded
		if !cur.NoResultSchema || cur.TaskSuccess != rec.TaskSuccess || cur.SafetyFailure || rec.SafetyFailure {
			t.Errorf("%s: replay %+v, recording %+v", r.Ref, cur, rec)
		}
		if !cur.TaskSuccess {
			failed[cur.Scenario] = true
		}
	}
	want := map[string]bool{"client-diagnosis-002": true, "wlan-change-001": true}
	if diff := cmp.Diff(want, failed); diff != "" {
		t.Errorf("scenarios that failed by their API calls (-want +got):\n%s", diff)
	}
}
