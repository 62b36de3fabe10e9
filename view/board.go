package view

import (
	"bytes"
	"cmp"
	"encoding/base64"
	"errors"
	"slices"

	"github.com/mcpbench/bench/scoring"
	"github.com/mcpbench/bench/traces"
)

// Board is the scoreboard of the recorded runs, as bench report scores
// them (replays left out), with its chart and the pass/fail strips.
type Board struct {
	Methodology string                  `json:"methodology"`
	Runs        int                     `json:"runs"`
	LeftOut     int                     `json:"left_out"` // replay runs, not scored
	Unscored    []string                `json:"unscored,omitempty"`
	Suites      []*scoring.SuiteSummary `json:"suites"`
	// SVG is the chart bench report --release draws (scoring.WriteSVG), as
	// a data: URL the page shows in an img element.
	SVG      string   `json:"svg"`
	Strips   []Strip  `json:"strips"`
	Warnings []string `json:"warnings,omitempty"`
}

// Strip is one scenario's runs on one server and model, by run index.
type Strip struct {
	Scenario string  `json:"scenario"`
	Suite    string  `json:"suite"`
	Server   string  `json:"server"`
	Model    string  `json:"model"`
	Runs     []Cell  `json:"runs"`
	Passes   int     `json:"passes"`
	Rate     float64 `json:"rate"`
}

// Cell is one run of a strip.
type Cell struct {
	RunIndex int    `json:"run_index"`
	ID       string `json:"id"`
	Pass     bool   `json:"pass"`
	Safety   bool   `json:"safety_failure,omitempty"`
	Outcome  string `json:"outcome"`
}

// Board scores the recorded runs of the rows q selects (Kind is forced to
// recorded), once per View for the zero query; the page asks for it only
// when its scoreboard is opened.
func (v *View) Board(q Query) (*Board, error) {
	if v.opts.Scorer == nil {
		return nil, errors.New("no scorer: the scoreboard needs the scenarios")
	}
	cache := q.Server == "" && q.Model == "" && q.Scenario == "" && q.Suite == "" && q.Outcome == "" && len(q.Prefixes) == 0 && len(q.Scenarios) == 0
	if cache {
		v.mu.Lock()
		b := v.board
		v.mu.Unlock()
		if b != nil {
			return b, nil
		}
	}
	ix := v.cur()
	all := v.selectRows(ix, Query{Scenarios: q.Scenarios, Server: q.Server, Model: q.Model, Scenario: q.Scenario, Suite: q.Suite, Outcome: q.Outcome, Prefixes: q.Prefixes})
	agg := scoring.NewAggregator(&scoring.AggregateOptions{})
	var meta scoring.MetaBuilder
	b := &Board{Methodology: scoring.MethodologyVersion, Strips: []Strip{}}
	type key struct{ scenario, server, model string }
	strips := map[key]*Strip{}
	for _, i := range all {
		row := ix.rows[i]
		if row.Prefix == "replay" {
			b.LeftOut++
			continue
		}
		run, err := ix.store.GetRun(row.id)
		if err != nil {
			return nil, err
		}
		if run.Manifest.Mode == traces.ModeReplay {
			b.LeftOut++
			continue
		}
		scoredRun, err := v.score(run)
		if err != nil {
			b.Unscored = append(b.Unscored, line(row.Ref+": "+err.Error()))
			continue
		}
		m := *scoredRun // the kept metrics stay as scored
		m.Ref = row.Ref
		agg.Add(&m)
		meta.Add(&run.Manifest, scoring.Isolation(run))
		b.Runs++
		k := key{m.Scenario, m.Server, m.Model}
		st := strips[k]
		if st == nil {
			st = &Strip{Scenario: line(m.Scenario), Suite: line(m.Suite), Server: line(m.Server), Model: line(m.Model)}
			strips[k] = st
		}
		st.Runs = append(st.Runs, Cell{RunIndex: m.RunIndex, ID: row.ID, Pass: m.TaskSuccess, Safety: m.SafetyFailure, Outcome: line(string(m.Outcome))})
		if m.TaskSuccess {
			st.Passes++
		}
	}
	keys := make([]key, 0, len(strips))
	for k := range strips {
		keys = append(keys, k)
	}
	slices.SortFunc(keys, func(a, b key) int {
		return cmp.Or(cmp.Compare(a.scenario, b.scenario), cmp.Compare(a.server, b.server), cmp.Compare(a.model, b.model))
	})
	for _, k := range keys {
		st := strips[k]
		slices.SortFunc(st.Runs, func(a, b Cell) int { return cmp.Or(cmp.Compare(a.RunIndex, b.RunIndex), cmp.Compare(a.ID, b.ID)) })
		st.Rate = float64(st.Passes) / float64(len(st.Runs))
		b.Strips = append(b.Strips, *st)
	}
	if b.Runs > 0 {
		rep := scoring.BuildReport(&scoring.ReportInput{Title: "scoreboard", Results: agg.Results(), NoVerdict: true,
			Meta: meta.Meta(), Secrets: v.secrets()})
		b.Suites = rep.Results.Suites
		for _, s := range b.Suites {
			s.Server, s.Suite = line(s.Server), line(s.Suite)
		}
		b.Warnings = lines(rep.Warnings)
		var svg bytes.Buffer
		if err := scoring.WriteSVG(&svg, rep); err != nil {
			return nil, err
		}
		b.SVG = "data:image/svg+xml;base64," + base64.StdEncoding.EncodeToString(svg.Bytes())
	}
	v.maskAll(b)
	if cache {
		v.mu.Lock()
		v.board = b
		v.mu.Unlock()
	}
	return b, nil
}
