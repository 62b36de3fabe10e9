package fakecentral

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

// FuzzQuery sends arbitrary paths and query strings through the whole
// handler: it must never panic, never answer 5xx, and every error must be
// Central's JSON envelope.
func FuzzQuery(f *testing.F) {
	c := New(&Options{JournalLimit: 1})
	for _, s := range [][2]string{
		{"/network-monitoring/v1/clients", "limit=5&next=2&filter=status%20eq%20'Failed'&sort=clientName%20desc"},
		{"/network-monitoring/v1/sites-health", "limit=1&offset=3"},
		{"/network-troubleshooting/v1/events", "context-type=SITE&context-identifier=2001&site-id=2001&start-at=2026-11-20T09:00:00Z&end-at=2026-11-20T10:00:00Z&limit=3"},
		{"/network-monitoring/v1/aps/CNAPA0101/cpu-utilization-trends", "filter=timestamp%20gt%202026-11-20T09:00:00Z"},
		{"/network-config/v1alpha1/wlan-ssids", "offset=1&limit=1"},
		{"/network-monitoring/v1/clients/aa:bb:cc:11:22:33", ""},
		{"/network-monitoring/v1/radios", "limit=%zz"},
		{"/network-notifications/v1/alerts", "sort=severity%20desc&limit=100"},
	} {
		f.Add(s[0], s[1])
	}
	f.Fuzz(func(t *testing.T, path, rawQuery string) {
		if !strings.HasPrefix(path, "/") || strings.ContainsAny(path, "?#\x00") {
			return
		}
		r := httptest.NewRequest("GET", "/", nil)
		r.URL.Path, r.URL.RawQuery = path, rawQuery
		r.Header.Set("Authorization", "Bearer "+c.Token())
		w := httptest.NewRecorder()
		c.ServeHTTP(w, r)
		if w.Code >= 500 {
			t.Fatalf("GET %s?%s: %d %s", path, rawQuery, w.Code, w.Body)
		}
		if w.Code >= 400 {
			var m map[string]any
			if err := json.Unmarshal(w.Body.Bytes(), &m); err != nil || m["httpStatusCode"] == nil || m["message"] == nil {
				t.Fatalf("GET %s?%s: %d with a non-Central error body %q", path, rawQuery, w.Code, w.Body)
			}
		}
		if w.Code != http.StatusOK && w.Code != 202 && (w.Code < 400 || w.Code > 499) {
			t.Fatalf("GET %s?%s: unexpected status %d", path, rawQuery, w.Code)
		}
	})
}
