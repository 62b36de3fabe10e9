package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/spf13/cobra"

	"github.com/mcpbench/bench/fakecentral"
	"github.com/mcpbench/bench/internal/atomicfile"
)

type fakeServeOptions struct {
	fixture      string
	addr         string
	proxyAddr    string
	journal      string
	clientID     string
	clientSecret string
	force401     int
	asyncPolls   int
	pageSize     int
	rateLimits   []string // ROUTE=N
	quiet        bool
}

func newFakeCmd(a *app) *cobra.Command {
	fake := &cobra.Command{
		Use:   "fake",
		Short: "Run the deterministic fake Central",
		Args:  cobra.NoArgs,
	}
	var opts fakeServeOptions
	serve := &cobra.Command{
		Use:   "serve",
		Short: "Serve the fake Central on 127.0.0.1 until interrupted",
		Long: `Serve the fake HPE Aruba Networking Central on 127.0.0.1, with its HTTPS
interception proxy, until Ctrl-C. It needs no credentials and no network.

It prints the base URL, the token URL, the proxy URL, the per-run CA file and
the environment lines to give a server under test, then logs one line per
request on stderr. On exit it writes the journal (every request, as JSON
lines) to --journal if given.

Pointing an MCP server at it:

  1. Base URL: set the server's Central base URL to the printed BASE_URL
     (http://127.0.0.1:PORT), e.g. CENTRAL_BASE_URL=$BASE_URL. Paths are
     served at the root: /network-monitoring/v1/..., /network-config/v1/...
  2. Credentials: any client id and secret work (unless --client-id is set).
     Tokens come from POST $BASE_URL/oauth2/token or /as/token.oauth2
     (grant_type=client_credentials, HTTP Basic or form credentials).
  3. A server whose token URL is hard-coded to
     https://sso.common.cloud.hpe.com/as/token.oauth2 (all three compared
     servers) reaches the fake through the proxy: export the printed lines
     (HTTPS_PROXY, SSL_CERT_FILE, REQUESTS_CA_BUNDLE, NO_PROXY, ...) in the
     server's environment. The proxy terminates TLS for the SSO host and the
     *.central.arubanetworks.com API hosts with a CA made for this run;
     any other host is refused and journaled as an egress attempt.
  4. A server that caches tokens can be pre-seeded with FAKECENTRAL_TOKEN:
     the fake always accepts it.

Fixtures: site-a (default), campus, incident, branches, or a directory
holding fixture.yaml; see fakecentral/fixtures/README.md for every entity
id.`,
		Example: `  bench fake serve
  bench fake serve --fixture campus --addr 127.0.0.1:8080 --journal journal.jsonl`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return runFakeServe(cmd.Context(), a, opts)
		},
	}
	f := serve.Flags()
	f.StringVar(&opts.fixture, "fixture", "site-a", "embedded fixture name (site-a, campus, incident, branches) or a directory holding fixture.yaml")
	f.StringVar(&opts.addr, "addr", "127.0.0.1:0", "API listen address (loopback only)")
	f.StringVar(&opts.proxyAddr, "proxy-addr", "127.0.0.1:0", "interception proxy listen address (loopback only)")
	f.StringVar(&opts.journal, "journal", "", "write the journal as JSON lines to this file on exit")
	f.StringVar(&opts.clientID, "client-id", "", "accept only this client id (default: any)")
	f.StringVar(&opts.clientSecret, "client-secret", "", "the secret that goes with --client-id")
	intVarMin(f, &opts.force401, "force-401", 0, 0, "answer the first N authenticated API requests with 401 (exercises token refresh)")
	intVarMin(f, &opts.asyncPolls, "async-polls", 0, 0, "polls of an async operation that answer RUNNING before COMPLETED")
	intVarMin(f, &opts.pageSize, "page-size", 0, 0, "answer at most N items per list page, whatever limit a request asks (0: the documented limits); a scenario's page_size")
	f.StringArrayVar(&opts.rateLimits, "rate-limit", nil, `ROUTE=N[/WINDOW]: answer 429, with the documented rate-limit headers, once N calls matching ROUTE were served; with a WINDOW the limit resets that long after it was spent, then N more calls go through ("GET /network-notifications/*=5", "GET /network-monitoring/*=100/1m"; repeatable)`)
	f.BoolVar(&opts.quiet, "quiet", false, "do not log requests")
	fake.AddCommand(serve)
	return fake
}

