package scoring_test

import (
	"fmt"

	"github.com/mcpbench/bench/scenarios"
	"github.com/mcpbench/bench/scoring"
	"github.com/mcpbench/bench/traces"
)

// The flow of `bench replay`: score each run against its scenario, build
// the report against the baseline's runs with the stage's gate, write it,
// and exit with the verdict's code.
func Example() {
	list, _ := scenarios.LoadFile("testdata/scenarios.yaml")
	sc := list[len(list)-1] // alerts-001; the run never answers
	run := &traces.Run{Manifest: traces.Manifest{
		Format: traces.FormatVersion, Mode: traces.ModeReplay,
		Scenario: traces.ScenarioRef{ID: sc.ID}, Server: traces.ServerRef{Name: "reference"},
	}}
	m, err := scoring.Score(run, sc, &scoring.Options{Secrets: []string{"CANARY-PSK-7f3a9c2e51d4"}})
	if err != nil {
		panic(err)
	}
	gate, _ := scoring.ParseGate("core", map[string]any{"task_success_rate": 0.5})
	rep := scoring.BuildReport(&scoring.ReportInput{Stage: "core", Gate: gate, Current: []*scoring.RunMetrics{m}, Baseline: nil})
	fmt.Println(rep.Verdict.Status)
	// Output: regression
}
