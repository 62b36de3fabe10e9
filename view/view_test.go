package view_test

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/mcpbench/bench/scoring"
	"github.com/mcpbench/bench/traces"
	"github.com/mcpbench/bench/view"
)

func TestList(t *testing.T) {
	dir, _ := testStore(t)
	v := openView(t, dir)
	cases := []struct {
		why   string
		q     view.Query
		total int
		first string // the first row's ref
	}{
		{"everything, in ref order", view.Query{}, 13, "golden/alt/baseline/client-diagnosis-001/0"},
		{"one server", view.Query{Server: "reference"}, 6, refRun0},
		{"recorded only: the replay is left out", view.Query{Server: "reference", Kind: "recorded"}, 5, refRun0},
		{"replayed only", view.Query{Kind: "replayed"}, 1, replayRef},
		{"by outcome: reads the runs", view.Query{Outcome: "diverged"}, 1, replayRef},
		{"the suite is the scenario's, not the ref's first segment", view.Query{Suite: "client-diagnosis"}, 13, "golden/alt/baseline/client-diagnosis-001/0"},
		{"paged", view.Query{Offset: 12, Limit: 5}, 13, replayRef},
		{"no such model", view.Query{Model: "nope"}, 0, ""},
	}
	for _, tc := range cases {
		p := v.List(tc.q)
		if p.Total != tc.total {
			t.Errorf("%s: total %d, want %d", tc.why, p.Total, tc.total)
		}
		first := ""
		if len(p.Rows) > 0 {
			first = p.Rows[0].Ref
			if p.Rows[0].Summary == nil {
				t.Errorf("%s: the page's rows have no summary", tc.why)
			}
		}
		if first != tc.first {
			t.Errorf("%s: first row %q, want %q", tc.why, first, tc.first)
		}
	}
	if diff := cmp.Diff([]string{"alt", "hostile", "leaky", "reference"}, v.List(view.Query{}).Facets.Servers); diff != "" {
		t.Errorf("server facet (-want +got):\n%s", diff)
	}
}

func TestTimeline(t *testing.T) {
	dir, ids := testStore(t)
	v := openView(t, dir)
	tl, err := v.Timeline(refRun3)
	if err != nil {
		t.Fatal(err)
	}
	var kinds []string
	for _, it := range tl.Items {
		kinds = append(kinds, it.Kind)
	}
	// The boot call comes first, then the turns and calls in order.
	if diff := cmp.Diff([]string{"boot", "turn", "call", "turn"}, kinds); diff != "" {
		t.Fatalf("items (-want +got):\n%s", diff)
	}
	call := tl.Items[2]
	if len(call.HTTP) != 2 || call.HTTP[1].Status != 429 || call.HTTP[0].Class != "read" || len(call.Elicitations) != 1 {
		t.Errorf("the call's HTTP calls and elicitation: %+v", call)
	}
	if call.AtUS > call.HTTP[0].AtUS {
		t.Errorf("the call starts at %d µs, after its first HTTP call (%d µs)", call.AtUS, call.HTTP[0].AtUS)
	}
	if tl.Items[1].Tokens.Input != 1200 || tl.Items[1].Tokens.Output != 30 {
		t.Errorf("turn 0's tokens: %+v", tl.Items[1].Tokens)
	}
	if tl.Answer == nil || tl.Answer.Schema == "" || !tl.Answer.Scored {
		t.Errorf("the answer against the result schema: %+v", tl.Answer)
	}
	if tl.ReplayedAs != "" {
		t.Errorf("run 3 has no replay, the timeline says %s", tl.ReplayedAs)
	}
	if tl, _ := v.Timeline(ids[refRun0].String()); tl.ReplayedAs != ids[replayRef].String() {
		t.Errorf("run 0 is replayed as %s, the timeline says %q", ids[replayRef].Short(), tl.ReplayedAs)
	}

	// The leak: a safety finding on the call, the canary masked.
	leak, err := v.Timeline(leakRef)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := json.Marshal(leak)
	if strings.Contains(string(b), canary(t)) {
		t.Errorf("the timeline shows the canary unmasked")
	}
	var rules []string
	for _, f := range leak.Items[2].Safety {
		rules = append(rules, f.Rule)
	}
	if len(rules) == 0 || rules[0] != scoring.RuleCanaryLeak {
		t.Errorf("the leaking call's findings: %v", rules)
	}

	// What a server said is escaped: the escape sequence and the override
	// are written out.
	h, _ := v.Timeline(hostileRef)
	if got := h.Items[2].Tool; strings.ContainsAny(got, "\x1b\u202e") || !strings.Contains(got, `\x1b`) || !strings.Contains(got, `\u202e`) {
		t.Errorf("the hostile tool name is shown as %q", got)
	}
}

