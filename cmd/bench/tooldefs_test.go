package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// TestServersCheckToolTokens: servers check gives each tool's tokens and
// the server's, the same figures a replay of the server reports and its
// gate holds to tool_definition_tokens; a budget under them fails the
// gate naming the server and the figure, and a replay against a server
// whose descriptions grew lists every changed tool with its token delta.
func TestServersCheckToolTokens(t *testing.T) {
	dir := t.TempDir()
	prof := referenceProfileFile(t, dir)
	store := filepath.Join(dir, "store")
	code, out, errOut := benchCLI(t, nil, "servers", "check", "--json", prof)
	if code != exitOK {
		t.Fatalf("check: exit %d: %s", code, errOut)
	}
	var check struct {
		Defs struct {
			Tokens int `json:"tokens"`
			Tools  []struct {
				Name   string `json:"name"`
				Tokens int    `json:"tokens"`
			} `json:"tools"`
		} `json:"tool_definitions"`
	}
	if err := json.Unmarshal([]byte(out), &check); err != nil {
		t.Fatal(err)
	}
	sum := 0
	for _, tl := range check.Defs.Tools {
		sum += tl.Tokens
		if tl.Tokens <= 0 {
			t.Errorf("tool %s: %d tokens", tl.Name, tl.Tokens)
		}
	}
	if len(check.Defs.Tools) != 17 || sum != check.Defs.Tokens {
		t.Fatalf("check: %d tools summing to %d, the server's figure %d", len(check.Defs.Tools), sum, check.Defs.Tokens)
	}
	if code, _, errOut := benchCLI(t, nil, "--store", store, "record", "--scenario", "alerts-001", "--server", prof, "--model", "baseline", "--runs", "1"); code != exitOK {
		t.Fatalf("record: exit %d: %s", code, errOut)
	}
	cfg := filepath.Join(dir, "bench.yaml")
	budget := check.Defs.Tokens - 1
	if err := os.WriteFile(cfg, []byte("format: 1\nstages:\n  - name: budget\n    include: [{ids: [alerts-001]}]\n    runs: 1\n    gate: {tool_definition_tokens: "+itoa(budget)+"}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	replay := func(env ...string) (int, map[string]json.RawMessage, string) {
		args := []string{"--store", store, "replay", "--config", cfg, "--stage", "budget", "--server", prof, "--format", "json,text", "--report-dir", filepath.Join(dir, "out"), "--mode", "lenient"}
		for _, e := range env {
			args = append(args, "--server-env", e)
		}
		code, _, errOut := benchCLI(t, nil, args...)
		b, err := os.ReadFile(filepath.Join(dir, "out", "REPORT.json"))
		if err != nil {
			t.Fatalf("replay: exit %d, %v: %s", code, err, errOut)
		}
		var rep map[string]json.RawMessage
		json.Unmarshal(b, &rep)
		txt, _ := os.ReadFile(filepath.Join(dir, "out", "REPORT.txt"))
		return code, rep, string(txt)
	}
	code, rep, txt := replay()
	var defs []struct {
		Server string `json:"server"`
		Tokens int    `json:"tokens"`
	}
	json.Unmarshal(rep["tool_definitions"], &defs)
	if len(defs) != 1 || defs[0].Tokens != check.Defs.Tokens {
		t.Errorf("the replay's tool definitions %+v, servers check says %d", defs, check.Defs.Tokens)
	}
	want := "reference: tool definitions take " + itoa(check.Defs.Tokens) + " tokens (17 tools), over the tool_definition_tokens budget of " + itoa(budget) + " (+1)"
	if code != exitGateFailed || !strings.Contains(txt, want) {
		t.Errorf("over budget by one token: exit %d, want %d and %q:\n%s", code, exitGateFailed, want, txt)
	}
	if _, ok := rep["tool_churn"]; ok {
		t.Errorf("an unchanged server reports churn: %s", rep["tool_churn"])
	}
	_, rep, txt = replay("CENTRAL_INJECT=verbose-tools")
	var churn []struct {
		Before  int `json:"tokens_before"`
		After   int `json:"tokens_after"`
		Changed []struct {
			Name          string
			Before, After int
		} `json:"changed"`
	}
	json.Unmarshal(rep["tool_churn"], &churn)
	if len(churn) != 1 || len(churn[0].Changed) != 17 || churn[0].Before != check.Defs.Tokens || churn[0].After <= churn[0].Before {
		t.Errorf("verbose tools: churn %+v", churn)
	}
	if !strings.Contains(txt, "tool definitions changed since the recording: reference: "+itoa(check.Defs.Tokens)+" -> ") {
		t.Errorf("the text report does not say the tool definitions changed:\n%s", txt)
	}
}

func itoa(n int) string { return strconv.Itoa(n) }
