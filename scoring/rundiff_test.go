package scoring

import (
	"bytes"
	"testing"
)

func TestDiffRuns(t *testing.T) {
	a := readPass().build()
	b := newRun("read-001", "reference", 1).
		http("GET", "/network-monitoring/v1/sites", "read").
		turn(1000, 50, 900_000, "get_client", `{"mac":"AA-BB-CC-11-22-33","limit":10}`).
		call("get_client", `{"mac":"AA-BB-CC-11-22-33","limit":10}`, `{"content":[{"type":"text","text":"connected to CNAP0001"}]}`, 41_000).
		http("POST", "/oauth2/token", "auth").
		http("GET", "/network-monitoring/v1/clients", "read"). // the divergence: another endpoint
		turn(1200, 30, 700_000, "submit_result", goodAnswer).
		answer(goodAnswer).build()
	d := DiffRuns(a, b)
	// Steps: tools, boot http, turn 0, call 0, token, then the client read.
	if d.FirstDivergence != 5 {
		t.Errorf("first divergence %d, want 5 (timings and tokens must not count)", d.FirstDivergence)
	}
	if same := DiffRuns(a, readPass().build()); same.FirstDivergence != -1 {
		t.Errorf("identical runs diverge at %d", same.FirstDivergence)
	}
	var txt, md bytes.Buffer
	if err := WriteRunDiffText(&txt, d); err != nil {
		t.Fatal(err)
	}
	if err := WriteRunDiffMarkdown(&md, d); err != nil {
		t.Fatal(err)
	}
	golden(t, "diff/run.txt", txt.Bytes())
	golden(t, "diff/run.md", md.Bytes())
}

func TestComparisonGolden(t *testing.T) {
	base, _ := suiteRuns(t, variant{})
	cur, _ := suiteRuns(t, variant{extraPages: 1, wrongAP: true})
	c := Compare("A", onlyServer(base, "reference"), "B", onlyServer(cur, "reference"), nil)
	if c.Scenarios[0].Status != string(Regressed) {
		t.Errorf("regressions must come first: %+v", c.Scenarios[0])
	}
	var txt, md bytes.Buffer
	if err := WriteComparisonText(&txt, c); err != nil {
		t.Fatal(err)
	}
	if err := WriteComparisonMarkdown(&md, c); err != nil {
		t.Fatal(err)
	}
	golden(t, "diff/sets.txt", txt.Bytes())
	golden(t, "diff/sets.md", md.Bytes())
}

func TestResultsPageGolden(t *testing.T) {
	render := func() ([]byte, []byte) {
		runs, traces := suiteRuns(t, variant{})
		other, otherTraces := suiteRuns(t, variant{server: "secure-ssid", tokens: 100})
		r := BuildReport(&ReportInput{Title: "release 1.2.0", Current: append(runs, other...), NoVerdict: true, Meta: MetaFromRuns(append(traces, otherTraces...))})
		var page, svg bytes.Buffer
		if err := WriteResultsPage(&page, r, Page{Version: "1.2.0", SVG: "benchmark-results-1.2.0.svg", JSON: "benchmark-results-1.2.0.json"}); err != nil {
			t.Fatal(err)
		}
		if err := WriteSVG(&svg, r); err != nil {
			t.Fatal(err)
		}
		return page.Bytes(), svg.Bytes()
	}
	page, svg := render()
	page2, svg2 := render()
	if !bytes.Equal(page, page2) || !bytes.Equal(svg, svg2) {
		t.Fatal("the results page is not reproducible")
	}
	golden(t, "page/benchmark-results-1.2.0.md", page)
	golden(t, "page/benchmark-results-1.2.0.svg", svg)
}
