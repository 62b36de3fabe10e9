package fakecentral

import (
	"fmt"
	"hash/fnv"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"
)

// item is one entity as an endpoint shows it: the response object, its
// encoded bytes (encoded once per state change, so list pages are cheap), and
// hidden fields that filters and query parameters may use but the response
// does not carry.
type item struct {
	key    string
	obj    map[string]any
	raw    []byte
	hidden map[string]string
}

func (it *item) get(field string) (string, bool) {
	if v, ok := it.obj[field]; ok && v != nil {
		switch x := v.(type) {
		case string:
			return x, true
		case int:
			return strconv.Itoa(x), true
		case int64:
			return strconv.FormatInt(x, 10), true
		case float64:
			return strconv.FormatFloat(x, 'f', -1, 64), true
		case bool:
			return strconv.FormatBool(x), true
		}
	}
	v, ok := it.hidden[field]
	return v, ok
}

type view struct {
	items []item
	index map[string]int // key -> position
}

func (v *view) find(key string) *item {
	if i, ok := v.index[strings.ToLower(key)]; ok {
		return &v.items[i]
	}
	return nil
}

// state is the per-run copy of a fixture. Handlers read it under the
// Central's read lock and write it under the write lock; every write ends
// with rebuild so the views stay derived from the same entities.
type state struct {
	fx       *Fixture
	now      time.Time
	sites    []*Site
	siteByID map[string]*Site
	devices  []*Device
	dev      map[string]*Device
	clients  []*Client
	client   map[string]*Client
	wlans    []*WLAN
	alerts   []*Alert
	events   []*Event
	firmware map[string]*Firmware
	health   map[string]*ConfigHealth
	config   map[string]*configColl
	tasks    map[string]*task
	taskSeq  int
	views    map[string]*view
	selCache *sync.Map // list selections by view and query; replaced on rebuild
}

func newState(fx *Fixture) *state {
	st := &state{fx: fx, now: fx.Now(), siteByID: map[string]*Site{}, dev: map[string]*Device{}, client: map[string]*Client{},
		firmware: map[string]*Firmware{}, health: map[string]*ConfigHealth{}, config: map[string]*configColl{}, tasks: map[string]*task{}}
	for _, s := range fx.Sites {
		s := s
		st.sites = append(st.sites, &s)
		st.siteByID[s.ID] = &s
	}
	for _, d := range fx.Devices {
		d := d
		st.devices = append(st.devices, &d)
		st.dev[d.Serial] = &d
	}
	for _, c := range fx.Clients {
		c := c
		st.clients = append(st.clients, &c)
		st.client[strings.ToLower(c.MAC)] = &c
	}
	for _, w := range fx.WLANs {
		w := w
		st.wlans = append(st.wlans, &w)
	}
	for _, a := range fx.Alerts {
		a := a
		st.alerts = append(st.alerts, &a)
	}
	for _, e := range fx.Events {
		e := e
		st.events = append(st.events, &e)
	}
	for _, f := range fx.Firmware {
		f := f
		st.firmware[f.Serial] = &f
	}
	for _, h := range fx.ConfigHealth {
		h := h
		h.Issues = append([]ConfigIssue(nil), h.Issues...)
		st.health[h.Serial] = &h
	}
	st.seedConfig()
	if p := fx.pristine; p != nil {
		p.once.Do(func() { st.rebuild(); p.views, p.sel = st.views, st.selCache })
		st.views, st.selCache = p.views, p.sel
	} else {
		st.rebuild()
	}
	return st
}

func (st *state) ts(t time.Time) string { return t.UTC().Format("2006-01-02T15:04:05.000Z") }

func (st *state) site(id string) *Site {
	if s, ok := st.siteByID[id]; ok {
		return s
	}
	return &Site{ID: id}
}

