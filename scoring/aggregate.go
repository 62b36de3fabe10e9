package scoring

import (
	"cmp"
	"slices"
	"strings"

	"github.com/mcpbench/bench/internal/cores"
	"github.com/mcpbench/bench/scenarios"
	"github.com/mcpbench/bench/traces"
)

// Metric names a per-run metric that aggregates and compares.
type Metric string

// The metrics, in the order reports list them. The names are the
// methodology's (task_success, tool_selection_accuracy, token_usage,
// latency_ms, api_call_count, safety_failure) and the evaluation guide's
// (param_acc, invalid_call_rate, turns as avg_turns); bench's own have
// names neither uses.
const (
	MetricTaskSuccess     Metric = "task_success"
	MetricToolSelection   Metric = "tool_selection_accuracy"
	MetricParamAcc        Metric = "param_acc"
	MetricParamFieldAcc   Metric = "param_field_acc"
	MetricTokenUsage      Metric = "token_usage"
	MetricToolDefTokens   Metric = "tool_definition_tokens"
	MetricToolDefShare    Metric = "tool_definition_share"
	MetricLatency         Metric = "latency_ms"
	MetricAPICallCount    Metric = "api_call_count"
	MetricAPICallExcess   Metric = "api_call_excess"
	MetricOutsideReads    Metric = "outside_reads"
	MetricTurns           Metric = "turns"
	MetricInvalidCalls    Metric = "invalid_calls"
	MetricInvalidCallRate Metric = "invalid_call_rate"
	MetricSafetyFailure   Metric = "safety_failure"
)

// AllMetrics lists every metric in report order.
func AllMetrics() []Metric { return slices.Clone(metricOrder) }

// metricOrder lists every metric in report order.
var metricOrder = []Metric{
	MetricTaskSuccess, MetricToolSelection, MetricParamAcc, MetricParamFieldAcc, MetricTokenUsage, MetricToolDefTokens, MetricToolDefShare,
	MetricLatency, MetricAPICallCount, MetricAPICallExcess, MetricOutsideReads, MetricTurns, MetricInvalidCalls, MetricInvalidCallRate, MetricSafetyFailure,
}

// HigherIsBetter reports the direction of improvement.
func (m Metric) HigherIsBetter() bool {
	switch m {
	case MetricTaskSuccess, MetricToolSelection, MetricParamAcc, MetricParamFieldAcc:
		return true
	}
	return false
}

// Binary reports metrics whose per-run value is 0 or 1.
func (m Metric) Binary() bool {
	switch m {
	case MetricTaskSuccess, MetricToolSelection, MetricParamAcc, MetricSafetyFailure:
		return true
	}
	return false
}

func b2f(b bool) float64 {
	if b {
		return 1
	}
	return 0
}

// Value returns the run's value of m.
func (rm *RunMetrics) Value(m Metric) float64 {
	switch m {
	case MetricTaskSuccess:
		return b2f(rm.TaskSuccess)
	case MetricToolSelection:
		return b2f(rm.ToolSelection)
	case MetricParamAcc:
		return b2f(rm.ParamAcc)
	case MetricParamFieldAcc:
		return rm.ParamFieldAcc
	case MetricTokenUsage:
		return float64(rm.TokenUsage)
	case MetricToolDefTokens:
		return float64(rm.ToolDefTokens)
	case MetricToolDefShare:
		return rm.ToolDefShare
	case MetricLatency:
		return rm.LatencyMS
	case MetricAPICallCount:
		return float64(rm.APICallCount)
	case MetricAPICallExcess:
		return float64(rm.APICallExcess)
	case MetricOutsideReads:
		return float64(rm.OutsideReads)
	case MetricTurns:
		return float64(rm.Turns)
	case MetricInvalidCalls:
		return float64(rm.InvalidCalls)
	case MetricInvalidCallRate:
		return rm.InvalidCallRate
	case MetricSafetyFailure:
		return b2f(rm.SafetyFailure)
	}
	return 0
}

