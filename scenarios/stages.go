package scenarios

import (
	"bytes"
	_ "embed"
	"errors"
	"fmt"
	"io"
	"reflect"
	"slices"
	"strings"
	"time"

	"gopkg.in/yaml.v3"
)

// ConfigFormatVersion is the bench.yaml format this package reads.
const ConfigFormatVersion = 1

// Config is bench.yaml: the stages of the evaluation pipeline.
type Config struct {
	Format int      `yaml:"format" json:"format"`
	Stages []*Stage `yaml:"stages" json:"stages"`

	File string `yaml:"-" json:"-"`
	pos  map[string]Pos
}

// Stage selects the scenarios one CI stage runs. A scenario belongs to the
// stage when it matches any selector of Include and no selector of Exclude.
type Stage struct {
	Name        string `yaml:"name" json:"name"`
	Description string `yaml:"description,omitempty" json:"description,omitempty"`
	// MaxScenarios, when above zero, is the most scenarios the stage may
	// select (smoke must stay fast); more is a configuration error.
	MaxScenarios int `yaml:"max_scenarios,omitempty" json:"max_scenarios,omitempty"`
	// Runs is the number of runs per scenario the stage asks for (bench
	// record --stage records that many unless --runs says otherwise); a
	// report on the stage warns of a scenario with fewer scored runs. 0
	// means DefaultRuns.
	Runs    int        `yaml:"runs,omitempty" json:"runs,omitempty"`
	Include []Selector `yaml:"include" json:"include"`
	Exclude []Selector `yaml:"exclude,omitempty" json:"exclude,omitempty"`
	// Gate holds the stage's pass criteria. Its shape belongs to the gate
	// (scoring), which decodes it; this package keeps it as written.
	Gate map[string]any `yaml:"gate" json:"gate,omitempty"`
}

// DefaultRuns is the runs per scenario a stage asks for when it names
// none: the methodology's "each scenario runs ≥5 times".
const DefaultRuns = 5

// RunsAsked is the runs per scenario the stage asks for.
func (st *Stage) RunsAsked() int {
	if st == nil || st.Runs <= 0 {
		return DefaultRuns
	}
	return st.Runs
}

// Selector matches scenarios. Every non-empty list must match (a scenario's
// suite is in Suites, its category in Categories, it has one of Tags, its id
// is in IDs); an empty selector matches everything.
type Selector struct {
	Suites     []string `yaml:"suites,omitempty" json:"suites,omitempty"`
	Categories []string `yaml:"categories,omitempty" json:"categories,omitempty"`
	Tags       []string `yaml:"tags,omitempty" json:"tags,omitempty"`
	IDs        []string `yaml:"ids,omitempty" json:"ids,omitempty"`
}

// Matches reports whether s satisfies every list of the selector.
func (sel Selector) Matches(s *Scenario) bool {
	if len(sel.Suites) > 0 && !slices.Contains(sel.Suites, s.Suite) {
		return false
	}
	if len(sel.Categories) > 0 && !slices.Contains(sel.Categories, s.Category) {
		return false
	}
	if len(sel.Tags) > 0 && !slices.ContainsFunc(sel.Tags, s.HasTag) {
		return false
	}
	if len(sel.IDs) > 0 && !slices.Contains(sel.IDs, s.ID) {
		return false
	}
	return true
}

// Select returns the scenarios of list the stage runs, in list order.
func (st *Stage) Select(list []*Scenario) []*Scenario {
	var out []*Scenario
	for _, s := range list {
		in := slices.ContainsFunc(st.Include, func(sel Selector) bool { return sel.Matches(s) })
		excluded := slices.ContainsFunc(st.Exclude, func(sel Selector) bool { return sel.Matches(s) })
		if in && !excluded {
			out = append(out, s)
		}
	}
	return out
}

// Stage returns the stage called name, or nil.
func (c *Config) Stage(name string) *Stage {
	for _, st := range c.Stages {
		if st.Name == name {
			return st
		}
	}
	return nil
}

