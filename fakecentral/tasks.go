package fakecentral

import (
	"encoding/json"
	"fmt"
	"net/http"
	"sort"
	"strings"
	"time"
)

// task is an async operation (troubleshooting run or alert action).
type task struct {
	id      string
	kind    string // "troubleshooting" or "alerts"
	devType string
	serial  string
	action  string
	polls   int
	output  map[string]any
	started time.Time
}

var devTypeSegment = map[string]string{"aps": "ACCESS_POINT", "cx": "SWITCH", "aos-s": "SWITCH", "switches": "SWITCH", "gateways": "GATEWAY"}

func (st *state) newTask(kind string) *task {
	st.taskSeq++
	t := &task{id: fmt.Sprintf("%08x-0000-4000-8000-%012d", seeded(st.fx.Version(), kind)&0xffffffff, st.taskSeq), kind: kind,
		started: st.now.Add(time.Duration(st.taskSeq) * time.Second)}
	st.tasks[t.id] = t
	return t
}

func startTask(w http.ResponseWriter, rq *request, st *state) *apiError {
	want, ok := devTypeSegment[rq.param("device-type")]
	if !ok {
		return notFound("Resource not found for the given input. Unknown device type %q", rq.param("device-type"))
	}
	d, ok := st.dev[rq.param("serial-number")]
	if !ok {
		return notFound("Resource not found for the given input.")
	}
	if d.Type != want {
		return badRequest("Device %s is a %s, not addressable under /%s", d.Serial, d.Type, rq.param("device-type"))
	}
	action := rq.param("action")
	if !knownAction(action) {
		return notFound("Resource not found for the given input. Unknown operation %q", action)
	}
	if action == "list-tasks" || action == "show-commands" {
		return notFound("Resource not found for the given input.")
	}
	var body map[string]any
	if len(rq.body) > 0 && json.Unmarshal(rq.body, &body) != nil {
		return badRequest("Invalid JSON body")
	}
	if d.Status == "OFFLINE" {
		return badRequest("Device %s is offline; troubleshooting operations need a connected device", d.Serial)
	}
	t := st.newTask("troubleshooting")
	t.devType, t.serial, t.action = rq.param("device-type"), d.Serial, action
	out, aerr := st.taskOutput(d, action, body)
	if aerr != nil {
		delete(st.tasks, t.id)
		return aerr
	}
	t.output = out
	loc := strings.TrimSuffix(rq.path, "/") + "/async-operations/" + t.id
	w.Header().Set("Location", loc)
	writeJSON(w, 202, map[string]any{"location": loc, "startTime": st.ts(t.started), "status": "INITIATED"})
	return nil
}

func knownAction(a string) bool {
	if diagnosticActions[a] {
		return true
	}
	switch a {
	case "reboot", "rebootSwarm", "halt", "poeBounce", "portBounce", "disconnectUserAll", "disconnectUserByMacAddress",
		"disconnectUserByNetwork", "disconnectClientAll", "disconnectClientByMacAddress":
		return true
	}
	return false
}

func (st *state) troubleshootingFor(serial, action string) []TroubleshootingOutput {
	var exact, any []TroubleshootingOutput
	for _, o := range st.fx.Troubleshooting {
		if o.Action != action {
			continue
		}
		if o.Serial == serial {
			exact = append(exact, o)
		} else if o.Serial == "*" || o.Serial == "" {
			any = append(any, o)
		}
	}
	return append(exact, any...)
}

