package recorder

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"mime"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/mcpbench/bench/internal/bounded"
	"github.com/mcpbench/bench/traces"
)

// DefaultMaxMessageBytes is the default of Options.MaxMessageBytes: the
// most bench reads of one MCP message from a server, on any transport.
const DefaultMaxMessageBytes = 32 << 20

// sdkBackstop is how far above bench's own limit the SDK's limits are set
// (IOTransport.MaxLineLength, StreamableClientTransport.MaxEventSize).
// bench's readers (lineReader, httpBody) enforce the limit, with an error
// that names it; the SDK's checks count what its buffers took in, which
// may run a little ahead of a message's own bytes, and only back bench's
// up: were bench's readers gone, no message could still be unbounded.
const sdkBackstop = 64 << 10

// sdkLimit is the limit bench sets on the SDK's transports for a message
// limit of limit bytes.
func sdkLimit(limit int) int { return limit + sdkBackstop }

// headBytes is how much of each message the watch reads: enough for the
// "jsonrpc", "id" and "method" members that servers write first. (A
// response whose id comes after a long result is not checked: the SDK's
// own handling of it stands.)
const headBytes = 1 << 10

// wireBreach is how a server broke the wire protocol, in bench's words:
// the error of the call it broke.
type wireBreach struct {
	kind traces.ErrorKind
	msg  string
}

func (b *wireBreach) Error() string { return b.msg }

// tooLarge is the breach of a message over bench's limit; what says what
// the message was ("a line", "an SSE event").
func tooLarge(what string, limit int) *wireBreach {
	return &wireBreach{kind: traces.ErrorMessageTooLarge,
		msg: fmt.Sprintf("the server sent %s over %s, bench's limit on one MCP message", what, bounded.Size(int64(limit)))}
}

// wireWatch sees every message between bench and a server below the SDK,
// and keeps the first way the server broke the protocol there: a message
// over bench's size limit, or a response to no request of bench's. The
// SDK drops a response whose id it does not know without a word (the call
// then waits for its timeout), drops the whole session on one with no id
// as if the call had been answered with an "invalid request" error, and
// reports a message over its limits without naming them. A breach fails
// the call or the start-up in flight at once, with the breach as cause.
type wireWatch struct {
	mu     sync.Mutex
	sent   map[string]bool // ids of bench's requests (idKey)
	blind  bool            // a request of bench's went by whose id did not show: ids are not checked
	breach *wireBreach
	cancel context.CancelCauseFunc // the call or start-up in flight
	bound  int                     // counts binds: whose cancel is set

	// What the server has sent, for a call that times out to say what
	// came back after it (traffic, since): whole messages, and on stdio
	// the bytes of one it has begun and not finished.
	rxMsgs, rxPartial atomic.Int64
}

// traffic is a point in what the server has sent.
type traffic struct{ msgs int64 }

// traffic returns where the server's messages stand now.
func (w *wireWatch) traffic() traffic { return traffic{msgs: w.rxMsgs.Load()} }

// since says what the server sent after mark, for a call it did not
// answer: nothing, messages that were not the answer, part of one.
func (w *wireWatch) since(mark traffic) string {
	n, partial := w.rxMsgs.Load()-mark.msgs, w.rxPartial.Load()
	var s string
	switch n {
	case 0:
		s = "the server sent no message after the call"
	case 1:
		s = "the server sent 1 message after the call, not its answer"
	default:
		s = fmt.Sprintf("the server sent %d messages after the call, none its answer", n)
	}
	if partial > 0 {
		s += fmt.Sprintf(", and %s of one it did not finish", bounded.Size(partial))
	}
	return s
}

func newWireWatch() *wireWatch { return &wireWatch{sent: map[string]bool{}} }

// fail records b unless a breach is recorded already, cancels what is in
// flight, and returns b (a reader's error).
func (w *wireWatch) fail(b *wireBreach) error {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.breach == nil {
		w.breach = b
		if w.cancel != nil {
			w.cancel(b)
		}
	}
	return b
}

// err returns the first breach, or nil.
func (w *wireWatch) err() *wireBreach {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.breach
}