// AggregateOptions configures Aggregate. A nil value means defaults.
type AggregateOptions struct {
	// K is the k of pass@k and pass^k. A scenario with fewer scored runs
	// has none (they are refused, not computed for a smaller k). Default
	// 5, the methodology's minimum number of runs.
	K int
	// Runs is the number of runs per scenario the stage asks for
	// (scenarios.Stage.Runs). A scenario with fewer scored runs is
	// under-run: every report warns of it, and a release page refuses it.
	// Default DefaultRuns.
	Runs int
}

// DefaultK is the k of pass@k and pass^k when none is set.
const DefaultK = 5

// DefaultRuns is the number of runs per scenario the methodology asks
// ("each scenario runs ≥5 times").
const DefaultRuns = 5

// ScenarioResult aggregates the runs of one scenario on one server.
type ScenarioResult struct {
	Scenario string `json:"scenario"`
	Suite    string `json:"suite"`
	Category string `json:"category"`
	Server   string `json:"server"`
	// Absent: the server has no coverage for the scenario.
	Absent bool `json:"absent,omitempty"`
	// NoResultSchema: the scenario's runs were scored without a result
	// schema, their task success by expect.api_calls alone.
	NoResultSchema bool `json:"no_result_schema,omitempty"`
	// Runs counts the scored runs; Stale and Diverged count replay
	// outcomes (stale runs are not scored); RecordedErrors counts the
	// replays of recorded runs that ended in an error (not scored, and
	// not stale, whatever the replay's outcome).
	Runs           int `json:"runs"`
	Stale          int `json:"stale,omitempty"`
	Diverged       int `json:"diverged,omitempty"`
	RecordedErrors int `json:"recorded_errors,omitempty"`
	// RunsAsked is the runs per scenario asked (AggregateOptions.Runs);
	// UnderRun: fewer scored runs than that, on a covered scenario.
	RunsAsked int  `json:"runs_asked"`
	UnderRun  bool `json:"under_run,omitempty"`
	// Successes counts task successes; Pass is a strict majority of them.
	Successes int  `json:"successes"`
	Pass      bool `json:"pass"`
	// K is the k asked of pass@k and pass^k. With fewer scored runs than K
	// they are not computed: KRefused, and the JSON report writes null.
	K        int     `json:"k"`
	KRefused bool    `json:"k_refused,omitempty"`
	PassAtK  float64 `json:"pass_at_k"`
	PassHatK float64 `json:"pass_hat_k"`
	// InvalidCallRate is the scenario's invalid calls over its turns, both
	// summed over its scored runs (the evaluation guide's ratio of sums).
	InvalidCallRate float64 `json:"invalid_call_rate"`
	// SafetyFailures counts runs with a safety failure (absent runs too).
	SafetyFailures   int                `json:"safety_failures"`
	GateAbsentWrites int                `json:"gate_absent_writes"`
	Metrics          map[Metric]Summary `json:"metrics,omitempty"`
	RunMetrics       []*RunMetrics      `json:"run_metrics,omitempty"`

	// runs summarises each run, in RunMetrics' order; an Aggregator that
	// does not keep runs keeps these only.
	runs []runSummary
}

// runSummary is what the aggregation and the renderers read of a run,
// every renderer but the JSON report's run_metrics: its sort keys, its
// replay and coverage flags, its metric values, its gate-absent writes and
// its safety findings. Some 260 bytes, where a RunMetrics with its strings
// and lists is about 1 KB.
type runSummary struct {
	runIndex   int
	model      string
	runID      string
	values     [numMetrics]float64 // in the order of Metrics
	gateAbsent int
	safety     []SafetyFinding
	// Flags: stale, absent, diverged, task success, safety failure;
	// errored (outcome error), replaying a recorded error.
	stale, absent, diverged, taskSuccess, safetyFailure bool
	errored, recordedError                              bool
	// apiLayer: judged from the API layer (RunMetrics.GroundTruth "api"),
	// with the endpoints its tool calls reached and its scenario's plan;
	// server is the run's own, pooled or not.
	apiLayer             bool
	endpoints, templates []string
	server               string
	// How the run ended, and its malformed calls and calls of tools the
	// server does not have: the model's failures the warnings name.
	outcome                traces.Outcome
	malformed, unknownTool int
}

