package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
)

// A scripted provider: what a small real model behind an OpenAI- or
// Anthropic-compatible server answers, decided by the model named in the
// request and the turn (the assistant messages so far), so that the same
// conversation always gets the same answer. It keeps every request body.

// liveReply is one answer of the scripted provider.
type liveReply struct {
	hang   bool              // hold the request until the client gives up
	status int               // default 200
	header map[string]string // e.g. retry-after-ms
	body   any               // the JSON answer
}

type liveProvider struct {
	t      *testing.T
	script func(model string, turn, attempt int) liveReply
	mu     sync.Mutex
	bodies []map[string]any
	seen   map[string]int // attempts per model and turn
}

func startProvider(t *testing.T, script func(model string, turn, attempt int) liveReply) (*liveProvider, string) {
	p := &liveProvider{t: t, script: script, seen: map[string]int{}}
	srv := httptest.NewServer(p)
	t.Cleanup(srv.Close)
	return p, srv.URL
}

func (p *liveProvider) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	raw, _ := io.ReadAll(r.Body)
	var body map[string]any
	if err := json.Unmarshal(raw, &body); err != nil {
		p.t.Errorf("request body is not JSON: %v", err)
	}
	turn := 0
	msgs, _ := body["messages"].([]any)
	for _, m := range msgs {
		if m.(map[string]any)["role"] == "assistant" {
			turn++
		}
	}
	model, _ := body["model"].(string)
	p.mu.Lock()
	p.bodies = append(p.bodies, body)
	key := fmt.Sprintf("%s/%d", model, turn)
	p.seen[key]++
	attempt := p.seen[key]
	p.mu.Unlock()
	rep := p.script(model, turn, attempt)
	if rep.hang {
		<-r.Context().Done()
		return
	}
	for k, v := range rep.header {
		w.Header().Set(k, v)
	}
	w.Header().Set("Content-Type", "application/json")
	if rep.status == 0 {
		rep.status = 200
	}
	w.WriteHeader(rep.status)
	json.NewEncoder(w).Encode(rep.body)
}

func (p *liveProvider) requests() []map[string]any {
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([]map[string]any(nil), p.bodies...)
}

// chat is a chat.completion answer: tool calls (name, arguments pairs; a
// call's arguments are passed on as the model wrote them) or text.
func chat(finish, text string, calls ...string) any {
	msg := map[string]any{"role": "assistant", "content": text}
	var tcs []any
	for i := 0; i+1 < len(calls); i += 2 {
		tcs = append(tcs, map[string]any{"id": fmt.Sprintf("call_%d", i/2), "type": "function",
			"function": map[string]any{"name": calls[i], "arguments": calls[i+1]}})
	}
	if tcs != nil {
		msg["tool_calls"], msg["content"] = tcs, nil
	}
	return map[string]any{"id": "x", "object": "chat.completion", "model": "local",
		"choices": []any{map[string]any{"index": 0, "message": msg, "finish_reason": finish}},
		"usage":   map[string]any{"prompt_tokens": 100, "completion_tokens": 10, "total_tokens": 110}}
}

// benchLive runs bench in-process, its live model's waits between retries
// recorded instead of slept.
func benchLive(t *testing.T, env map[string]string, args ...string) (code int, stdout, stderr string, waits []time.Duration) {
	t.Helper()
	var out, errb bytes.Buffer
	var mu sync.Mutex
	a := &app{stdin: strings.NewReader(""), stdout: &out, stderr: &errb, getenv: func(k string) string { return env[k] },
		retrySleep: func(_ context.Context, d time.Duration) error {
			mu.Lock()
			defer mu.Unlock()
			waits = append(waits, d)
			return nil
		}}
	code = runWith(context.Background(), a, args)
	return code, out.String(), errb.String(), waits
}