// ParseConfig reads bench.yaml strictly (unknown fields are errors, except
// inside gate, which the gate decodes).
func ParseConfig(file string, data []byte) (*Config, error) {
	c := &Config{File: file, pos: map[string]Pos{}}
	dec := yaml.NewDecoder(bytes.NewReader(data))
	var doc yaml.Node
	err := safeDecode(dec, &doc)
	if errors.Is(err, io.EOF) {
		return nil, ErrorList{{File: file, Msg: "empty configuration"}}
	}
	if err != nil {
		return nil, ErrorList{syntaxError(file, err)}
	}
	if len(doc.Content) == 0 {
		return nil, ErrorList{{File: file, Msg: "empty configuration"}}
	}
	d := &decoder{file: file, pos: c.pos}
	root := resolve(doc.Content[0])
	if root == nil || root.Kind != yaml.MappingNode {
		return nil, ErrorList{{File: file, Pos: Pos{doc.Line, doc.Column}, Msg: "want a mapping with format and stages"}}
	}
	d.decode(root, reflect.ValueOf(c).Elem(), "")
	if c.Format != ConfigFormatVersion {
		d.errorf(root, "format", "unsupported format %d; this bench reads format %d", c.Format, ConfigFormatVersion)
	}
	d.errs.Sort()
	if len(d.errs) > 0 {
		return c, d.errs
	}
	return c, nil
}

// ValidateConfig checks the stages against the scenarios they select from:
// unique names, known suites and categories, ids that exist and
// MaxScenarios respected. A stage that selects none of them is a warning
// (Error.Warning): it may be meant for other manifests.
func ValidateConfig(c *Config, list []*Scenario) error {
	var errs ErrorList
	at := func(path, format string, args ...any) {
		p := c.pos[path]
		errs = append(errs, &Error{File: c.File, Pos: p, Field: path, Msg: fmt.Sprintf(format, args...)})
	}
	ids := map[string]bool{}
	for _, s := range list {
		ids[s.ID] = true
	}
	names := map[string]bool{}
	for i, st := range c.Stages {
		p := fmt.Sprintf("stages[%d]", i)
		if st.Name == "" {
			at(p, "stage without a name")
		} else if names[st.Name] {
			at(p+".name", "duplicate stage %q", st.Name)
		}
		names[st.Name] = true
		if len(st.Include) == 0 {
			at(p, "stage %q includes nothing (add include selectors)", st.Name)
		}
		if st.Runs < 0 {
			at(p+".runs", "stage %q: runs %d: must be at least 1 (or left out: %d)", st.Name, st.Runs, DefaultRuns)
		}
		for kind, sels := range map[string][]Selector{"include": st.Include, "exclude": st.Exclude} {
			for j, sel := range sels {
				sp := fmt.Sprintf("%s.%s[%d]", p, kind, j)
				for _, v := range sel.Suites {
					if !slices.Contains(suites, v) {
						at(sp+".suites", "unknown suite %q", v)
					}
				}
				for _, v := range sel.Categories {
					if !slices.Contains(categories, v) {
						at(sp+".categories", "unknown category %q", v)
					}
				}
				for _, v := range sel.IDs {
					if !ids[v] {
						at(sp+".ids", "no scenario %q", v)
					}
				}
			}
		}
		n := len(st.Select(list))
		if len(st.Include) > 0 && n == 0 {
			// Which scenarios a stage selects depends on the manifests
			// loaded: the built-in stages select none of a user's own.
			errs = append(errs, &Error{File: c.File, Pos: c.pos[p], Field: p, Warning: true,
				Msg: fmt.Sprintf("stage %q selects none of the loaded scenarios", st.Name)})
		}
		if st.MaxScenarios > 0 && n > st.MaxScenarios {
			at(p+".max_scenarios", "stage %q selects %d scenarios, more than max_scenarios %d", st.Name, n, st.MaxScenarios)
		}
	}
	errs.Sort()
	return errs.Err()
}

func mustTime(s string) time.Time {
	t, err := time.Parse(time.RFC3339, s)
	if err != nil {
		panic(err)
	}
	return t
}

// Counts summarises a list of scenarios.
type Counts struct {
	Total      int            `json:"total"`
	Suites     map[string]int `json:"suites"`
	Categories map[string]int `json:"categories"`
	// Servers counts the scenarios each compared server has coverage for.
	Servers map[string]int `json:"servers"`
	// Fixtures counts the scenarios on each fixture bundle.
	Fixtures map[string]int `json:"fixtures"`
	// Distractors counts the scenarios that name distractor tools.
	Distractors int `json:"distractors"`
	// Paging counts the scenarios that must read a list to its end at a
	// small page size (page_size and an all_pages call), by fixture.
	Paging map[string]int `json:"paging"`
}

