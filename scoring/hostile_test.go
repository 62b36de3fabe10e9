package scoring

import (
	"bytes"
	"encoding/json"
	"reflect"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/mcpbench/bench/internal/escape/escapetest"
	"github.com/mcpbench/bench/traces"
)

// hostileValue fills every exported string of v, however deep, with
// escapetest.All (every hostile string of issue 16), every list with two
// elements (the second with its flags set, so both an absent and a present
// scenario are rendered), every pointer with a value and every map with a
// hostile key. JSON payloads hold the hostile strings as JSON values. A
// field added to a report later is filled too, so a renderer that prints
// it unescaped fails this test.
func hostileValue(v reflect.Value, second bool, depth int) {
	if depth > 8 {
		return
	}
	switch v.Kind() {
	case reflect.String:
		v.SetString(escapetest.All)
	case reflect.Bool:
		v.SetBool(second)
	case reflect.Int, reflect.Int64:
		if second {
			v.SetInt(2)
		} else {
			v.SetInt(1)
		}
	case reflect.Float64:
		v.SetFloat(0.5)
	case reflect.Pointer:
		p := reflect.New(v.Type().Elem())
		hostileValue(p.Elem(), second, depth+1)
		v.Set(p)
	case reflect.Struct:
		for i := 0; i < v.NumField(); i++ {
			if v.Type().Field(i).IsExported() {
				hostileValue(v.Field(i), second, depth+1)
			}
		}
	case reflect.Slice:
		if v.Type() == reflect.TypeFor[json.RawMessage]() {
			b, _ := json.Marshal(map[string]any{"text": escapetest.All, "tool_calls": []any{map[string]any{"name": escapetest.All, "arguments": map[string]any{"a": escapetest.All}}}})
			v.SetBytes(b)
			return
		}
		if v.Type().Elem().Kind() == reflect.Uint8 {
			return
		}
		s := reflect.MakeSlice(v.Type(), 2, 2)
		hostileValue(s.Index(0), false, depth+1)
		hostileValue(s.Index(1), true, depth+1)
		v.Set(s)
	case reflect.Map:
		m := reflect.MakeMap(v.Type())
		k, e := reflect.New(v.Type().Key()).Elem(), reflect.New(v.Type().Elem()).Elem()
		hostileValue(k, second, depth+1)
		hostileValue(e, second, depth+1)
		m.SetMapIndex(k, e)
		v.Set(m)
	}
}

// hostileReport is a report every string of which is hostile, with a
// regression verdict (so every section is written).
func hostileReport() *Report {
	r := &Report{}
	hostileValue(reflect.ValueOf(r).Elem(), false, 0)
	r.Verdict.Status = StatusRegression
	r.Results.Suites[0].Suite = AllSuites // the chart draws the "all" suite
	return r
}

// hostileRuns are two runs of one scenario, every event kind of them with
// hostile strings, the second's tool results different.
func hostileRuns() (*traces.Run, *traces.Run) {
	mk := func(second bool) *traces.Run {
		run := &traces.Run{}
		hostileValue(reflect.ValueOf(&run.Manifest).Elem(), second, 0)
		for _, k := range []traces.Kind{traces.KindInitialize, traces.KindTools, traces.KindTurn, traces.KindCall, traces.KindElicitation,
			traces.KindHTTP, traces.KindEgress, traces.KindAnswer, traces.KindError} {
			e := traces.Event{}
			hostileValue(reflect.ValueOf(&e).Elem(), second, 0)
			e.Kind = k
			tools, _ := json.Marshal([]any{map[string]any{"name": escapetest.All}, map[string]any{"name": escapetest.All + "2"}})
			e.Tools.Tools = tools
			if second {
				e.Call.Result = json.RawMessage(`{"text":"changed ` + strings.ReplaceAll(string(e.Call.Result), `"`, `'`) + `"}`)
			}
			run.Events = append(run.Events, e)
		}
		return run
	}
	return mk(false), mk(true)
}

