package scoring

import (
	"cmp"
	"math"
	"slices"
)

// CompareOptions configures Compare. A nil value means defaults.
type CompareOptions struct {
	// Seed seeds the bootstrap. Default 1; reports print it.
	Seed uint64
	// Resamples is the number of bootstrap resamples. Default 2000.
	Resamples int
	// Alpha is the significance level of the tests. Default 0.05 (so the
	// confidence intervals are 95%).
	Alpha float64
}

func (o *CompareOptions) withDefaults() CompareOptions {
	var v CompareOptions
	if o != nil {
		v = *o
	}
	if v.Seed == 0 {
		v.Seed = 1
	}
	if v.Resamples <= 0 {
		v.Resamples = DefaultResamples
	}
	if v.Alpha <= 0 || v.Alpha >= 1 {
		v.Alpha = 0.05
	}
	return v
}

// Change is how a metric moved between baseline and current.
type Change string

// The changes. A difference that the test cannot tell from noise is
// "within noise", said out loud.
const (
	Unchanged   Change = "unchanged"
	Improved    Change = "improved"
	Regressed   Change = "regressed"
	WithinNoise Change = "within noise"
)

// Delta compares one metric of one scenario (or a suite).
type Delta struct {
	Metric Metric  `json:"metric"`
	Before float64 `json:"before"`
	After  float64 `json:"after"`
	Diff   float64 `json:"diff"`
	// Rel is Diff relative to Before (0 when Before is 0).
	Rel float64 `json:"rel"`
	// P is the two-sided p-value (Welch's t per scenario; McNemar exact for
	// the suite's task success). Suite deltas carry a bootstrap CI instead.
	P      float64  `json:"p"`
	CILow  *float64 `json:"ci_low,omitempty"`
	CIHigh *float64 `json:"ci_high,omitempty"`
	// Significant: P < alpha, or for suite deltas the CI excludes 0.
	Significant bool   `json:"significant"`
	Change      Change `json:"change"`
}

// Worse reports whether the delta moves in the bad direction.
func (d Delta) Worse() bool {
	if d.Metric.HigherIsBetter() {
		return d.Diff < 0
	}
	return d.Diff > 0
}

func classify(d *Delta) {
	switch {
	case d.Diff == 0:
		d.Change = Unchanged
	case !d.Significant:
		d.Change = WithinNoise
	case d.Worse():
		d.Change = Regressed
	default:
		d.Change = Improved
	}
}

// ScenarioDelta compares one scenario between baseline and current.
type ScenarioDelta struct {
	Scenario string `json:"scenario"`
	Suite    string `json:"suite"`
	// Status: "regressed" (any metric), "improved", "unchanged", "absent"
	// (absent on either side), "added" (only in current), "removed" (only
	// in baseline).
	Status     string `json:"status"`
	BeforeRuns int    `json:"before_runs"`
	AfterRuns  int    `json:"after_runs"`
	BeforePass bool   `json:"before_pass"`
	AfterPass  bool   `json:"after_pass"`
	// Excluded counts the run indices left out of both sides (see
	// CompareResults); BeforeRuns and AfterRuns count the runs compared.
	Excluded int     `json:"excluded_runs,omitempty"`
	Deltas   []Delta `json:"deltas,omitempty"`
}

// Delta returns the scenario's delta of m, if any.
func (s *ScenarioDelta) Delta(m Metric) (Delta, bool) {
	for _, d := range s.Deltas {
		if d.Metric == m {
			return d, true
		}
	}
	return Delta{}, false
}

// McNemarResult is the exact paired test on per-scenario pass/fail.
type McNemarResult struct {
	// Broke counts scenarios that passed in baseline and fail now; Fixed
	// the reverse; Both and Neither the concordant pairs.
	Broke       int     `json:"broke"`
	Fixed       int     `json:"fixed"`
	Both        int     `json:"both"`
	Neither     int     `json:"neither"`
	P           float64 `json:"p"`
	Significant bool    `json:"significant"`
}

