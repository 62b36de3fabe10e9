package scenarios

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"
)

// A server's expectations beside its profile sharpen its score on
// scenarios defined elsewhere, without changing those scenarios'
// definitions (issue 18, item 1: "in a file beside the server's profile,
// so a maintainer adds theirs without touching the golden suite").
func TestExpectationsAttach(t *testing.T) {
	list, err := Golden()
	if err != nil {
		t.Fatal(err)
	}
	byID := map[string]*Scenario{}
	for _, s := range list {
		byID[s.ID] = s
	}
	alerts, nac := byID["alerts-001"], byID["nac-001"]
	before, _ := json.Marshal(alerts)
	if alerts.CoverageOf("netdesk") != Unnamed {
		t.Fatal("netdesk is named nowhere in the golden suite")
	}
	e, err := ParseExpectations("bench/expectations.yaml", []byte(`format: 1
server: netdesk
scenarios:
  alerts-001:
    tools: [active_alerts]
    params:
      active_alerts:
        severity: {equals: Critical, normalize: case}
    evidence: netdesk.py:38@abc1234
  nac-001: {absent: true}
`))
	if err != nil {
		t.Fatal(err)
	}
	golden := alerts
	list, err = e.Attach(list)
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range list {
		byID[s.ID] = s
	}
	alerts, nac = byID["alerts-001"], byID["nac-001"]
	if golden.CoverageOf("netdesk") != Unnamed || golden == alerts {
		t.Error("Attach changed the loaded scenario: a loaded suite is shared")
	}
	if tools, ok := alerts.ToolsFor("netdesk"); !ok || !slices.Equal(tools, []string{"active_alerts"}) || alerts.CoverageOf("netdesk") != Covered {
		t.Errorf("alerts-001 for netdesk: %v %v", tools, ok)
	}
	if r := alerts.ParamsFor("netdesk", "active_alerts")["severity"]; r == nil || r.Equals != "Critical" {
		t.Errorf("params: %v", alerts.ParamsFor("netdesk", "active_alerts"))
	}
	if nac.CoverageOf("netdesk") != DeclaredAbsent {
		t.Errorf("nac-001: absent: true is the methodology's absent")
	}
	if tools, _ := alerts.ToolsFor("karthik"); !slices.Equal(tools, []string{"central_get_alerts"}) {
		t.Errorf("other servers keep the suite's expectations: %v", tools)
	}
	if after, _ := json.Marshal(alerts); string(after) != string(before) {
		t.Errorf("attaching expectations changed the scenario's definition (and so its hash)")
	}
}

func TestExpectationsErrors(t *testing.T) {
	list, err := Golden()
	if err != nil {
		t.Fatal(err)
	}
	_, err = ParseExpectations("x.yaml", []byte(`format: 2
scenarios:
  alerts-001:
    tools: []
    params:
      list_alerts:
        severity: {equals: 3, type: string}
  nac-001: {absent: true, tools: [a]}
  wlan-change-001: {tool: [a]}
`))
	msg := ""
	if err != nil {
		msg = err.Error()
	}
	for _, want := range []string{
		"x.yaml:1:9: format: unsupported format 2; this bench reads format 1",
		"x.yaml:1:1: server: required: the name of the server",
		"x.yaml:4:12: scenarios.alerts-001.tools: required: the tools a correct solution calls",
		`x.yaml:7:9: scenarios.alerts-001.params.list_alerts: tool "list_alerts" is not in tools`,
		"scenarios.alerts-001.params.list_alerts.severity.equals: the rule rejects its own value",
		"scenarios.nac-001.absent: an absent server has no tools or params",
		`scenarios.wlan-change-001.tool: unknown field "tool" (did you mean "tools"?)`,
	} {
		if !strings.Contains(msg, want) {
			t.Errorf("want %q in:\n%s", want, msg)
		}
	}
	if strings.Contains(msg, "wlan-change-001.tools: required") {
		t.Errorf("an entry the decoder refused is not checked again:\n%s", msg)
	}
	e, err := ParseExpectations("y.yaml", []byte("format: 1\nserver: netdesk\nscenarios:\n  alerts-01: {tools: [a]}\n  client-diagnosis-001: {tools: [disconnect_client]}\n  alerts-008: {absent: true}\n"))
	if err != nil {
		t.Fatal(err)
	}
	_, err = e.Attach(list)
	msg = ""
	if err != nil {
		msg = err.Error()
	}
	for _, want := range []string{
		fmt.Sprintf(`y.yaml:4:14: scenarios.alerts-01: no scenario "alerts-01" among the %d loaded; did you mean alerts-001`, len(list)),
		`y.yaml:5:34: scenarios.client-diagnosis-001.tools[0]: tool "disconnect_client" is forbidden in client-diagnosis-001`,
		"y.yaml:6:15: scenarios.alerts-008: alerts-008 calls no tool on any server: there is nothing to expect of netdesk",
	} {
		if !strings.Contains(msg, want) {
			t.Errorf("want %q in:\n%s", want, msg)
		}
	}
}

// TestExpectedNameOfAVariant: a profile that is another exposure of a
// server takes that server's expectations, unless an expectations file for
// the profile itself is attached to the scenario.
func TestExpectedNameOfAVariant(t *testing.T) {
	list, err := Golden()
	if err != nil {
		t.Fatal(err)
	}
	e, err := ParseExpectations("servers/expectations/m.yaml", []byte(`format: 1
server: secure-ssid-minimal
scenarios:
  adversarial-002:
    tools: [find_device]
    params:
      find_device:
        serial_number: {equals: CNAPI0205}
`))
	if err != nil {
		t.Fatal(err)
	}
	list, err = e.Attach(list)
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range list {
		got := s.ExpectedName("secure-ssid-minimal", "secure-ssid")
		switch want := map[bool]string{true: "secure-ssid-minimal", false: "secure-ssid"}[s.ID == "adversarial-002"]; {
		case got != want:
			t.Fatalf("%s: ExpectedName = %q, want %q", s.ID, got, want)
		case s.ID == "adversarial-002" && s.ParamsFor(got, "find_device")["serial_number"] == nil:
			t.Fatalf("%s: the profile's own rules are not read", s.ID)
		}
		if n := s.ExpectedName("karthik", ""); n != "karthik" {
			t.Fatalf("a profile of no variant: ExpectedName = %q", n)
		}
	}
}
