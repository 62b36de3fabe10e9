package fakecentral

import (
	"bytes"
	"encoding/json"
	"fmt"
	"hash/fnv"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/mcpbench/bench/internal/odata"
)

func buildRoutes() []*route {
	var rs []*route
	add := func(r []*route) { rs = append(rs, r...) }
	mon := "/network-monitoring/{v}/"

	// Sites and health.
	add(both("GET", mon+"sites-health", offsetList("sites-health", 100, 100, true), extraQuery("next")))
	add(both("GET", mon+"sites-device-health", offsetList("sites-device-health", 100, 100, true), extraQuery("next")))
	add(both("GET", mon+"sites-client-health", offsetList("sites-client-health", 100, 100, true), extraQuery("next")))
	add(both("GET", mon+"site-health/{site-id}", siteHealth))
	add(both("GET", mon+"tenant-device-health", tenantDeviceHealth))
	add(both("GET", mon+"tenant-client-health", tenantClientHealth))

	// Devices.
	add(both("GET", mon+"device-inventory", deviceInventory))
	add(both("GET", mon+"devices", cursorList("devices", 100, 1000)))
	add(both("PATCH", mon+"devices/{serial-number}", patchDevice, writes, withClass(ClassWrite)))
	add(both("GET", mon+"aps", cursorList("aps", 20, 1000)))
	add(both("GET", mon+"aps/{serial-number}", apDetail))
	add(both("GET", mon+"aps/{serial-number}/wlans", apWLANs))
	for _, m := range []string{"cpu-utilization", "memory-utilization", "power-consumption", "throughput"} {
		add(both("GET", mon+"aps/{serial-number}/"+m+"-trends", trend("ACCESS_POINT", m)))
	}
	add(both("GET", mon+"radios", radios))
	add(both("GET", mon+"aps/{serial-number}/radios", apRadios))
	add(both("GET", mon+"bssids", bssids))
	add(both("GET", mon+"swarms", swarms))
	add(both("GET", mon+"swarms/{cluster-id}", swarmDetail))
	add(both("GET", mon+"clusters/{cluster-name}/members", clusterMembers))
	add(both("GET", mon+"switches/{serial-number}/interfaces", switchInterfaces))
	add(both("GET", mon+"switches", cursorList("switches", 1000, 1000)))
	add(both("GET", mon+"switches/{serial-number}", deviceDetail("switches", "SWITCH")))
	add(both("GET", mon+"gateways", cursorList("gateways", 20, 1000)))
	add(both("GET", mon+"gateways/{serial-number}", deviceDetail("gateways", "GATEWAY")))
	add(both("GET", mon+"gateways/{serial-number}/tunnels", gatewayTunnels))
	add(both("GET", mon+"gateways/{serial-number}/lan-tunnels-health-summary", tunnelHealth("LAN")))
	add(both("GET", mon+"gateways/{serial-number}/wan-tunnels-health-summary", tunnelHealth("WAN")))
	for _, m := range []string{"cpu-utilization", "memory-utilization"} {
		add(both("GET", mon+"gateways/{serial-number}/"+m+"-trends", trend("GATEWAY", m)))
	}

	// Clients.
	add(both("GET", mon+"clients", clients))
	add(both("GET", mon+"clients/{mac-address}", clientDetail))
	add(both("GET", mon+"clients/{mac-address}/mobility-trail", mobilityTrail))
	add(both("GET", mon+"clients-topn-usage", clientsTopNUsage))
	add(both("GET", mon+"clients-trend", clientsTrend))
	add(both("GET", mon+"top-aps-by-usage", topAPs("all")))
	add(both("GET", mon+"top-aps-by-wireless-usage", topAPs("wireless")))
	add(both("GET", mon+"top-aps-by-wired-usage", topAPs("wired")))

	// WLANs.
	add(both("GET", mon+"wlans", wlans))
	add(both("GET", mon+"wlans/{wlan-name}", wlanDetail))
	add(both("GET", mon+"wlans/{wlan-name}/throughput-trends", wlanTrend))

	// Alerts.
	add(one("GET", "/network-notifications/v1/alerts", alerts))
	for _, a := range []string{"clear", "defer", "active", "priority"} {
		add(one("POST", "/network-notifications/v1/alerts/"+a, alertAction(a), writes, withClass(ClassWrite)))
	}
	add(one("GET", "/network-notifications/v1/alerts/async-operations/{task-id}", alertTask, writes))

	// Troubleshooting: events and async operations.
	ts := "/network-troubleshooting/{v}/"
	add(both("GET", ts+"events", events))
	add(both("GET", ts+"event-filters", eventFilters))
	add(both("POST", ts+"{device-type}/{serial-number}/{action}", startTask, writes))
	add(both("GET", ts+"{device-type}/{serial-number}/{action}/async-operations/{task-id}", pollTask, writes))

	// Services.
	add(both("GET", "/network-services/{v}/firmware-details", cursorList("firmware", 100, 1000)))

	// Configuration: scopes, config health, config objects.
	add(both("GET", "/network-config/{v}/sites", configList("config-sites")))
	add(both("GET", "/network-config/{v}/device-groups", configList("device-groups")))
	add(one("GET", "/network-config/v1/global", global))
	add(both("GET", "/network-config/{v}/config-health/devices", configHealthDevices))
	add(both("GET", "/network-config/{v}/config-health/active-issue", activeIssue))
	add(both("POST", "/network-config/{v}/config-health/devices-resync", resync, writes, withClass(ClassWrite)))
	// Undocumented; the shapes the servers read (scope.go).
	add(both("GET", "/network-config/{v}/scope-maps", scopeMaps))
	add(one("GET", "/cnxdevice/v1/debug/get_scope_data", scopeData))
	for _, m := range []string{"GET", "POST", "PUT", "PATCH", "DELETE"} {
		add(both(m, "/network-config/{v}/{resource}", configObject, writes))
		add(both(m, "/network-config/{v}/{resource}/{name}", configObject, writes))
	}
	return rs
}

