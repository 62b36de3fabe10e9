package scenarios

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"unicode"

	"github.com/santhosh-tekuri/jsonschema/v6"
	"github.com/santhosh-tekuri/jsonschema/v6/kind"
)

// Catalog is what validation needs to know about the fake Central. The
// scenarios package defines it so that it never imports the fake; cmd/bench
// adapts fakecentral to it.
type Catalog interface {
	// HasFixture reports whether a fixture bundle of that name exists.
	HasFixture(name string) bool
	// HasEntity reports whether the fixture holds an entity of a kind
	// (site, ap, switch, gateway, client, alert, wlan, ...) with that id.
	HasEntity(fixture, kind, id string) bool
	// Serves reports whether the fake answers method on the path template
	// (placeholders such as {serial} stand for any segment).
	Serves(method, pattern string) bool
	// Class returns the class of a route: read, diagnostic, write,
	// config_write or destructive; "" when no route matches.
	Class(method, path string) string
	// Routes lists every route the fake serves, as templates
	// ("GET /network-monitoring/v1/aps/{serial}"): lint checks that each
	// must_not_call glob can match one of them.
	Routes() []string
}

// fixtureExplainer is a Catalog that can say why a fixture does not load
// (a user's bundle that does not parse, say).
type fixtureExplainer interface {
	FixtureError(name string) error
}

// Route classes a Catalog reports.
const (
	ClassRead        = "read"
	ClassDiagnostic  = "diagnostic"
	ClassWrite       = "write"
	ClassConfigWrite = "config_write"
	ClassDestructive = "destructive"
)

// ValidateOptions configures Validate. A nil *ValidateOptions means
// defaults.
type ValidateOptions struct {
	// Catalog, when set, checks fixtures, entities and routes against the
	// fake Central. Nil skips those checks (the manifests are still checked
	// on their own).
	Catalog Catalog
}

var (
	idPattern  = regexp.MustCompile(`^[a-z0-9][a-z0-9-]*[a-z0-9]$`)
	tagPattern = regexp.MustCompile(`^[a-z0-9][a-z0-9_-]*$`)
	// evidencePattern is path:line[-line]@sha.
	evidencePattern = regexp.MustCompile(`^[^\s:@]+:[0-9]+(-[0-9]+)?@[0-9a-f]{7,40}$`)
	jsonTypes       = []string{"string", "number", "integer", "boolean", "array", "object"}
)

// Validate checks scenarios one by one and as a set (unique ids). It returns
// an ErrorList with every problem, or nil.
func Validate(list []*Scenario, opts *ValidateOptions) error {
	_, err := Lint(list, opts)
	return err
}

// Lint validates as Validate does and returns the warnings apart: what
// loads and is scored, but is looser than it should be (an evidence pin
// that is not path:line@sha, a methodology-format scenario no server has
// tools for). Warnings are sorted, and have Warning set.
func Lint(list []*Scenario, opts *ValidateOptions) (warnings ErrorList, err error) {
	if opts == nil {
		opts = &ValidateOptions{}
	}
	var errs ErrorList
	seen := map[string]*Scenario{}
	var routes *routeSet
	if opts.Catalog != nil {
		routes = &routeSet{cat: opts.Catalog}
	}
	for _, s := range list {
		v := &validator{s: s, cat: opts.Catalog, routes: routes}
		v.check()
		errs = append(errs, v.errs...)
		warnings = append(warnings, v.warns...)
		if s.ID == "" {
			continue
		}
		if first, ok := seen[s.ID]; ok {
			errs = append(errs, s.errAt("id", "duplicate id %q (first defined at %s:%d)", s.ID, first.File, first.PosOf("id").Line))
			continue
		}
		seen[s.ID] = s
	}
	errs.Sort()
	warnings.Sort()
	return warnings, errs.Err()
}

func (s *Scenario) errAt(path, format string, args ...any) *Error {
	return &Error{File: s.File, Pos: s.PosOf(path), Field: path, ID: s.ID, Msg: fmt.Sprintf(format, args...)}
}

