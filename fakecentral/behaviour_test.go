package fakecentral

import (
	"bytes"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// pageAll follows paging the way the peers do and returns every key seen.
func pageAll(t *testing.T, c *Central, path, style, key, idField string, limit int) (ids []string, total int) {
	t.Helper()
	sep := "?"
	if strings.Contains(path, "?") {
		sep = "&"
	}
	next, offset := "1", 0
	for guard := 0; guard < 10000; guard++ {
		var target string
		if style == "next" {
			target = fmt.Sprintf("%s%slimit=%d&next=%s", path, sep, limit, next)
		} else {
			target = fmt.Sprintf("%s%slimit=%d&offset=%d", path, sep, limit, offset)
		}
		code, _, b := do(t, c, "GET", target, "")
		if code != 200 {
			t.Fatalf("GET %s: %d %s", target, code, b)
		}
		m := decode(t, b)
		items, _ := m[key].([]any)
		total = int(m["total"].(float64))
		if int(m["count"].(float64)) != len(items) {
			t.Fatalf("%s: count %v != %d items", target, m["count"], len(items))
		}
		for _, it := range items {
			ids = append(ids, fmt.Sprint(it.(map[string]any)[idField]))
		}
		if style == "next" {
			if m["next"] == nil {
				return ids, total
			}
			next = m["next"].(string)
		} else {
			offset += len(items)
			if offset >= total || len(items) == 0 {
				return ids, total
			}
		}
	}
	t.Fatalf("%s: paging did not end", path)
	return nil, 0
}

func TestPagingEndsAndCoversEveryEntityOnce(t *testing.T) {
	c := New(&Options{Fixture: MustLoadFixture("campus")})
	st := c.st
	connected, failedWireless := 0, 0
	for _, cl := range st.clients {
		if cl.Status == "Connected" {
			connected++
		}
		if cl.Status == "Failed" && cl.Type == "Wireless" {
			failedWireless++
		}
	}
	aps := 0
	for _, d := range st.devices {
		if d.Type == "ACCESS_POINT" {
			aps++
		}
	}
	cases := []struct {
		name, path, style, key, id string
		limit, want                int
	}{
		{"clients default filter is status eq Connected", "/network-monitoring/v1/clients", "next", "items", "macAddress", 100, connected},
		{"clients, pycentral's limit", "/network-monitoring/v1/clients", "next", "items", "macAddress", 1000, connected},
		{"failed wireless clients", "/network-monitoring/v1/clients?filter=" + q("status eq 'Failed' and clientConnectionType in ('Wireless')"), "next", "items", "macAddress", 7, failedWireless},
		{"device inventory", "/network-monitoring/v1/device-inventory", "next", "items", "serialNumber", 10, len(st.devices)},
		{"aps (AP_LIMIT 100)", "/network-monitoring/v1/aps", "next", "items", "serialNumber", 100, aps},
		{"aps in one site", "/network-monitoring/v1/aps?filter=" + q("siteId eq '3002'"), "next", "items", "serialNumber", 5, 14},
		{"sites-health by offset", "/network-monitoring/v1/sites-health", "offset", "items", "id", 1, 4},
		{"sites-health by next", "/network-monitoring/v1/sites-health", "next", "items", "id", 3, 4},
		{"events of a site", "/network-troubleshooting/v1/events?context-type=SITE&context-identifier=3001&site-id=3001&start-at=2026-11-20T11:00:00.000Z&end-at=2026-11-20T14:00:00.000Z", "next", "events", "eventIdentifier", 9, -1},
		{"config sites", "/network-config/v1/sites", "offset", "items", "id", 3, 4},
		{"config health", "/network-config/v1alpha1/config-health/devices", "offset", "devices", "serial", 20, len(st.devices)},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			ids, total := pageAll(t, c, tc.path, tc.style, tc.key, tc.id, tc.limit)
			if tc.want >= 0 && total != tc.want {
				t.Errorf("total = %d, want %d (the filtered count)", total, tc.want)
			}
			if len(ids) != total {
				t.Errorf("collected %d entities, total says %d", len(ids), total)
			}
			seen := map[string]bool{}
			for _, id := range ids {
				if seen[id] {
					t.Errorf("entity %s returned twice", id)
				}
				seen[id] = true
			}
		})
	}
}

