package traces

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"strings"
	"time"
)

// The synthetic corpus the benchmarks and tests use: runs shaped like what
// the recorder stores. Everything derives from a seed.
//
// Shape per run (issue 2): a ~20 KB tool list, 6-10 model turns (each
// request carries the tool list, the system prompt and the conversation so
// far), 5-10 tool calls, 10-30 HTTP calls with 0.5-5 KB JSON bodies.
//
// What repeats, and what does not, follows the real system: the tool list is
// the server's (one per corpus); the fake Central is deterministic, so the
// same request in the same scenario gets the same body; model text, call ids,
// arguments and latencies differ from run to run.
type corpus struct {
	tools     json.RawMessage
	scenarios int
	runs      int
	models    int
}

var corpusModels = []string{"openai:gpt-4.1", "anthropic:claude-sonnet-4-5", "openai:gpt-4o-mini", "baseline"}

var words = strings.Fields(`client clients site device devices access point switch gateway wlan ssid
psk radius vlan firmware version alert alerts event health status serial mac address uptime
channel band signal noise roaming authentication failure dhcp dns policy role profile scope
compliance drift configuration tunnel cluster uplink port poe temperature memory cpu`)

func phrase(r *rand.Rand, n int) string {
	var b strings.Builder
	for i := 0; i < n; i++ {
		if i > 0 {
			b.WriteByte(' ')
		}
		b.WriteString(words[r.IntN(len(words))])
	}
	return b.String()
}

func newCorpus(seed uint64, scenarios, runs, models int) *corpus {
	r := rand.New(rand.NewPCG(seed, 1))
	var tools []map[string]any
	size := 0
	for i := 0; size < 20000; i++ {
		props := map[string]any{}
		for j := 0; j < 2+r.IntN(4); j++ {
			props[fmt.Sprintf("%s_%d", words[r.IntN(len(words))], j)] = map[string]any{
				"type": "string", "description": phrase(r, 8+r.IntN(10)),
			}
		}
		t := map[string]any{
			"name":        fmt.Sprintf("central_%s_%s_%d", words[r.IntN(len(words))], words[r.IntN(len(words))], i),
			"description": phrase(r, 20+r.IntN(40)),
			"inputSchema": map[string]any{"type": "object", "properties": props},
		}
		b, _ := json.Marshal(t)
		size += len(b)
		tools = append(tools, t)
	}
	tb, _ := Marshal(tools)
	return &corpus{tools: tb, scenarios: scenarios, runs: runs, models: models}
}

// fakeBody is the deterministic answer of the fake Central to request k of
// scenario s: 0.5-5 KB of JSON.
func fakeBody(s, k int) json.RawMessage {
	r := rand.New(rand.NewPCG(uint64(s), uint64(k)))
	n := 2 + r.IntN(20)
	items := make([]map[string]any, n)
	for i := range items {
		items[i] = map[string]any{
			"id":      fmt.Sprintf("%08x", r.Uint32()),
			"name":    phrase(r, 2),
			"status":  []string{"Up", "Down", "Degraded"}[r.IntN(3)],
			"serial":  fmt.Sprintf("CN%08d", r.IntN(1e8)),
			"macAddr": fmt.Sprintf("aa:bb:cc:%02x:%02x:%02x", r.IntN(256), r.IntN(256), r.IntN(256)),
			"health":  r.IntN(100),
		}
	}
	b, _ := Marshal(map[string]any{"items": items, "total": n, "count": n, "next": nil})
	return b
}

