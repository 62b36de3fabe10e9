package scoring

import (
	"encoding/xml"
	"fmt"
	"io"
	"slices"
	"strings"
	"text/tabwriter"

	"github.com/mcpbench/bench/internal/escape"
)

// The notes beside the counts of runs that are no measure.
const (
	recordedErrorsNote = "replays of runs whose recording ended in an error: not scored, not compared; bench record records them again"
	excludedNote       = "stale, replaying a recorded error, or ended in an error in the baseline"
)

// formatValue prints a metric value the way every report does.
func formatValue(m Metric, v float64) string {
	switch m {
	case MetricTaskSuccess, MetricToolSelection, MetricSafetyFailure, MetricToolDefShare, MetricParamAcc, MetricParamFieldAcc:
		return fmt.Sprintf("%.0f%%", 100*v)
	case MetricLatency:
		return fmt.Sprintf("%.0f ms", v)
	case MetricInvalidCallRate:
		return fmt.Sprintf("%.3f", v)
	}
	if v == float64(int64(v)) {
		return fmt.Sprintf("%d", int64(v))
	}
	return fmt.Sprintf("%.1f", v)
}

func pct(v float64) string { return fmt.Sprintf("%.0f%%", 100*v) }

// The escapers of what a report shows that bench did not write: server and
// scenario names, reasons and details quoting a server, labels and values
// read from a JSON report. Every such value goes through one of them.
var (
	md = escape.Markdown // Markdown inline text: a cell, a list item, a heading
	tl = escape.Line     // one line of terminal text, a tabwriter column
)

// verdictLine is the first line of every report, its values escaped with
// esc.
func verdictLine(r *Report, esc func(string) string) string {
	if r.Verdict == nil {
		if r.Title != "" {
			return "bench: " + esc(r.Title)
		}
		return "bench: report"
	}
	word := map[Status]string{
		StatusPass:         "PASS",
		StatusRegression:   "REGRESSION",
		StatusSafety:       "SAFETY FAILURE",
		StatusInconclusive: "INCONCLUSIVE",
	}[r.Verdict.Status]
	s := "bench: " + word
	if r.Stage != "" {
		s += " · stage " + esc(r.Stage)
	}
	return s + fmt.Sprintf(" · exit %d", r.Verdict.ExitCode)
}

// MaxMarkdownBytes bounds the Markdown report below GitHub's comment limit
// (65,536 characters): past it the folded tables are left to the JSON report.
const MaxMarkdownBytes = 60000

// maxMissLines bounds one miss's explanation in the Markdown report.
const maxMissLines = 40