func TestErrorsAreCentralStyle(t *testing.T) {
	c := New(nil)
	cases := []struct {
		name, method, target string
		status               int
		msg                  string
	}{
		{"unknown query parameter on monitoring", "GET", "/network-monitoring/v1/clients?foo=1", 400, "Unknown query parameter: foo"},
		{"karthik's site_id on wlans/{name}", "GET", "/network-monitoring/v1/wlans/Corp-Net?site_id=2001", 400, "Unknown query parameter: site_id"},
		{"unknown query parameter on notifications", "GET", "/network-notifications/v1/alerts?page=2", 400, "Unknown query parameter"},
		{"unknown query parameter on services (catalog route)", "GET", "/network-services/v1/firmware-details?serialNumber=X", 400, "Unknown query parameter"},
		{"unmodelled route, unknown serial", "GET", "/network-monitoring/v1/aps/CNAP9999/ports", 404, "Resource not found"},
		{"unmodelled route, known serial", "GET", "/network-monitoring/v1/aps/CNAPA0101/ports", 200, ""},
		{"unmodelled route, unknown site", "GET", "/network-monitoring/v1/topology/9999", 404, "Resource not found"},
		{"documented literal beats a modelled serial", "GET", "/network-monitoring/v1/switches/topn-interface-trends", 200, ""},
		{"offset accepted and ignored on a cursor-paged list", "GET", "/network-monitoring/v1/wlans?limit=100&offset=0", 200, ""},
		{"offset still unknown where there is no list", "GET", "/network-monitoring/v1/wlans/Corp-Net?offset=0", 400, "Unknown query parameter: offset"},
		{"config ignores unknown parameters", "GET", "/network-config/v1alpha1/wlan-ssids?whatever=1", 200, ""},
		{"bad filter", "GET", "/network-monitoring/v1/clients?filter=" + q("status eq 'Failed' or status eq 'Connected'"), 400, "not supported"},
		{"unknown filter field", "GET", "/network-monitoring/v1/aps?filter=" + q("colour eq 'red'"), 400, "Invalid filter field"},
		{"limit above the maximum", "GET", "/network-notifications/v1/alerts?limit=500", 400, "limit"},
		{"next not a number", "GET", "/network-monitoring/v1/clients?next=abc", 400, "next"},
		{"missing required parameter", "GET", "/network-troubleshooting/v1/events?context-type=SITE", 400, "Missing required query parameter"},
		// A parameter the definition marks required but gives a default is
		// filled in, not refused (offset=0 on sites, limit=100 on config health).
		{"required offset with a default", "GET", "/network-config/v1/sites", 200, ""},
		{"required limit and offset with defaults", "GET", "/network-config/v1alpha1/config-health/devices", 200, ""},
		{"required site-id without a default", "GET", "/network-monitoring/v1/unmanaged-device/aa:bb:cc:11:22:33", 400, "Missing required query parameter: site-id"},
		{"unknown client", "GET", "/network-monitoring/v1/clients/00:11:22:33:44:55", 404, "Resource not found for the given input."},
		{"malformed MAC", "GET", "/network-monitoring/v1/clients/not-a-mac", 400, "Invalid MAC"},
		{"undocumented path", "GET", "/network-monitoring/v9/nothing", 404, "Resource not found"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			code, _, b := do(t, c, tc.method, tc.target, "")
			if code != tc.status {
				t.Fatalf("status %d, want %d: %s", code, tc.status, b)
			}
			if tc.status >= 400 {
				m := decode(t, b)
				if !strings.Contains(m["message"].(string), tc.msg) || m["httpStatusCode"].(float64) != float64(tc.status) || m["errorCode"] == "" || m["debugId"] == "" {
					t.Fatalf("error body %s", b)
				}
			}
		})
	}
}

