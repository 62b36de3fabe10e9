package main

import (
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"slices"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/spf13/cobra"

	"github.com/mcpbench/bench/internal/escape"
	"github.com/mcpbench/bench/traces"
)

type tracesShowOptions struct {
	target string
	json   bool
	full   bool
}

func newTracesShowCmd(a *app) *cobra.Command {
	opts := &tracesShowOptions{}
	cmd := &cobra.Command{
		Use:   "show REF|RUN-ID|PREFIX",
		Short: "Show runs: manifest, model turns, tool calls, HTTP calls and outcome",
		Long: `Show prints one block per run: the manifest, then every event in order:
model turns (tokens, latency, the tool calls the model asked for, and each
attempt of the turn that failed and was retried), MCP tool
calls (arguments, result size, errors), the HTTP calls the fake Central
served (attributed to the tool call in flight; boot calls marked), and the
answer. What the server profile's normalize rules replaced before the run
was hashed (the time a server printed, say) is stored with the event and
shown under it as placeholder=original (docs/clock.md). --json prints the
runs exactly as stored.

Every row's time counts from the run's start, and rows are printed in time
order: a tool call's HTTP calls come right after it. (A run recorded
before 2026-12-02 counted its HTTP calls from the fake Central's own start;
show moves them by the least that puts none before its tool call, and says
by how much.) A turn's tokens are the turn's own usage, the figures every
report counts, marked "estimated" where bench counted them for a model that
reports none; the response's own usage block is left out of its preview.`,
		Example: `  bench traces show golden/reference/baseline/client-diagnosis-001/0
  bench traces show 3fa9c1 --json`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.target = args[0]
			return runTracesShow(cmd.Context(), a, opts)
		},
	}
	cmd.Flags().BoolVar(&opts.json, "json", false, "print the runs as JSON")
	cmd.Flags().BoolVar(&opts.full, "full", false, "print payloads in full instead of abbreviated")
	return cmd
}

func runTracesShow(_ context.Context, a *app, opts *tracesShowOptions) error {
	s, err := openStoreRead(a)
	if err != nil {
		return err
	}
	defer s.Close()
	refs, err := resolveRuns(s, opts.target)
	if err != nil {
		return err
	}
	type shown struct {
		Ref string      `json:"ref"`
		Run *traces.Run `json:"run"`
		ID  string      `json:"run_id"`
	}
	var out []shown
	for _, r := range refs {
		run, err := s.GetRun(r.Run)
		if err != nil {
			return err
		}
		out = append(out, shown{Ref: r.Name, Run: run, ID: r.Run.String()})
	}
	if opts.json {
		enc := json.NewEncoder(a.stdout)
		enc.SetIndent("", "  ")
		return enc.Encode(out)
	}
	for i, sh := range out {
		if i > 0 {
			fmt.Fprintln(a.stdout)
		}
		printRun(a.stdout, sh.Ref, sh.Run, opts.full)
	}
	return nil
}

