package recorder

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"regexp"
	"regexp/syntax"
	"sort"
	"strconv"
	"strings"

	"gopkg.in/yaml.v3"

	"github.com/mcpbench/bench/llm/reqkey"
	"github.com/mcpbench/bench/traces"
)

// NormalizeRule is one of a profile's normalisation rules (docs/clock.md):
// text the server produces that changes from run to run for no reason of
// behaviour (the wall-clock time, mostly) is replaced with Placeholder
// before the run is hashed and before a model request is keyed. Exactly
// one of Pattern and Path is set.
type NormalizeRule struct {
	// Pattern is an RE2 regular expression matched in every string: a
	// match is replaced; only what its group named v matched, when it has
	// one (minute=(?P<v>\d+)).
	Pattern string `yaml:"pattern" json:"pattern,omitempty"`
	// Path is a JSON path ($.window.start, $..timestamp, $.items[*].ts,
	// $['start-at']) tried at the root of every JSON document: the value
	// it selects, of any type, is replaced.
	Path string `yaml:"path" json:"path,omitempty"`
	// Placeholder is the text put instead.
	Placeholder string `yaml:"placeholder" json:"placeholder"`

	line  int // in the profile, when read from YAML
	re    *regexp.Regexp
	segs  []pathSeg
	valid bool
}

// UnmarshalYAML reads a rule and remembers its line for errors.
func (r *NormalizeRule) UnmarshalYAML(n *yaml.Node) error {
	if n.Kind != yaml.MappingNode {
		return fmt.Errorf("line %d: a normalize rule is a mapping {pattern|path, placeholder}", n.Line)
	}
	for i := 0; i+1 < len(n.Content); i += 2 {
		switch k := n.Content[i].Value; k {
		case "pattern", "path", "placeholder":
		default:
			return fmt.Errorf("line %d: field %s not found in a normalize rule (pattern, path, placeholder)", n.Content[i].Line, k)
		}
	}
	type plain struct {
		Pattern     string `yaml:"pattern"`
		Path        string `yaml:"path"`
		Placeholder string `yaml:"placeholder"`
	}
	var p plain
	if err := n.Decode(&p); err != nil {
		return err
	}
	*r = NormalizeRule{Pattern: p.Pattern, Path: p.Path, Placeholder: p.Placeholder, line: n.Line}
	return nil
}

// where names the rule in errors: normalize[i], and its line when known.
func (r *NormalizeRule) where(i int) string {
	if r.line > 0 {
		return fmt.Sprintf("normalize[%d] (line %d)", i, r.line)
	}
	return fmt.Sprintf("normalize[%d]", i)
}

// placeholderForbidden are the characters a placeholder may not hold: it
// stands unescaped in JSON strings and query strings.
const placeholderForbidden = "\"\\&=#%+?"

// compile checks rule i and prepares it.
func (r *NormalizeRule) compile(i int) error {
	w := r.where(i)
	var errs []error
	switch {
	case r.Pattern == "" && r.Path == "":
		errs = append(errs, fmt.Errorf("%s: needs pattern (a regular expression) or path (a JSON path such as $.window.start)", w))
	case r.Pattern != "" && r.Path != "":
		errs = append(errs, fmt.Errorf("%s: has both pattern and path; write two rules", w))
	case r.Pattern != "":
		re, err := regexp.Compile(r.Pattern)
		switch {
		case err != nil:
			msg := err.Error()
			var se *syntax.Error
			if errors.As(err, &se) {
				msg = se.Code.String()
				if se.Expr != r.Pattern {
					msg += " at `" + se.Expr + "`"
				}
			}
			errs = append(errs, fmt.Errorf("%s: pattern %q: %s", w, r.Pattern, msg))
		case re.MatchString(""):
			errs = append(errs, fmt.Errorf("%s: pattern %q matches the empty string", w, r.Pattern))
		default:
			r.re = re
		}
	default:
		segs, err := parsePath(r.Path)
		if err != nil {
			errs = append(errs, fmt.Errorf("%s: path %q: %v", w, r.Path, err))
		}
		r.segs = segs
	}
	switch {
	case r.Placeholder == "":
		errs = append(errs, fmt.Errorf("%s: placeholder: required (the text put instead, such as <time>)", w))
	case strings.ContainsAny(r.Placeholder, placeholderForbidden) || strings.IndexFunc(r.Placeholder, func(c rune) bool { return c <= ' ' || c == 0x7f }) >= 0:
		errs = append(errs, fmt.Errorf("%s: placeholder %q: no spaces, control characters or any of %s", w, r.Placeholder, placeholderForbidden))
	}
	r.valid = len(errs) == 0
	return errors.Join(errs...)
}

