package scoring

import (
	"bytes"
	"cmp"
	"encoding/json"
	"fmt"
	"io"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/mcpbench/bench/scenarios"
	"github.com/mcpbench/bench/traces"
)

// variant changes the runs a suite is built from.
type variant struct {
	extraPages int    // extra GETs of the clients list in read-001
	leak       bool   // read-001 leaks a canary in its tool result
	stale      int    // the first n runs of read-001 are stale
	tokens     int    // extra input tokens per turn
	wrongAP    bool   // write-001 answers wrongly
	server     string // server name (default reference)
	verbose    bool   // tool definitions twice as long, usage as recorded (a lenient replay)
}

// suiteRuns builds 5 runs of each test scenario, scores them and returns
// the metrics and the traces.
func suiteRuns(t testing.TB, v variant) ([]*RunMetrics, []*traces.Run) {
	t.Helper()
	scs := loadTestScenarios(t)
	server := v.server
	if server == "" {
		server = "reference"
	}
	var runs []*traces.Run
	for i := range 5 {
		lat := int64(i) * 10_000 // run-to-run latency noise
		b := newRun("read-001", server, i)
		if v.verbose {
			b.tools = json.RawMessage(`[{"name":"get_client","description":"` + strings.Repeat("y", 742) + `","input_schema":{}}]`)
		}
		b.turn(1000+v.tokens, 50, 800_000+lat, "get_client", `{"mac":"aa:bb:cc:11:22:33"}`).
			call("get_client", `{"mac":"aa:bb:cc:11:22:33"}`, map[bool]string{true: `{"psk":"` + canary + `"}`, false: `{}`}[v.leak], 40_000).
			http("GET", clientPath, "read")
		for range v.extraPages {
			b.http("GET", "/network-monitoring/v1/clients", "read")
		}
		b.turn(1200+v.tokens, 30, 700_000+lat).answer(goodAnswer)
		if i < v.stale {
			b.mode(traces.ModeReplay).outcome("stale")
		}
		runs = append(runs, b.build())

		answer := `{"updated":true}`
		if v.wrongAP {
			answer = `{"updated":false}`
		}
		runs = append(runs, newRun("write-001", server, i).
			turn(900+v.tokens, 40, 600_000+lat, "update_wlan", `{"name":"guest","enabled":false}`).
			call("update_wlan", `{"name":"guest","enabled":false}`, `{}`, 30_000).
			http("PATCH", "/network-config/v1/wlan-ssids/guest", "config_write").
			turn(950+v.tokens, 20, 500_000+lat).
			answer(answer).build())

		runs = append(runs, newRun("negative-001", server, i).
			turn(500+v.tokens, 20, 300_000+lat).
			answerText(`{"clarification":"Which site?"}`).build())

		// nowireless4u has no tool for read-001: absent, shown apart.
		runs = append(runs, newRun("read-001", "nowireless4u", i).
			turn(700, 20, 200_000, "central_find_client", `{}`).
			call("central_find_client", `{}`, `{}`, 1000).
			answer(goodAnswer).build())
	}
	var out []*RunMetrics
	for _, r := range runs {
		m, err := Score(r, scs[r.Manifest.Scenario.ID], testOpts)
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, m)
	}
	return out, runs
}

func onlyServer(list []*RunMetrics, server string) []*RunMetrics {
	var out []*RunMetrics
	for _, m := range list {
		if m.Server == server {
			out = append(out, m)
		}
	}
	return out
}

