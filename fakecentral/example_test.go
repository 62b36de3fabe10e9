package fakecentral_test

import (
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"

	"github.com/mcpbench/bench/fakecentral"
)

// A Go test points its client at an httptest server over the fake, brackets
// the work with tool-call markers, and reads the journal.
func Example() {
	c := fakecentral.New(nil) // fixture site-a
	ts := httptest.NewServer(c)
	defer ts.Close()

	resp, _ := http.Post(ts.URL+"/oauth2/token", "application/x-www-form-urlencoded",
		strings.NewReader("grant_type=client_credentials&client_id=me&client_secret=x"))
	resp.Body.Close()

	c.BeginToolCall(0)
	req, _ := http.NewRequest("GET", ts.URL+"/network-monitoring/v1/clients/aa:bb:cc:11:22:33", nil)
	req.Header.Set("Authorization", "Bearer "+c.Token())
	resp, _ = http.DefaultClient.Do(req)
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	c.EndToolCall()

	fmt.Println(resp.StatusCode, strings.Contains(string(body), `"status":"Failed"`))
	for _, e := range c.Journal() {
		fmt.Println(e.Seq, e.Method, e.Route, e.Class, e.ToolCall, e.Boot)
	}
	// Output:
	// 200 true
	// 1 POST POST /oauth2/token auth -1 true
	// 2 GET GET /network-monitoring/v1/clients/{mac-address} read 0 false
}
