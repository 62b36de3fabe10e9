package main

import (
	"context"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mcpbench/bench/fakecentral"
)

// lineWriter collects output and signals each complete line.
type lineWriter struct {
	mu    sync.Mutex
	buf   strings.Builder
	lines chan string
	part  string
}

func (w *lineWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.buf.Write(p)
	w.part += string(p)
	for {
		i := strings.IndexByte(w.part, '\n')
		if i < 0 {
			break
		}
		select {
		case w.lines <- w.part[:i]:
		default:
		}
		w.part = w.part[i+1:]
	}
	return len(p), nil
}

func (w *lineWriter) String() string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.buf.String()
}

func TestFakeServe(t *testing.T) {
	journal := filepath.Join(t.TempDir(), "journal.jsonl")
	stdout := &lineWriter{lines: make(chan string, 100)}
	stderr := &lineWriter{lines: make(chan string, 100)}
	a := &app{stdin: strings.NewReader(""), stdout: stdout, stderr: stderr, getenv: func(string) string { return "" }}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan int)
	go func() {
		done <- runWith(ctx, a, []string{"fake", "serve", "--fixture", "incident", "--journal", journal, "--rate-limit", "GET /network-monitoring/v1/aps=1"})
	}()

	vals := map[string]string{}
	for line := range stdout.lines {
		if k, v, ok := strings.Cut(line, "="); ok && !strings.HasPrefix(line, "export") {
			vals[k] = v
		}
		if strings.HasPrefix(line, "# serving") {
			break
		}
	}
	for _, k := range []string{"BASE_URL", "TOKEN_URL", "PROXY_URL", "CA_FILE"} {
		if vals[k] == "" {
			t.Fatalf("%s not printed:\n%s", k, stdout.String())
		}
	}
	for _, want := range []string{"export HTTPS_PROXY=http://127.0.0.1:", "export SSL_CERT_FILE=", "export REQUESTS_CA_BUNDLE=", "export NO_PROXY=127.0.0.1,localhost"} {
		if !strings.Contains(stdout.String(), want) {
			t.Errorf("stdout lacks %q", want)
		}
	}
	// A new user's first two calls: a token, then a list.
	resp, err := http.Post(vals["TOKEN_URL"], "application/x-www-form-urlencoded", strings.NewReader("grant_type=client_credentials&client_id=me&client_secret=x"))
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	tok := strings.Split(strings.Split(string(body), `"access_token":"`)[1], `"`)[0]
	req, _ := http.NewRequest("GET", vals["BASE_URL"]+"/network-monitoring/v1/aps", nil)
	req.Header.Set("Authorization", "Bearer "+tok)
	resp, err = http.DefaultClient.Do(req)
	if err != nil || resp.StatusCode != 200 {
		t.Fatalf("GET aps: %v %v", err, resp)
	}
	resp.Body.Close()
	// --rate-limit: the second call is throttled, with the documented headers.
	resp, err = http.DefaultClient.Do(req)
	if err != nil || resp.StatusCode != 429 || resp.Header.Get("X-RateLimit-Remaining") != "0" || resp.Header.Get("X-RateLimit-Reset") == "" {
		t.Fatalf("GET aps past the rate limit: %v %v", err, resp)
	}
	resp.Body.Close()
	// Each request is logged in one line on stderr.
	<-stderr.lines
	if l := <-stderr.lines; !strings.Contains(l, "GET /network-monitoring/v1/aps -> 200") {
		t.Errorf("request log line %q", l)
	}
	cancel()
	if code := <-done; code != exitOK {
		t.Fatalf("exit %d: %s", code, stderr.String())
	}
	f, err := os.Open(journal)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	h, entries, err := fakecentral.ReadJournal(f)
	if err != nil {
		t.Fatal(err)
	}
	if h.Fixture != "incident" || len(entries) != 3 || entries[1].Path != "/network-monitoring/v1/aps" || entries[2].Status != 429 {
		t.Errorf("journal header %+v, %d entries", h, len(entries))
	}
	if _, err := os.Stat(vals["CA_FILE"]); !os.IsNotExist(err) {
		t.Errorf("CA file %s not removed on exit", vals["CA_FILE"])
	}
}

func TestFakeServeBadInput(t *testing.T) {
	for _, args := range [][]string{
		{"fake", "serve", "--fixture", "no-such-fixture"},
		{"fake", "serve", "--addr", "0.0.0.0:0"},
		{"fake", "serve", "--client-id", "x"},
		{"fake", "serve", "--rate-limit", "GET /network-monitoring/v1/aps"},
		{"fake", "serve", "--rate-limit", "GET /network-monitoring/v1/aps=5/soon"},
		{"fake", "serve", "--rate-limit", "GET /network-monitoring/v1/aps=5/-1s"},
		{"fake", "serve", "--page-size", "-1"},
	} {
		code, _, stderr := runBench(t, args...)
		if code != exitInvalidInput {
			t.Errorf("%v: exit %d, want %d (%s)", args, code, exitInvalidInput, stderr)
		}
	}
}

func TestFakeServeHelp(t *testing.T) {
	code, stdout, _ := runBench(t, "fake", "serve", "--help")
	if code != exitOK {
		t.Fatalf("exit %d", code)
	}
	for _, want := range []string{"HTTPS_PROXY", "SSL_CERT_FILE", "sso.common.cloud.hpe.com", "CENTRAL_BASE_URL", "--fixture"} {
		if !strings.Contains(stdout, want) {
			t.Errorf("--help lacks %q", want)
		}
	}
}

func TestParseRateLimit(t *testing.T) {
	f, err := parseRateLimit("GET /network-monitoring/*=100/1m")
	if err != nil || f.Route != "GET /network-monitoring/*" || f.After != 100 || f.ResetAfter != time.Minute || f.Kind != fakecentral.Fault429 {
		t.Errorf("%+v %v", f, err)
	}
	if f, err := parseRateLimit("GET /x=3"); err != nil || f.ResetAfter != 0 || f.After != 3 {
		t.Errorf("%+v %v", f, err)
	}
}