// showRun returns the run stored under ref as bench traces show --json
// prints it.
func showRun(t *testing.T, store, ref string) map[string]any {
	t.Helper()
	code, out, errOut := benchCLI(t, nil, "--store", store, "traces", "show", "--json", ref)
	if code != 0 {
		t.Fatalf("traces show %s: exit %d\n%s", ref, code, errOut)
	}
	var shown []struct {
		Run map[string]any `json:"run"`
	}
	if err := json.Unmarshal([]byte(out), &shown); err != nil || len(shown) != 1 {
		t.Fatalf("traces show --json %s: %v\n%s", ref, err, out)
	}
	return shown[0].Run
}

// --max-tokens reaches the provider's request (OpenAI's
// max_completion_tokens, Anthropic's max_tokens), 1024 unless told, with
// nothing else of sampling but the seed; it is recorded in the manifest and
// every request, and a strict replay of the run matches every turn.
func TestLiveMaxTokens(t *testing.T) {
	dir := t.TempDir()
	prof := referenceProfileFile(t, dir)
	openaiScript := func(_ string, turn, _ int) liveReply {
		if turn == 0 {
			return liveReply{body: chat("tool_calls", "", "list_alerts", `{"limit":5}`)}
		}
		return liveReply{body: chat("stop", "Two critical alerts are active.")}
	}
	anthropicScript := func(_ string, turn, _ int) liveReply {
		content := []any{map[string]any{"type": "text", "text": "Two critical alerts are active."}}
		stop := "end_turn"
		if turn == 0 {
			content, stop = []any{map[string]any{"type": "tool_use", "id": "toolu_1", "name": "list_alerts", "input": map[string]any{}}}, "tool_use"
		}
		return liveReply{body: map[string]any{"id": "msg", "type": "message", "role": "assistant", "model": "local", "content": content,
			"stop_reason": stop, "usage": map[string]any{"input_tokens": 100, "output_tokens": 10}}}
	}
	for _, tc := range []struct {
		provider, field string
		script          func(string, int, int) liveReply
		args            []string
		want            float64
	}{
		{"openai", "max_completion_tokens", openaiScript, nil, 1024},
		{"openai", "max_completion_tokens", openaiScript, []string{"--max-tokens", "300"}, 300},
		{"anthropic", "max_tokens", anthropicScript, nil, 1024},
	} {
		t.Run(fmt.Sprintf("%s %v", tc.provider, tc.args), func(t *testing.T) {
			p, url := startProvider(t, tc.script)
			store := filepath.Join(t.TempDir(), "store")
			env := map[string]string{"OPENAI_BASE_URL": url + "/v1/", "ANTHROPIC_BASE_URL": url}
			model := tc.provider + ":local"
			args := append([]string{"--store", store, "record", "--scenario", "alerts-001", "--server", prof, "--model", model, "--runs", "1"}, tc.args...)
			if code, out, errOut, _ := benchLive(t, env, args...); code != 0 || !strings.Contains(out, "outcomes: text 1") {
				t.Fatalf("record: exit %d\n%s\n%s", code, out, errOut)
			}
			reqs := p.requests()
			if len(reqs) != 2 {
				t.Fatalf("the provider saw %d requests, want 2", len(reqs))
			}
			for i, body := range reqs {
				if body[tc.field] != tc.want {
					t.Errorf("request %d: %s = %v, want %v", i, tc.field, body[tc.field], tc.want)
				}
				for _, absent := range []string{"temperature", "top_p", "max_tokens", "max_completion_tokens"} {
					if _, ok := body[absent]; ok && absent != tc.field {
						t.Errorf("request %d sends %s, which nothing asked for", i, absent)
					}
				}
			}
			ref := "golden/reference/" + model + "/alerts-001/0"
			run := showRun(t, store, ref)
			if mt := run["manifest"].(map[string]any)["model"].(map[string]any)["max_tokens"]; mt != tc.want {
				t.Errorf("manifest max_tokens = %v, want %v", mt, tc.want)
			}
			for _, e := range run["events"].([]any) {
				if turn, ok := e.(map[string]any)["turn"].(map[string]any); ok {
					if mt := turn["request"].(map[string]any)["sampling"].(map[string]any)["max_tokens"]; mt != tc.want {
						t.Errorf("turn %v: recorded request's max_tokens = %v, want %v", turn["index"], mt, tc.want)
					}
				}
			}
			code, out, errOut := benchCLI(t, nil, "--store", store, "replay", "--scenario", "alerts-001", "--server", prof,
				"--from", "golden/reference/"+model+"/")
			if code != 0 || !strings.Contains(errOut, "alerts-001/0: text\n") {
				t.Errorf("a strict replay of the run: exit %d\n%s\n%s", code, out, errOut)
			}
		})
	}
}

