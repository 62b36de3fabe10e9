package scenarios

import (
	"fmt"
	"slices"
	"strings"

	"gopkg.in/yaml.v3"
)

// A listed manifest holds the methodology's scenarios in one document, as
// a list under a header:
//
//	manifest_version: 1
//	pinned: {server: sha, ...}          # informational
//	fixture_default: fixtures/central/site-a
//	scenarios:
//	  - id: client-diagnosis-001
//	    intent: ...
//	    allowed_tools: [read]           # the write gate
//	    expect:
//	      api_calls: [...]
//	      tools: {server: [tool, ...]}  # the expected tools
//	      coverage: {server: absent}
//	      must_not_call: [...]
//
// Each entry is read in the methodology's format, with the layout's own
// names mapped onto it (docs/scenarios.md, "Listed manifests"); what bench
// cannot check is dropped with a lint warning, never silently.

// listedHeader are the keys a listed manifest's header may have.
var listedHeader = []string{"manifest_version", "generated_by", "pinned", "fixture_default", "scenarios"}

// isListed reports whether a document is a listed manifest: a mapping
// with a scenarios list and neither a format key nor an id.
func isListed(root *yaml.Node) bool {
	root = resolve(root)
	if root == nil || root.Kind != yaml.MappingNode || hasKey(root, "format") || hasKey(root, "id") {
		return false
	}
	v := mapValue(root, "scenarios")
	return v != nil && resolve(v) != nil && resolve(v).Kind == yaml.SequenceNode
}

// decodeListed reads a listed manifest's scenarios.
func decodeListed(file string, root *yaml.Node, fields fieldCache) ([]*Scenario, ErrorList) {
	root = resolve(root)
	var errs ErrorList
	at := func(n *yaml.Node, field, format string, args ...any) {
		errs = append(errs, &Error{File: file, Pos: Pos{n.Line, n.Column}, Field: field, Msg: fmt.Sprintf(format, args...)})
	}
	fixtureDefault := ""
	for i := 0; i+1 < len(root.Content); i += 2 {
		k, v := root.Content[i], resolve(root.Content[i+1])
		switch k.Value {
		case "manifest_version":
			if v == nil || v.Kind != yaml.ScalarNode || v.Value != "1" {
				at(k, k.Value, "unsupported manifest_version %s; this bench reads 1", nodeText(v))
			}
		case "fixture_default":
			if v == nil || v.Kind != yaml.ScalarNode {
				at(k, k.Value, "want a fixture name or path")
			} else {
				fixtureDefault = v.Value
			}
		case "generated_by", "pinned", "scenarios":
		default:
			at(k, k.Value, "unknown field %q of a listed manifest (want one of %s)", k.Value, strings.Join(listedHeader, ", "))
		}
	}
	var out []*Scenario
	list := resolve(mapValue(root, "scenarios"))
	for _, entry := range list.Content {
		e := resolve(entry)
		if e == nil || e.Kind != yaml.MappingNode {
			at(entry, "scenarios", "a scenario must be a mapping, got %s", kindOf(e))
			continue
		}
		mapped := mapListedEntry(e, fixtureDefault)
		s, derrs := decodeScenario(file, e, fields)
		errs = append(errs, derrs...)
		if s == nil {
			continue
		}
		mapped.apply(s)
		out = append(out, s)
	}
	return out, errs
}

// listedEntry is what mapListedEntry took out of an entry to set after it
// is decoded in the methodology's format.
type listedEntry struct {
	suite, notes string
	absent       []string
	dropped      []dialectNote
}

// dialectNote is a field of another manifest layout that bench read
// differently or not at all: a lint warning at its position.
type dialectNote struct {
	path string
	pos  Pos
	msg  string
}

func (m *listedEntry) apply(s *Scenario) {
	if m.suite != "" {
		s.Suite = m.suite
	}
	if m.notes != "" {
		s.Notes = m.notes
	}
	for _, srv := range m.absent {
		if s.ExpectedTools == nil {
			s.ExpectedTools = map[string][]string{}
		}
		if len(s.ExpectedTools[srv]) == 0 {
			s.ExpectedTools[srv] = []string{} // the methodology's absent
		}
	}
	// Evidence keys that name no server with tools are the layout's notes
	// (endpoint, note, mechanism, why a server is absent): kept as notes.
	var kept []string
	for _, k := range sortedKeys(s.Evidence) {
		if len(s.ExpectedTools[k]) == 0 {
			s.Notes = strings.TrimPrefix(s.Notes+"\nevidence, "+k+": "+s.Evidence[k], "\n")
			kept = append(kept, k)
		}
	}
	if len(kept) > 0 {
		m.dropped = append(m.dropped, dialectNote{path: "evidence", pos: s.PosOf("evidence." + kept[0]),
			msg: strings.Join(kept, ", ") + " name no server with tools here: kept as notes, not checked as pins"})
		for _, k := range kept {
			delete(s.Evidence, k)
		}
	}
	for _, n := range m.dropped {
		s.pos[n.path] = n.pos
		s.dialect = append(s.dialect, n)
	}
}

