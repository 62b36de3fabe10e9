package recorder

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/mcpbench/bench/scenarios"
)

func TestParseProfile(t *testing.T) {
	cases := []struct {
		name, file, data, entry string
		want                    *Profile
		err                     string
		why                     string
	}{
		{
			name: "yaml", file: "servers/x.yaml",
			data: "name: x\ncommand: [go, run, ./x]\nenv: {A: \"{central_url}\"}\nwrites_env: {W: \"1\"}\nadapter: {rename: {a: b}}\n",
			want: &Profile{Name: "x", Transport: "stdio", Command: []string{"go", "run", "./x"}, Cwd: ".",
				Env: map[string]string{"A": "{central_url}"}, WritesEnv: map[string]string{"W": "1"},
				StartTimeout: Duration(DefaultStartTimeout), ProtocolVersion: DefaultProtocolVersion,
				Adapter: Adapter{Rename: map[string]string{"a": "b"}}},
			why: "defaults are filled: stdio, cwd '.', 60s, protocol 2025-11-25",
		},
		{
			name: "http", file: "p.yaml",
			data: "name: h\ntransport: http\ncommand: [srv, --port, \"{port}\"]\nurl: http://127.0.0.1:{port}/mcp\nready: http://127.0.0.1:{port}/readyz\nstart_timeout: 5s\n",
			want: &Profile{Name: "h", Transport: "http", Command: []string{"srv", "--port", "{port}"}, Cwd: ".",
				URL: "http://127.0.0.1:{port}/mcp", Ready: "http://127.0.0.1:{port}/readyz", StartTimeout: Duration(5 * time.Second),
				ProtocolVersion: DefaultProtocolVersion},
			why: "an http profile keeps its templated url and ready",
		},
		{
			name: "mcpServers", file: "claude.json",
			data: `{"mcpServers": {"everything": {"command": "node", "args": ["index.js", "stdio"], "env": {"K": "v"}}}}`,
			want: &Profile{Name: "everything", Repo: "local", Transport: "stdio", Command: []string{"node", "index.js", "stdio"}, Cwd: ".",
				Env: map[string]string{"K": "v"}, StartTimeout: Duration(DefaultStartTimeout), ProtocolVersion: DefaultProtocolVersion},
			why: "the one entry of an mcpServers file is taken without #NAME",
		},
		{
			name: "mcpServers-pick", file: "c.json", entry: "b",
			data: `{"mcpServers": {"a": {"command": "x"}, "b": {"type": "http", "url": "http://127.0.0.1:9/mcp"}}}`,
			want: &Profile{Name: "b", Repo: "local", Transport: "http", Cwd: ".", URL: "http://127.0.0.1:9/mcp",
				StartTimeout: Duration(DefaultStartTimeout), ProtocolVersion: DefaultProtocolVersion},
			why: "#NAME picks an entry; an http entry needs no command (a running server)",
		},
		{name: "ambiguous", file: "c.json", data: `{"mcpServers": {"a": {"command": "x"}, "b": {"command": "y"}}}`,
			err: "holds 2 servers (a, b): name one as c.json#NAME", why: "several entries need #NAME"},
		{name: "unknown-field", file: "p.yaml", data: "name: x\ncommand: [x]\ncomand: [y]\n",
			err: `unknown field "comand" (did you mean "command"?)`, why: "typos in a profile are errors"},
		{name: "shell-string", file: "p.yaml", data: "name: x\ncommand: go run ./x\n",
			err: "cannot unmarshal", why: "command is an argv list, never a shell string"},
		{name: "no-command", file: "p.yaml", data: "name: x\n",
			err: "command: required", why: "stdio needs a command"},
		{name: "bad-template", file: "p.yaml", data: "name: x\ncommand: [x]\nenv: {A: \"{centrl_url}\"}\n",
			err: "unknown template variable {centrl_url}", why: "a misspelt variable fails at load time"},
		{name: "bad-format", file: "p.yaml", data: "format: 2\nname: x\ncommand: [x]\n",
			err: "profile format 1", why: "unknown format versions are refused"},
		{name: "route-half", file: "p.yaml", data: "name: x\ncommand: [x]\nadapter:\n  routes:\n    - {tool: invoke_tool, name: name}\n",
			err: "adapter.routes[0].arguments: required", why: "a router route needs both of its arguments"},
		{name: "route-mixed", file: "p.yaml", data: "name: x\ncommand: [x]\nadapter: {routes: [{tool: t, name: n, arguments: a, code: c}]}\n",
			err: "adapter.routes[0]: name/arguments (a router) and code/call/language (a code block) do not mix", why: "a route is a router or a code block"},
		{name: "route-code", file: "p.yaml", data: "name: x\ncommand: [x]\nadapter: {routes: [{tool: execute, code: code, call: \"call_tool({name})\", language: lua}]}\n",
			err: "adapter.routes[0].language: \"lua\" is not one of python", why: "a code route's template names both values, in a known language"},
		{name: "route-empty", file: "p.yaml", data: "name: x\ncommand: [x]\nadapter: {routes: [{tool: execute}]}\n",
			err: "give name and arguments (a router tool) or code, call and language", why: "a route says how"},
		{name: "bad-duration", file: "p.yaml", data: "name: x\ncommand: [x]\nstart_timeout: soon\n",
			err: "not a duration", why: "durations are Go durations"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got, err := ParseProfile(c.file, []byte(c.data), c.entry)
			if c.err != "" {
				if err == nil || !strings.Contains(err.Error(), c.err) {
					t.Fatalf("%s: error %v, want one containing %q", c.why, err, c.err)
				}
				return
			}
			if err != nil {
				t.Fatalf("%s: %v", c.why, err)
			}
			got.File, got.Dir = "", ""
			if d := cmp.Diff(c.want, got, cmpopts.IgnoreUnexported(Profile{})); d != "" {
				t.Errorf("%s (-want +got):\n%s", c.why, d)
			}
		})
	}
}

