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
		ParamAcc          *float64 `json:"param_acc"`
		ParamFieldAcc     *float64 `json:"param_field_acc"`
		AvgTurns          *float64 `json:"avg_turns"`
		InvalidCallRate   *float64 `json:"invalid_call_rate"`
		APICallCount      *float64 `json:"api_call_count"`
		APICallExcess     *float64 `json:"api_call_excess"`
		OutsideReads      *float64 `json:"outside_reads"`
		ToolDefShare      *float64 `json:"tool_definition_share"`
	}{plain: plain(s), Status: status})
}

// MarshalJSON writes the pass figures of a scenario with no scored run
// (absent, or every run stale or a recorded error) as null, and pass@k and
// pass^k as null when they were refused (fewer runs than k).
func (g ScenarioResult) MarshalJSON() ([]byte, error) {
	type plain ScenarioResult
	if g.Runs > 0 && !g.KRefused {
		return json.Marshal(plain(g))
	}
	if g.Runs > 0 {
		return json.Marshal(struct {
			plain
			PassAtK  *float64 `json:"pass_at_k"`
			PassHatK *float64 `json:"pass_hat_k"`
		}{plain: plain(g)})
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

// UnmarshalJSON reads a run's metrics, from reports of format 3 and of
// formats 1 and 2, which named param_field_acc "param_accuracy" and
// param_acc "params_all_match".
func (rm *RunMetrics) UnmarshalJSON(b []byte) error {
	type plain RunMetrics
	var v struct {
		plain
		OldFieldAcc *float64 `json:"param_accuracy"`
		OldAllMatch *bool    `json:"params_all_match"`
	}
	if err := json.Unmarshal(b, &v); err != nil {
		return err
	}
	*rm = RunMetrics(v.plain)
	if v.OldFieldAcc != nil {
		rm.ParamFieldAcc = *v.OldFieldAcc
	}
	if v.OldAllMatch != nil {
		rm.ParamAcc = *v.OldAllMatch
	}
	return nil
}
