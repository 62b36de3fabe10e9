package fakecentral

import (
	"bytes"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// Central is the fake: an http.Handler over a per-run state, with a journal.
// It is safe for concurrent use.
type Central struct {
	opts  Options
	fx    *Fixture
	token string

	mu           sync.RWMutex // guards st and dirty
	st           *state
	dirty        bool       // st may differ from the fixture: a request other than a read reached it
	jmu          sync.Mutex // guards the fields below
	journal      []Entry
	seq          int
	toolCall     int
	sawToolCall  bool
	start        time.Time
	force401     int
	faults       []faultState
	pageSize     atomic.Int32 // Options.PageSize, or SetPageSize's
	overrideKeys []string     // Options.ClassOverrides keys, sorted
	dropped      int
	captured     int64                  // bytes of bodies kept in this run's journal
	inflight     map[*http.Request]bool // requests being answered
}

// New returns a fake Central serving opts.Fixture (default site-a).
func New(opts *Options) *Central {
	o := opts.withDefaults()
	if o.Fixture == nil {
		o.Fixture = MustLoadFixture("site-a")
	}
	c := &Central{opts: o, fx: o.Fixture, token: o.Fixture.Token()}
	for k := range o.ClassOverrides {
		c.overrideKeys = append(c.overrideKeys, k)
	}
	sort.Strings(c.overrideKeys)
	c.Reset()
	return c
}

// Fixture returns the bundle served.
func (c *Central) Fixture() *Fixture { return c.fx }

// Token is the access token the token endpoints issue. It is deterministic
// (derived from the fixture version) and always accepted, so a harness can
// pre-seed a server's token cache with it.
func (c *Central) Token() string { return c.token }

// Secrets are the fixture's canaries plus the issued token.
func (c *Central) Secrets() []string { return append(c.fx.Secrets(), c.token) }

// Reset restores the fixture state and clears the journal, the tool-call
// marker, the forced 401 count and the faults (re-armed from Options).
func (c *Central) Reset() {
	// Only a request that is not a GET can change the state (writes,
	// troubleshooting POSTs and the async operations they start), so after
	// a read-only run the state is still the fixture's and rebuilding it,
	// the costly part of a reset, is skipped.
	c.mu.Lock()
	if c.dirty || c.st == nil {
		c.st = newState(c.fx)
		c.dirty = false
	}
	c.mu.Unlock()
	c.jmu.Lock()
	c.journal = nil
	c.dropped = 0
	c.captured = 0
	c.seq = 0
	c.toolCall = -1
	c.sawToolCall = false
	c.start = c.opts.Now()
	c.force401 = c.opts.Force401
	c.faults = armFaults(c.opts.Faults)
	c.pageSize.Store(int32(c.opts.PageSize))
	c.jmu.Unlock()
}

// ResetClock makes Options.Now's current reading the origin of the
// journal's offsets, keeping the entries journaled so far, dated at the
// new origin: a server started ahead of its run counts from the run's
// start, and what it asked while it started (read on another clock, the
// one it started under) is at that start.
func (c *Central) ResetClock() {
	c.jmu.Lock()
	c.start = c.opts.Now()
	for i := range c.journal {
		c.journal[i].At, c.journal[i].OffsetMS = c.start, 0
	}
	c.jmu.Unlock()
}

// SetPageSize caps the items of every list page for the current run
// (0: the documented limits; Options.PageSize).
func (c *Central) SetPageSize(n int) { c.pageSize.Store(int32(max(n, 0))) }

// SetFaults replaces the faults of the current run.
func (c *Central) SetFaults(f []Fault) {
	c.jmu.Lock()
	c.faults = armFaults(f)
	c.jmu.Unlock()
}

// Force401 makes the next n authenticated requests answer 401.
func (c *Central) Force401(n int) {
	c.jmu.Lock()
	c.force401 = n
	c.jmu.Unlock()
}

// BeginToolCall marks tool call i (0-based) as in flight: requests from now
// until EndToolCall are attributed to it.
func (c *Central) BeginToolCall(i int) {
	c.jmu.Lock()
	c.toolCall = i
	c.sawToolCall = true
	c.jmu.Unlock()
}

// EndToolCall ends the tool call in flight.
func (c *Central) EndToolCall() {
	c.jmu.Lock()
	c.toolCall = -1
	c.jmu.Unlock()
}

// JournalDropped is how many requests of the current run exceeded
// Options.JournalLimit and were not kept.
func (c *Central) JournalDropped() int {
	c.jmu.Lock()
	defer c.jmu.Unlock()
	return c.dropped
}

// InFlight lists the requests the fake is answering at this moment
// ("METHOD path", sorted): when a tool call hangs, it tells whether the
// server is waiting on the fake (and for what) or on nothing the fake holds.
func (c *Central) InFlight() []string {
	c.jmu.Lock()
	out := make([]string, 0, len(c.inflight))
	for r := range c.inflight { // serve reads these fields, never writes them
		out = append(out, r.Method+" "+r.URL.Path)
	}
	c.jmu.Unlock()
	sort.Strings(out)
	return out
}

// Journal returns a copy of the journal of the current run.
func (c *Central) Journal() []Entry {
	c.jmu.Lock()
	defer c.jmu.Unlock()
	return append([]Entry(nil), c.journal...)
}

// apiError is a Central-style error answer.
type apiError struct {
	status  int
	code    string
	message string
}

func (e *apiError) Error() string { return fmt.Sprintf("%d %s: %s", e.status, e.code, e.message) }

func badRequest(format string, args ...any) *apiError {
	return &apiError{status: 400, message: fmt.Sprintf(format, args...)}
}

func notFound(format string, args ...any) *apiError {
	return &apiError{status: 404, code: "HPE_GL_ERROR_NOT_FOUND", message: fmt.Sprintf(format, args...)}
}

// request is what handlers get.
type request struct {
	c      *Central
	r      *http.Request
	method string
	path   string
	segs   []string
	params map[string]string
	query  url.Values
	body   []byte
	route  *route
	host   string // the intercepted host name for proxied requests, "" otherwise
}

func (rq *request) param(name string) string { return rq.params[name] }

// recorder holds the response until the request is journaled: a client
// that has its answer must find the request in the journal (the recorder
// attributes calls by reading the journal once a tool call returns).
type recorder struct {
	http.ResponseWriter
	status int
	bytes  int
	buf    bytes.Buffer
}

func (w *recorder) WriteHeader(s int) {
	if w.status == 0 {
		w.status = s
	}
}

func (w *recorder) Write(b []byte) (int, error) {
	if w.status == 0 {
		w.status = 200
	}
	w.bytes += len(b)
	return w.buf.Write(b)
}

// flush sends the held response.
func (w *recorder) flush() {
	if w.status == 0 {
		w.status = 200
	}
	w.ResponseWriter.WriteHeader(w.status)
	w.ResponseWriter.Write(w.buf.Bytes())
}

// ServeHTTP implements http.Handler.
func (c *Central) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	c.serve(w, r, "")
}

