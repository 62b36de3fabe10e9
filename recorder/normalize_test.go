package recorder

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/mcpbench/bench/traces"
)

const rulesProfile = `name: clocked
command: [srv]
normalize:
  - pattern: '\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?Z'
    placeholder: <time>
  - pattern: 'minute=(?P<v>\d+)'
    placeholder: <m>
  - path: $.window.start
    placeholder: <start>
  - path: $..epoch_ms
    placeholder: <ms>
  - path: $['start-at']
    placeholder: <from>
`

func rulesOf(t *testing.T, yml string) *Profile {
	t.Helper()
	p, err := ParseProfile("servers/clocked.yaml", []byte(yml), "")
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// TestNormalizeRuleErrors: a rule that cannot work is refused when the
// profile loads, with the file, the rule's index and line, and the field.
func TestNormalizeRuleErrors(t *testing.T) {
	cases := []struct{ rules, want string }{
		{"  - pattern: '('\n    placeholder: <x>\n", `servers/p.yaml: normalize[0] (line 4): pattern "(": missing closing )`},
		{"  - pattern: 'a*'\n    placeholder: <x>\n", `normalize[0] (line 4): pattern "a*" matches the empty string`},
		{"  - pattern: a\n", `normalize[0] (line 4): placeholder: required`},
		{"  - pattern: a\n    path: $.a\n    placeholder: <x>\n", `normalize[0] (line 4): has both pattern and path`},
		{"  - placeholder: <x>\n", `normalize[0] (line 4): needs pattern`},
		{"  - path: $.a[\n    placeholder: <x>\n", `normalize[0] (line 4): path "$.a[": offset 3: '[' without ']'`},
		{"  - path: a.b\n    placeholder: <x>\n", `path "a.b": must start with $`},
		{"  - path: $.a..\n    placeholder: <x>\n", `path "$.a..": ends with '..'`},
		{"  - path: $.a\n    placeholder: '\"x\"'\n", `normalize[0] (line 4): placeholder "\"x\"": no spaces`},
		{"  - path: $.a\n    placeholder: a b\n", `placeholder "a b": no spaces`},
		{"  - path: $.a\n    placeholder: <x>\n    flags: i\n", `line 6: field flags not found in a normalize rule`},
		{"  - pattern: ok\n    placeholder: <x>\n  - pattern: ')'\n    placeholder: <y>\n", `normalize[1] (line 6): pattern ")"`},
	}
	for _, c := range cases {
		_, err := ParseProfile("servers/p.yaml", []byte("name: p\ncommand: [x]\nnormalize:\n"+c.rules), "")
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("rules\n%s: error %v, want it to contain %q", c.rules, err, c.want)
		}
	}
	if _, err := ParseProfile("servers/p.yaml", []byte("name: p\ncommand: [x]\nclock: frozen\n"), ""); err == nil || !strings.Contains(err.Error(), `servers/p.yaml: clock: "frozen" is not auto, pinned or wall`) {
		t.Errorf("clock: frozen: %v", err)
	}
	// mcpServers files take the same rules (no lines in JSON).
	_, err := ParseProfile("c.json", []byte(`{"mcpServers":{"a":{"command":"x","normalize":[{"pattern":"(","placeholder":"<x>"}]}}}`), "")
	if err == nil || !strings.Contains(err.Error(), `c.json: normalize[0]: pattern "(": missing closing )`) {
		t.Errorf("mcpServers rule: %v", err)
	}
	p := rulesOf(t, rulesProfile)
	if len(p.Normalize) != 5 || p.Hash() == rulesOf(t, "name: clocked\ncommand: [srv]\n").Hash() {
		t.Errorf("rules are part of the profile and its hash: %d rules", len(p.Normalize))
	}
}

func TestParsePath(t *testing.T) {
	for path, want := range map[string]string{
		"$":                 "",
		"$.a.b":             "n:a n:b",
		"$.a[2].b":          "n:a i:2 n:b",
		"$.items[*].ts":     "n:items * n:ts",
		"$..ts":             "d n:ts",
		"$..[0]":            "d i:0",
		"$.a.*":             "n:a *",
		`$['start-at']`:     "n:start-at",
		`$["x y"].z`:        "n:x y n:z",
		"$.start-at.window": "n:start-at n:window",
	} {
		segs, err := parsePath(path)
		if err != nil {
			t.Errorf("%s: %v", path, err)
			continue
		}
		var got []string
		for _, s := range segs {
			switch s.kind {
			case 'n':
				got = append(got, "n:"+s.name)
			case 'i':
				got = append(got, "i:"+string(rune('0'+s.index)))
			default:
				got = append(got, string(s.kind))
			}
		}
		if g := strings.Join(got, " "); g != want {
			t.Errorf("%s parsed as %q, want %q", path, g, want)
		}
	}
}

