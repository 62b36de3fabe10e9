package batch

import (
	"errors"
	"fmt"
	"sync"

	"github.com/mcpbench/bench/fakecentral"
	"github.com/mcpbench/bench/recorder"
	"github.com/mcpbench/bench/scenarios"
	"github.com/mcpbench/bench/scoring"
	"github.com/mcpbench/bench/traces"
)

// ErrNotScorable marks a run that cannot be scored with the scenarios at
// hand: its scenario is not among them, its fixture does not load, or the
// run is of another scenario than the one of its id (a usage error of the
// caller's, who passed the wrong manifests).
var ErrNotScorable = errors.New("not scorable")

// Scorer scores stored runs against the scenarios they ran: for each run
// its scenario, its fixture's clock and canaries, the tokenizer, and which
// servers the scenarios name (the others are judged from the API layer).
// It is safe for concurrent use (replay workers score at once).
type Scorer struct {
	scenarios map[string]*scenarios.Scenario
	tokens    *recorder.TokenCounter
	cache     *scoring.Cache

	mu       sync.Mutex // guards fixtures
	fixtures map[string]*scoring.Options
}

// NewScorer returns a Scorer of the runs of the scenarios in list.
func NewScorer(list []*scenarios.Scenario) *Scorer {
	s := &Scorer{scenarios: map[string]*scenarios.Scenario{}, tokens: recorder.NewTokenCounter(),
		cache: scoring.NewCache(), fixtures: map[string]*scoring.Options{}}
	for _, sc := range list {
		s.scenarios[sc.ID] = sc
	}
	return s
}

// Score scores run; errors the caller's inputs cause wrap ErrNotScorable.
func (s *Scorer) Score(run *traces.Run) (*scoring.RunMetrics, error) {
	id := run.Manifest.Scenario.ID
	sc, ok := s.scenarios[id]
	if !ok {
		return nil, fmt.Errorf("%w: run %s: scenario %q is not in the scenario set (pass --scenarios)", ErrNotScorable, run.Manifest.RunID.Short(), id)
	}
	fixture := run.Manifest.Fixture.Name
	if fixture == "" {
		fixture = sc.Fixture
	}
	o, err := s.options(fixture)
	if err != nil {
		return nil, err
	}
	m, err := scoring.Score(run, sc, o)
	if errors.Is(err, scoring.ErrScenarioMismatch) {
		return nil, fmt.Errorf("%w: %w", ErrNotScorable, err)
	}
	return m, err
}

// ToolDefinitions measures the tool definitions a run's server offered,
// per tool, with the scorer's tokenizer (scoring.Cache.ToolDefinitionsOf);
// false for a run that has none.
func (s *Scorer) ToolDefinitions(run *traces.Run) (*scoring.ToolDefinitions, bool) {
	return s.cache.ToolDefinitionsOf(run, s.tokens.Count)
}

// options are the scoring options of fixture's runs, built once.
func (s *Scorer) options(fixture string) (*scoring.Options, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if o, ok := s.fixtures[fixture]; ok {
		return o, nil
	}
	fx, err := fakecentral.LoadFixture(fixture)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrNotScorable, err)
	}
	// What a fake of the fixture would call its secrets, without building
	// one (its state is the costly part of a start).
	o := &scoring.Options{Now: fx.Now(), Secrets: append(fx.Secrets(), fx.Token()), CountTokens: s.tokens.Count, Tokenizer: recorder.Tokenizer, Cache: s.cache}
	s.fixtures[fixture] = o
	return o, nil
}

// Secrets returns the canaries of every fixture scored so far, for a
// report to mask (scoring.ReportInput.Secrets).
func (s *Scorer) Secrets() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []string
	for _, o := range s.fixtures {
		out = append(out, o.Secrets...)
	}
	return out
}
