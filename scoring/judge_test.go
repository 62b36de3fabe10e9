package scoring

import (
	"context"
	"strings"
	"testing"

	"github.com/mcpbench/bench/llm"
)

// scriptedModel answers with its replies in turn and keeps the requests.
type scriptedModel struct {
	replies  []string
	requests []*llm.Request
}

func (m *scriptedModel) Name() string { return "scripted" }

func (m *scriptedModel) Generate(_ context.Context, req *llm.Request) (*llm.Response, error) {
	m.requests = append(m.requests, req)
	r := m.replies[(len(m.requests)-1)%len(m.replies)]
	return &llm.Response{Text: r, StopReason: llm.StopEndTurn}, nil
}

func TestJudgeMajority(t *testing.T) {
	scs := loadTestScenarios(t)
	m := &scriptedModel{replies: []string{
		`{"correctness":2,"tool_use":1,"compliance":2,"reason":"a"}`,
		"```json\n{\"correctness\":2,\"tool_use\":2,\"compliance\":2,\"reason\":\"b\"}\n```",
		`not json`,
		`{"correctness":1,"tool_use":2,"compliance":2,"reason":"c"}`,
		`{"correctness":2,"tool_use":0,"compliance":1,"reason":"d"}`,
	}}
	j := &Judge{Model: m, Samples: 5, Seed: 1}
	res, err := j.Grade(context.Background(), scs["read-001"], readPass().build())
	if err != nil {
		t.Fatal(err)
	}
	// correctness: 2,2,1,2 -> 2; tool_use: 1,2,2,0 -> 2; compliance: 2,2,2,1 -> 2.
	if res.Scores.Correctness != 2 || res.Scores.ToolUse != 2 || res.Scores.Compliance != 2 || res.Invalid != 1 || len(res.Samples) != 4 {
		t.Errorf("result %+v", res)
	}
	// Fixed temperature, and both orders of expectation and transcript
	// appear across samples (position randomisation), reproducibly.
	orders := map[bool]int{}
	for _, r := range m.requests {
		if r.Sampling.Temperature == nil || *r.Sampling.Temperature != 0 {
			t.Fatal("judge temperature must be fixed at 0")
		}
		c := r.Messages[0].Content
		orders[strings.Index(c, "EXPECTED:") < strings.Index(c, "WHAT THE AGENT DID:")]++
	}
	if orders[true] == 0 || orders[false] == 0 {
		t.Errorf("positions never swapped: %v", orders)
	}
	m2 := &scriptedModel{replies: m.replies}
	if _, err := (&Judge{Model: m2, Samples: 5, Seed: 1}).Grade(context.Background(), scs["read-001"], readPass().build()); err != nil {
		t.Fatal(err)
	}
	for i := range m.requests {
		if m.requests[i].Messages[0].Content != m2.requests[i].Messages[0].Content {
			t.Fatal("same seed, different order")
		}
	}
}

func TestJudgeAllInvalid(t *testing.T) {
	scs := loadTestScenarios(t)
	_, err := (&Judge{Model: &scriptedModel{replies: []string{"no"}}}).Grade(context.Background(), scs["read-001"], readPass().build())
	if err == nil {
		t.Error("want an error when no sample is valid")
	}
}

// Reference kappas computed with a hand-written Python function
// (collections.Counter; po and pe from the definition).
func TestCohensKappa(t *testing.T) {
	po, k := CohensKappa([]int{2, 2, 1, 0, 2, 1, 2, 0, 1, 2}, []int{2, 1, 1, 0, 2, 2, 2, 0, 0, 2})
	if !near(po, 0.7, 1e-9) || !near(k, 0.5238095238095237, 1e-9) {
		t.Errorf("3 categories: po %v kappa %v", po, k)
	}
	po, k = CohensKappa([]int{1, 1, 0, 0, 1, 1, 0, 1}, []int{1, 0, 0, 0, 1, 1, 1, 1})
	if !near(po, 0.75, 1e-9) || !near(k, 0.4666666666666667, 1e-9) {
		t.Errorf("binary: po %v kappa %v", po, k)
	}
}