// TestNormalizeValues: what the rules do to texts, JSON documents (a tool
// result whose text is JSON, bodies) and queries, and what they keep of
// the originals, in document order.
func TestNormalizeValues(t *testing.T) {
	n := rulesOf(t, rulesProfile).normalizer()
	text := func(s string) (string, []string) {
		var out []traces.Normalized
		r := n.text(s, &out)
		var orig []string
		for _, o := range out {
			orig = append(orig, o.Placeholder+"="+o.Original)
		}
		return r, orig
	}
	cases := []struct {
		in, want string
		orig     []string
	}{
		{"it is 2026-12-01T14:05:00Z, minute=5", "it is <time>, minute=<m>", []string{"<time>=2026-12-01T14:05:00Z", "<m>=5"}},
		{"nothing to see", "nothing to see", nil},
		// A JSON text: paths at its root, patterns in its strings, members by name.
		{`{"window": {"start": 1795165200000, "end": "2026-12-01T14:05:00.5Z"}, "b": [{"epoch_ms": 1}, {"epoch_ms": {"x": 2}}]}`,
			`{"b":[{"epoch_ms":"<ms>"},{"epoch_ms":"<ms>"}],"window":{"end":"<time>","start":"<start>"}}`,
			[]string{"<ms>=1", `<ms>={"x":2}`, "<time>=2026-12-01T14:05:00.5Z", "<start>=1795165200000"}},
		// Unchanged JSON keeps its spelling.
		{`{ "a" : 1 }`, `{ "a" : 1 }`, nil},
		// Not JSON after all: text.
		{`{not json 2026-12-01T14:05:00Z`, `{not json <time>`, []string{"<time>=2026-12-01T14:05:00Z"}},
	}
	for _, c := range cases {
		got, orig := text(c.in)
		if got != c.want || !cmp.Equal(orig, c.orig) {
			t.Errorf("text(%s)\n got %s %q\nwant %s %q", c.in, got, orig, c.want, c.orig)
		}
	}

	// An MCP result: its text content holds JSON; the rules reach into it.
	var out []traces.Normalized
	res := json.RawMessage(`{"content":[{"text":"{\"window\":{\"start\":5},\"now\":\"2026-12-01T14:05:00Z\"}","type":"text"}]}`)
	got := n.raw(res, &out)
	if want := `{"content":[{"text":"{\"now\":\"<time>\",\"window\":{\"start\":\"<start>\"}}","type":"text"}]}`; string(got) != want || len(out) != 2 {
		t.Errorf("raw result\n got %s %v\nwant %s", got, out, want)
	}
	out = nil
	if same := json.RawMessage(`{"a":"b"}`); string(n.raw(same, &out)) != `{"a":"b"}` || out != nil {
		t.Errorf("an untouched payload changed")
	}

	// A query: value by value, names kept, placeholders unescaped.
	out = nil
	q := n.query("context-type=SITE&start-at=2026-12-01T13%3A05%3A00Z&end-at=2026-12-01T14%3A05%3A00Z&flag", &out)
	if want := "context-type=SITE&start-at=<from>&end-at=<time>&flag"; q != want {
		t.Errorf("query %s, want %s", q, want)
	}
	if len(out) != 2 || out[0].Original != "2026-12-01T13:05:00Z" || out[0].Rule != "$['start-at']" || out[1].Original != "2026-12-01T14:05:00Z" {
		t.Errorf("query originals %+v", out)
	}
}

// TestNormalizeEvents: a finished run's call results and HTTP exchanges
// are normalised, canonical, with the originals on the event; other events
// are left alone.
func TestNormalizeEvents(t *testing.T) {
	p := rulesOf(t, rulesProfile)
	evs := []traces.Event{
		{Kind: traces.KindCall, Call: &traces.Call{Tool: "now", Arguments: json.RawMessage(`{}`),
			Result: json.RawMessage(`{"content":[{"text":"now 2026-12-01T14:05:00Z","type":"text"}]}`)}},
		{Kind: traces.KindHTTP, HTTP: &traces.HTTP{Method: "GET", Path: "/v1/events/2026-12-01T14:05:00Z",
			Query: "start-at=2026-12-01T13%3A05%3A00Z", ResponseBody: json.RawMessage(`{"items":[],"now":"2026-11-20T10:00:00Z"}`)}},
		{Kind: traces.KindAnswer, Answer: &traces.Answer{Text: "at 2026-12-01T14:05:00Z"}},
	}
	normalizeEvents(p, evs)
	c, h := evs[0], evs[1]
	if string(c.Call.Result) != `{"content":[{"text":"now <time>","type":"text"}]}` || len(c.Normalized) != 1 || c.Normalized[0].Original != "2026-12-01T14:05:00Z" {
		t.Errorf("call: %s %+v", c.Call.Result, c.Normalized)
	}
	if h.HTTP.Path != "/v1/events/<time>" || h.HTTP.Query != "start-at=<from>" || string(h.HTTP.ResponseBody) != `{"items":[],"now":"<time>"}` {
		t.Errorf("http: %s ? %s -> %s", h.HTTP.Path, h.HTTP.Query, h.HTTP.ResponseBody)
	}
	var orig []string
	for _, o := range h.Normalized {
		orig = append(orig, o.Original)
	}
	if want := []string{"2026-12-01T14:05:00Z", "2026-12-01T13:05:00Z", "2026-11-20T10:00:00Z"}; !cmp.Equal(orig, want) {
		t.Errorf("http originals %q, want %q (path, query, bodies)", orig, want)
	}
	if evs[2].Answer.Text != "at 2026-12-01T14:05:00Z" || evs[2].Normalized != nil {
		t.Errorf("the model's answer was normalised: %+v", evs[2])
	}
	// Without rules nothing changes.
	before := `{"content":[{"text":"now 2026-12-01T14:05:00Z","type":"text"}]}`
	evs = []traces.Event{{Kind: traces.KindCall, Call: &traces.Call{Result: json.RawMessage(before)}}}
	normalizeEvents(rulesOf(t, "name: plain\ncommand: [srv]\n"), evs)
	if string(evs[0].Call.Result) != before || evs[0].Normalized != nil {
		t.Errorf("a profile without rules changed a result")
	}
}