// numMetrics is len(metricOrder).
const numMetrics = 15

// metricIndex is the position of each metric in metricOrder.
var metricIndex = func() map[Metric]int {
	if len(metricOrder) != numMetrics {
		panic("scoring: numMetrics is not len(metricOrder)")
	}
	m := map[Metric]int{}
	for i, x := range metricOrder {
		m[x] = i
	}
	return m
}()

func summarize(rm *RunMetrics, model string) runSummary {
	s := runSummary{
		runIndex: rm.RunIndex, model: model, runID: rm.RunID, gateAbsent: len(rm.GateAbsent), safety: rm.Safety,
		stale: rm.Stale, absent: rm.Absent, diverged: rm.Diverged, taskSuccess: rm.TaskSuccess,
		safetyFailure: rm.SafetyFailure, errored: rm.Outcome == traces.OutcomeError, recordedError: rm.RecordedError,
		apiLayer: rm.GroundTruth == "api", endpoints: rm.ToolEndpoints, templates: rm.PlanTemplates, server: rm.Server,
		outcome: rm.Outcome, malformed: rm.MalformedCalls, unknownTool: rm.UnknownToolCalls,
	}
	if s.recordedError {
		s.stale = false // a recorded error, not a miss
	}
	for i, m := range metricOrder {
		s.values[i] = rm.Value(m)
	}
	return s
}

// scored reports whether a run counts in the metrics: not stale, not
// absent, not the replay of a recorded error.
func (s *runSummary) scored() bool { return !s.stale && !s.absent && !s.recordedError }

// summaries returns the scenario's run summaries: the ones it was built
// with, or for results built by hand or read back from JSON, summaries of
// its RunMetrics.
func (g *ScenarioResult) summaries() []runSummary {
	if len(g.runs) > 0 || len(g.RunMetrics) == 0 {
		return g.runs
	}
	out := make([]runSummary, len(g.RunMetrics))
	for i, rm := range g.RunMetrics {
		out[i] = summarize(rm, rm.Model)
	}
	return out
}

// SuiteSummary aggregates one server's scenarios of one suite (or "all")
// by the one aggregation rule (docs/methodology.md, "Aggregation"):
// scenarios are the unit, and a scenario's repeats are averaged first.
// Every figure is over the scenarios' values (ScenarioResult.Value): rates
// are their mean, token usage and latency are summarised over them (mean,
// p95, ...), invalid_call_rate is their invalid calls over their turns.
// The scoreboard, the results page and the gate read these figures.
type SuiteSummary struct {
	Server         string `json:"server"`
	Suite          string `json:"suite"`
	Scenarios      int    `json:"scenarios"`
	Absent         int    `json:"absent"`
	Runs           int    `json:"runs"`
	Stale          int    `json:"stale"`
	RecordedErrors int    `json:"recorded_errors,omitempty"`
	// UnderRun counts covered scenarios with fewer scored runs than asked.
	UnderRun          int     `json:"under_run,omitempty"`
	TaskSuccessRate   float64 `json:"task_success_rate"`
	ToolSelectionRate float64 `json:"tool_selection_accuracy"`
	ParamAcc          float64 `json:"param_acc"`
	ParamFieldAcc     float64 `json:"param_field_acc"`
	AvgTurns          float64 `json:"avg_turns"`
	InvalidCallRate   float64 `json:"invalid_call_rate"`
	APICallCount      float64 `json:"api_call_count"`
	APICallExcess     float64 `json:"api_call_excess"`
	OutsideReads      float64 `json:"outside_reads"`
	ToolDefShare      float64 `json:"tool_definition_share"`
	// SafetyFailures counts runs with a safety failure (absent ones too);
	// Failed is set by any: "a single failure fails the suite regardless of
	// other metrics".
	SafetyFailures   int     `json:"safety_failures"`
	Failed           bool    `json:"failed"`
	GateAbsentWrites int     `json:"gate_absent_writes"`
	Tokens           Summary `json:"token_usage"`
	ToolDefTokens    Summary `json:"tool_definition_tokens"`
	Latency          Summary `json:"latency_ms"`
}

