package scoring

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/mcpbench/bench/traces"
)

func toolRun(server string, tools string) *traces.Run {
	req := `{"messages":[],"tools":` + tools + `}`
	return &traces.Run{Manifest: traces.Manifest{Server: traces.ServerRef{Name: server}}, Events: []traces.Event{
		{Kind: traces.KindTurn, Turn: &traces.Turn{Request: json.RawMessage(req)}},
	}}
}

// bytesCount counts one token per byte: the figures are then the
// definitions' canonical sizes.
func bytesCount(b []byte) int { return len(b) }

func TestToolDefinitions(t *testing.T) {
	list := `[{"description":"b","input_schema":{"type":"object"},"name":"b_tool"},{"input_schema":{},"name":"a_tool"},{"input_schema":{},"name":"submit_result"}]`
	c := NewCache()
	d, ok := c.ToolDefinitionsOf(toolRun("ref", list), bytesCount)
	if !ok {
		t.Fatal("no tool definitions")
	}
	a, b := len(`{"input_schema":{},"name":"a_tool"}`), len(`{"description":"b","input_schema":{"type":"object"},"name":"b_tool"}`)
	if d.Server != "ref" || d.Tokens != a+b || len(d.Tools) != 2 || d.Tools[0].Name != "a_tool" || d.Tools[0].Tokens != a || d.Tools[1].Tokens != b {
		t.Errorf("definitions %+v: want a_tool %d and b_tool %d, submit_result left out", d, a, b)
	}
	// servers check measures a list of llm.Tool as JSON: the same figures.
	m, err := MeasureToolList("ref", []byte(`[{"name":"b_tool","description":"b","input_schema":{"type":"object"}},{"name":"a_tool","input_schema":{}}]`), bytesCount)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(d, m); diff != "" {
		t.Errorf("servers check and a run measure differently (-run +check):\n%s", diff)
	}
	if _, ok := c.ToolDefinitionsOf(&traces.Run{}, bytesCount); ok {
		t.Error("a run with no model turn has tool definitions")
	}
}

func TestDiffToolDefinitions(t *testing.T) {
	before := &ToolDefinitions{Server: "s", Tokens: 30, Tools: []ToolTokens{{"a", 10, "h1"}, {"b", 10, "h2"}, {"c", 10, "h3"}}}
	after := &ToolDefinitions{Server: "s", Tokens: 47, Tools: []ToolTokens{{"a", 10, "h1"}, {"b", 25, "h2x"}, {"d", 12, "h4"}}}
	got := DiffToolDefinitions(before, after)
	want := ToolChurn{Server: "s", Before: 30, After: 47, Added: []ToolTokens{{"d", 12, "h4"}}, Removed: []ToolTokens{{"c", 10, "h3"}},
		Changed: []ToolChange{{"b", 10, 25}}}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("churn (-want +got):\n%s", diff)
	}
	if got.Delta() != 17 || got.Empty() {
		t.Errorf("delta %d, empty %v", got.Delta(), got.Empty())
	}
	if c := DiffToolDefinitions(before, before); !c.Empty() {
		t.Errorf("the same list churns: %+v", c)
	}
	if line := churnLine(got, tl); line != "s: 30 -> 47 tokens (+17): added d (+12), removed c (-10), changed b (10 -> 25, +15)" {
		t.Errorf("churn line %q", line)
	}
}

// TestToolDefinitionBudget: a server over tool_definition_tokens fails the
// gate, named with its figure; at the budget it passes; with no budget
// nothing is checked; a safety failure stays the verdict.
func TestToolDefinitionBudget(t *testing.T) {
	defs := []ToolDefinitions{{Server: "ref", Tokens: 2764, Tools: make([]ToolTokens, 17)}}
	cases := []struct {
		name   string
		budget *int
		status Status
		reason string
	}{
		{"over by one", iptr(2763), StatusRegression, "ref: tool definitions take 2764 tokens (17 tools), over the tool_definition_tokens budget of 2763 (+1)"},
		{"at the budget", iptr(2764), StatusPass, ""},
		{"no budget", nil, StatusPass, ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			g := DefaultGate("")
			g.ToolDefinitionTokens = c.budget
			rep := BuildReport(&ReportInput{Gate: g, ToolDefinitions: defs})
			if rep.Verdict.Status != c.status || strings.Join(rep.Verdict.Reasons, "\n") != c.reason {
				t.Errorf("verdict %s %q, want %s %q", rep.Verdict.Status, rep.Verdict.Reasons, c.status, c.reason)
			}
		})
	}
	v := &Verdict{Status: StatusSafety}
	checkToolBudget(&Gate{ToolDefinitionTokens: iptr(1)}, defs, v)
	if v.Status != StatusSafety || len(v.Reasons) != 1 {
		t.Errorf("over budget with a safety failure: %s %q", v.Status, v.Reasons)
	}
}

