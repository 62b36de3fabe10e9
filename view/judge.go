package view

import (
	"errors"
	"fmt"
	"strings"

	"github.com/mcpbench/bench/judge"
	"github.com/mcpbench/bench/scoring"
	"github.com/mcpbench/bench/traces"
)

// TimelineJudgement is an LLM judge's grading of the run (bench judge
// run), with whether bench report would show it: only when the judge's
// calibration stored for the same setting reaches judge.DefaultMinKappa.
type TimelineJudgement struct {
	Judgement   string `json:"judgement"` // the judgement's run ID
	Model       string `json:"model"`
	Setting     string `json:"setting"`
	Answered    bool   `json:"answered"` // false: no sample was rubric JSON, or the judge failed
	Pass        bool   `json:"pass"`
	Correctness int    `json:"correctness"`
	ToolUse     int    `json:"tool_use"`
	Compliance  int    `json:"compliance"`
	Reason      string `json:"reason,omitempty"`
	Samples     int    `json:"samples"`
	Invalid     int    `json:"invalid"`
	// Kappa is the stored calibration's pass kappa, nil when there is
	// none; Trusted says it reaches the bar; Why says why not.
	Kappa   *float64 `json:"kappa,omitempty"`
	Trusted bool     `json:"trusted"`
	Why     string   `json:"why,omitempty"`
}

// calibration is a judge's stored calibration under one setting, or why
// there is none.
type calibration struct {
	kappa *float64
	why   string
}

// judgements lays out the gradings of the run ref names (the refs
// judge/<model>/<ref>), those of another run than id left out.
func (v *View) judgements(ix *index, ref string, id traces.ID) ([]TimelineJudgement, error) {
	var out []TimelineJudgement
	for _, jid := range ix.judged[ref] {
		j, err := ix.store.GetRun(jid)
		if err != nil {
			return nil, err
		}
		if j.Manifest.Grades == nil || *j.Manifest.Grades != id {
			continue // the ref moved to another recording since
		}
		cfg := judge.ConfigOf(j)
		tj := TimelineJudgement{Judgement: jid.String(), Model: line(j.Manifest.Model.Name), Setting: line(cfg.String()), Samples: cfg.Samples}
		if j.Manifest.Outcome == traces.OutcomeAnswered {
			if res, err := scoring.JudgementScores(j); err == nil {
				s := res.Scores
				tj.Answered, tj.Pass, tj.Correctness, tj.ToolUse, tj.Compliance = true, s.Pass(), s.Correctness, s.ToolUse, s.Compliance
				tj.Reason, tj.Invalid = line(s.Reason), res.Invalid
			}
		}
		c, err := v.calibration(ix, j.Manifest.Model.Name, cfg)
		if err != nil {
			return nil, err
		}
		tj.Kappa, tj.Why = c.kappa, c.why
		tj.Trusted = c.why == ""
		out = append(out, tj)
	}
	return out, nil
}

// calibration is the judge model's stored calibration under cfg, read
// once per opening of the store.
func (v *View) calibration(ix *index, model string, cfg judge.Config) (calibration, error) {
	key := model + "\x00" + cfg.String()
	ix.mu.Lock()
	c, ok := ix.cals[key]
	ix.mu.Unlock()
	if ok {
		return c, nil
	}
	st, err := judge.StoredCalibration(ix.store, model, cfg)
	switch {
	case errors.Is(err, judge.ErrUncalibrated):
		c.why = "not calibrated under this setting in this store (bench judge calibrate --model " + model + ")"
	case err != nil:
		return c, err
	default:
		k := st.Calibration.Kappa
		c.kappa = &k
		if k < judge.DefaultMinKappa {
			c.why = fmt.Sprintf("Cohen's kappa %.3f against the labelled runs is below the bar %.2f", k, judge.DefaultMinKappa)
		}
	}
	ix.mu.Lock()
	ix.cals[key] = c
	ix.mu.Unlock()
	return c, nil
}

// judgedRef is the graded ref of a judgement's ref, "" for the
// calibration set's.
func judgedRef(name string) string {
	_, graded, ok := strings.Cut(strings.TrimPrefix(name, traces.JudgeRefPrefix), "/")
	if !ok || strings.HasPrefix(graded, "calibration/") {
		return ""
	}
	return graded
}
