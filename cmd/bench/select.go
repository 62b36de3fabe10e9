package main

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"slices"
	"strings"

	"github.com/spf13/pflag"

	"github.com/mcpbench/bench/recorder"
	"github.com/mcpbench/bench/scenarios"
)

// loadProfile loads a server profile, expands its environment from the
// user's and adds the --server-env KEY=VALUE pairs.
func loadProfile(a *app, path string, serverEnv, passEnv []string) (*recorder.Profile, error) {
	p, err := recorder.LoadProfile(path)
	if err != nil {
		return nil, usageErr(err)
	}
	if err := p.ExpandEnv(a.getenv, passEnv); err != nil {
		return nil, usageErr(err)
	}
	for _, kv := range serverEnv {
		k, v, ok := strings.Cut(kv, "=")
		if !ok || k == "" {
			return nil, usageErr(fmt.Errorf("--server-env %q: want KEY=VALUE", kv))
		}
		if p.Env == nil {
			p.Env = map[string]string{}
		}
		p.Env[k] = v
	}
	noteClock(a, p)
	return p, nil
}

// selection holds the scenario selectors every command that selects runs
// takes (record, replay, report, diff, scenarios list), read by one
// implementation: which manifests to load (--scenarios; default the
// built-in golden suite), the stages in effect (the built-in ones, with
// --config or ./bench.yaml read over them), and --suite, --stage and
// --scenario, each of which must match when given.
type selection struct {
	paths  []string // --scenarios
	ids    []string // --scenario
	suite  string
	stage  string
	config string
	// expectations are --expectations files: a server's expected tools
	// and parameter rules for scenarios defined elsewhere.
	expectations []string
}

// register adds the selector flags to f; verb says what the command does
// with the scenarios it selects ("record", "replay", ...).
func (s *selection) register(f *pflag.FlagSet, verb string) {
	f.StringSliceVar(&s.paths, "scenarios", nil, "scenario manifests, files or directories (repeatable; default: the built-in golden suite)")
	f.StringSliceVar(&s.ids, "scenario", nil, verb+" the scenario of this id (repeatable)")
	f.StringVar(&s.suite, "suite", "", verb+" the scenarios of this suite (an intent family, or adversarial)")
	f.StringVar(&s.stage, "stage", "", verb+" the scenarios of this stage (smoke, core, safety, or a stage of --config)")
	f.StringVar(&s.config, "config", "", "stages read over the built-in ones (default: ./bench.yaml when it exists)")
}

// registerExpectations adds --expectations, for the commands that score.
func (s *selection) registerExpectations(f *pflag.FlagSet) {
	f.StringSliceVar(&s.expectations, "expectations", nil, "a server's expected tools and parameter rules for these scenarios (repeatable; a profile's expectations: file is read too; docs/scenarios.md)")
}

// label names the selection in a report's title: "stage core", "suite
// alerts", "scenario alerts-001" (the parts given, in that order).
func (s *selection) label() string {
	var parts []string
	if s.stage != "" {
		parts = append(parts, "stage "+s.stage)
	}
	if s.suite != "" {
		parts = append(parts, "suite "+s.suite)
	}
	if len(s.ids) > 0 {
		parts = append(parts, "scenario "+strings.Join(s.ids, ", "))
	}
	if len(parts) == 0 {
		return "every scenario"
	}
	return strings.Join(parts, ", ")
}

// narrows reports whether a selector other than --scenarios was given.
func (s *selection) narrows() bool { return s.suite != "" || s.stage != "" || len(s.ids) > 0 }

// loaded is what a selection loads: the scenarios it selects, every
// scenario loaded (a run is scored against its own), and the stages in
// effect.
type loaded struct {
	selected []*scenarios.Scenario
	all      []*scenarios.Scenario
	cfg      *scenarios.Config
}

