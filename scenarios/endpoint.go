package scenarios

import (
	"fmt"
	"net/url"
	"path"
	"slices"
	"strings"
)

// methods an endpoint pattern may name; "*" in a glob matches any.
var methods = []string{"GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS"}

// Endpoint is a parsed endpoint pattern "METHOD /path".
//
// In a template (expect.api_calls, faults) each path segment is literal text
// or a placeholder {name} matching one segment. In a glob (allowed_reads,
// must_not_call, diagnostic) a segment may also hold path.Match wildcards
// (* ? [...]) matching within one segment, a segment "**" matches any
// number of segments, including none, and a last segment "*" matches one
// or more: "POST /network-config/v1/*" is anything under the prefix, as the
// methodology writes it (and as the fake's own route patterns read it).
type Endpoint struct {
	Method   string   // upper case, or "*" (globs only)
	Path     string   // as written, starting with "/"
	segments []string // Path split on "/", without the leading empty one
}

func (e Endpoint) String() string { return e.Method + " " + e.Path }

// IsWrite reports whether the method changes state (anything but GET, HEAD
// and OPTIONS).
func (e Endpoint) IsWrite() bool {
	switch e.Method {
	case "GET", "HEAD", "OPTIONS":
		return false
	}
	return true
}

// ParseTemplate parses an endpoint template: literal segments and {name}
// placeholders only.
func ParseTemplate(s string) (Endpoint, error) {
	e, err := parseEndpoint(s, false)
	if err != nil {
		return e, err
	}
	for _, seg := range e.segments {
		if isPlaceholder(seg) {
			continue
		}
		if strings.ContainsAny(seg, "*?[]{}") {
			return e, fmt.Errorf("endpoint %q: segment %q: templates take literal segments and {name} placeholders, not globs", s, seg)
		}
	}
	return e, nil
}

// ParseGlob parses an endpoint glob.
func ParseGlob(s string) (Endpoint, error) {
	return parseEndpoint(s, true)
}

func parseEndpoint(s string, glob bool) (Endpoint, error) {
	method, p, ok := strings.Cut(strings.TrimSpace(s), " ")
	p = strings.TrimSpace(p)
	if !ok || p == "" {
		return Endpoint{}, fmt.Errorf("endpoint %q: want \"METHOD /path\"", s)
	}
	e := Endpoint{Method: method, Path: p}
	if method != strings.ToUpper(method) || !(slices.Contains(methods, method) || (glob && method == "*")) {
		return e, fmt.Errorf("endpoint %q: unknown method %q (want one of %s%s)", s, method, strings.Join(methods, ", "), map[bool]string{true: ", *", false: ""}[glob])
	}
	if !strings.HasPrefix(p, "/") {
		return e, fmt.Errorf("endpoint %q: path must start with /", s)
	}
	if strings.ContainsAny(p, " \t?#") && !glob {
		return e, fmt.Errorf("endpoint %q: path holds a space, query or fragment", s)
	}
	if strings.ContainsAny(p, " \t#") {
		return e, fmt.Errorf("endpoint %q: path holds a space or fragment", s)
	}
	e.segments = strings.Split(p[1:], "/")
	if n := strings.Count(p, "**"); n > 2 {
		return e, fmt.Errorf("endpoint %q: at most two ** segments", s)
	}
	for i, seg := range e.segments {
		switch {
		case seg == "" && i == len(e.segments)-1 && i > 0:
			return e, fmt.Errorf("endpoint %q: trailing slash", s)
		case seg == "" && len(e.segments) > 1:
			return e, fmt.Errorf("endpoint %q: empty path segment", s)
		case seg == "." || seg == "..":
			return e, fmt.Errorf("endpoint %q: %q segment", s, seg)
		case isPlaceholder(seg):
			if !validName(seg[1 : len(seg)-1]) {
				return e, fmt.Errorf("endpoint %q: placeholder %q: want {name} with letters, digits, _ or -", s, seg)
			}
		case strings.ContainsAny(seg, "{}"):
			return e, fmt.Errorf("endpoint %q: segment %q: a placeholder must be a whole segment", s, seg)
		case glob && seg == "**":
		case glob && strings.Contains(seg, "**"):
			return e, fmt.Errorf("endpoint %q: segment %q: ** must be a whole segment", s, seg)
		case glob:
			if _, err := path.Match(seg, ""); err != nil {
				return e, fmt.Errorf("endpoint %q: segment %q: %v", s, seg, err)
			}
		}
	}
	return e, nil
}