// lockedWriter serialises the request log: requests are served concurrently.
type lockedWriter struct {
	mu sync.Mutex
	w  io.Writer
}

func (l *lockedWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(p)
}

func runFakeServe(ctx context.Context, a *app, opts fakeServeOptions) error {
	if opts.force401 < 0 || opts.asyncPolls < 0 || opts.pageSize < 0 {
		return usageErr(errors.New("fake serve: --force-401, --async-polls and --page-size must not be negative"))
	}
	if (opts.clientID == "") != (opts.clientSecret == "") {
		return usageErr(errors.New("fake serve: --client-id and --client-secret go together"))
	}
	fx, err := fakecentral.LoadFixture(opts.fixture)
	if err != nil {
		return usageErr(fmt.Errorf("fake serve: %w", err))
	}
	fo := &fakecentral.Options{Fixture: fx, ClientID: opts.clientID, ClientSecret: opts.clientSecret,
		Force401: opts.force401, AsyncPolls: opts.asyncPolls, PageSize: opts.pageSize}
	for _, rl := range opts.rateLimits {
		f, err := parseRateLimit(rl)
		if err != nil {
			return usageErr(fmt.Errorf("fake serve: --rate-limit %q: %w", rl, err))
		}
		fo.Faults = append(fo.Faults, f)
	}
	if !opts.quiet {
		fo.Log = &lockedWriter{w: a.stderr}
	}
	s, err := fakecentral.StartServer(fo, &fakecentral.ServerOptions{Addr: opts.addr, ProxyAddr: opts.proxyAddr})
	if err != nil {
		if strings.Contains(err.Error(), "loopback only") {
			return usageErr(fmt.Errorf("fake serve: %w", err))
		}
		return setupErr(fmt.Errorf("fake serve: %w", err))
	}
	defer s.Close()
	w := a.stdout
	fmt.Fprintf(w, "fake Central serving fixture %s (%s)\n", fx.Name, fx.Version())
	fmt.Fprintf(w, "BASE_URL=%s\nTOKEN_URL=%s\nPROXY_URL=%s\nCA_FILE=%s\n", s.BaseURL, s.TokenURL, s.ProxyURL, s.CAFile)
	fmt.Fprintf(w, "\n# environment for the server under test (also set its Central base URL to BASE_URL):\n")
	for _, e := range s.Env() {
		fmt.Fprintf(w, "export %s\n", e)
	}
	fmt.Fprintf(w, "\n# serving until interrupted (Ctrl-C)\n")
	<-ctx.Done()
	if opts.journal != "" {
		if err := writeJournalFile(opts.journal, s.Header(), s.Journal()); err != nil {
			return setupErr(fmt.Errorf("fake serve: %w", err))
		}
		fmt.Fprintf(a.stderr, "journal: %d requests written to %s\n", len(s.Journal()), opts.journal)
	}
	return nil
}

// writeJournalFile writes the journal whole into a new file renamed into
// place (atomicfile): a symlink at path is replaced, not followed.
func writeJournalFile(path string, h fakecentral.JournalHeader, entries []fakecentral.Entry) error {
	return atomicfile.Write(path, 0o644, func(w io.Writer) error { return fakecentral.WriteJournal(w, h, entries) })
}

// parseRateLimit reads ROUTE=N or ROUTE=N/WINDOW.
func parseRateLimit(s string) (fakecentral.Fault, error) {
	bad := errors.New(`want ROUTE=N or ROUTE=N/WINDOW, such as "GET /network-notifications/*=5" or "GET /network-monitoring/*=100/1m"`)
	route, spec, ok := strings.Cut(s, "=")
	n, window, windowed := strings.Cut(spec, "/")
	calls, err := strconv.Atoi(n)
	if !ok || err != nil || calls < 0 || strings.TrimSpace(route) == "" {
		return fakecentral.Fault{}, bad
	}
	f := fakecentral.Fault{Route: strings.TrimSpace(route), Kind: fakecentral.Fault429, After: calls}
	if windowed {
		d, err := time.ParseDuration(window)
		if err != nil || d <= 0 {
			return fakecentral.Fault{}, fmt.Errorf("window %q: want a duration such as 30s or 1m", window)
		}
		f.ResetAfter = d
	}
	return f, nil
}