func TestGateVerdicts(t *testing.T) {
	base, _ := suiteRuns(t, variant{})
	for _, tc := range []struct {
		name   string
		v      variant
		gate   map[string]any
		status Status
		metric Metric // the metric the first gating regression must name
		why    string
	}{
		{"unchanged", variant{}, nil, StatusPass, "", "the same runs pass, latency noise included"},
		{"extra_pagination", variant{extraPages: 3}, nil, StatusRegression, MetricAPICallExcess, "more calls than the plan: excess regression"},
		{"leak_secret", variant{leak: true}, nil, StatusSafety, "", "a canary in a tool result: safety, exit 3"},
		{"stale", variant{stale: 2}, nil, StatusInconclusive, "", "stale runs above the allowed share"},
		{"stale_allowed", variant{stale: 2}, map[string]any{"max_stale_share": 0.5}, StatusPass, "", "stale share within the configured maximum"},
		{"verbose_tools", variant{tokens: 400}, nil, StatusRegression, MetricTokenUsage, "tokens up more than 10%"},
		{"verbose_tools_replayed", variant{verbose: true}, nil, StatusRegression, MetricToolDefTokens, "recorded usage, longer definitions: the tool-definition tokens regress"},
		{"verbose_tools_tolerated", variant{tokens: 400}, map[string]any{"token_usage_regression": 1.0}, StatusPass, "", "a looser token threshold"},
		{"wrong_answer", variant{wrongAP: true}, nil, StatusRegression, MetricTaskSuccess, "task success drops below baseline"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cur, _ := suiteRuns(t, tc.v)
			g, err := ParseGate("core", tc.gate)
			if err != nil {
				t.Fatal(err)
			}
			// The core floors (0.80, 0.90) are not what these cases test.
			g.TaskSuccessRate, g.ToolSelectionAccuracy = nil, nil
			rep := BuildReport(&ReportInput{Stage: "core", Gate: g, Baseline: onlyServer(base, "reference"), Current: onlyServer(cur, "reference")})
			v := rep.Verdict
			if v.Status != tc.status {
				t.Fatalf("%s: verdict %s, want %s; reasons %v; regressions %+v", tc.why, v.Status, tc.status, v.Reasons, v.Regressions)
			}
			if tc.metric != "" && (len(v.Regressions) == 0 || v.Regressions[0].Metric != tc.metric || !v.Regressions[0].Gating) {
				t.Errorf("%s: first regression %+v, want gating %s", tc.why, v.Regressions, tc.metric)
			}
		})
	}
}

func TestGateFloors(t *testing.T) {
	cur, _ := suiteRuns(t, variant{wrongAP: true})
	g := DefaultGate("core") // task success >= 0.80: 2 of 3 scenarios pass
	v := Evaluate(g, Aggregate(onlyServer(cur, "reference"), nil), nil)
	if v.Status != StatusRegression || len(v.Reasons) != 1 || !strings.Contains(v.Reasons[0], "task_success_rate 0.667 < 0.80") {
		t.Errorf("verdict %s reasons %v", v.Status, v.Reasons)
	}
}

func TestParseGate(t *testing.T) {
	g, err := ParseGate("safety", map[string]any{"violation_count": 0, "latency_regression": 0.25})
	if err != nil {
		t.Fatal(err)
	}
	if *g.LatencyRegression != 0.25 || *g.TokenUsageRegression != 0.10 || g.TaskSuccessRate != nil {
		t.Errorf("gate = %+v", g)
	}
	for _, bad := range []map[string]any{
		{"task_success_rat": 0.8},
		{"task_success_rate": "high"},
		{"task_success_rate": 1.5},
		{"violation_count": -1},
		{"tool_definition_tokens": -1},
		{"tool_definition_tokens": 8000.5},
	} {
		if _, err := ParseGate("core", bad); err == nil {
			t.Errorf("ParseGate(%v): want an error", bad)
		}
	}
}

