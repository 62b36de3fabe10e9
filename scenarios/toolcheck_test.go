package scenarios

import (
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"
)

// Expected tools and parameter rules are checked against a server's real
// tool list (issue 19, item 2): a missing required argument, an unknown
// argument and a value outside an enum are errors naming the scenario's
// file and line, the server and the tool.
func TestCheckTools(t *testing.T) {
	const doc = `format: 1
id: alerts-901
suite: alerts
category: core
intent: Which critical alerts are active at HQ?
platform: central
fixture: site-a
write_gate: read
expected_tools:
  acme: [get_alerts, get_site]
  other: [whatever]
expected_params:
  get_alerts:
    severity: {one_of: [Critical, Fatal]}
    colour: red
expect:
  api_calls: [GET /network-notifications/v1/alerts]
result_schema: {type: object}
reference_result: {}
success_criteria: The critical alerts are listed.
`
	list, err := Parse("m.yaml", []byte(doc))
	if err != nil {
		t.Fatal(err)
	}
	schema := `{"type":"object","required":["site_id","severity"],"additionalProperties":false,"properties":{
		"site_id":{"type":"string"},
		"severity":{"anyOf":[{"$ref":"#/$defs/Severity"},{"type":"null"}]}},
		"$defs":{"Severity":{"enum":["Critical","Major","Minor"]}}}`
	lists := []*ToolList{{Format: 1, Server: "acme", SHA: "0123456789abcdef", File: "tools/acme.json",
		Tools: []CapturedTool{{Name: "get_alerts", InputSchema: json.RawMessage(schema)}}}}
	errs := CheckTools(list, lists)
	var got []string
	for _, e := range errs {
		got = append(got, e.Error())
	}
	all := strings.Join(got, "\n")
	for _, want := range []string{
		`m.yaml:10:22: alerts-901: expected_tools.acme[1]: acme has no tool "get_site" (acme.json, captured at 01234567)`,
		`m.yaml:14:5: alerts-901: expected_params.get_alerts: acme's get_alerts requires "site_id": the rules give no value for it`,
		`m.yaml:14:15: alerts-901: expected_params.get_alerts.severity: acme's get_alerts takes ["Critical","Major","Minor"] for "severity", not "Fatal"`,
		`m.yaml:15:13: alerts-901: expected_params.get_alerts.colour: acme's get_alerts takes no argument "colour" (it takes severity, site_id)`,
	} {
		if !strings.Contains(all, want) {
			t.Errorf("want %q in:\n%s", want, all)
		}
	}
	if len(errs) != 4 {
		t.Errorf("%d errors, want 4 (a server without a list is not checked):\n%s", len(errs), all)
	}
}

// The golden suite's expected tools and rules hold against the compared
// servers' tool lists, captured at their pinned SHAs (servers/tools; a
// server without a list there is not checked).
func TestGoldenAgainstCapturedTools(t *testing.T) {
	list, err := Golden()
	if err != nil {
		t.Fatal(err)
	}
	lists, err := LoadToolLists(filepath.Join("..", "servers", "tools"))
	if err != nil {
		t.Fatal(err)
	}
	if len(lists) < 3 {
		t.Fatalf("%d tool lists in servers/tools, want the compared servers' and the reference's", len(lists))
	}
	for _, e := range CheckTools(list, lists) {
		t.Error(e)
	}
}

// A maintainer's expectations file is checked against their server's tool
// list, and its errors name the expectations file, not the golden suite.
func TestCheckToolsOnExpectations(t *testing.T) {
	list, err := Golden()
	if err != nil {
		t.Fatal(err)
	}
	e, err := ParseExpectations("bench/expectations.yaml", []byte(`format: 1
server: netdesk
scenarios:
  alerts-001:
    tools: [active_alerts, site_summary]
    params:
      active_alerts:
        level: Critical
`))
	if err != nil {
		t.Fatal(err)
	}
	if list, err = e.Attach(list); err != nil {
		t.Fatal(err)
	}
	lists := []*ToolList{{Format: 1, Server: "netdesk", File: "bench/tools.json", Tools: []CapturedTool{{Name: "active_alerts",
		InputSchema: json.RawMessage(`{"type":"object","required":["severity"],"properties":{"severity":{"enum":["Critical","Major"]}}}`)}}}}
	var got []string
	for _, e := range CheckTools(list, lists) {
		got = append(got, e.Error())
	}
	all := strings.Join(got, "\n")
	for _, want := range []string{
		`bench/expectations.yaml:5:28: alerts-001: scenarios.alerts-001.tools[1]: netdesk has no tool "site_summary"`,
		`bench/expectations.yaml:8:9: alerts-001: scenarios.alerts-001.params.active_alerts: netdesk's active_alerts requires "severity"`,
		`bench/expectations.yaml:8:16: alerts-001: scenarios.alerts-001.params.active_alerts.level: netdesk's active_alerts takes no argument "level"`,
	} {
		if !strings.Contains(all, want) {
			t.Errorf("want %q in:\n%s", want, all)
		}
	}
	if len(got) != 3 {
		t.Errorf("%d errors, want 3:\n%s", len(got), all)
	}
}
