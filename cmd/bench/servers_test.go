package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestServersCheckMCPServersJSON points check at a config in the format MCP
// clients use, picking one of two entries, and reads the JSON output.
func TestServersCheckMCPServersJSON(t *testing.T) {
	bin := referenceServer(t)
	cfg := filepath.Join(t.TempDir(), "claude_desktop_config.json")
	data := fmt.Sprintf(`{"mcpServers": {
  "other": {"command": "false"},
  "central": {"command": %q, "env": {"CENTRAL_BASE_URL": "{central_url}", "CENTRAL_CLIENT_ID": "x",
    "CENTRAL_CLIENT_SECRET": "y", "HTTPS_PROXY": "{proxy_url}", "SSL_CERT_FILE": "{ca_file}"},
    "writes_env": {"CENTRAL_WRITES": "1"}}}}`, bin)
	if err := os.WriteFile(cfg, []byte(data), 0o644); err != nil {
		t.Fatal(err)
	}
	code, out, errOut := benchCLI(t, nil, "servers", "check", "--json", cfg+"#central")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	var got struct {
		Server    string   `json:"server"`
		Tokenizer string   `json:"tokenizer"`
		WriteGate []string `json:"write_gate"`
		Cost      struct{ Tools, Chars, Tokens int }
	}
	if err := json.Unmarshal([]byte(out), &got); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	if got.Server != "central" || got.Cost.Tools != 17 || got.Cost.Tokens <= 0 || got.Cost.Chars <= got.Cost.Tokens ||
		got.Tokenizer != "o200k_base" || strings.Join(got.WriteGate, " ") != "CENTRAL_WRITES=1" {
		t.Errorf("unexpected check result: %+v", got)
	}
	code, _, errOut = benchCLI(t, nil, "servers", "check", cfg)
	if code != 2 || !strings.Contains(errOut, "holds 2 servers (central, other)") {
		t.Errorf("a config with two servers and no #NAME: exit %d, %s", code, errOut)
	}
	code, _, errOut = benchCLI(t, nil, "servers", "check", filepath.Join(t.TempDir(), "missing.yaml"))
	if code != 2 || !strings.Contains(errOut, "missing.yaml") {
		t.Errorf("a missing profile: exit %d, %s", code, errOut)
	}
}