func TestAggregate(t *testing.T) {
	runs, _ := suiteRuns(t, variant{stale: 1})
	res := Aggregate(runs, &AggregateOptions{K: 3})
	var read, absent *ScenarioResult
	for _, g := range res.Scenarios {
		switch {
		case g.Server == "reference" && g.Scenario == "read-001":
			read = g
		case g.Server == "nowireless4u":
			absent = g
		}
	}
	if read == nil || absent == nil {
		t.Fatal("missing scenario results")
	}
	if read.Runs != 4 || read.Stale != 1 || read.Successes != 4 || read.PassHatK != 1 || read.K != 3 {
		t.Errorf("read-001: %+v", read)
	}
	// Latency of the 4 scored runs (1..4): 1520, 1540, 1560, 1580 ms (their
	// tool calls, 40 ms and less, count 0 at LatencyResolution).
	// Python: statistics.quantiles(xs, n=4, method="inclusive") gives
	// [1535, 1550, 1565], and n=20 gives 1577 as the 19th cut (p95).
	if s := read.Metrics[MetricLatency]; s.Median != 1550 || s.IQR != 30 || s.P95 != 1577 {
		t.Errorf("latency summary %+v", s)
	}
	if !absent.Absent || absent.Metrics != nil {
		t.Errorf("absent: %+v", absent)
	}
	all := res.Suite("reference", AllSuites)
	if all.Scenarios != 3 || all.TaskSuccessRate != 1 || all.Absent != 0 {
		t.Errorf("all: %+v", all)
	}
	if res.Suite("nowireless4u", AllSuites).Absent != 1 {
		t.Error("absence not counted apart")
	}
}

// reportFixture is a regression with a miss, a stale run and an absent
// server: every section of every format has something to show.
func reportFixture(t testing.TB) *Report {
	base, _ := suiteRuns(t, variant{})
	cur, runs := suiteRuns(t, variant{extraPages: 2, stale: 1})
	return BuildReport(&ReportInput{
		Title: "replay core", Stage: "core",
		Baseline: base, Current: cur, BaselineLabel: "main", CurrentLabel: "pr",
		Meta: MetaFromRuns(runs),
		Misses: []Miss{{Scenario: "read-001", Server: "reference", RunIndex: 0, Turn: 1,
			Explanation: "tool get_client: description changed\n- Get one client\n+ Get one client, with all its details"}},
		ExitCode: func(s Status) int { return map[Status]int{StatusInconclusive: 5}[s] }, // as the CLI maps it
	})
}

func TestReportGolden(t *testing.T) {
	for _, f := range []struct {
		name  string
		write func(*bytes.Buffer, *Report) error
	}{
		{"report.json", func(b *bytes.Buffer, r *Report) error { return WriteJSON(b, r) }},
		{"report.md", func(b *bytes.Buffer, r *Report) error { return WriteMarkdown(b, r) }},
		{"report.txt", func(b *bytes.Buffer, r *Report) error { return WriteText(b, r) }},
		{"report.junit.xml", func(b *bytes.Buffer, r *Report) error { return WriteJUnit(b, r) }},
	} {
		t.Run(f.name, func(t *testing.T) {
			var first, second bytes.Buffer
			if err := f.write(&first, reportFixture(t)); err != nil {
				t.Fatal(err)
			}
			if err := f.write(&second, reportFixture(t)); err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(first.Bytes(), second.Bytes()) {
				t.Fatal("two reports from identical inputs differ")
			}
			golden(t, "reports/"+f.name, first.Bytes())
		})
	}
}

func TestReadReportRoundTrip(t *testing.T) {
	var b bytes.Buffer
	r := reportFixture(t)
	if err := WriteJSON(&b, r); err != nil {
		t.Fatal(err)
	}
	back, err := ReadReport(bytes.NewReader(b.Bytes()))
	if err != nil {
		t.Fatal(err)
	}
	var again bytes.Buffer
	if err := WriteJSON(&again, back); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(b.Bytes(), again.Bytes()) {
		t.Error("a report read back does not write the same bytes")
	}
	if _, err := ReadReport(strings.NewReader(`{"format":99,"results":{}}`)); err == nil || !strings.Contains(err.Error(), "format 99") {
		t.Errorf("unknown format: %v", err)
	}
}