func offsetList(view string, def, max int, envelope bool) handler {
	return func(w http.ResponseWriter, rq *request, st *state) *apiError {
		ls := listSpec{view: view, defLimit: def, maxLimit: max}
		// Karthik's server pages the sites-health family with next (a page
		// number) as well as offset; both work.
		if rq.query.Has("next") {
			ls.cursor, ls.withOffset = true, true
		}
		if envelope {
			ls.extra = func(b *bytes.Buffer) { b.WriteString(`,"response":{"code":"200","message":"OK","status":"Success"}`) }
		}
		return rq.serveList(w, st, ls)
	}
}

func cursorList(view string, def, max int) handler {
	return func(w http.ResponseWriter, rq *request, st *state) *apiError {
		return rq.serveList(w, st, listSpec{view: view, cursor: true, defLimit: def, maxLimit: max})
	}
}

func configList(view string) handler {
	return func(w http.ResponseWriter, rq *request, st *state) *apiError {
		return rq.serveList(w, st, listSpec{view: view, defLimit: 100, maxLimit: 1000, offsetString: true,
			extra: func(b *bytes.Buffer) { b.WriteString(`,"response":{"code":"200","message":"OK","status":"Success"}`) }})
	}
}

func siteHealth(w http.ResponseWriter, rq *request, st *state) *apiError {
	s, ok := st.siteByID[rq.param("site-id")]
	if !ok {
		return notFound("Resource not found for the given input.")
	}
	h := st.siteHealthItem(s)
	out := map[string]any{
		"id": s.ID, "type": "network-monitoring/site-health", "health": h["health"], "reasons": h["reasons"],
		"deviceTypes": st.deviceTypeHealth(func(d *Device) bool { return d.Site == s.ID }),
		"clientTypes": st.clientTypeHealth(func(c *Client) bool { return st.dev[c.Device].Site == s.ID }),
		"compute":     []any{},
		"response":    map[string]any{"code": "200", "message": "OK", "status": "Success"},
	}
	writeJSON(w, 200, out)
	return nil
}

