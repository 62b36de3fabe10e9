package recorder

import (
	"context"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mcpbench/bench/llm"
	"github.com/mcpbench/bench/traces"
)

// A server that quotes the fake Central's addresses or CA file in a tool
// result (here: its whole environment) records the same run twice: the
// ports and the temporary directory that differ per run are named by
// their template ({proxy_url}, {ca_file}) in the result and in the
// model's next request, so the request key and the run ID do not change
// (issue 15: same behaviour, same IDs; replays not stale).
func TestRunValuesNamed(t *testing.T) {
	dir := t.TempDir()
	p := hostileProfile(t, "ok", filepath.Join(dir, "pids"), map[string]string{"HOSTILE_DUMP_ENV": "1"})
	store, err := traces.Open(filepath.Join(dir, "store"), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer store.Close()
	ids := map[traces.ID]bool{}
	var keys []string
	for i := range 2 {
		rec := New(&Options{})
		run, err := rec.Run(context.Background(), &Job{Suite: "test", Scenario: hostileScenario(), Profile: p,
			Model: oracle(t, []llm.PlanStep{{Tool: "get_status"}}, `{"status":"ok"}`)})
		rec.Close()
		if err != nil {
			t.Fatal(err)
		}
		call := kinds(run, traces.KindCall)[0].Call
		res := string(call.Result)
		if !strings.Contains(res, "SSL_CERT_FILE={ca_file}") || !strings.Contains(res, "HTTPS_PROXY={proxy_url}") {
			t.Fatalf("run %d: the result does not name the per-run values: %s", i, res)
		}
		if strings.Contains(res, "127.0.0.1:") {
			t.Errorf("run %d: a per-run address is left in the result: %s", i, res)
		}
		turns := kinds(run, traces.KindTurn)
		keys = append(keys, turns[len(turns)-1].Turn.Key.String())
		id, err := store.PutRun(run)
		if err != nil {
			t.Fatal(err)
		}
		ids[id] = true
	}
	if keys[0] != keys[1] {
		t.Errorf("the request after the call has two keys: %v", keys)
	}
	if len(ids) != 1 {
		t.Errorf("two recordings of the same behaviour: %d IDs", len(ids))
	}
}

func TestRunPlacesReplace(t *testing.T) {
	r := runPlaces(Vars{CentralURL: "http://127.0.0.1:41873", TokenURL: "http://127.0.0.1:41873/oauth2/token",
		ProxyURL: "http://127.0.0.1:41999", CAFile: "/tmp/bench-fakecentral-1-2-3/ca.pem"})
	got := r.Replace("token at http://127.0.0.1:41873/oauth2/token, API http://127.0.0.1:41873/x, dial 127.0.0.1:41999: refused; " +
		"CA /tmp/bench-fakecentral-1-2-3/ca.pem in /tmp/bench-fakecentral-1-2-3; FAKETIME_SHARED=/faketime_sem_8749 /faketime_shm_8749")
	want := "token at {token_url}, API {central_url}/x, dial {proxy_host}: refused; " +
		"CA {ca_file} in {ca_dir}; FAKETIME_SHARED=/faketime_sem_{pid} /faketime_shm_{pid}"
	if got != want {
		t.Errorf("Replace:\n got %s\nwant %s", got, want)
	}
}