func TestAuth(t *testing.T) {
	c := New(&Options{ClientID: "bench", ClientSecret: "s3cret", Force401: 1})
	token := func(body string, basic bool) int {
		r := httptest.NewRequest("POST", "/oauth2/token", strings.NewReader(body))
		r.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		if basic {
			r.SetBasicAuth("bench", "s3cret")
		}
		w := httptest.NewRecorder()
		c.ServeHTTP(w, r)
		if w.Code == 200 && !strings.Contains(w.Body.String(), c.Token()) {
			t.Fatalf("token body %s", w.Body)
		}
		return w.Code
	}
	if got := token("grant_type=client_credentials", true); got != 200 {
		t.Errorf("basic credentials: %d", got)
	}
	if got := token("grant_type=client_credentials&client_id=bench&client_secret=s3cret", false); got != 200 {
		t.Errorf("form credentials: %d", got)
	}
	if got := token("grant_type=client_credentials&client_id=bench&client_secret=wrong", false); got != 401 {
		t.Errorf("wrong secret: %d, want 401", got)
	}
	if got := token("grant_type=password", true); got != 400 {
		t.Errorf("wrong grant: %d, want 400", got)
	}
	// No bearer: 401 envelope.
	r := httptest.NewRequest("GET", "/network-monitoring/v1/aps", nil)
	w := httptest.NewRecorder()
	c.ServeHTTP(w, r)
	if w.Code != 401 || !strings.Contains(w.Body.String(), "HPE_GL_ERROR_UNAUTHORIZED") {
		t.Fatalf("no bearer: %d %s", w.Code, w.Body)
	}
	// Forced 401 once, then the refresh path (new token, retry) succeeds.
	if code, _, _ := do(t, c, "GET", "/network-monitoring/v1/aps", ""); code != 401 {
		t.Fatalf("forced 401: got %d", code)
	}
	token("grant_type=client_credentials", true)
	if code, _, _ := do(t, c, "GET", "/network-monitoring/v1/aps", ""); code != 200 {
		t.Fatalf("after refresh: got %d", code)
	}
	var faults []string
	for _, e := range c.Journal() {
		if e.Fault != "" {
			faults = append(faults, e.Fault)
		}
	}
	if strings.Join(faults, ",") != "unauthorized,forced-401" {
		t.Fatalf("journal faults %v", faults)
	}
}

func TestFaults(t *testing.T) {
	c := New(nil)
	c.SetFaults([]Fault{
		{Route: "GET /network-monitoring/v1/clients", Kind: Fault429, RetryAfter: 2, Times: 1},
		{Route: "GET /network-monitoring/v1/clients", Kind: Fault429, Times: 1},
		{Route: "GET /network-monitoring/*", Kind: Fault500, Times: 1},
	})
	code, h, _ := do(t, c, "GET", "/network-monitoring/v1/clients", "")
	if code != 429 || h.Get("Retry-After") != "2" {
		t.Fatalf("first: %d Retry-After=%q", code, h.Get("Retry-After"))
	}
	code, h, _ = do(t, c, "GET", "/network-monitoring/v1/clients", "")
	if code != 429 || h.Get("Retry-After") != "" {
		t.Fatalf("second: %d Retry-After=%q", code, h.Get("Retry-After"))
	}
	if code, _, _ = do(t, c, "GET", "/network-monitoring/v1/aps", ""); code != 500 {
		t.Fatalf("third: %d, want 500", code)
	}
	if code, _, _ = do(t, c, "GET", "/network-monitoring/v1/clients", ""); code != 200 {
		t.Fatalf("after faults: %d", code)
	}
	// A dropped connection: the client sees an error, the journal an entry.
	s := startServer(t, &Options{Faults: []Fault{{Route: "GET /network-monitoring/v1/aps", Kind: FaultDrop, Times: 1}}})
	req, _ := http.NewRequest("GET", s.BaseURL+"/network-monitoring/v1/aps", nil)
	req.Header.Set("Authorization", "Bearer "+s.Token())
	if resp, err := http.DefaultClient.Do(req); err == nil {
		resp.Body.Close()
		t.Fatalf("dropped request answered %d", resp.StatusCode)
	}
	if j := s.Journal(); len(j) != 1 || j[0].Fault != "drop" {
		t.Fatalf("journal %+v", j)
	}
}

