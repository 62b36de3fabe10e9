package scoring

import (
	"bytes"
	"testing"
)

// aggregateRuns are runs with something for every path of the
// aggregation: a safety failure, stale runs, an absent server, two
// servers, one run under two refs, and runs with no run ID.
func aggregateRuns(t *testing.T) []*RunMetrics {
	t.Helper()
	base, _ := suiteRuns(t, variant{})
	leak, _ := suiteRuns(t, variant{leak: true, stale: 2, server: "other", extraPages: 1})
	runs := append(base, leak...)
	twin := *runs[4]
	twin.Ref = "elsewhere/" + twin.Ref
	runs = append(runs, &twin)
	for i, id := range []string{"", ""} {
		m := *runs[i]
		m.RunID, m.Ref = id, "anonymous"
		m.LatencyMS += float64(i)
		runs = append(runs, &m)
	}
	return runs
}

// renderAll renders every report but the JSON one.
func renderAll(t *testing.T, r *Report) map[string][]byte {
	t.Helper()
	out := map[string][]byte{}
	for name, write := range map[string]func(*bytes.Buffer, *Report) error{
		"text":  func(b *bytes.Buffer, r *Report) error { return WriteText(b, r) },
		"md":    func(b *bytes.Buffer, r *Report) error { return WriteMarkdown(b, r) },
		"junit": func(b *bytes.Buffer, r *Report) error { return WriteJUnit(b, r) },
		"page": func(b *bytes.Buffer, r *Report) error {
			return WriteResultsPage(b, r, Page{Version: "1.0", SVG: "x.svg", JSON: "x.json"})
		},
		"svg": func(b *bytes.Buffer, r *Report) error { return WriteSVG(b, r) },
		"json without runs": func(b *bytes.Buffer, r *Report) error {
			c := *r
			c.Results = r.Results.WithoutRuns()
			return WriteJSON(b, &c)
		},
	} {
		var b bytes.Buffer
		if err := write(&b, r); err != nil {
			t.Fatal(err)
		}
		out[name] = b.Bytes()
	}
	return out
}

// An Aggregator that keeps summaries only gives the reports Aggregate
// gives: the scoreboard, the results page, the safety rows and the verdict.
func TestAggregatorSummariesRenderAsAggregate(t *testing.T) {
	runs := aggregateRuns(t)
	base, _ := suiteRuns(t, variant{})
	for _, verdict := range []bool{false, true} {
		want := BuildReport(&ReportInput{Title: "t", Stage: "core", Current: runs, Baseline: base, NoVerdict: !verdict})
		a := NewAggregator(nil)
		pc, pb := NewAggregator(nil), NewAggregator(nil)
		pc.PoolServers, pb.PoolServers = true, true
		for _, rm := range runs {
			a.Add(rm)
			pc.Add(rm)
		}
		for _, rm := range base {
			pb.Add(rm)
		}
		got := BuildReport(&ReportInput{Title: "t", Stage: "core", Results: a.Results(), NoVerdict: !verdict,
			Comparison: CompareResults("baseline", pb.Results(), "current", pc.Results(), nil)})
		if len(got.Runs()) != 0 {
			t.Errorf("summaries only, yet %d runs' metrics kept", len(got.Runs()))
		}
		if n := len(SafetyRows(got.Results)); n == 0 || n != len(SafetyRows(want.Results)) {
			t.Errorf("safety rows: %d, want %d (and some)", n, len(SafetyRows(want.Results)))
		}
		w, g := renderAll(t, want), renderAll(t, got)
		for name := range w {
			if !bytes.Equal(w[name], g[name]) {
				t.Errorf("verdict %v, %s differs:\n--- Aggregate\n%s\n--- Aggregator\n%s", verdict, name, w[name], g[name])
			}
		}
	}
}

// With KeepRuns the JSON report, run_metrics included, is Aggregate's.
func TestAggregatorKeepRuns(t *testing.T) {
	runs := aggregateRuns(t)
	a := NewAggregator(&AggregateOptions{K: 3})
	a.KeepRuns = true
	for _, rm := range runs {
		a.Add(rm)
	}
	var want, got bytes.Buffer
	if err := WriteJSON(&want, BuildReport(&ReportInput{Current: runs, NoVerdict: true, Aggregate: &AggregateOptions{K: 3}})); err != nil {
		t.Fatal(err)
	}
	if err := WriteJSON(&got, BuildReport(&ReportInput{Results: a.Results(), NoVerdict: true})); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(want.Bytes(), got.Bytes()) {
		t.Error("JSON report of a KeepRuns Aggregator differs from Aggregate's")
	}
	if !bytes.Contains(got.Bytes(), []byte(`"run_metrics"`)) {
		t.Error("no run_metrics")
	}
	defer func() {
		if recover() == nil {
			t.Error("Add after Results: want a panic")
		}
	}()
	a.Add(runs[0])
}

// Rendering a results read back from JSON (their run summaries rebuilt
// from their RunMetrics) gives the same reports.
func TestReadBackResultsRender(t *testing.T) {
	r := BuildReport(&ReportInput{Title: "t", Current: aggregateRuns(t), NoVerdict: true})
	var b bytes.Buffer
	if err := WriteJSON(&b, r); err != nil {
		t.Fatal(err)
	}
	back, err := ReadReport(&b)
	if err != nil {
		t.Fatal(err)
	}
	w, g := renderAll(t, r), renderAll(t, back)
	for name := range w {
		if !bytes.Equal(w[name], g[name]) {
			t.Errorf("%s of the read-back report differs", name)
		}
	}
}
