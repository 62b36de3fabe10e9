package fakecentral

import (
	"fmt"
	"net/http"
	"strconv"
	"strings"
)

// Radios, BSSIDs and switch interfaces are derived from the devices, WLANs
// and clients, like every other view.

func (st *state) radioItems(d *Device) []map[string]any {
	s := st.site(d.Site)
	status := "UP"
	if d.Status == "OFFLINE" {
		status = "DOWN"
	}
	var out []map[string]any
	for i, r := range []struct {
		band, rtype, channel, bw string
		util                     int
	}{{"2.4 GHz", "802.11ax", "6", "20 MHz", 20 + d.CPU/3}, {"5 GHz", "802.11ax", "36", "80 MHz", 20 + d.CPU}} {
		if r.util > 95 {
			r.util = 95
		}
		clients := 0
		for _, c := range st.clients {
			if c.Device == d.Serial && c.Status == "Connected" && (strings.HasPrefix(c.Band, "2.4") == (i == 0)) {
				clients++
			}
		}
		if status == "DOWN" {
			r.util, clients = 0, 0
		}
		out = append(out, map[string]any{
			"band": r.band, "bandwidth": r.bw, "channel": r.channel, "channelUtilization": strconv.Itoa(r.util),
			"clientCount": clients, "deviceName": d.Name, "id": fmt.Sprintf("%s-%d", d.Serial, i), "macAddress": bssidOf(d.MAC, i*8),
			"mode": "Access", "noiseFloor": "-95", "power": "18", "radioNumber": i, "radioType": r.rtype,
			"serialNumber": d.Serial, "siteId": d.Site, "siteName": s.Name, "status": status, "type": "network-monitoring/radio",
		})
	}
	return out
}

func radios(w http.ResponseWriter, rq *request, st *state) *apiError {
	return rq.serveList(w, st, listSpec{view: "radios", cursor: true, defLimit: 20, maxLimit: 1000})
}

func apRadios(w http.ResponseWriter, rq *request, st *state) *apiError {
	d, err := st.device(rq, "ACCESS_POINT")
	if err != nil {
		return err
	}
	rs := st.radioItems(d)
	items := make([]any, 0, len(rs))
	for _, r := range rs {
		delete(r, "deviceName")
		delete(r, "serialNumber")
		delete(r, "siteName")
		delete(r, "radioType")
		items = append(items, r)
	}
	writeJSON(w, 200, map[string]any{"count": len(items), "items": items, "total": len(items)})
	return nil
}

func bssids(w http.ResponseWriter, rq *request, st *state) *apiError {
	return rq.serveList(w, st, listSpec{view: "bssids", cursor: true, defLimit: 20, maxLimit: 1000})
}

func (st *state) bssidItems(d *Device) []map[string]any {
	var out []map[string]any
	for _, wl := range st.wlansAt(d.Site) {
		idx := st.wlanIndex(wl.Name)
		n := 0
		for _, c := range st.clients {
			if c.Device == d.Serial && c.WLAN == wl.Name && c.Status == "Connected" {
				n++
			}
		}
		b := bssidOf(d.MAC, idx)
		m := map[string]any{"bssid": b, "clientCount": n, "deviceName": d.Name, "id": b, "macAddress": d.MAC,
			"radioMacAddress": bssidOf(d.MAC, 0), "radioNumber": 1, "serialNumber": d.Serial, "siteId": d.Site,
			"siteName": st.site(d.Site).Name, "type": "network-monitoring/bssid", "wlanName": wl.Name}
		if d.Cluster != "" {
			m["clusterId"] = numericID("cluster", d.Cluster)
		}
		out = append(out, m)
	}
	return out
}

// switchInterfaces lists 24 access ports plus an uplink: a port is up when a
// client is on it; a port named in an active config issue carries the error.
func switchInterfaces(w http.ResponseWriter, rq *request, st *state) *apiError {
	d, err := st.device(rq, "SWITCH")
	if err != nil {
		return err
	}
	onPort := map[string]*Client{}
	for _, c := range st.clients {
		if c.Device == d.Serial && c.Port != "" {
			onPort[c.Port] = c
		}
	}
	issue := map[string]string{}
	if h := st.health[d.Serial]; h != nil {
		for _, is := range h.Issues {
			for _, f := range strings.Fields(is.Description) {
				if strings.HasPrefix(f, "1/1/") {
					issue[f] = is.Description
				}
			}
		}
	}
	var items []item
	for i := 1; i <= 24; i++ {
		name := fmt.Sprintf("1/1/%d", i)
		up := "Down"
		m := map[string]any{"adminStatus": "Up", "id": name, "index": i, "name": name, "serialNumber": d.Serial,
			"speed": 1000.0, "type": "network-monitoring/switch-interface", "vlanMode": "access", "uplink": false,
			"duplex": "full", "connector": "RJ45", "poeStatus": "Delivering", "nativeVlan": 1, "mtu": 1500}
		if c, ok := onPort[name]; ok {
			up = "Up"
			if v, err := strconv.Atoi(c.VLAN); err == nil {
				m["nativeVlan"] = v
			}
			m["neighbour"] = c.Name
			m["neighbourType"] = "Client"
		}
		if i == 24 {
			up, m["uplink"], m["vlanMode"] = "Up", true, "trunk"
			m["poeStatus"] = "Disabled"
		}
		if desc, ok := issue[name]; ok {
			m["errorReason"] = desc
			m["portError"] = []any{"CONFIG_ERROR"}
		}
		if d.Status == "OFFLINE" {
			up = "Down"
		}
		m["operStatus"], m["status"] = up, up
		raw, _ := marshal(m)
		items = append(items, item{key: name, obj: m, raw: raw})
	}
	return rq.serveList(w, st, listSpec{items: items, defLimit: 100, maxLimit: 1000, offsetString: true})
}