const maxBody = 1 << 20

func (c *Central) serve(w http.ResponseWriter, r *http.Request, host string) {
	c.jmu.Lock()
	if c.inflight == nil {
		c.inflight = map[*http.Request]bool{}
	}
	c.inflight[r] = true
	c.jmu.Unlock()
	defer func() {
		c.jmu.Lock()
		delete(c.inflight, r)
		c.jmu.Unlock()
	}()
	rec := &recorder{ResponseWriter: w}
	began := c.opts.Now()
	body, _ := io.ReadAll(io.LimitReader(r.Body, maxBody))
	path := r.URL.Path
	if len(path) > 1 {
		path = strings.TrimSuffix(path, "/")
	}
	rq := &request{c: c, r: r, method: r.Method, path: path, segs: splitPath(path), body: body, host: host}
	e := Entry{Method: r.Method, Path: path, Query: r.URL.RawQuery, Host: host, At: began}
	if len(body) > 0 {
		sum := sha256.Sum256(body)
		e.BodySHA256 = hex.EncodeToString(sum[:])
	}
	if r.Method != http.MethodGet && r.Method != http.MethodHead && !isTokenPath(path) {
		c.mu.Lock()
		c.dirty = true
		c.mu.Unlock()
	}
	dropped := c.dispatchSafe(rec, rq, &e)
	e.Status = rec.status
	e.ResponseBytes = rec.bytes
	e.LatencyUS = c.opts.Now().Sub(began).Microseconds()
	if c.opts.CaptureBodies {
		e.RequestBody = body
		e.ResponseBody = bytes.Clone(rec.buf.Bytes())
	}
	c.record(e)
	if dropped {
		// A dropped connection: net/http closes it without a response.
		panic(http.ErrAbortHandler)
	}
	rec.flush()
}

