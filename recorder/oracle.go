package recorder

import (
	"encoding/json"
	"fmt"
	"sort"

	"github.com/mcpbench/bench/llm"
	"github.com/mcpbench/bench/scenarios"
)

// OracleCovers splits list into the scenarios the oracle has a plan for on
// the profile named profile, another exposure of variantOf (empty: none):
// those with expected tools for it (Scenario.ExpectedName), or that call no
// tool, and the ids of the others, absent for it: there the oracle would
// answer having called nothing.
func OracleCovers(list []*scenarios.Scenario, profile, variantOf string) (covered []*scenarios.Scenario, absent []string) {
	for _, sc := range list {
		if _, ok := sc.ToolsFor(sc.ExpectedName(profile, variantOf)); ok {
			covered = append(covered, sc)
		} else {
			absent = append(absent, sc.ID)
		}
	}
	return covered, absent
}

// OraclePlan is the reference plan of sc on server: its expected tools in
// order, each with the arguments its parameter rules name exactly (equals,
// or the first of one_of, or the example of a rule that names no value),
// and the scenario's reference result. It is what
// the oracle model follows (llm.NewOracle). A step whose tool the server
// reaches only through one of routes (its profile's adapter.routes) carries
// those calls too; a route that refuses writes (reads_only) is taken only
// for a tool readOnly says is annotated read-only (nil: none is).
func OraclePlan(sc *scenarios.Scenario, server string, routes []Route, readOnly func(tool string) bool) ([]llm.PlanStep, json.RawMessage, error) {
	tools, _ := sc.ToolsFor(server)
	var plan []llm.PlanStep
	for _, t := range tools {
		args := map[string]any{}
		rules := sc.ParamsFor(server, t)
		names := make([]string, 0, len(rules))
		for n := range rules {
			names = append(names, n)
		}
		sort.Strings(names)
		for _, n := range names {
			switch r := rules[n]; {
			case r == nil:
			case r.Equals != nil:
				args[n] = r.Equals
			case len(r.OneOf) > 0:
				args[n] = r.OneOf[0]
			case r.Example != nil:
				args[n] = r.Example
			}
		}
		b, err := json.Marshal(normalizeYAML(args))
		if err != nil {
			return nil, nil, fmt.Errorf("scenario %s: oracle arguments for %s: %w", sc.ID, t, err)
		}
		alt, err := via(routes, t, b, readOnly != nil && readOnly(t))
		if err != nil {
			return nil, nil, fmt.Errorf("scenario %s: oracle route to %s: %w", sc.ID, t, err)
		}
		plan = append(plan, llm.PlanStep{Tool: t, Arguments: b, Via: alt})
	}
	var result json.RawMessage
	if sc.ReferenceResult != nil {
		result = mustJSON(normalizeYAML(sc.ReferenceResult))
		if result == nil {
			return nil, nil, fmt.Errorf("scenario %s: reference_result is not representable as JSON", sc.ID)
		}
	}
	return plan, result, nil
}