// mapListedEntry rewrites one entry, in place, into the methodology's
// format and returns what it took out.
func mapListedEntry(e *yaml.Node, fixtureDefault string) *listedEntry {
	m := &listedEntry{}
	note := func(k *yaml.Node, path, format string, args ...any) {
		m.dropped = append(m.dropped, dialectNote{path: path, pos: Pos{k.Line, k.Column}, msg: fmt.Sprintf(format, args...)})
	}
	if k, v := takeKey(e, "suite"); k != nil && v.Kind == yaml.ScalarNode {
		m.suite = v.Value
	}
	var notes []string
	if k, v := takeKey(e, "note"); k != nil && v.Kind == yaml.ScalarNode {
		notes = append(notes, v.Value)
	}
	if k, v := takeKey(e, "notes"); k != nil && v.Kind == yaml.ScalarNode {
		notes = append(notes, v.Value)
	}
	if k, _ := takeKey(e, "fixture_entities"); k != nil {
		note(k, "fixture_entities", "free text, not checked against the fixture (bench's entities: field is checked)")
	}
	// write_gate: a narrative per server in this layout; allowed_tools
	// carries the gate itself.
	if k, v := mapKey(e, "write_gate"); k != nil && v.Kind == yaml.MappingNode {
		takeKey(e, "write_gate")
		for i := 0; i+1 < len(v.Content); i += 2 {
			notes = append(notes, "write gate, "+v.Content[i].Value+": "+nodeText(v.Content[i+1]))
		}
		note(k, "write_gate", "a description per server, kept as notes: the gate is allowed_tools")
	}
	if k, v := takeKey(e, "allowed_tools"); k != nil {
		gate := ""
		if v.Kind == yaml.SequenceNode && len(v.Content) == 1 && v.Content[0].Kind == yaml.ScalarNode {
			gate = v.Content[0].Value
		}
		switch {
		case mapValue(e, "write_gate") != nil:
			note(k, "allowed_tools", "ignored: write_gate is given")
		case slices.Contains([]string{GateRead, GateWrite, GateDestructive}, gate):
			setKey(e, k, "write_gate", gate)
		default:
			note(k, "allowed_tools", "%s is no write gate (want [read], [write] or [destructive])", nodeText(v))
		}
	}
	if mapValue(e, "fixture") == nil && fixtureDefault != "" {
		setKey(e, &yaml.Node{Line: e.Line, Column: e.Column}, "fixture", fixtureDefault)
	}
	// expect.tools are the expected tools; coverage {server: absent} the
	// methodology's empty list.
	if _, expect := mapKey(e, "expect"); expect != nil && expect.Kind == yaml.MappingNode {
		if k, v := takeKey(expect, "tools"); k != nil {
			if mapValue(e, "expected_tools") == nil {
				k.Value = "expected_tools"
				e.Content = append(e.Content, k, v)
			} else {
				note(k, "expect.tools", "ignored: expected_tools is given")
			}
		}
		for _, holder := range []*yaml.Node{expect, e} {
			k, v := takeKey(holder, "coverage")
			if k == nil {
				continue
			}
			if v.Kind != yaml.MappingNode {
				note(k, "coverage", "want {server: absent}, got %s", kindName(v))
				continue
			}
			for i := 0; i+1 < len(v.Content); i += 2 {
				if strings.EqualFold(nodeText(v.Content[i+1]), "absent") {
					m.absent = append(m.absent, v.Content[i].Value)
				} else {
					note(v.Content[i], "coverage."+v.Content[i].Value, "%s: only absent is read", nodeText(v.Content[i+1]))
				}
			}
		}
	}
	m.notes = strings.Join(notes, "\n")
	return m
}

func mapKey(m *yaml.Node, key string) (*yaml.Node, *yaml.Node) {
	for i := 0; i+1 < len(m.Content); i += 2 {
		if m.Content[i].Value == key {
			return m.Content[i], resolve(m.Content[i+1])
		}
	}
	return nil, nil
}

func mapValue(m *yaml.Node, key string) *yaml.Node {
	_, v := mapKey(m, key)
	return v
}

// takeKey removes key from mapping m and returns its key and value nodes.
func takeKey(m *yaml.Node, key string) (*yaml.Node, *yaml.Node) {
	for i := 0; i+1 < len(m.Content); i += 2 {
		if m.Content[i].Value == key {
			k, v := m.Content[i], resolve(m.Content[i+1])
			m.Content = append(m.Content[:i:i], m.Content[i+2:]...)
			if v == nil {
				v = &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!null"}
			}
			return k, v
		}
	}
	return nil, nil
}

// setKey adds key: value to mapping m, at the position of at.
func setKey(m, at *yaml.Node, key, value string) {
	m.Content = append(m.Content,
		&yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: key, Line: at.Line, Column: at.Column},
		&yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: value, Line: at.Line, Column: at.Column})
}

// nodeText is a node as YAML flow text, for messages.
func nodeText(n *yaml.Node) string {
	if n == nil {
		return "nothing"
	}
	if n.Kind == yaml.ScalarNode {
		return n.Value
	}
	out, err := yaml.Marshal(n)
	if err != nil {
		return kindName(n)
	}
	return strings.TrimSpace(strings.ReplaceAll(string(out), "\n", " "))
}
