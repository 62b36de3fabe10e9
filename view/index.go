package view

import (
	"cmp"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/mcpbench/bench/internal/escape"
	"github.com/mcpbench/bench/scenarios"
	"github.com/mcpbench/bench/scoring"
	"github.com/mcpbench/bench/traces"
)

// Store is what the view reads of a trace store (a *traces.Store opened
// ReadOnly).
type Store interface {
	Refs(prefix string) ([]traces.Ref, error)
	GetRun(id traces.ID) (*traces.Run, error)
}

// Scorer scores a run against its scenario and knows the canaries of the
// fixtures it has scored (a *batch.Scorer).
type Scorer interface {
	Score(run *traces.Run) (*scoring.RunMetrics, error)
	Secrets() []string
}

// Options configure a View. Store is required; nil Scorer shows runs
// unscored (no safety findings, no scoreboard).
type Options struct {
	Store  Store
	Scorer Scorer
	// Scenarios are the scenarios the runs ran, for the answer's result
	// schema; nil shows no schema.
	Scenarios []*scenarios.Scenario
	// Secrets are masked wherever they are shown, beside the canaries of
	// the fixtures Scorer has scored.
	Secrets []string
	// NoMask shows canaries as they are. Export refuses to publish one
	// either way.
	NoMask bool
	// Reopen opens the store again, to show the runs stored since (a
	// recording beside the view); nil: the page cannot reload.
	Reopen func() (Store, error)
}

// View is the data of the page over one store: the rows, built from the
// refs when it is made, and what it has read of the runs since (their
// summaries). It is safe for concurrent use.
type View struct {
	opts      Options
	scenarios map[string]*scenarios.Scenario
	idx       atomic.Pointer[index]

	mu        sync.Mutex
	summaries map[traces.ID]*Summary // by run ID: what a run holds never changes
	scores    map[traces.ID]scored
	outcomes  map[traces.ID]string // read for a filter on outcome
	board     *Board
	// stores are the stores Reload replaced, closed by Close: a request
	// may still be reading one.
	stores []Store
}

// index is the run list of one opening of the store.
type index struct {
	store  Store
	rows   []Row
	byName map[string]int // ref name -> index in rows
	byID   map[traces.ID]int
	// judged are the judgements of each graded ref, by judge ref name.
	judged map[string][]traces.ID
	mu     sync.Mutex
	cals   map[string]calibration // model and setting -> stored calibration
}

// Row is one ref of the store in the run list.
type Row struct {
	ID     string `json:"id"`
	Ref    string `json:"ref"`
	Prefix string `json:"prefix,omitempty"` // "replay" for bench replay's runs
	// Set is the ref's first segment (golden, pinned); Suite the
	// scenario's suite (its intent family), or Set when the scenario is
	// not known.
	Set      string `json:"set,omitempty"`
	Suite    string `json:"suite"`
	Server   string `json:"server"`
	Model    string `json:"model"`
	Scenario string `json:"scenario"`
	RunIndex int    `json:"run_index"`
	// Summary is filled once the run has been read (a page of rows reads
	// the runs it shows).
	Summary *Summary `json:"summary,omitempty"`

	id traces.ID
}

// Summary is what the run list shows of a run beyond its ref.
type Summary struct {
	Mode          string `json:"mode"`
	Outcome       string `json:"outcome"`
	Scored        bool   `json:"scored"`
	TaskSuccess   bool   `json:"task_success"`
	SafetyFailure bool   `json:"safety_failure"`
	Turns         int    `json:"turns"`
	Calls         int    `json:"calls"`
	InputTokens   int    `json:"input_tokens"`
	OutputTokens  int    `json:"output_tokens"`
	Error         string `json:"error,omitempty"` // why the run could not be read or scored
}

// New builds the view of o.Store: it lists the refs, and reads no run.
func New(o *Options) (*View, error) {
	if o == nil || o.Store == nil {
		return nil, errors.New("view: no store")
	}
	v := &View{opts: *o, scenarios: map[string]*scenarios.Scenario{}, summaries: map[traces.ID]*Summary{}, scores: map[traces.ID]scored{}, outcomes: map[traces.ID]string{}}
	for _, sc := range o.Scenarios {
		v.scenarios[sc.ID] = sc
	}
	ix, err := v.index(o.Store)
	if err != nil {
		return nil, err
	}
	v.idx.Store(ix)
	return v, nil
}

// Reload opens the store again (Options.Reopen) and shows its refs from
// now on: the runs a recording stored since. What was read of runs is
// kept: a run ID names the same content forever.
func (v *View) Reload() error {
	if v.opts.Reopen == nil {
		return errors.New("this view cannot reload its store")
	}
	s, err := v.opts.Reopen()
	if err != nil {
		return err
	}
	ix, err := v.index(s)
	if err != nil {
		if c, ok := s.(io.Closer); ok {
			c.Close()
		}
		return err
	}
	old := v.idx.Swap(ix)
	v.mu.Lock()
	v.board = nil
	v.stores = append(v.stores, old.store)
	v.mu.Unlock()
	return nil
}

