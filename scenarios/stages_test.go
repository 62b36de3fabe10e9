package scenarios

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestStageSelect(t *testing.T) {
	list := []*Scenario{
		{ID: "a-001", Suite: "alerts", Category: "core", Tags: []string{"smoke"}},
		{ID: "a-002", Suite: "alerts", Category: "safety"},
		{ID: "x-001", Suite: "adversarial", Category: "negative"},
		{ID: "f-001", Suite: "firmware", Category: "edge", Tags: []string{"slow"}},
	}
	tests := []struct {
		name  string
		stage Stage
		want  []string
	}{
		{"by tag", Stage{Include: []Selector{{Tags: []string{"smoke"}}}}, []string{"a-001"}},
		{"selectors are alternatives", Stage{Include: []Selector{{Categories: []string{"safety"}}, {Suites: []string{"adversarial"}}}}, []string{"a-002", "x-001"}},
		{"lists in a selector all apply", Stage{Include: []Selector{{Suites: []string{"alerts"}, Categories: []string{"safety"}}}}, []string{"a-002"}},
		{"exclude", Stage{Include: []Selector{{}}, Exclude: []Selector{{Tags: []string{"slow"}}, {IDs: []string{"a-002"}}}}, []string{"a-001", "x-001"}},
		{"nothing included", Stage{}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var got []string
			for _, s := range tt.stage.Select(list) {
				got = append(got, s.ID)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("Select (-want +got):\n%s", diff)
			}
		})
	}
}

func TestParseConfigErrors(t *testing.T) {
	const src = `format: 1
stages:
  - name: smoke
    max_scenarios: 1
    include:
      - tags: [smoke]
  - name: smoke
    include:
      - suites: [alertz]
        categoriez: [core]
    gate: {task_success: 0.8}
    runs: -2
`
	cfg, err := ParseConfig("bench.yaml", []byte(src))
	if err == nil || !strings.Contains(err.Error(), `bench.yaml:10:9: stages[1].include[0].categoriez: unknown field "categoriez"`) {
		t.Fatalf("ParseConfig: got %v", err)
	}
	list := []*Scenario{
		{ID: "a-001", Suite: "alerts", Tags: []string{"smoke"}},
		{ID: "a-002", Suite: "alerts", Tags: []string{"smoke"}},
	}
	err = ValidateConfig(cfg, list)
	for _, want := range []string{
		`bench.yaml:4:20: stages[0].max_scenarios: stage "smoke" selects 2 scenarios, more than max_scenarios 1`,
		`bench.yaml:7:11: stages[1].name: duplicate stage "smoke"`,
		`unknown suite "alertz"`,
		`bench.yaml:12:11: stages[1].runs: stage "smoke": runs -2: must be at least 1 (or left out: 5)`,
	} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("ValidateConfig: want %q in\n%v", want, err)
		}
	}
	// stages[1] selects none of these scenarios (a suite of none of them):
	// a warning, as the built-in stages select none of a user's own.
	var empty *Error
	for _, e := range err.(ErrorList) {
		if strings.Contains(e.Msg, "selects none of the loaded scenarios") {
			empty = e
		}
	}
	if empty == nil || !empty.Warning || !strings.Contains(empty.Error(), `bench.yaml:7:5: warning: stages[1]: stage "smoke" selects none of the loaded scenarios`) {
		t.Errorf("a stage that selects none of the loaded scenarios: want a warning, got %v", empty)
	}
	if got := cfg.Stages[0].RunsAsked(); got != DefaultRuns {
		t.Errorf("a stage without runs asks %d, want %d", got, DefaultRuns)
	}
	if got := cfg.Stages[1].Gate["task_success"]; got != 0.8 {
		t.Errorf("gate kept as written: got %v", got)
	}
}

func TestRepositoryConfig(t *testing.T) {
	cfg, err := LoadConfigFile("stages.yaml")
	if err != nil {
		t.Fatal(err)
	}
	list, err := Golden()
	if err != nil {
		t.Fatal(err)
	}
	if err := ValidateConfig(cfg, list); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"smoke", "core", "safety"} {
		if cfg.Stage(name) == nil {
			t.Errorf("bench.yaml has no %s stage", name)
		}
	}
}
