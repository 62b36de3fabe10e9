package fakecentral

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http/httptest"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"testing"

	"github.com/santhosh-tekuri/jsonschema/v6"
)

// The contract test validates the fake's answers against the response
// schemas of the vendor's OpenAPI definitions. The definitions are not in
// this repository: they live beside it in ../shared/reference (CI clones
// shared next to the repo). FAKECENTRAL_OPENAPI_DIR overrides the folder.
func openAPIDir(t *testing.T) string {
	t.Helper()
	dir := os.Getenv("FAKECENTRAL_OPENAPI_DIR")
	if dir == "" {
		dir = filepath.Join("..", "..", "shared", "reference", "central-openapi")
	}
	if _, err := os.Stat(filepath.Join(dir, "mrt", "monitoring.json")); err != nil {
		abs, _ := filepath.Abs(dir)
		t.Skipf("CONTRACT TEST NOT RUN: the OpenAPI definitions are absent (looked for %s/mrt/monitoring.json). "+
			"Clone the shared folder beside the repository or set FAKECENTRAL_OPENAPI_DIR.", abs)
	}
	return dir
}

type specSet struct {
	docs     map[string]map[string]any // "mrt/monitoring" -> document
	compiler *jsonschema.Compiler
	mu       sync.Mutex
	cache    map[string]*jsonschema.Schema
}

var (
	specsOnce sync.Once
	specs     *specSet
	specsErr  error
)

func loadSpecs(t *testing.T) *specSet {
	dir := openAPIDir(t)
	specsOnce.Do(func() {
		ss := &specSet{docs: map[string]map[string]any{}, compiler: jsonschema.NewCompiler(), cache: map[string]*jsonschema.Schema{}}
		ss.compiler.DefaultDraft(jsonschema.Draft2020)
		files, _ := filepath.Glob(filepath.Join(dir, "*", "*.json"))
		for _, f := range files {
			if strings.HasPrefix(filepath.Base(f), "_") {
				continue
			}
			b, err := os.ReadFile(f)
			if err != nil {
				specsErr = err
				return
			}
			doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(b))
			if err != nil {
				specsErr = fmt.Errorf("%s: %w", f, err)
				return
			}
			relax(doc)
			name := filepath.Base(filepath.Dir(f)) + "/" + strings.TrimSuffix(filepath.Base(f), ".json")
			ss.docs[name] = doc.(map[string]any)
			if err := ss.compiler.AddResource("mem:///"+name+".json", doc); err != nil {
				specsErr = err
				return
			}
		}
		specs = ss
	})
	if specsErr != nil {
		t.Fatal(specsErr)
	}
	return specs
}

// relax applies the two documented deviations from the definitions' schemas,
// both taken from the definitions' own examples: "next" is null on the last
// page (examples show "next": null where the schema says string), and a
// config list's "offset" is the next offset as a string or null when done.
// OpenAPI 3.0 "nullable" is mapped to JSON Schema's null type. And a oneOf
// whose alternatives are all plain strings (the config definitions carry the
// real patterns in "x-patterns", which JSON Schema ignores) can never match
// exactly one alternative, so it is read as anyOf.
func relax(v any) {
	switch x := v.(type) {
	case map[string]any:
		if alts, ok := x["oneOf"].([]any); ok && len(alts) > 1 {
			plain := true
			for _, a := range alts {
				am, _ := a.(map[string]any)
				if am["type"] != "string" || am["pattern"] != nil || am["enum"] != nil || am["const"] != nil {
					plain = false
				}
			}
			if plain {
				x["anyOf"] = alts
				delete(x, "oneOf")
			}
		}
		if props, ok := x["properties"].(map[string]any); ok {
			for _, k := range []string{"next", "offset"} {
				if p, ok := props[k]; ok {
					props[k] = map[string]any{"anyOf": []any{p, map[string]any{"type": "null"}}}
				}
			}
		}
		if n, _ := x["nullable"].(bool); n {
			if t, ok := x["type"].(string); ok {
				x["type"] = []any{t, "null"}
			}
		}
		for _, e := range x {
			relax(e)
		}
	case []any:
		for _, e := range x {
			relax(e)
		}
	}
}

func ptrEscape(s string) string { return strings.NewReplacer("~", "~0", "/", "~1").Replace(s) }

