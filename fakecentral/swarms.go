package fakecentral

import (
	"net/http"
	"sort"
)

// AP swarms (clusters) and gateway cluster members are derived from the
// devices' cluster names, like every other view: an AP's clusterId in /aps
// is the id /swarms lists and /swarms/{cluster-id} answers.

// swarmItems lists one swarm per AP cluster name, in name order. The
// conductor is the first ONLINE member in serial order (the first member
// when none is online).
func (st *state) swarmItems() []map[string]any {
	members := map[string][]*Device{}
	var names []string
	for _, d := range st.devices {
		if d.Type != "ACCESS_POINT" || d.Cluster == "" {
			continue
		}
		if _, ok := members[d.Cluster]; !ok {
			names = append(names, d.Cluster)
		}
		members[d.Cluster] = append(members[d.Cluster], d)
	}
	sort.Strings(names)
	out := make([]map[string]any, 0, len(names))
	for _, name := range names {
		ms := members[name]
		sort.Slice(ms, func(i, j int) bool { return ms[i].Serial < ms[j].Serial })
		c := ms[0]
		for _, d := range ms {
			if d.Status != "OFFLINE" {
				c = d
				break
			}
		}
		id := numericID("cluster", name)
		out = append(out, map[string]any{
			"clusterId": id, "clusterName": name, "conductorDeviceName": c.Name, "conductorSerialNumber": c.Serial,
			"firmwareVersion": c.Firmware, "id": id, "ipv4": orDefault(c.IPv4, "0.0.0.0"), "siteId": c.Site,
			"siteName": st.site(c.Site).Name, "type": "network-monitoring/swarm",
			"membersCount": len(ms),
		})
	}
	return out
}

func swarms(w http.ResponseWriter, rq *request, st *state) *apiError {
	return rq.serveList(w, st, listSpec{view: "swarms", cursor: true, defLimit: 20, maxLimit: 1000})
}

// swarmDetail answers /swarms/{cluster-id}: the list item plus its member
// count, which only the detail carries.
func swarmDetail(w http.ResponseWriter, rq *request, st *state) *apiError {
	for _, sw := range st.swarmItems() {
		if sw["clusterId"] == rq.param("cluster-id") {
			delete(sw, "siteName")
			writeJSON(w, 200, sw)
			return nil
		}
	}
	return notFound("Resource not found for the given input.")
}

// clusterMembers answers /clusters/{cluster-name}/members: the gateways of
// a gateway cluster.
func clusterMembers(w http.ResponseWriter, rq *request, st *state) *apiError {
	name := rq.param("cluster-name")
	var items []item
	for _, d := range st.devices {
		if d.Type != "GATEWAY" || d.Cluster != name {
			continue
		}
		g := st.gatewayItem(d)
		status := "ONLINE"
		if d.Status == "OFFLINE" {
			status = "OFFLINE"
		}
		m := map[string]any{
			"clusterName": name, "deviceName": d.Name, "firmwareVersion": d.Firmware, "id": d.Serial,
			"ipv4": orDefault(d.IPv4, "0.0.0.0"), "ipv6": "", "lastSeenAt": st.ts(st.lastSeen(d)), "macAddress": d.MAC,
			"model": d.Model, "partNumber": d.PartNumber, "role": g["role"], "serialNumber": d.Serial,
			"siteId": d.Site, "siteName": st.site(d.Site).Name, "softwareVersion": d.Firmware, "status": status,
			"type": "network-monitoring/gateway",
		}
		raw, _ := marshal(m)
		items = append(items, item{key: d.Serial, obj: m, raw: raw})
	}
	if len(items) == 0 {
		return notFound("Resource not found for the given input.")
	}
	return rq.serveList(w, st, listSpec{items: items, cursor: true, defLimit: 100, maxLimit: 100})
}
