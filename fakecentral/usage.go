package fakecentral

import (
	"cmp"
	"maps"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"time"
)

// Usage, top-N lists, the clients trend and mobility trails: derived from
// the fixture's clients, so the top talker of /clients-topn-usage is a
// client /clients lists, an AP's usage is its clients' sum, and the
// clients trend counts the clients /clients has. Shapes are the
// OpenAPI's (mrt/monitoring: GetTopNClientsByUsageResponse,
// TopAccessPointsResponse, GetClientsTrends, GetClientMobilityDetails).

// clientUsage is a connected client's bytes over the window: stable per
// client (seeded by its MAC), from 5 MB to about 4 GB; a failed client
// moved nothing.
func clientUsage(c *Client) int64 {
	if c.Status != "Connected" {
		return 0
	}
	return 5_000_000 + int64(seeded("usage", strings.ToLower(c.MAC))%4_000_000_000)
}

// scopedClients are the clients a site-id, site-name or serial-number
// query parameter selects (all when none is given).
func (rq *request) scopedClients(st *state) []*Client {
	siteID, siteName, serial := rq.query.Get("site-id"), rq.query.Get("site-name"), rq.query.Get("serial-number")
	var out []*Client
	for _, c := range st.clients {
		d := st.dev[c.Device]
		if d == nil {
			continue
		}
		if siteID != "" && d.Site != siteID || serial != "" && d.Serial != serial ||
			siteName != "" && !strings.EqualFold(st.site(d.Site).Name, siteName) {
			continue
		}
		out = append(out, c)
	}
	return out
}

// clientsTopNUsage ranks the scoped clients by usage (limit: the
// OpenAPI's 1 to 100, default 5).
func clientsTopNUsage(w http.ResponseWriter, rq *request, st *state) *apiError {
	limit, err := intParam(rq, "limit", 5, 1, 100)
	if err != nil {
		return err
	}
	cs := rq.scopedClients(st)
	slices.SortStableFunc(cs, func(a, b *Client) int {
		return cmp.Or(cmp.Compare(clientUsage(b), clientUsage(a)), strings.Compare(a.MAC, b.MAC))
	})
	items := []any{}
	for _, c := range cs {
		if len(items) == limit || clientUsage(c) == 0 {
			break
		}
		d := st.dev[c.Device]
		name := c.Name
		if name == "" {
			name = c.MAC
		}
		items = append(items, map[string]any{"id": c.MAC, "type": "network-monitoring/client-monitoring", "clientName": name,
			"macAddress": c.MAC, "usage": clientUsage(c), "clientConnectionType": c.Type, "siteId": d.Site, "siteName": st.site(d.Site).Name})
	}
	writeJSON(w, 200, map[string]any{"count": len(items), "items": items})
	return nil
}

// topAPs ranks the APs of the scoped clients by their clients' usage:
// wireless, wired (clients on an AP's ports) or both (limit: the
// OpenAPI's TopAPsLimit, 0 to 25, default 10).
func topAPs(kind string) handler {
	return func(w http.ResponseWriter, rq *request, st *state) *apiError {
		limit, err := intParam(rq, "limit", 10, 0, 25)
		if err != nil {
			return err
		}
		total := map[string]int64{}
		var aps []*Device
		for _, c := range rq.scopedClients(st) {
			d := st.dev[c.Device]
			if d.Type != "ACCESS_POINT" || kind == "wireless" && c.Type != "Wireless" || kind == "wired" && c.Type != "Wired" || clientUsage(c) == 0 {
				continue
			}
			if total[d.Serial] == 0 {
				aps = append(aps, d)
			}
			total[d.Serial] += clientUsage(c)
		}
		slices.SortStableFunc(aps, func(a, b *Device) int {
			return cmp.Or(cmp.Compare(total[b.Serial], total[a.Serial]), strings.Compare(a.Serial, b.Serial))
		})
		items := []any{}
		for _, d := range aps[:min(limit, len(aps))] {
			items = append(items, map[string]any{"id": d.Serial, "type": "network-monitoring/ap", "serialNumber": d.Serial,
				"deviceName": d.Name, "totalValue": float64(total[d.Serial]), "units": "Bytes"})
		}
		writeJSON(w, 200, map[string]any{"count": len(items), "items": items})
		return nil
	}
}

// trendGroups are the OpenAPI's group-by values of /clients-trend and what
// each groups the connected clients by.
var trendGroups = map[string]func(st *state, c *Client) string{
	"TYPE":  func(_ *state, c *Client) string { return c.Type },
	"ROLE":  func(_ *state, c *Client) string { return c.Role },
	"VLAN":  func(_ *state, c *Client) string { return c.VLAN },
	"WLAN":  func(_ *state, c *Client) string { return c.WLAN },
	"RADIO": func(_ *state, c *Client) string { return c.Band },
	"SECURITY": func(st *state, c *Client) string {
		for _, w := range st.wlans {
			if w.Name == c.WLAN {
				sec, _ := wirelessSecurity(w.Security)
				return sec
			}
		}
		return ""
	},
	"PROTOCOL": func(_ *state, c *Client) string {
		return map[string]string{"6 GHz": "802.11ax", "5 GHz": "802.11ax", "2.4 GHz": "802.11n"}[c.Band]
	},
}

