package fakecentral

import (
	_ "embed"
	"encoding/json"
	"fmt"
	"net/http"
	"regexp"
	"strings"
	"sync"
)

//go:embed catalog.json
var catalogJSON []byte

// catalogFile mirrors the generator's format (version 1).
type catalogFile struct {
	Version int                                   `json:"version"`
	Source  string                                `json:"source"`
	Schemas map[string]map[string]json.RawMessage `json:"schemas"`
	Routes  []catalogRoute                        `json:"routes"`
}

type catalogRoute struct {
	Method string          `json:"m"`
	Path   string          `json:"p"`
	Spec   string          `json:"spec"`
	Query  []string        `json:"q"`
	Req    []string        `json:"rq"`
	Status int             `json:"c"`
	Schema json.RawMessage `json:"s"`

	segs []string
}

type catalogIndex struct {
	catalogFile
	byKey   map[string][]*catalogRoute // method + segment count
	samples sync.Map                   // *catalogRoute -> []byte
	schemas map[string]map[string]any
}

var (
	catalogOnce sync.Once
	catalog     *catalogIndex
)

func loadCatalog() *catalogIndex {
	catalogOnce.Do(func() {
		var cf catalogFile
		if err := json.Unmarshal(catalogJSON, &cf); err != nil || cf.Version != 1 {
			panic(fmt.Sprintf("fakecentral: embedded catalog.json is unreadable (version %d): %v", cf.Version, err))
		}
		ci := &catalogIndex{catalogFile: cf, byKey: map[string][]*catalogRoute{}, schemas: map[string]map[string]any{}}
		for i := range ci.Routes {
			r := &ci.Routes[i]
			r.segs = splitPath(r.Path)
			k := fmt.Sprintf("%s %d", r.Method, len(r.segs))
			ci.byKey[k] = append(ci.byKey[k], r)
		}
		catalog = ci
	})
	return catalog
}

// CatalogRoutes lists the documented routes as "METHOD /path" strings.
func CatalogRoutes() []string {
	ci := loadCatalog()
	out := make([]string, len(ci.Routes))
	for i, r := range ci.Routes {
		out[i] = r.Method + " " + r.Path
	}
	return out
}

// findCatalogRoute finds the documented route for a request, preferring the
// one with the most literal segments; a v1alpha1 request falls back to the
// v1 definition and back.
func findCatalogRoute(method string, segs []string) (*catalogRoute, map[string]string) {
	if r, p := findCatalogExact(method, segs); r != nil {
		return r, p
	}
	if len(segs) > 1 && (segs[1] == "v1alpha1" || segs[1] == "v1") {
		alt := append([]string(nil), segs...)
		alt[1] = map[string]string{"v1": "v1alpha1", "v1alpha1": "v1"}[segs[1]]
		return findCatalogExact(method, alt)
	}
	return nil, nil
}

func findCatalogExact(method string, segs []string) (*catalogRoute, map[string]string) {
	ci := loadCatalog()
	return bestMatch(ci.byKey[fmt.Sprintf("%s %d", method, len(segs))], func(r *catalogRoute) []string { return r.segs }, segs, true)
}

// catalogRouteFor finds the documented route for a template path.
func catalogRouteFor(method, template string) *catalogRoute {
	ci := loadCatalog()
	for i := range ci.Routes {
		if ci.Routes[i].Method == method && ci.Routes[i].Path == template {
			return &ci.Routes[i]
		}
	}
	return nil
}

func (ci *catalogIndex) schema(ref string) map[string]any {
	spec, name, _ := strings.Cut(ref, "#")
	raw := ci.Schemas[spec][name]
	var m map[string]any
	_ = json.Unmarshal(raw, &m)
	return m
}