// Comparison compares two sets of runs (baseline and current), scenario by
// scenario and for the suite.
type Comparison struct {
	Baseline  string  `json:"baseline"`
	Current   string  `json:"current"`
	Seed      uint64  `json:"seed"`
	Resamples int     `json:"resamples"`
	Alpha     float64 `json:"alpha"`
	Paired    int     `json:"paired_scenarios"`
	// Excluded counts the run indices left out of both sides, over every
	// scenario.
	Excluded  int              `json:"excluded_runs,omitempty"`
	Scenarios []*ScenarioDelta `json:"scenarios"`
	Suite     []Delta          `json:"suite"`
	McNemar   McNemarResult    `json:"mcnemar"`
}

// Compare compares current against baseline. Each side should hold one
// server's runs (a server against itself over time, or two servers);
// scenarios are aligned by id. baselineName and currentName label the
// sides in reports.
func Compare(baselineName string, baseline []*RunMetrics, currentName string, current []*RunMetrics, opts *CompareOptions) *Comparison {
	return CompareResults(baselineName, pool(baseline), currentName, pool(current), opts)
}

// CompareResults is Compare on sides aggregated beforehand, each by an
// Aggregator with PoolServers set (KeepRuns is not needed): a caller that
// streams runs compares them without keeping their metrics. Given the
// same runs, it returns what Compare returns.
//
// The sides are compared run index by run index: a run index that is no
// measure on one side is left out of both, per scenario, and counted in
// Excluded. No measure: a stale run or the replay of a recorded error on
// either side, or a run of the baseline that ended in an error (a
// recording cut short is no reference). A current run that ends in an
// error where the baseline's did not is kept: it is the server's failure.
func CompareResults(baselineName string, baseline *Results, currentName string, current *Results, opts *CompareOptions) *Comparison {
	o := opts.withDefaults()
	c := &Comparison{Baseline: baselineName, Current: currentName, Seed: o.Seed, Resamples: o.Resamples, Alpha: o.Alpha}
	before := byScenario(baseline)
	after := byScenario(current)
	excluded := map[string]int{}
	for id, b := range before {
		if a := after[id]; a != nil {
			before[id], after[id], excluded[id] = paired(b, a)
			c.Excluded += excluded[id]
		}
	}
	ids := make([]string, 0, len(before)+len(after))
	for id := range before {
		ids = append(ids, id)
	}
	for id := range after {
		if _, ok := before[id]; !ok {
			ids = append(ids, id)
		}
	}
	slices.Sort(ids)
	diffs := map[Metric][]float64{}
	for _, id := range ids {
		b, a := before[id], after[id]
		sd := &ScenarioDelta{Scenario: id, Excluded: excluded[id]}
		switch {
		case b == nil:
			sd.Suite, sd.Status, sd.AfterRuns = a.Suite, "added", a.Runs
		case a == nil:
			sd.Suite, sd.Status, sd.BeforeRuns = b.Suite, "removed", b.Runs
		case b.Absent || a.Absent || b.Runs == 0 || a.Runs == 0:
			sd.Suite, sd.Status, sd.BeforeRuns, sd.AfterRuns = a.Suite, "absent", b.Runs, a.Runs
		default:
			sd.Suite, sd.BeforeRuns, sd.AfterRuns = a.Suite, b.Runs, a.Runs
			sd.BeforePass, sd.AfterPass = b.Pass, a.Pass
			c.Paired++
			switch {
			case b.Pass && a.Pass:
				c.McNemar.Both++
			case b.Pass:
				c.McNemar.Broke++
			case a.Pass:
				c.McNemar.Fixed++
			default:
				c.McNemar.Neither++
			}
			sd.Status = string(Unchanged)
			for _, m := range metricOrder {
				xb, xa := b.values(m), a.values(m)
				d := Delta{Metric: m, Before: round(Mean(xb)), After: round(Mean(xa))}
				d.Diff = round(d.After - d.Before)
				if d.Before != 0 {
					d.Rel = round(d.Diff / math.Abs(d.Before))
				}
				_, _, d.P = Welch(xb, xa)
				d.Significant = d.Diff != 0 && d.P < o.Alpha
				classify(&d)
				sd.Deltas = append(sd.Deltas, d)
				diffs[m] = append(diffs[m], d.Diff)
				switch {
				case d.Change == Regressed:
					sd.Status = string(Regressed)
				case d.Change == Improved && sd.Status == string(Unchanged):
					sd.Status = string(Improved)
				}
			}
		}
		c.Scenarios = append(c.Scenarios, sd)
	}
	c.McNemar.P = McNemar(c.McNemar.Broke, c.McNemar.Fixed)
	c.McNemar.Significant = c.McNemar.P < o.Alpha
	for i, m := range metricOrder {
		d := Delta{Metric: m}
		var xb, xa []float64
		for _, id := range ids {
			b, a := before[id], after[id]
			if b == nil || a == nil || b.Absent || a.Absent || b.Runs == 0 || a.Runs == 0 {
				continue
			}
			xb = append(xb, b.scenarioMean(m))
			xa = append(xa, a.scenarioMean(m))
		}
		if len(xb) == 0 {
			continue
		}
		d.Before, d.After = round(Mean(xb)), round(Mean(xa))
		d.Diff = round(d.After - d.Before)
		if d.Before != 0 {
			d.Rel = round(d.Diff / math.Abs(d.Before))
		}
		// Each metric draws its own stream, so adding a metric does not
		// shift the others' intervals.
		lo, hi := BootstrapMeanCI(diffs[m], o.Resamples, 1-o.Alpha, o.Seed+uint64(i)*0x9e3779b97f4a7c15)
		d.CILow, d.CIHigh = &lo, &hi
		d.Significant = lo > 0 || hi < 0
		d.P = math.NaN()
		if m == MetricTaskSuccess {
			d.P = c.McNemar.P
		}
		classify(&d)
		if math.IsNaN(d.P) {
			d.P = -1 // not applicable: the CI decides
		}
		c.Suite = append(c.Suite, d)
	}
	slices.SortStableFunc(c.Scenarios, func(x, y *ScenarioDelta) int {
		return cmp.Or(cmp.Compare(statusRank(x.Status), statusRank(y.Status)), cmp.Compare(x.Scenario, y.Scenario))
	})
	return c
}

