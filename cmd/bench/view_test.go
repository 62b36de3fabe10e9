package main

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"path/filepath"
	"strings"
	"testing"
)

// Exporting a bundle of the leak-secret replay (the reference server
// returns the WLAN passphrase in get_wlan's result) refuses with the
// safety exit code, naming the run and where the canary is, and writes
// nothing; the recorded runs alone export.
func TestViewExportRefusesLeakSecretReplay(t *testing.T) {
	f := recordedFixture(t)
	if code, out, _ := replayCLI(t, f, t.TempDir(), "--server-env", "CENTRAL_INJECT=leak-secret"); code != exitSafety {
		t.Fatalf("replay with leak-secret: exit %d\n%s", code, out)
	}
	out := filepath.Join(t.TempDir(), "bundle")
	code, stdout, stderr := benchCLI(t, nil, "--store", f.store, "view", "--export", out)
	if code != exitSafety {
		t.Fatalf("export of the leak: exit %d, want %d\n%s%s", code, exitSafety, stdout, stderr)
	}
	t.Logf("the refusal:\n%s", stderr)
	for _, want := range []string{"run replay/golden/reference/baseline/incident-response-011/0: items[", "get_wlan) holds the canary", "--mask-leaks"} {
		if !strings.Contains(stderr, want) {
			t.Errorf("the refusal does not say %q:\n%s", want, stderr)
		}
	}
	if code, stdout, stderr := benchCLI(t, nil, "--store", f.store, "view", "--export", out, "--from", "golden/"); code != 0 {
		t.Errorf("export of the recorded runs: exit %d\n%s%s", code, stdout, stderr)
	}
}

// bench view serves the page and its API on the address it prints, and
// stops when its context ends.
func TestViewServes(t *testing.T) {
	f := recordedFixture(t)
	var out bytes.Buffer
	a := &app{stdin: strings.NewReader(""), stdout: &out, stderr: io.Discard, getenv: func(string) string { return "" }, storeDir: f.store}
	ctx, cancel := context.WithCancel(context.Background())
	urls := make(chan string, 1)
	done := make(chan error, 1)
	go func() {
		done <- runView(ctx, a, &viewOptions{addr: "127.0.0.1:0", ready: func(u string) { urls <- u }})
	}()
	var url string
	select {
	case url = <-urls:
	case err := <-done:
		t.Fatalf("bench view ended: %v", err)
	}
	resp, err := http.Get(url + "api/runs?kind=recorded")
	if err != nil {
		t.Fatal(err)
	}
	var page struct {
		Total int `json:"total"`
	}
	json.NewDecoder(resp.Body).Decode(&page)
	resp.Body.Close()
	if page.Total != len(replayScenarios)+1 {
		t.Errorf("the list holds %d recorded runs, want %d", page.Total, len(replayScenarios)+1)
	}
	cancel()
	if err := <-done; err != nil {
		t.Errorf("bench view after its context ended: %v", err)
	}
	if !strings.Contains(out.String(), "bench view: "+f.store+" on http://127.0.0.1:") {
		t.Errorf("bench view printed %q", out.String())
	}
}