func TestWritesReadBackAndDuplicates(t *testing.T) {
	c := New(nil)
	steps := []struct {
		method, target, body string
		status               int
		want                 string // substring of the answer
	}{
		{"POST", "/network-config/v1alpha1/wlan-ssids/Lab-Net", `{"opmode":"WPA3_SAE","vlan-id-range":["70"],"enable":true}`, 200, "created"},
		{"GET", "/network-config/v1alpha1/wlan-ssids/Lab-Net", "", 200, `"ssid":"Lab-Net"`},
		{"GET", "/network-monitoring/v1/wlans/Lab-Net", "", 200, `"vlan":"70"`},
		{"POST", "/network-config/v1alpha1/wlan-ssids/Lab-Net", `{"opmode":"OPEN"}`, 412, "already exists"},
		{"PATCH", "/network-config/v1alpha1/wlan-ssids/Corp-Net", `{"vlan-id-range":["20"]}`, 200, "updated"},
		{"GET", "/network-monitoring/v1/wlans/Corp-Net", "", 200, `"vlan":"20"`},
		{"DELETE", "/network-config/v1alpha1/wlan-ssids/Guest-WiFi", "", 200, "deleted"},
		{"GET", "/network-monitoring/v1/wlans/Guest-WiFi", "", 404, "Resource not found"},
		{"POST", "/network-config/v1alpha1/auth-servers/corp-radius", `{"auth-port":1812}`, 412, "duplicate"},
		{"POST", "/network-config/v1alpha1/cnac-mac-reg", `{"id":"new-1","macAddress":"aa:bb:cc:00:00:99"}`, 200, "created"},
		{"POST", "/network-config/v1alpha1/no-such-resource/x", `{}`, 404, "No configuration resource"},
		{"PATCH", "/network-monitoring/v1/devices/CNAPA0101", `{"notes":"replaced PSU"}`, 200, `"notes":"replaced PSU"`},
		{"GET", "/network-monitoring/v1/devices?filter=" + q("serialNumber eq 'CNAPA0101'"), "", 200, `"notes":"replaced PSU"`},
		{"POST", "/network-config/v1alpha1/config-health/devices-resync", `{"serials":["CNSWA0002"]}`, 200, "Resync"},
		{"GET", "/network-config/v1alpha1/config-health/active-issue?serial=CNSWA0002", "", 200, `"configPushFailures":[]`},
		{"POST", "/network-notifications/v1/alerts/clear", `{"keys":["ALRT-A-0004"]}`, 202, "taskId"},
		{"GET", "/network-notifications/v1/alerts?filter=" + q("status eq 'Cleared'"), "", 200, "ALRT-A-0004"},
	}
	for i, s := range steps {
		code, _, b := do(t, c, s.method, s.target, s.body)
		if code != s.status || !bytes.Contains(b, []byte(s.want)) {
			t.Fatalf("step %d %s %s: %d %s (want %d containing %q)", i, s.method, s.target, code, b, s.status, s.want)
		}
	}
	// Reset restores the fixture.
	c.Reset()
	if code, _, _ := do(t, c, "GET", "/network-config/v1alpha1/wlan-ssids/Lab-Net", ""); code != 404 {
		t.Fatalf("after Reset Lab-Net still exists (%d)", code)
	}
	if len(c.Journal()) != 1 {
		t.Fatalf("journal not reset")
	}
}

func TestAsyncOperations(t *testing.T) {
	for _, polls := range []int{0, 2} {
		c := New(&Options{AsyncPolls: polls})
		code, h, b := do(t, c, "POST", "/network-troubleshooting/v1/aps/CNAPA0101/showCommands", `{"commands":["show ap bss-table"]}`)
		loc := h.Get("Location")
		if code != 202 || loc == "" || !bytes.Contains(b, []byte(loc)) {
			t.Fatalf("POST showCommands: %d %s Location=%q", code, b, loc)
		}
		for i := 0; i < polls; i++ {
			_, _, b = do(t, c, "GET", loc, "")
			if !bytes.Contains(b, []byte(`"status":"RUNNING"`)) {
				t.Fatalf("poll %d: %s", i, b)
			}
		}
		_, _, b = do(t, c, "GET", loc, "")
		if !bytes.Contains(b, []byte(`"status":"COMPLETED"`)) || !bytes.Contains(b, []byte("Corp-Net")) {
			t.Fatalf("final poll: %s", b)
		}
	}
	c := New(nil)
	code, h, _ := do(t, c, "POST", "/network-troubleshooting/v1alpha1/aps/CNAPA0102/disconnectUserByMacAddress", `{"userMacAddress":"aa:bb:cc:00:00:04"}`)
	if code != 202 {
		t.Fatalf("disconnect: %d", code)
	}
	do(t, c, "GET", h.Get("Location"), "")
	_, _, b := do(t, c, "GET", "/network-monitoring/v1/clients/aa:bb:cc:00:00:04", "")
	if !bytes.Contains(b, []byte(`"status":"Disconnected"`)) {
		t.Fatalf("client after disconnect: %s", b)
	}
	j := c.Journal()
	if j[0].Class != ClassDestructive || j[1].Class != ClassRead {
		t.Fatalf("classes %s %s", j[0].Class, j[1].Class)
	}
}