// dispatchSafe runs dispatch, turning a drop fault into a flag and any other
// panic into Central's 500 (a bug in a handler must never kill the run).
func (c *Central) dispatchSafe(w *recorder, rq *request, e *Entry) (dropped bool) {
	defer func() {
		if v := recover(); v != nil {
			if _, ok := v.(dropSignal); ok {
				dropped = true
				return
			}
			e.Fault = fmt.Sprintf("panic: %v", v)
			if w.status == 0 {
				writeError(w, rq, &apiError{status: 500, message: "Internal server error"})
			}
		}
	}()
	c.dispatch(w, rq, e)
	return false
}

// RecordEgress journals a connection attempt to addr (host:port) that
// never reached the fake: the kernel refused it (a sandbox, see the
// recorder). source names who saw it.
func (c *Central) RecordEgress(addr, source string) {
	c.record(Entry{Method: "CONNECT", Host: addr, Class: ClassEgress, Egress: true, Source: source})
}

func (c *Central) record(e Entry) {
	c.jmu.Lock()
	c.seq++
	e.Seq = c.seq
	now := c.opts.Now()
	if e.At.IsZero() {
		e.At = now
	}
	e.OffsetMS = now.Sub(c.start).Milliseconds()
	e.ToolCall = c.toolCall
	e.Boot = !c.sawToolCall
	if n := int64(len(e.RequestBody) + len(e.ResponseBody)); n > 0 {
		if c.captured+n > c.opts.MaxCapturedBytes {
			e.RequestBody, e.ResponseBody, e.BodiesDropped = nil, nil, true
		} else {
			c.captured += n
		}
	}
	if len(c.journal) < c.opts.JournalLimit {
		c.journal = append(c.journal, e)
	} else {
		c.dropped++
	}
	c.jmu.Unlock()
	if c.opts.Log != nil {
		fmt.Fprintln(c.opts.Log, e.String())
	}
}

func (c *Central) dispatch(w *recorder, rq *request, e *Entry) {
	if isTokenPath(rq.path) {
		// The token endpoint can be throttled too (a fault on its route).
		e.Class, e.Route, e.Source = ClassAuth, "POST "+rq.path, "auth"
		if !c.faulted(w, rq, e) {
			c.serveToken(w, rq)
		}
		return
	}
	rt, params := findRoute(rq.method, rq.segs)
	var cr *catalogRoute
	if rt == nil && !c.opts.NoCatalog {
		cr, params = findCatalogRoute(rq.method, rq.segs)
	} else if rt != nil && !c.opts.NoCatalog {
		// A documented literal segment beats a modelled entity id: GET
		// /network-monitoring/v1/switches/topn-interface-trends is its own
		// route, not the switch with serial "topn-interface-trends".
		if c2, p2 := findCatalogRoute(rq.method, rq.segs); c2 != nil && shadows(rt.segs, splitPath(c2.Path)) {
			rt, cr, params = nil, c2, p2
		}
	}
	rq.params = params
	rq.route = rt
	e.Class = Classify(rq.method, rq.path)
	switch {
	case rt != nil:
		e.Route, e.Source = rt.name, string(Modelled)
		if rt.class != "" {
			e.Class = rt.class
		}
	case cr != nil:
		e.Route, e.Source = cr.Method+" "+cr.Path, string(FromCatalog)
	default:
		e.Source = string(NotServed)
	}
	// Overrides apply in sorted order so that, when several match, the
	// outcome does not depend on map iteration.
	for _, pat := range c.overrideKeys {
		if ParsePattern(pat).Match(rq.method, rq.segs) {
			e.Class = c.opts.ClassOverrides[pat]
		}
	}
	// Auth comes first: Central checks the token before anything else.
	if !c.authorized(rq.r) {
		e.Fault = "unauthorized"
		writeError(w, rq, &apiError{status: 401, code: "HPE_GL_ERROR_UNAUTHORIZED", message: "Unauthorized: the access token is missing, invalid or expired"})
		return
	}
	if c.take401() {
		e.Fault = "forced-401"
		writeError(w, rq, &apiError{status: 401, code: "HPE_GL_ERROR_UNAUTHORIZED", message: "Unauthorized: the access token has expired"})
		return
	}
	if c.faulted(w, rq, e) {
		return
	}
	switch {
	case rt != nil:
		if err := checkQuery(rq, rt.query(), rt.required()); err != nil {
			writeError(w, rq, err)
			return
		}
		rq.query = rq.r.URL.Query()
		if err := c.runLocked(w, rq, rt); err != nil {
			writeError(w, rq, err)
		}
	case cr != nil:
		if err := checkQuery(rq, cr.Query, cr.Req); err != nil {
			writeError(w, rq, err)
			return
		}
		if err := c.unknownEntity(rq); err != nil {
			writeError(w, rq, err)
			return
		}
		c.serveCatalog(w, rq, cr)
	default:
		writeError(w, rq, notFound("Resource not found for the given input. No route for %s %s", rq.method, rq.path))
	}
}

