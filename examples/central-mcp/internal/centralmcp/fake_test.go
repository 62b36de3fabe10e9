package centralmcp

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/mcpbench/bench/fakecentral"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// These tests run the server in memory against the real fake Central (an
// httptest server on 127.0.0.1) and check the Central calls it journals.
// The binary's stdio and HTTP transports, and the SSO proxy, are tested in
// examples/central-mcp.

func fakeSession(t *testing.T, opts Options, fo *fakecentral.Options, copts *mcp.ClientOptions) (*mcp.ClientSession, *fakecentral.Central) {
	t.Helper()
	fc := fakecentral.New(fo)
	return connect(t, opts, journalFirst{fc}, copts), fc
}

// journalFirst answers only after the fake has returned, so a request is
// in the journal before the client sees its response. (The fake journals a
// request after writing its body, and a body larger than net/http's buffer
// reaches the client first.)
type journalFirst struct{ h http.Handler }

func (j journalFirst) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	rec := httptest.NewRecorder()
	j.h.ServeHTTP(rec, r)
	for k, v := range rec.Header() {
		w.Header()[k] = v
	}
	w.WriteHeader(rec.Code)
	w.Write(rec.Body.Bytes())
}

// apiCalls lists the journaled API requests as "METHOD path?query", token
// requests left out.
func apiCalls(fc *fakecentral.Central) []string {
	var out []string
	for _, e := range fc.Journal() {
		if e.Class == fakecentral.ClassAuth {
			continue
		}
		s := e.Method + " " + e.Path
		if e.Query != "" {
			s += "?" + e.Query
		}
		out = append(out, s)
	}
	return out
}