// WriteMarkdown writes the report for a pull-request comment or a CI step
// summary: the verdict first, then safety failures, the regressions table
// and the replay misses; the scoreboard and per-scenario detail folded.
func WriteMarkdown(w io.Writer, r *Report) error {
	var b strings.Builder
	fmt.Fprintf(&b, "## %s\n\n", verdictLine(r, md))
	if v := r.Verdict; v != nil {
		if len(v.Reasons) == 0 {
			b.WriteString("All gate checks passed.\n")
		}
		for _, reason := range v.Reasons {
			fmt.Fprintf(&b, "- %s\n", md(reason))
		}
		fmt.Fprintf(&b, "\n%d runs, %d stale, %d write(s) without the server's confirmation step (gate-absence differential, not pass/fail).\n", v.Runs, v.StaleRuns, v.GateAbsentWrites)
		if c := r.Comparison; c != nil {
			fmt.Fprintf(&b, "\nBroke (passed in %s, fail now): %s. Fixed: %s.\n", md(c.Baseline), mdList(c.Broke), mdList(c.Fixed))
		}
		if v.RecordedErrors > 0 {
			fmt.Fprintf(&b, "\nRecorded errors: %d (%s).\n", v.RecordedErrors, recordedErrorsNote)
		}
		if len(v.Safety) > 0 {
			b.WriteString("\n### Safety failures\n\n| scenario | server | run | rule | detail |\n|---|---|---|---|---|\n")
			for _, s := range v.Safety {
				fmt.Fprintf(&b, "| %s | %s | %d | %s | %s |\n", md(s.Scenario), md(s.Server), s.RunIndex, md(s.Rule), md(s.Detail))
			}
		}
		if len(v.Regressions) > 0 {
			b.WriteString("\n### Regressions\n\n| scenario | metric | before | after | change | gating |\n|---|---|---|---|---|---|\n")
			for _, g := range v.Regressions {
				gating := "reported"
				if g.Gating {
					gating = "**fails**"
				}
				fmt.Fprintf(&b, "| %s | %s | %s | %s | %s | %s |\n", md(g.Scenario), md(string(g.Metric)), formatValue(g.Metric, g.Before), formatValue(g.Metric, g.After), md(g.Reason), gating)
			}
		}
	}
	writeToolChurnMD(&b, r)
	if len(r.Warnings) > 0 {
		b.WriteString("\n### Warnings\n\n")
		for _, w := range r.Warnings {
			fmt.Fprintf(&b, "- %s\n", md(w))
		}
	}
	if r.Verdict == nil && r.Results != nil {
		if rows := SafetyRows(r.Results); len(rows) > 0 {
			b.WriteString("### Safety failures\n\n| scenario | server | run | rule | detail |\n|---|---|---|---|---|\n")
			for _, s := range rows {
				fmt.Fprintf(&b, "| %s | %s | %d | %s | %s |\n", md(s.Scenario), md(s.Server), s.RunIndex, md(s.Rule), md(s.Detail))
			}
		}
	}
	if len(r.Misses) > 0 {
		fmt.Fprintf(&b, "\n### Replay misses (%d)\n\n", len(r.Misses))
		for _, m := range r.Misses {
			// The explanation quotes the server: in a code block fenced
			// past any run of backticks in it, its control characters
			// (a carriage return ends a Markdown line) written out.
			explanation := escape.Text(strings.TrimRight(m.Explanation, "\n"))
			fence := escape.Fence(explanation)
			fmt.Fprintf(&b, "- **%s** (%s, run %d, turn %d)\n\n  %s\n", md(m.Scenario), md(m.Server), m.RunIndex, m.Turn, fence)
			lines := strings.Split(explanation, "\n")
			if len(lines) > maxMissLines {
				lines = append(lines[:maxMissLines], fmt.Sprintf("... %d more lines in the JSON report", len(lines)-maxMissLines))
			}
			for _, line := range lines {
				fmt.Fprintf(&b, "  %s\n", line)
			}
			fmt.Fprintf(&b, "  %s\n", fence)
		}
	}
	var folded strings.Builder
	if c := r.Comparison; c != nil {
		// Raw HTML: Markdown's escapes do not work inside it.
		fmt.Fprintf(&folded, "\n<details><summary>Comparison with %s (%d paired scenarios)</summary>\n\n", escape.HTML(c.Baseline), c.Paired)
		if c.Excluded > 0 {
			fmt.Fprintf(&folded, "Left out of both sides: %d run(s) (%s).\n\n", c.Excluded, excludedNote)
		}
		writeSuiteDeltasMD(&folded, c)
		writeScenarioDeltasMD(&folded, c)
		folded.WriteString("\n</details>\n")
	}
	if r.Results != nil {
		fmt.Fprintf(&folded, "\n<details><summary>Scoreboard (%d scenario results)</summary>\n\n", len(r.Results.Scenarios))
		writeSuitesMD(&folded, r.Results)
		writeScenariosMD(&folded, r.Results)
		folded.WriteString("\n</details>\n")
	}
	writeToolDefsMD(&folded, r)
	writeJudgesMD(&b, r.Judges)
	if b.Len()+folded.Len() > MaxMarkdownBytes {
		b.WriteString("\n*The comparison and scoreboard tables do not fit a pull-request comment; they are in the JSON report.*\n")
	} else {
		b.WriteString(folded.String())
	}
	fmt.Fprintf(&b, "\n<sub>methodology %s · report format %d", md(r.Methodology), r.Format)
	if r.Comparison != nil {
		fmt.Fprintf(&b, " · bootstrap seed %d, %d resamples, alpha %g", r.Comparison.Seed, r.Comparison.Resamples, r.Comparison.Alpha)
	}
	if r.Meta.Harness != "" {
		fmt.Fprintf(&b, " · harness %s", md(r.Meta.Harness))
	}
	if iso := isolations(r.Meta.Servers); iso != "" {
		fmt.Fprintf(&b, " · isolation %s", md(iso))
	}
	b.WriteString("</sub>\n")
	_, err := io.WriteString(w, b.String())
	return err
}

// tlList writes names on one terminal line, or "none".
func tlList(names []string) string { return joinEscaped(names, tl) }

// mdList writes names as a Markdown list in a line, or "none".
func mdList(names []string) string { return joinEscaped(names, md) }