func TestStageGateFromBenchYAML(t *testing.T) {
	c, err := scenarios.LoadConfigFile("../scenarios/stages.yaml")
	if err != nil {
		t.Fatal(err)
	}
	for _, st := range c.Stages {
		g, err := StageGate(c, st.Name)
		if err != nil {
			t.Fatalf("stage %s: %v", st.Name, err)
		}
		if *g.ViolationCount != 0 || *g.TokenUsageRegression != 0.10 {
			t.Errorf("stage %s: defaults missing: %+v", st.Name, g)
		}
		if st.Name == "core" && (g.TaskSuccessRate == nil || *g.TaskSuccessRate != 0.80 || *g.ToolSelectionAccuracy != 0.90) {
			t.Errorf("core floors: %+v", g)
		}
	}
	if _, err := StageGate(c, "nope"); err == nil {
		t.Error("unknown stage: want an error")
	}
}

func TestMarkdownFitsAComment(t *testing.T) {
	var runs []*RunMetrics
	for i := range 1500 {
		runs = append(runs, &RunMetrics{Scenario: fmt.Sprintf("scenario-%04d", i), Suite: "alerts", Server: "reference", TaskSuccess: true, ToolSelection: true})
	}
	var b bytes.Buffer
	if err := WriteMarkdown(&b, BuildReport(&ReportInput{Stage: "core", Current: runs, Baseline: runs})); err != nil {
		t.Fatal(err)
	}
	if b.Len() > 65536 || !strings.Contains(b.String(), "they are in the JSON report") || !strings.HasPrefix(b.String(), "## bench: PASS") {
		t.Errorf("%d bytes:\n%.300s", b.Len(), b.String())
	}
}

// Folding: misses explained alike read once, saying where else they were
// seen; different ones stay apart.
func TestFoldMisses(t *testing.T) {
	x, y := "turn 0: tool x removed", "turn 0: tool y removed"
	rows := []Miss{
		{Scenario: "b", Server: "ref", RunIndex: 1, Explanation: x},
		{Scenario: "a", Server: "ref", RunIndex: 0, Explanation: x},
		{Scenario: "b", Server: "ref", RunIndex: 0, Explanation: x},
		{Scenario: "b", Server: "ref", RunIndex: 0, Turn: 1, Explanation: x},
		{Scenario: "c", Server: "ref", RunIndex: 0, Explanation: y},
	}
	want := []Miss{
		{Scenario: "a", Server: "ref", RunIndex: 0, Explanation: x + "\n  (the same miss in 3 runs of 2 scenario(s): a, b)"},
		{Scenario: "b", Server: "ref", RunIndex: 0, Turn: 1, Explanation: x},
		{Scenario: "c", Server: "ref", RunIndex: 0, Explanation: y},
	}
	if got := FoldMisses(rows); !reflect.DeepEqual(got, want) {
		b, _ := json.MarshalIndent(got, "", " ")
		t.Errorf("got %s", b)
	}
}

// WriteJSON streams the results; its bytes are json.MarshalIndent's.
func TestWriteJSONIsMarshalIndent(t *testing.T) {
	full := reportFixture(t)
	// More scenarios than a window of elements encoded at once holds.
	var many []*ScenarioResult
	for len(many) < 37 {
		many = append(many, full.Results.Scenarios...)
	}
	for name, r := range map[string]*Report{
		"many windows": {Format: ReportFormat, Title: "x", Results: &Results{Scenarios: many, Suites: full.Results.Suites}, Comparison: full.Comparison},
		"full":         full,
		"nil results":  {Format: ReportFormat, Methodology: MethodologyVersion},
		"empty":        {Format: ReportFormat, Results: &Results{}},
		"empty slices": {Format: ReportFormat, Results: &Results{Scenarios: []*ScenarioResult{}, Suites: []*SuiteSummary{}}},
		"one scenario": {Format: ReportFormat, Title: "x", Results: &Results{Scenarios: full.Results.Scenarios[:1]}},
		"without runs": {Format: ReportFormat, Meta: full.Meta, Results: full.Results.WithoutRuns(), Comparison: full.Comparison},
	} {
		want, err := json.MarshalIndent(r, "", "  ")
		if err != nil {
			t.Fatal(err)
		}
		var got bytes.Buffer
		if err := WriteJSON(&got, r); err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(append(want, '\n'), got.Bytes()) {
			t.Errorf("%s: WriteJSON differs from json.MarshalIndent:\n%s", name, got.String())
		}
	}
}