func TestJournalAttribution(t *testing.T) {
	c := New(nil)
	do(t, c, "GET", "/network-monitoring/v1/sites-health?limit=1", "")
	c.BeginToolCall(0)
	do(t, c, "GET", "/network-monitoring/v1/aps", "")
	c.EndToolCall()
	c.BeginToolCall(1)
	do(t, c, "POST", "/network-troubleshooting/v1/aps/CNAPA0101/aaa", `{}`)
	c.EndToolCall()
	j := c.Journal()
	type got struct {
		seq, tool int
		boot      bool
		class     Class
	}
	want := []got{{1, -1, true, ClassRead}, {2, 0, false, ClassRead}, {3, 1, false, ClassDiagnostic}}
	for i, w := range want {
		e := j[i]
		if (got{e.Seq, e.ToolCall, e.Boot, e.Class}) != w {
			t.Errorf("entry %d = %+v, want %+v", i, e, w)
		}
	}
}

func TestDeterministicBytes(t *testing.T) {
	targets := []string{"/network-monitoring/v1/clients?limit=50&next=2", "/network-monitoring/v1/sites-health", "/network-monitoring/v1/aps/CNANC0001/cpu-utilization-trends", "/network-monitoring/v1/radios", "/network-monitoring/v1/swarms"}
	var first [][]byte
	for run := 0; run < 2; run++ {
		c := New(&Options{Fixture: MustLoadFixture("campus")})
		for i, tg := range targets {
			_, _, b := do(t, c, "GET", tg, "")
			if run == 0 {
				first = append(first, b)
			} else if !bytes.Equal(first[i], b) {
				t.Fatalf("%s differs between runs", tg)
			}
		}
	}
}

func TestFixtureAPI(t *testing.T) {
	f := MustLoadFixture("site-a")
	for _, tc := range []struct {
		kind, id string
		want     bool
	}{
		{"client", "AA:BB:CC:11:22:33", true}, {"ap", "CNAPA0104", true}, {"ap", "CNSWA0001", false},
		{"site", "HQ-Building-A", true}, {"wlan", "IoT-PSK", true}, {"config", "auth-servers/corp-radius", true},
		{"alert", "ALRT-A-0001", true}, {"device", "nope", false},
	} {
		if got := f.HasEntity(tc.kind, tc.id); got != tc.want {
			t.Errorf("HasEntity(%s, %s) = %v", tc.kind, tc.id, got)
		}
	}
	secrets := strings.Join(f.Secrets(), " ")
	for _, s := range []string{"CANARY-PSK-7f3a9c2e51d4", "CANARY-RADIUS-b81d4e0c229a"} {
		if !strings.Contains(secrets, s) {
			t.Errorf("Secrets() lacks %s", s)
		}
	}
	if _, err := LoadFixture("nope"); err == nil {
		t.Error("LoadFixture(nope) succeeded")
	}
	if Serves("GET /network-monitoring/v1/clients/{mac}") != Modelled || Serves("GET /network-monitoring/v1/aps/{serial}/ports") != FromCatalog ||
		Serves("POST /network-config/v1/*") == NotServed || Serves("GET /nothing/here") != NotServed {
		t.Error("Serves gives wrong coverage")
	}
	for _, tc := range []struct {
		m, p string
		want Class
	}{
		{"GET", "/network-monitoring/v1/aps", ClassRead},
		{"POST", "/network-troubleshooting/v1/cx/X/showCommands", ClassDiagnostic},
		{"POST", "/network-troubleshooting/v1/aps/X/reboot", ClassDestructive},
		{"POST", "/network-config/v1alpha1/wlan-ssids/X", ClassConfigWrite},
		{"DELETE", "/network-config/v1alpha1/wlan-ssids/X", ClassDestructive},
		{"POST", "/network-notifications/v1/alerts/clear", ClassWrite},
	} {
		if got := Classify(tc.m, tc.p); got != tc.want {
			t.Errorf("Classify(%s %s) = %s, want %s", tc.m, tc.p, got, tc.want)
		}
	}
}