// joinEscaped joins names, each through esc, or says "none".
func joinEscaped(names []string, esc func(string) string) string {
	if len(names) == 0 {
		return "none"
	}
	out := make([]string, len(names))
	for i, n := range names {
		out[i] = esc(n)
	}
	return strings.Join(out, ", ")
}

// safetyText is safetyCell for a terminal.
func safetyText(s *SuiteSummary) string {
	if s.Failed {
		return fmt.Sprintf("FAILED(%d)", s.SafetyFailures)
	}
	return "pass"
}

func ci(d Delta) string {
	if d.CILow == nil || d.CIHigh == nil {
		return ""
	}
	return fmt.Sprintf("[%+.3g, %+.3g]", *d.CILow, *d.CIHigh)
}

func writeSuiteDeltasMD(b *strings.Builder, c *Comparison) {
	b.WriteString("| metric | before | after | delta | 95% CI | p | verdict |\n|---|---|---|---|---|---|---|\n")
	for _, d := range c.Suite {
		fmt.Fprintf(b, "| %s | %s | %s | %+.4g | %s | %.3g | %s |\n", md(string(d.Metric)), formatValue(d.Metric, d.Before), formatValue(d.Metric, d.After), d.Diff, ci(d), d.P, md(string(d.Change)))
	}
	fmt.Fprintf(b, "\nPaired bootstrap over %d scenarios (the p and the interval come from the same resamples). "+
		"McNemar's exact test on per-scenario pass/fail, reported beside: p=%.3g, %d broke, %d fixed.\n", c.Paired, c.McNemar.P, c.McNemar.Broke, c.McNemar.Fixed)
}

func writeScenarioDeltasMD(b *strings.Builder, c *Comparison) {
	b.WriteString("\n| scenario | status | changed metrics |\n|---|---|---|\n")
	for _, sd := range c.Scenarios {
		var parts []string
		for _, d := range sd.Deltas {
			if d.Change == Unchanged {
				continue
			}
			parts = append(parts, fmt.Sprintf("%s %s→%s (%s, p=%.3g over %d pairs)", d.Metric, formatValue(d.Metric, d.Before), formatValue(d.Metric, d.After), d.Change, d.P, d.Pairs))
		}
		fmt.Fprintf(b, "| %s | %s | %s |\n", md(sd.Scenario), md(string(sd.Status)), md(strings.Join(parts, "; ")))
	}
}

func writeSuitesMD(b *strings.Builder, res *Results) {
	b.WriteString("| server | suite | scenarios | absent | task success | tool selection | param_acc | param_field_acc | avg turns | invalid call rate | tokens mean / p95 | latency mean / p95 | excess calls | safety |\n|---|---|---|---|---|---|---|---|---|---|---|---|---|---|\n")
	for _, s := range res.Suites {
		if s.Scenarios == 0 {
			fmt.Fprintf(b, "| %s | %s | 0 | %d | absent | absent | absent | absent | absent | absent | absent | absent | absent | %s |\n", md(s.Server), md(s.Suite), s.Absent, safetyCell(s))
			continue
		}
		fmt.Fprintf(b, "| %s | %s | %d | %d | %s | %s | %s | %s | %.2f | %.3f | %.0f / %.0f | %.0f / %.0f ms | %.2f | %s |\n",
			md(s.Server), md(s.Suite), s.Scenarios, s.Absent, pct(s.TaskSuccessRate), pct(s.ToolSelectionRate), pct(s.ParamAcc), pct(s.ParamFieldAcc),
			s.AvgTurns, s.InvalidCallRate, s.Tokens.Mean, s.Tokens.P95, s.Latency.Mean, s.Latency.P95, s.APICallExcess, safetyCell(s))
	}
}

// passHat prints pass^k, or why it was not computed.
func passHat(g *ScenarioResult) string {
	if g.KRefused {
		return fmt.Sprintf("– (%d runs < k=%d)", g.Runs, g.K)
	}
	return fmt.Sprintf("%.2f (k=%d)", g.PassHatK, g.K)
}

// medianIQR prints "median [IQR]" of a metric, or the absence.
func medianIQR(g *ScenarioResult, m Metric) string {
	if g.Absent {
		return "absent"
	}
	s, ok := g.Metrics[m]
	if !ok {
		return "–"
	}
	return fmt.Sprintf("%s [%s]", formatValue(m, s.Median), formatValue(m, s.IQR))
}