func TestCalibrateAndGate(t *testing.T) {
	s := func(c, u, p int) *JudgeScores { return &JudgeScores{Correctness: c, ToolUse: u, Compliance: p} }
	labels := []LabeledRun{
		{Run: "a", Human: *s(2, 2, 2), Judge: s(2, 2, 2)},
		{Run: "b", Human: *s(0, 1, 2), Judge: s(0, 1, 2)},
		{Run: "c", Human: *s(2, 1, 2), Judge: s(2, 2, 2)},
		{Run: "d", Human: *s(1, 0, 0), Judge: s(2, 0, 2)},
		{Run: "e", Human: *s(2, 2, 2)}, // no judge grading: left out
	}
	c, err := Calibrate(labels)
	if err != nil {
		t.Fatal(err)
	}
	// pass verdicts: human 1,0,1,0; judge 1,0,1,1 -> po 0.75, pe 0.5*0.75+0.5*0.25 = 0.5, kappa 0.5.
	if c.Kappa != 0.5 || c.Dimensions[0].N != 4 {
		t.Errorf("calibration %+v", c)
	}
	if err := JudgeUsable(DefaultGate("core"), c); err == nil {
		t.Error("kappa 0.5 is below the default bar 0.6")
	}
	g, _ := ParseGate("core", map[string]any{"judge_min_kappa": 0.4})
	if err := JudgeUsable(g, c); err != nil {
		t.Error(err)
	}
}

// positionalModel always prefers whichever agent is shown first: a judge
// with pure position bias. Randomising the order must cancel it out.
type positionalModel struct{}

func (m *positionalModel) Name() string { return "positional" }

func (m *positionalModel) Generate(_ context.Context, req *llm.Request) (*llm.Response, error) {
	return &llm.Response{Text: `{"better": 1, "reason": "the first one"}`}, nil
}

// contentModel prefers the transcript that mentions the right client.
type contentModel struct{}

func (contentModel) Name() string { return "content" }

func (contentModel) Generate(_ context.Context, req *llm.Request) (*llm.Response, error) {
	c := req.Messages[0].Content
	one := c[strings.Index(c, "AGENT 1:"):strings.Index(c, "AGENT 2:")]
	if strings.Contains(one, "clients/aa:bb:cc:11:22:33") {
		return &llm.Response{Text: `{"better": 1}`}, nil
	}
	return &llm.Response{Text: `{"better": 2}`}, nil
}

func TestJudgePrefer(t *testing.T) {
	scs := loadTestScenarios(t)
	good := readPass().build()
	bad := newRun("read-001", "reference", 1).
		turn(100, 10, 1000, "list_clients", `{}`).
		call("list_clients", `{}`, `{}`, 1000).
		http("GET", "/network-monitoring/v1/aps", "read").
		answer(`{"connected":false}`).build()
	// A content-driven judge picks the good run whichever side it is on.
	for _, order := range [][2]bool{{true, false}, {false, true}} {
		a, b := good, bad
		want := "a"
		if order[1] {
			a, b, want = bad, good, "b"
		}
		p, err := (&Judge{Model: contentModel{}, Samples: 5, Seed: 1}).Prefer(context.Background(), scs["read-001"], a, b)
		if err != nil {
			t.Fatal(err)
		}
		if p.Winner != want || p.VotesA+p.VotesB != 5 {
			t.Errorf("winner %s (%+v), want %s", p.Winner, p, want)
		}
	}
	// A purely positional judge splits its votes between both runs: with
	// randomised order neither gets all of them.
	p, err := (&Judge{Model: &positionalModel{}, Samples: 9, Seed: 9}).Prefer(context.Background(), scs["read-001"], good, bad)
	if err != nil {
		t.Fatal(err)
	}
	if p.VotesA == 0 || p.VotesB == 0 {
		t.Errorf("position bias not randomised: %+v", p)
	}
}
