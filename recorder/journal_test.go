package recorder

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/mcpbench/bench/fakecentral"
	"github.com/mcpbench/bench/traces"
)

// TestJournalOneOrigin: the fake's requests are placed on the run's own
// clock, from when each arrived, whatever origin the fake counted its
// offsets from (a run that waited 388 ms for its server got a fake whose
// clock started then: its HTTP calls were stored 388 ms early, before the
// tool call that made them).
func TestJournalOneOrigin(t *testing.T) {
	start := time.Date(2026, 12, 2, 10, 0, 0, 0, time.UTC)
	c := &capture{start: start}
	c.emit(start.Add(408*time.Millisecond), traces.Event{Kind: traces.KindCall, Call: &traces.Call{Index: 0, Tool: "get", Arguments: json.RawMessage(`{}`)}})
	c.addJournal([]fakecentral.Entry{
		{Seq: 1, Method: "GET", Path: "/boot", Boot: true, ToolCall: -1, At: start.Add(-time.Second)},
		{Seq: 2, Method: "GET", Path: "/x", ToolCall: 0, OffsetMS: 20, At: start.Add(408*time.Millisecond + 250*time.Microsecond)},
	}, map[int]int{0: 0})
	got := map[string]int64{}
	for _, e := range c.events {
		if e.Kind == traces.KindHTTP {
			got[e.HTTP.Path] = e.AtUS
		}
	}
	if got["/x"] != 408_250 {
		t.Errorf("the call's HTTP request at %d µs, want 408250 (the call began at 408000)", got["/x"])
	}
	if got["/boot"] != 0 {
		t.Errorf("a request before the run began at %d µs, want 0", got["/boot"])
	}
}