// numericID maps a string to a stable numeric-string id (Central's scope ids
// are numeric strings).
func numericID(prefix, s string) string {
	h := fnv.New64a()
	h.Write([]byte(prefix + "|" + s))
	return strconv.FormatUint(3_000_000_000+h.Sum64()%1_000_000_000, 10)
}

func put(m map[string]any, k string, v string) {
	if v != "" {
		m[k] = v
	}
}

func deviceHealth(d *Device) string {
	switch {
	case d.Status == "OFFLINE":
		return "Poor"
	case d.CPU >= 60 || d.Memory >= 80:
		return "Fair"
	}
	return "Good"
}

func clientHealth(c *Client) string {
	switch {
	case c.Status == "Failed":
		return "Poor"
	case c.Type == "Wireless" && c.SNR > 0 && c.SNR < 20:
		return "Fair"
	}
	return "Good"
}

func groups(poor, fair, good int) map[string]any {
	return map[string]any{"groups": []any{
		map[string]any{"name": "Poor", "value": poor},
		map[string]any{"name": "Fair", "value": fair},
		map[string]any{"name": "Good", "value": good},
	}}
}

func (st *state) lastSeen(d *Device) time.Time {
	if d.Status == "OFFLINE" {
		return st.fx.stamp(d.LastSeen, time.Hour)
	}
	return st.now
}

// ---- projections (field names and types from the OpenAPI definitions) ----

func (st *state) inventoryItem(d *Device) map[string]any {
	s := st.site(d.Site)
	m := map[string]any{
		"deviceName": d.Name, "deviceType": d.Type, "id": d.Serial, "macAddress": d.MAC, "serialNumber": d.Serial,
		"siteId": d.Site, "status": d.Status, "type": "network-monitoring/device-inventory",
		"model": d.Model, "partNumber": d.PartNumber, "isProvisioned": "Yes", "scopeId": numericID("dev", d.Serial),
	}
	if d.Unprovision {
		m["isProvisioned"] = "No"
	}
	put(m, "siteName", s.Name)
	put(m, "deployment", d.Deployment)
	put(m, "deviceFunction", d.Function)
	put(m, "firmwareVersion", d.Firmware)
	put(m, "ipv4", d.IPv4)
	put(m, "role", d.Role)
	if s.Group != "" {
		m["deviceGroupName"] = s.Group
		m["deviceGroupId"] = numericID("grp", s.Group)
	}
	m["tier"] = map[string]string{"ACCESS_POINT": "ADVANCED_AP", "SWITCH": "ADVANCED_SWITCH_6300", "GATEWAY": "ADVANCED_90XX_70XX"}[d.Type]
	return m
}

func (st *state) deviceItem(d *Device) map[string]any {
	s := st.site(d.Site)
	m := map[string]any{
		"deviceName": d.Name, "deviceType": d.Type, "id": d.Serial, "macAddress": d.MAC, "serialNumber": d.Serial,
		"siteId": d.Site, "status": d.Status, "type": "network-monitoring/device",
		"lastSeenAt": st.ts(st.lastSeen(d)), "uptimeInMillis": float64(d.UptimeSec * 1000),
	}
	put(m, "siteName", s.Name)
	put(m, "model", d.Model)
	put(m, "partNumber", d.PartNumber)
	put(m, "deployment", d.Deployment)
	put(m, "deviceFunction", d.Function)
	put(m, "firmwareVersion", d.Firmware)
	put(m, "ipv4", d.IPv4)
	put(m, "role", d.Role)
	put(m, "notes", d.Notes)
	put(m, "clusterName", d.Cluster)
	if h, ok := st.health[d.Serial]; ok {
		m["configStatus"] = h.Status
	}
	return m
}

func (st *state) clientCount(serial string) int {
	n := 0
	for _, c := range st.clients {
		if c.Device == serial && c.Status == "Connected" {
			n++
		}
	}
	return n
}

