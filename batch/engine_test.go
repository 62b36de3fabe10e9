package batch

import (
	"context"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/mcpbench/bench/llm"
	"github.com/mcpbench/bench/scenarios"
	"github.com/mcpbench/bench/traces"
)

// A pipeline prepares each item while the item before it on its worker
// executes: every item but a worker's first. Preparing is done before the batch returns, and an
// item whose scenario is unknown is not prepared.
func TestPipelinePreparesNextItem(t *testing.T) {
	sc := &scenarios.Scenario{ID: "s"}
	for _, static := range []bool{true, false} {
		items := []item{{index: 0, group: "a"}, {index: 1, group: "b"}, {index: 2, group: "a"},
			{index: 3, group: "b"}, {index: 4, group: "a"}, {index: 5, group: "b"}}
		for i := range items {
			if i != 4 {
				items[i].sc = sc
			}
		}
		workers := 2
		if !static {
			workers = 1 // on a shared queue, which item a worker sees next depends on timing
		}
		var mu sync.Mutex
		var prepared []int
		done := 0
		// Each prepare waits until the last result is delivered, so the batch
		// returns before it only if it does not wait for its prepares.
		release := make(chan struct{})
		p := &pipeline[struct{}, int, int]{
			workers: workers, static: static, reuse: true, items: items,
			prepare: func(_ int, it item) {
				mu.Lock()
				prepared = append(prepared, it.index)
				mu.Unlock()
				<-release
				mu.Lock()
				done++
				mu.Unlock()
			},
			execute: func(_ context.Context, _ int, it item, _ struct{}) (int, error) { return it.index, nil },
			finish:  func(_ item, m int) (int, error) { return m, nil },
			deliver: func(it item, _ int) {
				if it.index == len(items)-1 {
					close(release)
				}
			},
		}
		if err := p.run(context.Background()); err != nil {
			t.Fatal(err)
		}
		mu.Lock()
		left := len(prepared) - done
		slices.Sort(prepared)
		mu.Unlock()
		want := []int{2, 3, 5} // static: queues 0,2,4 and 1,3,5; 4's scenario is unknown
		if !static {
			want = []int{1, 2, 3, 5}
		}
		if d := cmp.Diff(want, prepared); d != "" {
			t.Errorf("static %t: prepared (-want +got):\n%s", static, d)
		}
		if left != 0 {
			t.Errorf("static %t: %d prepares still running after the batch returned", static, left)
		}
	}
}

// callTime sums the calls a run sent to the server, and only those: not
// the harness's submit_result nor arguments bench refused.
func TestCallTime(t *testing.T) {
	call := func(tool, invalid string, us int64) traces.Event {
		return traces.Event{Kind: traces.KindCall, Call: &traces.Call{Tool: tool, Invalid: invalid, LatencyUS: us}}
	}
	run := &traces.Run{Events: []traces.Event{
		{Kind: traces.KindTurn, Turn: &traces.Turn{LatencyUS: 1000000}},
		call("list_alerts", "", 1500),
		call("get_device", traces.InvalidUnknownTool, 20),
		call("get_client", "", 2500),
		call(llm.SubmitTool, "", 30),
	}}
	if got, want := callTime(run), 4*time.Millisecond; got != want {
		t.Errorf("callTime = %s, want %s", got, want)
	}
}
