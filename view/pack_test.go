package view_test

import (
	"os"
	"path/filepath"
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