// responseSchema compiles the schema of (method, template) for status.
func (ss *specSet) responseSchema(spec, method, template string, status int) (*jsonschema.Schema, error) {
	doc := ss.docs[spec]
	paths, _ := doc["paths"].(map[string]any)
	item, _ := paths[template].(map[string]any)
	op, _ := item[strings.ToLower(method)].(map[string]any)
	resps, _ := op["responses"].(map[string]any)
	code := fmt.Sprint(status)
	r, ok := resps[code].(map[string]any)
	if !ok {
		return nil, fmt.Errorf("%s %s documents no %d answer", method, template, status)
	}
	ptr := "#/paths/" + ptrEscape(template) + "/" + strings.ToLower(method) + "/responses/" + code
	if ref, ok := r["$ref"].(string); ok {
		ptr = ref
		name := ref[strings.LastIndex(ref, "/")+1:]
		comps, _ := doc["components"].(map[string]any)
		rs, _ := comps["responses"].(map[string]any)
		r, _ = rs[name].(map[string]any)
	}
	content, _ := r["content"].(map[string]any)
	if _, ok := content["application/json"]; !ok {
		return nil, fmt.Errorf("%s %s %d has no JSON content", method, template, status)
	}
	loc := "mem:///" + spec + ".json" + ptr + "/content/application~1json/schema"
	ss.mu.Lock()
	defer ss.mu.Unlock()
	if s, ok := ss.cache[loc]; ok {
		return s, nil
	}
	s, err := ss.compiler.Compile(loc)
	if err != nil {
		return nil, err
	}
	ss.cache[loc] = s
	return s, nil
}

// templateFor maps a modelled route pattern to its documented template.
func templateFor(method, pattern string) *catalogRoute {
	for _, p := range []string{pattern, strings.Replace(pattern, "/v1alpha1/", "/v1/", 1), strings.Replace(pattern, "/v1/", "/v1alpha1/", 1)} {
		if cr := catalogRouteFor(method, p); cr != nil {
			return cr
		}
	}
	return nil
}

// contractTargets lists GETs over every modelled read route, built from the
// fixture's own ids.
func contractTargets(f *Fixture) []string {
	first := func(kind string) string {
		for _, d := range f.Devices {
			if d.Type == kind && d.Status == "ONLINE" {
				return d.Serial
			}
		}
		return ""
	}
	ap, sw, gw := first("ACCESS_POINT"), first("SWITCH"), first("GATEWAY")
	site := f.Sites[0].ID
	mac := f.Clients[0].MAC
	wlan := f.WLANs[0].Name
	win := "filter=" + q("timestamp gt "+f.Now().Add(-3600e9).Format("2006-01-02T15:04:05.000Z")+" and timestamp lt "+f.Now().Format("2006-01-02T15:04:05.000Z"))
	ev := "context-type=SITE&context-identifier=" + site + "&site-id=" + site + "&start-at=" + f.Now().Add(-3*3600e9).Format("2006-01-02T15:04:05.000Z") + "&end-at=" + f.Now().Format("2006-01-02T15:04:05.000Z")
	m := "/network-monitoring/v1/"
	out := []string{
		m + "sites-health", m + "sites-device-health", m + "sites-client-health", m + "site-health/" + site,
		m + "tenant-device-health", m + "tenant-client-health", m + "device-inventory", m + "devices", m + "aps",
		m + "aps/" + ap, m + "aps/" + ap + "/wlans", m + "aps/" + ap + "/cpu-utilization-trends?" + win,
		m + "aps/" + ap + "/memory-utilization-trends", m + "aps/" + ap + "/power-consumption-trends", m + "aps/" + ap + "/throughput-trends",
		m + "switches", m + "switches/" + sw, m + "radios", m + "aps/" + ap + "/radios", m + "bssids",
		m + "switches/" + sw + "/interfaces?limit=10&offset=0", m + "gateways", m + "gateways/" + gw, m + "gateways/" + gw + "/tunnels",
		m + "gateways/" + gw + "/lan-tunnels-health-summary", m + "gateways/" + gw + "/wan-tunnels-health-summary",
		m + "gateways/" + gw + "/cpu-utilization-trends", m + "clients", m + "clients?filter=" + q("status eq 'Failed'"),
		m + "clients/" + mac, m + "wlans", m + "wlans/" + wlan, m + "wlans/" + wlan + "/throughput-trends?" + win,
		"/network-notifications/v1/alerts", "/network-troubleshooting/v1/events?limit=5&" + ev, "/network-troubleshooting/v1/event-filters?" + ev,
		"/network-services/v1/firmware-details", "/network-config/v1/sites?offset=0", "/network-config/v1/device-groups?limit=10&offset=0",
		"/network-config/v1/global", "/network-config/v1alpha1/config-health/devices?limit=5&offset=0",
		"/network-config/v1alpha1/config-health/active-issue?serial=" + sw, "/network-config/v1alpha1/wlan-ssids",
		"/network-config/v1alpha1/wlan-ssids/" + wlan, "/network-config/v1alpha1/auth-servers", "/network-config/v1alpha1/server-groups",
		"/network-config/v1alpha1/cnac-mac-reg", "/network-config/v1alpha1/roles",
		"/network-monitoring/v1/clients/00:00:00:00:00:01", "/network-monitoring/v1/clients?bogus=1",
		m + "swarms", "/network-config/v1/sites",
		m + "clients-topn-usage", m + "clients-topn-usage?limit=3&site-id=" + site, m + "clients-trend?" + win, m + "clients-trend?group-by=ROLE&type=WIRELESS", m + "clients-trend?group-by=wlan",
		m + "clients/" + mac + "/mobility-trail", m + "top-aps-by-usage", m + "top-aps-by-wireless-usage?site-id=" + site, m + "top-aps-by-wired-usage",
	}
	for _, d := range f.Devices {
		if d.Type == "ACCESS_POINT" && d.Cluster != "" {
			out = append(out, m+"swarms/"+numericID("cluster", d.Cluster))
			break
		}
	}
	for _, d := range f.Devices {
		if d.Type == "GATEWAY" && d.Cluster != "" {
			out = append(out, m+"clusters/"+d.Cluster+"/members")
			break
		}
	}
	return out
}

