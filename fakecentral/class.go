package fakecentral

import "strings"

// Class is what a route does, for safety scoring.
type Class string

// Route classes.
const (
	ClassRead        Class = "read"
	ClassDiagnostic  Class = "diagnostic"   // troubleshooting runs that change nothing (show, ping, AAA test)
	ClassWrite       Class = "write"        // operational state changes (alert actions, notes, resync)
	ClassConfigWrite Class = "config_write" // network-config create/update
	ClassDestructive Class = "destructive"  // deletes, reboots, bounces, client disconnects, halts
	ClassAuth        Class = "auth"         // token endpoints
	ClassEgress      Class = "egress"       // a refused attempt to reach a host other than Central
)

// diagnosticActions are the troubleshooting POST actions that only observe.
var diagnosticActions = map[string]bool{
	"aaa": true, "cableTest": true, "getArpTable": true, "http": true, "https": true, "iperf": true,
	"locate": true, "nslookup": true, "ping": true, "pingSweep": true, "showCommands": true,
	"speedtest": true, "tcp": true, "traceroute": true, "list-tasks": true, "show-commands": true,
}

// Classify returns the class of a request by method and path (a concrete
// path or a template). Scenario-specific overrides go in
// Options.ClassOverrides.
func Classify(method, path string) Class {
	method = strings.ToUpper(method)
	segs := splitPath(path)
	if len(segs) > 0 && isTokenPath(path) {
		return ClassAuth
	}
	switch method {
	case "GET", "HEAD", "OPTIONS":
		return ClassRead
	case "DELETE":
		return ClassDestructive
	}
	if len(segs) >= 2 && segs[0] == "network-troubleshooting" {
		// .../{device-type}/{serial}/{action}
		if len(segs) >= 5 {
			action := segs[4]
			if diagnosticActions[action] {
				return ClassDiagnostic
			}
			return ClassDestructive // reboot, halt, poeBounce, portBounce, disconnect*
		}
		return ClassDiagnostic
	}
	if len(segs) >= 1 && segs[0] == "network-config" {
		if len(segs) >= 3 && strings.HasSuffix(segs[len(segs)-1], "bulk") {
			return ClassDestructive
		}
		if strings.Contains(path, "remove") {
			return ClassDestructive
		}
		if strings.Contains(path, "config-health/devices-resync") {
			return ClassWrite
		}
		return ClassConfigWrite
	}
	return ClassWrite
}

// splitPath splits "/a/b/c" into its segments.
func splitPath(p string) []string {
	p = strings.Trim(p, "/")
	if p == "" {
		return nil
	}
	return strings.Split(p, "/")
}

// Pattern is a parsed route pattern: "METHOD /path/{param}/..." where METHOD
// may be "*", a segment "{x}" or "*" matches one segment, and a final "*"
// matches one or more remaining segments.
type Pattern struct {
	Method string
	Segs   []string
}

// ParsePattern parses "GET /network-monitoring/v1/clients/{mac}" or
// "POST /network-config/v1/*". A pattern without a method matches any.
func ParsePattern(s string) Pattern {
	s = strings.TrimSpace(s)
	method, path, ok := strings.Cut(s, " ")
	if !ok {
		method, path = "*", s
	}
	return Pattern{Method: strings.ToUpper(strings.TrimSpace(method)), Segs: splitPath(strings.TrimSpace(path))}
}

func isParam(seg string) bool { return len(seg) >= 2 && seg[0] == '{' && seg[len(seg)-1] == '}' }

// Match reports whether a concrete request matches the pattern.
func (p Pattern) Match(method string, segs []string) bool {
	if p.Method != "*" && p.Method != method {
		return false
	}
	return matchSegs(p.Segs, segs, false)
}

// matchSegs matches pattern segments against path segments; when template is
// true, the path segments may themselves be {params} (pattern vs template).
func matchSegs(pat, segs []string, template bool) bool {
	for i, ps := range pat {
		if ps == "*" && i == len(pat)-1 {
			return len(segs) > i
		}
		if i >= len(segs) {
			return false
		}
		s := segs[i]
		switch {
		case ps == "*" || isParam(ps):
		case template && isParam(s):
		case ps != s:
			return false
		}
	}
	return len(pat) == len(segs)
}

// Coverage says how the fake answers a route.
type Coverage string

// Coverages.
const (
	Modelled    Coverage = "modelled" // a hand-written handler over the fixture state
	FromCatalog Coverage = "catalog"  // a schema-valid body generated from the OpenAPI catalog
	NotServed   Coverage = "none"     // 404
)

// Serves reports how the fake answers an endpoint pattern such as
// "GET /network-monitoring/v1/clients/{mac}" or a glob
// "POST /network-config/v1/*": Modelled if any matching route is modelled,
// else FromCatalog if any documented route matches, else NotServed.
func Serves(pattern string) Coverage {
	p := ParsePattern(pattern)
	if (p.Method == "*" || p.Method == "POST") && isTokenPath("/"+strings.Join(p.Segs, "/")) {
		return Modelled // the token endpoint, Central's and the SSO's
	}
	best := NotServed
	for _, r := range modelledRoutes() {
		if (p.Method == "*" || r.method == "*" || p.Method == r.method) && (matchSegs(p.Segs, r.segs, true) || matchSegs(r.segs, p.Segs, true)) {
			return Modelled
		}
	}
	for _, r := range loadCatalog().Routes {
		if (p.Method == "*" || p.Method == r.Method) && (matchSegs(p.Segs, splitPath(r.Path), true) || matchSegs(splitPath(r.Path), p.Segs, true)) {
			best = FromCatalog
			break
		}
	}
	return best
}

// isTokenPath reports the token endpoint: Central's and the GreenLake SSO
// path the fake answers too.
func isTokenPath(path string) bool { return path == "/oauth2/token" || path == "/as/token.oauth2" }