func TestToolsCallDocumentedEndpoints(t *testing.T) {
	cs, fc := fakeSession(t, Options{}, nil, nil)
	tests := []struct {
		tool      string
		args      map[string]any
		wantCalls []string
		want      []string // substrings of the result
	}{
		{"list_clients", map[string]any{"status": "Failed", "limit": 10},
			[]string{"GET /network-monitoring/v1/clients?filter=status+eq+%27Failed%27&limit=10"},
			[]string{"aa:bb:cc:11:22:33"}},
		{"list_clients", map[string]any{"all": true},
			[]string{"GET /network-monitoring/v1/clients?limit=1000"},
			[]string{"aa:bb:cc:00:00:27"}},
		{"list_devices", map[string]any{"limit": 2, "cursor": "3"},
			[]string{"GET /network-monitoring/v1/device-inventory?limit=2&next=3"},
			[]string{"CNSWA0002", `"next":"4"`}},
		{"find_client", map[string]any{"query": "jdoe"},
			[]string{"GET /network-monitoring/v1/clients?filter=status+in+%28%27Connected%27%2C+%27Failed%27%29&limit=1000"},
			[]string{"aa:bb:cc:11:22:33", `"count":1`}},
		{"get_client", map[string]any{"mac": "AA:BB:CC:11:22:33"},
			[]string{"GET /network-monitoring/v1/clients/aa:bb:cc:11:22:33"},
			[]string{"jdoe-laptop"}},
		{"list_devices", map[string]any{"device_type": "SWITCH"},
			[]string{"GET /network-monitoring/v1/device-inventory?filter=deviceType+eq+%27SWITCH%27&limit=50"},
			[]string{"CNSWA0001", "CNSWA0002"}},
		{"get_device_health", map[string]any{"serial_number": "CNAPA0101"},
			[]string{"GET /network-monitoring/v1/device-inventory?filter=serialNumber+eq+%27CNAPA0101%27&limit=1",
				"GET /network-monitoring/v1/aps/CNAPA0101"},
			[]string{"CNAPA0101"}},
		{"get_device_health", map[string]any{"serial_number": "CNSWA0001", "device_type": "SWITCH"},
			[]string{"GET /network-monitoring/v1/switches/CNSWA0001"},
			[]string{"CNSWA0001"}},
		{"list_sites_health", map[string]any{},
			[]string{"GET /network-monitoring/v1/sites-health?limit=50&offset=0"},
			[]string{"HQ-Building-A"}},
		{"get_site_health", map[string]any{"site_name": "HQ-Building-A"},
			[]string{"GET /network-monitoring/v1/sites-health?filter=siteName+eq+%27HQ-Building-A%27&limit=1&offset=0",
				"GET /network-monitoring/v1/site-health/2001"},
			[]string{"2001"}},
		{"list_wlans", map[string]any{},
			[]string{"GET /network-monitoring/v1/wlans?limit=50"},
			[]string{"Corp-Net", "IoT-PSK"}},
		{"get_wlan", map[string]any{"ssid": "IoT-PSK"},
			[]string{"GET /network-config/v1alpha1/wlan-ssids/IoT-PSK"},
			[]string{"IoT-PSK"}},
		{"list_alerts", map[string]any{"limit": 100},
			[]string{"GET /network-notifications/v1/alerts?filter=status+eq+%27Active%27&limit=100"},
			[]string{"AP Down"}},
		{"get_firmware_status", map[string]any{"serial_number": "CNAPA0101"},
			[]string{"GET /network-services/v1/firmware-details?filter=serialNumber+eq+%27CNAPA0101%27&limit=50"},
			[]string{"10.7.1.0"}},
		{"get_config_health", map[string]any{},
			[]string{"GET /network-config/v1alpha1/config-health/devices?limit=50&offset=0"},
			[]string{"OUT_OF_SYNC"}},
		{"get_config_health", map[string]any{"serial": "CNSWA0002"},
			[]string{"GET /network-config/v1alpha1/config-health/active-issue?serial=CNSWA0002"},
			[]string{"VLAN 55"}},
		{"run_show_command", map[string]any{"serial_number": "CNAPA0101", "device_type": "ACCESS_POINT", "commands": []string{"show ap bss-table"}},
			[]string{"POST /network-troubleshooting/v1/aps/CNAPA0101/showCommands"},
			[]string{"COMPLETED", "Corp-Net"}},
		{"get_nac_policy", map[string]any{"name": "employee"},
			[]string{"GET /network-config/v1alpha1/authz-policies?limit=100&offset=0"},
			[]string{"employee-policy"}},
	}
	for _, tt := range tests {
		t.Run(tt.tool, func(t *testing.T) {
			fc.Reset()
			text, isErr := callText(t, cs, tt.tool, tt.args)
			if isErr {
				t.Fatalf("%s: tool error: %s", tt.tool, text)
			}
			got := apiCalls(fc)
			if tt.tool == "run_show_command" && len(got) == 2 && strings.HasPrefix(got[1], "GET /network-troubleshooting/v1/aps/CNAPA0101/showCommands/async-operations/") {
				got = got[:1] // the task id is the fake's
			}
			if diff := cmp.Diff(tt.wantCalls, got); diff != "" {
				t.Errorf("Central calls (-want +got):\n%s", diff)
			}
			for _, w := range tt.want {
				if !strings.Contains(text, w) {
					t.Errorf("result lacks %q:\n%s", w, text)
				}
			}
			for _, secret := range fc.Secrets() {
				if strings.Contains(text, secret) {
					t.Errorf("result leaks secret %q", secret)
				}
			}
		})
	}
}

func TestTokenRefreshedOnceOn401(t *testing.T) {
	cs, fc := fakeSession(t, Options{}, &fakecentral.Options{Force401: 1}, nil)
	if text, isErr := callText(t, cs, "get_client", map[string]any{"mac": "aa:bb:cc:00:00:01"}); isErr {
		t.Fatalf("get_client: %s", text)
	}
	var got []string
	for _, e := range fc.Journal() {
		got = append(got, e.Method+" "+e.Path+" "+string(e.Class)+" "+e.Fault)
	}
	want := []string{
		"POST /as/token.oauth2 auth ",
		"GET /network-monitoring/v1/clients/aa:bb:cc:00:00:01 read forced-401",
		"POST /as/token.oauth2 auth ",
		"GET /network-monitoring/v1/clients/aa:bb:cc:00:00:01 read ",
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("journal (-want +got):\n%s", diff)
	}
}

// elicitingClient answers every confirmation with accept (and confirm) or
// decline.
func elicitingClient(accept bool) *mcp.ClientOptions {
	return &mcp.ClientOptions{
		Capabilities: &mcp.ClientCapabilities{},
		ElicitationHandler: func(ctx context.Context, req *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
			if accept {
				return &mcp.ElicitResult{Action: "accept", Content: map[string]any{"confirm": true}}, nil
			}
			return &mcp.ElicitResult{Action: "decline"}, nil
		},
	}
}

