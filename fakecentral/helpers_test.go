package fakecentral

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

// do sends one request to the handler (no network) with the fake's token.
func do(t testing.TB, c *Central, method, target, body string) (int, http.Header, []byte) {
	t.Helper()
	var r *http.Request
	if body != "" {
		r = httptest.NewRequest(method, target, strings.NewReader(body))
		r.Header.Set("Content-Type", "application/json")
	} else {
		r = httptest.NewRequest(method, target, nil)
	}
	r.Header.Set("Authorization", "Bearer "+c.Token())
	w := httptest.NewRecorder()
	c.ServeHTTP(w, r)
	return w.Code, w.Header(), w.Body.Bytes()
}

func decode(t testing.TB, b []byte) map[string]any {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatalf("decode %s: %v", b, err)
	}
	return m
}

func q(s string) string { return strings.NewReplacer(" ", "%20", "'", "%27").Replace(s) }
