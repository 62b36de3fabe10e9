// Command central-mcp is bench's reference MCP server for HPE Aruba
// Networking Central: a small, real server on the official Go SDK, over
// stdio or streamable HTTP, with switches that inject known regressions.
// See README.md.
package main

import (
	"cmp"
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"

	"github.com/mcpbench/bench/examples/central-mcp/internal/centralmcp"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"golang.org/x/net/http/httpproxy"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	os.Exit(run(ctx, os.Args[1:], os.Getenv, os.Stderr))
}

// injectFlag collects repeated --inject values.
type injectFlag []centralmcp.Injection

func (f *injectFlag) String() string { return fmt.Sprint(*f) }
func (f *injectFlag) Set(v string) error {
	for _, name := range strings.Split(v, ",") {
		in, err := centralmcp.ParseInjection(strings.TrimSpace(name))
		if err != nil {
			return err
		}
		*f = append(*f, in)
	}
	return nil
}

// run is the whole program; it returns the exit code.
func run(ctx context.Context, args []string, getenv func(string) string, stderr io.Writer) int {
	fs := flag.NewFlagSet("central-mcp", flag.ContinueOnError)
	fs.SetOutput(stderr)
	var inject injectFlag
	fs.Var(&inject, "inject", "switch on a known regression (repeatable): "+injectionNames())
	transport := fs.String("transport", envOr(getenv, "MCP_TRANSPORT", "stdio"), "stdio or http (env MCP_TRANSPORT)")
	addr := fs.String("addr", envOr(getenv, "MCP_ADDR", "127.0.0.1:8000"), "listen address for http (env MCP_ADDR); port 0 picks one")
	slow := fs.Duration("slow-delay", 2*time.Second, "latency added by --inject slow")
	poll := fs.Duration("poll-interval", time.Second, "wait between polls of an async operation")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	if v := getenv("CENTRAL_INJECT"); v != "" {
		if err := inject.Set(v); err != nil {
			fmt.Fprintf(stderr, "central-mcp: CENTRAL_INJECT: %v\n", err)
			return 2
		}
	}
	srv, err := newServer(getenv, inject, *poll, *slow)
	if err != nil {
		fmt.Fprintf(stderr, "central-mcp: %v\n", err)
		return 2
	}
	switch *transport {
	case "stdio":
		err = srv.Run(ctx, &mcp.StdioTransport{})
	case "http":
		err = serveHTTP(ctx, srv, *addr, stderr)
	default:
		fmt.Fprintf(stderr, "central-mcp: unknown transport %q (stdio or http)\n", *transport)
		return 2
	}
	if err != nil && !errors.Is(err, context.Canceled) {
		fmt.Fprintf(stderr, "central-mcp: %v\n", err)
		return 1
	}
	return 0
}

// newServer builds the server from its environment (CENTRAL_*,
// SSL_CERT_FILE and the proxy variables).
func newServer(getenv func(string) string, inject []centralmcp.Injection, poll, slow time.Duration) (*mcp.Server, error) {
	hc, err := httpClient(getenv)
	if err != nil {
		return nil, err
	}
	return centralmcp.New(&centralmcp.Options{
		BaseURL:      getenv("CENTRAL_BASE_URL"),
		ClientID:     getenv("CENTRAL_CLIENT_ID"),
		ClientSecret: getenv("CENTRAL_CLIENT_SECRET"),
		TokenURL:     getenv("CENTRAL_TOKEN_URL"),
		HTTPClient:   hc,
		Writes:       getenv("CENTRAL_WRITES") == "1" || strings.EqualFold(getenv("CENTRAL_WRITES"), "true"),
		Inject:       inject,
		PollInterval: poll,
		SlowDelay:    slow,
	})
}

func envOr(getenv func(string) string, k, def string) string {
	if v := getenv(k); v != "" {
		return v
	}
	return def
}

func injectionNames() string {
	var names []string
	for _, in := range centralmcp.Injections() {
		names = append(names, string(in))
	}
	return strings.Join(names, ", ")
}

// httpClient honours HTTPS_PROXY/HTTP_PROXY/NO_PROXY and trusts the CAs in
// SSL_CERT_FILE on top of the system ones, like the Python servers do, so
// the hard-coded SSO token URL can be served by a test proxy.
func httpClient(getenv func(string) string) (*http.Client, error) {
	certFile := getenv("SSL_CERT_FILE")
	tr := http.DefaultTransport.(*http.Transport).Clone()
	// The proxy variables of getenv, read as net/http reads the process's.
	proxy := (&httpproxy.Config{
		HTTPProxy:  cmp.Or(getenv("HTTP_PROXY"), getenv("http_proxy")),
		HTTPSProxy: cmp.Or(getenv("HTTPS_PROXY"), getenv("https_proxy")),
		NoProxy:    cmp.Or(getenv("NO_PROXY"), getenv("no_proxy")),
	}).ProxyFunc()
	tr.Proxy = func(r *http.Request) (*url.URL, error) { return proxy(r.URL) }
	if certFile != "" {
		pool, err := x509.SystemCertPool()
		if err != nil || pool == nil {
			pool = x509.NewCertPool()
		}
		pem, err := os.ReadFile(certFile)
		if err != nil {
			return nil, fmt.Errorf("reading SSL_CERT_FILE: %w", err)
		}
		if !pool.AppendCertsFromPEM(pem) {
			return nil, fmt.Errorf("SSL_CERT_FILE %s holds no PEM certificates", certFile)
		}
		tr.TLSClientConfig = &tls.Config{RootCAs: pool, MinVersion: tls.VersionTLS12}
	}
	return &http.Client{Transport: tr, Timeout: 60 * time.Second}, nil
}

// serveHTTP serves MCP at /mcp (streamable HTTP) and readiness at /readyz
// and /livez, and prints the address it listens on.
func serveHTTP(ctx context.Context, srv *mcp.Server, addr string, stderr io.Writer) error {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return fmt.Errorf("listening on %s: %w", addr, err)
	}
	mux := http.NewServeMux()
	mux.Handle("/mcp", mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return srv }, nil))
	ok := func(w http.ResponseWriter, _ *http.Request) { io.WriteString(w, "ok\n") }
	mux.HandleFunc("GET /readyz", ok)
	mux.HandleFunc("GET /livez", ok)
	hs := &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}
	fmt.Fprintf(stderr, "central-mcp: listening on http://%s/mcp\n", ln.Addr())
	errc := make(chan error, 1)
	go func() { errc <- hs.Serve(ln) }()
	select {
	case err := <-errc:
		return err
	case <-ctx.Done():
		sctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		defer cancel()
		hs.Shutdown(sctx)
		return nil
	}
}