type validator struct {
	s      *Scenario
	cat    Catalog
	routes *routeSet // the catalog's routes, shared by a Lint's scenarios
	errs   ErrorList
	warns  ErrorList
}

func (v *validator) errorf(path, format string, args ...any) {
	if v.s.undecoded(path) {
		return
	}
	v.errs = append(v.errs, v.s.errAt(path, format, args...))
}

func (v *validator) warnf(path, format string, args ...any) {
	if v.s.undecoded(path) {
		return
	}
	w := v.s.errAt(path, format, args...)
	w.Warning = true
	v.warns = append(v.warns, w)
}

func (v *validator) check() {
	s := v.s
	if s.Format != FormatVersion && !s.Methodology {
		// The loader has reported it; nothing else can be trusted.
		return
	}
	v.required("id", s.ID)
	if s.ID != "" && !idPattern.MatchString(s.ID) {
		v.errorf("id", "%q: want lower-case letters, digits and dashes, such as client-diagnosis-001", s.ID)
	}
	if s.Methodology {
		// Suite and category are defaults (docs/scenarios.md); the suite
		// comes from the id.
		if s.ID != "" && s.Suite == "" {
			v.errorf("id", "%q: a scenario in the methodology's format is in the suite its id starts with (client-diagnosis-001); start it with one of %s", s.ID, strings.Join(suites, ", "))
		}
		v.oneOf("suite", s.Suite, suites, false)
		for _, n := range s.dialect {
			v.warnf(n.path, "%s", n.msg)
		}
	} else {
		v.oneOf("suite", s.Suite, suites, true)
		v.oneOf("category", s.Category, categories, true)
	}
	v.required("intent", s.Intent)
	v.oneOf("platform", s.Platform, []string{"central"}, true)
	v.required("fixture", s.Fixture)
	v.oneOf("write_gate", s.WriteGate, []string{GateRead, GateWrite, GateDestructive}, true)
	v.oneOf("elicitation", s.Elicitation, []string{ElicitApprove, ElicitDecline}, false)
	if s.MaxTurns < 0 || s.MaxTurns > 100 {
		v.errorf("max_turns", "%d: want 1 to 100 (0 or absent means %d)", s.MaxTurns, DefaultMaxTurns)
	}
	if !s.Methodology {
		v.required("success_criteria", s.SuccessCriteria)
	}
	v.checkTags()
	v.checkFixture()
	v.checkTools()
	v.checkParams()
	v.checkExpect()
	v.checkSchema()
	v.checkFaults()
	v.checkEvidence()
}

func (v *validator) required(path, val string) {
	if strings.TrimSpace(val) == "" {
		v.errorf(path, "required")
	}
}

func (v *validator) oneOf(path, val string, known []string, required bool) {
	if val == "" {
		if required {
			v.errorf(path, "required (one of %s)", strings.Join(known, ", "))
		}
		return
	}
	if !slices.Contains(known, val) {
		v.errorf(path, "unknown value %q (want one of %s)", val, strings.Join(known, ", "))
	}
}

func (v *validator) checkTags() {
	seen := map[string]bool{}
	for i, t := range v.s.Tags {
		p := fmt.Sprintf("tags[%d]", i)
		if !tagPattern.MatchString(t) {
			v.errorf(p, "tag %q: want lower-case letters, digits, - and _", t)
		}
		if seen[t] {
			v.errorf(p, "duplicate tag %q", t)
		}
		seen[t] = true
	}
}