// compileRules checks and prepares a profile's rules.
func compileRules(rules []NormalizeRule) error {
	var errs []error
	for i := range rules {
		if err := rules[i].compile(i); err != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

// pathSeg is one step of a JSON path.
type pathSeg struct {
	kind  byte // 'n' name, 'i' index, '*' any child, 'd' any depth (..)
	name  string
	index int
}

// parsePath parses the JSON paths rules accept: $ then .name, .*, [N],
// [*], ['name'] or ["name"], and .. before any of them (any depth).
func parsePath(p string) ([]pathSeg, error) {
	if !strings.HasPrefix(p, "$") {
		return nil, errors.New("must start with $")
	}
	var segs []pathSeg
	i := 1
	isName := func(c byte) bool {
		return c == '_' || c == '-' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9'
	}
	for i < len(p) {
		switch p[i] {
		case '.':
			i++
			if i < len(p) && p[i] == '.' {
				segs = append(segs, pathSeg{kind: 'd'})
				i++
				if i < len(p) && p[i] == '[' {
					continue // $..[0]
				}
			}
			if i >= len(p) {
				continue // "ends with" below, or a trailing '.'
			}
			if p[i] == '*' {
				segs = append(segs, pathSeg{kind: '*'})
				i++
				continue
			}
			j := i
			for j < len(p) && isName(p[j]) {
				j++
			}
			if j == i {
				return nil, fmt.Errorf("offset %d: want a member name after '.' (use ['...'] for other characters)", i)
			}
			segs = append(segs, pathSeg{kind: 'n', name: p[i:j]})
			i = j
		case '[':
			end := strings.IndexByte(p[i:], ']')
			if end < 0 {
				return nil, fmt.Errorf("offset %d: '[' without ']'", i)
			}
			in := p[i+1 : i+end]
			switch {
			case in == "*":
				segs = append(segs, pathSeg{kind: '*'})
			case len(in) >= 2 && (in[0] == '\'' && in[len(in)-1] == '\'' || in[0] == '"' && in[len(in)-1] == '"'):
				segs = append(segs, pathSeg{kind: 'n', name: in[1 : len(in)-1]})
			default:
				n, err := strconv.Atoi(in)
				if err != nil || n < 0 {
					return nil, fmt.Errorf("offset %d: [%s] is not an index, [*] or a quoted name", i, in)
				}
				segs = append(segs, pathSeg{kind: 'i', index: n})
			}
			i += end + 1
		default:
			return nil, fmt.Errorf("offset %d: unexpected %q (want . or [)", i, p[i])
		}
	}
	if strings.HasSuffix(p, ".") && !strings.HasSuffix(p, "..") {
		return nil, errors.New("ends with '.'")
	}
	if len(segs) > 0 && segs[len(segs)-1].kind == 'd' {
		return nil, errors.New("ends with '..'")
	}
	return segs, nil
}

// step is one step of a location in a JSON document: a member name, or an
// array index (name unset, index >= 0).
type step struct {
	name  string
	index int
}

func (s pathSeg) matches(st step) bool {
	switch s.kind {
	case '*':
		return true
	case 'n':
		return st.index < 0 && st.name == s.name
	case 'i':
		return st.index == s.index
	}
	return false
}

// matchPath reports whether the location loc is one segs selects.
func matchPath(segs []pathSeg, loc []step) bool {
	if len(segs) == 0 {
		return len(loc) == 0
	}
	if segs[0].kind == 'd' {
		for i := 0; i <= len(loc); i++ {
			if matchPath(segs[1:], loc[i:]) {
				return true
			}
		}
		return false
	}
	return len(loc) > 0 && segs[0].matches(loc[0]) && matchPath(segs[1:], loc[1:])
}

// normalizer applies a profile's rules. A nil *normalizer changes nothing.
type normalizer struct {
	patterns []*NormalizeRule
	paths    []*NormalizeRule
}

// normalizer returns p's compiled rules, nil when it has none. Rules are
// compiled when the profile is checked (ParseProfile, LoadProfile); one
// that was not is ignored.
func (p *Profile) normalizer() *normalizer {
	if p == nil || len(p.Normalize) == 0 {
		return nil
	}
	n := &normalizer{}
	for i := range p.Normalize {
		r := &p.Normalize[i]
		if !r.valid {
			continue
		}
		if r.re != nil {
			n.patterns = append(n.patterns, r)
		} else {
			n.paths = append(n.paths, r)
		}
	}
	return n
}

// Normalizer is the profile's normalisation of tool results as request
// keys see them, for the replayer (replayer.Options.Normalize); nil when
// the profile has no rules.
func (p *Profile) Normalizer() reqkey.Normalizer {
	n := p.normalizer()
	if n == nil {
		return nil
	}
	return func(s string) (string, []traces.Normalized) {
		var out []traces.Normalized
		return n.text(s, &out), out
	}
}

// text normalises a string: a JSON object or array in it is walked as a
// document (paths, then patterns in its strings); other text gets the
// patterns. A JSON text is rewritten (canonical) only when a rule changed
// it.
func (n *normalizer) text(s string, out *[]traces.Normalized) string {
	if t := strings.TrimSpace(s); len(t) > 1 && (t[0] == '{' || t[0] == '[') {
		if v, ok := jsonValue([]byte(t)); ok {
			mark := len(*out)
			v = n.walk(v, nil, out)
			if len(*out) == mark {
				return s
			}
			if b, err := traces.Marshal(v); err == nil {
				return string(b)
			}
			*out = (*out)[:mark]
			return s
		}
	}
	return n.patternsIn(s, out)
}

// patternsIn replaces the pattern rules' matches in s, rule by rule.
func (n *normalizer) patternsIn(s string, out *[]traces.Normalized) string {
	for _, r := range n.patterns {
		locs := r.re.FindAllStringSubmatchIndex(s, -1)
		if len(locs) == 0 {
			continue
		}
		var b strings.Builder
		last := 0
		for _, l := range locs {
			from, to := l[0], l[1]
			if g := r.re.SubexpIndex("v"); g > 0 { // only the group named v
				from, to = l[2*g], l[2*g+1]
			}
			if from < 0 || from == to {
				continue
			}
			b.WriteString(s[last:from])
			b.WriteString(r.Placeholder)
			*out = append(*out, traces.Normalized{Placeholder: r.Placeholder, Original: s[from:to], Rule: "pattern"})
			last = to
		}
		b.WriteString(s[last:])
		s = b.String()
	}
	return s
}

// walk normalises a decoded JSON value at location loc, in document order
// (members by name): a value a path rule selects is replaced whole; strings
// get text.
func (n *normalizer) walk(v any, loc []step, out *[]traces.Normalized) any {
	for _, r := range n.paths {
		if matchPath(r.segs, loc) {
			orig := ""
			if s, ok := v.(string); ok {
				orig = s
			} else if b, err := traces.Marshal(v); err == nil {
				orig = string(b)
			}
			*out = append(*out, traces.Normalized{Placeholder: r.Placeholder, Original: orig, Rule: r.Path})
			return r.Placeholder
		}
	}
	switch x := v.(type) {
	case map[string]any:
		keys := make([]string, 0, len(x))
		for k := range x {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			x[k] = n.walk(x[k], append(loc, step{name: k, index: -1}), out)
		}
	case []any:
		for i := range x {
			x[i] = n.walk(x[i], append(loc, step{index: i}), out)
		}
	case string:
		return n.text(x, out)
	}
	return v
}

// raw normalises a JSON payload; it is returned as it was when no rule
// changed it (or it is not JSON).
func (n *normalizer) raw(b json.RawMessage, out *[]traces.Normalized) json.RawMessage {
	if len(b) == 0 {
		return b
	}
	v, ok := jsonValue(b)
	if !ok {
		return b
	}
	mark := len(*out)
	v = n.walk(v, nil, out)
	if len(*out) == mark {
		return b
	}
	c, err := traces.Marshal(v)
	if err != nil {
		*out = (*out)[:mark]
		return b
	}
	return c
}

// query normalises a raw query string value by value: a document
// {name: value} for the paths, the unescaped values for the patterns.
// Placeholders stand unescaped in the result, which is for the trace only.
func (n *normalizer) query(q string, out *[]traces.Normalized) string {
	if q == "" {
		return q
	}
	parts := strings.Split(q, "&")
	changed := false
	for i, part := range parts {
		k, v, ok := strings.Cut(part, "=")
		if !ok {
			continue
		}
		name, err := url.QueryUnescape(k)
		if err != nil {
			name = k
		}
		val, err := url.QueryUnescape(v)
		if err != nil {
			val = v
		}
		mark := len(*out)
		nv := n.walk(val, []step{{name: name, index: -1}}, out)
		if len(*out) == mark {
			continue
		}
		s, _ := nv.(string)
		esc := url.QueryEscape(s)
		for _, r := range append(append([]*NormalizeRule(nil), n.paths...), n.patterns...) {
			esc = strings.ReplaceAll(esc, url.QueryEscape(r.Placeholder), r.Placeholder)
		}
		parts[i] = k + "=" + esc
		changed = true
	}
	if !changed {
		return q
	}
	return strings.Join(parts, "&")
}

// events normalises what the server and the fake wrote into a run: each
// tool call's result, and each HTTP exchange's path (patterns), query and
// bodies. Model turns were keyed, and stored, normalised already.
func (n *normalizer) events(evs []traces.Event) {
	if n == nil {
		return
	}
	for i := range evs {
		e := &evs[i]
		var out []traces.Normalized
		switch {
		case e.Kind == traces.KindCall && e.Call != nil:
			c := *e.Call
			c.Result = n.raw(c.Result, &out)
			if len(out) > 0 {
				e.Call = &c
			}
		case e.Kind == traces.KindHTTP && e.HTTP != nil:
			h := *e.HTTP
			h.Path = n.patternsIn(h.Path, &out)
			h.Query = n.query(h.Query, &out)
			h.RequestBody = n.raw(h.RequestBody, &out)
			h.ResponseBody = n.raw(h.ResponseBody, &out)
			if len(out) > 0 {
				e.HTTP = &h
			}
		}
		if len(out) > 0 {
			e.Normalized = append(e.Normalized, out...)
			e.Canonicalize()
		}
	}
}

// normalizeEvents applies p's rules to a finished run's events (see
// normalizer.events).
func normalizeEvents(p *Profile, evs []traces.Event) { p.normalizer().events(evs) }

func jsonValue(b []byte) (any, bool) {
	d := json.NewDecoder(bytes.NewReader(b))
	d.UseNumber()
	var v any
	if err := d.Decode(&v); err != nil {
		return nil, false
	}
	if d.More() {
		return nil, false
	}
	return v, true
}
