package scenarios

import "testing"

func TestEndpointMatch(t *testing.T) {
	tests := []struct {
		pattern      string
		glob         bool
		method, path string
		want         bool
	}{
		{"GET /network-monitoring/v1/clients", false, "GET", "/network-monitoring/v1/clients", true},
		{"GET /network-monitoring/v1/clients", false, "GET", "/network-monitoring/v1/clients?limit=10", true},
		{"GET /network-monitoring/v1/clients", false, "POST", "/network-monitoring/v1/clients", false},
		{"GET /network-monitoring/v1/clients/{mac}", false, "GET", "/network-monitoring/v1/clients/aa:bb", true},
		{"GET /network-monitoring/v1/clients/{mac}", false, "GET", "/network-monitoring/v1/clients", false},
		{"GET /network-monitoring/v1/clients/{mac}", false, "GET", "/network-monitoring/v1/clients/aa/x", false},
		{"GET /network-monitoring/v1/*", true, "GET", "/network-monitoring/v1/aps", true},
		// A last "*" is anything under the prefix, as the methodology's
		// "POST /network-config/v1/*" means; not the prefix itself.
		{"GET /network-monitoring/v1/*", true, "GET", "/network-monitoring/v1/aps/CNAPA0101", true},
		{"POST /network-config/v1/*", true, "POST", "/network-config/v1/sites/2001/devices/x", true},
		{"POST /network-config/v1/*", true, "POST", "/network-config/v1", false},
		{"POST /network-config/v1/*", true, "POST", "/network-config/v1alpha1/sites", false},
		// Elsewhere, and within a segment, * stays within one segment.
		{"GET /network-monitoring/v1/*/CNAPA0101", true, "GET", "/network-monitoring/v1/aps/x/CNAPA0101", false},
		{"POST /network-troubleshooting/v1/aps/*/disconnect*", true, "POST", "/network-troubleshooting/v1/aps/A/disconnect/x", false},
		{"GET /network-monitoring/v1/aps/{serial}", true, "GET", "/network-monitoring/v1/aps/A/x", false},
		{"GET /network-monitoring/**", true, "GET", "/network-monitoring/v1/aps/CNAPA0101", true},
		{"GET /network-monitoring/**", true, "GET", "/network-monitoring", true},
		{"DELETE /**", true, "DELETE", "/anything/at/all", true},
		{"* /network-config/**", true, "PATCH", "/network-config/v1alpha1/wlan-ssids/x", true},
		{"GET /network-monitoring/v1/aps/*/*-trends", true, "GET", "/network-monitoring/v1/aps/CNAPA0101/cpu-utilization-trends", true},
		{"POST /network-troubleshooting/**/ping", true, "POST", "/network-troubleshooting/v1/aps/CNAPA0101/ping", true},
		{"POST /network-troubleshooting/**/ping", true, "POST", "/network-troubleshooting/v1/aps/CNAPA0101/reboot", false},
	}
	for _, tt := range tests {
		parse := ParseTemplate
		if tt.glob {
			parse = ParseGlob
		}
		e, err := parse(tt.pattern)
		if err != nil {
			t.Fatalf("parse %q: %v", tt.pattern, err)
		}
		if got := e.Match(tt.method, tt.path); got != tt.want {
			t.Errorf("%q.Match(%s %s) = %v, want %v", tt.pattern, tt.method, tt.path, got, tt.want)
		}
	}
}

