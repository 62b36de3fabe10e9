package recorder

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpbench/bench/internal/bounded"
	"github.com/mcpbench/bench/internal/escape"
	"github.com/mcpbench/bench/internal/memo"
	"github.com/mcpbench/bench/scenarios"
	"github.com/mcpbench/bench/traces"
)

// clientName is how bench introduces itself in the MCP handshake.
const clientName = "bench"

// conn is a live MCP session with a server, and the process behind it.
type conn struct {
	proc  *process // nil when the profile launches nothing (http to a running server)
	cs    *mcp.ClientSession
	wire  *wireLog
	watch *wireWatch
	elic  *elicitor
	tools []*mcp.Tool
	init  traces.Initialize

	mu      sync.Mutex
	schemas map[string]*scenarios.Schema // compiled on first call, per tool (server name)
	ts      *toolSet                     // built on first use
	// compiled, when set, holds the schemas compiled across sessions (the
	// Recorder's): a fresh server per run offers the same tools again.
	compiled *schemaCache
}

// schemaCache holds compiled input schemas by their JSON, across sessions
// (nil for a schema that does not compile). A compiled schema is only read
// once compiled (scenarios.Schema is safe for concurrent use).
type schemaCache = memo.Bytes[*scenarios.Schema]

const schemaCacheMax = 1024

// compileIn is the compiled schema raw from c (compiled there once), or
// compiled now without c.
func compileIn(c *schemaCache, raw []byte) *scenarios.Schema {
	if c == nil {
		return compileOrNil(raw)
	}
	return c.Get(raw, compileOrNil)
}

// compileOrNil is the compiled schema raw, nil if it does not compile (a
// call of its tool then goes unchecked).
func compileOrNil(raw []byte) *scenarios.Schema {
	s, err := scenarios.CompileSchema(json.RawMessage(raw))
	if err != nil {
		return nil
	}
	return s
}

// schema returns the compiled input schema of the server's tool name, or
// nil when it has none bench can compile (the call then goes unchecked).
func (c *conn) schema(name string) *scenarios.Schema {
	c.mu.Lock()
	defer c.mu.Unlock()
	if sch, ok := c.schemas[name]; ok {
		return sch
	}
	if c.schemas == nil {
		c.schemas = map[string]*scenarios.Schema{}
	}
	var sch *scenarios.Schema
	for _, t := range c.tools {
		if t.Name == name {
			sch = compileIn(c.compiled, mustJSON(t.InputSchema))
		}
	}
	c.schemas[name] = sch
	return sch
}

// close ends the session and the server. It never blocks longer than the
// process's stop sequence.
func (c *conn) close() {
	if c.cs != nil {
		done := make(chan struct{})
		go func() { c.cs.Close(); close(done) }()
		if c.proc != nil {
			c.proc.stop() // unblocks a Close stuck on a server that ignores stdin
		}
		<-done
	} else if c.proc != nil {
		c.proc.stop()
	}
	c.proc.dropFaketimeShm()
}

// dead reports whether the server process has exited.
func (c *conn) dead() bool { return c.proc != nil && c.proc.exited() }