// Count tallies scenarios by suite, category and covered server.
func Count(list []*Scenario) Counts {
	c := Counts{Total: len(list), Suites: map[string]int{}, Categories: map[string]int{}, Servers: map[string]int{},
		Fixtures: map[string]int{}, Paging: map[string]int{}}
	servers := ServerNames(list)
	for _, s := range list {
		c.Suites[s.Suite]++
		c.Categories[s.Category]++
		c.Fixtures[s.Fixture]++
		if len(s.Distractors) > 0 {
			c.Distractors++
		}
		if s.PageSize > 0 && slices.ContainsFunc(s.Expect.APICalls, func(c CallSet) bool { return c.AllPages }) {
			c.Paging[s.Fixture]++
		}
		for _, srv := range servers {
			if _, ok := s.ToolsFor(srv); ok {
				c.Servers[srv]++
			}
		}
	}
	return c
}

// LoadConfigFile reads and parses a bench.yaml.
func LoadConfigFile(path string) (*Config, error) {
	data, err := readFile(path)
	if err != nil {
		return nil, ErrorList{{File: path, Msg: "cannot read: " + pathErr(err)}}
	}
	return ParseConfig(path, data)
}

//go:embed stages.yaml
var builtinStages []byte

// BuiltinConfigName names the built-in stages in errors and reports.
const BuiltinConfigName = "(built-in stages)"

// BuiltinStages returns the stages built into bench (scenarios/stages.yaml):
// smoke, core and safety over the golden suite.
func BuiltinStages() []byte { return bytes.Clone(builtinStages) }

// DefaultConfig parses the built-in stages.
func DefaultConfig() *Config {
	c, err := ParseConfig(BuiltinConfigName, builtinStages)
	if err != nil {
		panic("scenarios: the built-in stages do not parse: " + err.Error())
	}
	return c
}

// Over returns the built-in stages with c's read over them: a stage of c
// replaces the built-in stage of the same name (whole: its selectors, runs
// and gate), a stage of a new name is added after them. The result names
// c's file, and positions in errors are c's.
func (c *Config) Over(base *Config) *Config {
	out := &Config{Format: c.Format, File: c.File, pos: c.pos}
	for _, st := range base.Stages {
		if own := c.Stage(st.Name); own != nil {
			out.Stages = append(out.Stages, own)
		} else {
			out.Stages = append(out.Stages, st)
		}
	}
	for _, st := range c.Stages {
		if base.Stage(st.Name) == nil {
			out.Stages = append(out.Stages, st)
		}
	}
	return out
}

// Selection names scenarios as bench's commands do: by suite, by stage of
// a Config, by id. Every part given must match.
type Selection struct {
	Suite string
	Stage string
	IDs   []string
}

// Select returns the scenarios of list that sel names, in list order. c
// is needed only for a stage. It fails when a stage or an id does not
// exist, or when nothing matches.
func (c *Config) Select(list []*Scenario, sel Selection) ([]*Scenario, error) {
	out := list
	if sel.Stage != "" {
		if c == nil {
			return nil, fmt.Errorf("stage %q: no bench.yaml", sel.Stage)
		}
		st := c.Stage(sel.Stage)
		if st == nil {
			var names []string
			for _, s := range c.Stages {
				names = append(names, s.Name)
			}
			return nil, fmt.Errorf("%s has no stage %q (have %s)", c.File, sel.Stage, strings.Join(names, ", "))
		}
		out = st.Select(out)
	}
	for _, id := range sel.IDs {
		if !slices.ContainsFunc(list, func(s *Scenario) bool { return s.ID == id }) {
			return nil, fmt.Errorf("no scenario %q", id)
		}
	}
	var keep []*Scenario
	for _, s := range out {
		if (sel.Suite == "" || s.Suite == sel.Suite) && (len(sel.IDs) == 0 || slices.Contains(sel.IDs, s.ID)) {
			keep = append(keep, s)
		}
	}
	if len(keep) == 0 {
		return nil, errors.New("the selection matches no scenario")
	}
	return keep, nil
}
