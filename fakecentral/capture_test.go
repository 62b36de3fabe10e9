package fakecentral

import (
	"io"
	"net/http"
	"net/http/httptest"
	"testing"
)

// TestCapturedBytesBounded: with CaptureBodies, a run's journal keeps
// bodies up to MaxCapturedBytes; the requests past it are journaled (and
// counted) without them, and a reset starts the budget again.
func TestCapturedBytesBounded(t *testing.T) {
	c := New(&Options{CaptureBodies: true, MaxCapturedBytes: 50 << 10})
	ts := httptest.NewServer(c)
	defer ts.Close()
	get := func() {
		req, _ := http.NewRequest("GET", ts.URL+"/network-monitoring/v1/clients", nil)
		req.Header.Set("Authorization", "Bearer "+c.Token())
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
	}
	for range 10 {
		get()
	}
	var kept, dropped, bytes int
	for _, e := range c.Journal() {
		if e.BodiesDropped {
			dropped++
			if e.ResponseBody != nil {
				t.Errorf("entry %d dropped its bodies but holds %d bytes", e.Seq, len(e.ResponseBody))
			}
		} else {
			kept++
			bytes += len(e.ResponseBody)
		}
	}
	if kept == 0 || dropped == 0 || kept+dropped != 10 || bytes > 50<<10 {
		t.Errorf("kept %d (%d bytes), dropped %d of 10 under a 50 KiB budget", kept, bytes, dropped)
	}
	c.Reset()
	get()
	if j := c.Journal(); len(j) != 1 || j[0].BodiesDropped {
		t.Errorf("after a reset: %+v", j)
	}
}