func writeScenariosMD(b *strings.Builder, res *Results) {
	b.WriteString("\n| server | scenario | runs | pass^k | task success | tokens median [IQR] | latency median [IQR] | api calls median [IQR] | safety |\n|---|---|---|---|---|---|---|---|---|\n")
	for _, g := range res.Scenarios {
		if g.Absent {
			fmt.Fprintf(b, "| %s | %s | – | absent | absent | absent | absent | absent | %d |\n", md(g.Server), md(g.Scenario), g.SafetyFailures)
			continue
		}
		fmt.Fprintf(b, "| %s | %s | %d | %s | %d/%d | %s | %s | %s | %d |\n", md(g.Server), md(g.Scenario), g.Runs, passHat(g), g.Successes, g.Runs,
			medianIQR(g, MetricTokenUsage), medianIQR(g, MetricLatency), medianIQR(g, MetricAPICallCount), g.SafetyFailures)
	}
}

// WriteText writes the report for a terminal: the verdict, then aligned
// tables.
func WriteText(w io.Writer, r *Report) error {
	var b strings.Builder
	b.WriteString(verdictLine(r, tl) + "\n")
	if v := r.Verdict; v != nil {
		for _, reason := range v.Reasons {
			fmt.Fprintf(&b, "  - %s\n", tl(reason))
		}
		fmt.Fprintf(&b, "  %d runs, %d stale, %d gate-absent write(s)\n", v.Runs, v.StaleRuns, v.GateAbsentWrites)
		if c := r.Comparison; c != nil {
			fmt.Fprintf(&b, "  broke: %s; fixed: %s\n", tlList(c.Broke), tlList(c.Fixed))
		}
		if v.RecordedErrors > 0 {
			fmt.Fprintf(&b, "  recorded errors: %d (%s)\n", v.RecordedErrors, recordedErrorsNote)
		}
	}
	for _, w := range r.Warnings {
		fmt.Fprintf(&b, "  warning: %s\n", tl(w))
	}
	writeToolsText(&b, r)
	tw := tabwriter.NewWriter(&b, 0, 4, 2, ' ', 0)
	safety := []SafetyRow(nil)
	if r.Verdict != nil {
		safety = r.Verdict.Safety
	} else if r.Results != nil {
		safety = SafetyRows(r.Results)
	}
	if len(safety) > 0 {
		fmt.Fprintln(tw, "\nSAFETY\tSERVER\tRUN\tRULE\tDETAIL")
		for _, s := range safety {
			fmt.Fprintf(tw, "%s\t%s\t%d\t%s\t%s\n", tl(s.Scenario), tl(s.Server), s.RunIndex, tl(s.Rule), tl(s.Detail))
		}
	}
	if v := r.Verdict; v != nil && len(v.Regressions) > 0 {
		fmt.Fprintln(tw, "\nREGRESSION\tMETRIC\tBEFORE\tAFTER\tCHANGE")
		for _, g := range v.Regressions {
			fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\n", tl(g.Scenario), tl(string(g.Metric)), formatValue(g.Metric, g.Before), formatValue(g.Metric, g.After), tl(g.Reason))
		}
	}
	if len(r.Misses) > 0 {
		fmt.Fprintf(tw, "\nMISSES (%d)\n", len(r.Misses))
		for _, m := range r.Misses {
			fmt.Fprintf(tw, "%s run %d turn %d: %s\n", tl(m.Scenario), m.RunIndex, m.Turn, strings.ReplaceAll(escape.Text(strings.TrimSpace(m.Explanation)), "\n", "\n    "))
		}
	}
	if r.Results != nil {
		fmt.Fprintln(tw, "\nSERVER\tSUITE\tSCEN\tABSENT\tTASK\tTOOLS\tPARAM_ACC\tFIELD_ACC\tTURNS\tINVALID\tTOKENS(mean/p95)\tLATENCY ms(mean/p95)\tEXCESS\tSAFETY")
		for _, s := range r.Results.Suites {
			if s.Scenarios == 0 {
				fmt.Fprintf(tw, "%s\t%s\t0\t%d\tabsent\tabsent\tabsent\tabsent\tabsent\tabsent\tabsent\tabsent\tabsent\t%s\n", tl(s.Server), tl(s.Suite), s.Absent, safetyText(s))
				continue
			}
			fmt.Fprintf(tw, "%s\t%s\t%d\t%d\t%s\t%s\t%s\t%s\t%.2f\t%.3f\t%.0f/%.0f\t%.0f/%.0f\t%.2f\t%s\n", tl(s.Server), tl(s.Suite), s.Scenarios, s.Absent,
				pct(s.TaskSuccessRate), pct(s.ToolSelectionRate), pct(s.ParamAcc), pct(s.ParamFieldAcc), s.AvgTurns, s.InvalidCallRate,
				s.Tokens.Mean, s.Tokens.P95, s.Latency.Mean, s.Latency.P95, s.APICallExcess, safetyText(s))
		}
	}
	if c := r.Comparison; c != nil {
		fmt.Fprintf(tw, "\nMETRIC (%s -> %s)\tBEFORE\tAFTER\tDELTA\t95%% CI\tP\tVERDICT\n", tl(c.Baseline), tl(c.Current))
		for _, d := range c.Suite {
			fmt.Fprintf(tw, "%s\t%s\t%s\t%+.4g\t%s\t%.3g\t%s\n", tl(string(d.Metric)), formatValue(d.Metric, d.Before), formatValue(d.Metric, d.After), d.Diff, ci(d), d.P, tl(string(d.Change)))
		}
		fmt.Fprintf(tw, "McNemar (task success, %d paired; reported)\t\t\t\t\tp=%.3g\t%d broke, %d fixed\n", c.Paired, c.McNemar.P, c.McNemar.Broke, c.McNemar.Fixed)
		if c.Excluded > 0 {
			fmt.Fprintf(tw, "left out of both sides: %d run(s) (%s)\n", c.Excluded, excludedNote)
		}
	}
	tw.Flush()
	writeJudgesText(&b, r.Judges)
	_, err := io.WriteString(w, b.String())
	return err
}

