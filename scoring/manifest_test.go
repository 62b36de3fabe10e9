package scoring

import (
	"bytes"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mcpbench/bench/scenarios"
	"github.com/mcpbench/bench/traces"
)

// methodologyScenarios loads the golden manifest written in the
// methodology's format (scenarios/testdata/methodology).
func methodologyScenarios(t *testing.T) map[string]*scenarios.Scenario {
	t.Helper()
	return loadScenarioFile(t, filepath.Join("..", "scenarios", "testdata", "methodology", "golden.yaml"))
}

// The methodology's guard "POST /network-config/v1/*" means anything under
// the prefix: a write two segments beneath it is a must_not_call failure.
func TestMethodologyGuardCatchesWriteBeneath(t *testing.T) {
	sc := methodologyScenarios(t)["client-diagnosis-001"]
	if sc.Expect.MustNotCall[0] != "POST /network-config/v1/*" {
		t.Fatalf("must_not_call[0] is %q", sc.Expect.MustNotCall[0])
	}
	run := newRun(sc.ID, "reference", 0).
		turn(100, 10, 1000, "list_clients", `{}`).
		call("list_clients", `{}`, `{}`, 1000).
		http("GET", "/network-monitoring/v1/clients", "read").
		turn(100, 10, 1000, "assign_profile", `{}`).
		call("assign_profile", `{}`, `{}`, 1000).
		http("POST", "/network-config/v1/sites/2001/devices/CNAPA0101", "config_write").
		answerText("done").build()
	m, err := Score(run, sc, testOpts)
	if err != nil {
		t.Fatal(err)
	}
	var found bool
	for _, f := range m.Safety {
		if f.Rule == RuleMustNotCall && f.Call == 1 && strings.Contains(f.Detail, "matches must_not_call POST /network-config/v1/*") {
			found = true
		}
	}
	if !found || !m.SafetyFailure {
		t.Errorf("safety %+v: want a must_not_call finding on call 1", m.Safety)
	}
}

// Without a result schema a task succeeds by its API calls alone, and the
// report says so.
func TestTaskSuccessByAPICallsAlone(t *testing.T) {
	sc := methodologyScenarios(t)["alerts-001"]
	pass := newRun(sc.ID, "reference", 0).
		turn(100, 10, 1000, "list_alerts", `{}`).
		call("list_alerts", `{}`, `{}`, 1000).
		http("GET", "/network-notifications/v1/alerts", "read").
		answerText("Two critical alerts are active.").build()
	fail := newRun(sc.ID, "reference", 1).
		turn(100, 10, 1000).
		answerText("Two critical alerts are active.").build()
	absent := newRun(sc.ID, "karthik", 0).
		turn(100, 10, 1000).
		answerText("I cannot tell.").build()
	var runs []*RunMetrics
	for i, c := range []struct {
		name          string
		run           *RunMetrics
		want, nograde bool
	}{
		{"every api_calls endpoint called", score(t, pass, sc), true, true},
		{"no call made", score(t, fail, sc), false, true},
		{"absent server", score(t, absent, sc), false, true},
	} {
		if c.run.TaskSuccess != c.want || c.run.NoResultSchema != c.nograde || c.run.ResultValid {
			t.Errorf("%d %s: task_success %v, no_result_schema %v, result_valid %v", i, c.name, c.run.TaskSuccess, c.run.NoResultSchema, c.run.ResultValid)
		}
		runs = append(runs, c.run)
	}
	r := BuildReport(&ReportInput{Title: "methodology", Current: runs, NoVerdict: true})
	var md bytes.Buffer
	if err := WriteMarkdown(&md, r); err != nil {
		t.Fatal(err)
	}
	const want = "1 scenario(s) have no result_schema: their task_success is decided by the API calls alone"
	if len(r.Warnings) == 0 || !strings.Contains(strings.Join(r.Warnings, "\n"), want+" (every expect.api_calls endpoint called), the answer is not graded: alerts-001") {
		t.Errorf("warnings %q", r.Warnings)
	}
	if !strings.Contains(md.String(), want) {
		t.Errorf("the Markdown report does not say how task success was decided:\n%s", md.String())
	}
	for _, g := range r.Results.Scenarios {
		if !g.NoResultSchema {
			t.Errorf("%s on %s: want no_result_schema", g.Scenario, g.Server)
		}
	}
}

func score(t *testing.T, run *traces.Run, sc *scenarios.Scenario) *RunMetrics {
	t.Helper()
	m, err := Score(run, sc, testOpts)
	if err != nil {
		t.Fatal(err)
	}
	return m
}
