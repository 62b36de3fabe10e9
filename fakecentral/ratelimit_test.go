package fakecentral

import (
	"encoding/json"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"
)

// A 429 carries the headers the OpenAPI documents for it, in the shapes it
// gives them (issue 19, item 4): X-RateLimit-Limit and -Remaining (int64,
// minimum 0), X-RateLimit-Reset (an RFC 3339 UTC date-time of at most 20
// characters), and Retry-After (int32 seconds, minimum 0; the definition's
// example, 60) on the notifications API, the only one that documents it.
func TestRateLimitHeadersAsTheOpenAPIDocuments(t *testing.T) {
	dir := openAPIDir(t)
	documented := func(spec string) map[string]map[string]any {
		t.Helper()
		data, err := os.ReadFile(filepath.Join(dir, spec))
		if err != nil {
			t.Fatal(err)
		}
		type response struct {
			Ref     string                    `json:"$ref"`
			Headers map[string]map[string]any `json:"headers"`
		}
		var doc struct {
			Components struct {
				Headers   map[string]map[string]any `json:"headers"`
				Responses map[string]response       `json:"responses"`
			} `json:"components"`
			Paths map[string]map[string]json.RawMessage `json:"paths"`
		}
		if err := json.Unmarshal(data, &doc); err != nil {
			t.Fatal(err)
		}
		out := map[string]map[string]any{}
		for _, ops := range doc.Paths {
			for _, raw := range ops {
				var op struct {
					Responses map[string]response `json:"responses"`
				}
				if json.Unmarshal(raw, &op) != nil {
					continue
				}
				r := op.Responses["429"]
				if r.Ref != "" {
					r = doc.Components.Responses[filepath.Base(r.Ref)]
				}
				for name, h := range r.Headers {
					if ref, ok := h["$ref"].(string); ok {
						h = doc.Components.Headers[filepath.Base(ref)]
					}
					out[name] = h
				}
			}
		}
		return out
	}
	c := New(&Options{Faults: []Fault{
		{Route: "GET /network-monitoring/v1/clients", Kind: Fault429},
		{Route: "GET /network-notifications/v1/alerts", Kind: Fault429},
	}})
	now := c.Fixture().Now().UTC()
	for _, tc := range []struct {
		spec, target string
		retryAfter   bool
	}{
		{"mrt/monitoring.json", "/network-monitoring/v1/clients", false},
		{"mrt/notifications.json", "/network-notifications/v1/alerts", true},
	} {
		docs := documented(tc.spec)
		code, h, body := do(t, c, "GET", tc.target, "")
		if code != 429 {
			t.Fatalf("%s: %d %s, want 429", tc.target, code, body)
		}
		for _, name := range []string{"X-RateLimit-Limit", "X-RateLimit-Remaining", "X-RateLimit-Reset"} {
			if docs[name] == nil {
				t.Errorf("%s: %s documents no %s on 429", tc.spec, tc.target, name)
			}
		}
		for _, name := range []string{"X-RateLimit-Limit", "X-RateLimit-Remaining"} {
			if n, err := strconv.ParseInt(h.Get(name), 10, 64); err != nil || n < 0 {
				t.Errorf("%s %s: %q is no int64 >= 0", tc.target, name, h.Get(name))
			}
		}
		reset := h.Get("X-RateLimit-Reset")
		at, err := time.Parse(time.RFC3339, reset)
		if err != nil || len(reset) > 20 || !at.After(now) || at.Sub(now) > time.Hour || at.Location() != time.UTC {
			t.Errorf("%s X-RateLimit-Reset %q: want an RFC 3339 UTC time of at most 20 characters within the hour after %s", tc.target, reset, now)
		}
		_, documentedRetry := docs["Retry-After"]
		if documentedRetry != tc.retryAfter {
			t.Errorf("%s: Retry-After documented %v, want %v", tc.spec, documentedRetry, tc.retryAfter)
		}
		switch ra := h.Get("Retry-After"); {
		case tc.retryAfter:
			example := docs["Retry-After"]["schema"].(map[string]any)["example"]
			if n, err := strconv.Atoi(ra); err != nil || n < 0 || float64(n) != example {
				t.Errorf("%s Retry-After %q: want the OpenAPI's example, %v seconds", tc.target, ra, example)
			}
		case ra != "":
			t.Errorf("%s: Retry-After %q where the OpenAPI documents none", tc.target, ra)
		}
	}
}

// A rate limit spent after N calls: the first N matching requests are
// served, the next Times answer 429 with the documented headers, and the
// fake's clock, not a sleep, decides the reset.
func TestRateLimitAfterNCalls(t *testing.T) {
	c := New(&Options{Faults: []Fault{{Route: "GET /network-notifications/v1/alerts", Kind: Fault429, After: 2, Times: 1}}})
	var codes []int
	for range 4 {
		code, h, _ := do(t, c, "GET", "/network-notifications/v1/alerts", "")
		codes = append(codes, code)
		if code == 429 && (h.Get("X-RateLimit-Remaining") != "0" || h.Get("Retry-After") == "") {
			t.Errorf("the 429 lacks its headers: %v", h)
		}
	}
	if want := []int{200, 200, 429, 200}; !slices.Equal(codes, want) {
		t.Errorf("statuses %v, want %v: two served, one throttled, then the window is reset", codes, want)
	}
	if code, _, _ := do(t, c, "GET", "/network-monitoring/v1/clients", ""); code != 200 {
		t.Errorf("another API family is not throttled: %d", code)
	}
}

// The token endpoint can be throttled like any route: a server that asks
// for a token too often is told so, with the same headers.
func TestTokenEndpointRateLimit(t *testing.T) {
	c := New(&Options{Faults: []Fault{{Route: "POST /oauth2/token", Kind: Fault429, After: 1}}})
	var codes []int
	for range 2 {
		r := httptest.NewRequest("POST", "/oauth2/token", strings.NewReader("grant_type=client_credentials&client_id=a&client_secret=b"))
		r.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		w := httptest.NewRecorder()
		c.ServeHTTP(w, r)
		codes = append(codes, w.Code)
		if w.Code == 429 && w.Header().Get("X-RateLimit-Reset") == "" {
			t.Errorf("a throttled token request lacks the rate-limit headers: %v", w.Header())
		}
	}
	if !slices.Equal(codes, []int{200, 429}) {
		t.Errorf("token statuses %v, want [200 429]", codes)
	}
	// So a scenario's fault on it lints: the fake serves both token paths.
	for _, p := range []string{"POST /oauth2/token", "POST /as/token.oauth2"} {
		if got := Serves(p); got != Modelled {
			t.Errorf("Serves(%q) = %s, want %s", p, got, Modelled)
		}
	}
}
