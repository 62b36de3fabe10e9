package scenarios

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// methodologyManifest is the golden manifest written in the methodology's
// format, from its text.
var methodologyManifest = filepath.Join("testdata", "methodology", "golden.yaml")

// The methodology's format loads with the documented defaults and lints
// clean: no error and no warning.
func TestMethodologyManifest(t *testing.T) {
	list, err := LoadFile(methodologyManifest)
	if err != nil {
		t.Fatal(err)
	}
	warns, err := Lint(list, nil)
	if err != nil || len(warns) > 0 {
		t.Fatalf("lint: errors %v, warnings %v", err, warns)
	}
	if len(list) < 10 {
		t.Fatalf("%d scenarios, want 10 or more", len(list))
	}
	suites := map[string]bool{}
	for _, s := range list {
		suites[s.Suite] = true
		if !s.Methodology || s.Format != 0 {
			t.Errorf("%s: Methodology %v, Format %d; want a methodology-format scenario", s.ID, s.Methodology, s.Format)
		}
		if !strings.HasPrefix(s.ID, s.Suite+"-") {
			t.Errorf("%s: suite %q, want the suite the id starts with", s.ID, s.Suite)
		}
		want := "core"
		if s.Suite == "adversarial" {
			want = "safety"
		}
		if s.Category != want {
			t.Errorf("%s: category %q, want %q", s.ID, s.Category, want)
		}
		if s.GradesResult() || s.SuccessCriteria != "" || s.Tags != nil {
			t.Errorf("%s: a result schema, success criteria or tags the manifest does not give", s.ID)
		}
		if s.Fixture != "site-a" && s.Fixture != "incident" {
			t.Errorf("%s: fixture %q, want the built-in bundle its path ends in", s.ID, s.Fixture)
		}
		if len(s.UnkeyedEvidence) == 0 {
			t.Errorf("%s: no evidence read", s.ID)
		}
		if s.Turns() != DefaultMaxTurns || s.Elicit() != ElicitApprove {
			t.Errorf("%s: turns %d, elicitation %s; want the defaults", s.ID, s.Turns(), s.Elicit())
		}
	}
	if len(suites) != len(SuiteNames()) {
		t.Errorf("suites %v: want every suite the methodology lists", suites)
	}

	first := list[0]
	if diff := cmp.Diff([]CallSet{{AnyOf: []string{"GET /network-monitoring/v1/clients"}}}, first.Expect.APICalls); diff != "" {
		t.Errorf("api_calls (-want +got):\n%s", diff)
	}
	if got := first.PosOf("expect.must_not_call[0]"); got.Line != 17 {
		t.Errorf("must_not_call[0] at line %d, want 17", got.Line)
	}
	g, err := ParseGlob(first.Expect.MustNotCall[0])
	if err != nil || !g.Match("POST", "/network-config/v1/sites/2001/wlans") {
		t.Errorf("the methodology's guard %q does not catch a write beneath it (%v)", first.Expect.MustNotCall[0], err)
	}
}

// An empty expected-tools list in the methodology's format means absent,
// as the methodology says.
func TestEmptyToolListIsAbsent(t *testing.T) {
	list, err := LoadFile(methodologyManifest)
	if err != nil {
		t.Fatal(err)
	}
	var write *Scenario
	for _, s := range list {
		if s.ID == "wlan-change-001" {
			write = s
		}
	}
	if write == nil {
		t.Fatal("no wlan-change-001")
	}
	if _, ok := write.ExpectedTools["karthik"]; !ok {
		t.Fatal("the manifest's karthik: [] was not read")
	}
	if _, covered := write.ToolsFor("karthik"); covered {
		t.Error("karthik: [] is covered; the methodology reads it as absent")
	}
	if tools, covered := write.ToolsFor("reference"); !covered || len(tools) != 1 {
		t.Errorf("reference: %v, %v; want its one tool", tools, covered)
	}
	if got := ServerNames([]*Scenario{write}); !cmp.Equal(got, []string{"nowireless4u", "reference", "secure-ssid"}) {
		t.Errorf("servers with coverage %v", got)
	}
	if c := Count([]*Scenario{write}); c.Servers["karthik"] != 0 {
		t.Errorf("counts %v: karthik counted", c.Servers)
	}

}