func tenantDeviceHealth(w http.ResponseWriter, rq *request, st *state) *apiError {
	writeJSON(w, 200, map[string]any{"id": st.fx.GlobalScopeID, "type": "network-monitoring/tenant-device-health",
		"deviceTypes": st.deviceTypeHealth(func(*Device) bool { return true })})
	return nil
}

func tenantClientHealth(w http.ResponseWriter, rq *request, st *state) *apiError {
	writeJSON(w, 200, map[string]any{"id": st.fx.GlobalScopeID, "type": "network-monitoring/tenant-client-health",
		"clientTypes": st.clientTypeHealth(func(*Client) bool { return true })})
	return nil
}

func deviceInventory(w http.ResponseWriter, rq *request, st *state) *apiError {
	ls := listSpec{view: "device-inventory", cursor: true, defLimit: 100, maxLimit: 1000}
	switch sa := rq.query.Get("site-assigned"); sa {
	case "":
	case "ASSIGNED", "UNASSIGNED":
		want := sa == "ASSIGNED"
		ls.matchKey = sa
		ls.match = func(it *item) bool { v, _ := it.get("siteId"); return (v != "") == want }
	default:
		return badRequest("Invalid value for site-assigned: %q (ASSIGNED or UNASSIGNED)", sa)
	}
	return rq.serveList(w, st, ls)
}

func (st *state) device(rq *request, typ string) (*Device, *apiError) {
	d, ok := st.dev[rq.param("serial-number")]
	if !ok || (typ != "" && d.Type != typ) {
		return nil, notFound("Resource not found for the given input.")
	}
	return d, nil
}

func deviceDetail(view, typ string) handler {
	return func(w http.ResponseWriter, rq *request, st *state) *apiError {
		d, err := st.device(rq, typ)
		if err != nil {
			return err
		}
		it := st.view(view).find(d.Serial)
		if view == "switches" {
			m := cloneJSON(it.obj).(map[string]any)
			delete(m, "switchType")
			m["health"] = deviceHealth(d)
			m["switchRole"] = orDefault(d.Role, "Standalone")
			m["manufacturer"] = "Aruba"
			writeJSON(w, 200, m)
			return nil
		}
		writeRaw(w, 200, it.raw)
		return nil
	}
}

func apDetail(w http.ResponseWriter, rq *request, st *state) *apiError {
	d, err := st.device(rq, "ACCESS_POINT")
	if err != nil {
		return err
	}
	it := st.view("aps").find(d.Serial)
	m := cloneJSON(it.obj).(map[string]any)
	for _, k := range []string{"clientCount", "cpuUtilization", "memoryUtilization", "powerConsumption", "wlanCount", "clusterId", "clusterName", "deviceFunction", "deviceGroupId", "deviceGroupName", "partNumber", "siteName"} {
		delete(m, k)
	}
	m["apStats"] = map[string]any{"clientCount": st.clientCount(d.Serial), "cpuUtilization": float64(d.CPU), "memoryUtilization": float64(d.Memory)}
	m["modem"] = map[string]any{}
	m["manufacturer"] = "Aruba"
	var rads []any
	for _, r := range st.radioItems(d) {
		u, _ := strconv.Atoi(r["channelUtilization"].(string))
		rads = append(rads, map[string]any{"band": r["band"], "macAddress": r["macAddress"], "radioNumber": r["radioNumber"],
			"channel": r["channel"], "bandwidth": r["bandwidth"], "status": r["status"],
			"radioStats": map[string]any{"channelUtilization": float64(u), "noiseFloor": -95}})
	}
	m["radios"] = rads
	m["ports"] = []any{map[string]any{"macAddress": d.MAC, "name": "eth0", "portIndex": "0", "portStatus": map[bool]string{true: "UP", false: "DOWN"}[d.Status == "ONLINE"], "status": map[bool]string{true: "UP", false: "DOWN"}[d.Status == "ONLINE"], "isUplink": true, "connector": "RJ45"}}
	var ws []any
	for _, wl := range st.wlansAt(d.Site) {
		ws = append(ws, st.wlanItem(wl))
	}
	m["wlans"] = ws
	writeJSON(w, 200, m)
	return nil
}