// figures maps each metric the summary holds as one figure to its field.
func (s *SuiteSummary) figures() map[Metric]*float64 {
	return map[Metric]*float64{
		MetricTaskSuccess: &s.TaskSuccessRate, MetricToolSelection: &s.ToolSelectionRate,
		MetricParamAcc: &s.ParamAcc, MetricParamFieldAcc: &s.ParamFieldAcc, MetricTurns: &s.AvgTurns,
		MetricInvalidCallRate: &s.InvalidCallRate, MetricAPICallCount: &s.APICallCount,
		MetricAPICallExcess: &s.APICallExcess, MetricOutsideReads: &s.OutsideReads, MetricToolDefShare: &s.ToolDefShare,
	}
}

// Value returns the suite's figure for m: the figure the scoreboard shows
// and the gate's floors read (the mean for a summarised metric).
func (s *SuiteSummary) Value(m Metric) float64 {
	if f, ok := s.figures()[m]; ok {
		return *f
	}
	switch m {
	case MetricTokenUsage:
		return s.Tokens.Mean
	case MetricToolDefTokens:
		return s.ToolDefTokens.Mean
	case MetricLatency:
		return s.Latency.Mean
	case MetricSafetyFailure:
		return b2f(s.Failed)
	}
	return 0
}

// AllSuites is the Suite of the summary over every suite.
const AllSuites = "all"

// Results is the aggregation of a set of runs.
type Results struct {
	Scenarios []*ScenarioResult `json:"scenarios"`
	Suites    []*SuiteSummary   `json:"suites"`
}

// WithoutRuns returns a copy of r whose scenario results keep their
// summaries but not their per-run metrics: the data of a results page,
// whose runs stay in the trace store (and its pack).
func (r *Results) WithoutRuns() *Results {
	out := &Results{Suites: r.Suites}
	for _, sc := range r.Scenarios {
		c := *sc
		c.RunMetrics = nil
		out.Scenarios = append(out.Scenarios, &c)
	}
	return out
}

// Aggregate groups runs by (server, scenario) and summarises them per
// scenario and per suite. Output is sorted by server, suite and scenario
// id; the summary over all suites comes last for each server.
func Aggregate(runs []*RunMetrics, opts *AggregateOptions) *Results {
	a := NewAggregator(opts)
	a.KeepRuns = true
	for _, rm := range runs {
		a.Add(rm)
	}
	return a.Results()
}

// Aggregator aggregates runs one at a time, as they are scored, into the
// results Aggregate gives for the same runs. Unless KeepRuns is set it
// keeps a short summary of each run rather than its metrics: the results
// then hold no RunMetrics (so Report.Runs is empty and a JSON report has no
// run_metrics), while every summary, the scoreboard, the results page and
// the safety rows are the same. What it holds grows with the runs by that
// summary only.
type Aggregator struct {
	// KeepRuns keeps every run's metrics in the results' RunMetrics.
	KeepRuns bool
	// PoolServers groups runs by scenario alone, their server left out (as
	// Compare pools each side).
	PoolServers bool

	k      int
	runs   int // asked per scenario
	groups map[aggKey]*ScenarioResult
	models map[string]string // one copy of each model name
	spent  bool              // Results was called
}

type aggKey struct{ server, scenario string }

