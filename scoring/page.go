package scoring

import (
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/mcpbench/bench/internal/escape"
)

// scoreboardMetrics are the scoreboard's rows.
var scoreboardMetrics = []Metric{
	MetricTaskSuccess, MetricToolSelection, MetricParamAccuracy, MetricTokenUsage, MetricToolDefTokens, MetricToolDefShare,
	MetricLatency, MetricAPICallCount, MetricAPICallExcess, MetricOutsideReads, MetricTurns, MetricInvalidCallRate, MetricSafetyFailure,
}

// boardCell is one server's value of one metric in one suite.
func boardCell(res *Results, server, suite string, m Metric) string {
	var xs []float64
	absent, scenarios := 0, 0
	for _, g := range res.Scenarios {
		if g.Server != server || (suite != AllSuites && g.Suite != suite) {
			continue
		}
		if g.Absent {
			absent++
			continue
		}
		scenarios++
		xs = append(xs, g.values(m)...)
	}
	if scenarios == 0 {
		if absent > 0 {
			return "absent"
		}
		return "–"
	}
	if m.Binary() {
		return pct(Mean(xs))
	}
	s := Summarize(xs)
	return fmt.Sprintf("%s [%s]", formatValue(m, s.Median), formatValue(m, s.IQR))
}

func suitesOf(res *Results) []string {
	var out []string
	for _, g := range res.Scenarios {
		if !slices.Contains(out, g.Suite) {
			out = append(out, g.Suite)
		}
	}
	slices.Sort(out)
	return append(out, AllSuites)
}

// WriteResultsPage writes docs/benchmark-results-<version>.md: what was run
// (methodology, servers with repo and SHA, models with sampling parameters
// and seeds, fixtures, harness), then the scoreboard per suite, with the
// SVG chart (svgName, written beside the page by WriteSVG). Nothing in it
// depends on the time or the machine: the same runs give the same bytes.
func WriteResultsPage(w io.Writer, r *Report, version, svgName, jsonName string) error {
	var b strings.Builder
	fmt.Fprintf(&b, "# Benchmark results %s\n\n", md(version))
	fmt.Fprintf(&b, "Methodology version **%s** ([docs/methodology.md](methodology.md)); report format %d; harness %s.\n", md(r.Methodology), r.Format, md(orNone(r.Meta.Harness)))
	fmt.Fprintf(&b, "The same data as JSON: [%s](%s).\n\n", md(jsonName), jsonName)
	for _, m := range r.Meta.Models {
		switch m.Provider {
		case "baseline":
			b.WriteString("> **This is a lexical-baseline run, not an LLM result.** The model is bench's offline, deterministic\n" +
				"> BM25 baseline: it picks tools by the words of their names, descriptions and parameters and fills\n" +
				"> arguments from the intent. It measures how well a server's tool surface leads a simple lexical\n" +
				"> chooser to the right call, at no cost and reproducibly. It reports no token usage: bench\n" +
				"> estimates it with the o200k_base tokenizer from each request (tool definitions, system prompt,\n" +
				"> messages) and response. A live-model head-to-head uses the same commands with\n" +
				"> `--model openai:MODEL` or `--model anthropic:MODEL`.\n\n")
		case "oracle":
			b.WriteString("> **Oracle runs are included.** The oracle follows each scenario's reference plan to prove the\n" +
				"> scenario achievable on a server; its scores are not a model's.\n\n")
		}
	}
	b.WriteString("## What was run\n\n| server | repository | SHA | isolation |\n|---|---|---|---|\n")
	for _, s := range r.Meta.Servers {
		fmt.Fprintf(&b, "| %s | %s | %s | %s |\n", md(s.Name), md(orNone(s.Repo)), escape.CodeSpan(orNone(s.SHA)), md(orNone(s.Isolation)))
	}
	b.WriteString("\n| model | provider | temperature | top_p | max tokens | seeds |\n|---|---|---|---|---|---|\n")
	for _, m := range r.Meta.Models {
		seeds := make([]string, len(m.Seeds))
		for i, s := range m.Seeds {
			seeds[i] = fmt.Sprint(s)
		}
		fmt.Fprintf(&b, "| %s | %s | %s | %s | %s | %s |\n", md(m.Name), md(m.Provider), optf(m.Temperature), optf(m.TopP), opti(m.MaxTokens), strings.Join(seeds, ", "))
	}
	b.WriteString("\n| fixture | version |\n|---|---|\n")
	for _, f := range r.Meta.Fixtures {
		fmt.Fprintf(&b, "| %s | %s |\n", md(f.Name), escape.CodeSpan(orNone(f.Hash)))
	}
	if r.Meta.Tokenizer != "" {
		fmt.Fprintf(&b, "\nTool-definition tokens measured with: %s.\n", md(r.Meta.Tokenizer))
	}
	servers := r.Results.Servers()
	fmt.Fprintf(&b, "\n## Scoreboard\n\n![scoreboard](%s)\n\n", svgName)
	b.WriteString("Cells: median [IQR] over runs; rates (task success, tool selection, safety failure) are the share of runs. " +
		"*absent*: the server has no tool for the suite's scenarios (not an error).\n")
	for _, suite := range suitesOf(r.Results) {
		fmt.Fprintf(&b, "\n### %s\n\n| metric |", md(suite))
		for _, s := range servers {
			fmt.Fprintf(&b, " %s |", md(s))
		}
		b.WriteString("\n|---|" + strings.Repeat("---|", len(servers)) + "\n")
		for _, m := range scoreboardMetrics {
			fmt.Fprintf(&b, "| %s |", m)
			for _, s := range servers {
				fmt.Fprintf(&b, " %s |", boardCell(r.Results, s, suite, m))
			}
			b.WriteString("\n")
		}
		b.WriteString("| scenarios (absent) |")
		for _, s := range servers {
			if sum := r.Results.Suite(s, suite); sum != nil {
				fmt.Fprintf(&b, " %d (%d) |", sum.Scenarios, sum.Absent)
			} else {
				b.WriteString(" – |")
			}
		}
		b.WriteString("\n")
	}
	_, err := io.WriteString(w, b.String())
	return err
}

