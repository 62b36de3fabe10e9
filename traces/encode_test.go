package traces

import (
	"bytes"
	"encoding/json"
	"reflect"
	"strings"
	"testing"
)

// fullRun sets every field of every trace type, so that a field the
// encoder forgets shows as a difference from Marshal.
func fullRun(s string, raw json.RawMessage) *Run {
	temp, topP := 0.25, 1e-7
	id := Hash([]byte(s))
	return &Run{
		Manifest: Manifest{Format: FormatVersion, Mode: ModeReplay, Replays: &id, Suite: s, RunIndex: 3,
			Scenario: ScenarioRef{ID: s, Hash: "sha256:" + s}, Server: ServerRef{Name: s, Repo: "o/r", SHA: "abc", ProfileHash: "p"},
			Model:   ModelRef{Provider: "openai", Name: "openai:" + s, Temperature: &temp, TopP: &topP, MaxTokens: 512, Seed: -7},
			Fixture: FixtureRef{Name: "site-a", Hash: "h"}, Harness: "dev", SystemPrompt: "agent/1", Outcome: "answered"},
		Events: []Event{
			{Kind: KindInitialize, AtUS: 1, Initialize: &Initialize{ProtocolVersion: "2025-11-25", ServerInfo: raw, Capabilities: raw, Instructions: s, Stderr: s}},
			{Kind: KindTools, AtUS: 2, Tools: &Tools{Tools: raw}},
			{Kind: KindTurn, AtUS: 3, Turn: &Turn{Index: 1, Key: id, Request: raw, Response: raw, Usage: Usage{Input: 1, Output: 2, Cached: 3, Estimated: true}, LatencyUS: 4, Attempts: 2}},
			{Kind: KindCall, AtUS: 4, Call: &Call{Index: 2, Tool: s, Arguments: raw, Result: raw, IsError: true, Invalid: s, LatencyUS: 5}},
			{Kind: KindElicitation, Elicitation: &Elicitation{Call: 1, Message: s, Schema: raw, Action: "accept", Content: raw}},
			{Kind: KindHTTP, HTTP: &HTTP{Seq: 1, Method: "GET", Path: "/" + s, Query: "a=1&b=<2>", RequestBody: raw, Status: 200, ResponseBody: raw, Class: "read", LatencyUS: 9, Call: -1, Boot: true}},
			{Kind: KindEgress, Egress: &Egress{Host: s, Call: 0}},
			{Kind: KindAnswer, Answer: &Answer{Result: raw, Text: s}},
			{Kind: KindError, Error: &Error{Kind: "model", Message: s}},
			{Kind: KindCall, Call: &Call{Tool: "t"}}, // nil payloads
			{Kind: KindTools, Tools: &Tools{}},
		},
	}
}

func checkEncodeRun(t *testing.T, r *Run) {
	t.Helper()
	want, errW := Marshal(r)
	got, errG := encodeRun(r)
	if (errW == nil) != (errG == nil) {
		t.Fatalf("encodeRun error %v, Marshal error %v", errG, errW)
	}
	if errW == nil && !bytes.Equal(got, want) {
		t.Fatalf("encodeRun differs from Marshal:\n got %s\nwant %s", got, want)
	}
}

func TestEncodeRunEqualsMarshal(t *testing.T) {
	checkEncodeRun(t, fullRun("alerts-001 <é> \u2028 \"q\" \\ \x01", json.RawMessage(`{ "b": [1, 2.50, -0, 1e3, "x\u00e9<>&"], "a": {"z": null, "y": true} }`)))
	checkEncodeRun(t, fullRun("bad utf-8 \xff\xfe end", json.RawMessage(`"\ud83d\ude00"`)))
	checkEncodeRun(t, &Run{Manifest: Manifest{Format: FormatVersion}})
	checkEncodeRun(t, fullRun("x", json.RawMessage(`{"a":`))) // invalid payload: both refuse
	c := newCorpus(7, 3, 2, 2)
	if err := c.all(func(_ string, r *Run) error { checkEncodeRun(t, r); return nil }); err != nil {
		t.Fatal(err)
	}
	// Every JSON field of the trace types is set in fullRun, so the
	// comparison above covers it.
	doc, _ := Marshal(fullRun("x", json.RawMessage(`{}`)))
	for _, typ := range []any{Manifest{}, ScenarioRef{}, ServerRef{}, ModelRef{}, FixtureRef{}, Event{}, Initialize{}, Tools{}, Turn{}, Usage{}, Call{}, Elicitation{}, HTTP{}, Egress{}, Answer{}, Error{}} {
		rt := reflect.TypeOf(typ)
		for i := range rt.NumField() {
			name, _, _ := strings.Cut(rt.Field(i).Tag.Get("json"), ",")
			if name != "-" && !bytes.Contains(doc, []byte(`"`+name+`":`)) {
				t.Errorf("fullRun leaves %s.%s (%q) unset: set it, and encode it in encodeRun", rt.Name(), rt.Field(i).Name, name)
			}
		}
	}
}

func FuzzEncodeRun(f *testing.F) {
	f.Add("alerts-001", `{"a":[1,2.5e10,"<&>"]}`)
	f.Add("\xff\u2028", `[-0.0, 1E-7, "\u0000"]`)
	f.Add("", `null`)
	f.Fuzz(func(t *testing.T, s, raw string) {
		checkEncodeRun(t, fullRun(s, json.RawMessage(raw)))
	})
}

// BenchmarkEncodeRun encodes a run's canonical document: one run of the
// synthetic corpus (large payloads, mostly canonical already: the scan
// dominates) and a run of many events with small payloads (the per-field
// work dominates).
func BenchmarkEncodeRun(b *testing.B) {
	small := fullRun("alerts-001 <é>", json.RawMessage(`{"b":[1,2.5,"x"],"a":{"z":null}}`))
	for range 5 {
		small.Events = append(small.Events, small.Events...)
	}
	for _, in := range []struct {
		name string
		run  *Run
	}{{"corpus", newCorpus(42, 1, 1, 1).run(0, 0, 0)}, {"small", small}} {
		b.Run(in.name, func(b *testing.B) {
			doc, err := encodeRun(in.run)
			if err != nil {
				b.Fatal(err)
			}
			b.SetBytes(int64(len(doc)))
			b.ReportMetric(float64(len(in.run.Events)), "events")
			for range b.N {
				if _, err := encodeRun(in.run); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