// launch starts the profile's server with env and connects an MCP client
// to it. It gives up when ctx ends or the profile's start timeout passes.
// compiled, when not nil, is where its tools' input schemas are compiled.
func launch(ctx context.Context, p *Profile, v Vars, env []string, o *Options, cf *confine, compiled *schemaCache) (*conn, error) {
	ctx, cancel := context.WithTimeout(ctx, time.Duration(p.StartTimeout))
	defer cancel()
	c := &conn{wire: &wireLog{limit: 64}, elic: &elicitor{}, watch: newWireWatch(), compiled: compiled}
	ctx, unbind := c.watch.bind(ctx)
	defer unbind()
	if cmd := p.Argv(); len(cmd) > 0 && o.Connect == nil {
		argv := make([]string, len(cmd))
		for i, a := range cmd {
			argv[i] = v.Expand(a)
		}
		if cf != nil {
			cf.timeout = time.Duration(p.StartTimeout)
		}
		proc, err := startProcess(argv, p.WorkDir(), env, o.StderrLimit, o.StopGrace, cf)
		if err != nil {
			return nil, err
		}
		proc.signalFirst = p.Transport == TransportHTTP
		c.proc = proc
	}
	fail := func(err error) (*conn, error) {
		if b := c.watch.err(); b != nil {
			// The cause, not what it led to (a cancelled handshake, a
			// server that exits once its stdin is closed).
			err = fmt.Errorf("%w: %w", b, errNotStarted)
		}
		if c.proc != nil {
			c.proc.kill()
			c.proc.dropFaketimeShm()
			if st := c.proc.exitStatus(); st != "" && ctx.Err() == nil {
				err = fmt.Errorf("%w (server %s)", err, st)
			}
			if t := strings.TrimSpace(c.proc.stderr.String()); t != "" {
				if len(t) > 2000 {
					t = "..." + t[len(t)-2000:]
				}
				err = fmt.Errorf("%w; server stderr:\n%s", err, t)
			}
		}
		return nil, err
	}
	client := mcp.NewClient(&mcp.Implementation{Name: clientName, Version: o.Harness}, &mcp.ClientOptions{
		// Advertise nothing but elicitation: default capabilities (roots)
		// change what some servers offer (see the notes on server-everything).
		Capabilities:       &mcp.ClientCapabilities{Elicitation: &mcp.ElicitationCapabilities{}},
		ElicitationHandler: c.elic.handle,
	})
	var transport mcp.Transport
	switch {
	case o.Connect != nil:
		rwc, err := o.Connect(ctx, env)
		if err != nil {
			return fail(err)
		}
		transport = stdioTransport(rwc, nopCloser{rwc}, c.watch, o.MaxMessageBytes)
	case p.Transport == TransportStdio:
		transport = stdioTransport(c.proc.stdout, c.proc.stdin, c.watch, o.MaxMessageBytes)
	case p.Transport == TransportHTTP:
		url := v.Expand(p.URL)
		hc := httpClient(c.proc.transport(o.HTTPTransport), c.wire, c.watch, o.MaxMessageBytes)
		ready, anyStatus := v.Expand(p.Ready), false
		if ready == "" && c.proc != nil {
			// No ready URL: the server is ready when its endpoint answers
			// at all (a GET on an MCP endpoint may well be a 4xx).
			ready, anyStatus = url, true
		}
		if err := waitReady(ctx, hc, ready, anyStatus, c.proc); err != nil {
			return fail(err)
		}
		transport = httpTransport(url, hc, o.MaxMessageBytes)
	}
	type result struct {
		cs  *mcp.ClientSession
		err error
	}
	ch := make(chan result, 1)
	go func() {
		cs, err := client.Connect(ctx, transport, &mcp.ClientSessionOptions{ProtocolVersion: p.ProtocolVersion})
		ch <- result{cs, err}
	}()
	var res result
	var exited <-chan struct{}
	if c.proc != nil {
		exited = c.proc.done
	}
	select {
	case res = <-ch:
	case <-exited:
		// A server that exits at start never answers: do not wait for the
		// start timeout.
		return fail(fmt.Errorf("server exited during start-up: %w", errNotStarted))
	}
	if res.err != nil {
		if ctx.Err() != nil && errors.Is(ctx.Err(), context.DeadlineExceeded) {
			return fail(fmt.Errorf("no MCP handshake within the start timeout (%s): %w", time.Duration(p.StartTimeout), errNotStarted))
		}
		return fail(fmt.Errorf("MCP handshake: %w", res.err))
	}
	c.cs = res.cs
	ir := c.cs.InitializeResult()
	if ir != nil {
		c.init.ProtocolVersion = ir.ProtocolVersion
		c.init.ServerInfo = mustJSON(ir.ServerInfo)
		c.init.Capabilities = mustJSON(ir.Capabilities)
		c.init.Instructions = ir.Instructions
	}
	tools, err := listTools(ctx, c.cs)
	if err == nil {
		err = checkDefinitions(tools, c.init.Instructions)
	}
	if err != nil {
		c.close()
		if b := c.watch.err(); b != nil {
			err = b
		}
		return nil, fmt.Errorf("listing tools: %w", err)
	}
	c.tools = tools
	return c, nil
}

