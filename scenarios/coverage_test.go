package scenarios

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// A server left out or given an empty list is absent; calls_no_tool covers
// every server, none of them expected to call a tool.
func TestCoverage(t *testing.T) {
	s := &Scenario{ExpectedTools: map[string][]string{"reference": {"get_client"}, "karthik": {}}}
	if _, covered := s.ToolsFor("karthik"); covered {
		t.Error("karthik: [] is covered; an empty list means absent")
	}
	if _, covered := s.ToolsFor("nowireless4u"); covered {
		t.Error("a server left out is covered")
	}
	if tools, covered := s.ToolsFor("reference"); !covered || !cmp.Equal(tools, []string{"get_client"}) {
		t.Errorf("reference: %v, %v", tools, covered)
	}
	if got := ServerNames([]*Scenario{s}); !cmp.Equal(got, []string{"reference"}) {
		t.Errorf("ServerNames = %v, want the server with tools", got)
	}

	none := &Scenario{CallsNoTool: true}
	if tools, covered := none.ToolsFor("any-server"); !covered || len(tools) != 0 {
		t.Errorf("calls_no_tool: %v, %v; want every server covered with no tool", tools, covered)
	}
	if ms := none.MatchCall("any-server", "list_clients", nil, refNow); len(ms) != 1 || ms[0].Reason != WrongTool {
		t.Errorf("a call in a scenario that calls no tool: %v, want wrong_tool", ms)
	}
	c := Count([]*Scenario{s, none})
	if diff := cmp.Diff(map[string]int{"reference": 2}, c.Servers); diff != "" {
		t.Errorf("counts of coverage (-want +got):\n%s", diff)
	}
}

// The golden suite's no-tool scenarios keep their meaning: every compared
// server covered, none expected to call a tool.
func TestGoldenCallsNoTool(t *testing.T) {
	list, err := Golden()
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, s := range list {
		if !s.CallsNoTool {
			if s.Category == "negative" {
				t.Errorf("%s: negative without calls_no_tool", s.ID)
			}
			continue
		}
		n++
		for _, srv := range []string{"secure-ssid", "nowireless4u", "karthik", "reference"} {
			if tools, covered := s.ToolsFor(srv); !covered || len(tools) > 0 {
				t.Errorf("%s: %s: %v, %v", s.ID, srv, tools, covered)
			}
		}
	}
	negative := Count(list).Categories["negative"]
	if n < negative || n == 0 {
		t.Errorf("%d scenarios call no tool, fewer than the %d negative ones", n, negative)
	}
	// A server covers a scenario that names it or calls no tool, counted
	// here from the manifests' own fields.
	want := map[string]int{}
	for _, s := range list {
		for _, srv := range []string{"secure-ssid", "nowireless4u", "karthik", "reference"} {
			if len(s.ExpectedTools[srv]) > 0 || s.CallsNoTool {
				want[srv]++
			}
		}
	}
	if diff := cmp.Diff(want, Count(list).Servers); diff != "" {
		t.Errorf("servers with coverage (-want +got):\n%s", diff)
	}
}

// What bench's format says about coverage, and what validation refuses.
func TestCoverageRules(t *testing.T) {
	const bench = "format: 1\nsuite: nac\ncategory: core\nintent: x\nplatform: central\nfixture: site-a\nwrite_gate: read\n" +
		"success_criteria: x\nresult_schema: {type: object}\nreference_result: {}\n"
	tests := []struct {
		name, doc string
		want      string // an error validation must give; "" for none
		why       string
	}{
		{"empty list", bench + "id: nac-901\nexpected_tools: {reference: [a], karthik: []}\n",
			"expected_tools.karthik: an empty list means karthik is absent", "format 1 once read [] as calls no tool: stopped, not reread silently"},
		{"nothing expected", bench + "id: nac-902\n",
			"expected_tools: required: name the Central calls a correct solution makes (expect.api_calls, which judge every server) or the tools it uses on a server", "a scenario scores no server"},
		{"only the API layer", bench + "id: nac-908\nexpect: {api_calls: [GET /network-config/v1alpha1/auth-servers]}\n",
			"", "expect.api_calls judge every server: expected tools only sharpen the score"},
		{"negative without calls_no_tool", strings.Replace(bench, "category: core", "category: negative", 1) + "id: nac-903\nexpected_tools: {reference: [a]}\n",
			"calls_no_tool: a negative scenario's correct solution calls no tool: set calls_no_tool: true", "negative is the category, calls_no_tool the truth"},
		{"calls_no_tool with tools", bench + "id: nac-904\ncalls_no_tool: true\nexpected_tools: {reference: [a]}\n",
			"expected_tools.reference: calls_no_tool is set, yet reference has tools", "contradiction"},
		{"calls_no_tool with an empty list", bench + "id: nac-905\ncalls_no_tool: true\nexpected_tools: {reference: []}\n",
			"expected_tools.reference: calls_no_tool covers every server: leave expected_tools out", "one way to say it"},
		{"calls_no_tool with calls", bench + "id: nac-906\ncalls_no_tool: true\nexpect: {api_calls: [GET /network-monitoring/v1/clients]}\n",
			"expect.api_calls: a scenario that calls no tool makes no call to Central", "no tool, no call"},
		{"calls_no_tool", bench + "id: nac-907\ncalls_no_tool: true\n", "", "a refusal"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			list, err := Parse("m.yaml", []byte(tt.doc))
			if err != nil {
				t.Fatal(err)
			}
			err = Validate(list, nil)
			switch {
			case tt.want == "" && err != nil:
				t.Errorf("%s: want no error, got %v", tt.why, err)
			case tt.want != "" && (err == nil || !strings.Contains(err.Error(), tt.want)):
				t.Errorf("%s: want %q in:\n%v", tt.why, tt.want, err)
			}
		})
	}
}
