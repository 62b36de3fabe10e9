package fakecentral

import (
	"slices"
	"testing"
)

// TestPeerFieldExpectations checks the fields the compared servers validate
// strictly (pydantic models; see ../shared/reference/peers/*.md): missing
// keys or wrong types there turn a tool result into a parse error.
func TestPeerFieldExpectations(t *testing.T) {
	for _, name := range FixtureNames() {
		c := New(&Options{Fixture: MustLoadFixture(name)})
		fx := c.Fixture()
		// The first site with an active alert (Sites[0] in site-a, campus
		// and incident; branches lists Boston-BackBay first, which has none).
		site := fx.Sites[0].ID
		if i := slices.IndexFunc(fx.Sites, func(s Site) bool {
			return slices.ContainsFunc(fx.Alerts, func(a Alert) bool { return a.Site == s.ID && a.Status == "Active" })
		}); i >= 0 {
			site = fx.Sites[i].ID
		}
		win := "&start-at=" + fx.Now().Add(-24*3600e9).Format("2006-01-02T15:04:05.000Z") + "&end-at=" + fx.Now().Format("2006-01-02T15:04:05.000Z")
		cases := []struct {
			target, list string
			strings      []string // present, string-typed, non-empty
			present      []string // present (any value, may be "")
			oneOf        map[string][]string
		}{
			{"/network-troubleshooting/v1/events?context-type=SITE&context-identifier=" + site + "&site-id=" + site + "&limit=50" + win, "events",
				[]string{"eventId", "eventIdentifier", "timeAt", "eventName", "category", "sourceType", "sourceName", "description"},
				[]string{"serialNumber", "clientMacAddress", "deviceMacAddress", "stackId", "bssid", "reason", "severity"},
				map[string][]string{"sourceType": {"Access Point", "Switch", "Gateway", "Wireless Client", "Wired Client", "Bridge"}}},
			{"/network-monitoring/v1/device-inventory?limit=1000", "items",
				[]string{"serialNumber", "macAddress", "deviceType", "model", "partNumber", "deviceName", "isProvisioned"}, nil,
				map[string][]string{"status": {"ONLINE", "OFFLINE"}, "isProvisioned": {"Yes", "No"}}},
			{"/network-monitoring/v1/aps?limit=100", "items", []string{"serialNumber"}, nil, map[string][]string{"status": {"ONLINE", "OFFLINE"}}},
			{"/network-monitoring/v1/clients?limit=1000&filter=" + q("status in ('Connected', 'Failed')"), "items",
				[]string{"macAddress", "status", "clientConnectionType", "siteId"}, nil, nil},
			{"/network-notifications/v1/alerts?limit=50&sort=" + q("severity desc") + "&filter=" + q("status eq 'Active' and siteId eq '"+site+"'"), "items",
				[]string{"summary", "createdAt", "priority"}, nil, nil},
			{"/network-monitoring/v1/wlans?limit=100", "items", []string{"wlanName", "securityLevel", "security", "status"}, nil, nil},
			{"/network-monitoring/v1/sites-health?limit=100&offset=0", "items", []string{"siteName", "id"}, []string{"address", "location", "health", "devices", "clients", "alerts"}, nil},
		}
		for _, tc := range cases {
			code, _, b := do(t, c, "GET", tc.target, "")
			if code != 200 {
				t.Fatalf("%s %s: %d %s", name, tc.target, code, b)
			}
			items, _ := decode(t, b)[tc.list].([]any)
			if len(items) == 0 {
				t.Errorf("%s %s: no %s", name, tc.target, tc.list)
			}
			for _, it := range items {
				m := it.(map[string]any)
				for _, k := range tc.strings {
					if s, ok := m[k].(string); !ok || s == "" {
						t.Errorf("%s %s: %s = %#v, want a non-empty string", name, tc.target, k, m[k])
					}
				}
				for _, k := range tc.present {
					if _, ok := m[k]; !ok {
						t.Errorf("%s %s: key %s missing", name, tc.target, k)
					}
				}
				for k, allowed := range tc.oneOf {
					if !contains(allowed, m[k].(string)) {
						t.Errorf("%s %s: %s = %q not in %v", name, tc.target, k, m[k], allowed)
					}
				}
				for _, k := range []string{"vlanId", "clientTags", "vlan"} {
					if v, ok := m[k]; ok {
						if _, isStr := v.(string); !isStr {
							t.Errorf("%s %s: %s must be a string, got %T", name, tc.target, k, v)
						}
					}
				}
			}
		}
	}
}
