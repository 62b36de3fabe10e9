package centralmcp

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// pagedStub is a minimal Central stand-in for the paging and token logic
// alone (the tools are tested end to end against fakecentral). It serves n
// items at /items, paging by cursor or offset, and records the queries.
type pagedStub struct {
	n       int
	style   pagingStyle
	badNext bool // answer next="1" forever
	unauth  int  // answer 401 to this many API calls
	mu      sync.Mutex
	queries []string
	tokens  int
}

func (p *pagedStub) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if r.URL.Path == "/token" {
		p.tokens++
		fmt.Fprintf(w, `{"access_token":"t%d","token_type":"Bearer","expires_in":7199}`, p.tokens)
		return
	}
	if p.unauth > 0 {
		p.unauth--
		w.WriteHeader(http.StatusUnauthorized)
		fmt.Fprint(w, `{"message":"Unauthorized request."}`)
		return
	}
	if got, want := r.Header.Get("Authorization"), "Bearer t"+strconv.Itoa(p.tokens); got != want {
		http.Error(w, "bad token "+got, http.StatusForbidden)
		return
	}
	p.queries = append(p.queries, r.URL.RawQuery)
	q := r.URL.Query()
	limit, _ := strconv.Atoi(q.Get("limit"))
	start := 0
	if p.style == pageByCursor {
		if n, _ := strconv.Atoi(q.Get("next")); n > 1 {
			start = (n - 1) * limit
		}
	} else {
		start, _ = strconv.Atoi(q.Get("offset"))
	}
	var items []map[string]any
	for i := start; i < start+limit && i < p.n; i++ {
		items = append(items, map[string]any{"id": fmt.Sprintf("i%02d", i)})
	}
	body := map[string]any{"items": items, "total": p.n, "count": len(items)}
	if p.style == pageByCursor {
		body["next"] = nil
		if start+limit < p.n {
			body["next"] = strconv.Itoa(start/limit + 2)
		}
		if p.badNext {
			body["next"] = "1"
		}
	}
	json.NewEncoder(w).Encode(body)
}

func (p *pagedStub) client(t *testing.T) *central {
	ts := httptest.NewServer(p)
	t.Cleanup(ts.Close)
	return &central{base: ts.URL, tokenURL: ts.URL + "/token", id: "id", secret: "s", hc: ts.Client()}
}

// stubConf is the part of a pagedStub a test case sets.
type stubConf struct {
	n       int
	style   pagingStyle
	badNext bool
}

func ids(items []map[string]any) string {
	var s []string
	for _, it := range items {
		s = append(s, fmt.Sprint(it["id"]))
	}
	return strings.Join(s, ",")
}

func TestList(t *testing.T) {
	tests := []struct {
		name      string
		stub      stubConf
		req       pageRequest
		pageSize  int
		max       int
		wantIDs   string
		wantNext  string
		wantQ     []string
		wantTrunc bool
	}{
		{
			name: "one cursor page answers a plain call, with a cursor for more",
			stub: stubConf{n: 5, style: pageByCursor}, req: pageRequest{limit: 2}, max: 100,
			wantIDs: "i00,i01", wantNext: "2", wantQ: []string{"limit=2"},
		},
		{
			name: "a cursor from the caller is passed as next",
			stub: stubConf{n: 5, style: pageByCursor}, req: pageRequest{limit: 2, cursor: "3"}, max: 100,
			wantIDs: "i04", wantQ: []string{"limit=2&next=3"},
		},
		{
			name: "all walks with the largest page size and stops on null next",
			stub: stubConf{n: 5, style: pageByCursor}, req: pageRequest{limit: 2, all: true}, max: 2,
			wantIDs: "i00,i01,i02,i03,i04", wantQ: []string{"limit=2", "limit=2&next=2", "limit=2&next=3"},
		},
		{
			name: "offset paging stops at total",
			stub: stubConf{n: 3, style: pageByOffset}, req: pageRequest{limit: 2, all: true}, max: 2,
			wantIDs: "i00,i01,i02", wantQ: []string{"limit=2&offset=0", "limit=2&offset=2"},
		},
		{
			name: "offset paging returns the next offset as cursor",
			stub: stubConf{n: 3, style: pageByOffset}, req: pageRequest{limit: 2}, max: 100,
			wantIDs: "i00,i01", wantNext: "2", wantQ: []string{"limit=2&offset=0"},
		},
		{
			name: "a forced page size of 1 fills the limit one call at a time (extra-pagination)",
			stub: stubConf{n: 5, style: pageByCursor}, req: pageRequest{limit: 3}, pageSize: 1, max: 100,
			wantIDs: "i00,i01,i02", wantNext: "4", wantQ: []string{"limit=1", "limit=1&next=2", "limit=1&next=3"},
		},
		{
			name: "a next that never ends is cut at maxPages",
			stub: stubConf{n: 1, style: pageByCursor, badNext: true}, req: pageRequest{limit: 1, all: true}, max: 1,
			wantTrunc: true, wantNext: "1",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			stub := &pagedStub{n: tt.stub.n, style: tt.stub.style, badNext: tt.stub.badNext}
			c := stub.client(t)
			ep := listEndpoint{path: "/items", itemsKey: "items", style: tt.stub.style, maxLimit: tt.max}
			res, err := c.list(context.Background(), ep, url.Values{}, tt.req, tt.pageSize)
			if err != nil {
				t.Fatal(err)
			}
			if tt.wantTrunc {
				if !res.Truncated || len(stub.queries) != maxPages {
					t.Fatalf("truncated=%v after %d calls, want true after %d", res.Truncated, len(stub.queries), maxPages)
				}
			} else {
				if got := ids(res.Items); got != tt.wantIDs {
					t.Errorf("items = %s, want %s", got, tt.wantIDs)
				}
				if diff := cmp.Diff(tt.wantQ, stub.queries); diff != "" {
					t.Errorf("queries (-want +got):\n%s", diff)
				}
			}
			if res.Next != tt.wantNext {
				t.Errorf("next = %q, want %q", res.Next, tt.wantNext)
			}
		})
	}
}

