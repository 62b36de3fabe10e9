package scenarios

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/mcpbench/bench/internal/odata"
)

// A request field is named, in expect.api_calls[].params, by one of:
//
//	{name}        the path segment the placeholder {name} of the
//	              alternative the call matched stands for
//	query.name    the query parameter name
//	filter.field  the value Central's OData filter compares field with
//	              (?filter=field eq 'v' gives "v"; field in ('a','b')
//	              gives the list)
//	body.a.b      the field a.b of the JSON request body
//	name          the first of {name}, query.name, filter.name, body.name
//	              the request has
//
// and "a|b" names the first of the fields a and b the request has: the
// same value may travel as a query parameter on one route and in the
// filter on another ("serial-number|filter.serialNumber").
//
// These are Central's API's own names, which every server shares: the
// values that matter in a call are the same whichever tool made it.
const (
	refQuery  = "query."
	refFilter = "filter."
	refBody   = "body."
)

// Request is one HTTP call to Central as scoring sees it.
type Request struct {
	Method, Path, Query string
	Body                json.RawMessage
}

// checkRequestRef returns why ref cannot name a request field of the
// alternatives alts, or "".
func checkRequestRef(ref string, alts []Endpoint) string {
	for _, part := range strings.Split(ref, "|") {
		if why := checkRefPart(part, alts); why != "" {
			return why
		}
	}
	return ""
}

func checkRefPart(ref string, alts []Endpoint) string {
	if isPlaceholder(ref) {
		for _, a := range alts {
			if slices.Contains(a.segments, ref) {
				return ""
			}
		}
		return fmt.Sprintf("no alternative of this call has the path placeholder %s", ref)
	}
	name := ref
	for _, p := range []string{refQuery, refFilter, refBody} {
		if rest, ok := strings.CutPrefix(ref, p); ok {
			name = rest
			break
		}
	}
	if name == "" || strings.ContainsAny(name, "{} ") || strings.HasPrefix(name, ".") || strings.HasSuffix(name, ".") {
		return fmt.Sprintf("%q names no request field: want {placeholder}, query.NAME, filter.FIELD, body.PATH or a bare NAME", ref)
	}
	return ""
}

// MatchRequest checks the call rq, which matched the alternative alt of
// this entry, against the entry's params. It returns the mismatches
// (sorted by field) and how many rules applied: a {name} rule applies only
// to an alternative with that placeholder. now is the fixture's clock.
func (c CallSet) MatchRequest(alt Endpoint, rq Request, now time.Time) ([]Mismatch, int) {
	if len(c.Params) == 0 {
		return nil, 0
	}
	f := newRequestFields(alt, rq)
	refs := make([]string, 0, len(c.Params))
	for k := range c.Params {
		refs = append(refs, k)
	}
	slices.Sort(refs)
	var out []Mismatch
	applied := 0
	for _, ref := range refs {
		rule := c.Params[ref]
		if !appliesTo(ref, alt) {
			continue
		}
		applied++
		v, ok := f.lookup(ref)
		if !ok {
			if rule == nil || !rule.Optional {
				out = append(out, Mismatch{Reason: MissingRequired, Param: ref, Detail: "not in the request"})
			}
			continue
		}
		if m := MatchValue(rule, coerce(rule, v), now); m != nil {
			m.Param = ref
			out = append(out, *m)
		}
	}
	return out, applied
}

// appliesTo reports whether the rule on ref applies to a call that
// matched alt: one that names only placeholders applies where alt has one.
func appliesTo(ref string, alt Endpoint) bool {
	for _, part := range strings.Split(ref, "|") {
		if !isPlaceholder(part) || slices.Contains(alt.segments, part) {
			return true
		}
	}
	return false
}

// requestFields reads the named fields of one request, each part parsed
// once, on first use.
type requestFields struct {
	vars  map[string]string
	rq    Request
	query url.Values
	flt   *odata.Filter
	body  any
	read  bool
}

func newRequestFields(alt Endpoint, rq Request) *requestFields {
	return &requestFields{vars: alt.Vars(rq.Path), rq: rq}
}

func (f *requestFields) parse() {
	if f.read {
		return
	}
	f.read = true
	f.query, _ = url.ParseQuery(f.rq.Query)
	if s := f.query.Get("filter"); s != "" {
		if flt, err := odata.Parse(s); err == nil {
			f.flt = &flt
		}
	}
	if len(bytes.TrimSpace(f.rq.Body)) > 0 {
		_ = json.Unmarshal(f.rq.Body, &f.body)
	}
}

func (f *requestFields) lookup(ref string) (any, bool) {
	for _, part := range strings.Split(ref, "|") {
		if v, ok := f.lookupPart(part); ok {
			return v, true
		}
	}
	return nil, false
}

func (f *requestFields) lookupPart(ref string) (any, bool) {
	if isPlaceholder(ref) {
		v, ok := f.vars[ref]
		return v, ok
	}
	f.parse()
	if name, ok := strings.CutPrefix(ref, refQuery); ok {
		return f.fromQuery(name)
	}
	if name, ok := strings.CutPrefix(ref, refFilter); ok {
		return f.fromFilter(name)
	}
	if name, ok := strings.CutPrefix(ref, refBody); ok {
		return f.fromBody(name)
	}
	if v, ok := f.vars["{"+ref+"}"]; ok {
		return v, true
	}
	if v, ok := f.fromQuery(ref); ok {
		return v, true
	}
	if v, ok := f.fromFilter(ref); ok {
		return v, true
	}
	if m, ok := f.body.(map[string]any); ok {
		v, ok := m[ref]
		return v, ok
	}
	return nil, false
}

func (f *requestFields) fromQuery(name string) (any, bool) {
	vs, ok := f.query[name]
	switch {
	case !ok || len(vs) == 0:
		return nil, false
	case len(vs) == 1:
		return vs[0], true
	}
	out := make([]any, len(vs))
	for i, v := range vs {
		out[i] = v
	}
	return out, true
}

func (f *requestFields) fromFilter(field string) (any, bool) {
	if f.flt == nil {
		return nil, false
	}
	for _, t := range f.flt.Terms {
		if !strings.EqualFold(t.Field, field) {
			continue
		}
		switch t.Op {
		case "eq":
			return t.Values[0], true
		case "in":
			out := make([]any, len(t.Values))
			for i, v := range t.Values {
				out[i] = v
			}
			return out, true
		}
	}
	return nil, false
}

func (f *requestFields) fromBody(p string) (any, bool) {
	cur := f.body
	for _, k := range strings.Split(p, ".") {
		m, ok := cur.(map[string]any)
		if !ok {
			return nil, false
		}
		if cur, ok = m[k]; !ok {
			return nil, false
		}
	}
	return cur, true
}

// coerce reads a value taken from a path, query or filter (always text) as
// the type the rule expects: "10" is 10 for {equals: 10} or {min: 1}.
func coerce(r *ParamRule, v any) any {
	s, ok := v.(string)
	if !ok || r == nil {
		return v
	}
	want := r.Type
	if want == "" {
		switch r.Equals.(type) {
		case int, int64, uint64, float64:
			want = "number"
		case bool:
			want = "boolean"
		}
	}
	if want == "" && (r.Min != nil || r.Max != nil) {
		want = "number"
	}
	switch want {
	case "number", "integer":
		if n, err := strconv.ParseFloat(s, 64); err == nil {
			return n
		}
	case "boolean":
		if b, err := strconv.ParseBool(s); err == nil {
			return b
		}
	}
	return v
}
