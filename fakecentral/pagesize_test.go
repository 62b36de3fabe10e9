package fakecentral

import (
	"fmt"
	"testing"
)

// A run's page size caps every list page whatever limit is asked, and a
// client that follows next sees every item exactly once.
func TestPageSizeCapsEveryList(t *testing.T) {
	c := New(&Options{Fixture: MustLoadFixture("campus")})
	c.SetPageSize(25)
	seen := map[string]bool{}
	pages := 0
	for next := "1"; next != ""; pages++ {
		st, _, b := do(t, c, "GET", "/network-monitoring/v1/clients?limit=1000&next="+next, "")
		if st != 200 {
			t.Fatalf("page %s: %d %s", next, st, b)
		}
		m := decode(t, b)
		items := m["items"].([]any)
		if len(items) > 25 {
			t.Fatalf("page %s has %d items, want at most 25", next, len(items))
		}
		for _, it := range items {
			seen[fmt.Sprint(it.(map[string]any)["macAddress"])] = true
		}
		next, _ = m["next"].(string)
	}
	st, _, b := do(t, c, "GET", "/network-monitoring/v1/clients?limit=1000", "")
	total := int(decode(t, b)["total"].(float64))
	if st != 200 || len(seen) != total || pages != (total+24)/25 {
		t.Errorf("%d distinct clients in %d pages, total %d", len(seen), pages, total)
	}
	// Offset lists too, and 0 restores the documented limits.
	_, _, b = do(t, c, "GET", "/network-notifications/v1/alerts?limit=100", "")
	if n := decode(t, b)["count"].(float64); n != 5 {
		t.Errorf("alerts count %v", n)
	}
	_, _, b = do(t, c, "GET", "/network-monitoring/v1/devices?limit=100&offset=0", "")
	if n := len(decode(t, b)["items"].([]any)); n != 25 {
		t.Errorf("devices page of %d items at page size 25", n)
	}
	c.SetPageSize(0)
	_, _, b = do(t, c, "GET", "/network-monitoring/v1/devices?limit=100", "")
	if n := len(decode(t, b)["items"].([]any)); n <= 25 {
		t.Errorf("devices page of %d items without a page size", n)
	}
}
