package scoring

import (
	"fmt"
	"slices"
	"strings"
)

// JudgeReport is what one LLM judge, under one setting, said of a report's
// runs. Its scores are shown beside the rule-based metrics only when the
// judge's stored calibration passes the bar (Shown); otherwise the report
// says why they are left out. Task success never depends on them.
type JudgeReport struct {
	// Model is the judge's model, Config its samples, temperature, seed
	// and rubric.
	Model  string `json:"model"`
	Config string `json:"config"`
	// Kappa is the pass verdict's Cohen's kappa of the judge's stored
	// calibration under Config (bench judge calibrate) over Calibrated
	// labelled runs; nil when it has none.
	Kappa      *float64 `json:"kappa,omitempty"`
	Calibrated int      `json:"calibrated_runs,omitempty"`
	MinKappa   float64  `json:"min_kappa"`
	Shown      bool     `json:"shown"`
	// Reason says why the scores are not shown.
	Reason string `json:"reason,omitempty"`
	// Judged counts the report's runs with a valid judgement; Unjudged
	// the others (none, stale: of another recording, or failed).
	Judged   int        `json:"judged"`
	Unjudged int        `json:"unjudged"`
	Rows     []JudgeRow `json:"rows,omitempty"`
}

// JudgeRow is one server's judge scores, over its judged runs, beside the
// rule-based task success of the same runs.
type JudgeRow struct {
	Server string `json:"server"`
	Runs   int    `json:"runs"`
	// JudgePass is the share of runs the judge passes (correctness 2 and
	// compliance 2); TaskSuccess the rule-based share of the same runs;
	// Agreement the share of runs where the two say the same.
	JudgePass   float64 `json:"judge_pass"`
	TaskSuccess float64 `json:"task_success"`
	Agreement   float64 `json:"agreement"`
	// The judge's mean score per dimension, 0-2.
	Correctness float64 `json:"correctness"`
	ToolUse     float64 `json:"tool_use"`
	Compliance  float64 `json:"compliance"`
}

// JudgeRows accumulates judged runs into rows per server.
type JudgeRows struct {
	acc map[string]*JudgeRow
}

// Add counts one judged run of server.
func (j *JudgeRows) Add(server string, taskSuccess bool, s JudgeScores) {
	if j.acc == nil {
		j.acc = map[string]*JudgeRow{}
	}
	r := j.acc[server]
	if r == nil {
		r = &JudgeRow{Server: server}
		j.acc[server] = r
	}
	r.Runs++
	r.JudgePass += b2f(s.Pass())
	r.TaskSuccess += b2f(taskSuccess)
	r.Agreement += b2f(s.Pass() == taskSuccess)
	r.Correctness += float64(s.Correctness)
	r.ToolUse += float64(s.ToolUse)
	r.Compliance += float64(s.Compliance)
}

// Rows returns the rows, sorted by server, sums turned into means.
func (j *JudgeRows) Rows() []JudgeRow {
	var out []JudgeRow
	for _, r := range j.acc {
		n := float64(r.Runs)
		out = append(out, JudgeRow{Server: r.Server, Runs: r.Runs,
			JudgePass: round(r.JudgePass / n), TaskSuccess: round(r.TaskSuccess / n), Agreement: round(r.Agreement / n),
			Correctness: round(r.Correctness / n), ToolUse: round(r.ToolUse / n), Compliance: round(r.Compliance / n)})
	}
	slices.SortFunc(out, func(a, b JudgeRow) int { return strings.Compare(a.Server, b.Server) })
	return out
}

// judgeHeading names a judge and its calibration.
func judgeHeading(j *JudgeReport) string {
	cal := "not calibrated"
	if j.Kappa != nil {
		cal = fmt.Sprintf("kappa %.3f over %d labelled runs, bar %.2f", *j.Kappa, j.Calibrated, j.MinKappa)
	}
	return fmt.Sprintf("judge %s (%s; %s)", j.Model, j.Config, cal)
}

func writeJudgesText(b *strings.Builder, js []JudgeReport) {
	for i := range js {
		j := &js[i]
		fmt.Fprintf(b, "\nJUDGE SCORES: %s\n", tl(judgeHeading(j)))
		if !j.Shown {
			fmt.Fprintf(b, "  not shown: %s (%d run(s) judged, %d not)\n", tl(j.Reason), j.Judged, j.Unjudged)
			continue
		}
		fmt.Fprintf(b, "  %d run(s) judged, %d not; the judge's scores, not the rule-based ones, except TASK\n", j.Judged, j.Unjudged)
		fmt.Fprintf(b, "  %-24s %5s %11s %6s %9s %12s %9s %11s\n", "SERVER", "RUNS", "JUDGE_PASS", "TASK", "AGREE", "CORRECTNESS", "TOOL_USE", "COMPLIANCE")
		for _, r := range j.Rows {
			fmt.Fprintf(b, "  %-24s %5d %11s %6s %9s %12.2f %9.2f %11.2f\n", tl(r.Server), r.Runs, pct(r.JudgePass), pct(r.TaskSuccess), pct(r.Agreement), r.Correctness, r.ToolUse, r.Compliance)
		}
	}
}

// writeJudgesMD writes the judge sections of a Markdown report or a
// results page.
func writeJudgesMD(b *strings.Builder, js []JudgeReport) {
	for i := range js {
		j := &js[i]
		fmt.Fprintf(b, "\n### Judge scores: %s\n\n", md(judgeHeading(j)))
		if !j.Shown {
			fmt.Fprintf(b, "Not shown: %s (%d run(s) judged, %d not). Task success never depends on the judge.\n", md(j.Reason), j.Judged, j.Unjudged)
			continue
		}
		fmt.Fprintf(b, "Scores of the LLM judge, beside the rule-based task success of the same runs (%d judged, %d not). Task success never depends on the judge.\n\n", j.Judged, j.Unjudged)
		b.WriteString("| server | runs | judge pass | task success (rules) | agreement | correctness | tool use | compliance |\n|---|---|---|---|---|---|---|---|\n")
		for _, r := range j.Rows {
			fmt.Fprintf(b, "| %s | %d | %s | %s | %s | %.2f | %.2f | %.2f |\n", md(r.Server), r.Runs, pct(r.JudgePass), pct(r.TaskSuccess), pct(r.Agreement), r.Correctness, r.ToolUse, r.Compliance)
		}
	}
}