func (st *state) apItem(d *Device) map[string]any {
	s := st.site(d.Site)
	m := map[string]any{
		"deviceName": d.Name, "id": d.Serial, "macAddress": d.MAC, "serialNumber": d.Serial, "siteId": d.Site,
		"status": d.Status, "type": "network-monitoring/ap", "model": d.Model, "partNumber": d.PartNumber,
		"cpuUtilization": d.CPU, "memoryUtilization": d.Memory, "powerConsumption": d.Power,
		"clientCount": st.clientCount(d.Serial), "wlanCount": len(st.wlansAt(d.Site)),
		"lastSeenAt": st.ts(st.lastSeen(d)), "uptimeInMillis": float64(d.UptimeSec * 1000),
	}
	put(m, "siteName", s.Name)
	put(m, "deployment", d.Deployment)
	put(m, "deviceFunction", d.Function)
	put(m, "firmwareVersion", d.Firmware)
	put(m, "ipv4", d.IPv4)
	put(m, "role", d.Role)
	put(m, "lastRebootReason", d.RebootReason)
	if d.Cluster != "" {
		m["clusterName"] = d.Cluster
		m["clusterId"] = numericID("cluster", d.Cluster)
	}
	if s.Group != "" {
		m["deviceGroupName"] = s.Group
		m["deviceGroupId"] = numericID("grp", s.Group)
	}
	return m
}

func (st *state) switchItem(d *Device) map[string]any {
	s := st.site(d.Site)
	m := map[string]any{
		"deviceName": d.Name, "id": d.Serial, "macAddress": d.MAC, "serialNumber": d.Serial, "siteId": d.Site,
		"status": d.Status, "type": "network-monitoring/switch", "model": d.Model, "partNumber": d.PartNumber,
		"uptimeInMillis": float64(d.UptimeSec * 1000), "lastSeenAt": float64(st.lastSeen(d).UnixMilli()),
		"switchType":   "AOS-CX",
		"switchTrends": map[string]any{"cpuUtilization": d.CPU, "memoryUtilization": d.Memory, "serialNumber": d.Serial, "switchRole": d.Role},
	}
	put(m, "siteName", s.Name)
	put(m, "deployment", d.Deployment)
	put(m, "deviceFunction", d.Function)
	put(m, "firmwareVersion", d.Firmware)
	put(m, "ipv4", d.IPv4)
	return m
}

func (st *state) gatewayItem(d *Device) map[string]any {
	s := st.site(d.Site)
	status := "Online"
	if d.Status == "OFFLINE" {
		status = "Offline"
	}
	fn := d.Function
	if fn == "" {
		fn = "Branch Gateway"
	}
	mode := "Standalone"
	if d.Deployment == "Cluster" {
		mode = "Cluster"
	}
	role := d.Role
	if role != "Isoleader" && role != "Leader" && role != "Member" {
		role = "Leader"
	}
	return map[string]any{
		"clusterName": d.Cluster, "cpuUtilization": float64(d.CPU), "deviceFunction": fn, "deviceName": d.Name,
		"firmwareVersion": d.Firmware, "id": d.Serial, "ipAddress": orDefault(d.IPv4, "0.0.0.0"), "macAddress": d.MAC,
		"macRange": d.MAC, "memoryUtilization": float64(d.Memory), "mode": mode, "model": d.Model,
		"rebootReason": orDefault(d.RebootReason, "User reboot"), "role": role, "serialNumber": d.Serial, "siteId": d.Site,
		"siteName": s.Name, "status": status, "type": "network-monitoring/gateway", "uptimeInMillis": float64(d.UptimeSec * 1000),
	}
}

func orDefault(s, def string) string {
	if s == "" {
		return def
	}
	return s
}

func bssidOf(apMAC string, wlanIdx int) string {
	if len(apMAC) < 17 {
		return apMAC
	}
	return apMAC[:15] + fmt.Sprintf("%x%d", 1, wlanIdx%10)
}

func (st *state) wlanIndex(name string) int {
	for i, w := range st.wlans {
		if w.Name == name {
			return i
		}
	}
	return 0
}

