package view_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mcpbench/bench/traces"
	"github.com/mcpbench/bench/view"
)

// The 0.2.0 release's runs (a real model on two servers, 5 runs of 9
// scenarios each): the list, the board's strips, and an export that finds
// nothing to refuse in real runs.
func TestReleasePack(t *testing.T) {
	pack, err := os.Open(filepath.Join("..", "docs", "benchmark-results-0.2.0.benchpack"))
	if err != nil {
		t.Fatal(err)
	}
	defer pack.Close()
	dir := filepath.Join(t.TempDir(), "store")
	s, err := traces.Open(dir, nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.Import(pack, nil); err != nil {
		t.Fatal(err)
	}
	s.Close()
	v := openView(t, dir)
	if p := v.List(view.Query{}); p.Total != 90 || len(p.Facets.Servers) != 2 || len(p.Facets.Scenarios) != 9 {
		t.Errorf("the list: %d runs, servers %v, %d scenarios", p.Total, p.Facets.Servers, len(p.Facets.Scenarios))
	}
	b, err := v.Board(view.Query{})
	if err != nil {
		t.Fatal(err)
	}
	if len(b.Strips) != 18 || len(b.Unscored) != 0 {
		t.Errorf("the board: %d strips, unscored %v", len(b.Strips), b.Unscored)
	}
	for _, st := range b.Strips {
		if len(st.Runs) != 5 {
			t.Errorf("strip %s/%s: %d runs, want 5", st.Scenario, st.Server, len(st.Runs))
		}
	}
	rep, err := v.Export(filepath.Join(t.TempDir(), "bundle"), nil)
	if err != nil {
		t.Fatalf("export of the release's runs: %v", err)
	}
	if rep.Runs != 90 || rep.Files != 95 {
		t.Errorf("export: %+v", rep)
	}
}

// A run an LLM judge graded shows the grading, and that bench report
// leaves it out: the local model's calibration (docs/judge-calibration-
// local-model.md) is below the bar. The judgement is the one the local
// model gave the run in its calibration, under the ref bench judge run
// stores it at.
func TestJudgementShown(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "store")
	s, err := traces.Open(dir, nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{"../judge/calibration/runs.benchpack", "../docs/judge-calibration-local-model.benchpack"} {
		f, err := os.Open(p)
		if err != nil {
			t.Fatal(err)
		}
		_, err = s.Import(f, nil)
		f.Close()
		if err != nil {
			t.Fatal(err)
		}
	}
	refs, err := s.Refs(traces.JudgeRefPrefix)
	if err != nil || len(refs) != 73 {
		t.Fatalf("%d judgements, want 73: %v", len(refs), err)
	}
	var graded, model string
	var jid traces.ID
	for _, r := range refs {
		j, err := s.GetRun(r.Run)
		if err != nil {
			t.Fatal(err)
		}
		if j.Manifest.Outcome != traces.OutcomeAnswered {
			continue
		}
		golden, err := s.Refs("golden/")
		if err != nil {
			t.Fatal(err)
		}
		for _, g := range golden {
			if g.Run == *j.Manifest.Grades {
				graded, model, jid = g.Name, j.Manifest.Model.Name, r.Run
			}
		}
		break
	}
	if graded == "" {
		t.Fatal("no answered judgement of a shipped run")
	}
	if err := s.SetRef(traces.JudgeRef(model, graded), jid); err != nil {
		t.Fatal(err)
	}
	s.Close()
	v := openView(t, dir)
	if p := v.List(view.Query{}); p.Total != 73 {
		t.Errorf("the list shows %d runs, want the 73 shipped ones (no judgement)", p.Total)
	}
	tl, err := v.Timeline(graded)
	if err != nil {
		t.Fatal(err)
	}
	if len(tl.Judgements) != 1 {
		t.Fatalf("%d judgements shown, want 1", len(tl.Judgements))
	}
	j := tl.Judgements[0]
	if j.Model != model || !j.Answered || j.Trusted || j.Kappa == nil || *j.Kappa >= 0 || !strings.Contains(j.Why, "below the bar 0.60") || j.Samples != 1 {
		t.Errorf("the judgement: %+v", j)
	}
	// Another run has none.
	other, err := v.Timeline(v.List(view.Query{}).Rows[0].Ref)
	if err != nil {
		t.Fatal(err)
	}
	if other.Ref != graded && len(other.Judgements) != 0 {
		t.Errorf("%s shows %d judgements", other.Ref, len(other.Judgements))
	}
}
