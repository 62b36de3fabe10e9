package traces

import (
	"encoding/json"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestRunTimes(t *testing.T) {
	call := func(at int64, idx int) Event {
		return Event{Kind: KindCall, AtUS: at, Call: &Call{Index: idx, Tool: "t", Arguments: json.RawMessage(`{}`)}}
	}
	http := func(at int64, idx int, boot bool) Event {
		return Event{Kind: KindHTTP, AtUS: at, HTTP: &HTTP{Method: "GET", Path: "/", Call: idx, Boot: boot}}
	}
	cases := []struct {
		name      string
		events    []Event
		want      []int64
		wantShift int64
	}{
		{"one origin already: nothing moves",
			[]Event{http(0, -1, true), call(400, 0), http(410, 0, false), call(500, 1), http(520, 1, false)},
			[]int64{0, 400, 410, 500, 520}, 0},
		{"the fake's origin 380 later: the journal moves by the least that puts no call's HTTP before it",
			[]Event{http(0, -1, true), call(400, 0), http(20, 0, false), call(500, 1), http(125, 1, false), {Kind: KindEgress, AtUS: 130, Egress: &Egress{Call: 1}}},
			[]int64{380, 400, 400, 500, 505, 510}, 380},
		{"HTTP of no call and boot calls alone say nothing",
			[]Event{http(0, -1, true), http(5, -1, false), call(400, 0)},
			[]int64{0, 5, 400}, 0},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			at, shift := (&Run{Events: c.events}).Times()
			if diff := cmp.Diff(c.want, at); diff != "" || shift != c.wantShift {
				t.Errorf("shift %d, want %d; times (-want +got):\n%s", shift, c.wantShift, diff)
			}
		})
	}
}
