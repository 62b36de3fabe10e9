package scenarios

import (
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// A manifest that lists the methodology's scenarios under a header loads:
// its names map onto the methodology's format, and what bench cannot check
// is a lint warning, never dropped silently.
func TestListedManifest(t *testing.T) {
	list, err := LoadFile(filepath.Join("testdata", "listed", "manifest.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	if len(list) != 2 {
		t.Fatalf("%d scenarios, want 2", len(list))
	}
	c, w := list[0], list[1]
	if c.WriteGate != GateRead || w.WriteGate != GateWrite {
		t.Errorf("allowed_tools is the write gate: %q, %q", c.WriteGate, w.WriteGate)
	}
	if c.Fixture != "site-a" {
		t.Errorf("fixture_default names the built-in site-a: %q", c.Fixture)
	}
	if !slices.Equal(c.ExpectedTools["reference"], []string{"get_client"}) || c.CoverageOf("karthik") != DeclaredAbsent || c.CoverageOf("netdesk") != Unnamed {
		t.Errorf("expect.tools and coverage: %v", c.ExpectedTools)
	}
	if c.Suite != "client-diagnosis" || !c.Methodology || c.GradesResult() {
		t.Errorf("suite %q, methodology %v, result schema %v", c.Suite, c.Methodology, c.GradesResult())
	}
	if _, ok := c.Evidence["endpoint"]; ok || !strings.Contains(c.Notes, "evidence, endpoint: GET") || !strings.Contains(c.Notes, "evidence, karthik: no client lookup tool") {
		t.Errorf("evidence that pins no server's tools is kept as notes: %v / %q", c.Evidence, c.Notes)
	}
	if !strings.Contains(w.Notes, "A write behind the server's own gate.") || !strings.Contains(w.Notes, "write gate, reference: destructiveHint") {
		t.Errorf("note and the write_gate narrative are notes: %q", w.Notes)
	}
	warnings, err := Lint(list, nil)
	if err != nil {
		t.Fatalf("lint: %v", err)
	}
	var got []string
	for _, e := range warnings {
		got = append(got, e.Error())
	}
	all := strings.Join(got, "\n")
	for _, want := range []string{
		"manifest.yaml:17:5: warning: client-diagnosis-101: fixture_entities: free text, not checked",
		"client-diagnosis-101: evidence: endpoint, karthik name no server with tools here: kept as notes",
		`client-diagnosis-101: evidence.other_server: "src/clients.py:95 (find_client), :120 (path) @4a947a43" is written loosely`,
		"read as src/clients.py:95@4a947a43, src/clients.py:120@4a947a43",
		"wlan-change-101: write_gate: a description per server, kept as notes: the gate is allowed_tools",
	} {
		if !strings.Contains(all, want) {
			t.Errorf("want a warning %q in:\n%s", want, all)
		}
	}
}

func TestListedManifestErrors(t *testing.T) {
	const doc = `manifest_version: 2
owner: someone
scenarios:
  - id: alerts-101
    intent: "Which alerts are active?"
    platform: central
    allowed_tools: [everything]
    fixture: site-a
    expect:
      api_calls: [GET /network-notifications/v1/alerts]
      tools: {reference: [list_alerts]}
  - just a string
`
	list, err := Parse("m.yaml", []byte(doc))
	msg := ""
	if err != nil {
		msg = err.Error()
	}
	for _, want := range []string{
		"m.yaml:1:1: manifest_version: unsupported manifest_version 2; this bench reads 1",
		`m.yaml:2:1: owner: unknown field "owner" of a listed manifest (want one of manifest_version, generated_by, pinned, fixture_default, scenarios)`,
		`m.yaml:12:5: scenarios: a scenario must be a mapping, got str "just a string"`,
	} {
		if !strings.Contains(msg, want) {
			t.Errorf("want %q in:\n%s", want, msg)
		}
	}
	if len(list) != 1 {
		t.Fatalf("%d scenarios, want the one that decodes", len(list))
	}
	_, lerr := Lint(list, nil)
	if lerr == nil || !strings.Contains(lerr.Error(), "write_gate: required") {
		t.Errorf("allowed_tools [everything] is no gate: the gate is missing, got %v", lerr)
	}
	warnings, _ := Lint(list, nil)
	found := false
	for _, w := range warnings {
		found = found || strings.Contains(w.Msg, "[everything] is no write gate")
	}
	if !found {
		t.Errorf("want a warning that [everything] is no write gate, got %v", warnings)
	}
}
