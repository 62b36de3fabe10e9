package batch

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mcpbench/bench/llm"
	"github.com/mcpbench/bench/recorder"
	"github.com/mcpbench/bench/scenarios"
	"github.com/mcpbench/bench/traces"
)

type failing struct{ err error }

func (f failing) Name() string { return "baseline" }
func (f failing) Generate(context.Context, *llm.Request) (*llm.Response, error) {
	return nil, f.err
}

func recordWith(t *testing.T, store *traces.Store, p *recorder.Profile, list []*scenarios.Scenario, runs int, reuse bool,
	model func(*scenarios.Scenario) (llm.Model, error)) (*RecordResult, []*Recorded, error) {
	t.Helper()
	var specs []RunSpec
	for _, sc := range list {
		for i := range runs {
			specs = append(specs, RunSpec{Scenario: sc, Index: i})
		}
	}
	var seen []*Recorded
	res, err := (&Record{
		Store: store, Profile: p, Suite: "golden", Runs: specs, ReuseServer: reuse,
		ModelRef: traces.ModelRef{Provider: "baseline", Name: "baseline"}, NewModel: model,
		Progress: func(r *Recorded) { seen = append(seen, r) },
	}).Run(context.Background())
	return res, seen, err
}

func fails(err error) func(*scenarios.Scenario) (llm.Model, error) {
	return func(*scenarios.Scenario) (llm.Model, error) { return failing{err}, nil }
}

func refsOf(t *testing.T, store *traces.Store) []traces.Ref {
	t.Helper()
	refs, err := store.Refs("")
	if err != nil {
		t.Fatal(err)
	}
	return refs
}

// A server that never starts stops the recording before its first run,
// naming why, and nothing is stored under a golden ref.
func TestRecordServerNeverStarts(t *testing.T) {
	store := openStore(t)
	p, list := reference(t), pick(t, "alerts-001", "nac-001")
	for _, cmd := range [][]string{{"/bin/sh", "-c", "echo no Central for me >&2; exit 1"}, {filepath.Join(t.TempDir(), "no-such-server")}} {
		p.Command = cmd
		_, _, err := recordWith(t, store, p, list, 2, false, baselineModel)
		var ns *NotStartedError
		if !errors.As(err, &ns) || !strings.Contains(err.Error(), "never started") {
			t.Errorf("%v: err = %v, want a NotStartedError", cmd, err)
		}
		if cmd[0] == "/bin/sh" && !strings.Contains(err.Error(), "no Central for me") {
			t.Errorf("the error does not show the server's stderr: %v", err)
		}
		if refs := refsOf(t, store); len(refs) != 0 {
			t.Errorf("%v: %d runs stored for a server that never started", cmd, len(refs))
		}
	}
}

// A model no one answers stops the recording with nothing stored; a
// provider's transient failure is not stored and the recording goes on;
// a provider's refusal of what the run sent is a result, stored.
func TestRecordModelFailures(t *testing.T) {
	p, list := reference(t), pick(t, "alerts-001", "nac-001")

	store := openStore(t)
	_, _, err := recordWith(t, store, p, list, 2, false, fails(&llm.APIError{Provider: "openai", StatusCode: 401, Message: "Incorrect API key provided"}))
	var mu *ModelUnavailableError
	if !errors.As(err, &mu) || !strings.Contains(err.Error(), "HTTP 401") {
		t.Errorf("401: err = %v, want a ModelUnavailableError", err)
	}
	if refs := refsOf(t, store); len(refs) != 0 {
		t.Errorf("401: %d runs stored", len(refs))
	}

	store = openStore(t)
	res, seen, err := recordWith(t, store, p, list, 2, false, fails(&llm.APIError{Provider: "openai", StatusCode: 429}))
	if err != nil || res.Recorded != 0 || len(res.NotStored[recorder.ModelTransient]) != 4 || len(seen) != 4 || seen[0].NoResult == nil {
		t.Errorf("429: %v, %+v; want 4 runs reported and not stored", err, res)
	}
	if refs := refsOf(t, store); len(refs) != 0 {
		t.Errorf("429: %d runs stored", len(refs))
	}

	store = openStore(t)
	res, _, err = recordWith(t, store, p, list, 2, false, fails(&llm.APIError{Provider: "openai", StatusCode: 400, Message: "Invalid schema"}))
	if err != nil || res.Recorded != 4 || res.ByOutcome[traces.OutcomeError] != 4 {
		t.Errorf("400: %v, %+v; want 4 error runs stored", err, res)
	}
}