// TestReferenceProfile keeps the shipped profile loading.
func TestReferenceProfile(t *testing.T) {
	p, err := LoadProfile("../servers/reference.yaml")
	if err != nil {
		t.Fatal(err)
	}
	root, _ := filepath.Abs("..")
	if p.WorkDir() != root {
		t.Errorf("servers/reference.yaml runs in %s, want the repository root %s", p.WorkDir(), root)
	}
	if got := strings.Join(p.WriteGateVars(), " "); got != "CENTRAL_WRITES=1" {
		t.Errorf("write gate %q", got)
	}
	if _, err := os.Stat(filepath.Join(p.WorkDir(), "examples/central-mcp")); err != nil {
		t.Error(err)
	}
}

func TestVarsExpand(t *testing.T) {
	v := Vars{CentralURL: "http://127.0.0.1:1", ProxyURL: "http://127.0.0.1:2", CAFile: "/tmp/ca.pem", TokenURL: "http://t", Port: 9, Writes: true}
	got := v.Expand("{central_url} {proxy_url} {ca_file} {token_url} {port} {writes} {other}")
	want := "http://127.0.0.1:1 http://127.0.0.1:2 /tmp/ca.pem http://t 9 1 {other}"
	if got != want {
		t.Errorf("Expand = %q, want %q", got, want)
	}
}

// TestProfileNameIsOneLine: a server name with a control or bidi
// character (a NUL would split the store's keys; a newline would start a
// line of a report) is refused, naming the field. (Raw control bytes and
// bytes that are not UTF-8 the YAML parser refuses itself.)
func TestProfileNameIsOneLine(t *testing.T) {
	for _, name := range []string{"a\x00b", "a\nb", "x\x1b[2J", "evil\u202etxt", "a\u2066b"} {
		q, _ := json.Marshal(name)
		_, err := ParseProfile("p.yaml", []byte("name: "+string(q)+"\ncommand: [x]\n"), "")
		if err == nil || !strings.Contains(err.Error(), "name: character") {
			t.Errorf("name %q: error %v", name, err)
		}
	}
	if _, err := ParseProfile("p.yaml", []byte("name: central-mcp (dev) é\ncommand: [x]\n"), ""); err != nil {
		t.Errorf("a plain name: %v", err)
	}
}

// TestProfileTooLarge: a profile over MaxProfileBytes is refused with an
// error naming the file and the limit, without reading it all.
func TestProfileTooLarge(t *testing.T) {
	path := filepath.Join(t.TempDir(), "big.yaml")
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	f.WriteString("name: big\ncommand: [x]\n# ")
	f.Truncate(1 << 30) // sparse: 1 GiB without the disk
	f.Close()
	_, err = LoadProfile(path)
	if err == nil || !strings.Contains(err.Error(), path) || !strings.Contains(err.Error(), "4 MiB") {
		t.Errorf("error %v", err)
	}
}

// TestOraclePlanThroughRoutes: each step of the plan carries the calls that
// reach it through the profile's routes, a reads-only route only for a tool
// annotated read-only, a code block with Python literals.
func TestOraclePlanThroughRoutes(t *testing.T) {
	routes := []Route{
		{Tool: "invoke_read_tool", Name: "name", Arguments: "arguments", ReadsOnly: true},
		{Tool: "invoke_tool", Name: "name", Arguments: "arguments"},
		{Tool: "execute", Code: "code", Call: "return await call_tool({name}, {arguments})", Language: "python"},
	}
	sc := &scenarios.Scenario{ID: "s-001", WriteGate: scenarios.GateRead,
		ExpectedTools:  map[string][]string{"x": {"find_client"}},
		ExpectedParams: map[string]map[string]*scenarios.ParamRule{"find_client": {"mac": {Equals: "aa"}, "all": {Equals: true}, "none": {Equals: nil}}},
	}
	readOnly := func(tool string) bool { return tool == "find_client" }
	plan, _, err := OraclePlan(sc, "x", routes, readOnly)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, v := range plan[0].Via {
		got = append(got, v.Tool+" "+string(v.Arguments))
	}
	want := []string{
		`invoke_read_tool {"arguments":{"all":true,"mac":"aa"},"name":"find_client"}`,
		`invoke_tool {"arguments":{"all":true,"mac":"aa"},"name":"find_client"}`,
		`execute {"code":"return await call_tool(\"find_client\", {\"all\": True, \"mac\": \"aa\"})"}`,
	}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("routes of a read-only tool (-want +got):\n%s", d)
	}
	for _, ro := range []func(string) bool{nil, func(string) bool { return false }} {
		plan, _, _ = OraclePlan(sc, "x", routes, ro)
		if len(plan[0].Via) != 2 || plan[0].Via[0].Tool != "invoke_tool" {
			t.Errorf("a tool not known read-only takes no reads-only route: %+v", plan[0].Via)
		}
	}
}