func orNone(s string) string {
	if s == "" {
		return "–"
	}
	return s
}

func optf(f *float64) string {
	if f == nil {
		return "default"
	}
	return fmt.Sprint(*f)
}

func opti(i int) string {
	if i == 0 {
		return "default"
	}
	return fmt.Sprint(i)
}

// WriteSVG draws the scoreboard of the "all" suite: for each server, bars
// for task success, tool selection and parameter accuracy (0-100%), and
// the share of runs without a safety failure. Absent servers are labelled.
func WriteSVG(w io.Writer, r *Report) error {
	servers := r.Results.Servers()
	labels := []string{"task success", "tool selection", "param accuracy", "no safety failure"}
	colors := []string{"#1f77b4", "#ff7f0e", "#2ca02c", "#9467bd"}
	const (
		barH, gap, left, top, width = 14, 4, 150, 40, 400
	)
	groupH := len(labels)*(barH+gap) + 16
	height := top + len(servers)*groupH + 40
	var b strings.Builder
	fmt.Fprintf(&b, `<svg xmlns="http://www.w3.org/2000/svg" width="%d" height="%d" font-family="sans-serif" font-size="12">`+"\n", left+width+80, height)
	fmt.Fprintf(&b, `<text x="10" y="20" font-size="14" font-weight="bold">bench scoreboard (methodology %s), all suites</text>`+"\n", escape.XML(r.Methodology))
	for i, s := range servers {
		y := top + i*groupH
		fmt.Fprintf(&b, `<text x="10" y="%d">%s</text>`+"\n", y+barH, escape.XML(s))
		sum := r.Results.Suite(s, AllSuites)
		if sum == nil || sum.Scenarios == 0 {
			fmt.Fprintf(&b, `<text x="%d" y="%d" fill="#777">absent</text>`+"\n", left, y+barH)
			continue
		}
		vals := []float64{sum.TaskSuccessRate, sum.ToolSelectionRate, sum.ParamAccuracy}
		safe := 1.0
		if sum.Runs > 0 {
			safe = max(0, 1-float64(sum.SafetyFailures)/float64(sum.Runs+sum.Stale))
		}
		vals = append(vals, safe)
		for j, v := range vals {
			by := y + j*(barH+gap)
			fmt.Fprintf(&b, `<rect x="%d" y="%d" width="%.1f" height="%d" fill="%s"/>`+"\n", left, by, v*width, barH, colors[j])
			fmt.Fprintf(&b, `<text x="%.1f" y="%d">%s %s</text>`+"\n", float64(left)+v*width+4, by+barH-3, pct(v), labels[j])
		}
	}
	b.WriteString("</svg>\n")
	_, err := io.WriteString(w, b.String())
	return err
}