func apWLANs(w http.ResponseWriter, rq *request, st *state) *apiError {
	d, err := st.device(rq, "ACCESS_POINT")
	if err != nil {
		return err
	}
	var items []item
	for _, wl := range st.wlansAt(d.Site) {
		items = append(items, *st.view("wlans").find(wl.Name))
	}
	var b bytes.Buffer
	fmt.Fprintf(&b, `{"count":%d,"items":[`, len(items))
	for i, it := range items {
		if i > 0 {
			b.WriteByte(',')
		}
		b.Write(it.raw)
	}
	fmt.Fprintf(&b, `],"total":%d}`, len(items))
	writeRaw(w, 200, b.Bytes())
	return nil
}

// window resolves a trend/event time window against the fixture clock. A
// window that ends after the fixture's now (a client using its own wall
// clock) is shifted so it ends at the fixture's now: "the last hour" means
// the fixture's last hour, and the answer does not depend on when it runs.
func (st *state) window(from, to time.Time, def time.Duration) (time.Time, time.Time) {
	if to.IsZero() {
		to = st.now
	}
	if from.IsZero() {
		from = to.Add(-def)
	}
	if to.After(st.now) {
		shift := to.Sub(st.now)
		from, to = from.Add(-shift), st.now
	}
	if !from.Before(to) {
		from = to.Add(-def)
	}
	return from, to
}

func seeded(parts ...string) uint64 {
	h := fnv.New64a()
	h.Write([]byte(strings.Join(parts, "|")))
	return h.Sum64()
}

func (rq *request) trendWindow(st *state) (time.Time, time.Time, *apiError) {
	f, err := odata.Parse(rq.query.Get("filter"))
	if err != nil {
		return time.Time{}, time.Time{}, badRequest("Invalid filter: %v", err)
	}
	for _, fld := range f.Fields() {
		if fld != "timestamp" {
			return time.Time{}, time.Time{}, badRequest("Invalid filter field: %s (only timestamp)", fld)
		}
	}
	from, to, terr := f.TimeWindow("timestamp")
	if terr != nil {
		return from, to, badRequest("Invalid filter: %v", terr)
	}
	from, to = st.window(from, to, 3*time.Hour)
	return from, to, nil
}

// trendBody builds a graph of 5-minute samples (at most 288) whose values
// derive from the id and metric only.
func (st *state) trendBody(id, metric string, keys []string, base float64, from, to time.Time, zero bool) map[string]any {
	step := 5 * time.Minute
	if to.Sub(from) > 24*time.Hour {
		step = to.Sub(from) / 288
	}
	start := from.Truncate(step)
	if start.Before(from) {
		start = start.Add(step)
	}
	samples := []any{}
	for t := start; !t.After(to) && len(samples) < 288; t = t.Add(step) {
		var data []any
		for ki, k := range keys {
			v := 0.0
			if !zero {
				r := seeded(id, metric, k, t.Format(time.RFC3339)) % 1000
				v = base*(1+float64(ki)) + float64(r)/100
			}
			data = append(data, v)
		}
		samples = append(samples, map[string]any{"timestamp": st.ts(t), "data": data})
	}
	return map[string]any{"id": id, "metric": metric, "type": "network-monitoring/trend",
		"graph": map[string]any{"keys": keys, "samples": samples, "samplingIntervalInMinutes": int(step / time.Minute)}}
}