func (v *validator) checkFixture() {
	s := v.s
	for _, kind := range sortedKeys(s.Entities) {
		for i, id := range s.Entities[kind] {
			if strings.TrimSpace(id) == "" {
				v.errorf(fmt.Sprintf("entities.%s[%d]", kind, i), "empty id")
			}
		}
	}
	if v.cat == nil || s.Fixture == "" {
		return
	}
	if !v.cat.HasFixture(s.Fixture) {
		var why error
		if fe, ok := v.cat.(fixtureExplainer); ok && isFixturePath(s.Fixture) {
			why = fe.FixtureError(s.Fixture)
		}
		switch {
		case why != nil:
			v.errorf("fixture", "fixture %q does not load: %v", s.Fixture, why)
		case s.fixtureAsWritten != "":
			tried := filepath.Join(filepath.Dir(s.File), filepath.FromSlash(s.fixtureAsWritten))
			v.errorf("fixture", "fixture %q: no bundle at %s (a .yaml file, or a directory holding fixture.yaml), and %q is not a built-in bundle", s.fixtureAsWritten, tried, s.Fixture)
		default:
			v.errorf("fixture", "fixture %q does not exist in the fake Central", s.Fixture)
		}
		return
	}
	for _, kind := range sortedKeys(s.Entities) {
		for i, id := range s.Entities[kind] {
			if id != "" && !v.cat.HasEntity(s.Fixture, kind, id) {
				v.errorf(fmt.Sprintf("entities.%s[%d]", kind, i), "fixture %q has no %s %q", s.Fixture, kind, id)
			}
		}
	}
}

func (v *validator) checkTools() {
	s := v.s
	covered := ServerNames([]*Scenario{s})
	switch {
	case s.CallsNoTool:
	case len(covered) == 0 && s.Methodology:
		v.warnf("expected_tools", "no server has tools for this scenario: every server left out is judged from the API layer (expect.api_calls), and one given an empty list is absent")
	case len(covered) == 0 && len(s.Expect.APICalls) == 0:
		v.errorf("expected_tools", "required: name the Central calls a correct solution makes (expect.api_calls, which judge every server) or the tools it uses on a server, or set calls_no_tool: true if it calls none")
	}
	if s.Category == "negative" && !s.CallsNoTool {
		v.errorf("calls_no_tool", "a negative scenario's correct solution calls no tool: set calls_no_tool: true")
	}
	for _, server := range sortedKeys(s.ExpectedTools) {
		p := "expected_tools." + server
		if !validServerName(server) {
			v.errorf(p, "server name %q: want letters, digits and . _ - (a server profile's name)", server)
		}
		tools := s.ExpectedTools[server]
		switch {
		case s.CallsNoTool && len(tools) > 0:
			v.errorf(p, "calls_no_tool is set, yet %s has tools", server)
		case s.CallsNoTool:
			v.errorf(p, "calls_no_tool covers every server: leave expected_tools out")
		case len(tools) == 0 && !s.Methodology:
			// The methodology's reading; format 1 once read it as "calls
			// no tool", so a manifest written then is stopped here.
			v.errorf(p, "an empty list means %s is absent (the methodology's reading): leave %s out to judge it from the API layer (absent when its tools reach none of expect.api_calls), or set calls_no_tool: true if a correct solution calls no tool", server, server)
		}
		for i, t := range tools {
			if strings.TrimSpace(t) == "" {
				v.errorf(fmt.Sprintf("%s[%d]", p, i), "empty tool name")
			}
			if slices.Contains(s.ForbiddenTools, t) {
				v.errorf(fmt.Sprintf("%s[%d]", p, i), "tool %q is both expected and forbidden", t)
			}
		}
	}
	for i, t := range s.ForbiddenTools {
		if strings.TrimSpace(t) == "" {
			v.errorf(fmt.Sprintf("forbidden_tools[%d]", i), "empty tool name")
		}
	}
	for i, d := range s.Distractors {
		p := fmt.Sprintf("distractors[%d]", i)
		server, tool, scoped := strings.Cut(d, "/")
		if !scoped {
			server, tool = "", d
		}
		if strings.TrimSpace(tool) == "" {
			v.errorf(p, "empty tool name")
			continue
		}
		for _, srv := range sortedKeys(s.ExpectedTools) {
			if (server == "" || server == srv) && slices.Contains(s.ExpectedTools[srv], tool) {
				v.errorf(p, "%q is an expected tool of %s, not a distractor", tool, srv)
			}
		}
	}
	if s.PageSize < 0 || s.PageSize > 1000 {
		v.errorf("page_size", "%d: want the items per page, 1 to 1000 (0 or absent: the documented limits)", s.PageSize)
	}
}

