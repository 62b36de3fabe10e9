package fakecentral

import (
	"net/http"
	"slices"
)

// Two undocumented endpoints the compared servers call to draw the scope
// hierarchy: GET cnxdevice/v1/debug/get_scope_data and GET
// network-config/{v1,v1alpha1}/scope-maps. The OpenAPI has neither, so the
// shapes are the ones the servers' code reads (nowireless4u
// platforms/central/scope_builder.py:123-169@91fe9842: "devices" with
// scope_id, hier_path leaf to root, type and meta; "scope-map" entries
// with scope-name, persona and resource; secure-ssid
// mcp_servers/config.py:490-515@9c7df436 reads "scope-map" too). The
// values come from the fixture: the global scope, a collection per site
// group, the sites, their devices; every config object mapped at the
// global scope.

func scopeData(w http.ResponseWriter, rq *request, st *state) *apiError {
	g := st.fx.GlobalScopeID
	out := []any{map[string]any{"scope_id": g, "hier_path": []string{g}, "type": "GLOBAL", "meta": map[string]any{"scope_name": "Global"}}}
	var groups []string
	for _, s := range st.sites {
		if s.Group != "" && !slices.Contains(groups, s.Group) {
			groups = append(groups, s.Group)
		}
	}
	slices.Sort(groups)
	collection := map[string]string{}
	for _, name := range groups {
		id := numericID("collection", name)
		collection[name] = id
		out = append(out, map[string]any{"scope_id": id, "hier_path": []string{id, g}, "type": "SITE_COLLECTION", "meta": map[string]any{"scope_name": name}})
	}
	path := map[string][]string{}
	for _, s := range st.sites {
		p := []string{s.ID, g}
		if c := collection[s.Group]; c != "" {
			p = []string{s.ID, c, g}
		}
		path[s.ID] = p
		out = append(out, map[string]any{"scope_id": s.ID, "hier_path": p, "type": "SITE", "meta": map[string]any{"scope_name": s.Name}})
	}
	for _, d := range st.devices {
		id := numericID("device", d.Serial)
		out = append(out, map[string]any{"scope_id": id, "hier_path": append([]string{id}, path[d.Site]...), "type": "DEVICE",
			"meta": map[string]any{"scope_name": d.Name, "device_type": d.Type, "device_model": d.Model, "part_number": d.PartNumber,
				"mac_address": d.MAC, "serial_number": d.Serial}})
	}
	writeJSON(w, 200, map[string]any{"devices": out})
	return nil
}

// personaOf is the device persona a config resource is mapped to.
func personaOf(resource string) string {
	switch resource {
	case "wlan-ssids":
		return "CAMPUS_AP"
	case "layer2-vlan":
		return "ACCESS_SWITCH"
	}
	return "ALL"
}

func scopeMaps(w http.ResponseWriter, rq *request, st *state) *apiError {
	g := st.fx.GlobalScopeID
	var resources []string
	for r := range st.config {
		resources = append(resources, r)
	}
	slices.Sort(resources)
	maps := []any{}
	for _, r := range resources {
		c := st.config[r]
		for _, name := range c.order {
			if _, ok := c.objs[name]; !ok {
				continue
			}
			maps = append(maps, map[string]any{"scope-name": g, "persona": personaOf(r), "resource": r + "/" + name})
		}
	}
	writeJSON(w, 200, map[string]any{"scope-map": maps})
	return nil
}