// NewAggregator returns an empty Aggregator.
func NewAggregator(opts *AggregateOptions) *Aggregator {
	k, runs := DefaultK, DefaultRuns
	if opts != nil && opts.K > 0 {
		k = opts.K
	}
	if opts != nil && opts.Runs > 0 {
		runs = opts.Runs
	}
	return &Aggregator{k: k, runs: runs, groups: map[aggKey]*ScenarioResult{}, models: map[string]string{}}
}

// Add adds a run. It keeps rm itself only with KeepRuns.
func (a *Aggregator) Add(rm *RunMetrics) {
	if a.spent {
		panic("scoring: Aggregator.Add after Results")
	}
	server := rm.Server
	if a.PoolServers {
		server = ""
	}
	key := aggKey{server, rm.Scenario}
	g := a.groups[key]
	if g == nil {
		g = &ScenarioResult{Scenario: rm.Scenario, Suite: rm.Suite, Category: rm.Category, Server: server}
		a.groups[key] = g
	}
	g.NoResultSchema = g.NoResultSchema || rm.NoResultSchema
	if a.KeepRuns {
		g.RunMetrics = append(g.RunMetrics, rm)
		return
	}
	model, ok := a.models[rm.Model]
	if !ok {
		model = rm.Model
		a.models[model] = model
	}
	g.runs = append(g.runs, summarize(rm, model))
}

// ResultsOf returns the Results of each aggregator, computed side by side
// (each on a core of its own, as the machine has them): a replay's sides
// are the last work between its last run and its report.
func ResultsOf(aggs ...*Aggregator) []*Results {
	out := make([]*Results, len(aggs))
	cores.Each(len(aggs), func(i int) { out[i] = aggs[i].Results() })
	return out
}

// Results aggregates the runs added. It is called once, after the last
// Add: the Aggregator is then spent.
func (a *Aggregator) Results() *Results {
	if a.spent {
		panic("scoring: Aggregator.Results called twice")
	}
	a.spent = true
	res := &Results{}
	for _, g := range a.groups {
		if a.KeepRuns {
			slices.SortFunc(g.RunMetrics, func(a, b *RunMetrics) int {
				return cmp.Or(cmp.Compare(a.RunIndex, b.RunIndex), cmp.Compare(a.Model, b.Model), cmp.Compare(a.RunID, b.RunID))
			})
			g.runs = make([]runSummary, len(g.RunMetrics))
			for i, rm := range g.RunMetrics {
				g.runs[i] = summarize(rm, rm.Model)
			}
		} else {
			// The comparison and the sequence RunMetrics would be sorted
			// with: ties (one run under two refs) fall the same way.
			slices.SortFunc(g.runs, func(a, b runSummary) int {
				return cmp.Or(cmp.Compare(a.runIndex, b.runIndex), cmp.Compare(a.model, b.model), cmp.Compare(a.runID, b.runID))
			})
		}
	}
	a.absentByReach()
	for _, g := range a.groups {
		finishScenario(g, a.k, a.runs)
		res.Scenarios = append(res.Scenarios, g)
	}
	slices.SortFunc(res.Scenarios, func(a, b *ScenarioResult) int {
		return cmp.Or(cmp.Compare(a.Server, b.Server), cmp.Compare(a.Suite, b.Suite), cmp.Compare(a.Scenario, b.Scenario))
	})
	res.Suites = summarizeSuites(res.Scenarios)
	return res
}

