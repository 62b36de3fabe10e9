package scoring

import (
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"

	"github.com/mcpbench/bench/internal/escape"
	"github.com/mcpbench/bench/traces"
)

// RunStep is one comparable line of a run: a model turn's choices, a tool
// call with its arguments and result, an HTTP call, an elicitation, an
// egress attempt, the answer or an error. Timings and token counts are left
// out: they differ between any two runs and say nothing about behaviour.
type RunStep struct {
	Kind string `json:"kind"`
	Text string `json:"text"`
}

// StepPair aligns step i of both runs.
type StepPair struct {
	A    *RunStep `json:"a,omitempty"`
	B    *RunStep `json:"b,omitempty"`
	Same bool     `json:"same"`
}

// RunDiff is the turn-by-turn comparison of two runs of one scenario.
type RunDiff struct {
	Scenario string     `json:"scenario"`
	A        string     `json:"a"`
	B        string     `json:"b"`
	Steps    []StepPair `json:"steps"`
	// FirstDivergence is the index of the first differing step, -1 when
	// the runs behave identically.
	FirstDivergence int `json:"first_divergence"`
}

// maxPayload bounds a payload printed in a step; longer payloads keep their
// start and end and show their content hash, so a difference anywhere shows.
const maxPayload = 240

func payload(b []byte) string {
	if len(b) == 0 {
		return "-"
	}
	s := string(b)
	if c, err := traces.Canonical(b); err == nil {
		s = string(c)
	}
	if len(s) <= maxPayload {
		return s
	}
	return fmt.Sprintf("%s…%s (%d bytes, sha256:%s)", s[:maxPayload/2], s[len(s)-maxPayload/4:], len(s), traces.Hash([]byte(s)).Short())
}

// Steps lists the comparable steps of a run, in order.
func Steps(run *traces.Run) []RunStep {
	var out []RunStep
	for _, e := range run.Events {
		switch e.Kind {
		case traces.KindTools:
			var tools []struct {
				Name string `json:"name"`
			}
			json.Unmarshal(e.Tools.Tools, &tools)
			names := make([]string, len(tools))
			for i, t := range tools {
				names[i] = t.Name
			}
			out = append(out, RunStep{"tools", fmt.Sprintf("%d tools: %s (sha256:%s)", len(tools), strings.Join(names, ", "), traces.Hash(e.Tools.Tools).Short())})
		case traces.KindTurn:
			var resp struct {
				Text      string `json:"text"`
				ToolCalls []struct {
					Name      string          `json:"name"`
					Arguments json.RawMessage `json:"arguments"`
				} `json:"tool_calls"`
			}
			json.Unmarshal(e.Turn.Response, &resp)
			var parts []string
			for _, tc := range resp.ToolCalls {
				parts = append(parts, tc.Name+" "+payload(tc.Arguments))
			}
			if resp.Text != "" {
				parts = append(parts, fmt.Sprintf("text %q", truncate(resp.Text, maxPayload)))
			}
			if len(parts) == 0 {
				parts = append(parts, "(no tool call, no text)")
			}
			out = append(out, RunStep{"turn", fmt.Sprintf("turn %d: %s", e.Turn.Index, strings.Join(parts, "; "))})
		case traces.KindCall:
			c := e.Call
			status := ""
			switch {
			case c.Invalid != "":
				status = " [invalid: " + c.Invalid + "]"
			case c.IsError:
				status = " [tool error]"
			}
			out = append(out, RunStep{"call", fmt.Sprintf("call %d: %s %s -> %s%s", c.Index, c.Tool, payload(c.Arguments), payload(c.Result), status)})
		case traces.KindHTTP:
			h := e.HTTP
			where := fmt.Sprintf("call %d", h.Call)
			if h.Boot {
				where = "boot"
			}
			p := h.Path
			if h.Query != "" {
				p += "?" + h.Query
			}
			out = append(out, RunStep{"http", fmt.Sprintf("http (%s): %s %s -> %d %s", where, h.Method, p, h.Status, h.Class)})
		case traces.KindElicitation:
			out = append(out, RunStep{"elicitation", fmt.Sprintf("elicitation (call %d): %q -> %s", e.Elicitation.Call, e.Elicitation.Message, e.Elicitation.Action)})
		case traces.KindEgress:
			out = append(out, RunStep{"egress", fmt.Sprintf("egress (call %d): %s", e.Egress.Call, e.Egress.Host)})
		case traces.KindAnswer:
			a := e.Answer
			if len(a.Result) > 0 {
				out = append(out, RunStep{"answer", "answer: " + payload(a.Result)})
			} else {
				out = append(out, RunStep{"answer", fmt.Sprintf("answer: %q", truncate(a.Text, maxPayload))})
			}
		case traces.KindError:
			out = append(out, RunStep{"error", fmt.Sprintf("error %s: %s", e.Error.Kind, e.Error.Message)})
		}
	}
	return out
}

