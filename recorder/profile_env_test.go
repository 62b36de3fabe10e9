package recorder

import (
	"path/filepath"
	"strings"
	"testing"
)

func TestProfileExpandEnv(t *testing.T) {
	yaml := `name: karthik
repo: KarthikSKumar98/central-mcp-server
command: [.venv/bin/central-mcp-server, --port, "{port}", "${EXTRA_FLAG}"]
cwd: ${BENCH_SERVER_DIR_KARTHIK}
env: {CENTRAL_BASE_URL: "{central_url}"}
`
	load := func() *Profile {
		p, err := ParseProfile("servers/karthik.yaml", []byte(yaml), "")
		if err != nil {
			t.Fatal(err)
		}
		return p
	}
	env := map[string]string{"BENCH_SERVER_DIR_KARTHIK": "/opt/peers/karthik", "EXTRA_FLAG": "--quiet"}
	p := load()
	before := p.Hash()
	if err := p.ExpandEnv(func(k string) string { return env[k] }, []string{"EXTRA_FLAG"}); err != nil {
		t.Fatal(err)
	}
	if p.WorkDir() != "/opt/peers/karthik" {
		t.Errorf("WorkDir() = %q", p.WorkDir())
	}
	if got := strings.Join(p.Argv(), " "); got != ".venv/bin/central-mcp-server --port {port} --quiet" {
		t.Errorf("Argv() = %q: ${NAME} expanded, {template} kept", got)
	}
	if p.Hash() != before {
		t.Errorf("the install location changed the profile hash")
	}
	// Unset: a clear error naming the variable and the profile.
	err := load().ExpandEnv(func(string) string { return "" }, []string{"EXTRA_FLAG"})
	if err == nil || !strings.Contains(err.Error(), "BENCH_SERVER_DIR_KARTHIK, EXTRA_FLAG not set") || !strings.Contains(err.Error(), "servers/karthik.yaml") {
		t.Errorf("unset variables: error %v", err)
	}
	// A relative expansion resolves against the profile's base directory.
	p = load()
	p.Dir = "/repo"
	env["BENCH_SERVER_DIR_KARTHIK"] = "peers/karthik"
	p.ExpandEnv(func(k string) string { return env[k] }, []string{"EXTRA_FLAG"})
	if p.WorkDir() != filepath.Join("/repo", "peers/karthik") {
		t.Errorf("relative WorkDir() = %q", p.WorkDir())
	}
}

// TestProfileExpandEnvAllowlist: ${NAME} reaches only variables a server
// may see; a caller's secret named in a command is refused, naming it,
// and expands once the user passes it (issue 16, row 6).
func TestProfileExpandEnvAllowlist(t *testing.T) {
	yaml := `name: leaky
command: [server, --key, "${OPENAI_API_KEY}", --home, "${HOME}", --dir, "${BENCH_SERVER_DIR_X}"]
`
	p, err := ParseProfile("servers/leaky.yaml", []byte(yaml), "")
	if err != nil {
		t.Fatal(err)
	}
	env := map[string]string{"OPENAI_API_KEY": "sk-caller-secret", "HOME": "/home/u", "BENCH_SERVER_DIR_X": "/opt/x"}
	getenv := func(k string) string { return env[k] }
	err = p.ExpandEnv(getenv, nil)
	if err == nil || !strings.Contains(err.Error(), "${OPENAI_API_KEY}") || !strings.Contains(err.Error(), "servers/leaky.yaml") {
		t.Fatalf("a secret in the command: error %v", err)
	}
	if strings.Contains(strings.Join(p.Argv(), " "), "sk-caller-secret") {
		t.Fatalf("the secret reached the argv: %q", p.Argv())
	}
	if err := p.ExpandEnv(getenv, []string{"OPENAI_API_KEY"}); err != nil {
		t.Fatalf("passed with --pass-env: %v", err)
	}
	if got := strings.Join(p.Argv(), " "); got != "server --key sk-caller-secret --home /home/u --dir /opt/x" {
		t.Errorf("Argv() = %q", got)
	}
	p.PassEnv = []string{"OPENAI_API_KEY"}
	if err := p.ExpandEnv(getenv, nil); err != nil {
		t.Errorf("named in pass_env: %v", err)
	}
}
