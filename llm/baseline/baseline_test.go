package baseline

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/mcpbench/bench/llm"
)

var now = time.Date(2026, 11, 29, 12, 0, 0, 0, time.UTC)

func tool(name, desc, schema string) llm.Tool {
	return llm.Tool{Name: name, Description: desc, InputSchema: json.RawMessage(schema)}
}

// centralTools is a small Central server's tool list, with the usual
// distractors: two list tools, two tools taking a MAC.
func centralTools() []llm.Tool {
	return []llm.Tool{
		tool("find_client", "Find a wireless or wired client by MAC address and return where it is connected: site, access point and SSID.",
			`{"type":"object","properties":{"mac":{"type":"string","description":"Client MAC address"}},"required":["mac"]}`),
		tool("list_clients", "List the clients connected at a site.",
			`{"type":"object","properties":{"site":{"type":"string","description":"Site name"},"limit":{"type":"integer","description":"Maximum number of clients"}}}`),
		tool("get_site_health", "Get the health summary of a site: device, client and alert counts and a health score.",
			`{"type":"object","properties":{"site":{"type":"string","description":"Site name"}},"required":["site"]}`),
		tool("list_devices", "List network devices (access points, switches, gateways) with their status.",
			`{"type":"object","properties":{"site":{"type":"string","description":"Site name"},"device_type":{"type":"string","enum":["AP","SWITCH","GATEWAY"]},"status":{"type":"string","enum":["online","offline"]}}}`),
		tool("list_alerts", "List active alerts, optionally filtered by severity and time.",
			`{"type":"object","properties":{"severity":{"type":"string","enum":["critical","major","minor"]},"since":{"type":"string","format":"date-time","description":"Only alerts raised since this time"}}}`),
		tool("get_device", "Get details of one device by its serial number: model, firmware, uptime.",
			`{"type":"object","properties":{"serial":{"type":"string","description":"Device serial number"}},"required":["serial"]}`),
		tool("list_wlans", "List the WLANs (SSIDs) configured.", `{"type":"object","properties":{}}`),
		tool("disconnect_client", "Disconnect (deauthenticate) a client from the wireless network.",
			`{"type":"object","properties":{"mac":{"type":"string","description":"Client MAC address"}},"required":["mac"]}`),
	}
}

func ask(intent string, tools []llm.Tool) *llm.Request {
	return &llm.Request{Messages: []llm.Message{{Role: llm.RoleUser, Content: intent}}, Tools: tools}
}

func generate(t *testing.T, req *llm.Request) *llm.Response {
	t.Helper()
	resp, err := New(&Options{Now: func() time.Time { return now }}).Generate(context.Background(), req)
	if err != nil {
		t.Fatal(err)
	}
	return resp
}

func TestFirstCall(t *testing.T) {
	for _, tc := range []struct {
		intent   string
		why      string
		wantTool string // "" means no call at all
		wantArgs string
	}{
		{"Where is the client aa:bb:cc:dd:ee:ff connected?", "the MAC fills find_client", "find_client", `{"mac":"aa:bb:cc:dd:ee:ff"}`},
		{"Show me the critical alerts from last week", "enum value named, relative date resolved against the clock", "list_alerts",
			`{"severity":"critical","since":"2026-11-22T12:00:00Z"}`},
		{"Get the firmware and uptime of device CNF7J0T0PL", "serial recognised", "get_device", `{"serial":"CNF7J0T0PL"}`},
		{"Which devices are offline at site HQ-1?", "site name after the word, enum status", "list_devices", `{"site":"HQ-1","status":"offline"}`},
		{"List the first 5 clients at the Branch-12 site", "number for limit, site name before the word", "list_clients", `{"limit":5,"site":"Branch-12"}`},
		{"What is the weather in Paris tomorrow?", "negative: nothing matches, so no call", "", ""},
		{"Write me a poem about autumn leaves", "negative: nothing matches, so no call", "", ""},
	} {
		t.Run(tc.intent, func(t *testing.T) {
			resp := generate(t, ask(tc.intent, centralTools()))
			if tc.wantTool == "" {
				if len(resp.ToolCalls) != 0 || resp.Text != DeclineText || resp.StopReason != llm.StopEndTurn {
					t.Fatalf("got %+v, want a decline; %s", resp, tc.why)
				}
				return
			}
			if len(resp.ToolCalls) != 1 {
				t.Fatalf("got %+v, want one call of %s; %s", resp, tc.wantTool, tc.why)
			}
			c := resp.ToolCalls[0]
			if c.Name != tc.wantTool || string(c.Arguments) != tc.wantArgs || c.ID != "baseline_1" {
				t.Errorf("called %s %s (id %s), want %s %s; %s", c.Name, c.Arguments, c.ID, tc.wantTool, tc.wantArgs, tc.why)
			}
		})
	}
}

