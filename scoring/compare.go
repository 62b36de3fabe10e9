package scoring

import (
	"cmp"
	"math"
	"slices"

	"github.com/mcpbench/bench/internal/cores"
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
	// P is the two-sided p-value of the paired test Significant comes from:
	// per scenario a paired t test over the runs matched by run index; for
	// the suite a paired bootstrap over the scenarios, whose interval
	// CILow..CIHigh excludes 0 exactly when P < alpha.
	P      float64  `json:"p"`
	CILow  *float64 `json:"ci_low,omitempty"`
	CIHigh *float64 `json:"ci_high,omitempty"`
	// Pairs is the number of pairs the test had: matched runs for a
	// scenario, paired scenarios for the suite.
	Pairs int `json:"pairs"`
	// Significant: P < alpha.
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
	// Broke lists the paired scenarios that passed in the baseline and fail
	// now, Fixed the reverse: a flat total can hide both.
	Broke   []string      `json:"broke"`
	Fixed   []string      `json:"fixed"`
	McNemar McNemarResult `json:"mcnemar"`
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
	var pb, pa []*ScenarioResult // the paired scenarios, in id order
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
			pb, pa = append(pb, b), append(pa, a)
			switch {
			case b.Pass && a.Pass:
				c.McNemar.Both++
			case b.Pass:
				c.McNemar.Broke++
				c.Broke = append(c.Broke, id)
			case a.Pass:
				c.McNemar.Fixed++
				c.Fixed = append(c.Fixed, id)
			default:
				c.McNemar.Neither++
			}
			sd.Status = string(Unchanged)
			for _, m := range metricOrder {
				d := Delta{Metric: m, Before: round(b.Value(m)), After: round(a.Value(m))}
				d.Diff = round(d.After - d.Before)
				if d.Before != 0 {
					d.Rel = round(d.Diff / math.Abs(d.Before))
				}
				diffs := pairedDiffs(b, a, m)
				d.Pairs = len(diffs)
				d.P = PairedT(diffs)
				d.Significant = d.Diff != 0 && d.P < o.Alpha
				classify(&d)
				sd.Deltas = append(sd.Deltas, d)
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
	if len(pb) > 0 {
		// Each metric draws its own stream, so adding a metric does not
		// shift the others' intervals, and the metrics' bootstraps run
		// side by side with the same results.
		c.Suite = make([]Delta, len(metricOrder))
		cores.Each(len(metricOrder), func(i int) {
			m := metricOrder[i]
			d := Delta{Metric: m, Pairs: len(pb)}
			d.Before, d.After = suiteFigure(m, pb), suiteFigure(m, pa)
			d.Diff = round(d.After - d.Before)
			if d.Before != 0 {
				d.Rel = round(d.Diff / math.Abs(d.Before))
			}
			lo, hi, p := suiteBootstrap(m, pb, pa, o.Resamples, o.Alpha, o.Seed+uint64(i)*0x9e3779b97f4a7c15)
			d.CILow, d.CIHigh, d.P = &lo, &hi, p
			d.Significant = d.Diff != 0 && p < o.Alpha
			classify(&d)
			c.Suite[i] = d
		})
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
		finishScenario(c, g.K, g.RunsAsked)
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

// pairedDiffs returns after - before of m for each pair of scored runs
// matched by run index (the k-th run of an index on one side with the k-th
// of that index on the other, in result order); runs without a match are
// left out of the test.
func pairedDiffs(b, a *ScenarioResult, m Metric) []float64 {
	i, ok := metricIndex[m]
	if !ok {
		return nil
	}
	byIndex := func(g *ScenarioResult) map[int][]float64 {
		out := map[int][]float64{}
		for _, rs := range g.summaries() {
			if rs.scored() {
				out[rs.runIndex] = append(out[rs.runIndex], rs.values[i])
			}
		}
		return out
	}
	bs, as := byIndex(b), byIndex(a)
	idx := make([]int, 0, len(bs))
	for k := range bs {
		idx = append(idx, k)
	}
	slices.Sort(idx)
	var out []float64
	for _, k := range idx {
		xb, xa := bs[k], as[k]
		for j := range min(len(xb), len(xa)) {
			out = append(out, xa[j]-xb[j])
		}
	}
	return out
}

// suiteBootstrap is the paired percentile bootstrap of a suite figure's
// change: resamples draws of the paired scenarios with replacement (the
// same draw on both sides), each giving suiteFigure(after) -
// suiteFigure(before). It returns the interval at level 1-alpha and the
// two-sided p-value 2·min(share of draws <= 0, share >= 0), capped at 1;
// the interval's bounds are the order statistics that make it exclude 0
// exactly when p < alpha.
func suiteBootstrap(m Metric, before, after []*ScenarioResult, resamples int, alpha float64, seed uint64) (lo, hi, p float64) {
	n := len(before)
	if n == 0 {
		return 0, 0, 1
	}
	if resamples <= 0 {
		resamples = DefaultResamples
	}
	// Per scenario: the difference of values, or for a ratio of sums the
	// numerators and denominators of both sides.
	diffs := make([]float64, n)
	var nb, db, na, da []float64
	ratioOfSums := m == MetricInvalidCallRate
	for i := range n {
		if ratioOfSums {
			nb = append(nb, before[i].scenarioMean(MetricInvalidCalls))
			db = append(db, before[i].scenarioMean(MetricTurns))
			na = append(na, after[i].scenarioMean(MetricInvalidCalls))
			da = append(da, after[i].scenarioMean(MetricTurns))
			continue
		}
		diffs[i] = after[i].Value(m) - before[i].Value(m)
	}
	if !ratioOfSums && !slices.ContainsFunc(diffs, func(d float64) bool { return d != 0 }) ||
		ratioOfSums && slices.Equal(nb, na) && slices.Equal(db, da) {
		// No scenario changed (an unchanged server's replay, for most
		// metrics): every draw is 0, so the interval is [0, 0] and p is 1,
		// which the draws would take resamples x n steps to say.
		return 0, 0, 1
	}
	rng := splitmix64(seed)
	stats := make([]float64, resamples)
	buf := make([]float64, n)
	var bn, bd, an, ad []float64
	if ratioOfSums {
		bn, bd, an, ad = make([]float64, n), make([]float64, n), make([]float64, n), make([]float64, n)
	}
	for r := range stats {
		for i := range buf {
			j := rng.intn(n)
			if ratioOfSums {
				bn[i], bd[i], an[i], ad[i] = nb[j], db[j], na[j], da[j]
				continue
			}
			buf[i] = diffs[j]
		}
		if ratioOfSums {
			stats[r] = ratio(Mean(an), Mean(ad)) - ratio(Mean(bn), Mean(bd))
		} else {
			stats[r] = Mean(buf)
		}
		stats[r] = round(stats[r])
	}
	slices.Sort(stats)
	j := max(0, int(math.Ceil(float64(resamples)*alpha/2))-1)
	lo, hi = stats[j], stats[resamples-1-j]
	le, ge := 0, 0
	for _, x := range stats {
		if x <= 0 {
			le++
		}
		if x >= 0 {
			ge++
		}
	}
	p = math.Min(1, 2*float64(min(le, ge))/float64(resamples))
	return lo, hi, round(p)
}
