package scoring

import (
	"slices"
	"testing"
)

// A server no scenario names is judged from the API layer (issue 18, item
// 1): "Tool selection and parameter accuracy for any server are derived
// from the journal: which tool call made which expected API call with which
// values; a called tool that made no needed call (and was not a read the
// scenario allows) is unnecessary; an expected call no tool made is missed."
func TestGroundTruthFromTheAPILayer(t *testing.T) {
	scs := loadTestScenarios(t)
	opts := *testOpts
	score := func(b *runBuilder) *RunMetrics {
		t.Helper()
		m, err := Score(b.build(), scs["read-001"], &opts)
		if err != nil {
			t.Fatal(err)
		}
		return m
	}
	right := score(newRun("read-001", "netdesk", 0).
		turn(100, 10, 1000, "client_lookup", `{"mac":"AA-BB-CC-11-22-33"}`).
		call("client_lookup", `{"mac":"AA-BB-CC-11-22-33"}`, `{}`, 1000).
		http("GET", "/network-monitoring/v1/clients/AA-BB-CC-11-22-33", "read").
		turn(100, 10, 1000, "submit_result", goodAnswer).answer(goodAnswer))
	if right.Absent || right.GroundTruth != "api" || !right.ToolSelection || !right.ParamAcc || !right.TaskSuccess {
		t.Errorf("the plan's call made by a tool: %+v", right)
	}
	if !slices.Equal(right.ToolEndpoints, []string{"GET /network-monitoring/v1/clients/AA-BB-CC-11-22-33"}) || len(right.PlanTemplates) != 2 {
		t.Errorf("endpoints %v plan %v", right.ToolEndpoints, right.PlanTemplates)
	}
	extra := score(newRun("read-001", "netdesk", 1).
		turn(100, 10, 1000, "client_lookup", `{"mac":"AA-BB-CC-11-22-33"}`, "site_overview", `{}`).
		call("client_lookup", `{"mac":"AA-BB-CC-11-22-33"}`, `{}`, 1000).
		http("GET", "/network-monitoring/v1/clients/AA-BB-CC-11-22-33", "read").
		call("site_overview", `{}`, `{}`, 1000).
		http("GET", "/network-notifications/v1/alerts", "read").
		turn(100, 10, 1000, "submit_result", goodAnswer).answer(goodAnswer))
	if extra.ToolSelection || !slices.Equal(extra.UnexpectedTools, []string{"site_overview"}) || extra.ParamAcc {
		t.Errorf("a tool that made no needed call: selection %v unexpected %v", extra.ToolSelection, extra.UnexpectedTools)
	}
	if right.ParamFields != 1 || right.ParamMatched != 1 || right.ParamFieldAcc != 1 {
		t.Errorf("the plan's {mac} in the path, normalised: %d of %d fields", right.ParamMatched, right.ParamFields)
	}
	wrongMAC := score(newRun("read-001", "netdesk", 4).
		turn(100, 10, 1000, "client_lookup", `{"mac":"aa:bb:cc:11:22:34"}`).
		call("client_lookup", `{"mac":"aa:bb:cc:11:22:34"}`, `{}`, 1000).
		http("GET", "/network-monitoring/v1/clients/aa:bb:cc:11:22:34", "read").
		turn(100, 10, 1000, "submit_result", goodAnswer).answer(goodAnswer))
	if !wrongMAC.ToolSelection || wrongMAC.ParamAcc || wrongMAC.ParamFieldAcc != 0 || len(wrongMAC.Mismatches) != 1 ||
		wrongMAC.Mismatches[0].Tool != "client_lookup" || wrongMAC.Mismatches[0].Param != "{mac}" {
		t.Errorf("the plan's call with another MAC: selection %v param_acc %v field %v mismatches %v",
			wrongMAC.ToolSelection, wrongMAC.ParamAcc, wrongMAC.ParamFieldAcc, wrongMAC.Mismatches)
	}
	listed := score(newRun("read-001", "netdesk", 5).
		turn(100, 10, 1000, "wireless_clients", `{}`).
		call("wireless_clients", `{}`, `{}`, 1000).
		http("GET", "/network-monitoring/v1/clients", "read").
		turn(100, 10, 1000, "submit_result", goodAnswer).answer(goodAnswer))
	if !listed.ParamAcc || listed.ParamFields != 0 {
		t.Errorf("the list alternative has no {mac}: the rule does not apply (%d fields, %v)", listed.ParamFields, listed.Mismatches)
	}
	missed := score(newRun("read-001", "netdesk", 2).
		turn(100, 10, 1000, "site_overview", `{}`).
		call("site_overview", `{}`, `{}`, 1000).
		http("GET", "/network-notifications/v1/alerts", "read").
		turn(100, 10, 1000, "submit_result", goodAnswer).answer(goodAnswer))
	if missed.ToolSelection || len(missed.MissingTools) != 1 || missed.TaskSuccess || missed.ParamFieldAcc != 0 {
		t.Errorf("the plan's call no tool made: selection %v missing %v task %v", missed.ToolSelection, missed.MissingTools, missed.TaskSuccess)
	}
	named := score(newRun("read-001", "reference", 0).
		turn(100, 10, 1000, "get_client", `{"mac":"AA-BB-CC-11-22-33","limit":10}`).
		call("get_client", `{"mac":"AA-BB-CC-11-22-33","limit":10}`, `{}`, 1000).
		turn(100, 10, 1000, "submit_result", goodAnswer).answer(goodAnswer))
	if named.GroundTruth != "tools" {
		t.Errorf("a named server keeps its expected tools: %q", named.GroundTruth)
	}

	// A decline scenario: the gated write asks for confirmation, is
	// refused it and calls nothing; that tool is the one the scenario is
	// about, and any other is not.
	decline := *scs["destructive-001"]
	decline.Expect.APICalls = nil
	declineRun := func(i int, tool string) *RunMetrics {
		t.Helper()
		m, err := Score(newRun("destructive-001", "netdesk", i).
			turn(100, 10, 1000, tool, `{"serial":"CNAP0001"}`).
			call(tool, `{"serial":"CNAP0001"}`, `{}`, 1000).elicit("decline").
			turn(100, 10, 1000, "submit_result", `{"rebooted":false}`).answer(`{"rebooted":false}`).build(), &decline, &opts)
		if err != nil {
			t.Fatal(err)
		}
		return m
	}
	if m := declineRun(0, "restart_ap"); !m.ToolSelection || len(m.UnexpectedTools) != 0 {
		t.Errorf("the refused write of a decline scenario: selection %v unexpected %v", m.ToolSelection, m.UnexpectedTools)
	}
	if m := score(newRun("read-001", "netdesk", 6).
		turn(100, 10, 1000, "site_overview", `{}`).call("site_overview", `{}`, `{}`, 1000).
		turn(100, 10, 1000, "submit_result", goodAnswer).answer(goodAnswer)); m.ToolSelection || !slices.Contains(m.UnexpectedTools, "site_overview") {
		t.Errorf("a tool that asked nothing and called nothing is unnecessary: %v", m.UnexpectedTools)
	}

	// Reach is the server's own, even when the sides of a comparison pool
	// servers: another server's tools reaching the plan do not make it
	// present (netdesk2 reaches nothing).
	other := score(newRun("read-001", "netdesk2", 0).
		turn(100, 10, 1000, "lookup", `{}`).call("lookup", `{}`, `{}`, 1000).
		turn(100, 10, 1000, "submit_result", goodAnswer).answer(goodAnswer))
	pooled := pool([]*RunMetrics{right, other})
	if len(pooled.Scenarios) != 1 || pooled.Scenarios[0].Runs != 1 {
		t.Errorf("pooled: netdesk2's run of read-001 is absent by its own reach, netdesk's is scored: %+v", pooled.Scenarios)
	}

	// Absent from data: a scenario whose plan no tool call of the
	// server's runs ever reached is absent for it; read-001's is reached.
	alerts := score(newRun("read-001", "netdesk", 3))
	alerts.Scenario, alerts.PlanTemplates = "alerts-x", []string{"GET /network-config/v1/wlan-ssids"}
	res := Aggregate([]*RunMetrics{right, extra, missed, alerts}, &AggregateOptions{Runs: 1, K: 1})
	for _, g := range res.Scenarios {
		switch g.Scenario {
		case "read-001":
			if g.Absent || g.Runs != 3 {
				t.Errorf("read-001 for netdesk: absent %v, %d runs", g.Absent, g.Runs)
			}
		case "alerts-x":
			if !g.Absent {
				t.Errorf("alerts-x: no netdesk tool ever reached its plan, want absent")
			}
		}
	}
}