func finishScenario(g *ScenarioResult, k, asked int) {
	absent := len(g.runs) > 0
	for i := range g.runs {
		rs := &g.runs[i]
		if rs.safetyFailure {
			g.SafetyFailures++
		}
		g.GateAbsentWrites += rs.gateAbsent
		if rs.diverged {
			g.Diverged++
		}
		if !rs.absent {
			absent = false
		}
		if rs.recordedError {
			g.RecordedErrors++
			continue
		}
		if rs.stale {
			g.Stale++
			continue
		}
		if rs.absent {
			continue
		}
		g.Runs++
		if rs.taskSuccess {
			g.Successes++
		}
	}
	g.Absent = absent
	g.RunsAsked = asked
	g.UnderRun = !g.Absent && g.Runs < asked
	g.Pass = g.Runs > 0 && 2*g.Successes > g.Runs
	g.K = k
	g.KRefused = g.Runs < k
	if !g.KRefused {
		g.PassAtK = PassAtK(g.Runs, g.Successes, k)
		g.PassHatK = PassHatK(g.Runs, g.Successes, k)
	}
	if g.Runs == 0 {
		return
	}
	g.Metrics = map[Metric]Summary{}
	for _, m := range metricOrder {
		g.Metrics[m] = Summarize(g.values(m))
	}
	g.InvalidCallRate = ratio(g.Metrics[MetricInvalidCalls].Mean, g.Metrics[MetricTurns].Mean)
}

// ratio is a/b, 0 when b is 0.
func ratio(a, b float64) float64 {
	if b == 0 {
		return 0
	}
	return round(a / b)
}

// Value is the scenario's value of m, the unit every suite figure and
// comparison is made of: the mean over its scored runs, except
// invalid_call_rate, its invalid calls over its turns (the ratio of the
// means, which is the ratio of the sums).
func (g *ScenarioResult) Value(m Metric) float64 {
	if m == MetricInvalidCallRate {
		return ratio(g.scenarioMean(MetricInvalidCalls), g.scenarioMean(MetricTurns))
	}
	return g.scenarioMean(m)
}

// scenarioMean is the mean of m over a scenario's scored runs.
func (g *ScenarioResult) scenarioMean(m Metric) float64 {
	if s, ok := g.Metrics[m]; ok {
		return s.Mean
	}
	return 0
}

func (g *ScenarioResult) values(m Metric) []float64 {
	i, ok := metricIndex[m]
	var xs []float64
	for _, rs := range g.summaries() {
		if rs.scored() {
			if ok {
				xs = append(xs, rs.values[i])
			} else {
				xs = append(xs, 0) // as RunMetrics.Value gives an unknown metric
			}
		}
	}
	return xs
}

// suiteFigure is the suite's figure of m over the scenarios gs (each with
// scored runs): the mean of their values, except invalid_call_rate, the
// sum of their mean invalid calls over the sum of their mean turns. The
// summaries and the comparison compute every suite figure with it.
func suiteFigure(m Metric, gs []*ScenarioResult) float64 {
	if m == MetricInvalidCallRate {
		var inv, turns []float64
		for _, g := range gs {
			inv = append(inv, g.scenarioMean(MetricInvalidCalls))
			turns = append(turns, g.scenarioMean(MetricTurns))
		}
		return ratio(Mean(inv), Mean(turns))
	}
	xs := make([]float64, len(gs))
	for i, g := range gs {
		xs[i] = g.Value(m)
	}
	return round(Mean(xs))
}

func summarizeSuites(list []*ScenarioResult) []*SuiteSummary {
	type key struct{ server, suite string }
	groups := map[key][]*ScenarioResult{}
	for _, g := range list {
		groups[key{g.Server, g.Suite}] = append(groups[key{g.Server, g.Suite}], g)
		groups[key{g.Server, AllSuites}] = append(groups[key{g.Server, AllSuites}], g)
	}
	var out []*SuiteSummary
	for k, gs := range groups {
		s := &SuiteSummary{Server: k.server, Suite: k.suite}
		var scored []*ScenarioResult
		for _, g := range gs {
			s.SafetyFailures += g.SafetyFailures
			s.GateAbsentWrites += g.GateAbsentWrites
			s.Stale += g.Stale
			s.RecordedErrors += g.RecordedErrors
			if g.Absent {
				s.Absent++
				continue
			}
			if g.UnderRun {
				s.UnderRun++
			}
			if g.Runs == 0 {
				continue
			}
			s.Scenarios++
			s.Runs += g.Runs
			scored = append(scored, g)
		}
		s.Failed = s.SafetyFailures > 0
		if len(scored) > 0 {
			for m, dst := range s.figures() {
				*dst = suiteFigure(m, scored)
			}
			s.Tokens = summarizeScenarios(MetricTokenUsage, scored)
			s.ToolDefTokens = summarizeScenarios(MetricToolDefTokens, scored)
			s.Latency = summarizeScenarios(MetricLatency, scored)
		}
		out = append(out, s)
	}
	slices.SortFunc(out, func(a, b *SuiteSummary) int {
		// "all" last within a server.
		return cmp.Or(cmp.Compare(a.Server, b.Server), cmp.Compare(b2f(a.Suite == AllSuites), b2f(b.Suite == AllSuites)), cmp.Compare(a.Suite, b.Suite))
	})
	return out
}

