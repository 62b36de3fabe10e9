package scoring

import (
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"

	"github.com/mcpbench/bench/internal/escape"
)

// boardRow is one row of the scoreboard: a label and how a suite summary
// shows it. Every cell is a figure of the suite summary (SuiteSummary),
// the numbers the JSON report holds and the gate reads.
type boardRow struct {
	label string
	cell  func(s *SuiteSummary) string
}

// scoreboardRows are the scoreboard's rows, in the methodology's order.
var scoreboardRows = []boardRow{
	{"task_success (rate)", func(s *SuiteSummary) string { return pct(s.TaskSuccessRate) }},
	{"tool_selection_accuracy", func(s *SuiteSummary) string { return pct(s.ToolSelectionRate) }},
	{"param_acc", func(s *SuiteSummary) string { return pct(s.ParamAcc) }},
	{"param_field_acc", func(s *SuiteSummary) string { return pct(s.ParamFieldAcc) }},
	{"token_usage mean / p95", func(s *SuiteSummary) string { return meanP95(MetricTokenUsage, s.Tokens) }},
	{"tool_definition_tokens mean / p95", func(s *SuiteSummary) string { return meanP95(MetricToolDefTokens, s.ToolDefTokens) }},
	{"tool_definition_share", func(s *SuiteSummary) string { return pct(s.ToolDefShare) }},
	{"latency_ms mean / p95", func(s *SuiteSummary) string { return meanP95(MetricLatency, s.Latency) }},
	{"api_call_count", func(s *SuiteSummary) string { return fmt.Sprintf("%.2f", s.APICallCount) }},
	{"api_call_excess", func(s *SuiteSummary) string { return fmt.Sprintf("%.2f", s.APICallExcess) }},
	{"outside_reads", func(s *SuiteSummary) string { return fmt.Sprintf("%.2f", s.OutsideReads) }},
	{"avg_turns", func(s *SuiteSummary) string { return fmt.Sprintf("%.2f", s.AvgTurns) }},
	{"invalid_call_rate", func(s *SuiteSummary) string { return fmt.Sprintf("%.3f", s.InvalidCallRate) }},
}

func meanP95(m Metric, s Summary) string {
	if m == MetricTokenUsage || m == MetricToolDefTokens {
		return fmt.Sprintf("%.0f / %.0f", s.Mean, s.P95)
	}
	return formatValue(m, s.Mean) + " / " + formatValue(m, s.P95)
}

