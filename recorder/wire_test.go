package recorder

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpbench/bench/llm"
	"github.com/mcpbench/bench/traces"
)

var python struct {
	once sync.Once
	path string
	err  error
}

// python3 returns the path of the Python 3 interpreter itself (not a
// version manager's shim, which needs more of the environment than a
// server is given).
func python3(t *testing.T) string {
	t.Helper()
	python.once.Do(func() {
		out, err := exec.Command("python3", "-c", "import sys; print(sys.executable)").Output()
		python.path, python.err = strings.TrimSpace(string(out)), err
	})
	if python.err != nil || python.path == "" {
		t.Fatalf("no python3 for the hostile servers: %v", python.err)
	}
	return python.path
}

// scriptProfile runs testdata/hostile/SCRIPT in HOSTILE_WIRE mode: over
// stdio, or (streamable.py) over streamable HTTP on a port of its own.
func scriptProfile(t *testing.T, script, mode, pidfile string) *Profile {
	path, err := filepath.Abs(filepath.Join("testdata", "hostile", script))
	if err != nil {
		t.Fatal(err)
	}
	p := &Profile{Name: "hostile-" + mode, Command: []string{python3(t), path},
		Env: map[string]string{"HOSTILE_WIRE": mode, "HOSTILE_PIDFILE": pidfile}, StartTimeout: Duration(20 * time.Second)}
	if script == "streamable.py" {
		p.Transport, p.Command, p.URL = TransportHTTP, append(p.Command, "{port}"), "http://127.0.0.1:{port}/mcp"
	}
	if err := p.fill(); err != nil {
		t.Fatal(err)
	}
	p.Dir = t.TempDir()
	return p
}

// TestHostileWire runs one call against servers whose messages break the
// wire protocol (issue 16, rows 12, 14 and 15): each run ends with an
// error that names the cause, at once (the call timeout is long), and no
// process survives it.
func TestHostileWire(t *testing.T) {
	cases := []struct {
		script, mode string
		kind         traces.ErrorKind // "": the call is answered
		message      string           // in the error's message
		why          string
	}{
		{"wire.py", "long-line", traces.ErrorMessageTooLarge, "the server sent a line over 32 MiB, bench's limit on one MCP message",
			"a 50 MB line is over the limit, not a server that exited"},
		{"wire.py", "deep-json", traces.ErrorTransport, "the server sent a message nested over 1000 levels deep",
			"JSON nested 100,000 deep is too deep, not a server that exited"},
		{"wire.py", "wrong-id", traces.ErrorTransport, "which bench never sent (a JSON-RPC id mismatch)",
			"an answer to no call is an id mismatch, not a call timeout"},
		{"wire.py", "null-id", traces.ErrorTransport, "a response with id null (a JSON-RPC id mismatch)",
			"an answer with id null breaks the session: not the tool's own error, with no error event"},
		{"streamable.py", "wrong-id", traces.ErrorTransport, "which bench never sent (a JSON-RPC id mismatch)",
			"over HTTP, a JSON answer to no call is an id mismatch"},
		{"streamable.py", "sse-wrong-id", traces.ErrorTransport, "which bench never sent (a JSON-RPC id mismatch)",
			"over HTTP, an SSE event answering no call is an id mismatch, though the stream stays open"},
		{"wire.py", "init-wrong-id", traces.ErrorStart, `the server sent a response with id "not-yours", which bench never sent (a JSON-RPC id mismatch)`,
			"a mismatch in the handshake is named at once, not a handshake past the start timeout"},
		{"wire.py", "big-limits", "", "", "an input schema's counts past 64 bits do not wrap: the valid call reaches the server"},
		{"wire.py", "endless-pages", traces.ErrorStart, "the server listed over 20000 tools, bench's limit",
			"a tool list whose cursor never ends is refused at its bound, not listed until the start timeout"},
		{"wire.py", "repeat-cursor", traces.ErrorStart, `the server gave tools/list cursor "page-1" twice (page 2): its tool list never ends`,
			"a cursor given twice ends the listing at once"},
	}
	dir := t.TempDir()
	args := json.RawMessage(`{"name":"core","tags":["a"],"opts":{"a":1},"count":5}`)
	for _, c := range cases {
		t.Run(strings.TrimSuffix(c.script, ".py")+"/"+c.mode, func(t *testing.T) {
			pidfile := filepath.Join(dir, c.script+"."+c.mode+".pids")
			p := scriptProfile(t, c.script, c.mode, pidfile)
			rec := New(&Options{CallTimeout: 30 * time.Second, StopGrace: 100 * time.Millisecond, Environ: os.Environ()})
			defer rec.Close()
			run, err := rec.Run(context.Background(), &Job{Suite: "test", Scenario: hostileScenario(), Profile: p,
				Model: oracle(t, []llm.PlanStep{{Tool: "get_status", Arguments: args}}, `{"status":"ok"}`)})
			if err != nil {
				t.Fatal(err)
			}
			rec.Close()
			checkNoLeftovers(t, pidfile)
			errs := kinds(run, traces.KindError)
			if c.kind == "" {
				calls := kinds(run, traces.KindCall)
				if len(errs) > 0 || len(calls) == 0 || calls[0].Call.IsError || calls[0].Call.Invalid != "" {
					t.Errorf("%s: events: %s; first call %+v", c.why, summary(run), calls)
				}
				return
			}
			if len(errs) == 0 || errs[0].Error.Kind != c.kind || !strings.Contains(errs[0].Error.Message, c.message) {
				t.Errorf("%s: want a first error %s saying %q; events: %s", c.why, c.kind, c.message, summary(run))
			}
			if run.Manifest.Outcome != traces.OutcomeError {
				t.Errorf("%s: outcome %q, want error: the session is broken", c.why, run.Manifest.Outcome)
			}
		})
	}
}

