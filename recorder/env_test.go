package recorder

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/mcpbench/bench/llm"
	"github.com/mcpbench/bench/traces"
)

// The user's shell in these tests: secrets whose names match no pattern
// of credentials, a proxy, and harmless settings.
const (
	testPAT = "ghp_0123456789abcdefghijABCDEFGHIJ012345"
	testDSN = "postgres://u:hunter2secret@h/db?sslmode=disable&x=1"
)

func userEnviron() []string {
	return []string{
		"PATH=" + os.Getenv("PATH"), "HOME=/home/bench-user", "LANG=C.UTF-8", "LC_ALL=C.UTF-8",
		"GITHUB_PAT=" + testPAT, "DATABASE_URL=" + testDSN,
		"HTTPS_PROXY=http://proxy.corp.example:3128", "SSL_CERT_FILE=/etc/corp/ca.pem",
		"OPENAI_API_KEY=sk-not-for-servers-0123456789", "EDITOR=vi",
		"MY_SERVER_SETTING=passed-on-purpose",
	}
}

// childEnvOf runs the hostile server once under o and returns the
// environment it started with, as it wrote it to a file, and the run.
func childEnvOf(t *testing.T, o *Options, p *Profile) (map[string]string, *traces.Run) {
	t.Helper()
	envFile := filepath.Join(t.TempDir(), "environ")
	p.Env["HOSTILE_ENV_FILE"] = envFile
	rec := New(o)
	defer rec.Close()
	run, err := rec.Run(context.Background(), &Job{Suite: "test", Scenario: hostileScenario(), Profile: p,
		Model: oracle(t, []llm.PlanStep{{Tool: "get_status"}}, `{"status":"ok"}`)})
	if err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(envFile)
	if err != nil {
		t.Fatalf("the server wrote no environment: %v (run %s)", err, run.Manifest.Outcome)
	}
	env := map[string]string{}
	for _, kv := range strings.Split(strings.TrimSpace(string(b)), "\n") {
		k, v, _ := strings.Cut(kv, "=")
		env[k] = v
	}
	return env, run
}

// TestServerEnvIsAllowlist: a server inherits the base variables and
// nothing else of the user's environment, whatever the names; the fake's
// variables and the profile's env come on top.
func TestServerEnvIsAllowlist(t *testing.T) {
	p := hostileProfile(t, "ok", filepath.Join(t.TempDir(), "pids"), nil)
	env, _ := childEnvOf(t, &Options{Environ: userEnviron()}, p)
	for _, k := range []string{"GITHUB_PAT", "DATABASE_URL", "OPENAI_API_KEY", "EDITOR", "MY_SERVER_SETTING"} {
		if v, ok := env[k]; ok {
			t.Errorf("the server inherited %s=%s from the user's environment", k, v)
		}
	}
	want := map[string]string{
		"PATH": os.Getenv("PATH"), "HOME": "/home/bench-user", "LANG": "C.UTF-8", "LC_ALL": "C.UTF-8",
		"HOSTILE_MODE": "ok", // the profile's env
	}
	for k, v := range want {
		if env[k] != v {
			t.Errorf("%s = %q, want %q", k, env[k], v)
		}
	}
	// The proxy and CA variables are the fake's, never the user's.
	if !strings.HasPrefix(env["HTTPS_PROXY"], "http://127.0.0.1:") || strings.Contains(env["SSL_CERT_FILE"], "corp") {
		t.Errorf("HTTPS_PROXY=%s SSL_CERT_FILE=%s: want the fake's", env["HTTPS_PROXY"], env["SSL_CERT_FILE"])
	}
	if env["FAKECENTRAL_BASE_URL"] == "" {
		t.Errorf("the fake's variables are missing: %v", env)
	}
}

