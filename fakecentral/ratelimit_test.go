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

// A modelled window (reset_after): the limit, spent after After calls,
// holds until the window has passed on the fake's clock, says when in
// X-RateLimit-Reset and Retry-After, and then lets After calls through
// again. The clock is injected: nothing sleeps.
func TestRateLimitWindowResetsByTheFakesClock(t *testing.T) {
	clock := time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC)
	now := func() time.Time { return clock }
	c := New(&Options{Now: now, Faults: []Fault{{Route: "GET /network-notifications/v1/alerts", Kind: Fault429, After: 2, ResetAfter: 30 * time.Second}}})
	fixtureNow := c.Fixture().Now().UTC()
	get := func() (int, string, string) {
		st, h, _ := do(t, c, "GET", "/network-notifications/v1/alerts", "")
		return st, h.Get("Retry-After"), h.Get("X-RateLimit-Reset")
	}
	want := func(step string, st int, retry string, reset time.Duration) {
		t.Helper()
		gst, gretry, greset := get()
		wreset := ""
		if st == 429 {
			wreset = fixtureNow.Add(reset).Format("2006-01-02T15:04:05Z")
		}
		if gst != st || gretry != retry || greset != wreset {
			t.Errorf("%s: %d Retry-After %q Reset %q; want %d %q %q", step, gst, gretry, greset, st, retry, wreset)
		}
	}
	want("1st", 200, "", 0)
	want("2nd", 200, "", 0)
	want("spent", 429, "30", 30*time.Second)
	clock = clock.Add(10 * time.Second)
	want("10 s later", 429, "20", 30*time.Second)
	clock = clock.Add(19*time.Second + 500*time.Millisecond)
	want("half a second before", 429, "1", 30*time.Second)
	clock = clock.Add(500 * time.Millisecond)
	want("reset", 200, "", 0)
	want("new quota", 200, "", 0)
	want("spent again", 429, "30", 60*time.Second)
}

// With after 0 the limit is spent when the run begins: every call is
// refused until the window passes, and then none is.
func TestRateLimitSpentAtTheStartLiftsAtTheReset(t *testing.T) {
	clock := time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC)
	c := New(&Options{Now: func() time.Time { return clock }, Faults: []Fault{{Route: "GET /network-monitoring/*", Kind: Fault429, ResetAfter: 2 * time.Second}}})
	for i, step := range []struct {
		advance time.Duration
		want    int
	}{{0, 429}, {time.Second, 429}, {999 * time.Millisecond, 429}, {time.Millisecond, 200}, {0, 200}, {time.Hour, 200}} {
		clock = clock.Add(step.advance)
		if st, _, _ := do(t, c, "GET", "/network-monitoring/v1/devices", ""); st != step.want {
			t.Errorf("step %d: %d, want %d", i, st, step.want)
		}
	}
}