// stdioTransport is the MCP transport over a server's stdout (r) and stdin
// (w), or an in-process connection: bench reads each message, of at most
// limit bytes, and shows the watch every message either way. The SDK's own
// bound backs bench's up (sdkLimit).
func stdioTransport(r io.ReadCloser, w io.WriteCloser, watch *wireWatch, limit int) *mcp.IOTransport {
	return &mcp.IOTransport{Reader: newLineReader(r, watch, limit), Writer: &watchWriter{w: w, watch: watch},
		MaxLineLength: sdkLimit(limit)}
}

// httpClient is the HTTP client bench speaks to a streamable HTTP server
// with: its exchanges logged, every answer's body bounded (limitBody) and
// every message shown to the watch.
func httpClient(base http.RoundTripper, log *wireLog, watch *wireWatch, limit int) *http.Client {
	return &http.Client{Transport: &captureRT{base: base, log: log, watch: watch, limit: limit}, CheckRedirect: sameOrigin}
}

// sameOrigin lets bench follow a server's redirect only to the server
// itself (scheme, host and port): a redirect elsewhere would have bench
// itself connect to an outside host or another loopback port for it.
func sameOrigin(req *http.Request, via []*http.Request) error {
	if len(via) >= 10 {
		return errors.New("the server redirected 10 times")
	}
	first := via[0].URL
	if req.URL.Scheme != first.Scheme || req.URL.Host != first.Host {
		return fmt.Errorf("the server redirected to %s, another origin than its own (%s://%s): bench follows none", escape.Line(req.URL.Redacted()), first.Scheme, first.Host)
	}
	return nil
}

// httpTransport is the MCP transport to the streamable HTTP server at url,
// through hc (httpClient). The SDK's bound on an SSE event backs bench's
// up (sdkLimit): left at 0, the SDK reads an event without end.
func httpTransport(url string, hc *http.Client, limit int) *mcp.StreamableClientTransport {
	return &mcp.StreamableClientTransport{Endpoint: url, HTTPClient: hc, MaxRetries: -1, MaxEventSize: sdkLimit(limit)}
}

// maxDefinitionBytes bounds what a server defines for the model: its tool
// list (as JSON) and its instructions together. Every model turn carries
// them, and bench keeps a copy per turn: 30 MB of one description cost
// bench 1.3 GB. The servers bench compares define 10 to 25 KB.
const maxDefinitionBytes = 4 << 20

// checkDefinitions refuses tool definitions and instructions over
// maxDefinitionBytes.
func checkDefinitions(tools []*mcp.Tool, instructions string) error {
	n := len(instructions)
	for _, t := range tools {
		b, err := json.Marshal(t)
		if err != nil {
			return err
		}
		n += len(b)
		if n > maxDefinitionBytes {
			break
		}
	}
	if n > maxDefinitionBytes {
		return fmt.Errorf("the server's tool definitions and instructions are over %s, bench's limit (every model turn carries them)", bounded.Size(maxDefinitionBytes))
	}
	return nil
}

// Bounds on a server's tool list: pages of tools/list, and tools in all.
// A server whose cursor never ends would otherwise be listed until its
// start timeout, its tools held all the while.
const (
	maxToolPages = 1000
	maxTools     = 20000
)