func (st *state) taskOutput(d *Device, action string, body map[string]any) (map[string]any, *apiError) {
	outs := st.troubleshootingFor(d.Serial, action)
	switch action {
	case "showCommands":
		var cmds []string
		if raw, ok := body["commands"].([]any); ok {
			for _, c := range raw {
				if s, ok := c.(string); ok {
					cmds = append(cmds, s)
				}
			}
		}
		if len(cmds) == 0 {
			return nil, badRequest("Body must name at least one command: {\"commands\": [\"show ...\"]}")
		}
		var results []any
		for _, c := range cmds {
			text := fmt.Sprintf("%% No output recorded for %q on %s in fixture %s", c, d.Name, st.fx.Name)
			for _, o := range outs {
				if strings.EqualFold(strings.TrimSpace(o.Command), strings.TrimSpace(c)) {
					text = o.Output
					break
				}
			}
			results = append(results, map[string]any{"command": c, "output": text})
		}
		cmdList := make([]any, len(cmds))
		for i, c := range cmds {
			cmdList[i] = c
		}
		return map[string]any{"commands": cmdList, "results": results}, nil
	case "disconnectUserByMacAddress", "disconnectClientByMacAddress":
		mac, _ := body["userMacAddress"].(string)
		if mac == "" {
			mac, _ = body["macAddress"].(string)
		}
		c, ok := st.client[strings.ToLower(mac)]
		if !ok {
			return nil, notFound("Resource not found for the given input. Unknown client %q", mac)
		}
		c.Status = "Disconnected"
		st.rebuild()
		return map[string]any{"output": fmt.Sprintf("Client %s disconnected from %s", c.MAC, d.Name)}, nil
	}
	for _, o := range outs {
		if o.Result != nil {
			return cloneJSON(normalizeYAML(o.Result)).(map[string]any), nil
		}
		if o.Output != "" {
			return map[string]any{"output": o.Output}, nil
		}
	}
	return map[string]any{"output": fmt.Sprintf("%s completed on %s", action, d.Name)}, nil
}

func pollTask(w http.ResponseWriter, rq *request, st *state) *apiError {
	t, ok := st.tasks[rq.param("task-id")]
	if !ok || t.kind != "troubleshooting" || t.serial != rq.param("serial-number") || t.action != rq.param("action") {
		return notFound("Resource not found for the given input.")
	}
	t.polls++
	if t.polls <= rq.c.opts.AsyncPolls {
		writeJSON(w, 200, map[string]any{"status": "RUNNING", "progressPercent": 50, "startTime": st.ts(t.started), "endTime": nil})
		return nil
	}
	writeJSON(w, 200, map[string]any{"status": "COMPLETED", "progressPercent": 100, "startTime": st.ts(t.started),
		"endTime": st.ts(t.started.Add(3 * time.Second)), "output": t.output})
	return nil
}

func alertAction(action string) handler {
	return func(w http.ResponseWriter, rq *request, st *state) *apiError {
		var body struct {
			Keys     []string `json:"keys"`
			Priority string   `json:"priority"`
		}
		if json.Unmarshal(rq.body, &body) != nil || len(body.Keys) == 0 {
			return badRequest("Body must be {\"keys\": [...]} with at least one alert key")
		}
		byID := map[string]*Alert{}
		for _, a := range st.alerts {
			byID[a.ID] = a
		}
		for _, k := range body.Keys {
			if _, ok := byID[k]; !ok {
				return notFound("Resource not found for the given input. Unknown alert %s", k)
			}
		}
		for _, k := range body.Keys {
			a := byID[k]
			switch action {
			case "clear":
				a.Status, a.ClearedReason = "Cleared", "Manually cleared"
			case "defer":
				a.Status = "Deferred"
			case "active":
				a.Status, a.ClearedReason = "Active", ""
			case "priority":
				if body.Priority != "" {
					a.Priority = body.Priority
				}
			}
		}
		st.rebuild()
		t := st.newTask("alerts")
		t.action = action
		loc := "/network-notifications/v1/alerts/async-operations/" + t.id
		w.Header().Set("Location", loc)
		writeJSON(w, 202, map[string]any{"location": loc, "response": "Accepted", "taskId": t.id})
		return nil
	}
}

func alertTask(w http.ResponseWriter, rq *request, st *state) *apiError {
	t, ok := st.tasks[rq.param("task-id")]
	if !ok || t.kind != "alerts" {
		return notFound("Resource not found for the given input.")
	}
	t.polls++
	state := "SUCCEEDED"
	pct := 100
	if t.polls <= rq.c.opts.AsyncPolls {
		state, pct = "IN_PROGRESS", 50
	}
	writeJSON(w, 200, map[string]any{"id": t.id, "type": "network-notifications/async-operation", "state": state,
		"progressPercent": pct, "startedAt": st.ts(t.started), "endedAt": st.ts(t.started.Add(time.Second)),
		"sourceResourceUri": "/network-notifications/v1/alerts/" + t.action, "logMessages": []any{}})
	return nil
}

