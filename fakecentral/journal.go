package fakecentral

import (
	"encoding/json"
	"fmt"
	"io"
	"time"
)

// Entry is one request in the journal.
type Entry struct {
	Seq           int    `json:"seq"`
	Method        string `json:"method"`
	Path          string `json:"path"`
	Query         string `json:"query,omitempty"`
	Host          string `json:"host,omitempty"` // intercepted host name (proxied requests), or the refused host (egress)
	BodySHA256    string `json:"body_sha256,omitempty"`
	Status        int    `json:"status"`
	Class         Class  `json:"class"`
	Route         string `json:"route,omitempty"`  // the matched route pattern
	Source        string `json:"source,omitempty"` // modelled, catalog, none, auth, proxy
	ResponseBytes int    `json:"response_bytes"`
	OffsetMS      int64  `json:"offset_ms"` // since the run started (Reset), from Options.Now
	// At is when the request arrived (an egress attempt: when it was
	// journaled), from Options.Now: a caller with its own origin (the
	// recorder's run start) counts from it.
	At        time.Time `json:"-"`
	LatencyUS int64     `json:"latency_us"` // time spent serving the request, from Options.Now
	ToolCall  int       `json:"tool_call"`  // -1 when no tool call was in flight
	Boot      bool      `json:"boot,omitempty"`
	Egress    bool      `json:"egress,omitempty"`
	Fault     string    `json:"fault,omitempty"` // injected fault or forced 401 applied
	// RequestBody and ResponseBody are kept when Options.CaptureBodies is
	// set (the recorder stores them in the trace); nil otherwise.
	RequestBody  []byte `json:"request_body,omitempty"`
	ResponseBody []byte `json:"response_body,omitempty"`
	// BodiesDropped says the bodies were not kept: the run's bodies had
	// reached Options.MaxCapturedBytes.
	BodiesDropped bool `json:"bodies_dropped,omitempty"`
}

// String is the one-line log form.
func (e Entry) String() string {
	q := ""
	if e.Query != "" {
		q = "?" + e.Query
	}
	tc := "boot"
	if !e.Boot {
		tc = fmt.Sprintf("tool=%d", e.ToolCall)
	}
	extra := ""
	if e.Fault != "" {
		extra = " fault=" + e.Fault
	}
	if e.Egress {
		extra += " EGRESS"
	}
	host := ""
	if e.Host != "" {
		host = e.Host
	}
	return fmt.Sprintf("#%d %s %s%s%s -> %d %dB %s %s %s%s", e.Seq, e.Method, host, e.Path, q, e.Status, e.ResponseBytes, e.Class, e.Source, tc, extra)
}

// JournalFormat names the journal file format; ReadJournal rejects others.
const JournalFormat = "fakecentral.journal/v1"

// JournalHeader is the first line of a journal file.
type JournalHeader struct {
	Format         string `json:"format"`
	Fixture        string `json:"fixture"`
	FixtureVersion string `json:"fixture_version"`
	Dropped        int    `json:"dropped,omitempty"` // requests beyond Options.JournalLimit
}

// Header describes the current run's journal.
func (c *Central) Header() JournalHeader {
	return JournalHeader{Format: JournalFormat, Fixture: c.fx.Name, FixtureVersion: c.fx.Version(), Dropped: c.JournalDropped()}
}

// WriteJournal writes a header line, then one JSON line per entry.
func WriteJournal(w io.Writer, h JournalHeader, entries []Entry) error {
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	if h.Format == "" {
		h.Format = JournalFormat
	}
	if err := enc.Encode(h); err != nil {
		return fmt.Errorf("write journal: %w", err)
	}
	for _, e := range entries {
		if err := enc.Encode(e); err != nil {
			return fmt.Errorf("write journal: %w", err)
		}
	}
	return nil
}

// ReadJournal reads what WriteJournal wrote.
func ReadJournal(r io.Reader) (JournalHeader, []Entry, error) {
	dec := json.NewDecoder(r)
	var h JournalHeader
	if err := dec.Decode(&h); err != nil {
		return h, nil, fmt.Errorf("read journal header: %w", err)
	}
	if h.Format != JournalFormat {
		return h, nil, fmt.Errorf("read journal: format %q is not supported (want %q)", h.Format, JournalFormat)
	}
	var out []Entry
	for dec.More() {
		var e Entry
		if err := dec.Decode(&e); err != nil {
			return h, nil, fmt.Errorf("read journal entry %d: %w", len(out)+1, err)
		}
		out = append(out, e)
	}
	return h, out, nil
}
