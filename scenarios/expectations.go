package scenarios

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"reflect"
	"slices"
	"strings"

	"gopkg.in/yaml.v3"
)

// Expectations are one server's expected tools, tool-argument rules and
// evidence for scenarios defined elsewhere (the golden suite, another
// project's manifest): a file beside the server's profile, so a
// maintainer sharpens their server's score without touching the suite
// (docs/scenarios.md, "Expectations beside a profile").
//
//	format: 1
//	server: netdesk
//	scenarios:
//	  alerts-001:
//	    tools: [active_alerts]
//	    params:
//	      active_alerts:
//	        severity: {equals: Critical, normalize: case}
//	    evidence: netdesk.py:38@abc1234
//	  nac-001: {absent: true}
//
// Attached to the scenarios, they are read by ToolsFor, CoverageOf and
// ParamsFor for that server before the scenario's own fields. They are
// not part of the scenario's definition: its hash, and so every stored
// run, does not change with them.
type Expectations struct {
	File   string
	Server string
	doc    expectationsDoc
	pos    map[string]Pos
}

type expectationsDoc struct {
	Format    int                     `yaml:"format"`
	Server    string                  `yaml:"server"`
	Scenarios map[string]*Expectation `yaml:"scenarios"`
}

// Expectation is what one server is expected to do in one scenario.
type Expectation struct {
	// Tools a correct solution calls on the server; empty with Absent.
	Tools []string `yaml:"tools"`
	// Absent: the server has no coverage for the scenario.
	Absent bool `yaml:"absent"`
	// Params are rules for the tools' arguments, by tool.
	Params map[string]map[string]*ParamRule `yaml:"params"`
	// Evidence pins the tools to the server's source: path:line@sha.
	Evidence string `yaml:"evidence"`
}

// ExpectationsFormat is the version of the expectations file format.
const ExpectationsFormat = 1

// LoadExpectations reads an expectations file. Errors name the file, line
// and field.
func LoadExpectations(path string) (*Expectations, error) {
	data, err := readFile(path)
	if err != nil {
		return nil, ErrorList{{File: path, Msg: "cannot read: " + pathErr(err)}}
	}
	return ParseExpectations(path, data)
}

// ParseExpectations parses an expectations file's bytes.
func ParseExpectations(file string, data []byte) (*Expectations, error) {
	var doc yaml.Node
	dec := yaml.NewDecoder(bytes.NewReader(data))
	if err := safeDecode(dec, &doc); err != nil {
		if errors.Is(err, io.EOF) {
			return nil, ErrorList{{File: file, Msg: "empty expectations file"}}
		}
		return nil, ErrorList{syntaxError(file, err)}
	}
	e := &Expectations{File: file, pos: map[string]Pos{}}
	d := &decoder{file: file, pos: e.pos}
	root := resolve(doc.Content[0])
	if root == nil || root.Kind != yaml.MappingNode {
		return nil, ErrorList{{File: file, Pos: Pos{doc.Line, doc.Column}, Msg: "want a mapping with format, server and scenarios"}}
	}
	d.decode(root, reflect.ValueOf(&e.doc).Elem(), "")
	at := func(path, format string, args ...any) {
		d.errs = append(d.errs, &Error{File: file, Pos: e.posOf(path), Field: path, Msg: fmt.Sprintf(format, args...)})
	}
	if e.doc.Format != ExpectationsFormat {
		at("format", "unsupported format %d; this bench reads format %d", e.doc.Format, ExpectationsFormat)
	}
	e.Server = e.doc.Server
	switch {
	case e.Server == "":
		at("server", "required: the name of the server these are the expectations of (its profile's name)")
	case !validServerName(e.Server):
		at("server", "%q: want letters, digits and . _ - (a server profile's name)", e.Server)
	}
	v := &validator{s: &Scenario{File: file, pos: e.pos}}
	server := e.Server
	if server == "" {
		server = "the server"
	}
	for _, id := range sortedKeys(e.doc.Scenarios) {
		x := e.doc.Scenarios[id]
		p := "scenarios." + id
		if slices.ContainsFunc(d.errs, func(err *Error) bool { return under(err.Field, p) }) {
			continue // the decoder has said what is wrong with it
		}
		if x == nil {
			at(p, "want tools, params and evidence, or absent: true")
			continue
		}
		switch {
		case x.Absent && (len(x.Tools) > 0 || len(x.Params) > 0):
			at(p+".absent", "an absent server has no tools or params")
		case !x.Absent && len(x.Tools) == 0:
			at(p+".tools", "required: the tools a correct solution calls on %s (or absent: true)", server)
		}
		for i, t := range x.Tools {
			if strings.TrimSpace(t) == "" {
				at(fmt.Sprintf("%s.tools[%d]", p, i), "empty tool name")
			}
		}
		for _, tool := range sortedKeys(x.Params) {
			if !slices.Contains(x.Tools, tool) {
				at(p+".params."+tool, "tool %q is not in tools", tool)
			}
			for _, name := range sortedKeys(x.Params[tool]) {
				v.checkRule(p+".params."+tool+"."+name, x.Params[tool][name])
			}
		}
	}
	d.errs = append(d.errs, v.errs...)
	d.errs.Sort()
	if len(d.errs) > 0 {
		return nil, d.errs
	}
	return e, nil
}