// TestPassEnv: variables the profile's pass_env or Options.PassEnv (the
// CLI's --pass-env) name reach the server; a proxy named there does not.
func TestPassEnv(t *testing.T) {
	p := hostileProfile(t, "ok", filepath.Join(t.TempDir(), "pids"), nil)
	p.PassEnv = []string{"EDITOR"}
	env, _ := childEnvOf(t, &Options{Environ: userEnviron(), PassEnv: []string{"MY_SERVER_SETTING", "HTTPS_PROXY"}}, p)
	if env["EDITOR"] != "vi" || env["MY_SERVER_SETTING"] != "passed-on-purpose" {
		t.Errorf("EDITOR=%q MY_SERVER_SETTING=%q: the named variables did not reach the server", env["EDITOR"], env["MY_SERVER_SETTING"])
	}
	if strings.Contains(env["HTTPS_PROXY"], "corp") {
		t.Errorf("the user's proxy reached the server: %s", env["HTTPS_PROXY"])
	}
	if _, ok := env["GITHUB_PAT"]; ok {
		t.Error("GITHUB_PAT reached the server")
	}
}

func TestCheckPassEnv(t *testing.T) {
	if err := CheckPassEnv([]string{"PYTHONPATH", "NODE_OPTIONS", "LC_ALL"}); err != nil {
		t.Errorf("plain names refused: %v", err)
	}
	err := CheckPassEnv([]string{"HTTPS_PROXY", "no-such=name", "SSL_CERT_FILE", "FAKECENTRAL_TOKEN"})
	for _, want := range []string{"HTTPS_PROXY: the fake Central sets", `"no-such=name" is not a variable name`, "SSL_CERT_FILE", "FAKECENTRAL_TOKEN"} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("error %v does not say %q", err, want)
		}
	}
	_, err = ParseProfile("servers/x.yaml", []byte("name: x\ncommand: [x]\npass_env: [HTTP_PROXY]\n"), "")
	if err == nil || !strings.Contains(err.Error(), "servers/x.yaml: pass_env: HTTP_PROXY") {
		t.Errorf("profile error %v: want the file, the field and the name", err)
	}
	p, err := ParseProfile("mcp.json", []byte(`{"mcpServers": {"x": {"command": "x", "pass_env": ["PYTHONPATH"]}}}`), "")
	if err != nil || !slices.Equal(p.PassEnv, []string{"PYTHONPATH"}) {
		t.Errorf("mcpServers pass_env: %v, %v", p, err)
	}
}

