package fakecentral

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
)

// configObject is the generic network-config CRUD: GET lists or reads, POST
// creates (412 when the name exists), PUT replaces or creates, PATCH merges,
// DELETE removes. Only documented resources (or ones the fixture holds) are
// served.
func configObject(w http.ResponseWriter, rq *request, st *state) *apiError {
	version, res, name := rq.segs[1], rq.param("resource"), rq.param("name")
	if scopeResources[res] {
		// Scope management (sites, collections, groups, hierarchy) is not a
		// config object store: modelled lists or the catalog answer it.
		if cr, _ := findCatalogRoute(rq.method, rq.segs); cr != nil {
			rq.c.serveCatalog(w, rq, cr)
			return nil
		}
		return notFound("Resource not found for the given input.")
	}
	if !st.documentedConfig(version, res) {
		return notFound("Resource not found for the given input. No configuration resource %q", res)
	}
	c := st.coll(res)
	var body map[string]any
	if rq.method != "GET" && rq.method != "DELETE" && len(rq.body) > 0 {
		if err := json.Unmarshal(rq.body, &body); err != nil {
			return badRequest("Invalid JSON body: %v", err)
		}
	}
	generated := false
	if name == "" && body != nil && (rq.method == "POST" || rq.method == "PUT" || rq.method == "PATCH") {
		// The NAC service wraps the object in input (createMacRegistration_request).
		if in, ok := body["input"].(map[string]any); ok && len(body) == 1 {
			body = in
		}
		name = configKey(res, body)
		if name == "" {
			// A per-scope object (device-firmware, firmware-compliance) is
			// named by the scope its query gives, not by a field.
			name = scopedName(rq)
		}
		if name == "" && rq.method == "POST" && strings.HasPrefix(res, "cnac-") {
			// The NAC service assigns the id of what it creates.
			name, generated = generatedID(rq, res, rq.body), true
		}
	}
	ok := func(msg string) {
		writeJSON(w, 200, map[string]any{"httpStatusCode": 200, "errorCode": "SUCC_001", "message": msg, "debugId": debugID(rq)})
	}
	switch rq.method {
	case "GET":
		if name == "" {
			objs := c.list()
			off, err := intParam(rq, "offset", 0, 0, 0)
			if err != nil {
				return err
			}
			limit, err := intParam(rq, "limit", len(objs), 0, 0)
			if err != nil {
				return err
			}
			if rq.query.Get("offset") == "" {
				limit = len(objs) // Central honours limit only together with offset
			}
			if off > len(objs) {
				off = len(objs)
			}
			end := off + limit
			if end > len(objs) {
				end = len(objs)
			}
			page := make([]any, 0, end-off)
			for _, o := range objs[off:end] {
				page = append(page, o)
			}
			lk := listKey(res)
			out := map[string]any{lk: page}
			if lk == "items" {
				// The NAC service lists (cnac-*) carry counts beside items.
				out["count"], out["total"] = len(page), len(objs)
			}
			writeJSON(w, 200, out)
			return nil
		}
		o, found := c.objs[name]
		if !found {
			return notFound("Resource not found for the given input. %s %q does not exist", res, name)
		}
		writeJSON(w, 200, o)
	case "POST":
		if name == "" {
			return badRequest("The object needs a name")
		}
		if _, found := c.objs[name]; found {
			return &apiError{status: 412, message: fmt.Sprintf("Precondition failed: %s %q already exists (duplicate)", res, name)}
		}
		o := map[string]any{}
		for k, v := range body {
			o[k] = v
		}
		if generated {
			o["id"] = name
		} else if scopedName(rq) != name {
			setKey(res, o, name)
		}
		c.put(name, o)
		ok(fmt.Sprintf("%s %q created", res, name))
	case "PUT":
		if name == "" {
			return badRequest("The object needs a name")
		}
		o := map[string]any{}
		for k, v := range body {
			o[k] = v
		}
		if scopedName(rq) != name {
			setKey(res, o, name)
		}
		c.put(name, o)
		ok(fmt.Sprintf("%s %q replaced", res, name))
	case "PATCH":
		o, found := c.objs[name]
		if !found {
			return notFound("Resource not found for the given input. %s %q does not exist", res, name)
		}
		merge(o, body)
		ok(fmt.Sprintf("%s %q updated", res, name))
	case "DELETE":
		if name == "" {
			return badRequest("The object to delete needs a name")
		}
		if _, found := c.objs[name]; !found {
			return notFound("Resource not found for the given input. %s %q does not exist", res, name)
		}
		c.del(name)
		ok(fmt.Sprintf("%s %q deleted", res, name))
	}
	if res == "wlan-ssids" && rq.method != "GET" {
		st.syncWLANs()
	}
	return nil
}