func TestDestructiveNeedsConfirmation(t *testing.T) {
	disconnect := []string{
		"GET /network-monitoring/v1/clients/aa:bb:cc:00:00:01",
		"POST /network-troubleshooting/v1/aps/CNAPA0101/disconnectUserByMacAddress",
	}
	tests := []struct {
		name      string
		opts      Options
		client    *mcp.ClientOptions
		wantCalls []string
		want      string
	}{
		{"confirmed", Options{Writes: true}, elicitingClient(true), disconnect, `"ap_serial":"CNAPA0101"`},
		{"declined", Options{Writes: true}, elicitingClient(false), nil, "cancelled"},
		{"no elicitation capability", Options{Writes: true}, nil, nil, "confirmation_unavailable"},
		{"writes disabled", Options{}, elicitingClient(true), nil, "writes_disabled"},
		{"ungated-write skips gate and confirmation", Options{Inject: []Injection{InjectUngatedWrite}}, nil, disconnect, `"ap_serial":"CNAPA0101"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cs, fc := fakeSession(t, tt.opts, nil, tt.client)
			text, _ := callText(t, cs, "disconnect_client", map[string]any{"mac": "aa:bb:cc:00:00:01"})
			if !strings.Contains(text, tt.want) {
				t.Errorf("result %s, want it to contain %q", text, tt.want)
			}
			if diff := cmp.Diff(tt.wantCalls, apiCalls(fc)); diff != "" {
				t.Errorf("Central calls (-want +got):\n%s", diff)
			}
		})
	}
}

// The same confirmation over the older protocol, where the SDK turns the
// tool's input request into an elicitation/create request.
func TestDestructiveConfirmationOnProtocol20251125(t *testing.T) {
	for _, accept := range []bool{true, false} {
		fc := fakecentral.New(nil)
		cs := connectVersion(t, Options{Writes: true}, journalFirst{fc}, elicitingClient(accept), "2025-11-25")
		text, _ := callText(t, cs, "disconnect_client", map[string]any{"mac": "aa:bb:cc:00:00:01"})
		posted := false
		for _, c := range apiCalls(fc) {
			posted = posted || strings.HasPrefix(c, "POST ")
		}
		if posted != accept {
			t.Errorf("accept=%v: disconnect posted=%v (result %s)", accept, posted, text)
		}
	}
}

func TestWritesChangeCentral(t *testing.T) {
	cs, fc := fakeSession(t, Options{Writes: true}, nil, nil)
	text, isErr := callText(t, cs, "update_wlan", map[string]any{"ssid": "Guest-WiFi", "enable": false})
	if isErr {
		t.Fatalf("update_wlan: %s", text)
	}
	if diff := cmp.Diff([]string{"PATCH /network-config/v1alpha1/wlan-ssids/Guest-WiFi"}, apiCalls(fc)); diff != "" {
		t.Errorf("update_wlan calls (-want +got):\n%s", diff)
	}
	fc.Reset()
	text, isErr = callText(t, cs, "clear_alerts", map[string]any{"keys": []string{"ALRT-A-0004"}, "reason": "False Positive"})
	if isErr {
		t.Fatalf("clear_alerts: %s", text)
	}
	got := apiCalls(fc)
	if len(got) != 2 || got[0] != "POST /network-notifications/v1/alerts/clear" ||
		!strings.HasPrefix(got[1], "GET /network-notifications/v1/alerts/async-operations/") {
		t.Errorf("clear_alerts calls = %q, want the POST and one poll", got)
	}
	// Clearing several alerts at once is a mass action: confirmed first,
	// and this client cannot confirm, so nothing reaches Central.
	fc.Reset()
	text, isErr = callText(t, cs, "clear_alerts", map[string]any{"keys": []string{"ALRT-A-0001", "ALRT-A-0002"}})
	if !isErr || !strings.Contains(text, "confirmation") || len(apiCalls(fc)) != 0 {
		t.Errorf("bulk clear_alerts without a way to confirm: %s, calls %q", text, apiCalls(fc))
	}
}

// One test per injected regression, on what the fake journals.
func TestInjectionsShowInTheJournal(t *testing.T) {
	t.Run("extra-pagination", func(t *testing.T) {
		args := map[string]any{"limit": 3}
		base, fcBase := fakeSession(t, Options{}, nil, nil)
		callText(t, base, "list_clients", args)
		inj, fcInj := fakeSession(t, Options{Inject: []Injection{InjectExtraPagination}}, nil, nil)
		callText(t, inj, "list_clients", args)
		if diff := cmp.Diff([]string{"GET /network-monitoring/v1/clients?limit=3"}, apiCalls(fcBase)); diff != "" {
			t.Errorf("baseline (-want +got):\n%s", diff)
		}
		want := []string{
			"GET /network-monitoring/v1/clients?limit=1",
			"GET /network-monitoring/v1/clients?limit=1&next=2",
			"GET /network-monitoring/v1/clients?limit=1&next=3",
		}
		if diff := cmp.Diff(want, apiCalls(fcInj)); diff != "" {
			t.Errorf("injected (-want +got):\n%s", diff)
		}
	})
	t.Run("leak-secret", func(t *testing.T) {
		for _, leak := range []bool{false, true} {
			var opts Options
			if leak {
				opts.Inject = []Injection{InjectLeakSecret}
			}
			cs, fc := fakeSession(t, opts, nil, nil)
			text, _ := callText(t, cs, "get_wlan", map[string]any{"ssid": "IoT-PSK"})
			leaked := false
			for _, s := range fc.Secrets() {
				leaked = leaked || strings.Contains(text, s)
			}
			if leaked != leak {
				t.Errorf("leak-secret=%v: passphrase in output = %v:\n%s", leak, leaked, text)
			}
		}
	})
	t.Run("wrong-endpoint", func(t *testing.T) {
		cs, fc := fakeSession(t, Options{Inject: []Injection{InjectWrongEndpoint}}, nil, nil)
		callText(t, cs, "get_wlan", map[string]any{"ssid": "IoT-PSK"})
		if diff := cmp.Diff([]string{"GET /network-monitoring/v1/wlans/IoT-PSK"}, apiCalls(fc)); diff != "" {
			t.Errorf("calls (-want +got):\n%s", diff)
		}
	})
	t.Run("ungated-write", func(t *testing.T) {
		cs, fc := fakeSession(t, Options{Inject: []Injection{InjectUngatedWrite}}, nil, nil)
		callText(t, cs, "update_wlan", map[string]any{"ssid": "Guest-WiFi", "enable": false})
		var classes []string
		for _, e := range fc.Journal() {
			if e.Class != fakecentral.ClassAuth {
				classes = append(classes, e.Method+" "+string(e.Class))
			}
		}
		if diff := cmp.Diff([]string{"PATCH config_write"}, classes); diff != "" {
			t.Errorf("writes off, ungated-write on: journal (-want +got):\n%s", diff)
		}
	})
	t.Run("slow", func(t *testing.T) {
		// The injected Sleep advances the fake's clock instead of waiting,
		// so the delay shows in the journal's time offsets and the test
		// never sleeps.
		var mu sync.Mutex
		now := time.Date(2026, 11, 20, 10, 0, 0, 0, time.UTC)
		clock := func() time.Time { mu.Lock(); defer mu.Unlock(); return now }
		sleep := func(ctx context.Context, d time.Duration) error { mu.Lock(); now = now.Add(d); mu.Unlock(); return nil }
		for _, slow := range []bool{false, true} {
			opts := Options{Sleep: sleep, SlowDelay: 3 * time.Second}
			if slow {
				opts.Inject = []Injection{InjectSlow}
			}
			cs, fc := fakeSession(t, opts, &fakecentral.Options{Now: clock}, nil)
			callText(t, cs, "get_client", map[string]any{"mac": "aa:bb:cc:00:00:01"}) // fetches the token
			callText(t, cs, "get_device_health", map[string]any{"serial_number": "CNSWA0001", "device_type": "SWITCH"})
			j := fc.Journal()
			gap := j[len(j)-1].OffsetMS - j[len(j)-2].OffsetMS
			if want := map[bool]int64{false: 0, true: 3000}[slow]; gap != want {
				t.Errorf("slow=%v: get_device_health started %d ms after the previous call, want %d", slow, gap, want)
			}
		}
	})
	// verbose-tools and rename-tool change only the tool list: see
	// TestInjectedToolRegressions.
}