// TestDescriptionSensitivity is the point of the baseline in CI: reword one
// tool description and the choice changes.
func TestDescriptionSensitivity(t *testing.T) {
	const intent = "Which access points are offline?"
	tools := []llm.Tool{
		tool("list_devices", "List devices and whether each is online or offline.", `{"type":"object","properties":{}}`),
		tool("list_aps", "List the inventory of radios.", `{"type":"object","properties":{}}`),
		tool("list_wlans", "List the WLANs configured.", `{"type":"object","properties":{}}`),
		tool("get_site_health", "Get the health summary of a site.", `{"type":"object","properties":{}}`),
	}
	before := generate(t, ask(intent, tools))
	tools[1].Description = "List access points (APs) and whether each access point is online or offline."
	after := generate(t, ask(intent, tools))
	if len(before.ToolCalls) != 1 || before.ToolCalls[0].Name != "list_devices" {
		t.Errorf("before rewording: %+v, want list_devices", before.ToolCalls)
	}
	if len(after.ToolCalls) != 1 || after.ToolCalls[0].Name != "list_aps" {
		t.Errorf("after rewording list_aps: %+v, want list_aps", after.ToolCalls)
	}
}

type step struct{ name, args, result string }

// TestMultiStep follows whole conversations to the submitted result.
func TestMultiStep(t *testing.T) {
	submit := tool(llm.SubmitTool, "Submit the final result.",
		`{"type":"object","properties":{"site":{"type":"string"},"health_score":{"type":"integer"},"status":{"type":"string","enum":["good","fair","poor"]},"client_count":{"type":"integer"},"firmware":{"type":"string"}},"required":["site"]}`)
	clientLookup := `{"mac":"aa:bb:cc:dd:ee:ff","site_name":"HQ-Bldg1","ap_serial":"CNF7J0T0PL","ssid":"corp"}`
	for _, tc := range []struct {
		name, intent, why string
		steps             []step
	}{
		{
			name:   "id from the first result",
			intent: "How healthy is the site where client aa:bb:cc:dd:ee:ff is connected?",
			why:    "the site health tool ranks close to the best and needs the site the client lookup returns",
			steps: []step{
				{"find_client", `{"mac":"aa:bb:cc:dd:ee:ff"}`, clientLookup},
				{"get_site_health", `{"site":"HQ-Bldg1"}`, `{"site":"HQ-Bldg1","health":{"health_score":87,"status":"Good"},"clients":[{"mac":"aa:bb:cc:dd:ee:ff"},{"mac":"11:22:33:44:55:66"}]}`},
				{llm.SubmitTool, `{"client_count":2,"health_score":87,"site":"HQ-Bldg1","status":"good"}`, `{"ok":true}`},
			},
		},
		{
			name:   "best tool deferred",
			intent: "Which firmware version runs on the device serving client aa:bb:cc:dd:ee:ff?",
			why:    "get_device ranks best but needs a serial; the client lookup goes first and supplies it",
			steps: []step{
				{"find_client", `{"mac":"aa:bb:cc:dd:ee:ff"}`, clientLookup},
				{"get_device", `{"serial":"CNF7J0T0PL"}`, `{"serial":"CNF7J0T0PL","model":"AP-635","firmware":"10.7.1.0"}`},
				{llm.SubmitTool, `{"firmware":"10.7.1.0","site":"HQ-Bldg1"}`, `{"ok":true}`},
			},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			req := ask(tc.intent, append(centralTools(), submit))
			var ids []string
			for i, s := range tc.steps {
				resp := generate(t, req)
				if len(resp.ToolCalls) != 1 {
					t.Fatalf("turn %d: %+v, want a call of %s; %s", i+1, resp, s.name, tc.why)
				}
				c := resp.ToolCalls[0]
				if c.Name != s.name || string(c.Arguments) != s.args {
					t.Fatalf("turn %d: called %s %s, want %s %s; %s", i+1, c.Name, c.Arguments, s.name, s.args, tc.why)
				}
				ids = append(ids, c.ID)
				req.Messages = append(req.Messages, resp.Message(), llm.Message{Role: llm.RoleTool, ToolCallID: c.ID, Content: s.result})
			}
			final := generate(t, req)
			if len(final.ToolCalls) != 0 || final.StopReason != llm.StopEndTurn {
				t.Errorf("after submitting: %+v, want a final answer", final)
			}
			// Ids are minted from the turn number, so a recording is byte-stable.
			if d := cmp.Diff([]string{"baseline_1", "baseline_2", "baseline_3"}, ids); d != "" {
				t.Errorf("tool-call ids (-want +got):\n%s", d)
			}
		})
	}
}

func TestNoSubmitToolAnswersInText(t *testing.T) {
	req := ask("Show me the critical alerts", centralTools())
	first := generate(t, req)
	req.Messages = append(req.Messages, first.Message(),
		llm.Message{Role: llm.RoleTool, ToolCallID: first.ToolCalls[0].ID, Content: `{"alerts":[{"id":"A1","severity":"critical"}]}`})
	resp := generate(t, req)
	want := `Result of list_alerts: {"alerts":[{"id":"A1","severity":"critical"}]}`
	if len(resp.ToolCalls) != 0 || resp.Text != want {
		t.Errorf("got %+v, want text %q", resp, want)
	}
}

func TestName(t *testing.T) {
	if got := New(nil).Name(); got != "baseline-bm25" {
		t.Errorf("Name() = %q; the report must say it is a lexical baseline", got)
	}
}