func (e *Expectations) posOf(path string) Pos {
	if pos, ok := nearestPos(e.pos, path); ok {
		return pos
	}
	return Pos{1, 1}
}

// Attach returns list with the expectations attached to the scenarios
// they name; those are copies, list and its scenarios are left as they are
// (a loaded suite is shared, and only read). An id that is in none of them
// is an error with the nearest ids, and so is a tool the scenario forbids.
func (e *Expectations) Attach(list []*Scenario) ([]*Scenario, error) {
	byID := map[string]*Scenario{}
	var ids []string
	for _, s := range list {
		byID[s.ID] = s
		ids = append(ids, s.ID)
	}
	var errs ErrorList
	for _, id := range sortedKeys(e.doc.Scenarios) {
		p := "scenarios." + id
		s := byID[id]
		if s == nil {
			msg := fmt.Sprintf("no scenario %q among the %d loaded", id, len(list))
			if near := Nearest(id, ids, 3); len(near) > 0 {
				msg += "; did you mean " + strings.Join(near, ", ")
			}
			errs = append(errs, &Error{File: e.File, Pos: e.posOf(p), Field: p, Msg: msg})
			continue
		}
		x := e.doc.Scenarios[id]
		for i, t := range x.Tools {
			if slices.Contains(s.ForbiddenTools, t) {
				errs = append(errs, &Error{File: e.File, Pos: e.posOf(fmt.Sprintf("%s.tools[%d]", p, i)), Field: fmt.Sprintf("%s.tools[%d]", p, i),
					Msg: fmt.Sprintf("tool %q is forbidden in %s", t, id)})
			}
		}
		if s.CallsNoTool {
			errs = append(errs, &Error{File: e.File, Pos: e.posOf(p), Field: p, Msg: fmt.Sprintf("%s calls no tool on any server: there is nothing to expect of %s", id, e.Server)})
		}
	}
	if len(errs) > 0 {
		errs.Sort()
		return nil, errs
	}
	out := make([]*Scenario, len(list))
	for i, s := range list {
		x := e.doc.Scenarios[s.ID]
		if x == nil {
			out[i] = s
			continue
		}
		c := *s
		c.overlay = make(map[string]*Expectation, len(s.overlay)+1)
		c.overlayFile = make(map[string]*Expectations, len(s.overlay)+1)
		for k, v := range s.overlay {
			c.overlay[k], c.overlayFile[k] = v, s.overlayFile[k]
		}
		c.overlay[e.Server], c.overlayFile[e.Server] = x, e
		out[i] = &c
	}
	return out, nil
}