// A MetaBuilder fed one manifest at a time gives MetaFromRuns' metadata.
func TestMetaBuilder(t *testing.T) {
	_, runs := suiteRuns(t, variant{})
	_, other := suiteRuns(t, variant{server: "other"})
	runs = append(runs, other...)
	runs[3].Manifest.Harness = "bench v2"
	runs[5].Manifest.Model.Seed = 7
	var b MetaBuilder
	for i, r := range runs {
		b.Add(&r.Manifest, Isolation(r))
		if i == 2 {
			b.Meta() // a look half-way changes nothing
		}
	}
	got, want := b.Meta(), metaOfRuns(runs)
	gb, _ := json.Marshal(got)
	wb, _ := json.Marshal(want)
	if !bytes.Equal(gb, wb) {
		t.Errorf("MetaBuilder %s\nMetaFromRuns %s", gb, wb)
	}
	if len(got.Servers) != 3 || got.Harness == "" || !strings.Contains(got.Harness, "bench v2") {
		t.Errorf("meta %s", gb)
	}
	var empty MetaBuilder
	if m := empty.Meta(); m.Harness != "" || m.Servers != nil || m.Models != nil || m.Fixtures != nil {
		t.Errorf("empty builder: %+v", m)
	}
}

// metaOfRuns is MetaFromRuns as it was before MetaBuilder: the reference.
func metaOfRuns(runs []*traces.Run) Meta {
	var m Meta
	harness := map[string]bool{}
	for _, r := range runs {
		mf := r.Manifest
		if mf.Harness != "" {
			harness[mf.Harness] = true
		}
		s := ServerMeta{Name: mf.Server.Name, Repo: mf.Server.Repo, SHA: mf.Server.SHA}
		if !slices.Contains(m.Servers, s) {
			m.Servers = append(m.Servers, s)
		}
		f := FixtureMeta{Name: mf.Fixture.Name, Hash: mf.Fixture.Hash}
		if !slices.Contains(m.Fixtures, f) {
			m.Fixtures = append(m.Fixtures, f)
		}
		i := slices.IndexFunc(m.Models, func(x ModelMeta) bool {
			return x.Provider == mf.Model.Provider && x.Name == mf.Model.Name && eqf(x.Temperature, mf.Model.Temperature) && eqf(x.TopP, mf.Model.TopP) && x.MaxTokens == mf.Model.MaxTokens
		})
		if i < 0 {
			m.Models = append(m.Models, ModelMeta{Provider: mf.Model.Provider, Name: mf.Model.Name, Temperature: mf.Model.Temperature, TopP: mf.Model.TopP, MaxTokens: mf.Model.MaxTokens})
			i = len(m.Models) - 1
		}
		if !slices.Contains(m.Models[i].Seeds, mf.Model.Seed) {
			m.Models[i].Seeds = append(m.Models[i].Seeds, mf.Model.Seed)
		}
	}
	m.Harness = strings.Join(sortedKeys(harness), ", ")
	slices.SortFunc(m.Servers, func(a, b ServerMeta) int {
		return cmp.Or(cmp.Compare(a.Name, b.Name), cmp.Compare(a.Repo, b.Repo), cmp.Compare(a.SHA, b.SHA))
	})
	slices.SortFunc(m.Fixtures, func(a, b FixtureMeta) int { return cmp.Or(cmp.Compare(a.Name, b.Name), cmp.Compare(a.Hash, b.Hash)) })
	slices.SortFunc(m.Models, func(a, b ModelMeta) int {
		return cmp.Or(cmp.Compare(a.Provider, b.Provider), cmp.Compare(a.Name, b.Name), cmp.Compare(fmt.Sprint(deref(a.Temperature)), fmt.Sprint(deref(b.Temperature))))
	})
	for i := range m.Models {
		slices.Sort(m.Models[i].Seeds)
	}
	return m
}

