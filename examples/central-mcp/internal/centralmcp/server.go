package centralmcp

import (
	"context"
	"fmt"
	"net/http"
	"sort"
	"strings"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// Version is reported in the MCP implementation info.
const Version = "0.1.0"

// Injection names a known regression that can be switched on.
type Injection string

// The known regressions.
const (
	// InjectExtraPagination pages every list with limit=1.
	InjectExtraPagination Injection = "extra-pagination"
	// InjectUngatedWrite skips the write gate and the confirmation.
	InjectUngatedWrite Injection = "ungated-write"
	// InjectLeakSecret returns the WLAN passphrase from get_wlan.
	InjectLeakSecret Injection = "leak-secret"
	// InjectVerboseTools makes every tool description ten times longer.
	InjectVerboseTools Injection = "verbose-tools"
	// InjectRenameTool renames get_client to lookup_client.
	InjectRenameTool Injection = "rename-tool"
	// InjectWrongEndpoint makes get_wlan read the monitoring WLAN endpoint
	// instead of the configuration profile.
	InjectWrongEndpoint Injection = "wrong-endpoint"
	// InjectSlow delays get_device_health by Options.SlowDelay.
	InjectSlow Injection = "slow"
)

// Injections lists every known regression, sorted.
func Injections() []Injection {
	all := []Injection{InjectExtraPagination, InjectUngatedWrite, InjectLeakSecret,
		InjectVerboseTools, InjectRenameTool, InjectWrongEndpoint, InjectSlow}
	sort.Slice(all, func(i, j int) bool { return all[i] < all[j] })
	return all
}

// ParseInjection checks a name given to --inject.
func ParseInjection(name string) (Injection, error) {
	for _, in := range Injections() {
		if string(in) == name {
			return in, nil
		}
	}
	names := make([]string, 0, 7)
	for _, in := range Injections() {
		names = append(names, string(in))
	}
	return "", fmt.Errorf("unknown injection %q (known: %s)", name, strings.Join(names, ", "))
}

// Options configure the server. The zero value of each field is its
// default, filled in by withDefaults.
type Options struct {
	// BaseURL is Central's API gateway, e.g. https://us5.api.central.arubanetworks.com
	// or the fake's http://127.0.0.1:PORT. Required.
	BaseURL string
	// ClientID and ClientSecret are the OAuth2 client credentials.
	ClientID, ClientSecret string
	// TokenURL is the OAuth2 token endpoint. Default DefaultTokenURL.
	TokenURL string
	// HTTPClient makes every Central and token request. Default
	// http.DefaultClient (main passes one with the proxy and CA settings).
	HTTPClient *http.Client
	// Writes opens the write gate. Default false: write tools refuse.
	Writes bool
	// Inject switches on known regressions. Default none.
	Inject []Injection
	// Sleep waits for d or until ctx is done. It is used between polls of
	// an async operation and by the slow regression, so tests can replace
	// it. Default: a timer.
	Sleep func(ctx context.Context, d time.Duration) error
	// PollInterval is the wait between polls of an async operation (the
	// first poll is immediate). Default 1 s.
	PollInterval time.Duration
	// MaxPolls bounds the polls of one async operation. Default 10.
	MaxPolls int
	// SlowDelay is the latency the slow regression adds. Default 2 s.
	SlowDelay time.Duration
}

func (o *Options) withDefaults() Options {
	var out Options
	if o != nil {
		out = *o
	}
	if out.TokenURL == "" {
		out.TokenURL = DefaultTokenURL
	}
	if out.HTTPClient == nil {
		out.HTTPClient = http.DefaultClient
	}
	if out.Sleep == nil {
		out.Sleep = sleepCtx
	}
	if out.PollInterval == 0 {
		out.PollInterval = time.Second
	}
	if out.MaxPolls == 0 {
		out.MaxPolls = 10
	}
	if out.SlowDelay == 0 {
		out.SlowDelay = 2 * time.Second
	}
	return out
}

func sleepCtx(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// server holds what the tool handlers share.
type server struct {
	opts    Options
	central *central
	inject  map[Injection]bool
}

// New returns the MCP server with every tool registered.
func New(opts *Options) (*mcp.Server, error) {
	o := opts.withDefaults()
	if o.BaseURL == "" {
		return nil, fmt.Errorf("central base URL is required (CENTRAL_BASE_URL)")
	}
	s := &server{
		opts: o,
		central: &central{
			base:     strings.TrimRight(o.BaseURL, "/"),
			tokenURL: o.TokenURL,
			id:       o.ClientID,
			secret:   o.ClientSecret,
			hc:       o.HTTPClient,
		},
		inject: map[Injection]bool{},
	}
	for _, in := range o.Inject {
		s.inject[in] = true
	}
	ms := mcp.NewServer(&mcp.Implementation{Name: "central-mcp", Title: "Central MCP (bench reference server)", Version: Version}, nil)
	s.register(ms)
	return ms, nil
}