func (st *state) clientItem(c *Client) map[string]any {
	d := st.dev[c.Device]
	s := st.site(d.Site)
	connType := map[string]string{"ACCESS_POINT": "AP", "SWITCH": "SWITCH", "GATEWAY": "GATEWAY"}[d.Type]
	m := map[string]any{
		"id": c.MAC, "macAddress": c.MAC, "type": "network-monitoring/client", "status": c.Status,
		"clientConnectionType": c.Type, "connectedDeviceSerial": d.Serial, "connectedDeviceType": connType,
		"connectedTo": d.Name, "siteId": d.Site, "siteName": s.Name,
		"connectedAt": st.ts(st.fx.stamp(c.ConnectedAt, time.Hour)), "lastSeenAt": st.ts(st.now),
	}
	put(m, "clientName", c.Name)
	put(m, "hostName", c.HostName)
	put(m, "clientOperatingSystem", c.OS)
	put(m, "clientVendor", c.Vendor)
	put(m, "clientManufacturer", c.Vendor)
	put(m, "clientCategory", c.Category)
	put(m, "ipv4", c.IPv4)
	put(m, "userName", c.User)
	put(m, "authenticationType", c.Auth)
	put(m, "role", c.Role)
	put(m, "vlanId", c.VLAN)
	if c.Status == "Failed" {
		m["lastSeenAt"] = st.ts(st.fx.stamp(c.ConnectedAt, time.Hour))
	}
	if c.Type == "Wireless" {
		put(m, "wlanName", c.WLAN)
		put(m, "wirelessBand", c.Band)
		put(m, "wirelessChannel", c.Channel)
		if c.SNR > 0 {
			m["snr"] = c.SNR
		}
		m["bssid"] = bssidOf(d.MAC, st.wlanIndex(c.WLAN))
		m["radioMacAddress"] = bssidOf(d.MAC, 0)
		for _, w := range st.wlans {
			if w.Name == c.WLAN {
				sec, km := wirelessSecurity(w.Security)
				m["wirelessSecurity"], m["keyManagement"] = sec, km
			}
		}
		m["phyType"] = map[string]string{"6 GHz": "802.11ax", "5 GHz": "802.11ax", "2.4 GHz": "802.11n"}[c.Band]
		if m["phyType"] == "" {
			delete(m, "phyType")
		}
	} else {
		put(m, "port", c.Port)
	}
	return m
}

func wirelessSecurity(sec string) (string, string) {
	switch strings.ToLower(sec) {
	case "wpa3-enterprise":
		return "WPA3-Enterprise", "WPA3-Enterprise (CCM 128)"
	case "wpa2-enterprise":
		return "WPA2-Enterprise", "WPA2-Enterprise"
	case "wpa2-personal":
		return "WPA2-Personal", "WPA2-PSK"
	case "wpa3-personal", "wpa3-sae":
		return "WPA3-Personal", "WPA3-SAE"
	}
	return "Open", "None"
}

func (st *state) wlansAt(siteID string) []*WLAN {
	var out []*WLAN
	for _, w := range st.wlans {
		if len(w.Sites) == 0 || contains(w.Sites, siteID) {
			out = append(out, w)
		}
	}
	return out
}

func (st *state) wlanItem(w *WLAN) map[string]any {
	sec, _ := wirelessSecurity(w.Security)
	m := map[string]any{"id": w.Name, "wlanName": w.Name, "type": "network-monitoring/wlan", "securityLevel": orDefault(w.SecurityLevel, "Open"),
		"security": sec, "status": orDefault(w.Status, "ENABLED")}
	put(m, "band", w.Band)
	put(m, "vlan", w.VLAN)
	return m
}