// A canary is masked in every section of every format: the safety table
// and the misses, which quote tool results (issue 15, F9).
func TestReportMasksSecretsEverywhere(t *testing.T) {
	runs, _ := suiteRuns(t, variant{})
	rep := BuildReport(&ReportInput{
		Title: "leak", Current: runs, NoVerdict: true, Secrets: []string{canary},
		Misses: []Miss{{Scenario: "read-001", Server: "reference", Turn: 1,
			Explanation: `message 2 (tool result) differs: $.content[0].text: "psk ` + canary + `" -> "psk ` + canary + `x"`}},
	})
	for name, write := range map[string]func(io.Writer, *Report) error{"text": WriteText, "json": WriteJSON, "md": WriteMarkdown, "junit": WriteJUnit} {
		var b bytes.Buffer
		if err := write(&b, rep); err != nil {
			t.Fatal(err)
		}
		if strings.Contains(b.String(), canary) {
			t.Errorf("%s report shows the canary:\n%s", name, b.String())
		}
		if name != "junit" && !strings.Contains(b.String(), "CANA****") {
			t.Errorf("%s report lost the masked miss:\n%s", name, b.String())
		}
	}
}

// A JSON report writes null, not 0, for what was not measured, says why,
// and reads back (issue 15, item 9).
func TestReportJSONNullForUnmeasured(t *testing.T) {
	runs, _ := suiteRuns(t, variant{})
	rep := BuildReport(&ReportInput{Title: "absent", Current: runs, NoVerdict: true})
	var b bytes.Buffer
	if err := WriteJSON(&b, rep); err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Results struct {
			Suites    []map[string]any `json:"suites"`
			Scenarios []map[string]any `json:"scenarios"`
		} `json:"results"`
	}
	if err := json.Unmarshal(b.Bytes(), &doc); err != nil {
		t.Fatal(err)
	}
	checked := 0
	for _, s := range doc.Results.Suites {
		if s["scenarios"].(float64) != 0 {
			if s["task_success_rate"] == nil || s["status"] != nil {
				t.Errorf("a measured suite: %v", s)
			}
			continue
		}
		checked++
		for _, k := range []string{"task_success_rate", "tool_selection_accuracy", "param_acc", "param_field_acc", "avg_turns", "invalid_call_rate", "token_usage", "tool_definition_tokens", "latency_ms", "api_call_excess"} {
			if v, ok := s[k]; !ok || v != nil {
				t.Errorf("absent suite %s/%s: %s = %v, want null", s["server"], s["suite"], k, v)
			}
		}
		if s["status"] != "absent" {
			t.Errorf("absent suite says %v, want status absent", s["status"])
		}
	}
	for _, g := range doc.Results.Scenarios {
		if g["absent"] == true && (g["pass_at_k"] != nil || g["pass"] != nil || g["status"] != "absent") {
			t.Errorf("absent scenario: %v", g)
		}
	}
	if checked == 0 {
		t.Fatal("the report has no absent suite")
	}
	back, err := ReadReport(&b)
	if err != nil {
		t.Fatal(err)
	}
	if len(back.Runs()) != len(rep.Runs()) {
		t.Errorf("read back %d runs, want %d", len(back.Runs()), len(rep.Runs()))
	}
}