func TestTokenRefreshOnceOn401(t *testing.T) {
	stub := &pagedStub{n: 1, unauth: 1}
	c := stub.client(t)
	var out map[string]any
	if _, err := c.do(context.Background(), http.MethodGet, "/items", url.Values{"limit": {"1"}}, nil, &out); err != nil {
		t.Fatalf("first 401 should be retried with a new token: %v", err)
	}
	if stub.tokens != 2 {
		t.Errorf("token requests = %d, want 2 (initial + refresh)", stub.tokens)
	}
	stub.unauth = 2
	_, err := c.do(context.Background(), http.MethodGet, "/items", url.Values{"limit": {"1"}}, nil, &out)
	if err == nil || !strings.Contains(err.Error(), "401") {
		t.Errorf("two 401s in a row: err = %v, want a 401 error", err)
	}
	if stub.tokens != 3 {
		t.Errorf("token requests = %d, want 3 (one refresh per call)", stub.tokens)
	}
}

func TestNormalMAC(t *testing.T) {
	for in, want := range map[string]string{
		"AA:BB:CC:11:22:33": "aa:bb:cc:11:22:33",
		"aa-bb-cc-11-22-33": "aa:bb:cc:11:22:33",
		"aabb.cc11.2233":    "aa:bb:cc:11:22:33",
		"aabbcc112233":      "aa:bb:cc:11:22:33",
	} {
		if got, err := normalMAC(in); err != nil || got != want {
			t.Errorf("normalMAC(%q) = %q, %v; want %q", in, got, err, want)
		}
	}
	for _, bad := range []string{"", "aa:bb:cc", "zz:bb:cc:11:22:33", "aa:bb:cc:11:22:33:44"} {
		if _, err := normalMAC(bad); err == nil {
			t.Errorf("normalMAC(%q) succeeded, want an error", bad)
		}
	}
}

func TestParseInjection(t *testing.T) {
	for _, in := range Injections() {
		if got, err := ParseInjection(string(in)); err != nil || got != in {
			t.Errorf("ParseInjection(%q) = %q, %v", in, got, err)
		}
	}
	if _, err := ParseInjection("nope"); err == nil || !strings.Contains(err.Error(), "extra-pagination") {
		t.Errorf("unknown name: err = %v, want one listing the known names", err)
	}
}

// A read answered 429 is retried twice, after the Retry-After Central
// sends, else after 1 s then 2 s; a write is not retried, nor a wait past
// maxRetryWait. The wait is injected: nothing sleeps.
func TestRetryAfterOn429(t *testing.T) {
	for name, tc := range map[string]struct {
		method     string
		throttled  int    // requests answered 429 first
		retryAfter string // their Retry-After
		waits      string
		ok         bool
	}{
		"retry-after honoured":      {http.MethodGet, 1, "3", "3s", true},
		"backoff without it":        {http.MethodGet, 2, "", "1s,2s", true},
		"gives up after two":        {http.MethodGet, 3, "1", "1s,1s", false},
		"too long a wait":           {http.MethodGet, 1, "3600", "", false},
		"a write is not sent twice": {http.MethodPost, 1, "1", "", false},
	} {
		calls := 0
		ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if r.URL.Path == "/token" {
				json.NewEncoder(w).Encode(map[string]any{"access_token": "t", "expires_in": 3600})
				return
			}
			calls++
			if calls <= tc.throttled {
				if tc.retryAfter != "" {
					w.Header().Set("Retry-After", tc.retryAfter)
				}
				w.WriteHeader(http.StatusTooManyRequests)
				return
			}
			w.Write([]byte(`{}`))
		}))
		var waits []string
		c := &central{base: ts.URL, tokenURL: ts.URL + "/token", id: "id", secret: "s", hc: ts.Client(),
			wait: func(_ context.Context, d time.Duration) error { waits = append(waits, d.String()); return nil }}
		_, err := c.do(context.Background(), tc.method, "/items", nil, nil, nil)
		ts.Close()
		if (err == nil) != tc.ok || strings.Join(waits, ",") != tc.waits {
			t.Errorf("%s: err %v, waits %v; want ok %v, waits %q", name, err, waits, tc.ok, tc.waits)
		}
	}
}