// listTools lists the server's tools page by page, within maxToolPages and
// maxTools, and refuses a cursor the server already gave.
func listTools(ctx context.Context, cs *mcp.ClientSession) ([]*mcp.Tool, error) {
	var out []*mcp.Tool
	seen := map[string]bool{}
	params := &mcp.ListToolsParams{}
	for page := 1; ; page++ {
		res, err := cs.ListTools(ctx, params)
		if err != nil {
			return nil, err
		}
		out = append(out, res.Tools...)
		switch {
		case len(out) > maxTools:
			return nil, fmt.Errorf("the server listed over %d tools, bench's limit (a tools/list cursor that never ends?)", maxTools)
		case res.NextCursor == "":
			return out, nil
		case seen[res.NextCursor]:
			return nil, fmt.Errorf("the server gave tools/list cursor %q twice (page %d): its tool list never ends", escape.Line(res.NextCursor), page)
		case page >= maxToolPages:
			return nil, fmt.Errorf("the server's tool list is over %d pages, bench's limit (a tools/list cursor that never ends?)", maxToolPages)
		}
		seen[res.NextCursor] = true
		params = &mcp.ListToolsParams{Cursor: res.NextCursor}
	}
}

// nopCloser lets the reader end of an in-process connection close it, once.
type nopCloser struct{ io.Writer }

func (nopCloser) Close() error { return nil }

// waitReady polls the ready URL (if any) until it answers 2xx (or, with
// anyStatus, anything below 500).
func waitReady(ctx context.Context, hc *http.Client, ready string, anyStatus bool, proc *process) error {
	if ready == "" {
		return nil
	}
	tick := time.NewTicker(25 * time.Millisecond)
	defer tick.Stop()
	var last error
	for {
		req, _ := http.NewRequestWithContext(ctx, http.MethodGet, ready, nil)
		resp, err := hc.Do(req)
		if err == nil {
			io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
			if resp.StatusCode/100 == 2 || anyStatus && resp.StatusCode < 500 {
				return nil
			}
			err = fmt.Errorf("%s answered %s", ready, resp.Status)
		}
		last = err
		var exited <-chan struct{}
		if proc != nil {
			exited = proc.done
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("server not ready within the start timeout (%v): %w", last, errNotStarted)
		case <-exited:
			return fmt.Errorf("server exited before it was ready: %w", errNotStarted)
		case <-tick.C:
		}
	}
}

// maxElicitations bounds the elicitations bench answers in one run: past
// it, each is cancelled and not recorded, so that a server asking without
// end costs neither memory nor a trace of unbounded size.
const maxElicitations = 100

// elicitor answers a server's elicitation requests as the current run's
// scenario says, and records each exchange.
type elicitor struct {
	mu     sync.Mutex
	answer string // approve | decline
	call   int
	record func(traces.Elicitation)
	n      int // answered in this run
}

func (e *elicitor) set(answer string, call int, record func(traces.Elicitation)) {
	e.mu.Lock()
	e.answer, e.call, e.record, e.n = answer, call, record, 0
	e.mu.Unlock()
}

func (e *elicitor) setCall(call int) {
	e.mu.Lock()
	e.call = call
	e.mu.Unlock()
}

func (e *elicitor) handle(_ context.Context, req *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
	e.mu.Lock()
	answer, call, record := e.answer, e.call, e.record
	e.n++
	over := e.n > maxElicitations
	e.mu.Unlock()
	if over {
		return &mcp.ElicitResult{Action: "cancel"}, nil
	}
	res := &mcp.ElicitResult{Action: "decline"}
	if answer == "approve" {
		res = &mcp.ElicitResult{Action: "accept", Content: approveContent(req.Params.RequestedSchema)}
	}
	if record != nil {
		ev := traces.Elicitation{Call: call, Message: req.Params.Message, Action: res.Action}
		if req.Params.RequestedSchema != nil {
			ev.Schema = mustJSON(req.Params.RequestedSchema)
		}
		if res.Content != nil {
			ev.Content = mustJSON(res.Content)
		}
		record(ev)
	}
	return res, nil
}

