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
	if err := p.ExpandEnv(func(k string) string { return env[k] }); err != nil {
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
	err := load().ExpandEnv(func(string) string { return "" })
	if err == nil || !strings.Contains(err.Error(), "BENCH_SERVER_DIR_KARTHIK, EXTRA_FLAG not set") || !strings.Contains(err.Error(), "servers/karthik.yaml") {
		t.Errorf("unset variables: error %v", err)
	}
	// A relative expansion resolves against the profile's base directory.
	p = load()
	p.Dir = "/repo"
	env["BENCH_SERVER_DIR_KARTHIK"] = "peers/karthik"
	p.ExpandEnv(func(k string) string { return env[k] })
	if p.WorkDir() != filepath.Join("/repo", "peers/karthik") {
		t.Errorf("relative WorkDir() = %q", p.WorkDir())
	}
}