// TestTransportLimits pins the limits bench sets on each of the SDK's
// transports, so that an SDK whose defaults change (go-sdk v1.8.0 reads an
// SSE event without end when MaxEventSize is 0) changes nothing here.
func TestTransportLimits(t *testing.T) {
	o := (&Options{}).withDefaults()
	if o.MaxMessageBytes != 32<<20 {
		t.Fatalf("default MaxMessageBytes %d, want 32 MiB (docs/architecture.md says so)", o.MaxMessageBytes)
	}
	const backstop = 32<<20 + 64<<10
	w := newWireWatch()
	st := stdioTransport(io.NopCloser(strings.NewReader("")), nopCloser{io.Discard}, w, o.MaxMessageBytes)
	if st.MaxLineLength != backstop {
		t.Errorf("stdio: the SDK's MaxLineLength is %d, want %d", st.MaxLineLength, backstop)
	}
	if lr, ok := st.Reader.(*lineReader); !ok || lr.limit != 32<<20 || lr.watch != w {
		t.Errorf("stdio: the reader is %T %+v, want bench's lineReader bounded to 32 MiB", st.Reader, st.Reader)
	}
	if _, ok := st.Writer.(*watchWriter); !ok {
		t.Errorf("stdio: the writer is %T, want bench's watchWriter", st.Writer)
	}
	ht := httpTransport("http://127.0.0.1:1/mcp", httpClient(nil, &wireLog{limit: 1}, w, o.MaxMessageBytes), o.MaxMessageBytes)
	if ht.MaxEventSize != backstop {
		t.Errorf("http: the SDK's MaxEventSize is %d, want %d", ht.MaxEventSize, backstop)
	}
	if rt, ok := ht.HTTPClient.Transport.(*captureRT); !ok || rt.limit != 32<<20 || rt.watch != w {
		t.Errorf("http: the round tripper is %T, want bench's captureRT bounded to 32 MiB", ht.HTTPClient.Transport)
	}
}

// TestSDKBackstops checks that the SDK honours the limits bench sets on it
// (sdkLimit), without bench's own readers in front: were those gone, no
// message would be unbounded.
func TestSDKBackstops(t *testing.T) {
	const limit = 4 << 10
	t.Run("stdio", func(t *testing.T) {
		msg := func(n int) string {
			head := `{"jsonrpc":"2.0","method":"notifications/message","params":{"data":"`
			return head + strings.Repeat("x", n-len(head)-3) + "\"}}\n"
		}
		for _, c := range []struct {
			size int
			ok   bool
		}{{sdkLimit(limit) - 8, true}, {sdkLimit(limit) + 8, false}} {
			tr := &mcp.IOTransport{Reader: io.NopCloser(strings.NewReader(msg(c.size))), Writer: nopCloser{io.Discard}, MaxLineLength: sdkLimit(limit)}
			conn, err := tr.Connect(context.Background())
			if err != nil {
				t.Fatal(err)
			}
			_, err = conn.Read(context.Background())
			if (err == nil) != c.ok {
				t.Errorf("a line of %d bytes under MaxLineLength %d: %v", c.size, sdkLimit(limit), err)
			}
		}
	})
	t.Run("sse", func(t *testing.T) {
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if r.Method != http.MethodPost {
				w.WriteHeader(http.StatusMethodNotAllowed)
				return
			}
			w.Header().Set("Content-Type", "text/event-stream")
			w.Write([]byte("data: "))
			chunk := []byte(strings.Repeat("x", 64<<10))
			for range 1024 { // 64 MiB, unless the client hangs up first
				if _, err := w.Write(chunk); err != nil {
					return
				}
			}
		}))
		defer srv.Close()
		tr := &mcp.StreamableClientTransport{Endpoint: srv.URL, MaxRetries: -1, MaxEventSize: sdkLimit(limit)}
		_, err := mcp.NewClient(&mcp.Implementation{Name: "t", Version: "1"}, nil).Connect(context.Background(), tr, nil)
		if err == nil || !strings.Contains(err.Error(), fmt.Sprintf("exceeded %d bytes", sdkLimit(limit))) {
			t.Errorf("an endless SSE line under MaxEventSize %d: %v", sdkLimit(limit), err)
		}
	})
}