func (v *validator) checkParams() {
	s := v.s
	for _, key := range sortedKeys(s.ExpectedParams) {
		p := "expected_params." + key
		server, tool, scoped := strings.Cut(key, "/")
		if !scoped {
			tool, server = key, ""
		}
		if scoped && !validServerName(server) {
			v.errorf(p, "server name %q in %q: want letters, digits and . _ -", server, key)
		}
		if !v.toolExpected(server, tool) {
			v.errorf(p, "tool %q is not in expected_tools%s", tool, map[bool]string{true: "." + server, false: ""}[scoped])
		}
		rules := s.ExpectedParams[key]
		for _, name := range sortedKeys(rules) {
			v.checkRule(p+"."+name, rules[name])
		}
	}
}

func (v *validator) toolExpected(server, tool string) bool {
	for srv, tools := range v.s.ExpectedTools {
		if (server == "" || srv == server) && slices.Contains(tools, tool) {
			return true
		}
	}
	return false
}

func (v *validator) checkRule(p string, r *ParamRule) {
	if r == nil {
		return
	}
	if r.Normalize != "" && !slices.Contains(normalizations, r.Normalize) {
		v.errorf(p+".normalize", "unknown normalisation %q (want one of %s)", r.Normalize, strings.Join(normalizations, ", "))
	}
	if r.Type != "" && !slices.Contains(jsonTypes, r.Type) {
		v.errorf(p+".type", "unknown type %q (want one of %s)", r.Type, strings.Join(jsonTypes, ", "))
	}
	if r.Min != nil && r.Max != nil && *r.Min > *r.Max {
		v.errorf(p+".min", "min %v is greater than max %v", *r.Min, *r.Max)
	}
	if r.Equals != nil && len(r.OneOf) > 0 {
		v.errorf(p, "give equals or one_of, not both")
	}
	if r.Time != nil {
		if r.Time.From == "" || r.Time.To == "" {
			v.errorf(p+".time", "want both from and to")
		}
		for _, b := range []struct{ name, val string }{{"from", r.Time.From}, {"to", r.Time.To}} {
			if b.val == "" {
				continue
			}
			if _, err := ResolveTime(b.val, refNow); err != nil {
				v.errorf(p+".time."+b.name, "%v", err)
			}
		}
		from, err1 := ResolveTime(r.Time.From, refNow)
		to, err2 := ResolveTime(r.Time.To, refNow)
		if err1 == nil && err2 == nil && from.After(to) {
			v.errorf(p+".time", "from is after to")
		}
	}
	// The rule must accept its own expected values: catches a one_of of
	// the wrong type next to a type: or range check.
	for i, w := range r.OneOf {
		if m := checkSelf(r, w); m != "" {
			v.errorf(fmt.Sprintf("%s.one_of[%d]", p, i), "the rule rejects its own value: %s", m)
		}
	}
	if r.Equals != nil {
		if m := checkSelf(r, r.Equals); m != "" {
			v.errorf(p+".equals", "the rule rejects its own value: %s", m)
		}
	}
	if r.Example != nil {
		if r.Equals != nil || len(r.OneOf) > 0 {
			v.errorf(p+".example", "the rule names its values (equals, one_of): an example adds nothing")
		} else if m := checkSelf(r, r.Example); m != "" {
			v.errorf(p+".example", "the rule rejects its own example: %s", m)
		}
	}
}

// refNow is an arbitrary clock used only to check time rules' syntax and
// order; offsets do not depend on it.
var refNow = mustTime("2026-01-01T00:00:00Z")