func truncate(s string, n int) string {
	r := []rune(s)
	if len(r) <= n {
		return s
	}
	return string(r[:n]) + "…"
}

// DiffRuns compares two runs step by step. Steps are aligned on their
// longest common subsequence, so an inserted HTTP call shows as one added
// line rather than shifting everything after it.
func DiffRuns(a, b *traces.Run) *RunDiff {
	d := &RunDiff{Scenario: a.Manifest.Scenario.ID, A: runLabel(a), B: runLabel(b), FirstDivergence: -1}
	sa, sb := Steps(a), Steps(b)
	n, m := len(sa), len(sb)
	// lcs[i][j] is the LCS length of sa[i:] and sb[j:].
	lcs := make([][]int, n+1)
	for i := range lcs {
		lcs[i] = make([]int, m+1)
	}
	for i := n - 1; i >= 0; i-- {
		for j := m - 1; j >= 0; j-- {
			if sa[i] == sb[j] {
				lcs[i][j] = lcs[i+1][j+1] + 1
			} else {
				lcs[i][j] = max(lcs[i+1][j], lcs[i][j+1])
			}
		}
	}
	add := func(p StepPair) {
		if !p.Same && d.FirstDivergence < 0 {
			d.FirstDivergence = len(d.Steps)
		}
		d.Steps = append(d.Steps, p)
	}
	i, j := 0, 0
	for i < n || j < m {
		switch {
		case i < n && j < m && sa[i] == sb[j]:
			add(StepPair{A: &sa[i], B: &sb[j], Same: true})
			i++
			j++
		case i < n && (j == m || lcs[i+1][j] >= lcs[i][j+1]):
			add(StepPair{A: &sa[i]})
			i++
		default:
			add(StepPair{B: &sb[j]})
			j++
		}
	}
	return d
}

func runLabel(r *traces.Run) string {
	m := r.Manifest
	s := fmt.Sprintf("%s/%s run %d", m.Server.Name, m.Model.Name, m.RunIndex)
	if !m.RunID.IsZero() {
		s += " (" + m.RunID.Short() + ")"
	}
	return s
}