// summarizeScenarios summarises the scenarios' values of m: a suite's mean
// and p95 of token usage or latency are over its scenarios, each the mean
// of its runs.
func summarizeScenarios(m Metric, gs []*ScenarioResult) Summary {
	xs := make([]float64, len(gs))
	for i, g := range gs {
		xs[i] = g.Value(m)
	}
	return Summarize(xs)
}

// Suite returns the summary of suite on server, or nil.
func (r *Results) Suite(server, suite string) *SuiteSummary {
	for _, s := range r.Suites {
		if s.Server == server && s.Suite == suite {
			return s
		}
	}
	return nil
}

// Servers lists the servers in the results, sorted.
func (r *Results) Servers() []string {
	var out []string
	for _, g := range r.Scenarios {
		if !slices.Contains(out, g.Server) {
			out = append(out, g.Server)
		}
	}
	slices.Sort(out)
	return out
}

// absentByReach decides, from data, which scenarios judged from the API
// layer are absent for their server: those whose plan (expect.api_calls)
// no tool call of any of the server's runs, in any scenario and whichever
// rule judged it, ever reached.
// A scenario with no plan applies to every server. Their runs are marked
// absent, as a scenario without the server's expectations is.
func (a *Aggregator) absentByReach() {
	// By the run's own server: pooled sides (PoolServers) keep them apart.
	// Each distinct endpoint once: every run of a server reaches mostly the
	// same few, and matching each scenario's templates against every run's
	// made this quadratic in the runs (120 ms at 2,200).
	seen := map[string]map[string]bool{}
	reach := map[string][]string{} // server -> endpoints its tool calls reached
	for _, g := range a.groups {
		for _, rs := range g.runs {
			set := seen[rs.server]
			if set == nil {
				set = map[string]bool{}
				seen[rs.server] = set
			}
			for _, ep := range rs.endpoints {
				if !set[ep] {
					set[ep] = true
					reach[rs.server] = append(reach[rs.server], ep)
				}
			}
		}
	}
	absent := map[string]bool{} // server + "\x00" + scenario
	for key, g := range a.groups {
		for i := range g.runs {
			rs := &g.runs[i]
			if !rs.apiLayer || len(rs.templates) == 0 {
				continue
			}
			k := rs.server + "\x00" + key.scenario
			v, seen := absent[k]
			if !seen {
				v = !reaches(reach[rs.server], rs.templates)
				absent[k] = v
			}
			if v {
				rs.absent = true
			}
		}
		for _, rm := range g.RunMetrics {
			if rm.GroundTruth == "api" && absent[rm.Server+"\x00"+key.scenario] {
				rm.Absent = true
			}
		}
	}
}

// reaches reports whether any endpoint ("METHOD /path") matches any of
// the templates.
func reaches(endpoints, templates []string) bool {
	var ts []scenarios.Endpoint
	for _, t := range templates {
		if e, err := scenarios.ParseTemplate(t); err == nil {
			ts = append(ts, e)
		}
	}
	for _, ep := range endpoints {
		method, path, _ := strings.Cut(ep, " ")
		for _, t := range ts {
			if t.Match(method, path) {
				return true
			}
		}
	}
	return false
}
