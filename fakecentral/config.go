package fakecentral

import (
	"encoding/json"
	"fmt"
	"sort"
	"strings"
)

// configColl is one network-config resource (e.g. "wlan-ssids") in the state:
// objects keyed by their name, in creation order.
type configColl struct {
	resource string
	order    []string
	objs     map[string]map[string]any
}

// keyFields are the fields that name a config object, by preference.
var keyFields = []string{"ssid", "vlan", "name", "id", "profile-name", "tag"}

func configKey(resource string, o map[string]any) string {
	for _, k := range keyFields {
		switch v := o[k].(type) {
		case string:
			if v != "" {
				return v
			}
		case int, float64:
			return fmt.Sprint(v)
		}
	}
	return ""
}

func (st *state) coll(resource string) *configColl {
	c := st.config[resource]
	if c == nil {
		c = &configColl{resource: resource, objs: map[string]map[string]any{}}
		st.config[resource] = c
	}
	return c
}

func (c *configColl) put(key string, o map[string]any) {
	if _, ok := c.objs[key]; !ok {
		c.order = append(c.order, key)
	}
	c.objs[key] = o
}

func (c *configColl) del(key string) {
	delete(c.objs, key)
	for i, k := range c.order {
		if k == key {
			c.order = append(c.order[:i:i], c.order[i+1:]...)
			break
		}
	}
}

func (c *configColl) list() []map[string]any {
	out := make([]map[string]any, 0, len(c.order))
	for _, k := range c.order {
		out = append(out, c.objs[k])
	}
	return out
}

// cloneJSON deep-copies a YAML/JSON value so writes never touch the fixture.
func cloneJSON(v any) any {
	switch x := v.(type) {
	case map[string]any:
		m := make(map[string]any, len(x))
		for k, e := range x {
			m[k] = cloneJSON(e)
		}
		return m
	case []any:
		s := make([]any, len(x))
		for i, e := range x {
			s[i] = cloneJSON(e)
		}
		return s
	default:
		return v
	}
}

func (st *state) seedConfig() {
	// WLAN profiles are derived from the WLAN entities, so the PSK in the
	// config object is the fixture's canary.
	for _, w := range st.wlans {
		o := map[string]any{
			"ssid": w.Name, "enable": w.Status != "DISABLED", "essid": map[string]any{"name": w.Name},
			"opmode": opmode(w.Security), "forward-mode": "FORWARD_MODE_BRIDGE", "rf-band": "24GHZ_5GHZ",
			"vlan-selector": "VLAN_RANGES", "vlan-id-range": []any{w.VLAN},
		}
		if w.Passphrase != "" {
			o["personal-security"] = map[string]any{"wpa-passphrase": w.Passphrase, "passphrase-format": "STRING"}
		}
		if w.ServerGroup != "" {
			o["auth-server-group"] = w.ServerGroup
		}
		st.coll("wlan-ssids").put(w.Name, o)
	}
	res := make([]string, 0, len(st.fx.Config))
	for r := range st.fx.Config {
		res = append(res, r)
	}
	sort.Strings(res)
	for _, r := range res {
		for _, o := range st.fx.Config[r] {
			m := cloneJSON(normalizeYAML(o)).(map[string]any)
			st.coll(r).put(configKey(r, m), m)
		}
	}
}

// normalizeYAML turns yaml.v3 values into JSON-shaped values.
func normalizeYAML(v any) any {
	b, err := json.Marshal(v)
	if err != nil {
		return v
	}
	var out any
	_ = json.Unmarshal(b, &out)
	return out
}

func opmode(sec string) string {
	switch strings.ToLower(sec) {
	case "wpa3-enterprise":
		return "WPA3_ENTERPRISE_CCM_128"
	case "wpa2-enterprise":
		return "WPA2_ENTERPRISE"
	case "wpa2-personal":
		return "WPA2_PERSONAL"
	case "wpa3-personal", "wpa3-sae":
		return "WPA3_SAE"
	}
	return "OPEN"
}

// listKey is the property a config resource's list answer uses: the
// definitions name it after the singular resource ("wlan-ssid", "auth-server").
func listKey(resource string) string {
	if r := catalogRouteFor("GET", "/network-config/v1alpha1/"+resource); r != nil && len(r.Schema) > 0 {
		var s map[string]any
		if json.Unmarshal(r.Schema, &s) == nil {
			if k := arrayProp(loadCatalog(), s, 0); k != "" {
				return k
			}
		}
	}
	return "items"
}

func arrayProp(ci *catalogIndex, s map[string]any, depth int) string {
	if depth > 4 || s == nil {
		return ""
	}
	if ref, ok := s["$ref"].(string); ok {
		return arrayProp(ci, ci.schema(ref), depth+1)
	}
	if all, ok := s["allOf"].([]any); ok {
		for _, p := range all {
			pm, _ := p.(map[string]any)
			if k := arrayProp(ci, pm, depth+1); k != "" {
				return k
			}
		}
	}
	props, _ := s["properties"].(map[string]any)
	if _, ok := props["items"]; ok {
		return "items"
	}
	names := make([]string, 0, len(props))
	for n := range props {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		pm, _ := props[n].(map[string]any)
		if pm["type"] == "array" {
			return n
		}
	}
	return ""
}

// documentedConfig reports whether network-config/{v1,v1alpha1}/{resource} is
// in the catalog or in the fixture.
func (st *state) documentedConfig(version, resource string) bool {
	if _, ok := st.config[resource]; ok {
		return true
	}
	return catalogRouteFor("GET", "/network-config/"+version+"/"+resource) != nil ||
		catalogRouteFor("GET", "/network-config/v1alpha1/"+resource) != nil
}