// clientsTrend counts the scoped, connected clients over the window in
// 5-minute samples (3 hours past a day), grouped as group-by says (the
// OpenAPI's TYPE, the default, ROLE, VLAN, WLAN, RADIO, SECURITY,
// PROTOCOL; more than five groups fold into the top four and "Others", as
// it documents) and filtered by type (ALL, WIRELESS, WIRED). Every sample
// holds the fixture's count: it is a snapshot.
func clientsTrend(w http.ResponseWriter, rq *request, st *state) *apiError {
	from, to, err := rq.trendWindow(st)
	if err != nil {
		return err
	}
	groupBy := strings.ToUpper(cmp.Or(rq.query.Get("group-by"), "TYPE"))
	group := trendGroups[groupBy]
	if group == nil {
		return badRequest("Invalid value for group-by: %q (allowed TYPE, ROLE, VLAN, WLAN, RADIO, SECURITY, PROTOCOL)", rq.query.Get("group-by"))
	}
	typ := strings.ToUpper(cmp.Or(rq.query.Get("type"), "ALL"))
	if typ != "ALL" && typ != "WIRELESS" && typ != "WIRED" {
		return badRequest("Invalid value for type: %q (allowed ALL, WIRELESS, WIRED)", rq.query.Get("type"))
	}
	counts := map[string]int{}
	for _, c := range rq.scopedClients(st) {
		if c.Status != "Connected" || typ != "ALL" && !strings.EqualFold(c.Type, typ) {
			continue
		}
		if k := group(st, c); k != "" {
			counts[k]++
		}
	}
	keys := slices.Collect(maps.Keys(counts))
	slices.SortFunc(keys, func(a, b string) int { return cmp.Or(cmp.Compare(counts[b], counts[a]), strings.Compare(a, b)) })
	if len(keys) > 5 {
		for _, k := range keys[4:] {
			counts["Others"] += counts[k]
		}
		keys = append(keys[:4:4], "Others")
	}
	data := make([]any, len(keys))
	for i, k := range keys {
		data[i] = float64(counts[k])
	}
	step, interval := 5*time.Minute, "5 mins"
	if to.Sub(from) > 24*time.Hour {
		step, interval = 3*time.Hour, "3 hours"
	}
	samples := []any{}
	for t := from.Truncate(step); !t.After(to) && len(samples) < 2160; t = t.Add(step) {
		if !t.Before(from) {
			samples = append(samples, map[string]any{"timestamp": st.ts(t), "data": data})
		}
	}
	writeJSON(w, 200, map[string]any{"id": "clients-trend", "type": "network-monitoring/client-monitoring", "interval": interval, "keys": keys, "samples": samples})
	return nil
}

// mobilityTrail is a wireless client's roams: it joined its AP, when it
// connected, from the first other online AP of its site (fixture order);
// a client alone on its site's only AP, or wired, has not roamed.
func mobilityTrail(w http.ResponseWriter, rq *request, st *state) *apiError {
	mac := strings.ToLower(rq.param("mac-address"))
	if !validMAC(mac) {
		return badRequest("Invalid MAC address: %q", rq.param("mac-address"))
	}
	c := st.client[mac]
	if c == nil {
		return notFound("Client %s not found", mac)
	}
	items := []any{}
	d := st.dev[c.Device]
	if c.Type == "Wireless" && d != nil {
		var from *Device
		for _, o := range st.devices {
			if o.Type == "ACCESS_POINT" && o.Site == d.Site && o.Serial != d.Serial && o.Status == "ONLINE" {
				from = o
				break
			}
		}
		if from != nil {
			idx := st.wlanIndex(c.WLAN)
			items = append(items, map[string]any{"id": c.MAC, "type": "network-monitoring/client-monitoring",
				"sourceAp": from.Serial, "destinationAp": d.Serial, "fromBssid": bssidOf(from.MAC, idx), "toBssid": bssidOf(d.MAC, idx),
				"fromChannel": "1", "toChannel": c.Channel, "radioBand": c.Band, "wlanName": c.WLAN, "roamProtocol": "11r",
				"roamTime": strconv.Itoa(40 + int(seeded("roam", mac)%160)), "rssi": strconv.Itoa(-90 + c.SNR),
				"occurredAt": st.ts(st.fx.stamp(c.ConnectedAt, time.Hour))})
		}
	}
	writeJSON(w, 200, map[string]any{"count": len(items), "items": items, "total": len(items)})
	return nil
}