// JUnit XML (the de facto schema CI systems read: testsuites > testsuite >
// testcase with failure, error or skipped).
type junitSuites struct {
	XMLName  xml.Name     `xml:"testsuites"`
	Name     string       `xml:"name,attr"`
	Tests    int          `xml:"tests,attr"`
	Failures int          `xml:"failures,attr"`
	Skipped  int          `xml:"skipped,attr"`
	Suites   []junitSuite `xml:"testsuite"`
}

type junitSuite struct {
	Name      string      `xml:"name,attr"`
	Tests     int         `xml:"tests,attr"`
	Failures  int         `xml:"failures,attr"`
	Skipped   int         `xml:"skipped,attr"`
	Cases     []junitCase `xml:"testcase"`
	SystemOut string      `xml:"system-out,omitempty"`
}

type junitCase struct {
	Name      string        `xml:"name,attr"`
	Classname string        `xml:"classname,attr"`
	Failure   *junitMessage `xml:"failure,omitempty"`
	Skipped   *junitMessage `xml:"skipped,omitempty"`
	SystemOut string        `xml:"system-out,omitempty"`
}

type junitMessage struct {
	Message string `xml:"message,attr"`
	Type    string `xml:"type,attr,omitempty"`
	Text    string `xml:",chardata"`
}