// eventScope checks the context parameters of events and event-filters and
// returns the matching events.
func (rq *request) eventScope(st *state) ([]item, *apiError) {
	ctype, cid, site := rq.query.Get("context-type"), rq.query.Get("context-identifier"), rq.query.Get("site-id")
	var from, to time.Time
	for _, p := range []struct {
		name string
		t    *time.Time
	}{{"start-at", &from}, {"end-at", &to}} {
		if v := rq.query.Get(p.name); v != "" {
			t, err := time.Parse(time.RFC3339Nano, v)
			if err != nil {
				return nil, badRequest("Invalid value for %s: %q is not an RFC 3339 timestamp", p.name, v)
			}
			*p.t = t
		}
	}
	if !from.IsZero() && !to.IsZero() && !from.Before(to) {
		return nil, badRequest("start-at must be before end-at")
	}
	from, to = st.window(from, to, 3*time.Hour)
	var match func(e *Event) bool
	switch ctype {
	case "SITE":
		match = func(e *Event) bool { return e.Site == cid }
	case "ACCESS_POINT", "SWITCH", "GATEWAY", "BRIDGE":
		match = func(e *Event) bool { return e.Serial == cid }
	case "WIRELESS_CLIENT", "WIRED_CLIENT":
		match = func(e *Event) bool { return strings.EqualFold(e.ClientMAC, cid) }
	default:
		return nil, badRequest("Invalid value for context-type: %q", ctype)
	}
	var out []item
	v := st.view("events")
	for _, e := range st.events {
		if site != "" && e.Site != site {
			continue
		}
		if !match(e) {
			continue
		}
		t := st.fx.stamp(e.Time, time.Hour)
		if t.Before(from) || t.After(to) {
			continue
		}
		out = append(out, *v.find(e.ID))
	}
	// Newest first, as Central lists events.
	sort.SliceStable(out, func(i, j int) bool { return out[i].obj["timeAt"].(string) > out[j].obj["timeAt"].(string) })
	return nonNil(out), nil
}

func events(w http.ResponseWriter, rq *request, st *state) *apiError {
	items, err := rq.eventScope(st)
	if err != nil {
		return err
	}
	if s := strings.ToLower(rq.query.Get("search")); s != "" {
		var kept []item
		for _, it := range items {
			if strings.Contains(strings.ToLower(string(it.raw)), s) {
				kept = append(kept, it)
			}
		}
		items = nonNil(kept)
	}
	return rq.serveList(w, st, listSpec{items: items, cursor: true, key: "events", defLimit: 100, maxLimit: 1000})
}

func eventFilters(w http.ResponseWriter, rq *request, st *state) *apiError {
	items, err := rq.eventScope(st)
	if err != nil {
		return err
	}
	cats, names, srcs := map[string]int{}, map[string]int{}, map[string]int{}
	nameOf := map[string]string{}
	for _, it := range items {
		c, _ := it.get("category")
		id, _ := it.get("eventId")
		n, _ := it.get("eventName")
		s, _ := it.get("sourceType")
		cats[c]++
		names[id]++
		nameOf[id] = n
		srcs[s]++
	}
	out := map[string]any{"categories": []any{}, "eventNames": []any{}, "sourceTypes": []any{}}
	for _, k := range sortedKeys(cats) {
		out["categories"] = append(out["categories"].([]any), map[string]any{"category": k, "count": cats[k]})
	}
	for _, k := range sortedKeys(names) {
		var id int
		fmt.Sscanf(k, "%d", &id)
		out["eventNames"] = append(out["eventNames"].([]any), map[string]any{"eventId": id, "eventName": nameOf[k], "count": names[k]})
	}
	for _, k := range sortedKeys(srcs) {
		out["sourceTypes"] = append(out["sourceTypes"].([]any), map[string]any{"sourceType": k, "count": srcs[k]})
	}
	writeJSON(w, 200, out)
	return nil
}

func sortedKeys(m map[string]int) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

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
	if name == "" && body != nil && (rq.method == "POST" || rq.method == "PUT" || rq.method == "PATCH") {
		name = configKey(res, body)
	}
	ok := func(msg string) {
		writeJSON(w, 200, map[string]any{"httpStatusCode": 200, "errorCode": "", "message": msg, "debugId": debugID(rq)})
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
		setKey(res, o, name)
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
		setKey(res, o, name)
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
