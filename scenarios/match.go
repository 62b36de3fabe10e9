package scenarios

import (
	"encoding/json"
	"fmt"
	"math"
	"path"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"time"
)

// ParamRule says which values of one tool argument are acceptable. The
// checks that are set all apply; a rule with none set only requires the
// argument to be present (unless Optional). A bare scalar in YAML is
// shorthand for {equals: scalar}.
type ParamRule struct {
	// Equals is the expected value: a scalar, a list or a mapping.
	Equals any `yaml:"equals" json:"equals,omitempty"`
	// OneOf lists acceptable values; any one of them matches (as BFCL does).
	OneOf []any `yaml:"one_of" json:"one_of,omitempty"`
	// Min and Max bound a numeric argument (inclusive).
	Min *float64 `yaml:"min" json:"min,omitempty"`
	Max *float64 `yaml:"max" json:"max,omitempty"`
	// Normalize is applied to strings on both sides before comparing:
	// "mac" (separators and case ignored), "serial" (case and surrounding
	// space ignored), "path" (./a/b equals a/b), "case" (case-insensitive
	// enums).
	Normalize string `yaml:"normalize" json:"normalize,omitempty"`
	// Unordered compares lists as sets (multisets): order does not matter.
	Unordered bool `yaml:"unordered" json:"unordered,omitempty"`
	// Time accepts a timestamp within a window relative to the fixture's
	// clock ("last week" -> from: -8d, to: -6d).
	Time *TimeRule `yaml:"time" json:"time,omitempty"`
	// Type, when set, is the JSON type the argument must have: string,
	// number, integer, boolean, array or object.
	Type string `yaml:"type" json:"type,omitempty"`
	// Optional arguments may be left out; when given they must match.
	Optional bool `yaml:"optional" json:"optional,omitempty"`
	// Example is a value the rule accepts, for a rule that names none
	// (a type, a range, a time window, presence): what the oracle sends.
	// Lint checks the rule accepts it. It changes no match.
	Example any `yaml:"example" json:"example,omitempty"`
}

// TimeRule is an accepted window for a timestamp argument. Each bound is
// "now", an offset from the fixture clock such as "-7d", "-36h" or "+1h"
// (units s, m, h, d, w), or an RFC 3339 time.
type TimeRule struct {
	From string `yaml:"from" json:"from"`
	To   string `yaml:"to" json:"to"`
}

// Reason is why a tool call did not match what a scenario expects. Scoring
// reports these names.
type Reason string

const (
	WrongTool       Reason = "wrong_tool"       // a tool no correct solution uses, or a forbidden one
	MissingRequired Reason = "missing_required" // a required argument is absent
	UnexpectedParam Reason = "unexpected_param" // an argument neither expected nor allowed
	WrongType       Reason = "wrong_type"       // an argument of the wrong JSON type
	WrongValue      Reason = "wrong_value"      // an argument of the right type with an unacceptable value
)

// Mismatch is one reason a call did not match.
type Mismatch struct {
	Reason Reason `json:"reason"`
	Tool   string `json:"tool,omitempty"`
	Param  string `json:"param,omitempty"`
	Detail string `json:"detail"`
}

func (m Mismatch) String() string {
	var b strings.Builder
	b.WriteString(string(m.Reason))
	if m.Tool != "" {
		b.WriteString(" " + m.Tool)
	}
	if m.Param != "" {
		b.WriteString("." + m.Param)
	}
	if m.Detail != "" {
		b.WriteString(": " + m.Detail)
	}
	return b.String()
}

