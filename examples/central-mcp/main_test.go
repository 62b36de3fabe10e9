package main

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/mcpbench/bench/fakecentral"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"gopkg.in/yaml.v3"
)

// End-to-end tests: the built binary, over stdio and streamable HTTP,
// against the fake Central, with the token fetched from the hard-coded HPE
// SSO URL through the fake's CONNECT proxy and per-run CA.

var binPath string

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "central-mcp-test-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	binPath = filepath.Join(dir, "central-mcp")
	if out, err := exec.Command("go", "build", "-o", binPath, ".").CombinedOutput(); err != nil {
		fmt.Fprintf(os.Stderr, "building central-mcp: %v\n%s", err, out)
		os.RemoveAll(dir)
		os.Exit(1)
	}
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

func startFake(t *testing.T) *fakecentral.Server {
	t.Helper()
	s, err := fakecentral.Start(nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

// serverEnv is the child's whole environment: nothing leaks in from the
// test's own.
func serverEnv(fake *fakecentral.Server, writes bool) []string {
	env := append(fake.Env(),
		"CENTRAL_BASE_URL="+fake.BaseURL,
		"CENTRAL_CLIENT_ID=bench-test",
		"CENTRAL_CLIENT_SECRET=bench-test-secret",
	)
	if writes {
		env = append(env, "CENTRAL_WRITES=1")
	}
	return env
}

// syncBuffer collects a child's stderr for failure messages.
type syncBuffer struct {
	mu sync.Mutex
	b  strings.Builder
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

func clientOptions(elicit string) *mcp.ClientOptions {
	o := &mcp.ClientOptions{Capabilities: &mcp.ClientCapabilities{}}
	if elicit != "" {
		o.ElicitationHandler = func(ctx context.Context, req *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
			if elicit == "accept" {
				return &mcp.ElicitResult{Action: "accept", Content: map[string]any{"confirm": true}}, nil
			}
			return &mcp.ElicitResult{Action: "decline"}, nil
		}
	}
	return o
}

var sessionOpts = &mcp.ClientSessionOptions{ProtocolVersion: "2025-11-25"}

// stdioSession starts the binary over stdio. elicit is "accept",
// "decline" or "" (no elicitation capability).
func stdioSession(t *testing.T, env []string, elicit string, args ...string) *mcp.ClientSession {
	t.Helper()
	cmd := exec.Command(binPath, args...)
	cmd.Env = env
	stderr := &syncBuffer{}
	cmd.Stderr = stderr
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "e2e", Version: "0"}, clientOptions(elicit)).
		Connect(ctx, &mcp.CommandTransport{Command: cmd, TerminateDuration: 5 * time.Second}, sessionOpts)
	if err != nil {
		t.Fatalf("connecting over stdio: %v\nstderr:\n%s", err, stderr)
	}
	t.Cleanup(func() {
		if err := cs.Close(); err != nil {
			t.Errorf("closing the stdio session: %v\nstderr:\n%s", err, stderr)
		}
	})
	return cs
}

// httpServer starts the binary over streamable HTTP on a free 127.0.0.1
// port and returns its MCP endpoint once it listens.
func httpServer(t *testing.T, env []string, args ...string) string {
	t.Helper()
	cmd := exec.Command(binPath, append([]string{"--transport", "http", "--addr", "127.0.0.1:0"}, args...)...)
	cmd.Env = env
	pipe, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		cmd.Process.Signal(os.Interrupt)
		cmd.Wait()
	})
	found := make(chan string, 1)
	stderr := &syncBuffer{}
	go func() {
		sc := bufio.NewScanner(pipe)
		for sc.Scan() {
			line := sc.Text()
			fmt.Fprintln(stderr, line)
			if _, u, ok := strings.Cut(line, "listening on "); ok {
				found <- u
			}
		}
	}()
	select {
	case u := <-found:
		return u
	case <-time.After(30 * time.Second):
		t.Fatalf("the HTTP server did not report its address; stderr:\n%s", stderr)
		return ""
	}
}

func httpSession(t *testing.T, endpoint, elicit string) *mcp.ClientSession {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "e2e", Version: "0"}, clientOptions(elicit)).
		Connect(ctx, &mcp.StreamableClientTransport{Endpoint: endpoint}, sessionOpts)
	if err != nil {
		t.Fatalf("connecting over HTTP: %v", err)
	}
	t.Cleanup(func() { cs.Close() })
	return cs
}

func call(t *testing.T, cs *mcp.ClientSession, name string, args map[string]any) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: name, Arguments: args})
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	var b strings.Builder
	for _, c := range res.Content {
		if tc, ok := c.(*mcp.TextContent); ok {
			b.WriteString(tc.Text)
		}
	}
	return b.String()
}

// journal lists "METHOD host+path" for every request the fake saw.
func journal(fake *fakecentral.Server) []string {
	var out []string
	for _, e := range fake.Journal() {
		out = append(out, e.Method+" "+e.Host+e.Path)
	}
	return out
}

const (
	tokenViaProxy = "POST sso.common.cloud.hpe.com/as/token.oauth2"
	getClient     = "GET /network-monitoring/v1/clients/aa:bb:cc:00:00:01"
	disconnect    = "POST /network-troubleshooting/v1/aps/CNAPA0101/disconnectUserByMacAddress"
)

