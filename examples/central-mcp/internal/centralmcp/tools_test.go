package centralmcp

import (
	"context"
	"encoding/json"
	"flag"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// connect runs the server in memory and returns a client session. A nil
// handler makes every Central request fail the test.
func connect(t *testing.T, opts Options, h http.Handler, copts *mcp.ClientOptions) *mcp.ClientSession {
	t.Helper()
	return connectVersion(t, opts, h, copts, "")
}

// connectVersion is connect with a pinned protocol version ("" = the SDK's
// latest).
func connectVersion(t *testing.T, opts Options, h http.Handler, copts *mcp.ClientOptions, version string) *mcp.ClientSession {
	t.Helper()
	if h == nil {
		h = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			t.Errorf("unexpected Central request %s %s", r.Method, r.URL)
			http.Error(w, "unexpected", http.StatusTeapot)
		})
	}
	ts := httptest.NewServer(h)
	t.Cleanup(ts.Close)
	opts.BaseURL = ts.URL
	opts.TokenURL = ts.URL + "/as/token.oauth2"
	opts.HTTPClient = ts.Client()
	opts.ClientID, opts.ClientSecret = "test-client", "test-secret"
	srv, err := New(&opts)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	ct, st := mcp.NewInMemoryTransports()
	ss, err := srv.Connect(ctx, st, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ss.Close() })
	if copts == nil {
		copts = &mcp.ClientOptions{Capabilities: &mcp.ClientCapabilities{}}
	}
	var sopts *mcp.ClientSessionOptions
	if version != "" {
		sopts = &mcp.ClientSessionOptions{ProtocolVersion: version}
	}
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "test", Version: "0"}, copts).Connect(ctx, ct, sopts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cs.Close() })
	return cs
}

func listTools(t *testing.T, cs *mcp.ClientSession) map[string]*mcp.Tool {
	t.Helper()
	res, err := cs.ListTools(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	m := map[string]*mcp.Tool{}
	for _, tl := range res.Tools {
		m[tl.Name] = tl
	}
	return m
}

// toolKinds is the published tool surface: name -> read, diagnostic,
// write or destructive.
var toolKinds = map[string]string{
	"clear_alerts": "write", "disconnect_client": "destructive", "find_client": "read",
	"get_client": "read", "get_config_health": "read", "get_device_health": "read",
	"get_firmware_status": "read", "get_nac_policy": "read", "get_site_health": "read",
	"get_wlan": "read", "list_alerts": "read", "list_clients": "read", "list_devices": "read",
	"list_sites_health": "read", "list_wlans": "read", "run_show_command": "diagnostic",
	"update_wlan": "write",
}

func kindOf(a *mcp.ToolAnnotations) string {
	switch {
	case a == nil:
		return "none"
	case a.ReadOnlyHint:
		return "read"
	case a.DestructiveHint != nil && *a.DestructiveHint:
		return "destructive"
	default:
		return "write"
	}
}

func TestToolSurface(t *testing.T) {
	tools := listTools(t, connect(t, Options{}, nil, nil))
	got := map[string]string{}
	for name, tl := range tools {
		got[name] = kindOf(tl.Annotations)
		var schema map[string]any
		b, _ := json.Marshal(tl.InputSchema)
		if err := json.Unmarshal(b, &schema); err != nil || schema["type"] != "object" {
			t.Errorf("%s: input schema %s is not an object schema", name, b)
		}
		if props, _ := schema["properties"].(map[string]any); props != nil {
			if l, ok := props["limit"].(map[string]any); ok && (l["maximum"] == nil || l["minimum"] == nil) {
				t.Errorf("%s: limit has no bounds: %v", name, l)
			}
		}
		if len(tl.Description) < 60 || len(tl.Description) > 400 {
			t.Errorf("%s: description is %d chars; want a useful but short one", name, len(tl.Description))
		}
	}
	want := map[string]string{}
	for k, v := range toolKinds {
		if v == "diagnostic" {
			v = "read" // observes only: annotated read-only
		}
		want[k] = v
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("tools and kinds (-want +got):\n%s", diff)
	}
}

func TestInjectedToolRegressions(t *testing.T) {
	base := listTools(t, connect(t, Options{}, nil, nil))

	verbose := listTools(t, connect(t, Options{Inject: []Injection{InjectVerboseTools}}, nil, nil))
	for name, tl := range base {
		if got := len(verbose[name].Description); got < 10*len(tl.Description) {
			t.Errorf("verbose-tools: %s description %d chars, want >= 10x %d", name, got, len(tl.Description))
		}
	}

	renamed := listTools(t, connect(t, Options{Inject: []Injection{InjectRenameTool}}, nil, nil))
	names := func(m map[string]*mcp.Tool) []string {
		var s []string
		for k := range m {
			s = append(s, k)
		}
		sort.Strings(s)
		return s
	}
	if _, ok := renamed["get_client"]; ok {
		t.Errorf("rename-tool: get_client still listed: %v", names(renamed))
	}
	if _, ok := renamed["lookup_client"]; !ok || len(renamed) != len(base) {
		t.Errorf("rename-tool: want lookup_client in place of get_client, got %v", names(renamed))
	}
}

func callText(t *testing.T, cs *mcp.ClientSession, name string, args map[string]any) (string, bool) {
	t.Helper()
	res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: name, Arguments: args})
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	var b strings.Builder
	for _, c := range res.Content {
		if tc, ok := c.(*mcp.TextContent); ok {
			b.WriteString(tc.Text)
		}
	}
	return b.String(), res.IsError
}