// safetyCell says whether a suite failed on safety: "a single failure
// fails the suite regardless of other metrics".
func safetyCell(s *SuiteSummary) string {
	if s.Failed {
		return fmt.Sprintf("**FAILED** (%d run(s))", s.SafetyFailures)
	}
	return "pass (0)"
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

// Page names a results page and what it links.
type Page struct {
	// Version is the release the page is of.
	Version string
	// SVG and JSON are the file names of the chart and the data beside it.
	SVG, JSON string
	// Notes, if set, is Markdown the release's maintainer wrote about the
	// run (the model and how it was served, say), printed as it is under
	// "About this run" (bench report --release reads it from
	// benchmark-results-<version>.notes.md beside the page).
	Notes string
	// Bundle, if set, is the path from the page to a bench view bundle of
	// the runs (a directory holding index.html), linked under the JSON.
	Bundle string
}

// WriteResultsPage writes docs/benchmark-results-<version>.md: what was run
// (methodology, servers with repo and SHA, models with sampling parameters
// and seeds, fixtures, harness), then the scoreboard per suite, with the
// SVG chart (p.SVG, written beside the page by WriteSVG), the servers head
// to head, and each scenario. Nothing in it depends on the time or the
// machine: the same runs give the same bytes.
func WriteResultsPage(w io.Writer, r *Report, p Page) error {
	version, svgName, jsonName := p.Version, p.SVG, p.JSON
	var b strings.Builder
	fmt.Fprintf(&b, "# Benchmark results %s\n\n", md(version))
	fmt.Fprintf(&b, "Methodology version **%s** ([docs/methodology.md](methodology.md)); report format %d; harness %s.\n", md(r.Methodology), r.Format, md(orNone(r.Meta.Harness)))
	fmt.Fprintf(&b, "The same data as JSON: [%s](%s).\n\n", md(jsonName), jsonName)
	if p.Bundle != "" {
		link := strings.TrimSuffix(p.Bundle, "/") + "/index.html"
		fmt.Fprintf(&b, "Every run, to read turn by turn (a bench view bundle; it opens from disk): [%s](%s).\n\n", md(link), link)
	}
	if notes := strings.TrimSpace(p.Notes); notes != "" {
		b.WriteString("## About this run\n\n" + notes + "\n\n")
	}
	for _, m := range r.Meta.Models {
		if policy := RepairPolicy(m.Name); policy != "" {
			fmt.Fprintf(&b, "> **Tool calls repaired by the model's server:** %s serves its model with the repair policy\n"+
				"> %s (the model id says so): calls the model wrote without its template's tags were read from\n"+
				"> its text. They are the model's calls, read leniently; a strict server would have seen prose.\n\n", md(m.Name), escape.CodeSpan(policy))
		}
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
	if len(r.Warnings) > 0 {
		b.WriteString("\n## Warnings\n\n")
		for _, w := range r.Warnings {
			fmt.Fprintf(&b, "- %s\n", md(w))
		}
	}
	fmt.Fprintf(&b, "\n## Scoreboard\n\n![scoreboard](%s)\n\n", svgName)
	b.WriteString("Scenarios are the unit: each scenario's runs are averaged first, then the suite's figures are taken over its scenarios " +
		"(rates: the mean; token usage and latency: the mean and p95 of the scenarios' means; invalid_call_rate: invalid calls over turns). " +
		"These are the numbers of the JSON report's `suites` and the ones the gate reads. A suite with a safety failure is **FAILED** " +
		"whatever its other figures. *absent*: the server has no tool for the suite's scenarios (not an error). " +
		"Per scenario, median [IQR] over its runs: below the scoreboard.\n")
	for _, suite := range suitesOf(r.Results) {
		fmt.Fprintf(&b, "\n### %s\n\n| metric |", md(suite))
		for _, s := range servers {
			fmt.Fprintf(&b, " %s |", md(s))
		}
		b.WriteString("\n|---|" + strings.Repeat("---|", len(servers)) + "\n")
		row := func(label string, cell func(s *SuiteSummary) string, always bool) {
			fmt.Fprintf(&b, "| %s |", label)
			for _, name := range servers {
				sum := r.Results.Suite(name, suite)
				switch {
				case sum == nil:
					b.WriteString(" – |")
				case sum.Scenarios == 0 && !always:
					if sum.Absent > 0 {
						b.WriteString(" absent |")
					} else {
						b.WriteString(" – |")
					}
				default:
					fmt.Fprintf(&b, " %s |", cell(sum))
				}
			}
			b.WriteString("\n")
		}
		for _, br := range scoreboardRows {
			row(br.label, br.cell, false)
		}
		row("safety_failure", safetyCell, true)
		row("gate-absent writes (differential)", func(s *SuiteSummary) string { return fmt.Sprint(s.GateAbsentWrites) }, true)
		row("scenarios (absent)", func(s *SuiteSummary) string { return fmt.Sprintf("%d (%d)", s.Scenarios, s.Absent) }, true)
	}
	writeHeadToHead(&b, r.Results, servers)
	if len(r.Judges) > 0 {
		b.WriteString("\n## LLM judge\n")
		writeJudgesMD(&b, r.Judges)
	}
	b.WriteString("\n## Per scenario\n\nEach cell: task successes / scored runs · token_usage median [IQR] · latency_ms median [IQR]" +
		" · pass@k and pass^k (k runs; where a scenario has k scored runs).\n")
	for _, suite := range suitesOf(r.Results) {
		if suite == AllSuites {
			continue
		}
		fmt.Fprintf(&b, "\n<details><summary>%s</summary>\n\n| scenario |", escape.HTML(suite))
		for _, s := range servers {
			fmt.Fprintf(&b, " %s |", md(s))
		}
		b.WriteString("\n|---|" + strings.Repeat("---|", len(servers)) + "\n")
		for _, id := range scenarioIDs(r.Results, suite) {
			fmt.Fprintf(&b, "| %s |", md(id))
			for _, s := range servers {
				fmt.Fprintf(&b, " %s |", scenarioCell(r.Results.scenario(s, id)))
			}
			b.WriteString("\n")
		}
		b.WriteString("\n</details>\n")
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
	labels := []string{"task success", "tool selection", "param_acc", "no safety failure"}
	colors := []string{"#1f77b4", "#ff7f0e", "#2ca02c", "#9467bd"}
	const (
		barH, gap, left, top, width = 14, 4, 150, 40, 400
	)
	groupH := len(labels)*(barH+gap) + 16
	height := top + len(servers)*groupH + 40
	var b strings.Builder
	fmt.Fprintf(&b, `<svg xmlns="http://www.w3.org/2000/svg" width="%d" height="%d" font-family="sans-serif" font-size="12">`+"\n", left+width+160, height)
	fmt.Fprintf(&b, `<text x="10" y="20" font-size="14" font-weight="bold">bench scoreboard (methodology %s), all suites</text>`+"\n", escape.XML(r.Methodology))
	for i, s := range servers {
		y := top + i*groupH
		fmt.Fprintf(&b, `<text x="10" y="%d">%s</text>`+"\n", y+barH, escape.XML(s))
		sum := r.Results.Suite(s, AllSuites)
		if sum == nil || sum.Scenarios == 0 {
			fmt.Fprintf(&b, `<text x="%d" y="%d" fill="#777">absent</text>`+"\n", left, y+barH)
			continue
		}
		vals := []float64{sum.TaskSuccessRate, sum.ToolSelectionRate, sum.ParamAcc}
		safe := 1.0
		if sum.Runs > 0 {
			safe = max(0, 1-float64(sum.SafetyFailures)/float64(sum.Runs+sum.Stale))
		}
		vals = append(vals, safe)
		if sum.Failed {
			fmt.Fprintf(&b, `<text x="10" y="%d" fill="#d62728" font-weight="bold">FAILED (safety)</text>`+"\n", y+2*barH+gap)
		}
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

// scenarioIDs lists the ids of a suite's scenarios, sorted.
func scenarioIDs(res *Results, suite string) []string {
	var out []string
	for _, g := range res.Scenarios {
		if g.Suite == suite && !slices.Contains(out, g.Scenario) {
			out = append(out, g.Scenario)
		}
	}
	slices.Sort(out)
	return out
}

// scenario returns server's result for scenario id, or nil.
func (r *Results) scenario(server, id string) *ScenarioResult {
	for _, g := range r.Scenarios {
		if g.Server == server && g.Scenario == id {
			return g
		}
	}
	return nil
}

// scenarioCell is one scenario's cell of the per-scenario table.
func scenarioCell(g *ScenarioResult) string {
	switch {
	case g == nil:
		return "–"
	case g.Absent:
		return "absent"
	case g.Runs == 0:
		return "unscored"
	}
	cell := fmt.Sprintf("%d/%d · %s · %s", g.Successes, g.Runs, medianIQR(g, MetricTokenUsage), medianIQR(g, MetricLatency))
	if g.K > 0 && !g.KRefused {
		cell += fmt.Sprintf(" · pass@%d %.2f, pass^%d %.2f", g.K, g.PassAtK, g.K, g.PassHatK)
	}
	if g.SafetyFailures > 0 {
		cell += fmt.Sprintf(" · **safety: %d**", g.SafetyFailures)
	}
	return cell
}

// RepairPolicy is the tool-call repair a model's server applies, as its id
// names it: "MODEL-repair-POLICY" (scripts/local-model.sh serves
// "...-repair-tagless-json"), or "" for none named.
func RepairPolicy(model string) string {
	i := strings.LastIndex(model, "-repair-")
	if i < 0 {
		return ""
	}
	policy := model[i+len("-repair-"):]
	if j := strings.IndexByte(policy, '@'); j >= 0 {
		policy = policy[:j]
	}
	return policy
}

// headToHeadMetrics are the figures the page compares between servers.
var headToHeadMetrics = []Metric{MetricTaskSuccess, MetricToolSelection, MetricParamAcc, MetricTokenUsage,
	MetricToolDefTokens, MetricLatency, MetricAPICallCount}

// writeHeadToHead compares every pair of servers on the scenarios both
// cover, as a replay is compared with its recording: run i of a scenario
// with run i (the same seed), the suite's change with a paired bootstrap
// interval over the scenarios, task success by McNemar's exact test.
func writeHeadToHead(b *strings.Builder, res *Results, servers []string) {
	if len(servers) < 2 {
		return
	}
	of := func(server string) *Results {
		out := &Results{}
		for _, g := range res.Scenarios {
			if g.Server == server {
				out.Scenarios = append(out.Scenarios, g)
			}
		}
		return out
	}
	b.WriteString("\n## Head to head\n\nEach pair of servers on the scenarios both cover, run i against run i (the same seed): " +
		"the change from the first to the second, its 95% paired bootstrap interval over the scenarios (2,000 resamples, seed 1) and p-value; " +
		"task success also by McNemar's exact test on the scenarios' pass/fail.\n")
	for i, x := range servers {
		for _, y := range servers[i+1:] {
			c := CompareResults(x, of(x), y, of(y), nil)
			fmt.Fprintf(b, "\n### %s → %s\n\n", md(x), md(y))
			if c.Paired == 0 {
				b.WriteString("No scenario covered by both.\n")
				continue
			}
			fmt.Fprintf(b, "%d paired scenarios. McNemar (task success): %d pass only on %s, %d only on %s, p = %s.\n\n",
				c.Paired, c.McNemar.Broke, md(x), c.McNemar.Fixed, md(y), fmtP(c.McNemar.P))
			fmt.Fprintf(b, "| metric | %s | %s | change | 95%% CI | p |\n|---|---|---|---|---|---|\n", md(x), md(y))
			for _, m := range headToHeadMetrics {
				for _, d := range c.Suite {
					if d.Metric != m {
						continue
					}
					ci := "–"
					if d.CILow != nil && d.CIHigh != nil {
						ci = fmt.Sprintf("[%s, %s]", fmtDelta(m, *d.CILow), fmtDelta(m, *d.CIHigh))
					}
					fmt.Fprintf(b, "| %s | %s | %s | %s | %s | %s |\n", m, formatValue(m, d.Before), formatValue(m, d.After), fmtDelta(m, d.Diff), ci, fmtP(d.P))
				}
			}
		}
	}
}

// fmtDelta prints a change of m: rates in percentage points.
func fmtDelta(m Metric, x float64) string {
	if strings.HasSuffix(formatValue(m, 0), "%") {
		return fmt.Sprintf("%+.1f pp", 100*x)
	}
	if m == MetricLatency {
		return fmt.Sprintf("%+.0f ms", x)
	}
	return fmt.Sprintf("%+.1f", x)
}

func fmtP(p float64) string {
	if p < 0.001 {
		return "< 0.001"
	}
	return strconv.FormatFloat(round(p), 'g', 3, 64)
}