// exercise runs the same checks over any transport: a read through the SSO
// proxy, then a destructive call confirmed in one session and declined in
// another.
func exercise(t *testing.T, fake *fakecentral.Server, open func(elicit string) *mcp.ClientSession) {
	accepting := open("accept")
	tools, err := accepting.ListTools(context.Background(), nil)
	if err != nil || len(tools.Tools) != 17 {
		t.Fatalf("tools/list: %d tools, %v; want 17", len(tools.Tools), err)
	}
	if out := call(t, accepting, "get_client", map[string]any{"mac": "aa:bb:cc:00:00:01"}); !strings.Contains(out, "asmith-laptop") {
		t.Errorf("get_client: %s", out)
	}
	if diff := cmp.Diff([]string{tokenViaProxy, getClient}, journal(fake)); diff != "" {
		t.Errorf("journal after get_client (-want +got):\n%s", diff)
	}

	fake.Reset()
	if out := call(t, accepting, "disconnect_client", map[string]any{"mac": "aa:bb:cc:00:00:01"}); !strings.Contains(out, "CNAPA0101") {
		t.Errorf("confirmed disconnect_client: %s", out)
	}
	if diff := cmp.Diff([]string{getClient, disconnect}, journal(fake)); diff != "" {
		t.Errorf("journal after a confirmed disconnect (-want +got):\n%s", diff)
	}

	fake.Reset()
	declining := open("decline")
	if out := call(t, declining, "disconnect_client", map[string]any{"mac": "aa:bb:cc:00:00:01"}); !strings.Contains(out, "cancelled") {
		t.Errorf("declined disconnect_client: %s", out)
	}
	if got := journal(fake); len(got) != 0 {
		t.Errorf("a declined disconnect reached Central: %q", got)
	}
}

func TestStdioEndToEnd(t *testing.T) {
	fake := startFake(t)
	env := serverEnv(fake, true)
	exercise(t, fake, func(elicit string) *mcp.ClientSession { return stdioSession(t, env, elicit) })
}

func TestHTTPEndToEnd(t *testing.T) {
	fake := startFake(t)
	endpoint := httpServer(t, serverEnv(fake, true))
	resp, err := http.Get(strings.TrimSuffix(endpoint, "/mcp") + "/readyz")
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("/readyz: %d %s", resp.StatusCode, body)
	}
	exercise(t, fake, func(elicit string) *mcp.ClientSession { return httpSession(t, endpoint, elicit) })
}

// The --inject flag reaches the server: the renamed tool is listed and a
// list pages with limit=1.
func TestInjectFlag(t *testing.T) {
	fake := startFake(t)
	cs := stdioSession(t, serverEnv(fake, false), "", "--inject", "rename-tool", "--inject", "extra-pagination")
	tools, err := cs.ListTools(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, tl := range tools.Tools {
		names = append(names, tl.Name)
	}
	if !strings.Contains(strings.Join(names, " "), "lookup_client") {
		t.Errorf("rename-tool: tools %v lack lookup_client", names)
	}
	call(t, cs, "list_devices", map[string]any{"limit": 2})
	want := []string{tokenViaProxy,
		"GET /network-monitoring/v1/device-inventory",
		"GET /network-monitoring/v1/device-inventory"}
	if diff := cmp.Diff(want, journal(fake)); diff != "" {
		t.Errorf("extra-pagination journal (-want +got):\n%s", diff)
	}
	for _, e := range fake.Journal()[1:] {
		if !strings.Contains(e.Query, "limit=1") {
			t.Errorf("page request %s?%s, want limit=1", e.Path, e.Query)
		}
	}
}

func TestBadFlagsExitWithUsage(t *testing.T) {
	for _, args := range [][]string{{"--inject", "nope"}, {"--transport", "carrier-pigeon"}} {
		cmd := exec.Command(binPath, args...)
		cmd.Env = []string{"CENTRAL_BASE_URL=http://127.0.0.1:1"}
		out, err := cmd.CombinedOutput()
		if ee, ok := err.(*exec.ExitError); !ok || ee.ExitCode() != 2 {
			t.Errorf("%v: err %v, want exit code 2; output:\n%s", args, err, out)
		}
	}
}

// servers/reference.yaml, templated as the recorder does, starts a server
// that reaches the fake (the binary stands in for its go run command).
func TestReferenceProfile(t *testing.T) {
	data, err := os.ReadFile(filepath.Join("..", "..", "servers", "reference.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	var prof struct {
		Name      string            `yaml:"name"`
		Transport string            `yaml:"transport"`
		Command   []string          `yaml:"command"`
		Env       map[string]string `yaml:"env"`
		WritesEnv map[string]string `yaml:"writes_env"`
	}
	if err := yaml.Unmarshal(data, &prof); err != nil {
		t.Fatal(err)
	}
	if prof.Name != "reference" || prof.Transport != "stdio" || strings.Join(prof.Command, " ") != "go run ./examples/central-mcp" {
		t.Errorf("profile name/transport/command = %q %q %q", prof.Name, prof.Transport, prof.Command)
	}
	if diff := cmp.Diff(map[string]string{"CENTRAL_WRITES": "1"}, prof.WritesEnv); diff != "" {
		t.Errorf("writes_env (-want +got):\n%s", diff)
	}
	fake := startFake(t)
	vars := strings.NewReplacer("{central_url}", fake.BaseURL, "{token_url}", fake.TokenURL,
		"{proxy_url}", fake.ProxyURL, "{ca_file}", fake.CAFile)
	var env []string
	for k, v := range prof.Env {
		env = append(env, k+"="+vars.Replace(v))
	}
	cs := stdioSession(t, env, "")
	call(t, cs, "get_client", map[string]any{"mac": "aa:bb:cc:00:00:01"})
	if diff := cmp.Diff([]string{tokenViaProxy, getClient}, journal(fake)); diff != "" {
		t.Errorf("journal (-want +got):\n%s", diff)
	}
}