// The write gate refuses before any request reaches Central (the nil
// handler fails the test on any request).
func TestWriteGateRefusesWithoutCallingCentral(t *testing.T) {
	cs := connect(t, Options{}, nil, nil)
	for name, args := range map[string]map[string]any{
		"update_wlan":       {"ssid": "Guest-WiFi", "enable": false},
		"clear_alerts":      {"keys": []string{"k1"}},
		"disconnect_client": {"mac": "aa:bb:cc:11:22:33"},
	} {
		text, isErr := callText(t, cs, name, args)
		if !isErr || !strings.Contains(text, "writes_disabled") {
			t.Errorf("%s without writes: %q (isError=%v), want writes_disabled", name, text, isErr)
		}
	}
	// Writes on but a client that cannot confirm: destructive tools refuse.
	cs = connect(t, Options{Writes: true}, nil, nil)
	text, isErr := callText(t, cs, "disconnect_client", map[string]any{"mac": "aa:bb:cc:11:22:33"})
	if !isErr || !strings.Contains(text, "confirmation_unavailable") {
		t.Errorf("disconnect without elicitation: %q (isError=%v), want confirmation_unavailable", text, isErr)
	}
}

var update = flag.Bool("update", false, "rewrite testdata goldens")

// The tool definitions are part of every recorded trace: a change to any
// of them makes stored runs miss on replay. The golden makes such a change
// visible in review. Regenerate with go test -run ToolsGolden -update.
func TestToolsGolden(t *testing.T) {
	res, err := connect(t, Options{}, nil, nil).ListTools(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	sort.Slice(res.Tools, func(i, j int) bool { return res.Tools[i].Name < res.Tools[j].Name })
	got, err := json.MarshalIndent(res.Tools, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	got = append(got, '\n')
	golden := filepath.Join("testdata", "tools.json")
	if *update {
		if err := os.MkdirAll("testdata", 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(golden, got, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(golden)
	if err != nil {
		t.Fatalf("%v (run with -update to create it)", err)
	}
	if diff := cmp.Diff(string(want), string(got)); diff != "" {
		t.Errorf("tool definitions changed (-want +got); if intended, run with -update:\n%s", diff)
	}
}