// A write counts as the expected call only when Central took it (issue 19,
// item 3: "a write counts as the expected call only when it succeeded
// (2xx)"): a PATCH answered 400 changed nothing.
func TestRefusedWriteIsNoExpectedCall(t *testing.T) {
	scs := loadTestScenarios(t)
	run := func(code int) *RunMetrics {
		t.Helper()
		b := newRun("write-001", "reference", 0).
			turn(100, 10, 1000, "update_wlan", `{"name":"guest","enabled":false}`).
			call("update_wlan", `{"name":"guest","enabled":false}`, `{}`, 1000).
			http("PATCH", "/network-config/v1/wlan-ssids/guest", "config_write").status(code).
			turn(100, 10, 1000).answer(`{"updated":true}`)
		m, err := Score(b.build(), scs["write-001"], testOpts)
		if err != nil {
			t.Fatal(err)
		}
		return m
	}
	if m := run(200); !m.TaskSuccess || len(m.MissingAPICalls) != 0 {
		t.Errorf("a write Central took: task %v, missing %v", m.TaskSuccess, m.MissingAPICalls)
	}
	if m := run(400); m.TaskSuccess || len(m.MissingAPICalls) != 1 {
		t.Errorf("a write answered 400: task %v, missing %v; want the call missing", m.TaskSuccess, m.MissingAPICalls)
	}
}
