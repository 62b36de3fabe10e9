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

// The journal's bodies reach the trace in canonical form, as the store
// keeps them (JSON with its keys sorted and no spaces; any other text as a
// JSON string), so that a stored run is not decoded again to make them so.
func TestJournalBodiesCanonical(t *testing.T) {
	start := time.Date(2026, 12, 4, 10, 0, 0, 0, time.UTC)
	c := &capture{start: start}
	c.addJournal([]fakecentral.Entry{{Seq: 1, Method: "POST", Path: "/x", ToolCall: -1, At: start,
		RequestBody: []byte(`{"b": 1, "a": [2, 3.0]}`), ResponseBody: []byte("Not Found")}}, nil)
	if len(c.events) != 1 || c.events[0].HTTP == nil {
		t.Fatalf("events %+v, want one HTTP event", c.events)
	}
	h := c.events[0].HTTP
	if got, want := string(h.RequestBody), `{"a":[2,3],"b":1}`; got != want {
		t.Errorf("request body %s, want %s", got, want)
	}
	if got, want := string(h.ResponseBody), `"Not Found"`; got != want {
		t.Errorf("response body %s, want %s", got, want)
	}
}