// serveCatalog answers an unmodelled documented route with a deterministic,
// schema-valid body generated from its response schema.
func (c *Central) serveCatalog(w http.ResponseWriter, rq *request, r *catalogRoute) {
	ci := loadCatalog()
	if b, ok := ci.samples.Load(r); ok {
		writeRaw(w, r.Status, b.([]byte))
		return
	}
	var body []byte
	if len(r.Schema) > 0 {
		var s map[string]any
		_ = json.Unmarshal(r.Schema, &s)
		g := &sampler{ci: ci, now: c.fx.Now().Format("2006-01-02T15:04:05Z")}
		v := g.gen(s, 0)
		if m, ok := v.(map[string]any); ok {
			emptyEnvelope(m)
		}
		body, _ = marshal(v)
	}
	if len(body) == 0 || string(body) == "null" {
		body = []byte("{}")
	}
	ci.samples.Store(r, body)
	if r.Status == 204 {
		w.WriteHeader(204)
		return
	}
	writeRaw(w, r.Status, body)
}

// emptyEnvelope makes a generated list answer say what it holds: nothing.
// Examples in the definitions carry counts and a "next" page; copied into an
// empty list they would send a paging client round forever.
func emptyEnvelope(m map[string]any) {
	hasList := false
	for _, v := range m {
		if _, ok := v.([]any); ok {
			hasList = true
		}
	}
	if !hasList {
		return
	}
	n := 0
	for _, v := range m {
		if a, ok := v.([]any); ok {
			n = len(a)
			break
		}
	}
	for _, k := range []string{"count", "total"} {
		if _, isNum := m[k].(float64); isNum {
			m[k] = n
		}
	}
	if _, isNum := m["offset"].(float64); isNum {
		m["offset"] = 0
	}
	if _, ok := m["next"]; ok {
		m["next"] = nil
	}
}

// sampler builds the smallest honest instance of a schema: required
// properties (all properties near the top), empty arrays, zero numbers,
// enum/const/example strings.
type sampler struct {
	ci  *catalogIndex
	now string
}

func (g *sampler) gen(s map[string]any, depth int) any {
	if s == nil || depth > 12 {
		return nil
	}
	if ref, ok := s["$ref"].(string); ok {
		return g.gen(g.ci.schema(ref), depth+1)
	}
	if _, ok := s["allOf"]; ok {
		props, req, isObj := g.flatten(s, 0)
		if isObj {
			return g.build(props, req, depth)
		}
		for _, p := range s["allOf"].([]any) {
			pm, _ := p.(map[string]any)
			if v := g.gen(pm, depth+1); v != nil {
				return v
			}
		}
		return nil
	}
	for _, k := range []string{"oneOf", "anyOf"} {
		if alts, ok := s[k].([]any); ok && len(alts) > 0 {
			pm, _ := alts[0].(map[string]any)
			return g.gen(pm, depth+1)
		}
	}
	if v, ok := s["const"]; ok {
		return v
	}
	if e, ok := s["enum"].([]any); ok && len(e) > 0 {
		if ml, ok := s["maxLength"].(float64); ok {
			for _, v := range e {
				if str, ok := v.(string); ok && len(str) <= int(ml) {
					return v
				}
			}
		}
		return e[0]
	}
	t := s["type"]
	if ts, ok := t.([]any); ok {
		t = nil
		for _, x := range ts {
			if x != "null" {
				t = x
				break
			}
		}
	}
	switch t {
	case "object", nil:
		props, _ := s["properties"].(map[string]any)
		if props == nil && t == nil {
			if _, ok := s["items"]; ok {
				return []any{}
			}
		}
		return g.object(s, props, depth)
	case "array":
		n := 0
		if mi, ok := s["minItems"].(float64); ok {
			n = int(mi)
		}
		out := make([]any, 0, n)
		im, _ := s["items"].(map[string]any)
		for i := 0; i < n; i++ {
			out = append(out, g.gen(im, depth+1))
		}
		return out
	case "integer", "number":
		if v, ok := s["default"].(float64); ok {
			return v
		}
		if v, ok := s["minimum"].(float64); ok {
			return v
		}
		if v, ok := s["example"].(float64); ok {
			return v
		}
		return 0
	case "boolean":
		if v, ok := s["default"].(bool); ok {
			return v
		}
		return false
	case "string":
		return g.str(s)
	}
	return nil
}