func TestDelayFaultAndHugeOffsets(t *testing.T) {
	c := New(&Options{Faults: []Fault{{Route: "GET /network-monitoring/v1/aps", Kind: FaultDelay, Delay: time.Millisecond, Times: 1}}})
	if code, _, _ := do(t, c, "GET", "/network-monitoring/v1/aps", ""); code != 200 {
		t.Fatalf("delayed request: %d", code)
	}
	if j := c.Journal(); j[0].Fault != "delay" {
		t.Fatalf("journal %+v", j[0])
	}
	for _, target := range []string{
		"/network-monitoring/v1/sites-health?offset=9223372036854775807&limit=100",
		"/network-monitoring/v1/clients?next=999999999999&limit=1000",
	} {
		code, _, b := do(t, c, "GET", target, "")
		if code != 200 || !bytes.Contains(b, []byte(`"count":0`)) {
			t.Errorf("%s: %d %s", target, code, b)
		}
	}
}

// TestConcurrentReadsAndWrites runs reads, writes and resets at once: the
// fake must neither deadlock nor answer 5xx.
func TestConcurrentReadsAndWrites(t *testing.T) {
	c := New(nil)
	targets := []struct{ method, path, body string }{
		{"GET", "/network-monitoring/v1/clients?limit=5", ""},
		{"GET", "/network-monitoring/v1/sites-health", ""},
		{"PATCH", "/network-config/v1alpha1/wlan-ssids/Corp-Net", `{"vlan-id-range":["11"]}`},
		{"POST", "/network-troubleshooting/v1/aps/CNAPA0101/ping", `{}`},
		{"PATCH", "/network-monitoring/v1/devices/CNAPA0102", `{"notes":"x"}`},
		{"GET", "/network-monitoring/v1/swarms", ""},
	}
	done := make(chan error)
	for g := 0; g < 8; g++ {
		go func(g int) {
			for i := 0; i < 100; i++ {
				tg := targets[(g+i)%len(targets)]
				r := httptest.NewRequest(tg.method, tg.path, strings.NewReader(tg.body))
				r.Header.Set("Authorization", "Bearer "+c.Token())
				w := httptest.NewRecorder()
				c.ServeHTTP(w, r)
				if w.Code >= 500 {
					done <- fmt.Errorf("%s %s: %d %s", tg.method, tg.path, w.Code, w.Body)
					return
				}
				if g == 0 && i%25 == 0 {
					c.Reset()
				}
			}
			done <- nil
		}(g)
	}
	for g := 0; g < 8; g++ {
		if err := <-done; err != nil {
			t.Fatal(err)
		}
	}
}

func TestDocumentedFilterFieldWithoutData(t *testing.T) {
	c := New(nil)
	code, _, b := do(t, c, "GET", "/network-monitoring/v1/clients?filter="+q("tunnelType in ('Port-based', 'Overlay') and clientConnectionType eq 'Wired'"), "")
	if code != 200 || !bytes.Contains(b, []byte(`"total":0`)) {
		t.Fatalf("documented field without data: %d %s", code, b)
	}
}

func TestClassOverrides(t *testing.T) {
	c := New(&Options{ClassOverrides: map[string]Class{
		"POST /network-troubleshooting/*":                                                 ClassDiagnostic,
		"POST /network-troubleshooting/v1/aps/{serial-number}/disconnectUserByMacAddress": ClassDiagnostic,
	}})
	do(t, c, "POST", "/network-troubleshooting/v1/aps/CNAPA0101/disconnectUserByMacAddress", `{"userMacAddress":"aa:bb:cc:00:00:01"}`)
	if got := c.Journal()[0].Class; got != ClassDiagnostic {
		t.Fatalf("class %s, want diagnostic (scenario override)", got)
	}
}

