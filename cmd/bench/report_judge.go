package main

import (
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/mcpbench/bench/judge"
	"github.com/mcpbench/bench/scoring"
	"github.com/mcpbench/bench/traces"
)

// judgedRun is what the judge section of a report needs of a scored run.
type judgedRun struct {
	ref     string
	id      traces.ID
	server  string
	success bool
}

// judgeReports gathers the judgements of runs in s (judge/<model>/<ref>,
// bench judge run), one report per judge model and setting that judged
// any of them. A judgement of another recording than the ref's run, or
// one that failed, leaves its run unjudged. Scores are shown only for a
// judge whose stored calibration under the same setting reaches minKappa.
func judgeReports(s *traces.Store, runs []judgedRun, minKappa float64) ([]scoring.JudgeReport, error) {
	byModel, err := judgeRefIndex(s)
	if err != nil || len(byModel) == 0 {
		return nil, err
	}
	var out []scoring.JudgeReport
	for _, seg := range slices.Sorted(maps.Keys(byModel)) {
		type acc struct {
			model  string
			rows   scoring.JudgeRows
			judged int
		}
		byCfg := map[judge.Config]*acc{}
		for _, run := range runs {
			jid, ok := byModel[seg][run.ref]
			if !ok {
				continue
			}
			j, res, err := judgementOf(s, jid, run.id)
			if err != nil {
				return nil, err
			}
			if res == nil {
				continue
			}
			cfg := judge.ConfigOf(j)
			a := byCfg[cfg]
			if a == nil {
				a = &acc{model: j.Manifest.Model.Name}
				byCfg[cfg] = a
			}
			a.rows.Add(run.server, run.success, res.Scores)
			a.judged++
		}
		cfgs := make([]judge.Config, 0, len(byCfg))
		for c := range byCfg {
			cfgs = append(cfgs, c)
		}
		slices.SortFunc(cfgs, func(a, b judge.Config) int { return strings.Compare(a.String(), b.String()) })
		for _, cfg := range cfgs {
			a := byCfg[cfg]
			rep := scoring.JudgeReport{Model: a.model, Config: cfg.String(), MinKappa: minKappa, Judged: a.judged, Unjudged: len(runs) - a.judged}
			st, err := judge.StoredCalibration(s, a.model, cfg)
			switch {
			case errors.Is(err, judge.ErrUncalibrated):
				rep.Reason = fmt.Sprintf("the judge is not calibrated under these settings in this store (bench judge calibrate --model %s, with the same --samples, --temperature and --judge-seed)", a.model)
			case err != nil:
				return nil, err
			default:
				k := st.Calibration.Kappa
				rep.Kappa, rep.Calibrated = &k, st.Judged
				if k < minKappa {
					rep.Reason = fmt.Sprintf("Cohen's kappa %.3f against the labelled runs is below the bar %.2f", k, minKappa)
				} else {
					rep.Shown, rep.Rows = true, a.rows.Rows()
				}
			}
			out = append(out, rep)
		}
	}
	return out, nil
}

// judgeRefIndex maps each judge model's ref segment to the refs it graded
// and the judgement of each (judge/<model>/<ref>), the calibration set's
// left out.
func judgeRefIndex(s *traces.Store) (map[string]map[string]traces.ID, error) {
	refs, err := s.Refs(traces.JudgeRefPrefix)
	if err != nil {
		return nil, err
	}
	byModel := map[string]map[string]traces.ID{}
	for _, r := range refs {
		seg, graded, ok := strings.Cut(strings.TrimPrefix(r.Name, traces.JudgeRefPrefix), "/")
		if !ok || strings.HasPrefix(graded, "calibration/") {
			continue
		}
		if byModel[seg] == nil {
			byModel[seg] = map[string]traces.ID{}
		}
		byModel[seg][graded] = r.Run
	}
	return byModel, nil
}

// judgementOf reads the judgement jid and its scores; the scores are nil
// when it grades another run than graded (the ref moved since) or did
// not answer.
func judgementOf(s *traces.Store, jid, graded traces.ID) (*traces.Run, *scoring.JudgeResult, error) {
	j, err := s.GetRun(jid)
	if err != nil {
		return nil, nil, err
	}
	if j.Manifest.Grades == nil || *j.Manifest.Grades != graded || j.Manifest.Outcome != traces.OutcomeAnswered {
		return j, nil, nil
	}
	res, err := scoring.JudgementScores(j)
	if err != nil {
		return j, nil, nil
	}
	return j, res, nil
}
