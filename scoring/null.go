package scoring

import "encoding/json"

// A JSON report never writes 0 for what was not measured: a dashboard
// reads 0 as 0%. A summary of no value, the rates of a suite with no
// scenario the server covers, the pass figures of a scenario with no
// scored run are null, and the suite or scenario says why ("absent": the
// server has no tool for it; "unscored": every run was stale or a recorded
// error). Reading a report back (ReadReport) takes null as 0 with the
// counts that explain it.

// MarshalJSON writes null for a summary of no value.
func (s Summary) MarshalJSON() ([]byte, error) {
	if s.N == 0 {
		return []byte("null"), nil
	}
	type plain Summary
	return json.Marshal(plain(s))
}

// MarshalJSON writes the rates of a suite with no covered scenario, or no
// scored run, as null, and says which.
func (s SuiteSummary) MarshalJSON() ([]byte, error) {
	type plain SuiteSummary
	if s.Scenarios > 0 && s.Runs > 0 {
		return json.Marshal(plain(s))
	}
	status := "absent"
	if s.Scenarios > 0 {
		status = "unscored"
	}
	return json.Marshal(struct {
		plain
		Status            string   `json:"status"`
		TaskSuccessRate   *float64 `json:"task_success_rate"`
		ToolSelectionRate *float64 `json:"tool_selection_accuracy"`
		ParamAccuracy     *float64 `json:"param_accuracy"`
		ParamAllMatchRate *float64 `json:"param_all_match_rate"`
		InvalidCallRate   *float64 `json:"invalid_call_rate"`
		APICallExcess     *float64 `json:"api_call_excess"`
	}{plain: plain(s), Status: status})
}

// MarshalJSON writes the pass figures of a scenario with no scored run
// (absent, or every run stale or a recorded error) as null.
func (g ScenarioResult) MarshalJSON() ([]byte, error) {
	type plain ScenarioResult
	if g.Runs > 0 {
		return json.Marshal(plain(g))
	}
	status := "unscored"
	if g.Absent {
		status = "absent"
	}
	return json.Marshal(struct {
		plain
		Status    string   `json:"status"`
		Successes *int     `json:"successes"`
		Pass      *bool    `json:"pass"`
		PassAtK   *float64 `json:"pass_at_k"`
		PassHatK  *float64 `json:"pass_hat_k"`
	}{plain: plain(g), Status: status})
}
