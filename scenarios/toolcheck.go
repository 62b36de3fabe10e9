package scenarios

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
)

// ToolList is a server's tool list as `bench servers check --save-tools`
// captured it: what lint checks the scenarios' expected tools and
// parameter rules against. Server is the name the scenarios use for it,
// which may be another profile's than the one that exposed the tools (a
// router's inner tools are listed by its direct-mode profile).
type ToolList struct {
	Format  int            `json:"format"`
	Server  string         `json:"server"`
	Profile string         `json:"profile,omitempty"`
	Repo    string         `json:"repo,omitempty"`
	SHA     string         `json:"sha,omitempty"`
	Tools   []CapturedTool `json:"tools"`
	File    string         `json:"-"`
}

// CapturedTool is one tool of a ToolList.
type CapturedTool struct {
	Name        string          `json:"name"`
	Description string          `json:"description,omitempty"`
	InputSchema json.RawMessage `json:"input_schema,omitempty"`
	// Annotations are the tool's MCP annotations (readOnlyHint, ...).
	Annotations json.RawMessage `json:"annotations,omitempty"`
}

// ReadOnly reports whether the tool is annotated readOnlyHint: true.
func (t *CapturedTool) ReadOnly() bool {
	var a struct {
		ReadOnly bool `json:"readOnlyHint"`
	}
	return len(t.Annotations) > 0 && json.Unmarshal(t.Annotations, &a) == nil && a.ReadOnly
}

// ToolListFormat is the version of the tool list file format.
const ToolListFormat = 1

// LoadToolLists reads tool list files: each path is a file, or a directory
// whose *.json files are read.
func LoadToolLists(paths ...string) ([]*ToolList, error) {
	var out []*ToolList
	for _, p := range paths {
		files := []string{p}
		if fi, err := os.Stat(p); err == nil && fi.IsDir() {
			files, _ = filepath.Glob(filepath.Join(p, "*.json"))
			slices.Sort(files)
		}
		for _, f := range files {
			data, err := readFile(f)
			if err != nil {
				return nil, ErrorList{{File: f, Msg: "cannot read: " + pathErr(err)}}
			}
			var l ToolList
			if err := json.Unmarshal(data, &l); err != nil {
				return nil, ErrorList{{File: f, Msg: "not a tool list: " + err.Error()}}
			}
			if l.Format != ToolListFormat || l.Server == "" {
				return nil, ErrorList{{File: f, Msg: fmt.Sprintf("not a tool list of format %d with a server (bench servers check --save-tools writes one)", ToolListFormat)}}
			}
			l.File = f
			out = append(out, &l)
		}
	}
	return out, nil
}

// toolSchema is what lint reads of an input schema.
type toolSchema struct {
	Properties  map[string]json.RawMessage `json:"properties"`
	Required    []string                   `json:"required"`
	Defs        map[string]json.RawMessage `json:"$defs"`
	Definitions map[string]json.RawMessage `json:"definitions"`
}

// schemaNode is what enumOf reads of one (sub)schema.
type schemaNode struct {
	Enum  []any             `json:"enum"`
	Const any               `json:"const"`
	Type  any               `json:"type"`
	Ref   string            `json:"$ref"`
	Items json.RawMessage   `json:"items"`
	AnyOf []json.RawMessage `json:"anyOf"`
	OneOf []json.RawMessage `json:"oneOf"`
}

// enumOf returns the values an argument's schema allows, when it allows
// only listed values: an enum (or const), through $ref, anyOf and oneOf
// (a null branch aside, as Optional[Enum] writes it) and a list's items.
func (t *toolSchema) enumOf(raw json.RawMessage, depth int) ([]any, bool) {
	var n schemaNode
	if depth > 8 || json.Unmarshal(raw, &n) != nil {
		return nil, false
	}
	switch {
	case n.Enum != nil:
		return n.Enum, true
	case n.Const != nil:
		return []any{n.Const}, true
	case n.Ref != "":
		name := n.Ref[strings.LastIndex(n.Ref, "/")+1:]
		def, ok := t.Defs[name]
		if !ok {
			def, ok = t.Definitions[name]
		}
		if !ok {
			return nil, false
		}
		return t.enumOf(def, depth+1)
	case len(n.Items) > 0:
		return t.enumOf(n.Items, depth+1)
	}
	branches := append(n.AnyOf, n.OneOf...)
	if len(branches) == 0 {
		return nil, false
	}
	var all []any
	for _, b := range branches {
		var bn schemaNode
		if json.Unmarshal(b, &bn) == nil && bn.Type == "null" && bn.Enum == nil {
			continue
		}
		vs, ok := t.enumOf(b, depth+1)
		if !ok {
			return nil, false // a branch that takes any value
		}
		all = append(all, vs...)
	}
	return all, len(all) > 0
}