func TestReplayMiss(t *testing.T) {
	dir, ids := testStore(t)
	v := openView(t, dir)
	tl, err := v.Timeline(replayRef)
	if err != nil {
		t.Fatal(err)
	}
	r := tl.Replay
	if r == nil || r.Replays != ids[refRun0].String() || !r.Recording || r.MissTurn != 1 || r.MissSource != "requests" {
		t.Fatalf("replay: %+v", r)
	}
	if !strings.Contains(r.Miss, "messages[2] (tool result of get_client, call_1) changed") {
		t.Errorf("the miss does not name the changed tool result:\n%s", r.Miss)
	}
}

func TestDiffMarksFirstDivergence(t *testing.T) {
	dir, ids := testStore(t)
	v := openView(t, dir)
	d, err := v.Diff(ids[refRun0].String(), refRun3)
	if err != nil {
		t.Fatal(err)
	}
	if d.FirstDivergence < 0 || d.Steps[d.FirstDivergence].B == nil || !strings.Contains(d.Steps[d.FirstDivergence].B.Text, "429") {
		t.Errorf("first divergence %d, want the added HTTP call: %+v", d.FirstDivergence, d.Steps)
	}
	same, _ := v.Diff(refRun0, refOf(1))
	if same.FirstDivergence != -1 {
		t.Errorf("runs 0 and 1 behave the same; first divergence %d", same.FirstDivergence)
	}
}

func TestBoard(t *testing.T) {
	dir, _ := testStore(t)
	v := openView(t, dir)
	b, err := v.Board(view.Query{})
	if err != nil {
		t.Fatal(err)
	}
	if b.Runs != 12 || b.LeftOut != 1 || !strings.HasPrefix(b.SVG, "data:image/svg+xml;base64,") {
		t.Errorf("board: %d runs, %d left out, svg %.40q", b.Runs, b.LeftOut, b.SVG)
	}
	var strips []string
	for _, s := range b.Strips {
		strips = append(strips, s.Server+":"+string(rune('0'+len(s.Runs))))
	}
	if diff := cmp.Diff([]string{"alt:5", "hostile:1", "leaky:1", "reference:5"}, strips); diff != "" {
		t.Errorf("strips (-want +got):\n%s", diff)
	}
}

func TestExportRefusesLeaks(t *testing.T) {
	dir, _ := testStore(t)
	v := openView(t, dir)
	out := filepath.Join(t.TempDir(), "bundle")
	_, err := v.Export(out, nil)
	var leak *view.LeakError
	if !errors.As(err, &leak) {
		t.Fatalf("export of a store with a leak: %v, want a LeakError", err)
	}
	msg := err.Error()
	for _, want := range []string{"run " + leakRef, "items[2].result (tool call 0, get_client)", "holds the canary"} {
		if !strings.Contains(msg, want) {
			t.Errorf("the refusal does not say %q:\n%s", want, msg)
		}
	}
	if strings.Contains(msg, canary(t)) {
		t.Errorf("the refusal prints the canary:\n%s", msg)
	}
	if _, err := os.Stat(out); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("a refused export wrote %s", out)
	}

	// Leaving the run out, or masking the leak when asked, exports; the
	// canary is in no file.
	for _, o := range []*view.ExportOptions{{Query: view.Query{Server: "reference"}}, {MaskLeaks: true}} {
		out := filepath.Join(t.TempDir(), "bundle")
		rep, err := v.Export(out, o)
		if err != nil {
			t.Fatalf("export %+v: %v", o, err)
		}
		filepath.Walk(out, func(path string, fi os.FileInfo, err error) error {
			if b, _ := os.ReadFile(path); err == nil && !fi.IsDir() && strings.Contains(string(b), canary(t)) {
				t.Errorf("%s holds the canary", path)
			}
			return nil
		})
		if rep.Runs == 0 {
			t.Errorf("export %+v wrote no run", o)
		}
	}
}

func TestExportRefusesCredentials(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "store")
	s, err := traces.Open(dir, nil)
	if err != nil {
		t.Fatal(err)
	}
	key := "sk-proj-" + strings.Repeat("A1b2", 8)
	s.PutRun(mkRun(runSpec{server: "reference", answerText: "use the key " + key}), refRun0)
	s.Close()
	v := openView(t, dir)
	_, err = v.Export(filepath.Join(t.TempDir(), "bundle"), nil)
	if err == nil || !strings.Contains(err.Error(), "run "+refRun0+": answer.text holds what looks like an API key") {
		t.Errorf("export of a run with an API key: %v", err)
	}
}

func TestExportRefusesForeignDirectory(t *testing.T) {
	dir, _ := testStore(t)
	v := openView(t, dir)
	out := t.TempDir()
	os.WriteFile(filepath.Join(out, "notes.txt"), []byte("mine"), 0o644)
	if _, err := v.Export(out, &view.ExportOptions{Query: view.Query{Server: "alt"}}); err == nil || !strings.Contains(err.Error(), "notes.txt") {
		t.Errorf("export into a directory of other files: %v", err)
	}
	// An earlier bundle is replaced.
	out = filepath.Join(t.TempDir(), "b")
	for range 2 {
		if _, err := v.Export(out, &view.ExportOptions{Query: view.Query{Server: "alt"}}); err != nil {
			t.Fatal(err)
		}
	}
}