// printRun prints a run for a terminal. A run holds what a server said
// and may come from a pack anyone made: every string in it is shown
// through escape.Line (show, abbreviate), one line each, its control
// characters written out.
func printRun(w io.Writer, ref string, run *traces.Run, full bool) {
	show := escape.Line
	m := run.Manifest
	fmt.Fprintf(w, "run %s  %s\n", m.RunID.Short(), show(ref))
	fmt.Fprintf(w, "  scenario %s  server %s", show(m.Scenario.ID), show(m.Server.Name))
	if m.Server.SHA != "" {
		fmt.Fprintf(w, "@%s", show(fmt.Sprintf("%.12s", m.Server.SHA)))
	}
	fmt.Fprintf(w, "  model %s  seed %d  run %d\n", show(m.Model.Name), m.Model.Seed, m.RunIndex)
	fmt.Fprintf(w, "  mode %s", show(string(m.Mode)))
	if m.Replays != nil {
		fmt.Fprintf(w, " of %s", m.Replays.Short())
	}
	fmt.Fprintf(w, "  fixture %s", show(m.Fixture.Name))
	if !m.StartedAt.IsZero() {
		fmt.Fprintf(w, "  started %s", m.StartedAt.UTC().Format(time.RFC3339))
	}
	fmt.Fprintf(w, "  outcome %s\n", show(orDash(string(m.Outcome))))
	at, shift := run.Times()
	var rows []showRow
	var in, out int
	for i, e := range run.Events {
		var b strings.Builder
		w := &b
		switch e.Kind {
		case traces.KindInitialize:
			fmt.Fprintf(w, "initialize  protocol %s  server %s\n", show(e.Initialize.ProtocolVersion), abbreviate(string(e.Initialize.ServerInfo), 80, full))
		case traces.KindTools:
			var tools []json.RawMessage
			json.Unmarshal(e.Tools.Tools, &tools)
			fmt.Fprintf(w, "tools       %d tools, %d bytes of definitions\n", len(tools), len(e.Tools.Tools))
		case traces.KindTurn:
			t := e.Turn
			in += t.Usage.Input
			out += t.Usage.Output
			fmt.Fprintf(w, "turn %-2d     %s, %s  %s\n", t.Index, usageText(t.Usage), fmtUS(t.LatencyUS), abbreviate(responsePreview(t.Response), 100, full))
			printRetries(w, t, full)
		case traces.KindCall:
			c := e.Call
			status := "ok"
			switch {
			case c.Invalid != "":
				status = "invalid: " + show(c.Invalid)
			case c.IsError:
				status = "tool error"
			}
			fmt.Fprintf(w, "call %-2d     %s %s -> %s, %d bytes, %s\n", c.Index, show(c.Tool), abbreviate(string(c.Arguments), 80, full), status, len(c.Result), fmtUS(c.LatencyUS))
		case traces.KindElicitation:
			fmt.Fprintf(w, "elicit      call %d: %q -> %s\n", e.Elicitation.Call, e.Elicitation.Message, show(e.Elicitation.Action))
		case traces.KindHTTP:
			h := e.HTTP
			where := fmt.Sprintf("call %d", h.Call)
			if h.Boot {
				where = "boot"
			}
			path := h.Path
			if h.Query != "" {
				path += "?" + h.Query
			}
			fmt.Fprintf(w, "http        %-7s %s %s -> %d (%s, %d bytes, %s)\n", where, show(h.Method), show(path), h.Status, show(h.Class), len(h.ResponseBody), fmtUS(h.LatencyUS))
		case traces.KindEgress:
			fmt.Fprintf(w, "EGRESS      call %d tried to reach %s (blocked)\n", e.Egress.Call, show(e.Egress.Host))
		case traces.KindAnswer:
			if len(e.Answer.Result) > 0 {
				fmt.Fprintf(w, "answer      %s\n", abbreviate(string(e.Answer.Result), 200, full))
			} else {
				fmt.Fprintf(w, "answer      %s\n", abbreviate(e.Answer.Text, 200, full))
			}
		case traces.KindError:
			fmt.Fprintf(w, "ERROR       %s: %s\n", show(string(e.Error.Kind)), show(e.Error.Message))
		default:
			fmt.Fprintf(w, "%s\n", show(string(e.Kind)))
		}
		if len(e.Normalized) > 0 {
			fmt.Fprintf(w, "  %8s  %s\n", "", normalizedLine(e.Normalized, full))
		}
		rows = append(rows, showRow{at: at[i], text: b.String()})
	}
	// One origin, in time order: a tool call's HTTP rows come after it,
	// not where the journal was appended (a stable sort keeps the trace's
	// order between rows of the same time).
	slices.SortStableFunc(rows, func(a, b showRow) int { return cmp.Compare(a.at, b.at) })
	if shift > 0 {
		fmt.Fprintf(w, "  %8s  (http times moved %s later: this run's fake Central counted from its own start, after the run's)\n", "", fmtUS(shift))
	}
	for _, r := range rows {
		fmt.Fprintf(w, "  %8s  %s", fmtUS(r.at), r.text)
	}
	fmt.Fprintf(w, "  tokens %d in / %d out\n", in, out)
}

// showRow is one event of a run as show prints it: its time on the run's
// origin and its lines.
type showRow struct {
	at   int64
	text string
}

// usageText is a turn's tokens as the turn recorded them (Turn.Usage, the
// one source that scoring and reports count), marked when bench estimated
// them for a model that reports none.
func usageText(u traces.Usage) string {
	s := fmt.Sprintf("%d in / %d out tokens", u.Input, u.Output)
	if u.Cached > 0 {
		s += fmt.Sprintf(" (%d cached)", u.Cached)
	}
	if u.Estimated {
		s += " (estimated)"
	}
	return s
}

// responsePreview is a turn's response without the provider's own usage
// block: the turn's usage is shown beside it, and an offline model's
// response reports 0 tokens where bench estimated them.
func responsePreview(resp json.RawMessage) string {
	var m map[string]json.RawMessage
	if json.Unmarshal(resp, &m) != nil || m["usage"] == nil {
		return string(resp)
	}
	delete(m, "usage")
	var b strings.Builder
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false) // as stored: canonical JSON escapes no <, > or &
	if enc.Encode(m) != nil {
		return string(resp)
	}
	return strings.TrimSuffix(b.String(), "\n")
}

// printRetries prints the attempts of a turn that failed and were retried,
// under it: what the provider answered, the wait it asked for and the wait
// bench made. A run stored before they were kept says how many there were.
func printRetries(w io.Writer, t *traces.Turn, full bool) {
	if len(t.Retries) == 0 && t.Attempts > 1 {
		fmt.Fprintf(w, "  %8s  retried     answered at attempt %d\n", "", t.Attempts)
	}
	for _, r := range t.Retries {
		what := "no answer"
		if r.Status != 0 {
			what = fmt.Sprintf("HTTP %d", r.Status)
		}
		if r.RetryAfterUS > 0 {
			what += ", asked to wait " + fmtUS(r.RetryAfterUS)
		}
		fmt.Fprintf(w, "  %8s  retried     attempt %d: %s; waited %s: %s\n", "", r.Attempt, what, fmtUS(r.WaitUS), abbreviate(r.Error, 160, full))
	}
}

func fmtUS(us int64) string {
	return (time.Duration(us) * time.Microsecond).Round(100 * time.Microsecond).String()
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

// abbreviate shortens s to n characters with an ellipsis unless full is
// set, and shows it on one line (escape.Line).
func abbreviate(s string, n int, full bool) string {
	if !full {
		i := 0
		for k := 0; k < n && i < len(s); k++ {
			_, size := utf8.DecodeRuneInString(s[i:])
			i += size
		}
		if i < len(s) {
			s = s[:i] + "…"
		}
	}
	return escape.Line(s)
}