// Each HTTP request to the provider is bounded by --request-timeout: a
// provider that hangs costs that attempt, which is retried (bench's
// backoff; a 429's retry-after-ms honoured), and the retried attempts are
// kept with their turn and shown by bench traces show. One that hangs on
// every attempt is no result about the server: not stored, exit 4, and a
// rerun records it.
func TestLiveRequestTimeout(t *testing.T) {
	dir := t.TempDir()
	prof := referenceProfileFile(t, dir)
	p, url := startProvider(t, func(model string, turn, attempt int) liveReply {
		switch {
		case model == "dead":
			return liveReply{hang: true}
		case turn == 0 && attempt == 1:
			return liveReply{hang: true}
		case turn == 0:
			return liveReply{body: chat("tool_calls", "", "list_alerts", `{}`)}
		case attempt == 1:
			return liveReply{status: 429, header: map[string]string{"retry-after-ms": "5"}, body: map[string]any{"error": map[string]any{"message": "slow down"}}}
		}
		return liveReply{body: chat("stop", "Two critical alerts are active.")}
	})
	store := filepath.Join(dir, "store")
	env := map[string]string{"OPENAI_BASE_URL": url + "/v1/"}
	code, out, errOut, waits := benchLive(t, env, "--store", store, "record", "--scenario", "alerts-001", "--server", prof,
		"--model", "openai:local", "--runs", "1", "--request-timeout", "50ms")
	if code != 0 || !strings.Contains(out, "recorded 1 of 1") {
		t.Fatalf("record: exit %d\n%s\n%s", code, out, errOut)
	}
	if fmt.Sprint(waits) != "[1s 5ms]" {
		t.Errorf("waits %v, want [1s 5ms]: bench's backoff after the timeout, the provider's retry-after-ms after the 429", waits)
	}
	if n := len(p.requests()); n != 4 {
		t.Errorf("the provider saw %d requests, want 4", n)
	}
	_, shown, _ := benchCLI(t, nil, "--store", store, "traces", "show", "golden/reference/openai:local/alerts-001/0")
	for _, want := range []string{
		"retried     attempt 1: no answer; waited 1s: openai: no answer within the request timeout (50ms)",
		"retried     attempt 1: HTTP 429, asked to wait 5ms; waited 5ms: openai: HTTP 429 Too Many Requests: slow down",
		"outcome text",
	} {
		if !strings.Contains(shown, want) {
			t.Errorf("traces show lacks %q:\n%s", want, shown)
		}
	}
	run := showRun(t, store, "golden/reference/openai:local/alerts-001/0")
	var attempts []any
	for _, e := range run["events"].([]any) {
		if turn, ok := e.(map[string]any)["turn"].(map[string]any); ok {
			attempts = append(attempts, turn["attempts"])
		}
	}
	if fmt.Sprint(attempts) != "[2 2]" {
		t.Errorf("turns' attempts %v, want [2 2]", attempts)
	}

	code, out, errOut, _ = benchLive(t, env, "--store", store, "record", "--scenario", "alerts-001", "--server", prof,
		"--model", "openai:dead", "--runs", "1", "--request-timeout", "20ms")
	if code != exitSetup || !strings.Contains(out, "not stored (no result about the server): 1: model failed transiently 1") ||
		!strings.Contains(out, "openai: no answer within the request timeout (20ms) (gave up after 4 attempts)") {
		t.Errorf("a provider that always hangs: exit %d\n%s\n%s", code, out, errOut)
	}
	if code, out, _ := benchCLI(t, nil, "--store", store, "traces", "ls"); code != 0 || strings.Contains(out, "openai:dead") {
		t.Errorf("the run of a provider that always hangs was stored:\n%s", out)
	}
}