func (st *state) alertItem(a *Alert) map[string]any {
	created := st.ts(st.fx.stamp(a.CreatedAt, time.Hour))
	m := map[string]any{
		"category": a.Category, "clearedReason": a.ClearedReason, "createdAt": created, "deviceType": a.DeviceType,
		"id": a.ID, "key": a.ID, "name": a.Name, "priority": a.Priority, "severity": a.Severity, "status": a.Status,
		"summary": a.Summary, "type": "network-notifications/alert", "typeId": a.TypeID, "updatedAt": created, "updatedBy": "system",
	}
	return m
}

func (st *state) eventItem(e *Event) map[string]any {
	m := map[string]any{
		"bssid": e.BSSID, "category": e.Category, "clientMacAddress": e.ClientMAC, "deviceMacAddress": "",
		"eventId": e.Code, "eventIdentifier": e.ID, "eventName": e.Name, "reason": e.Reason,
		"serialNumber": e.Serial, "severity": orDefault(e.Severity, "neutral"), "sourceName": "", "sourceType": e.SourceType,
		"stackId": "", "timeAt": st.ts(st.fx.stamp(e.Time, time.Hour)), "description": e.Description,
	}
	if d, ok := st.dev[e.Serial]; ok {
		m["deviceMacAddress"] = d.MAC
		m["sourceName"] = d.Name
	} else {
		m["sourceName"] = st.site(e.Site).Name
	}
	if e.ClientMAC != "" && (e.SourceType == "Wireless Client" || e.SourceType == "Wired Client") {
		m["sourceName"] = e.ClientMAC
		if c, ok := st.client[strings.ToLower(e.ClientMAC)]; ok && c.Name != "" {
			m["sourceName"] = c.Name
		}
	}
	return m
}

func (st *state) firmwareItem(f *Firmware) map[string]any {
	d := st.dev[f.Serial]
	if d == nil {
		d = &Device{Serial: f.Serial}
	}
	return map[string]any{
		"deviceName": d.Name, "deviceType": orDefault(d.Type, "ACCESS_POINT"), "firmwareClassification": f.Classification,
		"firmwareVersion": d.Firmware, "id": f.Serial, "lastUpgradedTimeAt": st.ts(st.fx.stamp(f.LastUpgradedAt, 30*24*time.Hour)),
		"recommendedVersion": f.Recommended, "serialNumber": f.Serial, "siteId": d.Site, "siteName": st.site(d.Site).Name,
		"type": "network-services/firmware-details", "upgradeStatus": f.UpgradeStatus,
	}
}

func (st *state) configHealthItem(d *Device) map[string]any {
	h := st.health[d.Serial]
	status := "SYNCHRONIZED"
	var issues []any
	top := ""
	if h != nil {
		status = h.Status
		seen := map[string]bool{}
		for _, is := range h.Issues {
			if !seen[is.Type] {
				issues = append(issues, map[string]any{"activeIssue": is.Type})
				seen[is.Type] = true
			}
			if top == "" {
				top = is.Type
			}
		}
	}
	if issues == nil {
		issues = []any{}
	}
	s := st.site(d.Site)
	m := map[string]any{
		"activeIssues": issues, "configStatus": status, "deviceFunction": d.Function, "deviceGroupName": s.Group,
		"filteredConfig": false, "lastConfigTimestamp": st.ts(st.now.Add(-24 * time.Hour)), "model": d.Model, "name": d.Name,
		"role": d.Role, "serial": d.Serial, "siteName": s.Name, "type": d.Type, "deployment": d.Deployment,
	}
	if top != "" {
		m["topPriorityIssue"] = top
		m["recommendedAction"] = h.Issues[0].Action
	}
	return m
}