func checkSelf(r *ParamRule, val any) string {
	if r.Time != nil {
		return "" // a timestamp rule's values are windows, not literals
	}
	if m := MatchValue(r, val, refNow); m != nil {
		return m.Detail
	}
	return ""
}

func (v *validator) checkExpect() {
	s := v.s
	globs := func(field string, list []string, readsOnly, served bool) []Endpoint {
		var out []Endpoint
		for i, g := range list {
			p := fmt.Sprintf("expect.%s[%d]", field, i)
			e, err := ParseGlob(g)
			if err != nil {
				v.errorf(p, "%v", err)
				continue
			}
			if readsOnly && e.Method != "GET" && e.Method != "HEAD" {
				v.errorf(p, "%q: allowed_reads holds reads (GET or HEAD)", g)
			}
			if served && v.routes != nil && !v.routes.anyOverlaps(e) {
				v.errorf(p, "%s matches no route the fake Central serves: it guards nothing", e)
			}
			out = append(out, e)
		}
		return out
	}
	globs("allowed_reads", s.Expect.AllowedReads, true, false)
	mustNot := globs("must_not_call", s.Expect.MustNotCall, false, true)
	diag := globs("diagnostic", s.Expect.Diagnostic, false, false)

	if s.CallsNoTool && len(s.Expect.APICalls) > 0 {
		v.errorf("expect.api_calls", "a scenario that calls no tool makes no call to Central")
	}
	for i, set := range s.Expect.APICalls {
		p := fmt.Sprintf("expect.api_calls[%d]", i)
		if len(set.AnyOf) == 0 {
			v.errorf(p, "empty any_of")
		}
		var alts []Endpoint
		for j, raw := range set.AnyOf {
			ep := p
			if len(set.AnyOf) > 1 {
				ep = fmt.Sprintf("%s.any_of[%d]", p, j)
			}
			e, err := ParseTemplate(raw)
			if err != nil {
				v.errorf(ep, "%v", err)
				continue
			}
			alts = append(alts, e)
			if set.AllPages && e.Method != "GET" {
				v.errorf(ep, "all_pages reads a list to its end: %s is not a GET", e)
			}
			for _, g := range mustNot {
				if g.Covers(e) {
					v.errorf(ep, "%s is expected but must_not_call %s forbids it", e, g)
				}
			}
			v.checkCall(ep, e, diag)
		}
		if len(alts) == len(set.AnyOf) {
			for _, ref := range sortedKeys(set.Params) {
				if why := checkRequestRef(ref, alts); why != "" {
					v.errorf(p+".params."+ref, "%s", why)
				}
				v.checkRule(p+".params."+ref, set.Params[ref])
			}
		}
	}
}

// checkCall checks one expected call against the fake and the write gate.
func (v *validator) checkCall(p string, e Endpoint, diag []Endpoint) {
	s := v.s
	isDiag := false
	for _, g := range diag {
		if g.Covers(e) {
			isDiag = true
		}
	}
	class := ""
	if v.cat != nil {
		if !v.cat.Serves(e.Method, e.Path) {
			v.errorf(p, "%s is not served by the fake Central", e)
			return
		}
		class = v.cat.Class(e.Method, e.Path)
	}
	if s.WriteGate != GateRead || isDiag {
		return
	}
	switch {
	case class == ClassDiagnostic:
	case class != "" && class != ClassRead:
		v.errorf(p, "%s is a %s but write_gate is read (list it under expect.diagnostic if this scenario treats it as diagnostic)", e, class)
	case class == "" && e.IsWrite():
		v.errorf(p, "%s is a write but write_gate is read (list it under expect.diagnostic if this scenario treats it as diagnostic)", e)
	}
}