// bind returns ctx, cancelled with the breach as cause when the server
// breaks the protocol before done is called (at once if it has already).
// A bind replaces the one before: one call or start-up is in flight at a
// time.
func (w *wireWatch) bind(ctx context.Context) (_ context.Context, done func()) {
	ctx, cancel := context.WithCancelCause(ctx)
	w.mu.Lock()
	w.bound++
	n := w.bound
	if w.breach != nil {
		cancel(w.breach)
	} else {
		w.cancel = cancel
	}
	w.mu.Unlock()
	return ctx, func() {
		w.mu.Lock()
		if w.bound == n {
			w.cancel = nil
		}
		w.mu.Unlock()
		cancel(nil)
	}
}

// sentMessage notes a message bench sent (the head of it).
func (w *wireWatch) sentMessage(head []byte) {
	h := readHead(head)
	if h.kind != headRequest {
		return // bench's answer to a server's request
	}
	w.mu.Lock()
	switch {
	case h.cut:
		w.blind = true // never a false mismatch
	case h.id != "":
		w.sent[h.id] = true
	}
	w.mu.Unlock()
}

// received checks a message the server sent (the head of it): a response
// must answer a request bench sent. A response to a request bench gave up
// on (its call timed out) is late, not a mismatch.
func (w *wireWatch) received(head []byte) {
	w.rxMsgs.Add(1)
	h := readHead(head)
	if h.kind != headResponse {
		return
	}
	w.mu.Lock()
	known := h.id != "" && (w.sent[h.id] || w.blind)
	w.mu.Unlock()
	if known {
		return
	}
	what := fmt.Sprintf("id %s, which bench never sent", h.rawID)
	if h.id == "" {
		what = "no id"
		if h.rawID != "" {
			what = "id " + h.rawID
		}
	}
	w.fail(&wireBreach{kind: traces.ErrorTransport, msg: fmt.Sprintf("the server sent a response with %s (a JSON-RPC id mismatch)", what)})
}

type headKind int

const (
	headUnknown  headKind = iota // not JSON-RPC, a batch, or cut before it says
	headRequest                  // it has a method
	headResponse                 // a result or an error, and no method
)

// head is what the start of a JSON-RPC message says.
type head struct {
	kind  headKind
	id    string // as the SDK matches ids (idKey); "" when none or not valid
	rawID string // the id as sent, shortened; "" when there is none
	cut   bool   // a request cut before its id (if any) showed
}

// readHead reads the start of a JSON-RPC message (it may be cut anywhere).
func readHead(b []byte) head {
	var h head
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	if t, err := dec.Token(); err != nil || t != json.Delim('{') {
		return h
	}
	var sawID, sawResult, whole bool
scan:
	for {
		t, err := dec.Token()
		if err != nil {
			break // cut: what has been read says what it can
		}
		if t == json.Delim('}') {
			whole = true
			break
		}
		switch t {
		case "method":
			h.kind = headRequest
		case "result", "error":
			sawResult = true
		case "id":
			var v any
			if dec.Decode(&v) != nil {
				break scan
			}
			sawID = true
			h.id = idKey(v)
			raw, _ := json.Marshal(v)
			h.rawID = string(raw)
			if len(h.rawID) > 64 {
				h.rawID = h.rawID[:64] + "..."
			}
			continue
		}
		var skip json.RawMessage
		if dec.Decode(&skip) != nil {
			break
		}
	}
	if h.kind == headRequest {
		h.cut = !sawID && !whole
		return h
	}
	// A whole message without a method is a response (the SDK reads it as
	// one); a cut one is when its id and its result have been seen.
	if !(sawID && sawResult || whole && (sawID || sawResult)) {
		return head{}
	}
	h.kind = headResponse
	return h
}

// idKey is a JSON-RPC id as the SDK matches a response to its request
// (jsonrpc2.MakeID): a number by its integer part, a string as itself.
// Other values (null, an object) are no id: "".
func idKey(v any) string {
	switch x := v.(type) {
	case json.Number:
		f, err := strconv.ParseFloat(string(x), 64)
		if err != nil {
			return ""
		}
		return "n:" + strconv.FormatInt(int64(f), 10)
	case string:
		return "s:" + x
	}
	return ""
}

// lineSplit follows a stream of newline-delimited messages: the length of
// the current line and its head.
type lineSplit struct {
	n    int
	head []byte
}