// TestReadHead reads what bench needs of a JSON-RPC message's start.
func TestReadHead(t *testing.T) {
	cases := []struct {
		in   string
		want head
		why  string
	}{
		{`{"jsonrpc":"2.0","id":3,"result":{"content":[{"type":"text","text":"cut he`, head{headResponse, "n:3", "3", false}, "a response cut in its result"},
		{`{"jsonrpc":"2.0","id":3.0,"result":{}}`, head{headResponse, "n:3", "3.0", false}, "3.0 is the id 3, as the SDK reads it"},
		{`{"jsonrpc":"2.0","id":"a","error":{"code":1}}`, head{headResponse, "s:a", `"a"`, false}, "an error response with a string id"},
		{`{"jsonrpc":"2.0","id":null,"error":{"code":-32700}}`, head{headResponse, "", "null", false}, "a response with id null"},
		{`{"jsonrpc":"2.0","result":{}}`, head{headResponse, "", "", false}, "a whole response with no id"},
		{`{"result":{"content":[{"text":"cut`, head{}, "cut before the id: cannot tell"},
		{`{"jsonrpc":"2.0","id":7,"method":"elicitation/create","params":{}}`, head{headRequest, "n:7", "7", false}, "a server's request"},
		{`{"jsonrpc":"2.0","method":"notifications/message"}`, head{headRequest, "", "", false}, "a notification"},
		{`{"jsonrpc":"2.0","method":"tools/call","id":4,"params":{}}`, head{headRequest, "n:4", "4", false}, "a request with its id after its method"},
		{`{"jsonrpc":"2.0","method":"tools/call","params":{"a":"cut`, head{headRequest, "", "", true}, "a request cut before its id, if any"},
		{`{"jsonrpc":"2.0","id":3`, head{}, "cut after the id: cannot tell"},
		{`[{"jsonrpc":"2.0","id":1,"result":{}}]`, head{}, "a batch is not looked into"},
		{`{}`, head{}, "an empty object says nothing"},
		{`not json`, head{}, "not JSON"},
	}
	for _, c := range cases {
		if got := readHead([]byte(c.in)); got != c.want {
			t.Errorf("%s: readHead(%s) = %+v, want %+v", c.why, c.in, got, c.want)
		}
	}
}

// TestHTTPBodyEvents follows event streams with every kind of line end:
// events under the limit pass whatever their number, one over it fails
// with the limit named, and a response among them is shown to the watch.
func TestHTTPBodyEvents(t *testing.T) {
	const limit = 64
	ok := `data: {"jsonrpc":"2.0","id":1,"result":{}}`
	cases := []struct {
		stream string
		err    string
		why    string
	}{
		{strings.Repeat(ok+"\n\n", 100), "", "LF line ends"},
		{strings.Repeat(ok+"\r\n\r\n", 100), "", "CRLF line ends"},
		{strings.Repeat(ok+"\r\r", 100), "", "CR line ends"},
		{strings.Repeat(": ping\n\n", 1000), "", "comments, each an event of its own"},
		{ok + "\n" + ok + "\n\n", "the server sent an SSE event over 64 bytes", "two data lines make one event over the limit"},
		{"data: " + strings.Repeat("x", 100), "the server sent an SSE event over 64 bytes", "one line over the limit"},
		{strings.Repeat("[", 2000), "nested over 1000 levels deep", "too deep"},
	}
	for _, c := range cases {
		w := newWireWatch()
		w.sent["n:1"] = true
		limit := limit
		if c.why == "too deep" {
			limit = 1 << 20
		}
		b := limitBody(io.NopCloser(strings.NewReader(c.stream)), "text/event-stream; charset=utf-8", 200, w, limit)
		_, err := io.ReadAll(b)
		switch {
		case c.err == "" && err != nil:
			t.Errorf("%s: %v", c.why, err)
		case c.err != "" && (err == nil || !strings.Contains(err.Error(), c.err)):
			t.Errorf("%s: error %v, want %q", c.why, err, c.err)
		case c.err != "" && !errors.Is(w.err(), err):
			t.Errorf("%s: the watch holds %v, not the reader's error", c.why, w.err())
		}
	}
	w := newWireWatch()
	io.ReadAll(limitBody(io.NopCloser(strings.NewReader(ok+"\r\n\r\n")), "text/event-stream", 200, w, limit))
	if b := w.err(); b == nil || !strings.Contains(b.msg, "id 1, which bench never sent") {
		t.Errorf("a response to no request of bench's in an event: the watch holds %v", b)
	}
}

