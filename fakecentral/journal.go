package fakecentral

import (
	"encoding/json"
	"fmt"
	"io"
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
	ToolCall      int    `json:"tool_call"` // -1 when no tool call was in flight
	Boot          bool   `json:"boot,omitempty"`
	Egress        bool   `json:"egress,omitempty"`
	Fault         string `json:"fault,omitempty"` // injected fault or forced 401 applied
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

// WriteJournal writes entries as JSON lines.
func WriteJournal(w io.Writer, entries []Entry) error {
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	for _, e := range entries {
		if err := enc.Encode(e); err != nil {
			return fmt.Errorf("write journal: %w", err)
		}
	}
	return nil
}