// feed takes b and calls line with the head of each line it ends. It
// returns the length of the longest line b is part of, so far.
func (s *lineSplit) feed(b []byte, line func(head []byte)) (longest int) {
	for len(b) > 0 {
		i := bytes.IndexByte(b, '\n')
		seg := b
		if i >= 0 {
			seg = b[:i]
		}
		if room := headBytes - len(s.head); room > 0 {
			s.head = append(s.head, seg[:min(room, len(seg))]...)
		}
		s.n += len(seg)
		longest = max(longest, s.n)
		if i < 0 {
			break
		}
		line(s.head)
		s.head, s.n = s.head[:0], 0
		b = b[i+1:]
	}
	return longest
}

// maxDepth is the deepest bench lets a message nest: the SDK's own limit
// (its internal/json), past which it breaks the session with an error
// that does not say so. encoding/json stops at 10000.
const maxDepth = 1000

// depthScan follows the nesting of JSON values through a stream, as the
// SDK's check does: brackets outside strings.
type depthScan struct {
	depth            int
	inString, escape bool
}

// feed takes b and reports whether the nesting went deeper than maxDepth.
// Strings, where most of a message's bytes are, are crossed with
// bytes.IndexByte.
func (d *depthScan) feed(b []byte) bool {
	for len(b) > 0 {
		if !d.inString {
			c := b[0]
			b = b[1:]
			switch c {
			case '"':
				d.inString = true
			case '{', '[':
				if d.depth++; d.depth > maxDepth {
					return true
				}
			case '}', ']':
				if d.depth > 0 {
					d.depth--
				}
			}
			continue
		}
		if d.escape {
			d.escape = false
			b = b[1:]
			continue
		}
		end := bytes.IndexByte(b, '"')
		if end < 0 {
			end = len(b)
		}
		if i := bytes.IndexByte(b[:end], '\\'); i >= 0 {
			d.escape = true
			b = b[i+1:]
			continue
		}
		if end < len(b) {
			d.inString = false
			end++
		}
		b = b[end:]
	}
	return false
}

// tooDeep is the breach of a message nested deeper than maxDepth.
func tooDeep() *wireBreach {
	return &wireBreach{kind: traces.ErrorTransport,
		msg: fmt.Sprintf("the server sent a message nested over %d levels deep, the most the MCP SDK decodes", maxDepth)}
}

// lineReader is a server's stdout as bench reads it: newline-delimited
// JSON-RPC messages of at most limit bytes each, each shown to the watch.
// One Read returns bytes of one line at most, so the SDK's count of a
// frame (its decoder never holds bytes of the next one) stays behind
// this one's.
type lineReader struct {
	r     *bufio.Reader
	c     io.Closer
	watch *wireWatch
	limit int
	split lineSplit
	depth depthScan
	err   error
}

func newLineReader(rc io.ReadCloser, watch *wireWatch, limit int) *lineReader {
	return &lineReader{r: bufio.NewReaderSize(rc, 64<<10), c: rc, watch: watch, limit: limit}
}

func (l *lineReader) Read(p []byte) (int, error) {
	if l.err != nil {
		return 0, l.err
	}
	if len(p) == 0 {
		return 0, nil
	}
	if l.r.Buffered() == 0 {
		if _, err := l.r.Peek(1); err != nil {
			return 0, err
		}
	}
	b, _ := l.r.Peek(min(len(p), l.r.Buffered()))
	if i := bytes.IndexByte(b, '\n'); i >= 0 {
		b = b[:i+1]
	}
	n := copy(p, b)
	l.r.Discard(n)
	switch {
	case l.split.feed(p[:n], l.watch.received) > l.limit:
		l.err = l.watch.fail(tooLarge("a line", l.limit))
	case l.depth.feed(p[:n]):
		l.err = l.watch.fail(tooDeep())
	case p[n-1] == '\n':
		l.depth = depthScan{} // the message has ended
	}
	l.watch.rxPartial.Store(int64(l.split.n))
	if l.err != nil {
		return 0, l.err
	}
	return n, nil
}

func (l *lineReader) Close() error { return l.c.Close() }

// watchWriter is a server's stdin as bench writes it: the messages are
// shown to the watch before the server can answer them.
type watchWriter struct {
	w     io.WriteCloser
	watch *wireWatch
	split lineSplit
}

func (w *watchWriter) Write(p []byte) (int, error) {
	w.split.feed(p, w.watch.sentMessage)
	return w.w.Write(p)
}

func (w *watchWriter) Close() error { return w.w.Close() }