// Every report format, rendered from a report and runs whose every string
// holds each hostile string, keeps its structure: the Markdown its tables
// (as many cells in each row as in the header), its headings (no forged
// verdict), no raw HTML but bench's own and no element or comment once
// rendered; the XML (JUnit, SVG) is well-formed with its test cases and
// labels; the terminal text holds no control character.
func TestEveryFormatKeepsItsStructure(t *testing.T) {
	r := hostileReport()
	a, b := hostileRuns()
	d := DiffRuns(a, b)
	render := func(t *testing.T, f func(*bytes.Buffer) error) []byte {
		t.Helper()
		var buf bytes.Buffer
		if err := f(&buf); err != nil {
			t.Fatal(err)
		}
		return buf.Bytes()
	}
	for _, tc := range []struct {
		name     string
		write    func(*bytes.Buffer) error
		headings int   // Markdown: how many headings bench writes
		tables   []int // Markdown: the body rows of each table
		code     int   // Markdown: fenced code blocks
	}{
		{name: "report.md", write: func(w *bytes.Buffer) error { return WriteMarkdown(w, r) },
			// The verdict, safety, regressions, the tool definitions that
			// changed (two servers' added, removed and changed tools, and
			// their totals), warnings (the runs are fewer than five),
			// misses, two judges; each server's tool definitions, folded.
			headings: 8, tables: []int{2, 2, 14, 2, 2, 2, 2, 2, 2, 2}, code: 2},
		{name: "page.md", write: func(w *bytes.Buffer) error {
			return WriteResultsPage(w, r, Page{Version: escapetest.All, SVG: "x.svg", JSON: "x.json"})
		},
			// The title, what was run, warnings, the scoreboard, a heading per
			// suite, the per-scenario section (its tables folded, no heading).
			headings: 10, tables: []int{2, 2, 2, 16, 16, 2, 1}},
		{name: "comparison.md", write: func(w *bytes.Buffer) error { return WriteComparisonMarkdown(w, r.Comparison) },
			headings: 1, tables: []int{4, 2}},
		{name: "rundiff.md", write: func(w *bytes.Buffer) error { return WriteRunDiffMarkdown(w, d) },
			headings: 1, code: 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			out := render(t, tc.write)
			m := escapetest.CheckMarkdown(out)
			for _, p := range m.Problems {
				t.Error(p)
			}
			if len(m.Headings) != tc.headings || !cmp.Equal(m.Tables, tc.tables) || m.CodeBlocks != tc.code {
				t.Errorf("structure: %d headings %q, tables %v, %d code blocks; want %d headings, tables %v, %d code blocks",
					len(m.Headings), m.Headings, m.Tables, m.CodeBlocks, tc.headings, tc.tables, tc.code)
			}
			if t.Failed() {
				t.Logf("%s:\n%s", tc.name, out)
			}
		})
	}
	for _, tc := range []struct {
		name     string
		write    func(*bytes.Buffer) error
		elements map[string]int
	}{
		{"report.xml", func(w *bytes.Buffer) error { return WriteJUnit(w, r) }, map[string]int{"testsuites": 1, "testsuite": 2, "testcase": 3}}, // and the stage gate's
		// A label per server, a title; four bars for the present server.
		{"page.svg", func(w *bytes.Buffer) error { return WriteSVG(w, r) }, map[string]int{"svg": 1, "text": 1 + 1 + 4, "rect": 4}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			out := render(t, tc.write)
			x := escapetest.CheckXML(out)
			for _, p := range x.Problems {
				t.Error(p)
			}
			for el, n := range tc.elements {
				if x.Elements[el] != n {
					t.Errorf("%d <%s> elements, want %d", x.Elements[el], el, n)
				}
			}
			if t.Failed() {
				t.Logf("%s:\n%s", tc.name, out)
			}
		})
	}
	for _, tc := range []struct {
		name  string
		write func(*bytes.Buffer) error
	}{
		{"report.txt", func(w *bytes.Buffer) error { return WriteText(w, r) }},
		{"comparison.txt", func(w *bytes.Buffer) error { return WriteComparisonText(w, r.Comparison) }},
		{"rundiff.txt", func(w *bytes.Buffer) error { return WriteRunDiffText(w, d) }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			out := render(t, tc.write)
			for _, p := range escapetest.CheckTerminal(out) {
				t.Error(p)
			}
			if t.Failed() {
				t.Logf("%s:\n%q", tc.name, out)
			}
		})
	}
}