func trend(typ, metric string) handler {
	keys := map[string][]string{
		"cpu-utilization": {"cpuUtilization"}, "memory-utilization": {"memoryUtilization"},
		"power-consumption": {"powerConsumption"}, "throughput": {"tx", "rx"},
	}[metric]
	return func(w http.ResponseWriter, rq *request, st *state) *apiError {
		d, err := st.device(rq, typ)
		if err != nil {
			return err
		}
		from, to, err := rq.trendWindow(st)
		if err != nil {
			return err
		}
		base := map[string]float64{"cpu-utilization": float64(d.CPU), "memory-utilization": float64(d.Memory), "power-consumption": d.Power, "throughput": 20}[metric]
		writeJSON(w, 200, st.trendBody(d.Serial, metric, keys, base, from, to, d.Status == "OFFLINE"))
		return nil
	}
}

func gatewayTunnels(w http.ResponseWriter, rq *request, st *state) *apiError {
	d, err := st.device(rq, "GATEWAY")
	if err != nil {
		return err
	}
	var items []item
	for i, t := range d.Tunnels {
		health, reasons := "Good", []any{"GOOD_PERFORMANCE"}
		if t.Status != "Up" {
			health, reasons = "Poor", []any{"TUNNEL_STATUS"}
		}
		downReason := t.DownReason
		if downReason == "" {
			downReason = "SA expired"
		}
		obj := map[string]any{
			"authentication": "SHA-2 256", "destinationIpAddress": orDefault(t.Dest, "0.0.0.0"), "droppedPackets": 0.0,
			"encapsulation": "IPSec", "encryption": "AES-256", "gateway": d.Name, "greTunnelId": fmt.Sprint(i + 1),
			"greTunnelIpAddress": "0.0.0.0", "health": health, "healthReasons": reasons, "id": t.Name, "inSpi": 4096 + i,
			"lastConnected": float64(st.now.Add(-time.Hour).UnixMilli()), "lastDownReason": downReason, "macAddress": d.MAC,
			"mode": "IKE", "mtu": 1400, "natEnabled": false, "nextReKey": 3600, "outSpi": 8192 + i,
			"peerType": "VPNC", "sourceIpAddress": orDefault(t.Source, "0.0.0.0"), "status": orDefault(t.Status, "Up"),
			"throughput": map[string]any{"received": 0, "sent": 0}, "tunnelName": t.Name, "tunnelType": orDefault(t.Type, "WAN"),
			"type": "network-monitoring/gateway-tunnel", "uplinkName": orDefault(t.Uplink, "wan1"), "uptime": "0",
			"usage": map[string]any{"received": 0, "sent": 0, "total": 0}, "vlanId": 1, "vni": 0,
		}
		if t.Status == "Up" {
			obj["uptime"] = "86400"
			obj["throughput"] = map[string]any{"received": 1200000, "sent": 800000}
		} else {
			obj["lastConnected"] = float64(st.now.Add(-40 * time.Minute).UnixMilli())
		}
		raw, _ := marshal(obj)
		items = append(items, item{key: t.Name, obj: obj, raw: raw})
	}
	return rq.serveList(w, st, listSpec{items: nonNil(items), cursor: true, defLimit: 100, maxLimit: 1000})
}

func nonNil(items []item) []item {
	if items == nil {
		return []item{}
	}
	return items
}

func tunnelHealth(kind string) handler {
	return func(w http.ResponseWriter, rq *request, st *state) *apiError {
		d, err := st.device(rq, "GATEWAY")
		if err != nil {
			return err
		}
		var good, poor int
		for _, t := range d.Tunnels {
			if orDefault(t.Type, "WAN") != kind {
				continue
			}
			if t.Status == "Up" {
				good++
			} else {
				poor++
			}
		}
		out := map[string]any{"id": d.Serial, "type": "network-monitoring/tunnel-health", "encapsulation": "IPSec",
			"tunnelHealth": map[string]any{"good": good, "fair": 0, "poor": poor}}
		if kind == "WAN" {
			out["health"], out["healthReasons"] = "Good", "TUNNEL_STATUS"
			if poor > 0 {
				out["health"], out["healthReasons"] = "Poor", "TUNNEL_STATUS"
			}
		}
		writeJSON(w, 200, out)
		return nil
	}
}