func TestEndpointParseErrors(t *testing.T) {
	tests := []struct {
		pattern string
		glob    bool
		reason  string
	}{
		{"/network-monitoring/v1/clients", false, "no method"},
		{"get /a", false, "lower-case method"},
		{"FETCH /a", false, "unknown method"},
		{"GET a/b", false, "relative path"},
		{"GET /a/", false, "trailing slash"},
		{"GET /a//b", false, "empty segment"},
		{"GET /a/../b", false, "dot-dot segment"},
		{"GET /a/*", false, "glob in a template"},
		{"* /a", false, "any-method in a template"},
		{"GET /a?x=1", false, "query in a template"},
		{"GET /a/{b c}", false, "bad placeholder"},
		{"GET /a/x{b}", false, "placeholder inside a segment"},
		{"GET /a/[b", true, "bad glob"},
		{"GET /a/b**", true, "** inside a segment"},
		{"GET /**/a/**/b/**", true, "too many **"},
	}
	for _, tt := range tests {
		parse := ParseTemplate
		if tt.glob {
			parse = ParseGlob
		}
		if _, err := parse(tt.pattern); err == nil {
			t.Errorf("%q parsed; want an error (%s)", tt.pattern, tt.reason)
		}
	}
}

func TestCovers(t *testing.T) {
	tests := []struct {
		glob, template string
		want           bool
	}{
		{"POST /network-config/v1/*", "POST /network-config/v1/sites", true},
		{"DELETE /**", "DELETE /network-config/v1/sites/bulk", true},
		{"DELETE /**", "GET /network-config/v1/sites", false},
		{"GET /network-monitoring/v1/clients/*", "GET /network-monitoring/v1/clients/{mac}", true},
		{"GET /network-monitoring/v1/clients/aa*", "GET /network-monitoring/v1/clients/{mac}", false},
		{"POST /network-config/v1/*", "POST /network-config/v1/sites/{id}/devices", true},
	}
	for _, tt := range tests {
		g, err := ParseGlob(tt.glob)
		if err != nil {
			t.Fatal(err)
		}
		e, err := ParseTemplate(tt.template)
		if err != nil {
			t.Fatal(err)
		}
		if got := g.Covers(e); got != tt.want {
			t.Errorf("%q.Covers(%q) = %v, want %v", tt.glob, tt.template, got, tt.want)
		}
	}
}

// overlaps tells a must_not_call glob that can match a served route from
// one that guards nothing.
func TestOverlaps(t *testing.T) {
	tests := []struct {
		glob, route string
		want        bool
		why         string
	}{
		{"POST /network-config/v1/*", "POST /network-config/v1/sites/{id}/devices", true, "a last * is anything under"},
		{"POST /network-config/v1/*", "POST /network-config/v1alpha1/sites", false, "another prefix"},
		{"POST /network-config/v1/*", "GET /network-config/v1/sites", false, "another method"},
		{"* /network-config/**", "PATCH /network-config/v1/sites", true, "any method"},
		{"DELETE /**", "DELETE /network-config/v1/sites/{id}", true, "** is any depth"},
		{"POST /network-troubleshooting/**/disconnect*", "POST /network-troubleshooting/v1/aps/{serial}/disconnectUserByMacAddress", true, "a wildcard within a segment"},
		{"POST /network-troubleshooting/**/disconnect*", "POST /network-troubleshooting/v1/aps/{serial}/reboot", false, "the last segment differs"},
		{"GET /network-monitoring/v1/aps/CNAPA0101", "GET /network-monitoring/v1/aps/{serial}", true, "a literal where the route has a placeholder"},
		{"GET /network-monitoring/v1/aps/*/*-trends", "GET /network-monitoring/v1/aps/{serial}/cpu-utilization-trends", true, "wildcards over placeholders and literals"},
		{"GET /network-monitoring/v1/aps/{serial}", "GET /network-monitoring/v1/aps/{serial}/radios", false, "a placeholder is one segment"},
	}
	for _, tt := range tests {
		g, err := ParseGlob(tt.glob)
		if err != nil {
			t.Fatal(err)
		}
		r, err := ParseTemplate(tt.route)
		if err != nil {
			t.Fatal(err)
		}
		if got := g.overlaps(r); got != tt.want {
			t.Errorf("%q overlaps %q = %v, want %v (%s)", tt.glob, tt.route, got, tt.want, tt.why)
		}
	}
}
