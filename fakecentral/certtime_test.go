package fakecentral

import (
	"net/http"
	"strings"
	"testing"
	"time"
)

// TestCertsValidAtFixtureTime: a server whose clock is pinned to the
// fixture's fixed time (bench starts dynamically linked servers under
// libfaketime) trusts the fake's certificates, whether the wall clock is
// weeks after the fixture's time or before it; and so does one on the
// wall clock.
func TestCertsValidAtFixtureTime(t *testing.T) {
	fx, err := LoadFixture("site-a")
	if err != nil {
		t.Fatal(err)
	}
	for _, wall := range []time.Duration{30 * 24 * time.Hour, -30 * 24 * time.Hour} {
		now := fx.Now().Add(wall)
		s := startServer(t, &Options{Fixture: fx, Now: func() time.Time { return now }})
		for name, clock := range map[string]time.Time{"pinned": fx.Now(), "wall": now} {
			hc := proxiedClient(t, s)
			hc.Transport.(*http.Transport).TLSClientConfig.Time = func() time.Time { return clock }
			req, _ := http.NewRequest("POST", "https://"+SSOHost+"/as/token.oauth2", strings.NewReader("grant_type=client_credentials&client_id=x"))
			req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
			resp, err := hc.Do(req)
			if err != nil {
				t.Fatalf("wall clock %+v from the fixture's time, client clock %s: %v", wall, name, err)
			}
			resp.Body.Close()
			if resp.StatusCode != 200 {
				t.Fatalf("token: %s", resp.Status)
			}
		}
	}
}