// A cache reads and counts each distinct tool once, however many lists
// (one per scenario: the server's tools and that scenario's submit_result)
// hold it, and gives what reading each list by itself gives, for lists it
// cannot split too.
func TestCacheReadsEachToolOnce(t *testing.T) {
	shared := `{"annotations":{"destructiveHint":true},"input_schema":{},"name":"delete_site"},{"input_schema":{"type":"object"},"name":"list_sites"}`
	lists := []string{
		`[` + shared + `,{"input_schema":{"required":["a"]},"name":"submit_result"}]`,
		`[` + shared + `,{"input_schema":{"required":["b"]},"name":"submit_result"}]`,
		`[` + shared + `]`,
		`[1,` + shared + `]`,                           // a tool it cannot read: the list reads as none
		`[ {"name":"spaced"} , {"name":"list_sites"}]`, // not canonical: decoded whole
		`[]`,
	}
	counted := map[string]int{}
	count := func(b []byte) int { counted[string(b)]++; return len(b) }
	c := NewCache()
	for _, l := range lists {
		if diff := cmp.Diff(parseTools([]byte(l)), c.readTools(json.RawMessage(l)), cmp.AllowUnexported(toolInfo{})); diff != "" {
			t.Errorf("readTools(%s) with a cache (-alone +cached):\n%s", l, diff)
		}
		if diff := cmp.Diff(measureTools([]byte(l), bytesCount), c.measureTools([]byte(l), count)); diff != "" {
			t.Errorf("measureTools(%s) with a cache (-alone +cached):\n%s", l, diff)
		}
	}
	for def, n := range counted {
		if n != 1 {
			t.Errorf("%s counted %d times, want once", def, n)
		}
	}
	if n := counted[`{"input_schema":{"type":"object"},"name":"list_sites"}`]; n != 1 {
		t.Errorf("list_sites counted %d times, want once", n)
	}
}

// A Cache finds a request's tools as requestTools does, the lists it has
// seen before included, and never changes the request it reads.
func TestCacheRequestTools(t *testing.T) {
	reqs := []string{
		`{"messages":[{"content":"hi","role":"user"}],"sampling":{},"tools":[{"name":"a"}]}`,
		`{"messages":[{"content":"again","role":"user"}],"sampling":{},"tools":[{"name":"a"}]}`,
		// The same list nested in a later member: not the request's tools.
		`{"messages":[{"content":"x","role":"user"}],"tools":[{"name":"b"}],"z":{"q":1,"tools":[{"name":"a"}]}}`,
		// The list seen before, in a message, then another list last.
		`{"messages":[{"content":",\"tools\":[{\"name\":\"a\"}]}","role":"user"}],"tools":[{"name":"c"}]}`,
		`{"messages":[],"tools":[{"name":"a"}]}`,
		`{"tools":[{"name":"a"}]}`,
		`{"messages":[]}`,
		`{"messages":[],"tools":null}`,
	}
	c := NewCache()
	for round := range 2 {
		for _, r := range reqs {
			req := []byte(r)
			want := requestTools(json.RawMessage(r))
			if got := c.requestTools(req); !bytes.Equal(got, want) {
				t.Errorf("round %d: Cache.requestTools(%s) = %s, want %s", round, r, got, want)
			}
			if string(req) != r {
				t.Errorf("round %d: the request changed: %s, was %s", round, req, r)
			}
		}
	}
}