// load loads the manifests and the stages and applies the selectors; with
// none, every loaded scenario is selected. Errors are usage errors naming
// the file, the stage or the id.
func (s *selection) load() (*loaded, error) {
	for _, id := range s.ids {
		if looksLikePath(id) {
			return nil, usageErr(fmt.Errorf("--scenario %q: takes a scenario id; to load the manifests in %s, use --scenarios %s", id, id, id))
		}
	}
	all, errs := loadScenarios(s.paths)
	if len(errs) > 0 {
		return nil, usageErr(fmt.Errorf("loading scenarios: %w", errs))
	}
	if err := scenarios.CheckUniqueIDs(all); err != nil {
		return nil, usageErr(err)
	}
	for _, path := range s.expectations {
		var err error
		if all, err = attachExpectations(all, path); err != nil {
			return nil, err
		}
	}
	cfg, err := loadConfig(s.config)
	if err != nil {
		return nil, usageErr(err)
	}
	for _, id := range s.ids {
		if !slices.ContainsFunc(all, func(sc *scenarios.Scenario) bool { return sc.ID == id }) {
			return nil, usageErr(fmt.Errorf("no scenario %q in %s%s", id, s.source(), suggest(id, all)))
		}
	}
	list, err := cfg.Select(all, scenarios.Selection{Suite: s.suite, Stage: s.stage, IDs: s.ids})
	if err != nil {
		return nil, usageErr(fmt.Errorf("%w (in %s)", err, s.source()))
	}
	return &loaded{selected: list, all: all, cfg: cfg}, nil
}

// attachExpectations returns list with the expectations file at path
// attached.
func attachExpectations(list []*scenarios.Scenario, path string) ([]*scenarios.Scenario, error) {
	e, err := scenarios.LoadExpectations(path)
	if err != nil {
		return nil, usageErr(err)
	}
	out, err := e.Attach(list)
	if err != nil {
		return nil, usageErr(err)
	}
	return out, nil
}

// attachProfile attaches the expectations file the profile names, if any,
// to the loaded scenarios; it must be the expectations of that server.
func (l *loaded) attachProfile(p *recorder.Profile) error {
	path := p.ExpectationsPath()
	if path == "" {
		return nil
	}
	e, err := scenarios.LoadExpectations(path)
	if err != nil {
		return usageErr(fmt.Errorf("%s: expectations: %w", p.File, err))
	}
	if e.Server != p.Name {
		return usageErr(fmt.Errorf("%s: expectations: %s holds the expectations of server %q, and the profile is %q", p.File, path, e.Server, p.Name))
	}
	all, err := e.Attach(l.all)
	if err != nil {
		return usageErr(err)
	}
	byID := make(map[string]*scenarios.Scenario, len(all))
	for _, sc := range all {
		byID[sc.ID] = sc
	}
	for i, sc := range l.selected {
		l.selected[i] = byID[sc.ID]
	}
	l.all = all
	return nil
}

// source names where the scenarios came from, for errors.
func (s *selection) source() string {
	if len(s.paths) == 0 {
		return "the built-in golden suite (--scenarios loads others)"
	}
	return strings.Join(s.paths, ", ")
}

// looksLikePath reports a --scenario value that names a file rather than
// an id: ids are letters, digits, '-' and '_'.
func looksLikePath(v string) bool {
	return strings.ContainsAny(v, `/\`) || strings.HasSuffix(v, ".yaml") || strings.HasSuffix(v, ".yml")
}

// suggest names the loaded ids closest to id, if any is close.
func suggest(id string, all []*scenarios.Scenario) string {
	var ids []string
	for _, s := range all {
		ids = append(ids, s.ID)
	}
	if near := scenarios.Nearest(id, ids, 3); len(near) > 0 {
		return "; did you mean " + strings.Join(near, ", ") + "?"
	}
	return ""
}

// loadConfig returns the stages in effect: the built-in stages, with path
// read over them. path "" means ./bench.yaml when it exists.
func loadConfig(path string) (*scenarios.Config, error) {
	base := scenarios.DefaultConfig()
	if path == "" {
		if _, err := os.Stat(defaultConfigFile); errors.Is(err, fs.ErrNotExist) {
			return base, nil
		}
		path = defaultConfigFile
	}
	c, err := scenarios.LoadConfigFile(path)
	if err != nil {
		return nil, err
	}
	return c.Over(base), nil
}