func clients(w http.ResponseWriter, rq *request, st *state) *apiError {
	siteID, siteName, serial := rq.query.Get("site-id"), rq.query.Get("site-name"), rq.query.Get("serial-number")
	if (rq.query.Get("start-at") == "") != (rq.query.Get("end-at") == "") {
		// Central accepts either alone; both are only validated as timestamps.
	}
	for _, p := range []string{"start-at", "end-at"} {
		if v := rq.query.Get(p); v != "" {
			if _, err := time.Parse(time.RFC3339Nano, v); err != nil {
				return badRequest("Invalid value for %s: %q is not an RFC 3339 timestamp", p, v)
			}
		}
	}
	ls := listSpec{view: "clients", cursor: true, defLimit: 100, maxLimit: 1000, defaultFilter: "status eq 'Connected'"}
	if siteID != "" || siteName != "" || serial != "" {
		ls.matchKey = siteID + "\x00" + siteName + "\x00" + serial
		ls.match = func(it *item) bool {
			if siteID != "" {
				if v, _ := it.get("siteId"); v != siteID {
					return false
				}
			}
			if siteName != "" {
				if v, _ := it.get("siteName"); !strings.EqualFold(v, siteName) {
					return false
				}
			}
			if serial != "" {
				if v, _ := it.get("connectedDeviceSerial"); v != serial {
					return false
				}
			}
			return true
		}
	}
	return rq.serveList(w, st, ls)
}

func clientDetail(w http.ResponseWriter, rq *request, st *state) *apiError {
	mac := rq.param("mac-address")
	if !validMAC(mac) {
		return badRequest("Invalid MAC address: %q", mac)
	}
	return rq.serveItem(w, st, "clients", mac)
}

func validMAC(s string) bool {
	if len(s) != 17 {
		return false
	}
	for i := 0; i < 17; i++ {
		c := s[i]
		if i%3 == 2 {
			if c != ':' && c != '-' {
				return false
			}
			continue
		}
		if !strings.ContainsRune("0123456789abcdefABCDEF", rune(c)) {
			return false
		}
	}
	return true
}

func wlans(w http.ResponseWriter, rq *request, st *state) *apiError {
	siteID, serial := rq.query.Get("site-id"), rq.query.Get("serial-number")
	if serial != "" {
		d, ok := st.dev[serial]
		if !ok {
			return notFound("Resource not found for the given input.")
		}
		siteID = d.Site
	}
	ls := listSpec{view: "wlans", cursor: true, defLimit: 20, maxLimit: 1000}
	if siteID != "" {
		ls.matchKey = siteID
		ls.match = func(it *item) bool {
			s, _ := it.get("sites")
			return s == "" || contains(strings.Split(s, ","), siteID)
		}
	}
	return rq.serveList(w, st, ls)
}

func wlanDetail(w http.ResponseWriter, rq *request, st *state) *apiError {
	it := st.view("wlans").find(rq.param("wlan-name"))
	if it == nil {
		return notFound("Resource not found for the given input.")
	}
	m := cloneJSON(it.obj).(map[string]any)
	n := 0
	for _, c := range st.clients {
		if c.WLAN == it.key && c.Status == "Connected" {
			n++
		}
	}
	m["clientCount"] = n
	writeJSON(w, 200, m)
	return nil
}

func wlanTrend(w http.ResponseWriter, rq *request, st *state) *apiError {
	it := st.view("wlans").find(rq.param("wlan-name"))
	if it == nil {
		return notFound("Resource not found for the given input.")
	}
	from, to, err := rq.trendWindow(st)
	if err != nil {
		return err
	}
	writeJSON(w, 200, st.trendBody(it.key, "throughput", []string{"tx", "rx"}, 40, from, to, false))
	return nil
}

