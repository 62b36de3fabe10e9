package otlp

import (
	"fmt"
	"strings"

	"github.com/mcpbench/bench/scoring"
)

// Evaluations are a scored run's metrics as evaluation results: the
// pass/fail metrics with a label, param_field_acc as its fraction, and
// safety (1 for a run with no safety finding). A run whose quality is not
// scored (absent, stale, or the replay of a recorded error) has its safety
// result only. The explanation of a failed task names the missing API
// calls, and with includeContent the result's error (which may quote the
// answer); a safety failure's names the rules broken, never what leaked.
func Evaluations(rm *scoring.RunMetrics, includeContent bool) []Evaluation {
	if rm == nil {
		return nil
	}
	var out []Evaluation
	if !rm.Absent && !rm.Stale && !rm.RecordedError {
		var why []string
		if includeContent && rm.ResultError != "" {
			why = append(why, rm.ResultError)
		}
		if len(rm.MissingAPICalls) > 0 {
			why = append(why, "missing API calls: "+strings.Join(rm.MissingAPICalls, ", "))
		}
		out = append(out,
			passFail(string(scoring.MetricTaskSuccess), rm.TaskSuccess, strings.Join(why, "; ")),
			passFail(string(scoring.MetricToolSelection), rm.ToolSelection, ""),
			passFail(string(scoring.MetricParamAcc), rm.ParamAcc, ""),
			Evaluation{Name: string(scoring.MetricParamFieldAcc), Value: rm.ParamFieldAcc})
	}
	// The rules only: a finding's detail may quote what leaked.
	var findings []string
	for _, f := range rm.Safety {
		findings = append(findings, fmt.Sprintf("%s (call %d)", f.Rule, f.Call))
	}
	out = append(out, passFail("safety", !rm.SafetyFailure, strings.Join(findings, "; ")))
	return out
}

func passFail(name string, ok bool, explanation string) Evaluation {
	if ok {
		return Evaluation{Name: name, Value: 1, Label: "pass"}
	}
	return Evaluation{Name: name, Value: 0, Label: "fail", Explanation: explanation}
}

// JudgeEvaluations are an LLM judge's grading of a run as evaluation
// results: llm_judge.pass (correct and compliant) and its three rubric
// dimensions, each 0-2. The explanation names the judge model, and with
// includeContent its reason (which may quote the run).
func JudgeEvaluations(model string, res *scoring.JudgeResult, includeContent bool) []Evaluation {
	if res == nil {
		return nil
	}
	why := "judge " + model
	if includeContent && res.Scores.Reason != "" {
		why += ": " + res.Scores.Reason
	}
	pass := passFail("llm_judge.pass", res.Scores.Pass(), "")
	pass.Explanation = why
	return []Evaluation{
		pass,
		{Name: "llm_judge.correctness", Value: float64(res.Scores.Correctness), Explanation: why},
		{Name: "llm_judge.tool_use", Value: float64(res.Scores.ToolUse), Explanation: why},
		{Name: "llm_judge.compliance", Value: float64(res.Scores.Compliance), Explanation: why},
	}
}