// CheckTools checks the scenarios' expected tools and parameter rules
// against the servers' captured tool lists: an expected tool the server
// does not list, a required argument no rule gives, an argument the tool
// does not take, a value outside the argument's enum. Servers without a
// list are not checked. Errors name the scenario's file, line and field,
// the server and the tool.
func CheckTools(list []*Scenario, lists []*ToolList) ErrorList {
	byServer := map[string]map[string]*toolSchema{}
	source := map[string]string{}
	for _, l := range lists {
		m := byServer[l.Server]
		if m == nil {
			m = map[string]*toolSchema{}
			byServer[l.Server] = m
		}
		for _, t := range l.Tools {
			var s toolSchema
			_ = json.Unmarshal(t.InputSchema, &s)
			m[t.Name] = &s
		}
		source[l.Server] = fmt.Sprintf("%s, captured at %s", filepath.Base(l.File), shortSHA(l.SHA))
	}
	var errs ErrorList
	for _, s := range list {
		errs = append(errs, s.checkDistractors(byServer, source)...)
		for _, server := range sortedKeys(byServer) {
			tools, ok := s.ToolsFor(server)
			if !ok || s.CallsNoTool {
				continue
			}
			schemas := byServer[server]
			for i, tool := range tools {
				sch := schemas[tool]
				if sch == nil {
					errs = append(errs, s.expectErr(server, tool, i, "", "%s has no tool %q (%s)", server, tool, source[server]))
					continue
				}
				rules := s.ParamsFor(server, tool)
				for _, req := range sch.Required {
					if _, ok := rules[req]; !ok {
						errs = append(errs, s.expectErr(server, tool, i, "*", "%s's %s requires %q: the rules give no value for it (%s)", server, tool, req, source[server]))
					}
				}
				for _, name := range sortedKeys(rules) {
					prop, known := sch.Properties[name]
					if !known && sch.Properties != nil {
						errs = append(errs, s.expectErr(server, tool, i, name, "%s's %s takes no argument %q (it takes %s)", server, tool, name, strings.Join(sortedKeys(sch.Properties), ", ")))
						continue
					}
					enum, closed := sch.enumOf(prop, 0)
					if r := rules[name]; r != nil && closed {
						for _, v := range ruleValues(r) {
							if !inEnum(v, enum, r.Normalize) {
								errs = append(errs, s.expectErr(server, tool, i, name, "%s's %s takes %s for %q, not %s", server, tool, show(enum), name, show(v)))
							}
						}
					}
				}
			}
		}
	}
	errs.Sort()
	return errs
}

// checkDistractors checks that each distractor is a tool a server really
// lists: "server/tool" in that server's list (when captured), a bare name
// in at least one list.
func (s *Scenario) checkDistractors(byServer map[string]map[string]*toolSchema, source map[string]string) ErrorList {
	if len(byServer) == 0 {
		return nil
	}
	var errs ErrorList
	for i, d := range s.Distractors {
		p := fmt.Sprintf("distractors[%d]", i)
		if server, tool, ok := strings.Cut(d, "/"); ok {
			if tools, captured := byServer[server]; captured && tools[tool] == nil {
				errs = append(errs, s.errAt(p, "%s has no tool %q (%s)", server, tool, source[server]))
			}
			continue
		}
		// A bare name is a tool of some server: checked when a server the
		// scenario names has a list (lists of other servers only say
		// nothing of this scenario's tools).
		named := false
		for server := range s.ExpectedTools {
			_, captured := byServer[server]
			named = named || captured
		}
		found := false
		for _, tools := range byServer {
			found = found || tools[d] != nil
		}
		if named && !found {
			errs = append(errs, s.errAt(p, "no server lists a tool %q (lists: %s)", d, strings.Join(sortedKeys(byServer), ", ")))
		}
	}
	return errs
}

// expectErr is an error where the expectation of server's i-th tool is
// written: param "" is the tool itself, "*" its rule set, else that rule.
// That is the scenario's own expected_tools and expected_params, or the
// expectations file beside the server's profile.
func (s *Scenario) expectErr(server, tool string, i int, param, format string, args ...any) *Error {
	msg := fmt.Sprintf(format, args...)
	if e := s.overlayFile[server]; e != nil {
		path := fmt.Sprintf("scenarios.%s.tools[%d]", s.ID, i)
		switch param {
		case "":
		case "*":
			if _, ok := s.overlay[server].Params[tool]; ok {
				path = "scenarios." + s.ID + ".params." + tool
			}
		default:
			path = "scenarios." + s.ID + ".params." + tool + "." + param
		}
		return &Error{File: e.File, Pos: e.posOf(path), Field: path, ID: s.ID, Msg: msg}
	}
	path := fmt.Sprintf("expected_tools.%s[%d]", server, i)
	key := ""
	if _, ok := s.ExpectedParams[server+"/"+tool]; ok {
		key = "expected_params." + server + "/" + tool
	} else if _, ok := s.ExpectedParams[tool]; ok {
		key = "expected_params." + tool
	}
	switch {
	case param == "" || key == "":
	case param == "*":
		path = key
	default:
		path = key + "." + param
	}
	return s.errAt(path, "%s", msg)
}

// ruleValues are the exact values a rule names (equals, or each of
// one_of; each element of a list).
func ruleValues(r *ParamRule) []any {
	var vs []any
	add := func(v any) {
		if l, ok := v.([]any); ok {
			vs = append(vs, l...)
		} else if v != nil {
			vs = append(vs, v)
		}
	}
	add(r.Equals)
	for _, v := range r.OneOf {
		add(v)
	}
	return vs
}

func inEnum(v any, enum []any, normalize string) bool {
	for _, e := range enum {
		if equalValues(e, v, &ParamRule{Normalize: normalize}) {
			return true
		}
	}
	return false
}

func shortSHA(s string) string {
	if len(s) > 8 {
		return s[:8]
	}
	if s == "" {
		return "no SHA"
	}
	return s
}
