package judge

import (
	"bufio"
	"bytes"
	_ "embed"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/mcpbench/bench/scoring"
	"github.com/mcpbench/bench/traces"
)

// The shipped calibration set: 73 stored runs of the golden suite (the
// local real model's, the BM25 baseline's and the oracle's, on the
// reference server and a compared one), each graded by hand on the
// rubric's three dimensions, with the reason (calibration/labels.jsonl),
// and the runs themselves (calibration/runs.benchpack, a trace pack).
//
//go:embed calibration/labels.jsonl
var shippedLabels []byte

//go:embed calibration/runs.benchpack
var shippedRuns []byte

// SetName names the shipped set in the refs of its judgements.
const SetName = "bench-1"

// ShippedLabels returns the labels of the shipped set.
func ShippedLabels() ([]scoring.LabeledRun, error) {
	return ParseLabels(shippedLabels)
}

// ImportShippedRuns imports the runs of the shipped set into s.
func ImportShippedRuns(s *traces.Store) error {
	_, err := s.Import(bytes.NewReader(shippedRuns), nil)
	return err
}

// CalibrationRef is the ref under which a judgement of labelled run l is
// graded: calibration/<set>/<l's ref>, so that its judgement is
// judge/<model>/calibration/<set>/<ref> and never mixes with the
// judgements of the store's own runs.
func CalibrationRef(l scoring.LabeledRun) string {
	return "calibration/" + SetName + "/" + l.Ref
}

// ParseLabels reads a JSON array or JSON lines of labelled runs, strictly:
// an unknown member is an error naming its line.
func ParseLabels(data []byte) ([]scoring.LabeledRun, error) {
	trimmed := bytes.TrimSpace(data)
	var out []scoring.LabeledRun
	if len(trimmed) > 0 && trimmed[0] == '[' {
		dec := json.NewDecoder(bytes.NewReader(trimmed))
		dec.DisallowUnknownFields()
		if err := dec.Decode(&out); err != nil {
			return nil, err
		}
		return out, checkLabels(out, nil)
	}
	var lines []int
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	line := 0
	for sc.Scan() {
		line++
		t := bytes.TrimSpace(sc.Bytes())
		if len(t) == 0 {
			continue
		}
		var l scoring.LabeledRun
		dec := json.NewDecoder(bytes.NewReader(t))
		dec.DisallowUnknownFields()
		if err := dec.Decode(&l); err != nil {
			return nil, fmt.Errorf("line %d: %w", line, err)
		}
		out = append(out, l)
		lines = append(lines, line)
	}
	if err := sc.Err(); err != nil {
		return nil, err
	}
	return out, checkLabels(out, lines)
}

// checkLabels refuses a score outside 0-2 and a run labelled twice.
func checkLabels(labels []scoring.LabeledRun, lines []int) error {
	where := func(i int) string {
		if lines != nil {
			return fmt.Sprintf("line %d", lines[i])
		}
		return fmt.Sprintf("entry %d", i+1)
	}
	seen := map[string]int{}
	for i, l := range labels {
		if l.Run == "" {
			return fmt.Errorf("%s: run: required", where(i))
		}
		if j, ok := seen[l.Run]; ok {
			return fmt.Errorf("%s: run %s is labelled at %s already", where(i), l.Run, where(j))
		}
		seen[l.Run] = i
		for _, d := range []struct {
			name string
			v    int
		}{{"human.correctness", l.Human.Correctness}, {"human.tool_use", l.Human.ToolUse}, {"human.compliance", l.Human.Compliance}} {
			if d.v < 0 || d.v > 2 {
				return fmt.Errorf("%s: %s: %d is not 0, 1 or 2", where(i), d.name, d.v)
			}
		}
	}
	return nil
}

// Config is how a judgement was made: the judge's sampling and rubric.
// Judge scores are comparable, and a calibration holds for them, only
// under one Config.
type Config struct {
	Samples     int     `json:"samples"`
	Temperature float64 `json:"temperature"`
	Seed        int64   `json:"seed"`
	Rubric      string  `json:"rubric"`
}