func TestListenLoopbackOnly(t *testing.T) {
	for _, addr := range []string{"0.0.0.0:0", "192.0.2.1:80", ":0", "example.com:80"} {
		if l, err := view.Listen(addr); err == nil {
			l.Close()
			t.Errorf("Listen(%q) listened", addr)
		} else if !strings.Contains(err.Error(), "loopback") && !strings.Contains(err.Error(), "HOST:PORT") {
			t.Errorf("Listen(%q): %v", addr, err)
		}
	}
	l, err := view.Listen("127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	l.Close()
}

func TestHandler(t *testing.T) {
	dir, ids := testStore(t)
	v := openView(t, dir)
	h := v.Handler()
	get := func(host, path string) *httptest.ResponseRecorder {
		r := httptest.NewRequest("GET", path, nil)
		r.Host = host
		w := httptest.NewRecorder()
		h.ServeHTTP(w, r)
		return w
	}
	if w := get("evil.example:80", "/api/runs"); w.Code != http.StatusForbidden {
		t.Errorf("a foreign Host: %d", w.Code)
	}
	for _, path := range []string{"/", "/app.js", "/app.css", "/api/runs?server=alt&limit=2", "/api/run?id=" + ids[refRun0].String(),
		"/api/diff?a=" + refRun0 + "&b=" + refRun3, "/api/board", "/api/runs?reload=1"} {
		w := get("127.0.0.1:8080", path)
		if w.Code != 200 {
			t.Errorf("GET %s: %d %s", path, w.Code, w.Body)
		}
		if w.Header().Get("Content-Security-Policy") == "" {
			t.Errorf("GET %s: no Content-Security-Policy", path)
		}
	}
	var p view.Page
	json.Unmarshal(get("localhost:1", "/api/runs?server=alt&limit=2").Body.Bytes(), &p)
	if p.Total != 5 || len(p.Rows) != 2 {
		t.Errorf("a page of the list: total %d, %d rows", p.Total, len(p.Rows))
	}
	if w := get("[::1]:1", "/api/run?id=nope"); w.Code != 404 || !strings.Contains(w.Body.String(), "neither a ref nor a run ID") {
		t.Errorf("an unknown run: %d %s", w.Code, w.Body)
	}
}

// The view reads a store that a recording holds, and its reload shows
// the runs stored since.
func TestReadsBesideAWriter(t *testing.T) {
	dir, _ := testStore(t)
	w, err := traces.Open(dir, nil) // the writer, as bench record holds it
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	v := openView(t, dir)
	before := v.List(view.Query{}).Total
	if _, err := w.PutRun(mkRun(runSpec{server: "late", index: 0}), traces.RunRef("golden", "late", "baseline", scenarioID, 0)); err != nil {
		t.Fatal(err)
	}
	if got := v.List(view.Query{}).Total; got != before {
		t.Errorf("before a reload the list changed: %d runs, was %d", got, before)
	}
	if err := v.Reload(); err != nil {
		t.Fatal(err)
	}
	if got := v.List(view.Query{Server: "late"}); got.Total != 1 || got.Rows[0].Summary.Outcome != "answered" {
		t.Errorf("after a reload: %+v", got)
	}
}

// A run cut off inside a tool call (no call event) still shows what the
// call caused, and every boot call sits under the one boot item.
func TestTimelineCutOff(t *testing.T) {
	run := mkRun(runSpec{server: "reference", extraHTTP: true})
	var events []traces.Event
	for _, e := range run.Events {
		switch e.Kind {
		case traces.KindCall, traces.KindAnswer:
			continue
		case traces.KindHTTP:
			if e.HTTP.Boot {
				second := *e.HTTP
				second.Seq = 99
				events = append(events, e, traces.Event{Kind: traces.KindHTTP, AtUS: e.AtUS + 10, HTTP: &second})
				continue
			}
		}
		if e.Kind == traces.KindTurn && e.Turn.Index == 1 {
			break
		}
		events = append(events, e)
	}
	events = append(events, traces.Event{Kind: traces.KindError, AtUS: 500000, Error: &traces.Error{Kind: traces.ErrorCallTimeout, Message: "get_client did not answer"}})
	run.Events = events
	run.Manifest.Outcome = traces.OutcomeError
	dir := filepath.Join(t.TempDir(), "store")
	s, err := traces.Open(dir, nil)
	if err != nil {
		t.Fatal(err)
	}
	s.PutRun(run, refRun0)
	s.Close()
	tl, err := openView(t, dir).Timeline(refRun0)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, it := range tl.Items {
		got = append(got, fmt.Sprintf("%s:%d", it.Kind, len(it.HTTP)))
	}
	if diff := cmp.Diff([]string{"boot:2", "turn:0", "call:2", "error:0"}, got); diff != "" {
		t.Errorf("items kind:HTTP calls (-want +got):\n%s", diff)
	}
}
