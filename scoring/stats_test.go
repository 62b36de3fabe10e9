package scoring

import (
	"math"
	"testing"
)

// The reference values in this file were computed independently with
// Python 3.11's standard library (statistics, math.comb, fractions), not
// with this package:
//
//   - quantiles: statistics.quantiles(xs, n=4 or 20, method="inclusive");
//   - pass@k / pass^k: math.comb;
//   - McNemar: exact sum of math.comb(n, i) / 2**n with fractions.Fraction;
//   - Welch: t and df from statistics.mean/variance, p by Simpson
//     integration (200,000 intervals) of Student's t density built from
//     math.lgamma, an independent route from the incomplete beta used here;
//   - bootstrap: a separate Python implementation of splitmix64, Lemire's
//     bounded integers and type-7 percentiles.

func near(a, b, tol float64) bool { return math.Abs(a-b) <= tol }

func TestSummarize(t *testing.T) {
	s := Summarize([]float64{3, 1, 4, 1, 5, 9, 2, 6})
	want := Summary{N: 8, Mean: 3.875, Median: 3.5, Q1: 1.75, Q3: 5.25, IQR: 3.5, P95: 7.95, Min: 1, Max: 9}
	if s != want {
		t.Errorf("Summarize = %+v, want %+v", s, want)
	}
	if (Summarize(nil) != Summary{}) {
		t.Error("empty sample: want zero summary")
	}
	if s := Summarize([]float64{7}); s.Median != 7 || s.P95 != 7 || s.IQR != 0 {
		t.Errorf("one value: %+v", s)
	}
}

func TestPassK(t *testing.T) {
	for _, tc := range []struct {
		n, c, k int
		at, hat float64
		why     string
	}{
		{10, 3, 5, 0.9166666666666666, Binomial(3, 5) / Binomial(10, 5), "pass^5 with 3 successes is 0"},
		{10, 3, 2, 1 - 21.0/45, 0.06666666666666667, "C(3,2)/C(10,2)"},
		{5, 5, 5, 1, 1, "all pass"},
		{5, 0, 1, 0, 0, "none pass"},
		{3, 2, 5, 1, 0, "k clamped to n"},
	} {
		if got := PassAtK(tc.n, tc.c, tc.k); !near(got, tc.at, 1e-9) {
			t.Errorf("%s: PassAtK(%d,%d,%d) = %v, want %v", tc.why, tc.n, tc.c, tc.k, got, tc.at)
		}
		if got := PassHatK(tc.n, tc.c, tc.k); !near(got, tc.hat, 1e-9) {
			t.Errorf("%s: PassHatK(%d,%d,%d) = %v, want %v", tc.why, tc.n, tc.c, tc.k, got, tc.hat)
		}
	}
}

func TestMcNemar(t *testing.T) {
	for _, tc := range []struct {
		b, c int
		p    float64
	}{
		{2, 10, 0.03857421875},
		{0, 5, 0.0625},
		{3, 3, 1},
		{1, 0, 1},
		{0, 0, 1},
	} {
		if got := McNemar(tc.b, tc.c); !near(got, tc.p, 1e-9) {
			t.Errorf("McNemar(%d, %d) = %v, want %v", tc.b, tc.c, got, tc.p)
		}
	}
}

func TestWelch(t *testing.T) {
	for _, tc := range []struct {
		a, b     []float64
		t, df, p float64
	}{
		{[]float64{1, 2, 3, 4, 5}, []float64{2, 4, 6, 8, 10, 12}, 2.3763541031440183, 6.9722557297949335, 0.04928433820672915},
		{[]float64{100, 110, 105, 98, 102}, []float64{120, 118, 125, 130, 119}, 6.307484060994846, 7.96124865446717, 0.00023568170774900064},
	} {
		gt, gdf, gp := Welch(tc.a, tc.b)
		if !near(gt, tc.t, 1e-8) || !near(gdf, tc.df, 1e-8) || !near(gp, tc.p, 1e-7) {
			t.Errorf("Welch = (%v, %v, %v), want (%v, %v, %v)", gt, gdf, gp, tc.t, tc.df, tc.p)
		}
	}
	// Deterministic replays: constant samples. Equal means are no change;
	// different means are a real change (p = 0).
	if _, _, p := Welch([]float64{5, 5}, []float64{5, 5}); p != 1 {
		t.Errorf("equal constants: p = %v, want 1", p)
	}
	if _, _, p := Welch([]float64{5, 5}, []float64{6, 6}); p != 0 {
		t.Errorf("different constants: p = %v, want 0", p)
	}
}

func TestBootstrapMeanCI(t *testing.T) {
	xs := []float64{0, -1, 0.5, -0.25, 1, -2, 0, 0.75}
	lo, hi := BootstrapMeanCI(xs, 500, 0.95, 42)
	if !near(lo, -0.79765625, 1e-9) || !near(hi, 0.46875, 1e-9) {
		t.Errorf("CI = [%v, %v], want [-0.79765625, 0.46875] (Python reference)", lo, hi)
	}
	lo2, hi2 := BootstrapMeanCI(xs, 500, 0.95, 42)
	if lo != lo2 || hi != hi2 {
		t.Error("same seed, different interval")
	}
	if lo, hi := BootstrapMeanCI([]float64{2, 2, 2}, 100, 0.95, 1); lo != 2 || hi != 2 {
		t.Errorf("constant sample: [%v, %v]", lo, hi)
	}
}

// A metric no scenario changed is answered without drawing, as the draws
// would answer it: interval [0, 0], p 1.
func TestSuiteBootstrapUnchanged(t *testing.T) {
	sides := func(vals ...float64) []*ScenarioResult {
		var out []*ScenarioResult
		for _, v := range vals {
			out = append(out, &ScenarioResult{Metrics: map[Metric]Summary{
				MetricTaskSuccess: {Mean: v, Median: v}, MetricInvalidCalls: {Mean: v, Median: v}, MetricTurns: {Mean: 2 * v, Median: 2 * v},
			}})
		}
		return out
	}
	before, after := sides(0.2, 1, 0, 0.5), sides(0.2, 1, 0, 0.5)
	for _, m := range []Metric{MetricTaskSuccess, MetricInvalidCallRate} {
		lo, hi, p := suiteBootstrap(m, before, after, 500, 0.05, 7)
		if lo != 0 || hi != 0 || p != 1 {
			t.Errorf("%s unchanged: [%v, %v] p %v; want [0, 0] p 1", m, lo, hi, p)
		}
	}
	// What the shortcut answers is what drawing answers: the draws of a
	// change of 0 in one scenario of four, every other the same.
	after[1] = sides(1.0000000001)[0]
	lo, hi, p := suiteBootstrap(MetricTaskSuccess, before, after, 500, 0.05, 7)
	if lo != 0 || hi != 0 || p != 1 {
		t.Errorf("a change that rounds to 0: [%v, %v] p %v; want [0, 0] p 1", lo, hi, p)
	}
}
