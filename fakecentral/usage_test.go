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