// Close closes the stores Reload opened and replaced (not the one in
// Options, which is the caller's).
func (v *View) Close() error {
	v.mu.Lock()
	defer v.mu.Unlock()
	var errs []error
	cur := v.cur().store
	for _, s := range append(v.stores, cur) {
		if s == v.opts.Store {
			continue
		}
		if c, ok := s.(io.Closer); ok {
			errs = append(errs, c.Close())
		}
	}
	v.stores = nil
	return errors.Join(errs...)
}

func (v *View) cur() *index { return v.idx.Load() }

func (v *View) index(s Store) (*index, error) {
	refs, err := s.Refs("")
	if err != nil {
		return nil, fmt.Errorf("listing the store's refs: %w", err)
	}
	ix := &index{store: s, rows: make([]Row, 0, len(refs)), byName: map[string]int{}, byID: map[traces.ID]int{},
		judged: map[string][]traces.ID{}, cals: map[string]calibration{}}
	for _, r := range refs {
		if strings.HasPrefix(r.Name, traces.JudgeRefPrefix) {
			// An LLM judge's grading, no agent's run: shown on the run it grades.
			if g := judgedRef(r.Name); g != "" {
				ix.judged[escape.Line(g)] = append(ix.judged[escape.Line(g)], r.Run)
			}
			continue
		}
		row := Row{ID: r.Run.String(), Ref: escape.Line(r.Name), id: r.Run}
		if p, ok := traces.ParseRunRef(r.Name); ok {
			row.Prefix, row.Set, row.Server, row.Model, row.Scenario, row.RunIndex = p.Prefix, p.Suite, p.Server, p.Model, p.Scenario, p.RunIndex
			row.Suite = p.Suite
			if sc := v.scenarios[p.Scenario]; sc != nil && sc.Suite != "" {
				row.Suite = sc.Suite
			}
		}
		ix.byName[r.Name] = len(ix.rows)
		if _, ok := ix.byID[r.Run]; !ok {
			ix.byID[r.Run] = len(ix.rows)
		}
		ix.rows = append(ix.rows, row)
	}
	return ix, nil
}

// Query selects rows of the run list. Empty fields select everything.
type Query struct {
	Server, Model, Scenario, Suite string
	// Outcome selects runs of this outcome; it reads every run it filters.
	Outcome string
	// Kind is "recorded" (refs outside replay/) or "replayed".
	Kind string
	// Prefixes keep the refs under any of them (Export's --from).
	Prefixes []string
	// Scenarios keep the runs of these scenarios (a selection's --stage,
	// --suite and --scenario, resolved).
	Scenarios     []string
	Offset, Limit int
}

// Page is one page of the run list, and what its filters may choose.
type Page struct {
	Total  int    `json:"total"`
	Offset int    `json:"offset"`
	Limit  int    `json:"limit"`
	Rows   []Row  `json:"rows"`
	Facets Facets `json:"facets"`
}

// Facets are the values each filter of the run list may take, sorted.
type Facets struct {
	Servers   []string `json:"servers"`
	Models    []string `json:"models"`
	Scenarios []string `json:"scenarios"`
	Suites    []string `json:"suites"`
	Outcomes  []string `json:"outcomes"`
}

// DefaultLimit is the rows of a page when Query.Limit is 0; MaxLimit the
// most a page holds.
const (
	DefaultLimit = 50
	MaxLimit     = 500
)

var outcomes = []string{string(traces.OutcomeAnswered), string(traces.OutcomeText), string(traces.OutcomeMaxTurns),
	string(traces.OutcomeLoop), string(traces.OutcomeMaxTokens), string(traces.OutcomeError),
	string(traces.OutcomeStale), string(traces.OutcomeDiverged)}

// List returns the page of rows q selects, in ref order, each with its
// summary.
func (v *View) List(q Query) Page {
	if q.Limit <= 0 {
		q.Limit = DefaultLimit
	}
	q.Limit = min(q.Limit, MaxLimit)
	q.Offset = max(q.Offset, 0)
	ix := v.cur()
	sel := v.selectRows(ix, q)
	p := Page{Total: len(sel), Offset: q.Offset, Limit: q.Limit, Rows: []Row{}, Facets: facetsOf(ix.rows)}
	for i := q.Offset; i < len(sel) && i < q.Offset+q.Limit; i++ {
		row := ix.rows[sel[i]]
		row.Summary = v.summary(ix.store, row.id)
		p.Rows = append(p.Rows, row)
	}
	return p
}

// selectRows returns the indexes of the rows q selects, ignoring paging.
func (v *View) selectRows(ix *index, q Query) []int {
	var out []int
	for i, r := range ix.rows {
		switch {
		case q.Server != "" && r.Server != q.Server,
			q.Model != "" && r.Model != q.Model,
			q.Scenario != "" && r.Scenario != q.Scenario,
			q.Suite != "" && r.Suite != q.Suite,
			len(q.Scenarios) > 0 && !slices.Contains(q.Scenarios, r.Scenario),
			q.Kind == "recorded" && r.Prefix == "replay",
			q.Kind == "replayed" && r.Prefix != "replay":
			continue
		}
		if len(q.Prefixes) > 0 && !slices.ContainsFunc(q.Prefixes, func(p string) bool { return strings.HasPrefix(r.Ref, p) }) {
			continue
		}
		if q.Outcome != "" && v.outcome(ix.store, r.id) != q.Outcome {
			continue
		}
		out = append(out, i)
	}
	return out
}