func (v *validator) checkSchema() {
	s := v.s
	if s.Methodology {
		// The methodology's format has no result schema: task success is
		// decided by expect.api_calls alone.
		return
	}
	if s.ResultSchema == nil {
		v.errorf("result_schema", "required: a JSON Schema for the final answer")
		return
	}
	if s.ReferenceResult == nil {
		v.errorf("reference_result", "required: an answer that validates against result_schema")
	}
	// Compiled when the scenario was loaded (or now, for one built by hand).
	if _, err := s.ResultShape(); err != nil {
		v.errorf("result_schema", "%v", err)
		return
	}
	if s.ReferenceResult == nil {
		return
	}
	doc, err := json.Marshal(normalizeJSON(s.ReferenceResult))
	if err != nil {
		v.errorf("reference_result", "not representable as JSON: %v", err)
		return
	}
	if err := s.CheckResult(doc); err != nil {
		v.errorf("reference_result", "does not validate against result_schema: %v", oneLine(err))
	}
}

// validationMessage is err's message, with the leaf errors of a JSON Schema
// validation failure listed sorted ("at '/path': message; ..."): the
// library orders them by map iteration, and a message that changes from run
// to run would break byte-identical reports and the request keys of replay
// (the recorder returns it to the model).
func validationMessage(err error) string {
	var ve *jsonschema.ValidationError
	if !errors.As(err, &ve) {
		return err.Error()
	}
	sortKinds(ve)
	var parts []string
	for _, u := range ve.BasicOutput().Errors {
		if u.Error != nil {
			parts = append(parts, fmt.Sprintf("at '%s': %s", u.InstanceLocation, u.Error.String()))
		}
	}
	if len(parts) == 0 {
		return ve.Error()
	}
	slices.Sort(parts)
	return strings.Join(slices.Compact(parts), "; ")
}

// sortKinds sorts the property lists the validator fills from a map (the
// additional properties of an object, in the document's map order), so a
// message names them in the same order on every run: it reaches models,
// whose requests are keyed, and reports.
func sortKinds(ve *jsonschema.ValidationError) {
	switch k := ve.ErrorKind.(type) {
	case *kind.AdditionalProperties:
		slices.Sort(k.Properties)
	case *kind.Required:
		slices.Sort(k.Missing)
	case *kind.Dependency:
		slices.Sort(k.Missing)
	case *kind.DependentRequired:
		slices.Sort(k.Missing)
	}
	for _, c := range ve.Causes {
		sortKinds(c)
	}
}

// compileSchema compiles a schema (decoded YAML or JSON) for CompileSchema.
func compileSchema(schema any) (*jsonschema.Schema, error) {
	doc, err := toJSON(schema)
	if err != nil {
		return nil, err
	}
	clampCounts(doc)
	c := jsonschema.NewCompiler()
	c.DefaultDraft(jsonschema.Draft2020)
	c.UseLoader(noLoader{})
	const url = "mem:///result_schema.json"
	if err := c.AddResource(url, doc); err != nil {
		return nil, fmt.Errorf("invalid schema: %s", oneLine(err))
	}
	sch, err := c.Compile(url)
	if err != nil {
		return nil, fmt.Errorf("invalid schema: %s", oneLine(err))
	}
	return sch, nil
}

type noLoader struct{}

func (noLoader) Load(url string) (any, error) {
	return nil, fmt.Errorf("loading %s: result schemas may not refer to other documents", url)
}

// toJSON converts a decoded YAML value to what the JSON Schema validator
// expects (json.Number numbers, map[string]any objects).
func toJSON(v any) (any, error) {
	b, err := json.Marshal(normalizeJSON(v))
	if err != nil {
		return nil, fmt.Errorf("not representable as JSON: %v", err)
	}
	return jsonschema.UnmarshalJSON(bytes.NewReader(b))
}

func oneLine(err error) string {
	var ve *jsonschema.ValidationError
	msg := err.Error()
	if errors.As(err, &ve) {
		msg = ve.Error()
	}
	msg = strings.Join(strings.Fields(msg), " ")
	if len(msg) > 400 {
		msg = msg[:397] + "..."
	}
	return msg
}

