package view_test

import (
	"encoding/json"
	"fmt"
	"path/filepath"
	"testing"

	"github.com/mcpbench/bench/traces"
	"github.com/mcpbench/bench/view"
)

// bigStore writes a store of n recorded runs (ten servers, the test
// store's run shape) and returns its directory.
func bigStore(b testing.TB, n int) string {
	b.Helper()
	dir := filepath.Join(b.TempDir(), "store")
	s, err := traces.Open(dir, nil)
	if err != nil {
		b.Fatal(err)
	}
	defer s.Close()
	for i := range n {
		server := fmt.Sprintf("server-%02d", i%10)
		run := mkRun(runSpec{server: server, index: i / 10, extraHTTP: i%7 == 0})
		if _, err := s.PutRunNoSync(run, traces.RunRef("golden", server, "baseline", scenarioID, i/10)); err != nil {
			b.Fatal(err)
		}
	}
	if err := s.Sync(); err != nil {
		b.Fatal(err)
	}
	return dir
}

// longRun is a run of n model turns, each with a tool call and its HTTP
// call; each request holds the conversation so far, as a recording does.
func longRun(n int) *traces.Run {
	run := mkRun(runSpec{server: "reference"})
	head := run.Events[:3] // initialize, tools, boot
	tail := run.Events[len(run.Events)-2:]
	body := run.Events[4].HTTP.ResponseBody
	events := append([]traces.Event(nil), head...)
	var msgs []any
	at := int64(1000)
	for i := range n {
		msgs = append(msgs, map[string]any{"role": "user", "content": fmt.Sprintf("step %d", i)})
		req, _ := traces.Marshal(map[string]any{"messages": msgs, "sampling": map[string]any{}})
		resp, _ := traces.Marshal(map[string]any{"tool_calls": []any{map[string]any{"id": "c", "name": "get_client", "arguments": map[string]any{"mac": "aa:bb:cc:11:22:33", "step": i}}}})
		events = append(events,
			traces.Event{Kind: traces.KindTurn, AtUS: at + 500, Turn: &traces.Turn{Index: i, Key: traces.Hash(req), Request: req, Response: resp, Usage: traces.Usage{Input: 1000 + 50*i, Output: 20}, LatencyUS: 400}},
			traces.Event{Kind: traces.KindHTTP, AtUS: at + 700, HTTP: &traces.HTTP{Seq: i + 1, Method: "GET", Path: "/network-monitoring/v1/clients/aa:bb:cc:11:22:33", Status: 200, ResponseBody: body, Class: "read", LatencyUS: 100, Call: i}},
			traces.Event{Kind: traces.KindCall, AtUS: at + 900, Call: &traces.Call{Index: i, Tool: "get_client", Arguments: json.RawMessage(fmt.Sprintf(`{"mac":"aa:bb:cc:11:22:33","step":%d}`, i)), Result: body, LatencyUS: 300}},
		)
		msgs = append(msgs, map[string]any{"role": "tool", "tool_call_id": "c", "content": string(body)})
		at += 1000
	}
	run.Events = append(events, tail...)
	return run
}

// BenchmarkOpen5000 opens a 5,000-run store as bench view does (the run
// list and its first page, as JSON) against a bare scan of its refs, and
// a bare scan that also reads the first page's 50 runs: what the view
// adds is reading, scoring and summarising those runs.
func BenchmarkOpen5000(b *testing.B) {
	dir := bigStore(b, 5000)
	list := goldenScenarios(b)
	open := func(b *testing.B) *traces.Store {
		s, err := traces.Open(dir, &traces.Options{ReadOnly: true})
		if err != nil {
			b.Fatal(err)
		}
		return s
	}
	b.Run("bare-scan", func(b *testing.B) {
		for b.Loop() {
			s := open(b)
			if refs, err := s.Refs(""); err != nil || len(refs) != 5000 {
				b.Fatal(len(refs), err)
			}
			s.Close()
		}
	})
	b.Run("bare-scan-read-page", func(b *testing.B) {
		for b.Loop() {
			s := open(b)
			refs, _ := s.Refs("")
			for _, r := range refs[:view.DefaultLimit] {
				if _, err := s.GetRun(r.Run); err != nil {
					b.Fatal(err)
				}
			}
			s.Close()
		}
	})
	b.Run("view-first-page", func(b *testing.B) {
		for b.Loop() {
			s := open(b)
			v, err := view.New(&view.Options{Store: s, Scorer: newScorer(list), Scenarios: list})
			if err != nil {
				b.Fatal(err)
			}
			p := v.List(view.Query{})
			if _, err := json.Marshal(p); err != nil || p.Total != 5000 {
				b.Fatal(p.Total, err)
			}
			s.Close()
		}
	})
}

// BenchmarkOutcome5000 filters a 5,000-run store by outcome, which reads
// every run (once per view), against reading every run.
func BenchmarkOutcome5000(b *testing.B) {
	dir := bigStore(b, 5000)
	s, err := traces.Open(dir, &traces.Options{ReadOnly: true})
	if err != nil {
		b.Fatal(err)
	}
	defer s.Close()
	refs, _ := s.Refs("")
	b.Run("read-every-run", func(b *testing.B) {
		for b.Loop() {
			for _, r := range refs {
				if _, err := s.GetRun(r.Run); err != nil {
					b.Fatal(err)
				}
			}
		}
	})
	b.Run("view-outcome-filter", func(b *testing.B) {
		list := goldenScenarios(b)
		for b.Loop() {
			v, err := view.New(&view.Options{Store: s, Scorer: newScorer(list), Scenarios: list})
			if err != nil {
				b.Fatal(err)
			}
			if p := v.List(view.Query{Outcome: "answered"}); p.Total != 5000 {
				b.Fatal(p.Total)
			}
		}
	})
}

// BenchmarkRun100Turns lays out a 100-turn run as the page asks for it
// (timeline as JSON) against reading it from the store.
func BenchmarkRun100Turns(b *testing.B) {
	dir := filepath.Join(b.TempDir(), "store")
	s, err := traces.Open(dir, nil)
	if err != nil {
		b.Fatal(err)
	}
	id, err := s.PutRun(longRun(100), refRun0)
	if err != nil {
		b.Fatal(err)
	}
	s.Close()
	s, err = traces.Open(dir, &traces.Options{ReadOnly: true})
	if err != nil {
		b.Fatal(err)
	}
	defer s.Close()
	list := goldenScenarios(b)
	v, err := view.New(&view.Options{Store: s, Scorer: newScorer(list), Scenarios: list})
	if err != nil {
		b.Fatal(err)
	}
	b.Run("getrun", func(b *testing.B) {
		for b.Loop() {
			if _, err := s.GetRun(id); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("view-timeline", func(b *testing.B) {
		for b.Loop() {
			t, err := v.Timeline(id.String())
			if err != nil {
				b.Fatal(err)
			}
			if _, err := json.Marshal(t); err != nil || len(t.Items) < 200 {
				b.Fatal(len(t.Items), err)
			}
		}
	})
}