func (c Config) String() string {
	return fmt.Sprintf("%d samples at temperature %g, seed %d, %s", c.Samples, c.Temperature, c.Seed, c.Rubric)
}

// ConfigOf reads a judgement's Config.
func ConfigOf(j *traces.Run) Config {
	c := Config{Seed: j.Manifest.Model.Seed, Rubric: j.Manifest.SystemPrompt}
	if t := j.Manifest.Model.Temperature; t != nil {
		c.Temperature = *t
	}
	for _, e := range j.Events {
		if e.Kind == traces.KindTurn {
			c.Samples++
		}
	}
	return c
}

// Stored is a calibration computed from the judgements of the shipped set
// held in a store.
type Stored struct {
	Model       string               `json:"model"`
	Config      Config               `json:"config"`
	Calibration *scoring.Calibration `json:"calibration"`
	// Labelled is the size of the set; Judged how many of its runs carry
	// a valid judgement under Config.
	Labelled int `json:"labelled"`
	Judged   int `json:"judged"`
}

// ErrUncalibrated is returned by StoredCalibration for a judge with no
// judgement of the shipped set in the store.
var ErrUncalibrated = errors.New("not calibrated")

// DefaultMinKappa is the bar a judge's calibration must reach before its
// scores are shown (bench report --judge-min-kappa, bench view).
const DefaultMinKappa = 0.6

// Runs is what StoredCalibration reads of a store (a *traces.Store).
type Runs interface {
	Refs(prefix string) ([]traces.Ref, error)
	GetRun(id traces.ID) (*traces.Run, error)
}

// StoredCalibration computes the judge model's calibration from its
// judgements of the shipped set in s (bench judge calibrate stores them),
// under cfg. It is ErrUncalibrated when s holds none under cfg.
func StoredCalibration(s Runs, model string, cfg Config) (*Stored, error) {
	labels, err := ShippedLabels()
	if err != nil {
		return nil, fmt.Errorf("the shipped labels: %w", err)
	}
	prefix := traces.JudgeRef(model, "calibration/"+SetName+"/")
	refs, err := s.Refs(prefix)
	if err != nil {
		return nil, err
	}
	byRun := map[traces.ID]*traces.Run{}
	for _, r := range refs {
		j, err := s.GetRun(r.Run)
		if err != nil {
			return nil, err
		}
		if j.Manifest.Grades != nil && ConfigOf(j) == cfg {
			byRun[*j.Manifest.Grades] = j
		}
	}
	out := &Stored{Model: model, Config: cfg, Labelled: len(labels)}
	var pairs []scoring.LabeledRun
	for _, l := range labels {
		id, err := traces.ParseID(l.Run)
		if err != nil {
			return nil, fmt.Errorf("the shipped labels: run %q: %w", l.Run, err)
		}
		j := byRun[id]
		if j == nil || j.Manifest.Outcome != traces.OutcomeAnswered {
			continue
		}
		res, err := scoring.JudgementScores(j)
		if err != nil {
			continue
		}
		sc := res.Scores
		l.Judge = &sc
		pairs = append(pairs, l)
	}
	if len(pairs) == 0 {
		return nil, fmt.Errorf("judge %s (%s): %w: no judgement of the shipped set in the store (bench judge calibrate --model %s)", model, cfg, ErrUncalibrated, model)
	}
	out.Judged = len(pairs)
	if out.Calibration, err = scoring.Calibrate(pairs); err != nil {
		return nil, err
	}
	return out, nil
}

// Configs lists the Configs of the judgements under refs, sorted by their
// text: what a report of them is made under.
func Configs(js []*traces.Run) []Config {
	seen := map[Config]bool{}
	var out []Config
	for _, j := range js {
		c := ConfigOf(j)
		if !seen[c] {
			seen[c] = true
			out = append(out, c)
		}
	}
	slices.SortFunc(out, func(a, b Config) int { return strings.Compare(a.String(), b.String()) })
	return out
}