func TestFixtureErrorsNameFileAndLine(t *testing.T) {
	dir := t.TempDir()
	bundle := "format: fakecentral.fixture/v1\nname: bad\nnow: \"2026-11-20T10:00:00Z\"\nsites:\n  - {id: \"1\", name: S}\ndevices:\n  - {serial: A1, name: a, type: ACCESS_POINT, site: \"1\"}\n  - {serial: A2, name: b, type: ROUTER, site: \"1\"}\n"
	path := filepath.Join(dir, "fixture.yaml")
	if err := os.WriteFile(path, []byte(bundle), 0o644); err != nil {
		t.Fatal(err)
	}
	_, err := LoadFixture(dir)
	if err == nil || !strings.Contains(err.Error(), path+":8: devices[1] A2: type \"ROUTER\"") {
		t.Fatalf("error %v", err)
	}
	if err := os.WriteFile(path, []byte(strings.Replace(bundle, "ROUTER", "SWITCH", 1)), 0o644); err != nil {
		t.Fatal(err)
	}
	f, err := LoadFixture(dir)
	if err != nil || f.Name != "bad" || !f.HasEntity("switch", "A2") {
		t.Fatalf("load from dir: %v", err)
	}
	if _, err := ParseFixture([]byte("format: other/v9\nname: x\n"), "x.yaml"); err == nil || !strings.Contains(err.Error(), "not supported") {
		t.Fatalf("unknown format accepted: %v", err)
	}
	if _, err := ParseFixture([]byte(bundle+"colour: red\n"), "x.yaml"); err == nil || !strings.Contains(err.Error(), "colour") {
		t.Fatalf("unknown field accepted: %v", err)
	}
}

func TestJournalFileRoundTrip(t *testing.T) {
	c := New(nil)
	do(t, c, "GET", "/network-monitoring/v1/aps", "")
	var buf bytes.Buffer
	if err := WriteJournal(&buf, c.Header(), c.Journal()); err != nil {
		t.Fatal(err)
	}
	h, entries, err := ReadJournal(bytes.NewReader(buf.Bytes()))
	if err != nil || h.FixtureVersion != c.Fixture().Version() || len(entries) != 1 || entries[0].Route != "GET /network-monitoring/v1/aps" {
		t.Fatalf("round trip: %v %+v %+v", err, h, entries)
	}
	if _, _, err := ReadJournal(strings.NewReader(`{"format":"fakecentral.journal/v9"}`)); err == nil {
		t.Fatal("unknown journal format accepted")
	}
}

// A reset after a read-only run keeps the state (it is still the
// fixture's); a reset after any write rebuilds it.
func TestResetRebuildsOnlyAfterWrites(t *testing.T) {
	c := New(nil)
	first := c.st
	do(t, c, "GET", "/network-monitoring/v1/clients?limit=5", "")
	c.Reset()
	if c.st != first {
		t.Errorf("a read-only run made Reset rebuild the state")
	}
	do(t, c, "PATCH", "/network-config/v1alpha1/wlan-ssids/Corp-Net", `{"vlan-id-range":["20"]}`)
	c.Reset()
	if c.st == first {
		t.Fatalf("a write did not make Reset rebuild the state")
	}
	if code, _, b := do(t, c, "GET", "/network-monitoring/v1/wlans/Corp-Net", ""); code != 200 || bytes.Contains(b, []byte(`"vlan":"20"`)) {
		t.Errorf("after Reset the write is still visible: %d %s", code, b)
	}
}

// TestFakesSharePristineViews starts two fakes of one fixture: they share
// the views rendered for the fixture's state (built once), and a write to
// one rebuilds its own views only.
func TestFakesSharePristineViews(t *testing.T) {
	fx, err := LoadFixture("site-a")
	if err != nil {
		t.Fatal(err)
	}
	a, b := New(&Options{Fixture: fx}), New(&Options{Fixture: fx})
	if a.st.view("wlans") != b.st.view("wlans") {
		t.Fatal("two fakes of one fixture rendered its views twice")
	}
	_, _, before := do(t, b, "GET", "/network-monitoring/v1/wlans/Corp-Net", "")
	if code, _, body := do(t, a, "PATCH", "/network-config/v1alpha1/wlan-ssids/Corp-Net", `{"vlan-id-range":["20"]}`); code/100 != 2 {
		t.Fatalf("write: %d %s", code, body)
	}
	if _, _, got := do(t, a, "GET", "/network-monitoring/v1/wlans/Corp-Net", ""); bytes.Equal(got, before) {
		t.Errorf("the write is not visible on the fake written to: %s", got)
	}
	if _, _, got := do(t, b, "GET", "/network-monitoring/v1/wlans/Corp-Net", ""); !bytes.Equal(got, before) {
		t.Errorf("a write to one fake changed another's answer:\n%s\n%s", before, got)
	}
	if c := New(&Options{Fixture: fx}); c.st.view("wlans") != b.st.view("wlans") {
		t.Error("a fake started after a write to another does not share the fixture's views")
	}
}