// MatchCall checks one tool call made on server against the scenario:
// the tool must be among the server's expected tools and not forbidden, and
// its arguments must meet the scenario's rules for that tool. now is the
// fixture's clock. It returns nil when the call matches.
func (s *Scenario) MatchCall(server, tool string, args map[string]any, now time.Time) []Mismatch {
	if slices.Contains(s.ForbiddenTools, tool) {
		return []Mismatch{{Reason: WrongTool, Tool: tool, Detail: "forbidden in this scenario"}}
	}
	expected, covered := s.ToolsFor(server)
	if !covered || !slices.Contains(expected, tool) {
		return []Mismatch{{Reason: WrongTool, Tool: tool, Detail: fmt.Sprintf("expected one of %v", expected)}}
	}
	rules := s.ParamsFor(server, tool)
	if rules == nil {
		return nil
	}
	ms := MatchParams(rules, s.AllowedExtraParams, args, now)
	for i := range ms {
		ms[i].Tool = tool
	}
	return ms
}

// MatchParams checks arguments against per-parameter rules. Arguments with
// no rule are unexpected unless listed in allowedExtra. Mismatches come out
// sorted by parameter name.
func MatchParams(rules map[string]*ParamRule, allowedExtra []string, args map[string]any, now time.Time) []Mismatch {
	var out []Mismatch
	names := make([]string, 0, len(rules)+len(args))
	for k := range rules {
		names = append(names, k)
	}
	for k := range args {
		if _, ok := rules[k]; !ok {
			names = append(names, k)
		}
	}
	slices.Sort(names)
	for _, name := range names {
		rule, hasRule := rules[name]
		v, given := args[name]
		switch {
		case !hasRule:
			if !slices.Contains(allowedExtra, name) {
				out = append(out, Mismatch{Reason: UnexpectedParam, Param: name, Detail: fmt.Sprintf("got %s", show(v))})
			}
		case !given || v == nil:
			if rule == nil || !rule.Optional {
				out = append(out, Mismatch{Reason: MissingRequired, Param: name, Detail: "required argument not given"})
			}
		default:
			if m := MatchValue(rule, v, now); m != nil {
				m.Param = name
				out = append(out, *m)
			}
		}
	}
	return out
}

// MatchValue checks one argument value (as decoded from JSON or YAML)
// against a rule; now is the fixture's clock. It returns nil on a match.
func MatchValue(r *ParamRule, v any, now time.Time) *Mismatch {
	if r == nil {
		return nil
	}
	v = normalizeJSON(v)
	if r.Type != "" && !hasType(v, r.Type) {
		return &Mismatch{Reason: WrongType, Detail: fmt.Sprintf("want %s, got %s", r.Type, jsonType(v))}
	}
	if r.Min != nil || r.Max != nil {
		f, ok := v.(float64)
		if !ok {
			return &Mismatch{Reason: WrongType, Detail: fmt.Sprintf("want number, got %s", jsonType(v))}
		}
		if (r.Min != nil && f < *r.Min) || (r.Max != nil && f > *r.Max) {
			return &Mismatch{Reason: WrongValue, Detail: fmt.Sprintf("%v outside [%s, %s]", f, bound(r.Min, "-inf"), bound(r.Max, "+inf"))}
		}
	}
	if r.Time != nil {
		t, ok := parseTimeValue(v)
		if !ok {
			return &Mismatch{Reason: WrongType, Detail: fmt.Sprintf("want a timestamp, got %s", show(v))}
		}
		from, err1 := ResolveTime(r.Time.From, now)
		to, err2 := ResolveTime(r.Time.To, now)
		if err1 != nil || err2 != nil {
			return &Mismatch{Reason: WrongValue, Detail: "invalid time rule"}
		}
		if t.Before(from) || t.After(to) {
			return &Mismatch{Reason: WrongValue, Detail: fmt.Sprintf("%s outside [%s, %s]", t.UTC().Format(time.RFC3339), from.UTC().Format(time.RFC3339), to.UTC().Format(time.RFC3339))}
		}
	}
	if r.Equals != nil {
		want := normalizeJSON(r.Equals)
		if !typeCompatible(want, v) {
			return &Mismatch{Reason: WrongType, Detail: fmt.Sprintf("want %s, got %s", jsonType(want), jsonType(v))}
		}
		if !equalValues(want, v, r) {
			return &Mismatch{Reason: WrongValue, Detail: fmt.Sprintf("want %s, got %s", show(want), show(v))}
		}
	}
	if len(r.OneOf) > 0 {
		anyType := false
		for _, w := range r.OneOf {
			w = normalizeJSON(w)
			if typeCompatible(w, v) {
				anyType = true
				if equalValues(w, v, r) {
					return nil
				}
			}
		}
		if !anyType {
			return &Mismatch{Reason: WrongType, Detail: fmt.Sprintf("want one of %s, got %s", show(r.OneOf), jsonType(v))}
		}
		return &Mismatch{Reason: WrongValue, Detail: fmt.Sprintf("want one of %s, got %s", show(normalizeJSON(r.OneOf)), show(v))}
	}
	return nil
}