// TestServerWordsRedacted records a server that writes its environment
// and a .env file it loads (holding the same secrets as the user's shell)
// to stderr and into its tool results: every value of the user's
// environment longer than 8 characters that the server was not given is
// replaced by [redacted:NAME] in the run, and in the store, wherever it
// went (the model's next request carries the tool result); the base
// variables' values and short values stay.
func TestServerWordsRedacted(t *testing.T) {
	dir := t.TempDir()
	dotenv := filepath.Join(dir, ".env")
	os.WriteFile(dotenv, []byte("GITHUB_PAT="+testPAT+"\nDATABASE_URL="+testDSN+"\nEDITOR=vi\n"), 0o644)
	p := hostileProfile(t, "ok", filepath.Join(dir, "pids"), map[string]string{"HOSTILE_DUMP_ENV": "1", "HOSTILE_DOTENV": dotenv})
	_, run := childEnvOf(t, &Options{Environ: userEnviron()}, p)
	s, err := traces.Open(filepath.Join(dir, "store"), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	stored, err := s.PutRunNoSyncRead(run, "test/env/0")
	if err != nil {
		t.Fatal(err)
	}
	back, err := s.GetRun(stored.Manifest.RunID)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := json.Marshal(back)
	doc := string(b)
	stderr := kinds(back, traces.KindInitialize)[0].Initialize.Stderr
	if !strings.Contains(stderr, "hostile: loaded .env:") {
		t.Fatalf("the server did not dump its environment, so the test proves nothing: %q", stderr)
	}
	for _, secret := range []string{testPAT, testDSN, "hunter2secret"} {
		if strings.Contains(doc, secret) {
			t.Errorf("the stored run holds %q", secret)
		}
	}
	for _, want := range []string{"GITHUB_PAT=[redacted:GITHUB_PAT]", "DATABASE_URL=[redacted:DATABASE_URL]", "EDITOR=vi"} {
		if !strings.Contains(stderr, want) {
			t.Errorf("stderr lacks %q: %s", want, stderr)
		}
	}
	if !strings.Contains(stderr, "PATH="+os.Getenv("PATH")) {
		t.Errorf("the base variable PATH was redacted: %s", stderr)
	}
	call := kinds(back, traces.KindCall)[0].Call
	if !strings.Contains(string(call.Result), "[redacted:GITHUB_PAT]") {
		t.Errorf("tool result not redacted: %s", call.Result)
	}
	var carried bool
	for _, e := range kinds(back, traces.KindTurn) {
		if strings.Contains(string(e.Turn.Request), "[redacted:DATABASE_URL]") {
			carried = true
		}
	}
	if !carried {
		t.Error("no model request carries the redacted tool result")
	}
	if back.Manifest.Scenario.ID != "hostile-001" || back.Manifest.Server.Name != p.Name {
		t.Errorf("the manifest changed: %+v", back.Manifest)
	}
}

// TestEnvRedactionKeepsIDs: a server that writes none of the user's
// values records the same run, with the same ID, whatever the user's
// environment holds.
func TestEnvRedactionKeepsIDs(t *testing.T) {
	p := hostileProfile(t, "ok", filepath.Join(t.TempDir(), "pids"), nil)
	s, err := traces.Open(t.TempDir(), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	var ids []traces.ID
	for i, environ := range [][]string{nil, userEnviron()} {
		clock := time.Unix(1_700_000_000, 0)
		// The harmless base values, the same in both runs.
		environ = append(slices.Clone(environ), "PATH="+os.Getenv("PATH"))
		rec := New(&Options{Environ: environ, Now: func() time.Time { clock = clock.Add(time.Millisecond); return clock }})
		run, err := rec.Run(context.Background(), &Job{Suite: "test", Scenario: hostileScenario(), Profile: p,
			Model: oracle(t, []llm.PlanStep{{Tool: "get_status"}}, `{"status":"ok"}`)})
		rec.Close()
		if err != nil {
			t.Fatal(err)
		}
		id, err := s.PutRun(run, "test/ids/"+string(rune('0'+i)))
		if err != nil {
			t.Fatal(err)
		}
		ids = append(ids, id)
	}
	if ids[0] != ids[1] {
		t.Errorf("the user's environment changed the run ID: %v, %v", ids[0], ids[1])
	}
}

func TestChildEnvAllowlist(t *testing.T) {
	in := []string{"PATH=/bin", "HOME=/root", "OPENAI_API_KEY=x", "GITHUB_PAT=" + testPAT, "DATABASE_URL=" + testDSN,
		"HTTPS_PROXY=http://corp", "GOFLAGS=-mod=mod", "LC_CTYPE=C", "PYTHONPATH=/src", "NODE_EXTRA_CA_CERTS=/corp.pem"}
	got := strings.Join(ChildEnv(in, []string{"PYTHONPATH", "NODE_EXTRA_CA_CERTS"}), " ")
	if got != "PATH=/bin HOME=/root GOFLAGS=-mod=mod LC_CTYPE=C PYTHONPATH=/src" {
		t.Errorf("ChildEnv = %q", got)
	}
}

func TestWithheld(t *testing.T) {
	environ := []string{"PATH=/usr/local/bin:/usr/bin", "GITHUB_PAT=" + testPAT, "SHORT=12345678", "NINE=123456789",
		"SAME_AS_PROXY=127.0.0.1,localhost", "OTHER=" + testPAT, "DATABASE_URL=" + testDSN, "PASSED=passed-value",
		"WORK=/tmp/work-dir-1"}
	child := []string{"NO_PROXY=127.0.0.1,localhost", "TMPDIR=/tmp/work-dir-1/.tmp"}
	var got []string
	for _, w := range withheld(environ, []string{"PASSED"}, child) {
		got = append(got, w.name+"->"+w.placeholder)
	}
	// Longest first; PATH is base, SHORT is not longer than 8, NO_PROXY's
	// value was given to the server, WORK's is part of TMPDIR's, OTHER's
	// value is GITHUB_PAT's.
	want := "DATABASE_URL->[redacted:DATABASE_URL] GITHUB_PAT->[redacted:GITHUB_PAT] NINE->[redacted:NINE]"
	if strings.Join(got, " ") != want {
		t.Errorf("withheld = %q, want %q", strings.Join(got, " "), want)
	}
}
