package judge

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mcpbench/bench/llm"
	"github.com/mcpbench/bench/scenarios"
	"github.com/mcpbench/bench/scoring"
	"github.com/mcpbench/bench/traces"
)

// ruleJudge grades by rule from what it is shown, and counts its calls.
type ruleJudge struct{ calls atomic.Int64 }

func (j *ruleJudge) Name() string { return "openai:rule-judge" }

func (j *ruleJudge) Generate(_ context.Context, req *llm.Request) (*llm.Response, error) {
	j.calls.Add(1)
	text := req.Messages[len(req.Messages)-1].Content
	c := 0
	if strings.Contains(text, `-> {"status":"accepted"}`) {
		c = 2
	}
	return &llm.Response{Text: fmt.Sprintf(`{"correctness": %d, "tool_use": 1, "compliance": 2, "reason": "rule"}`, c), StopReason: llm.StopEndTurn}, nil
}

// fixture is a store holding the shipped runs, and the golden suite.
func fixture(t *testing.T) (*traces.Store, map[string]*scenarios.Scenario) {
	t.Helper()
	s, err := traces.Open(filepath.Join(t.TempDir(), "store"), nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	if err := ImportShippedRuns(s); err != nil {
		t.Fatal(err)
	}
	golden, err := scenarios.Golden()
	if err != nil {
		t.Fatal(err)
	}
	by := map[string]*scenarios.Scenario{}
	for _, sc := range golden {
		by[sc.ID] = sc
	}
	return s, by
}

func load(t *testing.T, s *traces.Store, ref string) *traces.Run {
	t.Helper()
	id, err := s.Ref(ref)
	if err != nil {
		t.Fatal(err)
	}
	run, err := s.GetRun(id)
	if err != nil {
		t.Fatal(err)
	}
	return run
}

var clock = func() func() time.Time {
	t0 := time.Date(2026, 12, 2, 0, 0, 0, 0, time.UTC)
	return func() time.Time { return t0 }
}()

// TestGradeRecordedAndReplayed: a judgement is recorded with one turn per
// sample, keyed; grading the same run again offline serves every turn and
// makes the same judgement (the same ID); a replay of the run with the
// same behaviour is graded from the recording; one whose behaviour changed
// is stale, and the miss names the message that differed.
func TestGradeRecordedAndReplayed(t *testing.T) {
	s, scs := fixture(t)
	const ref = "golden/reference/oracle/firmware-002/0"
	run := load(t, s, ref)
	sc := scs[run.Manifest.Scenario.ID]
	live := &ruleJudge{}
	o := &Options{Model: traces.ModelRef{Provider: "openai", Name: live.Name()}, Live: live, Samples: 3, Harness: "test", Now: clock}
	res, err := Grade(context.Background(), sc, run, nil, o)
	if err != nil {
		t.Fatal(err)
	}
	j := res.Judgement
	if j.Manifest.Outcome != traces.OutcomeAnswered || res.Asked != 3 || res.Served != 0 || live.calls.Load() != 3 {
		t.Fatalf("outcome %s, asked %d, served %d, calls %d", j.Manifest.Outcome, res.Asked, res.Served, live.calls.Load())
	}
	if *j.Manifest.Grades != run.Manifest.RunID || j.Manifest.Model.Name != live.Name() || j.Manifest.RunIndex != run.Manifest.RunIndex {
		t.Errorf("manifest %+v", j.Manifest)
	}
	if got := res.Scores.Scores; got.Correctness != 2 || !strings.HasPrefix(j.Manifest.SystemPrompt, "judge-rubric/") {
		t.Errorf("scores %+v, rubric %q", got, j.Manifest.SystemPrompt)
	}
	turns := 0
	for _, e := range j.Events {
		if e.Kind == traces.KindTurn {
			turns++
			if e.Turn.Key.IsZero() {
				t.Error("a judge turn without a request key")
			}
		}
	}
	if turns != 3 {
		t.Errorf("%d turns, want 3", turns)
	}
	if _, err := s.PutRun(j, traces.JudgeRef(live.Name(), ref)); err != nil {
		t.Fatal(err)
	}
	fromStore, err := scoring.JudgementScores(load(t, s, traces.JudgeRef(live.Name(), ref)))
	if err != nil || fromStore.Scores != res.Scores.Scores {
		t.Errorf("scores read back %+v, %v; graded %+v", fromStore, err, res.Scores.Scores)
	}

	// Offline, the same run: every turn served, the same judgement twice.
	offline := *o
	offline.Live = nil
	recorded, err := NewFinder(s, live.Name()).Find(ref, run)
	if err != nil || recorded == nil {
		t.Fatalf("recorded judgement: %v, %v", recorded, err)
	}
	var ids []traces.ID
	for range 2 {
		res2, err := Grade(context.Background(), sc, run, recorded, &offline)
		if err != nil {
			t.Fatal(err)
		}
		if res2.Served != 3 || res2.Asked != 0 || res2.Scores.Scores != res.Scores.Scores || res2.Judgement.Manifest.Mode != traces.ModeReplay {
			t.Fatalf("offline: served %d, asked %d, scores %+v, mode %s", res2.Served, res2.Asked, res2.Scores, res2.Judgement.Manifest.Mode)
		}
		id, err := s.PutRun(res2.Judgement, "judge-test/offline")
		if err != nil {
			t.Fatal(err)
		}
		ids = append(ids, id)
	}
	if ids[0] != ids[1] {
		t.Errorf("the same grading gave two IDs: %s, %s", ids[0].Short(), ids[1].Short())
	}

	// A replay of the run with the same behaviour: found through
	// replay/<ref>, served whole.
	rep := *run
	rep.Manifest.Mode, rep.Manifest.Replays = traces.ModeReplay, &run.Manifest.RunID
	if _, err := s.PutRun(&rep, "replay/"+ref); err != nil {
		t.Fatal(err)
	}
	rec2, err := NewFinder(s, live.Name()).Find("replay/"+ref, &rep)
	if err != nil || rec2 == nil || rec2.Manifest.RunID != recorded.Manifest.RunID {
		t.Fatalf("the replay's recorded judgement: %v, %v", rec2, err)
	}
	res3, err := Grade(context.Background(), sc, &rep, rec2, &offline)
	if err != nil || res3.Served != 3 || res3.Miss != nil {
		t.Fatalf("replay graded offline: %+v, %v, %s", res3, err, res3.Miss.Explain())
	}

	// A replay whose answer changed: stale, and the miss says where.
	changed := rep
	changed.Events = append([]traces.Event(nil), rep.Events...)
	for i, e := range changed.Events {
		if e.Kind == traces.KindCall && e.Call.Tool == "submit_result" {
			c := *e.Call
			c.Arguments = []byte(`{"current":"10.6.0.2","recommended":"10.6.0.2"}`)
			changed.Events[i].Call = &c
		}
	}
	if _, err := s.PutRun(&changed, "replay/changed"); err != nil {
		t.Fatal(err)
	}
	res4, err := Grade(context.Background(), sc, &changed, rec2, &offline)
	if err != nil {
		t.Fatal(err)
	}
	if res4.Judgement.Manifest.Outcome != traces.OutcomeStale || res4.Miss == nil || res4.Scores != nil {
		t.Fatalf("changed replay: outcome %s, miss %v", res4.Judgement.Manifest.Outcome, res4.Miss)
	}
	if sum := res4.Miss.Summary(); !strings.Contains(sum, "message") {
		t.Errorf("the miss does not name the message that differed: %s", sum)
	}
	if live.calls.Load() != 3 {
		t.Errorf("the judge was asked %d times, want 3 (all else offline)", live.calls.Load())
	}
	// With no recording and no live judge, Grade refuses.
	if _, err := Grade(context.Background(), sc, run, nil, &offline); err == nil {
		t.Error("graded offline with no recorded judgement")
	}
}

// TestStoredCalibration computes kappa from the judgements of the shipped
// set in a store, only under the setting they were made with.
func TestStoredCalibration(t *testing.T) {
	s, scs := fixture(t)
	labels, err := ShippedLabels()
	if err != nil {
		t.Fatal(err)
	}
	if len(labels) < 50 {
		t.Fatalf("the shipped set has %d labelled runs, want at least 50", len(labels))
	}
	live := &ruleJudge{}
	o := &Options{Model: traces.ModelRef{Provider: "openai", Name: live.Name()}, Live: live, Samples: 1, Harness: "test", Now: clock}
	cfg := Config{}
	for _, l := range labels {
		id, _ := traces.ParseID(l.Run)
		run, err := s.GetRun(id)
		if err != nil {
			t.Fatal(err)
		}
		res, err := Grade(context.Background(), scs[run.Manifest.Scenario.ID], run, nil, o)
		if err != nil {
			t.Fatal(err)
		}
		cfg = ConfigOf(res.Judgement)
		if _, err := s.PutRun(res.Judgement, traces.JudgeRef(live.Name(), CalibrationRef(l))); err != nil {
			t.Fatal(err)
		}
	}
	st, err := StoredCalibration(s, live.Name(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	if st.Judged != len(labels) || st.Calibration.Dimensions[0].N != len(labels) || cfg.Samples != 1 {
		t.Errorf("calibration %+v under %s", st, cfg)
	}
	// What the rule judge passes, recomputed here, gives the same kappa.
	var pairs []scoring.LabeledRun
	for _, l := range labels {
		id, _ := traces.ParseID(l.Run)
		run, _ := s.GetRun(id)
		c := 0
		for _, step := range scoring.Steps(run) {
			if strings.Contains(step.Text, `-> {"status":"accepted"}`) {
				c = 2
			}
		}
		l.Judge = &scoring.JudgeScores{Correctness: c, ToolUse: 1, Compliance: 2}
		pairs = append(pairs, l)
	}
	want, _ := scoring.Calibrate(pairs)
	if st.Calibration.Kappa != want.Kappa {
		t.Errorf("stored kappa %.3f, recomputed %.3f", st.Calibration.Kappa, want.Kappa)
	}
	other := cfg
	other.Samples = 3
	if _, err := StoredCalibration(s, live.Name(), other); !errors.Is(err, ErrUncalibrated) {
		t.Errorf("another setting: %v, want ErrUncalibrated", err)
	}
}

func TestParseLabels(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{`{"run":"a","human":{"correctness":3,"tool_use":0,"compliance":0}}`, "line 1: human.correctness: 3 is not 0, 1 or 2"},
		{"{\"run\":\"a\",\"human\":{}}\n\n{\"run\":\"a\",\"human\":{}}", "line 3: run a is labelled at line 1 already"},
		{`{"run":"a","humane":{}}`, `line 1: json: unknown field "humane"`},
		{`[{"human":{}}]`, "entry 1: run: required"},
	} {
		if _, err := ParseLabels([]byte(c.in)); err == nil || err.Error() != c.want {
			t.Errorf("%s: %v, want %s", c.in, err, c.want)
		}
	}
}