func bound(f *float64, inf string) string {
	if f == nil {
		return inf
	}
	return strconv.FormatFloat(*f, 'g', -1, 64)
}

// normalizeJSON maps YAML and Go values onto JSON's: float64 numbers,
// []any, map[string]any.
func normalizeJSON(v any) any {
	switch x := v.(type) {
	case nil, string, bool, float64:
		return x
	case int:
		return float64(x)
	case int64:
		return float64(x)
	case uint64:
		return float64(x)
	case float32:
		return float64(x)
	case json.Number:
		f, err := x.Float64()
		if err != nil {
			return x.String()
		}
		return f
	case []any:
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = normalizeJSON(e)
		}
		return out
	case []string:
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = e
		}
		return out
	case map[string]any:
		out := make(map[string]any, len(x))
		for k, e := range x {
			out[k] = normalizeJSON(e)
		}
		return out
	case map[any]any:
		out := make(map[string]any, len(x))
		for k, e := range x {
			out[fmt.Sprint(k)] = normalizeJSON(e)
		}
		return out
	}
	// Anything else (a time.Time from a YAML timestamp): compare as text.
	return fmt.Sprint(v)
}

func jsonType(v any) string {
	switch x := v.(type) {
	case nil:
		return "null"
	case string:
		return "string"
	case bool:
		return "boolean"
	case float64:
		if x == math.Trunc(x) {
			return "integer"
		}
		return "number"
	case []any:
		return "array"
	case map[string]any:
		return "object"
	}
	return reflect.TypeOf(v).String()
}

func hasType(v any, t string) bool {
	got := jsonType(v)
	return got == t || (t == "number" && got == "integer")
}

// typeCompatible reports whether want and got are the same JSON type
// (integers and other numbers are one type here).
func typeCompatible(want, got any) bool {
	a, b := jsonType(want), jsonType(got)
	if a == "integer" {
		a = "number"
	}
	if b == "integer" {
		b = "number"
	}
	return a == b
}

// equalValues compares normalised JSON values under r's normalisation and
// ordering.
func equalValues(want, got any, r *ParamRule) bool {
	switch w := want.(type) {
	case string:
		g, ok := got.(string)
		return ok && NormalizeString(r.Normalize, w) == NormalizeString(r.Normalize, g)
	case float64:
		g, ok := got.(float64)
		return ok && w == g
	case bool:
		g, ok := got.(bool)
		return ok && w == g
	case nil:
		return got == nil
	case []any:
		g, ok := got.([]any)
		if !ok || len(g) != len(w) {
			return false
		}
		if !r.Unordered {
			for i := range w {
				if !equalValues(w[i], g[i], r) {
					return false
				}
			}
			return true
		}
		used := make([]bool, len(g))
	next:
		for _, we := range w {
			for j, ge := range g {
				if !used[j] && equalValues(we, ge, r) {
					used[j] = true
					continue next
				}
			}
			return false
		}
		return true
	case map[string]any:
		g, ok := got.(map[string]any)
		if !ok || len(g) != len(w) {
			return false
		}
		for k, we := range w {
			ge, ok := g[k]
			if !ok || !equalValues(we, ge, r) {
				return false
			}
		}
		return true
	}
	return false
}

// normalizations a ParamRule may name.
var normalizations = []string{"mac", "serial", "path", "case"}