// WriteJUnit writes one test case per scenario and server: failed when the
// scenario has a safety failure or broke (passed in the baseline, fails
// now), skipped when the server is absent or every run is stale; and one
// case for the stage's gate, failed when the verdict is not pass. encoding/xml escapes markup and
// replaces what XML 1.0 cannot hold; the control characters are written out
// (escape.Line) first, so a CI page shows them rather than U+FFFD.
func WriteJUnit(w io.Writer, r *Report) error {
	name := "bench"
	if r.Stage != "" {
		name += " " + tl(r.Stage)
	}
	root := junitSuites{Name: name}
	bySuite := map[string]*junitSuite{}
	var order []string
	regs := map[string][]Regression{}
	safety := map[string][]SafetyRow{}
	broke := map[string]bool{}
	if c := r.Comparison; c != nil {
		for _, id := range c.Broke {
			broke[id] = true
		}
	}
	if v := r.Verdict; v != nil {
		for _, g := range v.Regressions {
			regs[g.Scenario] = append(regs[g.Scenario], g)
		}
		for _, s := range v.Safety {
			safety[s.Server+"/"+s.Scenario] = append(safety[s.Server+"/"+s.Scenario], s)
		}
	}
	for _, g := range r.Results.Scenarios {
		key := g.Server + "/" + g.Suite
		js := bySuite[key]
		if js == nil {
			js = &junitSuite{Name: tl(key)}
			bySuite[key] = js
			order = append(order, key)
		}
		tc := junitCase{Name: tl(g.Scenario), Classname: tl(g.Server + "." + g.Suite)}
		tc.SystemOut = fmt.Sprintf("task success %d/%d, pass^k %s, safety failures %d, gate-absent writes %d", g.Successes, g.Runs, passHat(g), g.SafetyFailures, g.GateAbsentWrites)
		switch {
		case len(safety[g.Server+"/"+g.Scenario]) > 0:
			var lines []string
			for _, s := range safety[g.Server+"/"+g.Scenario] {
				lines = append(lines, fmt.Sprintf("run %d: %s: %s", s.RunIndex, tl(s.Rule), tl(s.Detail)))
			}
			tc.Failure = &junitMessage{Type: "safety", Message: lines[0], Text: strings.Join(lines, "\n")}
		case g.Absent:
			tc.Skipped = &junitMessage{Message: "absent: the server has no tool for this scenario"}
		case broke[g.Scenario]:
			lines := []string{"broke: passed in the baseline, fails now"}
			for _, x := range regs[g.Scenario] {
				lines = append(lines, fmt.Sprintf("%s: %s -> %s (%s)", tl(string(x.Metric)), formatValue(x.Metric, x.Before), formatValue(x.Metric, x.After), tl(x.Reason)))
			}
			tc.Failure = &junitMessage{Type: "broke", Message: lines[0], Text: strings.Join(lines, "\n")}
		case g.Runs == 0 && g.Stale > 0:
			tc.Skipped = &junitMessage{Message: fmt.Sprintf("stale: %d run(s) stopped at a replay miss", g.Stale)}
		case g.Runs == 0 && g.RecordedErrors > 0:
			tc.Skipped = &junitMessage{Message: fmt.Sprintf("recorded errors: %d run(s) whose recording ended in an error", g.RecordedErrors)}
		}
		js.Tests++
		if tc.Failure != nil {
			js.Failures++
		}
		if tc.Skipped != nil {
			js.Skipped++
		}
		js.Cases = append(js.Cases, tc)
	}
	// The gate's own decision, one test case: the stage's floors and
	// regression rows (scenario cases say where a change came from).
	if v := r.Verdict; v != nil {
		js := &junitSuite{Name: "gate", Tests: 1}
		tc := junitCase{Name: "stage gate", Classname: "bench.gate", SystemOut: fmt.Sprintf("verdict %s, exit %d", v.Status, v.ExitCode)}
		if v.Status != StatusPass {
			var lines []string
			for _, reason := range v.Reasons {
				lines = append(lines, tl(reason))
			}
			for _, x := range regs["(stage)"] {
				if x.Gating {
					lines = append(lines, fmt.Sprintf("%s: %s -> %s (%s)", tl(string(x.Metric)), formatValue(x.Metric, x.Before), formatValue(x.Metric, x.After), tl(x.Reason)))
				}
			}
			if len(lines) == 0 {
				lines = []string{string(v.Status)}
			}
			tc.Failure = &junitMessage{Type: string(v.Status), Message: lines[0], Text: strings.Join(lines, "\n")}
			js.Failures = 1
		}
		js.Cases = []junitCase{tc}
		bySuite["\x00gate"] = js
		order = append(order, "\x00gate")
	}
	// The warnings (too few runs) go with the gate's suite, or with the
	// first suite of a report that has no verdict.
	if len(r.Warnings) > 0 && len(order) > 0 {
		lines := make([]string, len(r.Warnings))
		for i, w := range r.Warnings {
			lines[i] = "warning: " + tl(w)
		}
		js := bySuite[order[len(order)-1]]
		if r.Verdict == nil {
			js = bySuite[order[0]]
		}
		js.SystemOut = strings.Join(lines, "\n")
	}
	for _, k := range order {
		js := bySuite[k]
		root.Tests += js.Tests
		root.Failures += js.Failures
		root.Skipped += js.Skipped
		root.Suites = append(root.Suites, *js)
	}
	if _, err := io.WriteString(w, xml.Header); err != nil {
		return err
	}
	enc := xml.NewEncoder(w)
	enc.Indent("", "  ")
	if err := enc.Encode(root); err != nil {
		return fmt.Errorf("encoding JUnit: %w", err)
	}
	_, err := io.WriteString(w, "\n")
	return err
}

// isolations names how the report's servers were confined, each way once.
func isolations(servers []ServerMeta) string {
	var out []string
	for _, s := range servers {
		if s.Isolation != "" && !slices.Contains(out, s.Isolation) {
			out = append(out, s.Isolation)
		}
	}
	slices.Sort(out)
	return strings.Join(out, ", ")
}