func patchDevice(w http.ResponseWriter, rq *request, st *state) *apiError {
	d, err := st.device(rq, "")
	if err != nil {
		return err
	}
	var body map[string]any
	if json.Unmarshal(rq.body, &body) != nil {
		return badRequest("Invalid JSON body")
	}
	if n, ok := body["notes"].(string); ok {
		d.Notes = n
	}
	st.rebuild()
	writeRaw(w, 200, st.view("devices").find(d.Serial).raw)
	return nil
}

func alerts(w http.ResponseWriter, rq *request, st *state) *apiError {
	return rq.serveList(w, st, listSpec{view: "alerts", cursor: true, defLimit: 20, maxLimit: 100})
}

func global(w http.ResponseWriter, rq *request, st *state) *apiError {
	writeJSON(w, 200, map[string]any{"id": st.fx.GlobalScopeID, "scopeId": st.fx.GlobalScopeID, "type": "network-config/global"})
	return nil
}

func configHealthDevices(w http.ResponseWriter, rq *request, st *state) *apiError {
	search := strings.ToLower(rq.query.Get("search"))
	ls := listSpec{view: "config-health", key: "devices", defLimit: 100, maxLimit: 1000}
	if search != "" {
		ls.matchKey = search
		ls.match = func(it *item) bool { return bytes.Contains(bytes.ToLower(it.raw), []byte(search)) }
	}
	return rq.serveList(w, st, ls)
}

func activeIssue(w http.ResponseWriter, rq *request, st *state) *apiError {
	serial := rq.query.Get("serial")
	if _, ok := st.dev[serial]; !ok {
		return notFound("Resource not found for the given input.")
	}
	out := map[string]any{"configPullFailures": []any{}, "configPushFailures": []any{}, "filteredConfig": []any{}, "invalidConfig": []any{}}
	if h := st.health[serial]; h != nil {
		for i, is := range h.Issues {
			id := fmt.Sprintf("%s-%d", serial, i+1)
			ts := st.ts(st.now.Add(-48 * time.Hour))
			switch is.Type {
			case "CONFIG_PUSH_FAILURES":
				out["configPushFailures"] = append(out["configPushFailures"].([]any), map[string]any{"id": id, "issue": is.Description, "recommendedAction": is.Action, "timestamp": ts})
			case "CONFIG_PULL_FAILURES":
				out["configPullFailures"] = append(out["configPullFailures"].([]any), map[string]any{"id": id, "issue": is.Description, "issueType": is.Type, "recommendedAction": is.Action, "timestamp": ts})
			default:
				k := "invalidConfig"
				if is.Type == "FILTERED_CONFIG" {
					k = "filteredConfig"
				}
				out[k] = append(out[k].([]any), map[string]any{"id": id, "assignedScope": serial, "assignedScopeType": "SCOPE_TYPE_DEVICE",
					"issueCategory": is.Type, "issueDescription": is.Description, "profileName": is.Profile, "profileType": is.ProfileType,
					"recommendedAction": is.Action, "timestamp": ts})
			}
		}
	}
	writeJSON(w, 200, out)
	return nil
}

func resync(w http.ResponseWriter, rq *request, st *state) *apiError {
	var body struct {
		Serials []string `json:"serials"`
	}
	if json.Unmarshal(rq.body, &body) != nil || len(body.Serials) == 0 {
		return badRequest("Body must be {\"serials\": [...]} with 1 to 50 serial numbers")
	}
	if len(body.Serials) > 50 {
		return badRequest("At most 50 serial numbers per request")
	}
	for _, s := range body.Serials {
		if _, ok := st.dev[s]; !ok {
			return notFound("Resource not found for the given input. Unknown serial %s", s)
		}
	}
	for _, s := range body.Serials {
		if h := st.health[s]; h != nil {
			h.Status, h.Issues = "SYNCHRONIZED", nil
		}
	}
	st.rebuild()
	writeJSON(w, 200, map[string]any{"message": fmt.Sprintf("Resync triggered for %d device(s)", len(body.Serials))})
	return nil
}
