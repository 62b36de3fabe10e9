// Command clockserver is an MCP server over stdio that reads the wall
// clock, for the tests of bench's clock rules (docs/clock.md). Its one
// tool, events_now, puts the current time in a query to Central (an events
// window: the last hour) and in its result, as real servers do.
//
// The clock is time.Now plus the offset (a Go duration) in the file that
// --offset-file names, re-read on every call: a test moves the server an
// hour on without waiting an hour. Central is reached as real servers
// reach it: an OAuth token from the SSO host and the API host, both
// through HTTPS_PROXY, trusting SSL_CERT_FILE.
package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"log"
	"net/http"
	"net/url"
	"os"
	"strings"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

func main() {
	offsetFile := flag.String("offset-file", "", "file holding the clock offset (a Go duration)")
	flag.Parse()
	now := func() time.Time {
		var off time.Duration
		if b, err := os.ReadFile(*offsetFile); err == nil {
			off, _ = time.ParseDuration(strings.TrimSpace(string(b)))
		}
		return time.Now().UTC().Add(off)
	}
	s := mcp.NewServer(&mcp.Implementation{Name: "clockserver", Version: "1"}, nil)
	type in struct{}
	mcp.AddTool(s, &mcp.Tool{Name: "events_now", Description: "List the events of the last hour at site HQ-Building-A."},
		func(ctx context.Context, _ *mcp.CallToolRequest, _ in) (*mcp.CallToolResult, any, error) {
			t := now()
			n, err := events(ctx, t.Add(-time.Hour), t)
			if err != nil {
				return nil, nil, err
			}
			b, _ := json.Marshal(map[string]any{"now": t.Format(time.RFC3339Nano), "events": n})
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: string(b)}}}, nil, nil
		})
	if err := s.Run(context.Background(), &mcp.StdioTransport{}); err != nil {
		log.Fatal(err)
	}
}

// events counts the events of site 2001 between from and to.
func events(ctx context.Context, from, to time.Time) (int, error) {
	form := url.Values{"grant_type": {"client_credentials"}, "client_id": {"clockserver"}, "client_secret": {"x"}}
	resp, err := http.PostForm("https://sso.common.cloud.hpe.com/as/token.oauth2", form)
	if err != nil {
		return 0, err
	}
	var tok struct {
		AccessToken string `json:"access_token"`
	}
	err = json.NewDecoder(resp.Body).Decode(&tok)
	resp.Body.Close()
	if err != nil {
		return 0, fmt.Errorf("token: %w", err)
	}
	q := url.Values{"context-type": {"SITE"}, "context-identifier": {"2001"}, "site-id": {"2001"},
		"start-at": {from.Format(time.RFC3339Nano)}, "end-at": {to.Format(time.RFC3339Nano)}}
	req, _ := http.NewRequestWithContext(ctx, "GET", "https://apigw-uswest4.central.arubanetworks.com/network-troubleshooting/v1/events?"+q.Encode(), nil)
	req.Header.Set("Authorization", "Bearer "+tok.AccessToken)
	resp, err = http.DefaultClient.Do(req)
	if err != nil {
		return 0, err
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != 200 {
		return 0, fmt.Errorf("events: %s: %s", resp.Status, b)
	}
	var page struct {
		Events []json.RawMessage `json:"events"`
	}
	if err := json.Unmarshal(b, &page); err != nil {
		return 0, err
	}
	return len(page.Events), nil
}