// NormalizeString applies a named normalisation to s; an unknown or empty
// name leaves s unchanged.
func NormalizeString(kind, s string) string {
	switch kind {
	case "mac":
		t := strings.Map(func(r rune) rune {
			switch r {
			case ':', '-', '.', ' ':
				return -1
			}
			return r
		}, strings.ToLower(strings.TrimSpace(s)))
		if len(t) == 12 && isHex(t) {
			return t
		}
		return strings.ToLower(strings.TrimSpace(s))
	case "serial":
		return strings.ToUpper(strings.TrimSpace(s))
	case "path":
		s = strings.TrimSpace(s)
		if s == "" {
			return s
		}
		return path.Clean(s)
	case "case":
		return strings.ToLower(strings.TrimSpace(s))
	}
	return s
}

func isHex(s string) bool {
	for _, r := range s {
		if !strings.ContainsRune("0123456789abcdef", r) {
			return false
		}
	}
	return true
}

// ResolveTime turns a time bound ("now", "-7d", "+90m", or RFC 3339) into a
// time, relative offsets counted from now.
func ResolveTime(s string, now time.Time) (time.Time, error) {
	s = strings.TrimSpace(s)
	if s == "now" {
		return now, nil
	}
	if t, err := time.Parse(time.RFC3339, s); err == nil {
		return t, nil
	}
	if s == "" || (s[0] != '-' && s[0] != '+') {
		return time.Time{}, fmt.Errorf("time bound %q: want now, an offset such as -7d, or an RFC 3339 time", s)
	}
	d, err := parseOffset(s[1:])
	if err != nil {
		return time.Time{}, fmt.Errorf("time bound %q: %w", s, err)
	}
	if s[0] == '-' {
		d = -d
	}
	return now.Add(d), nil
}

// parseOffset reads a duration with the extra units d (24h) and w (7d).
func parseOffset(s string) (time.Duration, error) {
	if s == "" {
		return 0, fmt.Errorf("empty offset")
	}
	var total time.Duration
	for s != "" {
		i := 0
		for i < len(s) && s[i] >= '0' && s[i] <= '9' {
			i++
		}
		if i == 0 || i == len(s) || i > 6 {
			return 0, fmt.Errorf("want a number followed by s, m, h, d or w")
		}
		n, _ := strconv.Atoi(s[:i])
		var unit time.Duration
		switch s[i] {
		case 's':
			unit = time.Second
		case 'm':
			unit = time.Minute
		case 'h':
			unit = time.Hour
		case 'd':
			unit = 24 * time.Hour
		case 'w':
			unit = 7 * 24 * time.Hour
		default:
			return 0, fmt.Errorf("unknown unit %q", s[i])
		}
		total += time.Duration(n) * unit
		s = s[i+1:]
	}
	return total, nil
}

// parseTimeValue reads a timestamp argument: RFC 3339 (with or without
// fractional seconds), a date, or Unix seconds or milliseconds.
func parseTimeValue(v any) (time.Time, bool) {
	switch x := v.(type) {
	case string:
		x = strings.TrimSpace(x)
		for _, layout := range []string{time.RFC3339Nano, "2006-01-02T15:04:05", "2006-01-02 15:04:05", "2006-01-02"} {
			if t, err := time.Parse(layout, x); err == nil {
				return t, true
			}
		}
		if f, err := strconv.ParseFloat(x, 64); err == nil {
			return parseTimeValue(f)
		}
	case float64:
		if math.IsNaN(x) || math.IsInf(x, 0) || x < 0 || x > 1e15 {
			return time.Time{}, false
		}
		if x > 1e11 { // milliseconds
			return time.UnixMilli(int64(x)).UTC(), true
		}
		return time.Unix(int64(x), 0).UTC(), true
	}
	return time.Time{}, false
}

func show(v any) string {
	b, err := json.Marshal(normalizeJSON(v))
	if err != nil {
		return fmt.Sprint(v)
	}
	if len(b) > 120 {
		return string(b[:117]) + "..."
	}
	return string(b)
}
