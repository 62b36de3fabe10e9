package fakecentral

import (
	"testing"
)

// Usage lists agree with the rest of the API: an AP's usage is the sum of
// its clients' in the top-N list, the clients trend counts what /clients
// lists, and a wireless client roamed to the AP it is on.
func TestUsageAgreesWithTheFixture(t *testing.T) {
	c := New(&Options{Fixture: MustLoadFixture("site-a")})
	get := func(path string) map[string]any {
		t.Helper()
		st, _, b := do(t, c, "GET", path, "")
		if st != 200 {
			t.Fatalf("%s: %d %s", path, st, b)
		}
		return decode(t, b)
	}
	m := "/network-monitoring/v1/"
	perAP := map[string]float64{}
	var clientsOn = map[string]string{}
	for _, it := range get(m + "clients?limit=1000")["items"].([]any) {
		cl := it.(map[string]any)
		clientsOn[cl["macAddress"].(string)] = cl["connectedDeviceSerial"].(string)
	}
	top := get(m + "clients-topn-usage?limit=100")["items"].([]any)
	prev := -1.0
	for _, it := range top {
		cl := it.(map[string]any)
		u := cl["usage"].(float64)
		if prev >= 0 && u > prev {
			t.Errorf("top-N not sorted: %v after %v", u, prev)
		}
		prev = u
		if cl["clientConnectionType"] == "Wireless" {
			perAP[clientsOn[cl["macAddress"].(string)]] += u
		}
	}
	if len(top) != len(clientsOn) {
		t.Errorf("%d clients in the top-N of 100, %d connected", len(top), len(clientsOn))
	}
	aps := get(m + "top-aps-by-wireless-usage")["items"].([]any)
	if len(aps) == 0 {
		t.Fatal("no AP has usage")
	}
	for _, it := range aps {
		ap := it.(map[string]any)
		if got, want := ap["totalValue"].(float64), perAP[ap["serialNumber"].(string)]; got != want {
			t.Errorf("%s: %v bytes, its clients' sum %v", ap["serialNumber"], got, want)
		}
	}
	tr := get(m + "clients-trend")
	samples := tr["samples"].([]any)
	data := samples[len(samples)-1].(map[string]any)["data"].([]any)
	if data[0].(float64)+data[1].(float64) != float64(len(clientsOn)) {
		t.Errorf("clients trend counts %v, /clients lists %d connected", data, len(clientsOn))
	}
	trail := get(m + "clients/aa:bb:cc:11:22:33/mobility-trail")["items"].([]any)
	if len(trail) != 1 || trail[0].(map[string]any)["destinationAp"] != "CNAPA0101" {
		t.Errorf("mobility trail %v", trail)
	}
	if st, _, _ := do(t, c, "GET", m+"clients/00:00:00:00:00:99/mobility-trail", ""); st != 404 {
		t.Errorf("unknown client: %d", st)
	}
}

// The clients trend groups as the OpenAPI's group-by says, folds more than
// five groups into the top four and "Others", filters by type, and refuses
// a group-by it does not document.
func TestClientsTrendGroups(t *testing.T) {
	c := New(&Options{Fixture: MustLoadFixture("campus")})
	last := func(query string) ([]any, []any) {
		t.Helper()
		st, _, b := do(t, c, "GET", "/network-monitoring/v1/clients-trend?"+query, "")
		if st != 200 {
			t.Fatalf("%s: %d %s", query, st, b)
		}
		m := decode(t, b)
		samples := m["samples"].([]any)
		return m["keys"].([]any), samples[len(samples)-1].(map[string]any)["data"].([]any)
	}
	sum := func(data []any) (n float64) {
		for _, v := range data {
			n += v.(float64)
		}
		return n
	}
	_, all := last("")
	keys, wireless := last("group-by=wlan&type=WIRELESS")
	if len(keys) != 4 || sum(wireless) > sum(all) || sum(wireless) == 0 {
		t.Errorf("wireless by WLAN: %v %v; all %v", keys, wireless, all)
	}
	keys, byVLAN := last("group-by=VLAN")
	if len(keys) > 5 || sum(byVLAN) != sum(all) {
		t.Errorf("by VLAN: %v %v, all %v", keys, byVLAN, sum(all))
	}
	// site-a's connected clients have six roles: the top four and Others.
	c = New(&Options{Fixture: MustLoadFixture("site-a")})
	_, all = last("")
	keys, byRole := last("group-by=ROLE")
	if len(keys) != 5 || keys[4] != "Others" || sum(byRole) != sum(all) {
		t.Errorf("site-a by role: %v %v, all %v", keys, byRole, sum(all))
	}
	if st, _, _ := do(t, c, "GET", "/network-monitoring/v1/clients-trend?group-by=status", ""); st != 400 {
		t.Errorf("group-by=status: %d, want 400", st)
	}
}