// TestDepthScan counts nesting outside strings only, through escapes, the
// same fed whole or a byte at a time.
func TestDepthScan(t *testing.T) {
	deep, flat := strings.Repeat("[", maxDepth+1), strings.Repeat("[", maxDepth)
	cases := []struct {
		in   string
		over bool
		why  string
	}{
		{flat + strings.Repeat("]", maxDepth), false, "maxDepth itself is allowed"},
		{deep, true, "one more is not"},
		{`{"a":"` + deep + `"}`, false, "brackets in a string"},
		{`{"a":"\"` + deep + `"}`, false, "an escaped quote does not end the string"},
		{`{"a":"\\"}` + deep, true, "an escaped backslash does not escape the quote after it"},
		{`{"a":"\\\"` + deep + `"}`, false, "nor does a backslash that is itself escaped, before an escaped quote"},
		{strings.Repeat("[]", 5000), false, "depth goes down again"},
	}
	for _, c := range cases {
		var whole, bytewise depthScan
		gotWhole := whole.feed([]byte(c.in))
		gotBytes := false
		for i := range len(c.in) {
			gotBytes = gotBytes || bytewise.feed([]byte{c.in[i]})
		}
		if gotWhole != c.over || gotBytes != c.over {
			t.Errorf("%s: over %v (whole), %v (a byte at a time), want %v", c.why, gotWhole, gotBytes, c.over)
		}
	}
}

// TestElicitationBounded: a server that asks for elicitation a thousand
// times in one call gets maxElicitations answers, then cancel; the run
// records those answered, not a thousand events.
func TestElicitationBounded(t *testing.T) {
	p := scriptProfile(t, "elicit.py", "", filepath.Join(t.TempDir(), "pids"))
	rec := New(&Options{Environ: os.Environ()})
	defer rec.Close()
	run, err := rec.Run(context.Background(), &Job{Suite: "test", Scenario: hostileScenario(), Profile: p,
		Model: oracle(t, []llm.PlanStep{{Tool: "get_status"}}, `{"status":"ok"}`)})
	if err != nil {
		t.Fatal(err)
	}
	var n int
	var result string
	for _, e := range run.Events {
		if e.Elicitation != nil {
			n++
		}
		if e.Call != nil && e.Call.Tool == "get_status" {
			result = string(e.Call.Result)
		}
	}
	if n != maxElicitations {
		t.Errorf("%d elicitations recorded, want %d", n, maxElicitations)
	}
	if !strings.Contains(result, `\"cancel\": 900`) {
		t.Errorf("the server saw %s, want 900 cancelled", result)
	}
}

// TestRedirectElsewhereRefused: a streamable-HTTP server that answers a
// call with a redirect to another origin (here a loopback port of the
// machine) does not make bench connect there: the call fails naming the
// redirect, and the port sees no connection. Under the proxy convention,
// where bench's own client would otherwise have followed it.
func TestRedirectElsewhereRefused(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	var hits atomic.Int32
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			hits.Add(1)
			c.Close()
		}
	}()
	p := scriptProfile(t, "streamable.py", "redirect", filepath.Join(t.TempDir(), "pids"))
	p.Env["HOSTILE_REDIRECT"] = "http://" + ln.Addr().String() + "/elsewhere"
	rec := New(&Options{Environ: os.Environ(), Isolation: IsolationProxy})
	defer rec.Close()
	run, err := rec.Run(context.Background(), &Job{Suite: "test", Scenario: hostileScenario(), Profile: p,
		Model: oracle(t, []llm.PlanStep{{Tool: "get_status"}}, `{"status":"ok"}`)})
	if err != nil {
		t.Fatal(err)
	}
	if n := hits.Load(); n > 0 {
		t.Errorf("bench followed the redirect: %d connections to %s", n, ln.Addr())
	}
	b, _ := json.Marshal(run.Events)
	if !strings.Contains(string(b), "another origin than its own") {
		t.Errorf("the run does not name the redirect: %s", b)
	}
}