// str picks a string honouring maxLength, minLength and pattern.
func (g *sampler) str(s map[string]any) string {
	var cands []string
	for _, k := range []string{"example", "default"} {
		if v, ok := s[k].(string); ok {
			cands = append(cands, v)
		}
	}
	switch s["format"] {
	case "date-time":
		cands = append(cands, g.now)
	case "date":
		cands = append(cands, g.now[:10])
	case "ipv4":
		cands = append(cands, "10.0.0.1")
	case "ipv6":
		cands = append(cands, "fd00::1")
	case "uuid":
		cands = append(cands, "00000000-0000-4000-8000-000000000000")
	case "uri", "uri-reference", "url":
		cands = append(cands, "/")
	}
	cands = append(cands, "", "a", "1", "aaaaaaaa", "00:00:00:00:00:00", "10.0.0.1")
	maxLen, hasMax := s["maxLength"].(float64)
	minLen, _ := s["minLength"].(float64)
	var re *regexp.Regexp
	if p, ok := s["pattern"].(string); ok {
		re, _ = regexp.Compile(p)
	}
	for _, c := range cands {
		if hasMax && len(c) > int(maxLen) {
			c = c[:int(maxLen)]
		}
		for len(c) < int(minLen) {
			c += "a"
		}
		if re == nil || re.MatchString(c) {
			return c
		}
	}
	return ""
}

func (g *sampler) object(s map[string]any, props map[string]any, depth int) map[string]any {
	p, req, _ := g.flatten(s, 0)
	return g.build(p, req, depth)
}

// flatten merges the properties and required names of a schema and its allOf
// parts (through refs).
func (g *sampler) flatten(s map[string]any, depth int) (map[string]any, map[string]bool, bool) {
	props, req := map[string]any{}, map[string]bool{}
	isObj := false
	var walk func(s map[string]any, d int)
	walk = func(s map[string]any, d int) {
		if s == nil || d > 10 {
			return
		}
		if ref, ok := s["$ref"].(string); ok {
			walk(g.ci.schema(ref), d+1)
			return
		}
		if s["type"] == "object" || s["properties"] != nil || s["required"] != nil {
			isObj = true
		}
		if ps, ok := s["properties"].(map[string]any); ok {
			for k, v := range ps {
				props[k] = v
			}
		}
		if rl, ok := s["required"].([]any); ok {
			for _, x := range rl {
				if n, ok := x.(string); ok {
					req[n] = true
				}
			}
		}
		if all, ok := s["allOf"].([]any); ok {
			for _, p := range all {
				pm, _ := p.(map[string]any)
				walk(pm, d+1)
			}
		}
	}
	walk(s, depth)
	return props, req, isObj
}

func (g *sampler) build(props map[string]any, req map[string]bool, depth int) map[string]any {
	out := map[string]any{}
	// A list whose count must be at least 1 gets one item.
	oneItem := false
	if cs, ok := props["count"].(map[string]any); ok {
		if m, ok := cs["minimum"].(float64); ok && m >= 1 {
			oneItem = true
		}
	}
	for name, p := range props {
		if !req[name] && depth > 3 {
			continue
		}
		pm, _ := p.(map[string]any)
		v := g.gen(pm, depth+1)
		if oneItem {
			if a, ok := v.([]any); ok && len(a) == 0 {
				if im, ok := g.arrayItems(pm); ok {
					v = []any{g.gen(im, depth+2)}
				}
			}
		}
		if v == nil && !req[name] {
			continue
		}
		out[name] = v
	}
	for name := range req {
		if _, ok := out[name]; !ok {
			out[name] = ""
		}
	}
	return out
}

func (g *sampler) arrayItems(s map[string]any) (map[string]any, bool) {
	for i := 0; i < 5 && s != nil; i++ {
		if ref, ok := s["$ref"].(string); ok {
			s = g.ci.schema(ref)
			continue
		}
		im, ok := s["items"].(map[string]any)
		return im, ok
	}
	return nil, false
}