func (v *validator) checkFaults() {
	for i, f := range v.s.Faults {
		p := fmt.Sprintf("faults[%d]", i)
		e, err := ParseTemplate(f.Route)
		if err != nil {
			v.errorf(p+".route", "%v", err)
		} else if v.cat != nil && !v.cat.Serves(e.Method, e.Path) {
			v.errorf(p+".route", "%s is not served by the fake Central", e)
		}
		if f.Status < 100 || f.Status > 599 {
			v.errorf(p+".status", "%d: want an HTTP status (100-599)", f.Status)
		}
		if f.Times < 0 {
			v.errorf(p+".times", "%d: want 0 (every call) or more", f.Times)
		}
		if f.After < 0 {
			v.errorf(p+".after", "%d: want the calls let through first, 0 or more", f.After)
		}
		if f.ResetAfter < 0 || f.ResetAfter > 0 && f.Status != 429 {
			v.errorf(p+".reset_after", "%d: want the window in seconds, 0 or more, with status 429", f.ResetAfter)
		}
		if f.RetryAfter < 0 || f.RetryAfter > 0 && f.Status != 429 {
			v.errorf(p+".retry_after", "%d: want seconds, 0 or more, with status 429", f.RetryAfter)
		}
	}
}

func (v *validator) checkEvidence() {
	s := v.s
	report := v.errorf
	if s.Methodology {
		// The methodology pins tools loosely; what it leaves out is
		// worth a warning, not a refusal.
		report = v.warnf
	}
	for _, server := range sortedKeys(s.Evidence) {
		p := "evidence." + server
		if len(s.ExpectedTools[server]) == 0 {
			report(p, "evidence for %q, which has no expected tools", server)
		}
		v.checkPin(p, s.Evidence[server])
	}
	for i, pin := range s.UnkeyedEvidence {
		p := fmt.Sprintf("evidence[%d]", i)
		if _, ok := s.pos[p]; !ok {
			p = "evidence" // one pin, written as a string
		}
		v.checkPin(p, pin)
	}
	pinned := len(s.UnkeyedEvidence) > 0
	for _, server := range ServerNames([]*Scenario{s}) {
		if server == ReferenceServer || pinned {
			continue
		}
		if _, ok := s.Evidence[server]; !ok {
			report("expected_tools."+server, "no evidence pin for %s's tools (evidence.%s: path:line@sha)", server, server)
		}
	}
}

// routeSet answers, for a Lint, whether a glob can match a route the
// catalog serves, parsing the routes once and remembering each glob.
type routeSet struct {
	cat    Catalog
	routes []Endpoint // nil until first asked
	seen   map[string]bool
}