// runLocked runs a modelled handler under the state lock its route needs.
func (c *Central) runLocked(w http.ResponseWriter, rq *request, rt *route) *apiError {
	if rt.write {
		c.mu.Lock()
		defer c.mu.Unlock()
	} else {
		c.mu.RLock()
		defer c.mu.RUnlock()
	}
	return rt.handle(w, rq, c.st)
}

func (c *Central) authorized(r *http.Request) bool {
	h := r.Header.Get("Authorization")
	tok, ok := strings.CutPrefix(h, "Bearer ")
	if !ok {
		tok, ok = strings.CutPrefix(h, "bearer ")
	}
	return ok && strings.TrimSpace(tok) == c.token
}

func (c *Central) take401() bool {
	c.jmu.Lock()
	defer c.jmu.Unlock()
	if c.force401 > 0 {
		c.force401--
		return true
	}
	return false
}

// unknownEntity answers 404 for a documented but unmodelled route about a
// device or site the fixture does not have, as Central does, instead of a
// generated body that would describe an entity that does not exist.
func (c *Central) unknownEntity(rq *request) *apiError {
	c.mu.RLock()
	defer c.mu.RUnlock()
	if s, ok := rq.params["serial-number"]; ok {
		if _, ok := c.st.dev[s]; !ok {
			return notFound("Resource not found for the given input.")
		}
	}
	if s, ok := rq.params["site-id"]; ok {
		if _, ok := c.st.siteByID[s]; !ok {
			return notFound("Resource not found for the given input.")
		}
	}
	return nil
}

// shadows reports whether a modelled pattern binds an entity id where a
// documented route has a literal segment. The generic models (config objects,
// troubleshooting actions) are meant to stand for many documented routes.
func shadows(modelled, documented []string) bool {
	for i, s := range modelled {
		if i < len(documented) && isParam(s) && !isParam(documented[i]) {
			switch s {
			case "{resource}", "{name}", "{device-type}", "{action}":
				continue
			}
			return true
		}
	}
	return false
}

// strictFamilies answer 400 to undeclared query parameters, as Central does.
var strictFamilies = map[string]bool{"network-monitoring": true, "network-notifications": true, "network-services": true}

