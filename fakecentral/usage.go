package fakecentral

import (
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

func topLimit(rq *request, def, maxN int) (int, *apiError) {
	return intParam(rq, "limit", def, 1, maxN)
}

func clientsTopNUsage(w http.ResponseWriter, rq *request, st *state) *apiError {
	limit, err := topLimit(rq, 10, 100)
	if err != nil {
		return err
	}
	cs := rq.scopedClients(st)
	slices.SortStableFunc(cs, func(a, b *Client) int {
		if ua, ub := clientUsage(a), clientUsage(b); ua != ub {
			if ua > ub {
				return -1
			}
			return 1
		}
		return strings.Compare(a.MAC, b.MAC)
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

// topAPs ranks APs by their clients' usage: wireless, wired (clients on
// an AP's ports) or both.
func topAPs(kind string) handler {
	return func(w http.ResponseWriter, rq *request, st *state) *apiError {
		limit, err := topLimit(rq, 10, 100)
		if err != nil {
			return err
		}
		siteID, siteName := rq.query.Get("site-id"), rq.query.Get("site-name")
		total := map[string]int64{}
		for _, c := range st.clients {
			if kind == "wireless" && c.Type != "Wireless" || kind == "wired" && c.Type != "Wired" {
				continue
			}
			total[c.Device] += clientUsage(c)
		}
		var aps []*Device
		for _, d := range st.devices {
			if d.Type != "ACCESS_POINT" || siteID != "" && d.Site != siteID || siteName != "" && !strings.EqualFold(st.site(d.Site).Name, siteName) {
				continue
			}
			if total[d.Serial] > 0 {
				aps = append(aps, d)
			}
		}
		slices.SortStableFunc(aps, func(a, b *Device) int {
			if total[a.Serial] != total[b.Serial] {
				if total[a.Serial] > total[b.Serial] {
					return -1
				}
				return 1
			}
			return strings.Compare(a.Serial, b.Serial)
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

// clientsTrend counts the clients over the window in 5-minute samples
// (3 hours past a day): each sample holds the connected clients the
// fixture has, by connection type (group-by "type", the default) or by
// status. The count is the fixture's at every sample: it is a snapshot.
func clientsTrend(w http.ResponseWriter, rq *request, st *state) *apiError {
	from, to, err := rq.trendWindow(st)
	if err != nil {
		return err
	}
	cs := rq.scopedClients(st)
	keys := []string{"Wireless", "Wired"}
	count := func(c *Client, k string) bool { return c.Status == "Connected" && c.Type == k }
	switch g := strings.ToLower(rq.query.Get("group-by")); g {
	case "", "type", "connection-type", "client-connection-type":
	case "status":
		keys = []string{"Connected", "Failed"}
		count = func(c *Client, k string) bool { return c.Status == k }
	default:
		return badRequest("Invalid value for group-by: %q", rq.query.Get("group-by"))
	}
	data := make([]any, len(keys))
	for i, k := range keys {
		n := 0
		for _, c := range cs {
			if count(c, k) {
				n++
			}
		}
		data[i] = float64(n)
	}
	step, interval := 5*time.Minute, "5 mins"
	if to.Sub(from) > 24*time.Hour {
		step, interval = 3*time.Hour, "3 hours"
	}
	samples := []any{}
	for t := from.Truncate(step); !t.After(to) && len(samples) < 2160; t = t.Add(step) {
		if t.Before(from) {
			continue
		}
		samples = append(samples, map[string]any{"timestamp": st.ts(t), "data": data})
	}
	writeJSON(w, 200, map[string]any{"id": "clients-trend", "type": "network-monitoring/client-monitoring", "interval": interval, "keys": keys, "samples": samples})
	return nil
}

// mobilityTrail is a wireless client's roams: it joined its AP from the
// site's AP before it (by serial) when it connected; a client alone on its
// site's only AP, or wired, has not roamed.
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
			if o.Type == "ACCESS_POINT" && o.Site == d.Site && o.Serial != d.Serial && o.Status == "ONLINE" && (from == nil || o.Serial < d.Serial) {
				from = o
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