// approveContent fills a form that confirms: booleans true, enums their
// first value, other fields their default or a neutral value.
func approveContent(schema any) map[string]any {
	var s struct {
		Properties map[string]struct {
			Type    string `json:"type"`
			Enum    []any  `json:"enum"`
			Default any    `json:"default"`
		} `json:"properties"`
	}
	json.Unmarshal(mustJSON(schema), &s)
	out := map[string]any{}
	for name, p := range s.Properties {
		switch {
		case p.Type == "boolean":
			out[name] = true
		case len(p.Enum) > 0:
			out[name] = p.Enum[0]
		case p.Default != nil:
			out[name] = p.Default
		case p.Type == "string":
			out[name] = "yes"
		case p.Type == "number" || p.Type == "integer":
			out[name] = 0
		}
	}
	return out
}

// captureRT records the HTTP exchanges between bench and a streamable
// HTTP server at the RoundTripper (wrapping the MCP connection would hide
// the SDK's session hooks), with credentials redacted. It shows the watch
// each message bench sends, and bounds each answer's body to limit bytes
// (an SSE stream, each of its events).
type captureRT struct {
	base  http.RoundTripper
	log   *wireLog
	watch *wireWatch
	limit int
}

// exchange is one HTTP request bench sent to a streamable HTTP server.
type exchange struct {
	Method  string              `json:"method"`
	Path    string              `json:"path"`
	Header  map[string][]string `json:"header,omitempty"` // redacted
	Status  int                 `json:"status"`
	Error   string              `json:"error,omitempty"`
	ReqSize int64               `json:"request_bytes"`
}

func (rt *captureRT) RoundTrip(req *http.Request) (*http.Response, error) {
	base := rt.base
	if base == nil {
		base = http.DefaultTransport
	}
	ex := exchange{Method: req.Method, Path: req.URL.Path, Header: redactHeader(req.Header), ReqSize: req.ContentLength}
	if req.GetBody != nil {
		if body, err := req.GetBody(); err == nil {
			head, _ := io.ReadAll(io.LimitReader(body, headBytes))
			body.Close()
			rt.watch.sentMessage(head)
		}
	}
	resp, err := base.RoundTrip(req)
	if err != nil {
		ex.Error = err.Error()
	} else {
		ex.Status = resp.StatusCode
		resp.Body = limitBody(resp.Body, resp.Header.Get("Content-Type"), resp.StatusCode, rt.watch, rt.limit)
	}
	rt.log.add(ex)
	return resp, err
}

// redactHeader copies h with credentials replaced.
func redactHeader(h http.Header) map[string][]string {
	out := map[string][]string{}
	for k, v := range h {
		lk := strings.ToLower(k)
		if lk == "authorization" || lk == "proxy-authorization" || lk == "cookie" || strings.Contains(lk, "api-key") || strings.Contains(lk, "token") {
			out[k] = []string{"[REDACTED]"}
			continue
		}
		out[k] = append([]string(nil), v...)
	}
	return out
}

// wireLog keeps the last exchanges (bounded).
type wireLog struct {
	mu    sync.Mutex
	limit int
	n     int
	last  []exchange
}

func (w *wireLog) add(e exchange) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.n++
	if len(w.last) >= w.limit {
		w.last = w.last[1:]
	}
	w.last = append(w.last, e)
}

// failures returns the exchanges that failed, for an error message.
func (w *wireLog) failures() []exchange {
	w.mu.Lock()
	defer w.mu.Unlock()
	var out []exchange
	for _, e := range w.last {
		if e.Error != "" || e.Status >= 400 {
			out = append(out, e)
		}
	}
	return out
}

func mustJSON(v any) json.RawMessage {
	b, err := json.Marshal(v)
	if err != nil {
		return nil
	}
	return b
}
