package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io/fs"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/mcpbench/bench/internal/testbin"
)

// benchCLI runs bench in-process with the given environment.
func benchCLI(t *testing.T, env map[string]string, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	var out, errb bytes.Buffer
	a := &app{stdin: strings.NewReader(""), stdout: &out, stderr: &errb, getenv: func(k string) string { return env[k] }}
	code = runWith(context.Background(), a, args)
	return code, out.String(), errb.String()
}

// referenceServer builds examples/central-mcp once per test binary.
func referenceServer(t *testing.T) string {
	t.Helper()
	return testbin.Build(t, "./examples/central-mcp")
}

// referenceProfileFile writes a profile like servers/reference.yaml that
// runs the prebuilt binary.
func referenceProfileFile(t *testing.T, dir string) string {
	bin := referenceServer(t)
	p := filepath.Join(dir, "reference.yaml")
	data := testbin.ReferenceProfile(fmt.Sprintf("[%q]", bin))
	if err := os.WriteFile(p, []byte(data), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

func TestRecordAndServersCheck(t *testing.T) {
	dir := t.TempDir()
	prof := referenceProfileFile(t, dir)
	store := filepath.Join(dir, "store")
	rec := func(extra ...string) (int, string, string) {
		args := append([]string{"--store", store, "record", "--scenario", "alerts-001", "--scenario", "alerts-002",
			"--server", prof, "--model", "oracle", "--runs", "2"}, extra...)
		return benchCLI(t, nil, args...)
	}
	code, out, errOut := rec()
	if code != 0 || !strings.Contains(out, "recorded 4 of 4 runs (0 already stored)") || !strings.Contains(out, "answered 4") {
		t.Fatalf("first recording: exit %d\n%s\n%s", code, out, errOut)
	}
	if !strings.Contains(errOut, "[4/4] golden/reference/oracle/") {
		t.Errorf("no plain progress lines when stderr is not a terminal:\n%s", errOut)
	}
	code, out, _ = rec()
	if code != 0 || !strings.Contains(out, "recorded 0 of 4 runs (4 already stored)") {
		t.Errorf("a rerun must resume (skip stored runs): exit %d\n%s", code, out)
	}
	code, out, _ = rec("--force", "--shard", "2/2")
	if code != 0 || !strings.Contains(out, "recorded 2 of 2 runs") {
		t.Errorf("--force --shard 2/2 records half the list again: exit %d\n%s", code, out)
	}
	code, out, errOut = benchCLI(t, nil, "--store", store, "traces", "show", "golden/reference/oracle/alerts-001/1")
	for _, want := range []string{"turn 0", "call 0      list_alerts", "http        call 0  GET /network-notifications/v1/alerts", "answer      {"} {
		if !strings.Contains(out, want) {
			t.Errorf("traces show lacks %q: exit %d\n%s%s", want, code, out, errOut)
		}
	}
	code, out, errOut = benchCLI(t, nil, "servers", "check", prof)
	for _, want := range []string{"17 tools", "tokens (o200k_base)", "write gate: CENTRAL_WRITES=1", "list_alerts"} {
		if !strings.Contains(out, want) {
			t.Errorf("servers check lacks %q: exit %d\n%s%s", want, code, out, errOut)
		}
	}
	// No server outlives bench.
	ents, _ := os.ReadDir("/proc")
	for _, e := range ents {
		if exe, err := os.Readlink(filepath.Join("/proc", e.Name(), "exe")); err == nil && exe == referenceServer(t) {
			if st, err := os.ReadFile(filepath.Join("/proc", e.Name(), "stat")); err == nil && !strings.Contains(string(st), ") Z") {
				t.Errorf("reference server process %s survived bench", e.Name())
			}
		}
	}
}

func TestRecordUsageAndSetupErrors(t *testing.T) {
	dir := t.TempDir()
	dead := filepath.Join(dir, "dead.yaml")
	os.WriteFile(dead, []byte("name: dead\ncommand: [\"/bin/sh\", \"-c\", \"echo cannot start >&2; exit 3\"]\n"), 0o644)
	bad := filepath.Join(dir, "bad.yaml")
	os.WriteFile(bad, []byte("name: bad\ncommand: sh -c 'x'\n"), 0o644)
	store := filepath.Join(dir, "store")
	cases := []struct {
		args []string
		code int
		msg  string
		why  string
	}{
		{[]string{"record", "--stage", "smoke", "--model", "baseline"}, 2, "--server", "--server is required"},
		{[]string{"record", "--stage", "nope", "--server", dead, "--model", "baseline"}, 2, `no stage "nope"`, "unknown stage"},
		{[]string{"record", "--stage", "smoke", "--server", dead, "--model", "gpt"}, 2, "unknown model spec", "bad model spec"},
		{[]string{"record", "--stage", "smoke", "--server", bad, "--model", "baseline"}, 2, "bad.yaml", "a bad profile names its file"},
		{[]string{"record", "--scenario", "alerts-001", "--server", dead, "--model", "baseline", "--runs", "1", "--shard", "3/2"}, 2, "--shard", "bad shard"},
		{[]string{"record", "--scenario", "alerts-001", "--server", dead, "--model", "baseline", "--runs", "1"}, 4, "never started", "a server that never starts is a setup failure"},
		{[]string{"servers", "check", dead}, 4, "cannot start", "check shows the server's own stderr"},
	}
	for _, c := range cases {
		code, _, errOut := benchCLI(t, nil, append([]string{"--store", store}, c.args...)...)
		if code != c.code || !strings.Contains(errOut, c.msg) {
			t.Errorf("%s: exit %d, stderr %q; want exit %d mentioning %q", c.why, code, errOut, c.code, c.msg)
		}
	}
}

// TestRecordRedactsAPIKey records with an OpenAI-compatible fake whose
// answers echo the API key, and checks the key is nowhere in the store.
func TestRecordRedactsAPIKey(t *testing.T) {
	const key = "sk-bench-fake-key-4f1d2c3b5a69"
	turn := 0
	var mu sync.Mutex
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		turn++
		n := turn
		mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		auth := r.Header.Get("Authorization")
		msg := map[string]any{"role": "assistant", "content": "I was called with " + auth}
		finish := "stop"
		if n == 1 {
			msg["content"] = nil
			msg["tool_calls"] = []any{map[string]any{"id": "call_1", "type": "function",
				"function": map[string]any{"name": "list_alerts", "arguments": `{"note":"` + auth + `"}`}}}
			finish = "tool_calls"
		}
		json.NewEncoder(w).Encode(map[string]any{"id": "x", "object": "chat.completion", "model": "fake",
			"choices": []any{map[string]any{"index": 0, "message": msg, "finish_reason": finish}},
			"usage":   map[string]any{"prompt_tokens": 10, "completion_tokens": 5, "total_tokens": 15}})
	}))
	defer srv.Close()
	dir := t.TempDir()
	store := filepath.Join(dir, "store")
	env := map[string]string{"OPENAI_API_KEY": key, "OPENAI_BASE_URL": srv.URL + "/v1/"}
	code, out, errOut := benchCLI(t, env, "--store", store, "record", "--scenario", "alerts-001",
		"--server", referenceProfileFile(t, dir), "--model", "openai:fake", "--runs", "1")
	if code != 0 || !strings.Contains(out, "recorded 1 of 1") {
		t.Fatalf("exit %d\n%s\n%s", code, out, errOut)
	}
	_, shown, _ := benchCLI(t, nil, "--store", store, "traces", "show", "--json", "golden/reference/openai:fake/alerts-001/0")
	if !strings.Contains(shown, "[REDACTED]") {
		t.Fatalf("the key never reached the run, so this test proves nothing:\n%s", shown)
	}
	filepath.WalkDir(store, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, _ := os.ReadFile(path)
		if bytes.Contains(b, []byte(key)) {
			t.Errorf("%s holds the API key", path)
		}
		return nil
	})
}