func facetsOf(rows []Row) Facets {
	set := func(f func(Row) string) []string {
		var out []string
		for _, r := range rows {
			if s := f(r); s != "" {
				out = append(out, s)
			}
		}
		slices.Sort(out)
		return slices.Compact(out)
	}
	return Facets{
		Servers:   set(func(r Row) string { return r.Server }),
		Models:    set(func(r Row) string { return r.Model }),
		Scenarios: set(func(r Row) string { return r.Scenario }),
		Suites:    set(func(r Row) string { return r.Suite }),
		Outcomes:  outcomes,
	}
}

// outcome is how the run ended, read once (unscored: a filter on
// outcome reads every run it filters, and scoring them all would cost
// several times the reading).
func (v *View) outcome(st Store, id traces.ID) string {
	v.mu.Lock()
	s, ok := v.summaries[id]
	o, known := v.outcomes[id]
	v.mu.Unlock()
	switch {
	case ok:
		return s.Outcome
	case known:
		return o
	}
	if run, err := st.GetRun(id); err == nil {
		o = string(run.Manifest.Outcome)
	}
	v.mu.Lock()
	v.outcomes[id] = o
	v.mu.Unlock()
	return o
}

// summary reads and scores the run once, and keeps what the list shows.
func (v *View) summary(st Store, id traces.ID) *Summary {
	v.mu.Lock()
	s, ok := v.summaries[id]
	v.mu.Unlock()
	if ok {
		return s
	}
	s = &Summary{}
	run, err := st.GetRun(id)
	if err != nil {
		s.Error = err.Error()
	} else {
		s.Mode, s.Outcome = string(run.Manifest.Mode), string(run.Manifest.Outcome)
		for _, e := range run.Events {
			switch e.Kind {
			case traces.KindTurn:
				s.Turns++
				s.InputTokens += e.Turn.Usage.Input
				s.OutputTokens += e.Turn.Usage.Output
			case traces.KindCall:
				s.Calls++
			}
		}
		if m, err := v.score(run); err != nil {
			s.Error = err.Error()
		} else if m != nil {
			s.Scored, s.TaskSuccess, s.SafetyFailure = true, m.TaskSuccess, m.SafetyFailure
		}
	}
	s.Error = v.mask(escape.Line(s.Error))
	v.mu.Lock()
	v.summaries[id] = s
	v.mu.Unlock()
	return s
}

// scored is what scoring said of a run, kept by its ID.
type scored struct {
	m   *scoring.RunMetrics
	err error
}

// score scores run once: the list, a timeline, the board and an export
// each need its metrics (callers must not change them).
func (v *View) score(run *traces.Run) (*scoring.RunMetrics, error) {
	if v.opts.Scorer == nil {
		return nil, nil
	}
	id := run.Manifest.RunID
	v.mu.Lock()
	sc, ok := v.scores[id]
	v.mu.Unlock()
	if ok {
		return sc.m, sc.err
	}
	m, err := v.opts.Scorer.Score(run)
	v.mu.Lock()
	v.scores[id] = scored{m, err}
	v.mu.Unlock()
	return m, err
}

// secrets are what the view masks: Options.Secrets and the canaries of
// every fixture scored so far.
func (v *View) secrets() []string {
	out := slices.Clone(v.opts.Secrets)
	if v.opts.Scorer != nil {
		out = append(out, v.opts.Scorer.Secrets()...)
	}
	slices.Sort(out)
	return slices.Compact(out)
}

// mask masks the secrets in s, unless NoMask.
func (v *View) mask(s string) string {
	if v.opts.NoMask {
		return s
	}
	x := struct{ S string }{s}
	scoring.Redact(&x, v.secrets())
	return x.S
}

// maskAll masks the secrets wherever they are in p (a pointer to a
// timeline, a diff or a board), unless NoMask.
func (v *View) maskAll(p any) {
	if !v.opts.NoMask {
		scoring.Redact(p, v.secrets())
	}
}

// lookup resolves a run ID (64 hex digits) or a ref name to a run of the
// store, and the ref it is listed under ("" for a run no ref names).
func (ix *index) lookup(s string) (traces.ID, string, error) {
	if i, ok := ix.byName[s]; ok {
		return ix.rows[i].id, ix.rows[i].Ref, nil
	}
	id, err := traces.ParseID(s)
	if err != nil {
		return traces.ID{}, "", fmt.Errorf("%q is neither a ref nor a run ID of this store", escape.Line(s))
	}
	if i, ok := ix.byID[id]; ok {
		return id, ix.rows[i].Ref, nil
	}
	return id, "", nil
}

// sortedKeys returns m's keys in order.
func sortedKeys[K cmp.Ordered, V any](m map[K]V) []K {
	out := make([]K, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}