// scopeResources are network-config paths of the scope-management API.
var scopeResources = map[string]bool{"hierarchy": true, "site-collections": true, "device-collections": true, "sites": true,
	"device-groups": true, "global": true, "site-collection-add-sites": true, "site-collection-remove-sites": true,
	"device-groups-add-devices": true, "device-groups-remove-devices": true, "device-groups-create-and-add-devices": true,
	"site-add-devices": true, "device-collection-add-devices": true, "device-collection-remove-devices": true,
	"device-collection-create-and-add-devices": true}

func setKey(res string, o map[string]any, name string) {
	if configKey(res, o) != "" {
		return
	}
	if res == "wlan-ssids" {
		o["ssid"] = name
		return
	}
	o["name"] = name
}

// merge applies a JSON merge patch.
func merge(dst, patch map[string]any) {
	for k, v := range patch {
		if v == nil {
			delete(dst, k)
			continue
		}
		if pm, ok := v.(map[string]any); ok {
			if dm, ok := dst[k].(map[string]any); ok {
				merge(dm, pm)
				continue
			}
		}
		dst[k] = v
	}
}

// syncWLANs carries WLAN profile writes into the monitoring view, so a WLAN
// created, changed or deleted in config reads back from /wlans too.
func (st *state) syncWLANs() {
	c := st.coll("wlan-ssids")
	var out []*WLAN
	byName := map[string]*WLAN{}
	for _, w := range st.wlans {
		byName[w.Name] = w
	}
	for _, name := range c.order {
		o := c.objs[name]
		w := byName[name]
		if w == nil {
			w = &WLAN{Name: name, Status: "ENABLED"}
		}
		if e, ok := o["enable"].(bool); ok {
			w.Status = map[bool]string{true: "ENABLED", false: "DISABLED"}[e]
		}
		if r, ok := o["vlan-id-range"].([]any); ok && len(r) > 0 {
			w.VLAN = fmt.Sprint(r[0])
		}
		if op, ok := o["opmode"].(string); ok {
			switch {
			case strings.Contains(op, "ENTERPRISE"):
				w.SecurityLevel, w.Security = "Enterprise", strings.ToLower(strings.ReplaceAll(strings.SplitN(op, "_", 3)[0]+"-enterprise", "_", "-"))
			case strings.Contains(op, "PERSONAL") || strings.Contains(op, "SAE") || strings.Contains(op, "PSK"):
				w.SecurityLevel, w.Security = "Personal", "wpa2-personal"
			case op == "OPEN" || op == "ENHANCED_OPEN":
				w.SecurityLevel, w.Security = "Open", "open"
			}
		}
		if ps, ok := o["personal-security"].(map[string]any); ok {
			if p, ok := ps["wpa-passphrase"].(string); ok {
				w.Passphrase = p
			}
		}
		out = append(out, w)
	}
	st.wlans = out
	st.rebuild()
}

// scopedName names a per-scope config object from its query: the scope and,
// when given, the device function ("3753337687/CAMPUS_AP"); "" without one.
func scopedName(rq *request) string {
	scope := rq.query.Get("scope-id")
	if scope == "" {
		return ""
	}
	if fn := rq.query.Get("device-function"); fn != "" {
		return scope + "/" + fn
	}
	return scope
}

// generatedID is the id Central gives an object created without one:
// derived from what was sent, so the same request makes the same id.
func generatedID(rq *request, res string, body []byte) string {
	sum := sha256.Sum256(append([]byte(res+"\x00"+rq.query.Encode()+"\x00"), body...))
	h := hex.EncodeToString(sum[:16])
	return h[:8] + "-" + h[8:12] + "-" + h[12:16] + "-" + h[16:20] + "-" + h[20:32]
}