// WriteRunDiffText prints a RunDiff: identical steps with "  ", differing
// ones as "- " (A) and "+ " (B), the first divergence marked. Each step is
// one line: what a server said in it is written out (escape.Line).
func WriteRunDiffText(w io.Writer, d *RunDiff) error {
	var b strings.Builder
	fmt.Fprintf(&b, "scenario %s\n--- A %s\n+++ B %s\n", tl(d.Scenario), tl(d.A), tl(d.B))
	if d.FirstDivergence < 0 {
		b.WriteString("the runs behave identically\n")
	}
	for i, p := range d.Steps {
		if i == d.FirstDivergence {
			fmt.Fprintf(&b, ">>> first divergence at step %d\n", i)
		}
		switch {
		case p.Same:
			fmt.Fprintf(&b, "  %s\n", tl(p.A.Text))
		default:
			if p.A != nil {
				fmt.Fprintf(&b, "- %s\n", tl(p.A.Text))
			}
			if p.B != nil {
				fmt.Fprintf(&b, "+ %s\n", tl(p.B.Text))
			}
		}
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// WriteRunDiffMarkdown prints a RunDiff as a diff code block, fenced past
// any run of backticks in it.
func WriteRunDiffMarkdown(w io.Writer, d *RunDiff) error {
	var b strings.Builder
	fmt.Fprintf(&b, "### %s: A %s vs B %s\n\n", md(d.Scenario), md(d.A), md(d.B))
	if d.FirstDivergence < 0 {
		b.WriteString("The runs behave identically.\n\n")
	} else {
		fmt.Fprintf(&b, "First divergence at step %d.\n\n", d.FirstDivergence)
	}
	var t strings.Builder
	if err := WriteRunDiffText(&t, d); err != nil {
		return err
	}
	fence := escape.Fence(t.String())
	b.WriteString(fence + "diff\n" + t.String() + fence + "\n")
	_, err := io.WriteString(w, b.String())
	return err
}

// WriteComparisonText prints a comparison for `bench diff`: the suite
// deltas, then each scenario with its changed metrics, regressions and
// improvements first.
func WriteComparisonText(w io.Writer, c *Comparison) error {
	var b strings.Builder
	fmt.Fprintf(&b, "A = %s, B = %s: %d paired scenarios\n", tl(c.Baseline), tl(c.Current), c.Paired)
	tw := tabwriter.NewWriter(&b, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "\nSCENARIO\tSTATUS\tMETRIC\tA\tB\tCHANGE")
	for _, sd := range c.Scenarios {
		changed := false
		for _, d := range sd.Deltas {
			if d.Change == Unchanged {
				continue
			}
			changed = true
			fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s (p=%.3g)\n", tl(sd.Scenario), tl(string(sd.Status)), tl(string(d.Metric)), formatValue(d.Metric, d.Before), formatValue(d.Metric, d.After), tl(string(d.Change)), d.P)
		}
		if !changed {
			fmt.Fprintf(tw, "%s\t%s\t\t\t\t\n", tl(sd.Scenario), tl(string(sd.Status)))
		}
	}
	fmt.Fprintln(tw, "\nSUITE METRIC\tA\tB\tDELTA\t95% CI\tP\tVERDICT")
	for _, d := range c.Suite {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%+.4g\t%s\t%.3g\t%s\n", tl(string(d.Metric)), formatValue(d.Metric, d.Before), formatValue(d.Metric, d.After), d.Diff, ci(d), d.P, tl(string(d.Change)))
	}
	fmt.Fprintf(tw, "McNemar exact (task success; reported)\t\t\t\t\tp=%.3g\t%d broke, %d fixed\n", c.McNemar.P, c.McNemar.Broke, c.McNemar.Fixed)
	fmt.Fprintf(tw, "broke: %s\nfixed: %s\n", tlList(c.Broke), tlList(c.Fixed))
	tw.Flush()
	_, err := io.WriteString(w, b.String())
	return err
}

// WriteComparisonMarkdown is WriteComparisonText for Markdown.
func WriteComparisonMarkdown(w io.Writer, c *Comparison) error {
	var b strings.Builder
	fmt.Fprintf(&b, "## bench diff: A = %s, B = %s (%d paired scenarios)\n\n", md(c.Baseline), md(c.Current), c.Paired)
	b.WriteString("| scenario | status | metric | A | B | change |\n|---|---|---|---|---|---|\n")
	for _, sd := range c.Scenarios {
		changed := false
		for _, d := range sd.Deltas {
			if d.Change == Unchanged {
				continue
			}
			changed = true
			fmt.Fprintf(&b, "| %s | %s | %s | %s | %s | %s (p=%.3g) |\n", md(sd.Scenario), md(string(sd.Status)), md(string(d.Metric)), formatValue(d.Metric, d.Before), formatValue(d.Metric, d.After), md(string(d.Change)), d.P)
		}
		if !changed {
			fmt.Fprintf(&b, "| %s | %s | | | | |\n", md(sd.Scenario), md(string(sd.Status)))
		}
	}
	b.WriteString("\n")
	writeSuiteDeltasMD(&b, c)
	fmt.Fprintf(&b, "\n<sub>bootstrap seed %d, %d resamples, alpha %g</sub>\n", c.Seed, c.Resamples, c.Alpha)
	_, err := io.WriteString(w, b.String())
	return err
}