func (st *state) siteHealthItem(s *Site) map[string]any {
	var dp, df, dg, cp, cf, cg, devs, clients int
	for _, d := range st.devices {
		if d.Site != s.ID {
			continue
		}
		devs++
		switch deviceHealth(d) {
		case "Poor":
			dp++
		case "Fair":
			df++
		default:
			dg++
		}
	}
	for _, c := range st.clients {
		if st.dev[c.Device].Site != s.ID {
			continue
		}
		clients++
		switch clientHealth(c) {
		case "Poor":
			cp++
		case "Fair":
			cf++
		default:
			cg++
		}
	}
	sev := map[string]int{}
	total := 0
	for _, a := range st.alerts {
		if a.Site == s.ID && a.Status == "Active" {
			sev[a.Severity]++
			total++
		}
	}
	var ag []any
	for _, n := range []string{"Critical", "Major", "Minor", "Info"} {
		ag = append(ag, map[string]any{"name": n, "count": sev[n]})
	}
	overall := "Good"
	switch {
	case dp > 0 || cp*10 > clients:
		overall = "Poor"
	case df > 0 || cf > 0 || cp > 0:
		overall = "Fair"
	}
	hp, hf, hg := 0, 0, 0
	switch overall {
	case "Poor":
		hp = 1
	case "Fair":
		hf = 1
	default:
		hg = 1
	}
	var reasons []any
	if dp > 0 {
		reasons = append(reasons, map[string]any{"data": map[string]any{"count": dp}, "health": "Poor", "reason": "DEVICES_OFFLINE"})
	}
	if cp > 0 {
		reasons = append(reasons, map[string]any{"data": map[string]any{"count": cp}, "health": "Poor", "reason": "CLIENTS_FAILED"})
	}
	if reasons == nil {
		reasons = []any{}
	}
	return map[string]any{
		"id": s.ID, "siteName": s.Name, "type": "network-monitoring/site-health",
		"address":  map[string]any{"address": s.Address, "city": s.City, "state": s.State, "country": s.Country, "zipCode": s.ZipCode},
		"location": map[string]any{"latitude": s.Latitude, "longitude": s.Longitude},
		"alerts":   map[string]any{"groups": ag, "totalCount": total},
		"clients":  map[string]any{"count": clients, "health": groups(cp, cf, cg)},
		"devices":  map[string]any{"count": devs, "health": groups(dp, df, dg)},
		"health":   groups(hp, hf, hg),
		"reasons":  reasons,
	}
}

func (st *state) deviceTypeHealth(match func(*Device) bool) []any {
	var out []any
	for _, t := range []struct{ name, typ string }{{"Access Points", "ACCESS_POINT"}, {"Switches", "SWITCH"}, {"Gateways", "GATEWAY"}} {
		var p, f, g int
		for _, d := range st.devices {
			if d.Type != t.typ || !match(d) {
				continue
			}
			switch deviceHealth(d) {
			case "Poor":
				p++
			case "Fair":
				f++
			default:
				g++
			}
		}
		out = append(out, map[string]any{"name": t.name, "health": groups(p, f, g)})
	}
	return out
}

func (st *state) clientTypeHealth(match func(*Client) bool) []any {
	var out []any
	for _, t := range []string{"Wireless", "Wired"} {
		var p, f, g int
		for _, c := range st.clients {
			if c.Type != t || !match(c) {
				continue
			}
			switch clientHealth(c) {
			case "Poor":
				p++
			case "Fair":
				f++
			default:
				g++
			}
		}
		out = append(out, map[string]any{"name": t, "health": groups(p, f, g)})
	}
	return out
}