// run builds run i of the corpus.
func (c *corpus) run(scenario, model, index int) *Run {
	seed := uint64(scenario)<<32 | uint64(model)<<16 | uint64(index)
	r := rand.New(rand.NewPCG(seed, 2))
	m := &Run{Manifest: Manifest{
		Format: FormatVersion, Mode: ModeRecord, Suite: "golden",
		Scenario: ScenarioRef{ID: fmt.Sprintf("scenario-%03d", scenario), Hash: Hash([]byte{byte(scenario)}).String()},
		Server:   ServerRef{Name: "reference", Repo: "local"},
		Model:    ModelRef{Provider: strings.Split(corpusModels[model], ":")[0], Name: corpusModels[model], Seed: 7},
		RunIndex: index, Fixture: FixtureRef{Name: "site-a", Hash: "f00d"},
		Harness: "bench test", Outcome: "answered",
		StartedAt: time.Date(2026, 11, 29, 12, 0, 0, 0, time.UTC).Add(time.Duration(seed) * time.Second),
	}}
	at := int64(0)
	ev := func(e Event) {
		at += int64(1000 + r.IntN(5000))
		e.AtUS = at
		m.Events = append(m.Events, e)
	}
	ev(Event{Kind: KindInitialize, Initialize: &Initialize{ProtocolVersion: "2025-11-25", ServerInfo: json.RawMessage(`{"name":"reference","version":"1.0.0"}`)}})
	ev(Event{Kind: KindTools, Tools: &Tools{Tools: c.tools}})
	system := "You are an operator of an HPE Aruba Networking Central deployment. " + phrase(rand.New(rand.NewPCG(1, 1)), 60)
	var messages []json.RawMessage
	intent, _ := json.Marshal(map[string]any{"role": "user", "content": "Scenario " + fmt.Sprint(scenario) + ": " + phrase(rand.New(rand.NewPCG(uint64(scenario), 3)), 30)})
	messages = append(messages, intent)
	turns := 6 + r.IntN(5)
	calls := 5 + r.IntN(6)
	httpCalls := 10 + r.IntN(21)
	httpSeq, callIdx := 0, 0
	for t := 0; t < turns; t++ {
		req, _ := Marshal(map[string]any{"system": system, "messages": messages, "tools": c.tools, "temperature": 0, "seed": 7})
		var resp json.RawMessage
		last := t == turns-1
		if !last && callIdx < calls {
			resp, _ = Marshal(map[string]any{"text": phrase(r, 5+r.IntN(30)), "tool_calls": []any{map[string]any{
				"id": fmt.Sprintf("call_%d_%x", callIdx, r.Uint64()), "name": "central_tool",
				"arguments": map[string]any{"site": phrase(r, 1), "limit": 100}}}})
		} else {
			resp, _ = Marshal(map[string]any{"text": phrase(r, 40+r.IntN(60)), "stop": "end_turn"})
		}
		ev(Event{Kind: KindTurn, Turn: &Turn{Index: t, Key: Hash(req), Request: req, Response: resp,
			Usage: Usage{Input: 6000 + r.IntN(4000), Output: 50 + r.IntN(400)}, LatencyUS: int64(300000 + r.IntN(2000000))}})
		messages = append(messages, resp)
		if last || callIdx >= calls {
			continue
		}
		// One tool call this turn, with its share of the HTTP calls.
		share := httpCalls / calls
		if callIdx == calls-1 {
			share = httpCalls - httpSeq
		}
		var bodies []json.RawMessage
		for k := 0; k < share; k++ {
			body := fakeBody(scenario, httpSeq)
			if r.IntN(10) == 0 { // a fault or different page now and then
				body = fakeBody(scenario+1000*index, httpSeq)
			}
			bodies = append(bodies, body)
			ev(Event{Kind: KindHTTP, HTTP: &HTTP{Seq: httpSeq, Method: "GET", Path: "/network-monitoring/v1/clients",
				Query: fmt.Sprintf("limit=100&offset=%d", 100*k), Status: 200, ResponseBody: body, Class: "read",
				LatencyUS: int64(200 + r.IntN(3000)), Call: callIdx}})
			httpSeq++
		}
		result, _ := Marshal(map[string]any{"content": []any{map[string]any{"type": "text", "text": string(bodies[0])}}})
		ev(Event{Kind: KindCall, Call: &Call{Index: callIdx, Tool: "central_tool", Arguments: json.RawMessage(`{"limit":100}`),
			Result: result, LatencyUS: int64(1000 + r.IntN(20000))}})
		msg, _ := Marshal(map[string]any{"role": "tool", "content": json.RawMessage(result)})
		messages = append(messages, msg)
		callIdx++
	}
	ev(Event{Kind: KindAnswer, Answer: &Answer{Result: json.RawMessage(`{"clients":3,"status":"ok"}`)}})
	return m
}

func (c *corpus) ref(scenario, model, index int) string {
	return RunRef("golden", "reference", corpusModels[model], fmt.Sprintf("scenario-%03d", scenario), index)
}

// all calls fn for every run of the corpus, in a fixed order.
func (c *corpus) all(fn func(ref string, run *Run) error) error {
	for s := 0; s < c.scenarios; s++ {
		for m := 0; m < c.models; m++ {
			for i := 0; i < c.runs; i++ {
				if err := fn(c.ref(s, m, i), c.run(s, m, i)); err != nil {
					return err
				}
			}
		}
	}
	return nil
}