// What a small real model does wrong is a result, recorded with a precise
// outcome or counted per call, never bench's error (never outcome error,
// never exit 4): a loop, prose instead of submit_result, malformed calls, a
// tool the server does not have, a last turn cut by the max-tokens limit.
// Reports say so, and a strict replay reproduces every outcome.
func TestLiveModelMisbehaves(t *testing.T) {
	dir := t.TempDir()
	prof := referenceProfileFile(t, dir)
	_, url := startProvider(t, func(model string, turn, _ int) liveReply {
		switch {
		case model == "loop":
			return liveReply{body: chat("tool_calls", "", "list_alerts", `{"limit":5}`)}
		case model == "prose":
			return liveReply{body: chat("stop", `I will call list_alerts: {"name": "list_alerts", "arguments": {}}`)}
		case model == "malformed" && turn == 0:
			return liveReply{body: chat("tool_calls", "", "list_alerts", `{"severity":`, "", `list_alerts()`)}
		case model == "unknown" && turn == 0:
			return liveReply{body: chat("tool_calls", "", "reboot_everything", `{}`)}
		case model == "cut":
			return liveReply{body: chat("length", `I need to call list_alerts with the arguments {"severity": "Crit`)}
		}
		return liveReply{body: chat("stop", "I could not do it.")}
	})
	store := filepath.Join(dir, "store")
	env := map[string]string{"OPENAI_BASE_URL": url + "/v1/"}
	for _, tc := range []struct{ model, outcome string }{
		{"loop", "loop"}, {"prose", "text"}, {"malformed", "text"}, {"unknown", "text"}, {"cut", "max_tokens"},
	} {
		code, out, errOut, _ := benchLive(t, env, "--store", store, "record", "--scenario", "alerts-001", "--server", prof,
			"--model", "openai:"+tc.model, "--runs", "1")
		if code != 0 || !strings.Contains(out, "outcomes: "+tc.outcome+" 1") {
			t.Errorf("%s: exit %d, want 0 and outcome %s\n%s\n%s", tc.model, code, tc.outcome, out, errOut)
		}
	}
	_, shown, _ := benchCLI(t, nil, "--store", store, "traces", "show", "golden/reference/openai:malformed/alerts-001/0")
	for _, want := range []string{"-> invalid: arguments are not a JSON object", "-> invalid: the call names no tool"} {
		if !strings.Contains(shown, want) {
			t.Errorf("traces show lacks %q:\n%s", want, shown)
		}
	}
	if _, shown, _ = benchCLI(t, nil, "--store", store, "traces", "show", "golden/reference/openai:loop/alerts-001/0"); strings.Count(shown, `list_alerts {"limit":5} -> ok`) != 2 || strings.Contains(shown, "call 2 ") {
		t.Errorf("a loop runs the call twice, not a third time:\n%s", shown)
	}
	code, out, errOut := benchCLI(t, nil, "--store", store, "report", "--from", "golden/")
	for _, want := range []string{
		"warning: server reference: 1 run(s) ended in a loop",
		"warning: server reference: 1 run(s) ended with the model's output cut by the max-tokens limit (outcome max_tokens",
		"warning: server reference: the model made 2 malformed call(s) (naming no tool, or arguments that are not a JSON object) and 1 call(s) of a tool the server does not have, in 2 run(s), each answered with an error (they count in invalid_calls): alerts-001 #0 (openai:malformed), alerts-001 #0 (openai:unknown)",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("bench report lacks %q: exit %d\n%s\n%s", want, code, out, errOut)
		}
	}
	code, out, errOut = benchCLI(t, nil, "--store", store, "replay", "--scenario", "alerts-001", "--server", prof)
	for _, want := range []string{"openai:loop/alerts-001/0: loop\n", "openai:cut/alerts-001/0: max_tokens\n", "openai:malformed/alerts-001/0: text\n"} {
		if code != 0 || !strings.Contains(errOut, want) {
			t.Errorf("a strict replay reproduces every outcome: exit %d, lacks %q\n%s\n%s", code, want, out, errOut)
		}
	}
}
