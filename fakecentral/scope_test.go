package fakecentral

import (
	"slices"
	"testing"
)

// The scope data puts each site under its collection and each device
// under its site, leaf first, as the servers that read it expect; the
// scope map lists the config objects at the global scope.
func TestScopeDataAndMaps(t *testing.T) {
	fx := MustLoadFixture("branches")
	c := New(&Options{Fixture: fx})
	st, _, b := do(t, c, "GET", "/cnxdevice/v1/debug/get_scope_data", "")
	if st != 200 {
		t.Fatalf("%d %s", st, b)
	}
	paths := map[string][]any{}
	types := map[string]int{}
	for _, it := range decode(t, b)["devices"].([]any) {
		d := it.(map[string]any)
		paths[d["meta"].(map[string]any)["scope_name"].(string)] = d["hier_path"].([]any)
		types[d["type"].(string)]++
	}
	g := fx.GlobalScopeID
	if types["GLOBAL"] != 1 || types["SITE"] != len(fx.Sites) || types["DEVICE"] != len(fx.Devices) || types["SITE_COLLECTION"] < 2 {
		t.Errorf("scopes by type %v", types)
	}
	site := paths["Boston-BackBay"]
	if len(site) != 3 || site[0] != "5001" || site[2] != g || !slices.Equal(paths["Region-East"], []any{site[1], g}) {
		t.Errorf("Boston's path %v, Region-East's %v", site, paths["Region-East"])
	}
	if ap := paths["AP-BOS-01"]; len(ap) != 4 || ap[1] != "5001" {
		t.Errorf("AP-BOS-01's path %v", ap)
	}
	for _, v := range []string{"v1", "v1alpha1"} {
		st, _, b = do(t, c, "GET", "/network-config/"+v+"/scope-maps", "")
		if st != 200 {
			t.Fatalf("%s: %d %s", v, st, b)
		}
		found := false
		for _, it := range decode(t, b)["scope-map"].([]any) {
			m := it.(map[string]any)
			found = found || m["resource"] == "wlan-ssids/Branch-Staff" && m["persona"] == "CAMPUS_AP" && m["scope-name"] == g
		}
		if !found {
			t.Errorf("%s: no wlan-ssids/Branch-Staff at the global scope: %s", v, b)
		}
	}
}
