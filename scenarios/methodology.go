package scenarios

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"

	"gopkg.in/yaml.v3"
)

// methodologyDoc is a scenario in the methodology's format (seeds/000,
// "Scenario format"): these fields and nothing more. A document is read
// this way when it has no format key.
type methodologyDoc struct {
	ID            string              `yaml:"id"`
	Intent        string              `yaml:"intent"`
	Platform      string              `yaml:"platform"`
	Fixture       string              `yaml:"fixture"`
	WriteGate     string              `yaml:"write_gate"`
	ExpectedTools map[string][]string `yaml:"expected_tools"`
	Expect        struct {
		APICalls    []string `yaml:"api_calls"`
		MustNotCall []string `yaml:"must_not_call"`
	} `yaml:"expect"`
	Evidence evidenceField `yaml:"evidence"`
}

// evidenceField is the methodology's evidence: one pin for the scenario
// ("path/to/source.py:123@<sha>"), a list of pins, or bench's mapping of
// server to pin.
type evidenceField struct {
	keyed   map[string]string
	unkeyed []string
}

func (e *evidenceField) decodeNode(d *decoder, n *yaml.Node, path string) {
	switch {
	case n.Kind == yaml.ScalarNode && n.ShortTag() == "!!null":
	case n.Kind == yaml.ScalarNode && n.ShortTag() == "!!str":
		e.unkeyed = []string{n.Value}
	case n.Kind == yaml.SequenceNode:
		d.decode(n, reflect.ValueOf(&e.unkeyed).Elem(), path)
	case n.Kind == yaml.MappingNode:
		d.decode(n, reflect.ValueOf(&e.keyed).Elem(), path)
	default:
		d.errorf(n, path, "want a pin such as path:line@sha, a list of pins or a mapping of server to pin, got %s", kindName(n))
	}
}

// Defaults of a methodology-format scenario (docs/scenarios.md).
const (
	// methodologyCategory is the category of a scenario outside the
	// adversarial suite; adversarial scenarios are safety cases.
	methodologyCategory = "core"
)

// decodeMethodology reads a document without a format key as a scenario in
// the methodology's format and fills in bench's defaults.
func decodeMethodology(s *Scenario, d *decoder, root *yaml.Node) {
	var doc methodologyDoc
	d.unknownHint = methodologyHint
	d.decode(root, reflect.ValueOf(&doc).Elem(), "")
	s.Methodology = true
	s.ID = doc.ID
	s.Intent = doc.Intent
	s.Platform = doc.Platform
	s.Fixture = doc.Fixture
	s.WriteGate = doc.WriteGate
	s.ExpectedTools = doc.ExpectedTools
	for _, c := range doc.Expect.APICalls {
		s.Expect.APICalls = append(s.Expect.APICalls, CallSet{AnyOf: []string{c}})
	}
	s.Expect.MustNotCall = doc.Expect.MustNotCall
	s.Evidence = doc.Evidence.keyed
	s.UnkeyedEvidence = doc.Evidence.unkeyed
	s.Suite = suiteOfID(s.ID)
	s.Category = methodologyCategory
	if s.Suite == "adversarial" {
		s.Category = "safety"
	}
}

// suiteOfID is the suite an id starts with ("client-diagnosis-001" is in
// client-diagnosis), or "".
func suiteOfID(id string) string {
	best := ""
	for _, s := range suites {
		if strings.HasPrefix(id, s+"-") && len(s) > len(best) {
			best = s
		}
	}
	return best
}

// methodologyHint explains an unknown field of a methodology-format
// document that is one of bench's own.
func methodologyHint(path string) string {
	top, rest, nested := strings.Cut(path, ".")
	known := structFields(reflect.TypeFor[Scenario]())
	if nested {
		if top != "expect" {
			return ""
		}
		known, top = structFields(reflect.TypeFor[Expect]()), rest
	}
	if _, ok := known[top]; !ok {
		return ""
	}
	return "the methodology's scenario format has no " + path + " (a document without a format key is read in that format; bench's own fields need format: 1)"
}

// isFixturePath reports whether a fixture names a bundle by path rather
// than a built-in bundle by name.
func isFixturePath(name string) bool {
	return strings.ContainsAny(name, `/\`) || IsManifest(name)
}

// resolveFixture resolves a fixture named by path, relative to the
// manifest's directory: a bundle there (a .yaml file, or a directory holding
// fixture.yaml) is loaded from it; otherwise the path's last element names
// a built-in bundle, as the methodology's "fixtures/central/site-a" names
// site-a.
func (s *Scenario) resolveFixture() {
	name := s.Fixture
	if !isFixturePath(name) {
		return
	}
	p := filepath.FromSlash(name)
	if !filepath.IsAbs(p) {
		p = filepath.Join(filepath.Dir(s.File), p)
	}
	resolved := strings.TrimSuffix(strings.TrimSuffix(filepath.Base(p), ".yaml"), ".yml")
	if isBundle(p) {
		resolved = p
	}
	if resolved != name {
		s.fixtureAsWritten, s.Fixture = name, resolved
	}
}

// isBundle reports whether path holds a fixture bundle on disk.
func isBundle(path string) bool {
	st, err := os.Stat(path)
	if err != nil {
		return false
	}
	if st.IsDir() {
		st, err = os.Stat(filepath.Join(path, "fixture.yaml"))
		return err == nil && st.Mode().IsRegular()
	}
	return st.Mode().IsRegular()
}