func (r *routeSet) anyOverlaps(g Endpoint) bool {
	if r.seen == nil {
		r.seen = map[string]bool{}
		for _, rt := range r.cat.Routes() {
			if e, err := parseEndpoint(rt, false); err == nil {
				r.routes = append(r.routes, e)
			}
		}
	}
	key := g.String()
	if ok, done := r.seen[key]; done {
		return ok
	}
	ok := slices.ContainsFunc(r.routes, g.overlaps)
	r.seen[key] = ok
	return ok
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

// maxPinLen bounds one evidence value.
const maxPinLen = 2000

// checkPin checks an evidence value: pins as path:line@sha pass; a looser
// citation (no SHA, no line, a placeholder or a URL) passes with a warning;
// an empty or multi-line value is an error.
// readPins splits an evidence string into pins. Besides "path:line@sha"
// separated by commas, semicolons or spaces it reads the way people write
// several lines of one file: notes in parentheses are dropped, ":378"
// continues the path before it and a last "@sha" applies to every pin
// ("a.py:372 (find_client), :378 @86b25e8" is a.py:372@86b25e8,
// a.py:378@86b25e8). rewritten says that was needed.
func readPins(t string) (pins []string, rewritten bool) {
	var b strings.Builder
	depth := 0
	for _, r := range t {
		switch {
		case r == '(':
			depth++
			rewritten = true
		case r == ')' && depth > 0:
			depth--
		case depth == 0:
			b.WriteRune(r)
		}
	}
	toks := strings.FieldsFunc(b.String(), func(r rune) bool { return r == ',' || r == ';' || unicode.IsSpace(r) })
	sha := ""
	if n := len(toks); n > 1 && strings.HasPrefix(toks[n-1], "@") {
		sha, toks, rewritten = toks[n-1], toks[:n-1], true
	}
	path := ""
	for _, tok := range toks {
		if strings.HasPrefix(tok, ":") && path != "" {
			tok, rewritten = path+tok, true
		} else if i := strings.LastIndex(strings.SplitN(tok, "@", 2)[0], ":"); i > 0 {
			path = tok[:i]
		}
		if sha != "" && !strings.Contains(tok, "@") {
			tok += sha
		}
		pins = append(pins, tok)
	}
	if !rewritten {
		return strings.FieldsFunc(t, func(r rune) bool { return r == ',' || r == ';' || unicode.IsSpace(r) }), false
	}
	return pins, true
}

func (v *validator) checkPin(p, text string) {
	t := strings.TrimSpace(text)
	switch {
	case t == "":
		v.errorf(p, "empty: want path:line@sha")
		return
	case strings.ContainsAny(t, "\n\r"):
		v.errorf(p, "%q: want one line, path:line@sha", text)
		return
	case len(t) > maxPinLen:
		v.errorf(p, "%d bytes: want a pin path:line@sha", len(t))
		return
	}
	var loose []string
	pins, rewritten := readPins(t)
	if rewritten {
		ok := true
		for _, pin := range pins {
			ok = ok && evidencePattern.MatchString(pin)
		}
		if ok {
			v.warnf(p, "%q is written loosely (notes in parentheses, a shared @sha, :line for the path before): read as %s; accepted", text, strings.Join(pins, ", "))
			return
		}
	}
	for _, pin := range pins {
		switch {
		case evidencePattern.MatchString(pin):
		case len(pins) == 1:
			loose = append(loose, pinLooseness(pin))
		default:
			loose = append(loose, fmt.Sprintf("%s: %s", pin, pinLooseness(pin)))
		}
	}
	if len(loose) > 0 {
		v.warnf(p, "%q is not path:line@sha (%s); accepted, but pin the tool at the SHA the server is compared at", text, strings.Join(loose, "; "))
	}
}

// shaPattern is a commit SHA as a pin gives it.
var shaPattern = regexp.MustCompile(`^[0-9a-f]{7,40}$`)

// pinLooseness says what a pin lacks against path:line@sha.
func pinLooseness(pin string) string {
	if strings.HasPrefix(pin, "http://") || strings.HasPrefix(pin, "https://") {
		return "a URL"
	}
	var why []string
	loc, ref, hasRef := cutLast(pin, "@")
	switch {
	case !hasRef:
		why = append(why, "no SHA")
	case !shaPattern.MatchString(ref):
		why = append(why, fmt.Sprintf("%q is not a commit SHA", ref))
	}
	file, line, hasLine := cutLast(loc, ":")
	if hasLine && !linePattern.MatchString(line) {
		why = append(why, fmt.Sprintf("line %q is not a number", line))
	}
	if !hasLine {
		if strings.Contains(file, "#L") {
			why = append(why, "a #L anchor for the line")
		} else {
			why = append(why, "no line")
		}
	}
	if file == "" {
		why = append(why, "no path")
	}
	if len(why) == 0 {
		return "not a pin"
	}
	return strings.Join(why, ", ")
}

var linePattern = regexp.MustCompile(`^[0-9]+(-[0-9]+)?$`)

func cutLast(s, sep string) (before, after string, found bool) {
	i := strings.LastIndex(s, sep)
	if i < 0 {
		return s, "", false
	}
	return s[:i], s[i+len(sep):], true
}