// statusRank puts regressions first, then improvements, then the rest.
func statusRank(s string) int {
	switch s {
	case string(Regressed):
		return 0
	case string(Improved):
		return 1
	case "added", "removed":
		return 2
	case "absent":
		return 4
	}
	return 3
}

// pool aggregates one side by scenario id: a side holding several servers
// has their runs pooled per scenario.
func pool(runs []*RunMetrics) *Results {
	a := NewAggregator(nil)
	a.PoolServers = true
	for _, rm := range runs {
		a.Add(rm)
	}
	return a.Results()
}

// paired returns the two sides of a scenario without the run indices that
// are no measure on either side (see CompareResults), and how many run
// indices it left out. Sides with nothing to leave out come back as they
// are.
func paired(b, a *ScenarioResult) (*ScenarioResult, *ScenarioResult, int) {
	out := map[int]bool{}
	bs, as := b.summaries(), a.summaries()
	for _, rs := range bs {
		if rs.stale || rs.recordedError || rs.errored {
			out[rs.runIndex] = true
		}
	}
	for _, rs := range as {
		if rs.stale || rs.recordedError {
			out[rs.runIndex] = true
		}
	}
	if len(out) == 0 {
		return b, a, 0
	}
	keep := func(g *ScenarioResult, list []runSummary) *ScenarioResult {
		c := &ScenarioResult{Scenario: g.Scenario, Suite: g.Suite, Category: g.Category, Server: g.Server}
		for _, rs := range list {
			if !out[rs.runIndex] {
				c.runs = append(c.runs, rs)
			}
		}
		finishScenario(c, DefaultK)
		if len(c.runs) == 0 {
			c.Absent = g.Absent
		}
		return c
	}
	return keep(b, bs), keep(a, as), len(out)
}

// byScenario indexes one side's results by scenario id.
func byScenario(res *Results) map[string]*ScenarioResult {
	out := map[string]*ScenarioResult{}
	if res == nil {
		return out
	}
	for _, g := range res.Scenarios {
		out[g.Scenario] = g
	}
	return out
}
