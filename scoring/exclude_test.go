package scoring

import (
	"testing"

	"github.com/mcpbench/bench/traces"
)

// excludeRun is a scored run of scenario s with the given tokens and outcome.
func excludeRun(s string, index, tokens int, mode traces.Mode, outcome traces.Outcome) *RunMetrics {
	return &RunMetrics{Scenario: s, Suite: "alerts", Server: "reference", Model: "oracle", RunIndex: index, Mode: string(mode),
		Outcome: outcome, Stale: outcome == traces.OutcomeStale, TaskSuccess: outcome == traces.OutcomeAnswered,
		ToolSelection: outcome == traces.OutcomeAnswered, TokenUsage: tokens, Turns: 2}
}

// A recording whose first runs errored at their first step, replayed: the
// replays of those runs (stale from an older bench, or marked as replays
// of a recorded error) must not make a token_usage regression out of the
// before side counting the errors' few tokens and the after side dropping
// them. The run indices are left out of both sides and counted.
func TestCompareLeavesOutStaleAndErroredOnBothSides(t *testing.T) {
	var before []*RunMetrics
	for i := range 5 {
		if i < 2 {
			before = append(before, excludeRun("alerts-001", i, 300, traces.ModeRecord, traces.OutcomeError))
		} else {
			before = append(before, excludeRun("alerts-001", i, 2000, traces.ModeRecord, traces.OutcomeAnswered))
		}
	}
	for _, how := range []string{"stale", "recorded error"} {
		var after []*RunMetrics
		for i := range 5 {
			if i < 2 {
				r := excludeRun("alerts-001", i, 0, traces.ModeReplay, traces.OutcomeStale)
				if how == "recorded error" {
					r.Outcome, r.Stale, r.RecordedError = traces.OutcomeError, false, true
				}
				after = append(after, r)
			} else {
				after = append(after, excludeRun("alerts-001", i, 2000, traces.ModeReplay, traces.OutcomeAnswered))
			}
		}
		g := DefaultGate("")
		g.MaxStaleShare = fptr(1)
		rep := BuildReport(&ReportInput{Gate: g, Baseline: before, Current: after})
		c := rep.Comparison
		if len(c.Scenarios) != 1 {
			t.Fatalf("%s: %d scenarios", how, len(c.Scenarios))
		}
		sd := c.Scenarios[0]
		if d, _ := sd.Delta(MetricTokenUsage); d.Before != 2000 || d.After != 2000 || d.Change != Unchanged {
			t.Errorf("%s: token_usage %v -> %v (%s); want 2000 -> 2000 unchanged", how, d.Before, d.After, d.Change)
		}
		if sd.Excluded != 2 || c.Excluded != 2 || sd.BeforeRuns != 3 || sd.AfterRuns != 3 {
			t.Errorf("%s: excluded %d (total %d), runs %d/%d; want 2 left out, 3 against 3", how, sd.Excluded, c.Excluded, sd.BeforeRuns, sd.AfterRuns)
		}
		if rep.Verdict.Status != StatusPass {
			t.Errorf("%s: verdict %s %v %+v, want pass", how, rep.Verdict.Status, rep.Verdict.Reasons, rep.Verdict.Regressions)
		}
		wantErrs, wantStale := 0, 2
		if how == "recorded error" {
			wantErrs, wantStale = 2, 0
		}
		if rep.Verdict.RecordedErrors != wantErrs || rep.Verdict.StaleRuns != wantStale {
			t.Errorf("%s: verdict counts %d recorded errors, %d stale; want %d, %d", how, rep.Verdict.RecordedErrors, rep.Verdict.StaleRuns, wantErrs, wantStale)
		}
	}
}

// A current run that fails where the baseline's did not is the server's
// failure: it stays in the comparison.
func TestCompareKeepsCurrentErrors(t *testing.T) {
	var before, after []*RunMetrics
	for i := range 5 {
		before = append(before, excludeRun("alerts-001", i, 2000, traces.ModeRecord, traces.OutcomeAnswered))
		outcome := traces.OutcomeAnswered
		if i < 4 {
			outcome = traces.OutcomeError
		}
		after = append(after, excludeRun("alerts-001", i, 2000, traces.ModeReplay, outcome))
	}
	rep := BuildReport(&ReportInput{Gate: DefaultGate(""), Baseline: before, Current: after})
	if sd := rep.Comparison.Scenarios[0]; sd.Excluded != 0 || sd.AfterRuns != 5 {
		t.Errorf("excluded %d, after runs %d; want nothing left out", sd.Excluded, sd.AfterRuns)
	}
	if rep.Verdict.Status != StatusRegression {
		t.Errorf("verdict %s, want a regression (task success fell)", rep.Verdict.Status)
	}
}

// Nothing but replays of recorded errors: nothing was measured.
func TestGateAllRecordedErrorsInconclusive(t *testing.T) {
	var before, after []*RunMetrics
	for i := range 3 {
		before = append(before, excludeRun("alerts-001", i, 300, traces.ModeRecord, traces.OutcomeError))
		r := excludeRun("alerts-001", i, 300, traces.ModeReplay, traces.OutcomeError)
		r.RecordedError = true
		after = append(after, r)
	}
	rep := BuildReport(&ReportInput{Gate: DefaultGate(""), Baseline: before, Current: after})
	if rep.Verdict.Status != StatusInconclusive || rep.Verdict.RecordedErrors != 3 {
		t.Errorf("verdict %s with %d recorded errors: %v", rep.Verdict.Status, rep.Verdict.RecordedErrors, rep.Verdict.Reasons)
	}
	if g := rep.Results.Scenarios[0]; g.Runs != 0 || g.RecordedErrors != 3 || g.Stale != 0 {
		t.Errorf("scenario result: %d runs, %d recorded errors, %d stale", g.Runs, g.RecordedErrors, g.Stale)
	}
}
