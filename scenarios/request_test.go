package scenarios

import (
	"encoding/json"
	"strings"
	"testing"
	"time"
)

func TestMatchRequest(t *testing.T) {
	now := time.Date(2026, 11, 20, 10, 0, 0, 0, time.UTC)
	byPath := mustTemplate(t, "GET /network-monitoring/v1/clients/{mac}")
	list := mustTemplate(t, "GET /network-monitoring/v1/clients")
	patch := mustTemplate(t, "PATCH /network-config/v1alpha1/wlan-ssids/{ssid}")
	f := func(v float64) *float64 { return &v }
	cases := []struct {
		name    string
		alt     Endpoint
		rq      Request
		params  map[string]*ParamRule
		applied int
		bad     string // the mismatched fields, comma-joined
	}{
		{"path placeholder, normalised", byPath,
			Request{Method: "GET", Path: "/network-monitoring/v1/clients/AA-BB-CC-11-22-33"},
			map[string]*ParamRule{"{mac}": {Equals: "aa:bb:cc:11:22:33", Normalize: "mac"}}, 1, ""},
		{"escaped path segment", byPath,
			Request{Method: "GET", Path: "/network-monitoring/v1/clients/aa%3Abb%3Acc%3A11%3A22%3A33"},
			map[string]*ParamRule{"mac": {Equals: "aa:bb:cc:11:22:33"}}, 1, ""},
		{"a placeholder rule skips an alternative without it", list,
			Request{Method: "GET", Path: "/network-monitoring/v1/clients", Query: "limit=100"},
			map[string]*ParamRule{"{mac}": {Equals: "aa:bb:cc:11:22:33"}}, 0, ""},
		{"filter eq, url-encoded", list,
			Request{Method: "GET", Path: "/network-monitoring/v1/clients", Query: "filter=wlanName+eq+%27Guest-WiFi%27&limit=50"},
			map[string]*ParamRule{"filter.wlanName": {Equals: "Guest-WiFi"}}, 1, ""},
		{"bare name finds the filter", list,
			Request{Method: "GET", Path: "/network-monitoring/v1/clients", Query: "filter=status+eq+%27Connected%27+and+wlanName+eq+%27Guest-WiFi%27"},
			map[string]*ParamRule{"wlanName": {Equals: "Guest-WiFi"}}, 1, ""},
		{"filter in is a list", list,
			Request{Method: "GET", Path: "/network-monitoring/v1/clients", Query: "filter=siteId+in+('2','1')"},
			map[string]*ParamRule{"filter.siteId": {Equals: []any{"1", "2"}, Unordered: true}}, 1, ""},
		{"wrong filter value", list,
			Request{Method: "GET", Path: "/network-monitoring/v1/clients", Query: "filter=wlanName+eq+%27Corp-Net%27"},
			map[string]*ParamRule{"filter.wlanName": {Equals: "Guest-WiFi"}}, 1, "filter.wlanName"},
		{"missing query field", list,
			Request{Method: "GET", Path: "/network-monitoring/v1/clients"},
			map[string]*ParamRule{"query.site-id": {Equals: "2001"}, "query.limit": {Optional: true, Max: f(100)}}, 2, "query.site-id"},
		{"query text read as a number", list,
			Request{Method: "GET", Path: "/network-monitoring/v1/clients", Query: "site-id=2001&limit=500"},
			map[string]*ParamRule{"query.site-id": {Equals: 2001}, "query.limit": {Max: f(100)}}, 2, "query.limit"},
		{"body path", patch,
			Request{Method: "PATCH", Path: "/network-config/v1alpha1/wlan-ssids/Guest-WiFi", Body: json.RawMessage(`{"opmode":"WPA3_SAE","vlan":{"id":30}}`)},
			map[string]*ParamRule{"{ssid}": {Equals: "Guest-WiFi"}, "body.opmode": {Equals: "WPA3_SAE"}, "body.vlan.id": {Equals: 30}, "body.vlan.name": {Optional: true}}, 4, ""},
		{"the first field of a|b the request has", list,
			Request{Method: "GET", Path: "/network-monitoring/v1/clients", Query: "filter=serialNumber+eq+%27CNAPA0102%27"},
			map[string]*ParamRule{"serial-number|filter.serialNumber": {Equals: "cnapa0102", Normalize: "serial"}}, 1, ""},
		{"placeholder alternatives apply where the route has one", list,
			Request{Method: "GET", Path: "/network-monitoring/v1/clients"},
			map[string]*ParamRule{"{ssid}|{wlan-name}": {Equals: "Corp-Net"}}, 0, ""},
		{"bare name reaches a top-level body field", patch,
			Request{Method: "PATCH", Path: "/network-config/v1alpha1/wlan-ssids/Guest-WiFi", Body: json.RawMessage(`{"opmode":"OPEN"}`)},
			map[string]*ParamRule{"opmode": {Equals: "WPA3_SAE"}}, 1, "opmode"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			ms, applied := CallSet{AnyOf: []string{c.alt.String()}, Params: c.params}.MatchRequest(c.alt, c.rq, now)
			var bad []string
			for _, m := range ms {
				bad = append(bad, m.Param)
			}
			if got := strings.Join(bad, ","); got != c.bad || applied != c.applied {
				t.Errorf("mismatched %q, %d rules applied; want %q, %d (%v)", got, applied, c.bad, c.applied, ms)
			}
		})
	}
}

func TestRequestRefs(t *testing.T) {
	alts := []Endpoint{mustTemplate(t, "GET /network-monitoring/v1/clients/{mac}"), mustTemplate(t, "GET /network-monitoring/v1/clients")}
	for ref, ok := range map[string]bool{
		"{mac}": true, "{serial}": false, "query.limit": true, "filter.wlanName": true,
		"body.vlan.id": true, "mac": true, "query.": false, "body.a.": false, "a b": false,
		"serial-number|filter.serialNumber": true, "{mac}|{serial}": false, "mac|": false,
	} {
		if why := checkRequestRef(ref, alts); (why == "") != ok {
			t.Errorf("checkRequestRef(%q) = %q, want ok=%v", ref, why, ok)
		}
	}
}

func mustTemplate(t *testing.T, s string) Endpoint {
	t.Helper()
	e, err := ParseTemplate(s)
	if err != nil {
		t.Fatal(err)
	}
	return e
}