// rebuild derives every view from the entities.
func (st *state) rebuild() {
	v := map[string]*view{}
	add := func(name, key string, obj map[string]any, hidden map[string]string) {
		vw := v[name]
		if vw == nil {
			vw = &view{index: map[string]int{}}
			v[name] = vw
		}
		raw, _ := marshal(obj)
		vw.index[strings.ToLower(key)] = len(vw.items)
		vw.items = append(vw.items, item{key: key, obj: obj, raw: raw, hidden: hidden})
	}
	for _, d := range st.devices {
		h := map[string]string{"siteId": d.Site, "siteName": st.site(d.Site).Name}
		add("device-inventory", d.Serial, st.inventoryItem(d), h)
		add("devices", d.Serial, st.deviceItem(d), h)
		switch d.Type {
		case "ACCESS_POINT":
			add("aps", d.Serial, st.apItem(d), h)
			for _, r := range st.radioItems(d) {
				add("radios", r["id"].(string), r, nil)
			}
			for _, b := range st.bssidItems(d) {
				add("bssids", b["id"].(string), b, nil)
			}
		case "SWITCH":
			add("switches", d.Serial, st.switchItem(d), h)
		case "GATEWAY":
			add("gateways", d.Serial, st.gatewayItem(d), h)
		}
		add("config-health", d.Serial, st.configHealthItem(d), map[string]string{"serialNumber": d.Serial})
	}
	for _, sw := range st.swarmItems() {
		delete(sw, "membersCount") // the detail's alone
		add("swarms", sw["clusterId"].(string), sw, nil)
	}
	for _, c := range st.clients {
		d := st.dev[c.Device]
		add("clients", c.MAC, st.clientItem(c), map[string]string{"serialNumber": d.Serial})
	}
	for _, w := range st.wlans {
		sites := strings.Join(w.Sites, ",")
		add("wlans", w.Name, st.wlanItem(w), map[string]string{"sites": sites})
	}
	for _, a := range st.alerts {
		add("alerts", a.ID, st.alertItem(a), map[string]string{"siteId": a.Site, "serialNumber": a.Serial})
	}
	for _, e := range st.events {
		add("events", e.ID, st.eventItem(e), map[string]string{"siteId": e.Site})
	}
	serials := make([]string, 0, len(st.firmware))
	for s := range st.firmware {
		serials = append(serials, s)
	}
	sort.Strings(serials)
	for _, s := range serials {
		add("firmware", s, st.firmwareItem(st.firmware[s]), nil)
	}
	for _, s := range st.sites {
		add("sites-health", s.ID, st.siteHealthItem(s), nil)
		s := s
		add("sites-device-health", s.ID, map[string]any{"id": s.ID, "siteName": s.Name, "type": "network-monitoring/site-device-health",
			"deviceTypes": st.deviceTypeHealth(func(d *Device) bool { return d.Site == s.ID })}, nil)
		add("sites-client-health", s.ID, map[string]any{"id": s.ID, "siteName": s.Name, "type": "network-monitoring/site-client-health",
			"clientTypes": st.clientTypeHealth(func(c *Client) bool { return st.dev[c.Device].Site == s.ID })}, nil)
		add("config-sites", s.ID, st.configSiteItem(s), nil)
	}
	groupsSeen := map[string]bool{}
	for _, s := range st.sites {
		if s.Group == "" || groupsSeen[s.Group] {
			continue
		}
		groupsSeen[s.Group] = true
		n := 0
		for _, d := range st.devices {
			if st.site(d.Site).Group == s.Group {
				n++
			}
		}
		add("device-groups", s.Group, map[string]any{"deviceCount": strconv.Itoa(n), "id": numericID("grp", s.Group), "scopeId": numericID("grp", s.Group), "scopeName": s.Group, "type": "network-config/device-group"}, nil)
	}
	st.views = v
	st.selCache = &sync.Map{}
}

func (st *state) configSiteItem(s *Site) map[string]any {
	return map[string]any{
		"id": s.ID, "scopeId": s.ID, "scopeName": s.Name, "siteName": s.Name, "name": s.Name, "type": "network-config/site",
		"address": s.Address, "city": s.City, "state": s.State, "country": s.Country, "zipcode": s.ZipCode,
		"timezone": map[string]any{"timezoneId": orDefault(s.Timezone, "UTC"), "timezoneName": orDefault(s.Timezone, "UTC"), "rawOffset": 0},
	}
}

func (st *state) view(name string) *view {
	if v, ok := st.views[name]; ok {
		return v
	}
	return &view{index: map[string]int{}}
}
