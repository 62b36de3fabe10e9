package scenarios

import (
	"slices"
	"strings"
)

// testCatalog is a small working Catalog: fixtures with entities, and a
// route table of templates with classes.
type testCatalog struct {
	entities map[string]map[string][]string // fixture -> kind -> ids
	routes   []testRoute
}

type testRoute struct {
	pattern string
	class   string
}

func newTestCatalog() *testCatalog {
	return &testCatalog{
		entities: map[string]map[string][]string{
			"site-a": {
				"site":   {"2001"},
				"ap":     {"CNAPA0101", "CNAPA0102"},
				"switch": {"CNSWA0001"},
				"client": {"aa:bb:cc:11:22:33"},
				"wlan":   {"Corp-Net"},
			},
			"campus": {},
		},
		routes: []testRoute{
			{"GET /network-monitoring/v1/clients", ClassRead},
			{"GET /network-monitoring/v1/clients/{mac-address}", ClassRead},
			{"GET /network-monitoring/v1/aps/{serial-number}", ClassRead},
			{"GET /network-notifications/v1/alerts", ClassRead},
			{"GET /network-services/v1/firmware-details", ClassRead},
			{"GET /network-config/v1alpha1/wlan-ssids/{ssid}", ClassRead},
			{"PATCH /network-config/v1alpha1/wlan-ssids/{ssid}", ClassConfigWrite},
			{"POST /network-troubleshooting/v1/aps/{serial-number}/ping", ClassDiagnostic},
			{"POST /network-troubleshooting/v1/aps/{serial-number}/reboot", ClassDestructive},
			{"POST /network-troubleshooting/v1/aps/{serial-number}/disconnectUserByMacAddress", ClassWrite},
			{"POST /network-config/v1/sites", ClassConfigWrite},
			{"DELETE /network-config/v1/sites/{scope-id}", ClassDestructive},
			// The token endpoint, as the fake serves it (fakecentral.Serves).
			{"POST /oauth2/token", "auth"},
			{"POST /as/token.oauth2", "auth"},
		},
	}
}

func (c *testCatalog) HasFixture(name string) bool { _, ok := c.entities[name]; return ok }

func (c *testCatalog) HasEntity(fixture, kind, id string) bool {
	return slices.Contains(c.entities[fixture][kind], id)
}

func (c *testCatalog) Serves(method, pattern string) bool { return c.Class(method, pattern) != "" }

func (c *testCatalog) Routes() []string {
	out := make([]string, len(c.routes))
	for i, r := range c.routes {
		out[i] = r.pattern
	}
	return out
}

func (c *testCatalog) Class(method, path string) string {
	for _, r := range c.routes {
		m, p, _ := strings.Cut(r.pattern, " ")
		if m == method && sameTemplate(p, path) {
			return r.class
		}
	}
	return ""
}

// sameTemplate compares paths segment by segment; a placeholder on either
// side matches any segment.
func sameTemplate(a, b string) bool {
	as, bs := strings.Split(a, "/"), strings.Split(b, "/")
	if len(as) != len(bs) {
		return false
	}
	for i := range as {
		if as[i] != bs[i] && !isPlaceholder(as[i]) && !isPlaceholder(bs[i]) {
			return false
		}
	}
	return true
}
