// Package catalog builds the fake Central's compact route catalog from the
// vendor's OpenAPI definitions of New Central: method, path, declared query
// parameters, success status and response schema, with every piece of prose
// (descriptions, object examples, summaries) removed. The gen command writes
// it to fakecentral/catalog.json (`go generate ./fakecentral`).
package catalog

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
)

// Catalog is the on-disk format (version 1). The fakecentral package has a
// mirror of these types; keep the two in step.
type Catalog struct {
	Version int                                   `json:"version"`
	Source  string                                `json:"source"`
	Schemas map[string]map[string]json.RawMessage `json:"schemas"` // spec -> component name -> schema
	Routes  []Route                               `json:"routes"`
}

// Route is one documented operation.
type Route struct {
	Method string          `json:"m"`
	Path   string          `json:"p"`
	Spec   string          `json:"spec"`
	Query  []string        `json:"q,omitempty"`  // declared query parameters
	Req    []string        `json:"rq,omitempty"` // required query parameters
	Status int             `json:"c"`
	Schema json.RawMessage `json:"s,omitempty"` // success response schema; refs are "spec#Name"
}

var methods = []string{"get", "post", "put", "patch", "delete"}

// Generate reads mrt/*.json and config/*.json under in and returns the
// catalog's bytes (deterministic: sorted routes, sorted keys).
func Generate(in string) ([]byte, error) {
	var files []string
	for _, sub := range []string{"mrt", "config"} {
		m, err := filepath.Glob(filepath.Join(in, sub, "*.json"))
		if err != nil {
			return nil, err
		}
		files = append(files, m...)
	}
	sort.Strings(files)
	if len(files) == 0 {
		return nil, fmt.Errorf("no OpenAPI definitions under %s", in)
	}
	cat := Catalog{Version: 1, Source: "central-openapi (nowireless4u/hpe-networking-mcp@91fe984 vendor/central)", Schemas: map[string]map[string]json.RawMessage{}}
	for _, f := range files {
		if strings.HasPrefix(filepath.Base(f), "_") {
			continue
		}
		spec := filepath.Base(filepath.Dir(f)) + "/" + strings.TrimSuffix(filepath.Base(f), ".json")
		if err := addSpec(&cat, f, spec); err != nil {
			return nil, fmt.Errorf("%s: %w", f, err)
		}
	}
	sort.Slice(cat.Routes, func(i, j int) bool {
		a, b := cat.Routes[i], cat.Routes[j]
		if a.Path != b.Path {
			return a.Path < b.Path
		}
		return a.Method < b.Method
	})
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(cat); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

type doc struct {
	Paths      map[string]map[string]json.RawMessage `json:"paths"`
	Components struct {
		Schemas    map[string]any `json:"schemas"`
		Responses  map[string]any `json:"responses"`
		Parameters map[string]any `json:"parameters"`
	} `json:"components"`
}

type op struct {
	Parameters []map[string]any           `json:"parameters"`
	Responses  map[string]json.RawMessage `json:"responses"`
}

func addSpec(cat *Catalog, file, spec string) error {
	raw, err := os.ReadFile(file)
	if err != nil {
		return err
	}
	var d doc
	if err := json.Unmarshal(raw, &d); err != nil {
		return err
	}
	used := map[string]bool{}
	for path, item := range d.Paths {
		var common []map[string]any
		if p, ok := item["parameters"]; ok {
			_ = json.Unmarshal(p, &common)
		}
		for _, m := range methods {
			rawOp, ok := item[m]
			if !ok {
				continue
			}
			var o op
			if err := json.Unmarshal(rawOp, &o); err != nil {
				return fmt.Errorf("%s %s: %w", m, path, err)
			}
			r := Route{Method: strings.ToUpper(m), Path: path, Spec: spec}
			seen := map[string]bool{}
			for _, p := range append(append([]map[string]any{}, common...), o.Parameters...) {
				p = resolveParam(&d, p)
				if p["in"] != "query" {
					continue
				}
				name, _ := p["name"].(string)
				if name == "" || seen[name] {
					continue
				}
				seen[name] = true
				r.Query = append(r.Query, name)
				if req, _ := p["required"].(bool); req && !hasDefault(&d, p["schema"]) {
					r.Req = append(r.Req, name)
				}
			}
			sort.Strings(r.Query)
			sort.Strings(r.Req)
			codes := make([]string, 0, len(o.Responses))
			for c := range o.Responses {
				codes = append(codes, c)
			}
			sort.Strings(codes)
			for _, c := range codes {
				if len(c) != 3 || c[0] != '2' {
					continue
				}
				fmt.Sscanf(c, "%d", &r.Status)
				var resp map[string]any
				_ = json.Unmarshal(o.Responses[c], &resp)
				resp = resolveResponse(&d, resp)
				if content, ok := resp["content"].(map[string]any); ok {
					for _, ct := range []string{"application/json", "application/problem+json"} {
						if mt, ok := content[ct].(map[string]any); ok {
							if s, ok := mt["schema"]; ok {
								clean := strip(s, spec, used)
								r.Schema, _ = json.Marshal(clean)
							}
							break
						}
					}
				}
				break
			}
			if r.Status == 0 {
				r.Status = 200
			}
			cat.Routes = append(cat.Routes, r)
		}
	}
	// Pull in the transitive closure of referenced components.
	out := map[string]json.RawMessage{}
	for changed := true; changed; {
		changed = false
		names := make([]string, 0, len(used))
		for n := range used {
			names = append(names, n)
		}
		sort.Strings(names)
		for _, n := range names {
			if _, done := out[n]; done {
				continue
			}
			s, ok := d.Components.Schemas[n]
			if !ok {
				out[n] = json.RawMessage(`{}`)
				continue
			}
			before := len(used)
			b, _ := json.Marshal(strip(s, spec, used))
			out[n] = b
			if len(used) != before {
				changed = true
			}
		}
	}
	if len(out) > 0 {
		cat.Schemas[spec] = out
	}
	return nil
}

func resolveParam(d *doc, p map[string]any) map[string]any {
	for i := 0; i < 5; i++ {
		ref, ok := p["$ref"].(string)
		if !ok {
			return p
		}
		name := ref[strings.LastIndex(ref, "/")+1:]
		q, ok := d.Components.Parameters[name].(map[string]any)
		if !ok {
			return p
		}
		p = q
	}
	return p
}

// hasDefault reports whether a parameter's schema (or the component schema
// it refers to) declares a default. A query parameter marked required but
// given a default (offset on GET /network-config/v1/sites, limit on
// GET /network-troubleshooting/v1/events, ...) is one Central fills in when
// it is absent, so the fake does not answer 400 for it: clients tested
// against live tenants call such routes without it.
func hasDefault(d *doc, s any) bool {
	for i := 0; i < 5; i++ {
		m, ok := s.(map[string]any)
		if !ok {
			return false
		}
		if _, ok := m["default"]; ok {
			return true
		}
		ref, ok := m["$ref"].(string)
		if !ok {
			return false
		}
		s = d.Components.Schemas[ref[strings.LastIndex(ref, "/")+1:]]
	}
	return false
}

func resolveResponse(d *doc, r map[string]any) map[string]any {
	for i := 0; i < 5; i++ {
		ref, ok := r["$ref"].(string)
		if !ok {
			return r
		}
		name := ref[strings.LastIndex(ref, "/")+1:]
		q, ok := d.Components.Responses[name].(map[string]any)
		if !ok {
			return r
		}
		r = q
	}
	return r
}

// prose lists the keys dropped from every schema: they carry text, not shape.
var prose = map[string]bool{"description": true, "title": true, "externalDocs": true, "x-readme": true, "examples": true, "summary": true, "deprecated": true, "readOnly": false, "x-path": true, "x-supported-device-type": true}

// strip removes prose, keeps scalar examples (the sample generator uses them
// for patterned strings) and rewrites refs to "spec#Name".
func strip(v any, spec string, used map[string]bool) any {
	switch x := v.(type) {
	case map[string]any:
		out := map[string]any{}
		for k, val := range x {
			if prose[k] || strings.HasPrefix(k, "x-") {
				continue
			}
			if k == "example" {
				switch val.(type) {
				case string, float64, bool:
					out[k] = val
				}
				continue
			}
			if k == "$ref" {
				if s, ok := val.(string); ok && strings.HasPrefix(s, "#/components/schemas/") {
					name := strings.TrimPrefix(s, "#/components/schemas/")
					used[name] = true
					out[k] = spec + "#" + name
					continue
				}
			}
			if k == "properties" {
				// property names are data, not keywords: keep them all
				props := map[string]any{}
				if m, ok := val.(map[string]any); ok {
					for pn, pv := range m {
						props[pn] = strip(pv, spec, used)
					}
				}
				out[k] = props
				continue
			}
			out[k] = strip(val, spec, used)
		}
		return out
	case []any:
		out := make([]any, len(x))
		for i := range x {
			out[i] = strip(x[i], spec, used)
		}
		return out
	default:
		return v
	}
}