func checkQuery(rq *request, declared, required []string) *apiError {
	q, err := url.ParseQuery(rq.r.URL.RawQuery)
	if err != nil {
		return badRequest("Invalid query string: %v", err)
	}
	if len(rq.segs) > 0 && strictFamilies[rq.segs[0]] {
		for k := range q {
			// The strict families still accept (and ignore) offset on
			// their lists, cursor-paged ones included: a live audit of
			// every request of nowireless4u/hpe-networking-mcp confirmed
			// it (its CHANGELOG, 3.7.0.0: "offset on list endpoints").
			if k == "offset" && contains(declared, "limit") {
				continue
			}
			if !contains(declared, k) {
				return badRequest("Unknown query parameter: %s", k)
			}
		}
	}
	for _, k := range required {
		if q.Get(k) == "" {
			return badRequest("Missing required query parameter: %s", k)
		}
	}
	return nil
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// debugID is deterministic: a hash of the method and path. Not of the
// query: servers put wall-clock time windows there, and an error body that
// changed with them would make a replay of an unchanged server miss.
func debugID(rq *request) string {
	sum := sha256.Sum256([]byte(rq.method + " " + rq.path))
	return hex.EncodeToString(sum[:8])
}

func writeError(w http.ResponseWriter, rq *request, err *apiError) {
	code := err.code
	if code == "" {
		code = errorCode(rq.segs, err.status)
	}
	body := map[string]any{
		"httpStatusCode": err.status,
		"errorCode":      code,
		"message":        err.message,
		"debugId":        debugID(rq),
	}
	writeJSON(w, err.status, body)
}

// errorCode picks the errorCode Central's definitions use per family.
func errorCode(segs []string, status int) string {
	fam := ""
	if len(segs) > 0 {
		fam = segs[0]
	}
	switch status {
	case 400:
		switch fam {
		case "network-monitoring":
			return "HPE_GL_NETWORK_MONITORING_INVALID_INPUT"
		case "network-troubleshooting":
			return "HPE_GL_NETWORK_EVENTS_INVALID_INPUT"
		case "network-config":
			return "HPE_GL_ERROR_BAD_REQUEST"
		}
		return "HPE_GL_ERROR_BAD_REQUEST"
	case 401:
		return "HPE_GL_ERROR_UNAUTHORIZED"
	case 404:
		return "HPE_GL_ERROR_NOT_FOUND"
	case 412:
		return "HPE_GL_ERROR_PRECONDITION_FAILED"
	case 429:
		return "HPE_GL_ERROR_TOO_MANY_REQUESTS"
	case 500:
		if fam == "network-monitoring" {
			return "HPE_GL_NETWORK_MONITORING_INTERNAL_SERVER_ERROR"
		}
		return "HPE_GL_ERROR_INTERNAL_SERVER_ERROR"
	}
	return "HPE_GL_ERROR"
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	b, err := marshal(v)
	if err != nil {
		status, b = 500, []byte(`{"httpStatusCode":500,"errorCode":"HPE_GL_ERROR_INTERNAL_SERVER_ERROR","message":"encode","debugId":"0"}`)
	}
	writeRaw(w, status, b)
}

func writeRaw(w http.ResponseWriter, status int, b []byte) {
	h := w.Header()
	h.Set("Content-Type", "application/json")
	h.Set("Content-Length", strconv.Itoa(len(b)))
	w.WriteHeader(status)
	w.Write(b)
}

// marshal encodes deterministically (maps have sorted keys) without HTML
// escaping, so "<" in a fixture string stays "<".
func marshal(v any) ([]byte, error) {
	var sb strings.Builder
	enc := json.NewEncoder(&sb)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return []byte(strings.TrimSuffix(sb.String(), "\n")), nil
}

// serveToken implements the OAuth2 client-credentials token endpoints.
func (c *Central) serveToken(w http.ResponseWriter, rq *request) {
	if rq.method != http.MethodPost {
		writeJSON(w, 405, map[string]any{"error": "invalid_request", "error_description": "use POST"})
		return
	}
	form, _ := url.ParseQuery(string(rq.body))
	for k, v := range rq.r.URL.Query() {
		if form.Get(k) == "" {
			form[k] = v
		}
	}
	if gt := form.Get("grant_type"); gt != "client_credentials" {
		writeJSON(w, 400, map[string]any{"error": "unsupported_grant_type", "error_description": "grant_type must be client_credentials"})
		return
	}
	id, secret := form.Get("client_id"), form.Get("client_secret")
	if u, p, ok := basicAuth(rq.r.Header.Get("Authorization")); ok {
		id, secret = u, p
	}
	if id == "" || (c.opts.ClientID != "" && (id != c.opts.ClientID || secret != c.opts.ClientSecret)) {
		writeJSON(w, 401, map[string]any{"error": "invalid_client", "error_description": "client authentication failed"})
		return
	}
	writeJSON(w, 200, map[string]any{
		"access_token": c.token,
		"token_type":   "Bearer",
		"expires_in":   int(c.opts.TokenTTL / time.Second),
	})
}

func basicAuth(h string) (user, pass string, ok bool) {
	raw, found := strings.CutPrefix(h, "Basic ")
	if !found {
		return "", "", false
	}
	b, err := base64.StdEncoding.DecodeString(strings.TrimSpace(raw))
	if err != nil {
		return "", "", false
	}
	u, p, ok := strings.Cut(string(b), ":")
	if !ok {
		return "", "", false
	}
	if uu, err := url.QueryUnescape(u); err == nil {
		u = uu
	}
	if pp, err := url.QueryUnescape(p); err == nil {
		p = pp
	}
	return u, p, true
}