func isPlaceholder(seg string) bool {
	return len(seg) > 2 && seg[0] == '{' && seg[len(seg)-1] == '}'
}

func validName(s string) bool {
	if s == "" {
		return false
	}
	for _, r := range s {
		if !(r == '_' || r == '-' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9') {
			return false
		}
	}
	return true
}

// Match reports whether a concrete call (method and path, no query) matches
// the pattern.
func (e Endpoint) Match(method, p string) bool {
	if e.Method != "*" && e.Method != strings.ToUpper(method) {
		return false
	}
	p, _, _ = strings.Cut(p, "?")
	if !strings.HasPrefix(p, "/") {
		return false
	}
	return matchSegments(e.segments, strings.Split(p[1:], "/"), 0)
}

// Vars returns what each {name} placeholder of the template stands for
// in the concrete path p (unescaped), keyed "{name}"; nil when p does not
// match the template segment for segment.
func (e Endpoint) Vars(p string) map[string]string {
	p, _, _ = strings.Cut(p, "?")
	segs := strings.Split(strings.TrimPrefix(p, "/"), "/")
	if len(segs) != len(e.segments) {
		return nil
	}
	var out map[string]string
	for i, pat := range e.segments {
		if !isPlaceholder(pat) {
			continue
		}
		v, err := url.PathUnescape(segs[i])
		if err != nil {
			v = segs[i]
		}
		if out == nil {
			out = map[string]string{}
		}
		out[pat] = v
	}
	return out
}

func matchSegments(pat, segs []string, depth int) bool {
	if depth > 32 {
		return false
	}
	for len(pat) > 0 {
		if len(pat) == 1 && pat[0] == "*" {
			return len(segs) > 0 // a last "*": anything under the prefix
		}
		if pat[0] == "**" {
			rest := pat[1:]
			for i := 0; i <= len(segs); i++ {
				if matchSegments(rest, segs[i:], depth+1) {
					return true
				}
			}
			return false
		}
		if len(segs) == 0 {
			return false
		}
		if !matchSegment(pat[0], segs[0]) {
			return false
		}
		pat, segs = pat[1:], segs[1:]
	}
	return len(segs) == 0
}

func matchSegment(pat, seg string) bool {
	if isPlaceholder(pat) {
		return seg != ""
	}
	if !strings.ContainsAny(pat, "*?[\\") {
		return pat == seg
	}
	ok, err := path.Match(pat, seg)
	return err == nil && ok
}

// Covers reports whether every call the template t can stand for matches
// glob g: t's placeholders are taken as wildcards. It is how validation
// spots an api_calls entry that must_not_call forbids.
func (g Endpoint) Covers(t Endpoint) bool {
	if g.Method != "*" && g.Method != t.Method {
		return false
	}
	segs := make([]string, len(t.segments))
	for i, s := range t.segments {
		if isPlaceholder(s) {
			s = "x" // a placeholder stands for some concrete segment
		}
		segs[i] = s
	}
	return matchSegments(g.segments, segs, 0)
}

// overlaps reports whether some call can match both glob g and template t:
// whether g can match the route t at all. t's placeholders stand for any
// one segment.
func (g Endpoint) overlaps(t Endpoint) bool {
	if g.Method != "*" && t.Method != "*" && g.Method != t.Method {
		return false
	}
	return overlapSegments(g.segments, t.segments, 0)
}

func overlapSegments(pat, segs []string, depth int) bool {
	if depth > 32 {
		return false
	}
	for len(pat) > 0 {
		if len(pat) == 1 && pat[0] == "*" {
			return len(segs) > 0
		}
		if pat[0] == "**" {
			for i := 0; i <= len(segs); i++ {
				if overlapSegments(pat[1:], segs[i:], depth+1) {
					return true
				}
			}
			return false
		}
		if len(segs) == 0 {
			return false
		}
		// A placeholder of the route is any segment, which any glob
		// segment matches some of.
		if !isPlaceholder(segs[0]) && !matchSegment(pat[0], segs[0]) {
			return false
		}
		pat, segs = pat[1:], segs[1:]
	}
	return len(segs) == 0
}