// httpBody is the body of a streamable HTTP server's answer as bench reads
// it: an event stream of events of at most limit bytes each, or one
// message of at most limit bytes. Each message of a 2xx answer is shown to
// the watch (an error answer's body is the SDK's to read).
type httpBody struct {
	rc     io.ReadCloser
	watch  *wireWatch
	limit  int
	sse    bool
	answer bool // a 2xx answer: its messages are shown to the watch
	n      int  // bytes of the event (sse) or the body so far
	head   []byte
	line   int  // sse: bytes of the line under way, terminator aside
	cr     bool // sse: the last byte was a CR (of a CRLF, perhaps)
	depth  depthScan
	deep   bool
	err    error
}

// limitBody wraps the body of resp's answer (content type ctype, status
// status).
func limitBody(rc io.ReadCloser, ctype string, status int, watch *wireWatch, limit int) *httpBody {
	mt, _, _ := mime.ParseMediaType(ctype)
	return &httpBody{rc: rc, watch: watch, limit: limit, sse: mt == "text/event-stream", answer: status/100 == 2}
}

func (h *httpBody) Read(p []byte) (int, error) {
	if h.err != nil {
		return 0, h.err
	}
	n, err := h.rc.Read(p)
	if h.sse {
		h.events(p[:n])
	} else {
		h.n += n
		if room := headBytes - len(h.head); room > 0 {
			h.head = append(h.head, p[:min(room, n)]...)
		}
		h.deep = h.depth.feed(p[:n])
		if err == io.EOF && h.answer && len(h.head) > 0 {
			h.watch.received(h.head)
		}
	}
	switch {
	case h.n > h.limit && h.sse:
		h.err = h.watch.fail(tooLarge("an SSE event", h.limit))
	case h.n > h.limit:
		h.err = h.watch.fail(tooLarge("an HTTP response body", h.limit))
	case h.deep:
		h.err = h.watch.fail(tooDeep())
	}
	if h.err != nil {
		return 0, h.err
	}
	return n, err
}

// events follows the event stream through b: an event ends at a blank
// line (CR, LF or CRLF line ends).
func (h *httpBody) events(b []byte) {
	for len(b) > 0 {
		end := lineEnd(b)
		seg := b[:end]
		if h.n += len(seg); h.n > h.limit {
			return
		}
		if room := headBytes - len(h.head); room > 0 {
			h.head = append(h.head, seg[:min(room, len(seg))]...)
		}
		if h.depth.feed(seg) {
			h.deep = true
			return
		}
		if len(seg) > 0 {
			h.line += len(seg)
			h.cr = false
		}
		if end == len(b) {
			return
		}
		c := b[end]
		b = b[end+1:]
		if h.n++; h.n > h.limit {
			return
		}
		if len(h.head) < headBytes {
			h.head = append(h.head, c)
		}
		if c == '\n' && h.cr {
			h.cr = false // the LF of a CRLF: the line has ended
			continue
		}
		h.cr = c == '\r'
		if h.line == 0 {
			h.endEvent()
		}
		h.line = 0
	}
}

// lineEnd is the index of the first CR or LF in b, or len(b).
func lineEnd(b []byte) int {
	end := len(b)
	if i := bytes.IndexByte(b, '\n'); i >= 0 {
		end = i
	}
	if i := bytes.IndexByte(b[:end], '\r'); i >= 0 {
		end = i
	}
	return end
}

func (h *httpBody) endEvent() {
	if h.answer {
		if data := eventData(h.head); len(data) > 0 {
			h.watch.received(data)
		}
	}
	h.n, h.head, h.depth = 0, h.head[:0], depthScan{}
}

// eventData is the data of an event (the start of it), or nil for an
// event whose name is not "message".
func eventData(event []byte) []byte {
	var data []byte
	for _, line := range strings.FieldsFunc(string(event), func(r rune) bool { return r == '\n' || r == '\r' }) {
		field, value, _ := strings.Cut(line, ":")
		value = strings.TrimPrefix(value, " ")
		switch field {
		case "event":
			if strings.TrimSpace(value) != "message" {
				return nil
			}
		case "data":
			if data != nil {
				data = append(data, '\n')
			}
			data = append(data, value...)
		}
	}
	return data
}

func (h *httpBody) Close() error { return h.rc.Close() }