// A rerun records again the stored runs that ended in an error, and says
// so; the good ones stay skipped.
func TestRecordRetriesErroredRuns(t *testing.T) {
	store := openStore(t)
	p, list := reference(t), pick(t, "alerts-001", "nac-001")
	res, _, err := recordWith(t, store, p, list[:1], 2, false, fails(errors.New("the model is broken")))
	if err != nil || res.Recorded != 2 || res.ByOutcome[traces.OutcomeError] != 2 {
		t.Fatalf("first: %v %+v", err, res)
	}
	res, seen, err := recordWith(t, store, p, list, 2, false, baselineModel)
	if err != nil || res.Recorded != 4 || res.Retried != 2 || res.Skipped != 0 {
		t.Fatalf("second: %v, %d recorded, %d retried, %d skipped; want the 2 errored runs retried and 2 new", err, res.Recorded, res.Retried, res.Skipped)
	}
	if !seen[0].Retried || seen[2].Retried {
		t.Errorf("progress does not say which runs were retried: %+v %+v", seen[0], seen[2])
	}
	for _, r := range refsOf(t, store) {
		run, err := store.GetRun(r.Run)
		if err != nil || run.Manifest.Outcome == traces.OutcomeError {
			t.Errorf("%s: %v %v, want the retried run stored in place of the error", r.Name, run.Manifest.Outcome, err)
		}
	}
	res, _, _ = recordWith(t, store, p, list, 2, false, baselineModel)
	if res.Recorded != 0 || res.Skipped != 4 {
		t.Errorf("third: %d recorded, %d skipped; want all skipped", res.Recorded, res.Skipped)
	}
}

// Under reuse, a run that fails on the model's side does not restart the
// server: one server per group however many runs fail so.
func TestRecordReuseKeepsServerAfterModelErrors(t *testing.T) {
	store := openStore(t)
	p, list := reference(t), pick(t, "alerts-001", "alerts-012", "nac-001")
	starts := filepath.Join(t.TempDir(), "starts")
	p.Command = []string{"/bin/sh", "-c", `echo started >> "$0" && exec "$1"`, starts, p.Command[0]}
	groups := map[string]bool{}
	for _, sc := range list {
		groups[recorder.ServerGroup(sc)] = true
	}
	res, _, err := recordWith(t, store, p, list, 3, true, fails(errors.New("oracle: the plan names no tool of this server")))
	if err != nil || res.Recorded != 9 {
		t.Fatalf("%v %+v", err, res)
	}
	b, _ := os.ReadFile(starts)
	if n := strings.Count(string(b), "started"); n != len(groups) {
		t.Errorf("%d servers started for %d server groups whose runs failed on the model's side", n, len(groups))
	}
}

// A replay of recorded runs that ended in an error reports them as
// recorded errors: no miss, not stale, and left out of the comparison.
func TestReplayRecordedErrors(t *testing.T) {
	store := openStore(t)
	p, list := reference(t), pick(t, "alerts-001", "nac-001")
	if _, _, err := recordWith(t, store, p, list[:1], 2, false, fails(errors.New("the model is broken"))); err != nil {
		t.Fatal(err)
	}
	if _, _, err := recordWith(t, store, p, list[1:], 2, false, baselineModel); err != nil {
		t.Fatal(err)
	}
	res, seen := replay(t, store, p, list, 1, false)
	if res.RecordedErrors != 2 || len(res.Misses) != 0 {
		t.Errorf("%d recorded errors, %d misses; want 2 and none", res.RecordedErrors, len(res.Misses))
	}
	for _, r := range seen {
		want := strings.Contains(r.Ref, "alerts-001")
		if r.RecordedError != want || (want && (r.Outcome != traces.OutcomeError || !r.Current.RecordedError || r.Current.Stale)) {
			t.Errorf("%s: recorded error %v, outcome %s, metrics %v/%v", r.Ref, r.RecordedError, r.Outcome, r.Current.RecordedError, r.Current.Stale)
		}
	}
	cur := res.Current.Results()
	for _, g := range cur.Scenarios {
		if g.Scenario == "alerts-001" && (g.RecordedErrors != 2 || g.Runs != 0 || g.Stale != 0) {
			t.Errorf("alerts-001: %d recorded errors, %d runs, %d stale", g.RecordedErrors, g.Runs, g.Stale)
		}
	}
}