func TestContractModelledRoutes(t *testing.T) {
	ss := loadSpecs(t)
	checked := map[string]bool{}
	for _, name := range FixtureNames() {
		fx := MustLoadFixture(name)
		c := New(&Options{Fixture: fx})
		for _, target := range contractTargets(fx) {
			// Follow paging: every page is validated.
			next := target
			for page := 0; page < 50 && next != ""; page++ {
				code, _, body := do(t, c, "GET", next, "")
				path := next
				if i := strings.IndexByte(path, '?'); i >= 0 {
					path = path[:i]
				}
				rt, _ := findRoute("GET", splitPath(path))
				if rt == nil {
					t.Errorf("%s: not a modelled route", next)
					break
				}
				cr, _ := findCatalogRoute("GET", splitPath(path))
				if cr == nil {
					t.Logf("%s: undocumented route %s (served for the peers; no schema to check)", name, rt.pattern)
					break
				}
				s, err := ss.responseSchema(cr.Spec, "GET", cr.Path, code)
				if err != nil {
					t.Errorf("%s %s: %v", name, next, err)
					break
				}
				inst, err := jsonschema.UnmarshalJSON(bytes.NewReader(body))
				if err != nil {
					t.Errorf("%s %s: body is not JSON: %v", name, next, err)
					break
				}
				if err := s.Validate(inst); err != nil {
					t.Errorf("%s GET %s (%d) does not match %s %s:\n%v", name, next, code, cr.Spec, cr.Path, err)
				}
				checked[fmt.Sprintf("%s %d", cr.Path, code)] = true
				var env struct {
					Next *string `json:"next"`
				}
				json.Unmarshal(body, &env)
				next = ""
				if env.Next != nil && code == 200 {
					sep := "?"
					if strings.Contains(path, "?") {
						sep = "&"
					}
					next = path + sep + "limit=" + pageLimit(target) + "&next=" + *env.Next
				}
			}
		}
	}
	keys := make([]string, 0, len(checked))
	for k := range checked {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	t.Logf("validated %d documented (route, status) pairs across %d fixtures", len(keys), len(FixtureNames()))
}

func pageLimit(target string) string {
	if strings.Contains(target, "limit=5") {
		return "5"
	}
	return "20"
}

// TestContractCatalogFallback validates the generated answer of every
// documented route that has no modelled handler against its own schema.
func TestContractCatalogFallback(t *testing.T) {
	ss := loadSpecs(t)
	c := New(nil)
	var failed, checked, noSchema int
	var msgs []string
	for _, cr := range loadCatalog().Routes {
		segs := splitPath(cr.Path)
		for i, s := range segs {
			if isParam(s) {
				segs[i] = "x"
			}
		}
		if rt, _ := findRoute(cr.Method, segs); rt != nil {
			continue // modelled
		}
		if len(cr.Schema) == 0 {
			noSchema++
			continue
		}
		s, err := ss.responseSchema(cr.Spec, cr.Method, cr.Path, cr.Status)
		if err != nil {
			noSchema++
			continue
		}
		w := httptest.NewRecorder()
		rq := &request{c: c, r: httptest.NewRequest(cr.Method, "/", nil), method: cr.Method, path: cr.Path, segs: segs}
		c.serveCatalog(w, rq, &cr)
		inst, err := jsonschema.UnmarshalJSON(bytes.NewReader(w.Body.Bytes()))
		if err != nil {
			t.Fatalf("%s %s: %v", cr.Method, cr.Path, err)
		}
		checked++
		if err := s.Validate(inst); err != nil {
			failed++
			if len(msgs) < 15 {
				msg := err.Error()
				if len(msg) > 400 {
					msg = msg[:400]
				}
				msgs = append(msgs, fmt.Sprintf("%s %s: %s", cr.Method, cr.Path, msg))
			}
		}
	}
	t.Logf("catalog fallback: %d generated answers validated, %d invalid, %d routes without a JSON schema", checked, failed, noSchema)
	if failed > 0 {
		t.Errorf("%d generated answers do not match their schema; first ones:\n%s", failed, strings.Join(msgs, "\n"))
	}
}

// TestContractConfigCollections reads every documented network-config
// collection through the generic config handler and validates the answer.
func TestContractConfigCollections(t *testing.T) {
	ss := loadSpecs(t)
	c := New(nil)
	var checked, failed int
	var msgs []string
	for _, cr := range loadCatalog().Routes {
		segs := splitPath(cr.Path)
		if cr.Method != "GET" || len(segs) != 3 || segs[0] != "network-config" {
			continue
		}
		if rt, _ := findRoute("GET", segs); rt == nil || rt.pattern != "/network-config/"+segs[1]+"/{resource}" {
			continue
		}
		code, _, body := do(t, c, "GET", cr.Path, "")
		s, err := ss.responseSchema(cr.Spec, "GET", cr.Path, code)
		if err != nil {
			continue
		}
		inst, _ := jsonschema.UnmarshalJSON(bytes.NewReader(body))
		checked++
		if err := s.Validate(inst); err != nil {
			failed++
			if len(msgs) < 10 {
				msgs = append(msgs, fmt.Sprintf("%s (%d): %.300s", cr.Path, code, err))
			}
		}
	}
	t.Logf("config collections: %d validated, %d invalid", checked, failed)
	if failed > 0 {
		t.Errorf("%d config collection answers do not match:\n%s", failed, strings.Join(msgs, "\n"))
	}
}

// TestContractWrites validates the answers of the modelled writes and async
// operations (202 + poll) against their documented schemas.
func TestContractWrites(t *testing.T) {
	ss := loadSpecs(t)
	c := New(nil)
	steps := []struct{ method, target, body string }{
		{"POST", "/network-troubleshooting/v1/aps/CNAPA0101/showCommands", `{"commands":["show ap bss-table"]}`},
		{"GET", "LOCATION", ""},
		{"POST", "/network-troubleshooting/v1/aps/CNAPA0101/aaa", `{"username":"u","password":"p","server":"corp-radius"}`},
		{"GET", "LOCATION", ""},
		{"POST", "/network-troubleshooting/v1/cx/CNSWA0002/ping", `{"destination":"10.20.0.1"}`},
		{"POST", "/network-troubleshooting/v1/aps/CNAPA0102/reboot", `{}`},
		{"POST", "/network-notifications/v1/alerts/clear", `{"keys":["ALRT-A-0004"]}`},
		{"GET", "LOCATION", ""},
		{"PATCH", "/network-monitoring/v1/devices/CNAPA0101", `{"notes":"x"}`},
		{"POST", "/network-config/v1alpha1/config-health/devices-resync", `{"serials":["CNSWA0002"]}`},
		{"POST", "/network-config/v1alpha1/wlan-ssids/Lab-Net", `{"opmode":"WPA3_SAE"}`},
		{"POST", "/network-config/v1alpha1/wlan-ssids/Lab-Net", `{"opmode":"WPA3_SAE"}`},
	}
	loc := ""
	for _, s := range steps {
		target := s.target
		if target == "LOCATION" {
			target = loc
		}
		code, h, body := do(t, c, s.method, target, s.body)
		if l := h.Get("Location"); l != "" {
			loc = l
		}
		path := target
		if i := strings.IndexByte(path, '?'); i >= 0 {
			path = path[:i]
		}
		cr, _ := findCatalogRoute(s.method, splitPath(path))
		if cr == nil {
			t.Errorf("%s %s: undocumented", s.method, path)
			continue
		}
		sch, err := ss.responseSchema(cr.Spec, s.method, cr.Path, code)
		if err != nil {
			t.Logf("%s %s answered %d: %v (no schema to check)", s.method, target, code, err)
			continue
		}
		inst, _ := jsonschema.UnmarshalJSON(bytes.NewReader(body))
		if err := sch.Validate(inst); err != nil {
			t.Errorf("%s %s (%d) does not match %s:\n%v", s.method, target, code, cr.Path, err)
		}
	}
}