// What a methodology-format document may hold, and what lint says of it.
func TestMethodologyRules(t *testing.T) {
	const methodology = "intent: x\nplatform: central\nfixture: fixtures/central/site-a\nwrite_gate: read\n"
	tests := []struct {
		name, doc string
		want      string // an error or warning the lint must give; "" for none at all
		why       string
	}{
		{"methodology field of bench", methodology + "id: nac-907\ncategory: core\n",
			`category: unknown field "category": the methodology's scenario format has no category`, "bench's fields need format: 1"},
		{"methodology nested field of bench", methodology + "id: nac-908\nexpect: {allowed_reads: [GET /x]}\n",
			`expect.allowed_reads: unknown field "allowed_reads": the methodology's scenario format has no expect.allowed_reads`, "nested too"},
		{"methodology typo", methodology + "id: nac-909\nintnet: x\n", `unknown field "intnet" (did you mean "intent"?)`, "a typo is a typo"},
		{"methodology suite from id", methodology + "id: diag-001\nexpected_tools: {reference: [a]}\n",
			`id: "diag-001": a scenario in the methodology's format is in the suite its id starts with`, "the suite comes from the id"},
		{"methodology nothing expected", methodology + "id: nac-910\nexpected_tools: {karthik: []}\n",
			"warning: nac-910: expected_tools: no server has tools for this scenario", "absent everywhere: scored on safety alone"},
		{"methodology unpinned", methodology + "id: nac-911\nexpected_tools: {karthik: [central_get_aps]}\n",
			"warning: nac-911: expected_tools.karthik: no evidence pin for karthik's tools", "the methodology cites file:line@SHA"},
		{"methodology placeholder pin", methodology + "id: nac-912\nexpected_tools: {karthik: [central_get_aps]}\nevidence: path/to/source.py:123@<sha>\n",
			`warning: nac-912: evidence: "path/to/source.py:123@<sha>" is not path:line@sha ("<sha>" is not a commit SHA)`, "its own example's placeholder"},
		{"methodology pins per server", methodology + "id: nac-913\nexpected_tools: {karthik: [central_get_aps]}\nevidence: {karthik: tools/ap_monitoring.py:37@4a947a43}\n",
			"", "bench's mapping is accepted too"},
		{"methodology any_of", methodology + "id: nac-914\nexpected_tools: {reference: [a]}\nexpect: {api_calls: [{any_of: [GET /x]}]}\n",
			"expect.api_calls[0]: want a string", "the methodology's api_calls are endpoints"},
		{"format 2", "format: 2\nid: nac-915\n",
			"format: unsupported format 2; this bench reads format 1 (and, with no format key, the methodology's format)", "unknown versions are refused"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			list, err := Parse("m.yaml", []byte(tt.doc))
			var all ErrorList
			if err != nil {
				all = append(all, err.(ErrorList)...)
			}
			warns, err := Lint(list, nil)
			all = append(all, warns...)
			if err != nil {
				all = append(all, err.(ErrorList)...)
			}
			got := all.Error()
			if tt.want == "" {
				if len(all) > 0 {
					t.Errorf("%s: want no error or warning, got %s", tt.why, got)
				}
				return
			}
			if !strings.Contains(got, tt.want) {
				t.Errorf("%s: want %q in:\n%s", tt.why, tt.want, got)
			}
		})
	}
}

// A fixture named by path is a bundle on disk, relative to the manifest,
// or else the built-in bundle its last element names.
func TestFixtureByPath(t *testing.T) {
	dir := t.TempDir()
	if err := os.MkdirAll(filepath.Join(dir, "bundles", "mine"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "bundles", "mine", "fixture.yaml"), []byte("format: x\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Join(dir, "fixtures", "central", "campus"), 0o755); err != nil {
		t.Fatal(err)
	}
	manifest := filepath.Join(dir, "m.yaml")
	tests := []struct {
		fixture, want, why string
	}{
		{"site-a", "site-a", "a name is a built-in bundle"},
		{"fixtures/central/site-a", "site-a", "the methodology's path to a bundle bench has"},
		{"fixtures/central/site-a.yaml", "site-a", "a file name too"},
		{"fixtures/central/campus", "campus", "a directory without fixture.yaml holds no bundle"},
		{"bundles/mine", filepath.Join(dir, "bundles", "mine"), "a user's bundle, next to the manifest"},
		{"bundles/mine/fixture.yaml", filepath.Join(dir, "bundles", "mine", "fixture.yaml"), "a user's bundle file"},
		{filepath.Join(dir, "bundles", "mine"), filepath.Join(dir, "bundles", "mine"), "an absolute path"},
	}
	for _, tt := range tests {
		list, err := Parse(manifest, []byte("id: nac-001\nintent: x\nplatform: central\nwrite_gate: read\nfixture: "+tt.fixture+"\n"))
		if err != nil {
			t.Fatal(err)
		}
		if got := list[0].Fixture; got != tt.want {
			t.Errorf("fixture %q: %q, want %q (%s)", tt.fixture, got, tt.want, tt.why)
		}
	}
}
