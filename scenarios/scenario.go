package scenarios

import (
	"slices"
	"strings"
)

// FormatVersion is bench's manifest format. A document that names another
// format is rejected; a document with no format key is read in the
// methodology's format (Scenario.Methodology; docs/scenarios.md).
const FormatVersion = 1

// suites are the intent families of the methodology plus the adversarial
// suite, in the order reports list them.
var suites = []string{
	"client-diagnosis",
	"site-device-health",
	"wlan-change",
	"nac",
	"firmware",
	"config-compliance",
	"alerts",
	"incident-response",
	"adversarial",
}

// categories say what kind of case a scenario is (the evaluation guide's
// suite composition).
var categories = []string{"core", "edge", "safety", "negative", "multi-step"}

// ReferenceServer is the server whose tools need no evidence pin: its code
// lives in this repository.
const ReferenceServer = "reference"

// Write gates: how far a scenario lets the agent change Central.
const (
	GateRead        = "read"
	GateWrite       = "write"
	GateDestructive = "destructive"
)

// Elicitation answers: how the agent's client answers a server's
// confirmation request.
const (
	ElicitApprove = "approve"
	ElicitDecline = "decline"
)

// DefaultMaxTurns is the turn budget when a scenario sets none.
const DefaultMaxTurns = 12

// Scenario is one manifest document. Field meanings are documented in
// docs/scenarios.md.
type Scenario struct {
	Format int `yaml:"format" json:"format"`
	// Methodology says the document had no format key and was read in the
	// methodology's scenario format (seeds/000): its fields only, and the
	// rest filled with the defaults docs/scenarios.md lists (the suite from
	// the id, the category from the suite, no result schema).
	Methodology bool     `yaml:"-" json:"methodology,omitempty"`
	ID          string   `yaml:"id" json:"id"`
	Suite       string   `yaml:"suite" json:"suite"`
	Category    string   `yaml:"category" json:"category"`
	Tags        []string `yaml:"tags" json:"tags,omitempty"`
	Intent      string   `yaml:"intent" json:"intent"`
	Platform    string   `yaml:"platform" json:"platform"`
	Fixture     string   `yaml:"fixture" json:"fixture"`
	WriteGate   string   `yaml:"write_gate" json:"write_gate"`
	Elicitation string   `yaml:"elicitation" json:"elicitation,omitempty"`
	MaxTurns    int      `yaml:"max_turns" json:"max_turns,omitempty"`

	// Entities names the fixture entities the scenario relies on, by kind
	// (site, device, ap, switch, gateway, client, alert, wlan, ...); each
	// must exist in the fixture.
	Entities map[string][]string `yaml:"entities" json:"entities,omitempty"`

	// ExpectedTools maps a compared server to the tools a correct solution
	// calls on it, in order. A server left out, or given an empty list (the
	// methodology's reading), has no coverage for the task and is scored as
	// absent.
	ExpectedTools map[string][]string `yaml:"expected_tools" json:"expected_tools"`
	// CallsNoTool says a correct solution calls no tool at all (it refuses
	// or asks): every server has coverage, and none is expected to call
	// anything.
	CallsNoTool bool `yaml:"calls_no_tool" json:"calls_no_tool,omitempty"`
	// ExpectedParams maps a tool name, or "server/tool" for one server only,
	// to the rules its arguments must meet.
	ExpectedParams     map[string]map[string]*ParamRule `yaml:"expected_params" json:"expected_params,omitempty"`
	AllowedExtraParams []string                         `yaml:"allowed_extra_params" json:"allowed_extra_params,omitempty"`
	ForbiddenTools     []string                         `yaml:"forbidden_tools" json:"forbidden_tools,omitempty"`
	// Distractors name the tools that look right for the task and are
	// not: a similar name, an overlapping scope, the all-too-familiar
	// tool ("tool" on any server, "server/tool" on one). Lint checks each
	// is a real tool of a server's captured list and none is expected.
	Distractors []string `yaml:"distractors" json:"distractors,omitempty"`

	Expect Expect `yaml:"expect" json:"expect"`

	// ResultSchema is a JSON Schema (2020-12) for the agent's final answer;
	// ReferenceResult is an answer that must validate against it.
	ResultSchema    any `yaml:"result_schema" json:"result_schema"`
	ReferenceResult any `yaml:"reference_result" json:"reference_result"`
	// result is ResultSchema compiled, when the scenario was loaded.
	result          *resultSchemas
	SuccessCriteria string `yaml:"success_criteria" json:"success_criteria"`

	Faults []Fault `yaml:"faults" json:"faults,omitempty"`
	// PageSize makes the fake answer at most this many items per page of
	// every list, whatever limit a request asks (0: the documented
	// limits): a list of the campus bundle then spans many pages, and a
	// server that does not follow next or offset is seen.
	PageSize int `yaml:"page_size" json:"page_size,omitempty"`
	// Evidence pins each compared server's expected tools to its source:
	// "path:line@sha" (a line range "path:10-20@sha" is allowed; looser
	// forms are accepted with a lint warning).
	Evidence map[string]string `yaml:"evidence" json:"evidence,omitempty"`
	// UnkeyedEvidence are pins that name no server: the methodology writes
	// one evidence string for the scenario.
	UnkeyedEvidence []string `yaml:"-" json:"unkeyed_evidence,omitempty"`
	Notes           string   `yaml:"notes" json:"notes,omitempty"`

	// File is the manifest the scenario was read from, and Pos where its
	// document starts.
	File string `yaml:"-" json:"file,omitempty"`
	Pos  Pos    `yaml:"-" json:"-"`

	pos map[string]Pos // field path -> position, filled by the loader
	bad []string       // field paths the loader could not decode
	// overlay are expectations attached from files beside server profiles
	// (expectations.go), by server: read before the fields above, and no
	// part of the definition (nor of its hash).
	overlay map[string]*Expectation
	// overlayFile is the expectations file each overlay entry came from.
	overlayFile map[string]*Expectations
	// dialect are fields of another manifest layout read differently or
	// not at all (listed.go): lint warnings.
	dialect []dialectNote
	// fixtureAsWritten is the fixture as the manifest names it, when the
	// loader resolved it to something else (a path, or a built-in name).
	fixtureAsWritten string
}

// undecoded reports whether path, or a field above or below it, failed to
// decode: validating it again would only repeat the loader's error.
func (s *Scenario) undecoded(path string) bool {
	for _, b := range s.bad {
		if under(b, path) || under(path, b) {
			return true
		}
	}
	return false
}

// under reports whether path p is q or a field inside q.
func under(p, q string) bool {
	if !strings.HasPrefix(p, q) {
		return false
	}
	return len(p) == len(q) || p[len(q)] == '.' || p[len(q)] == '['
}

// Expect is the Central-side ground truth of a scenario.
type Expect struct {
	// APICalls must all be called by a correct solution; an entry with
	// several alternatives is satisfied by any one of them.
	APICalls []CallSet `yaml:"api_calls" json:"api_calls,omitempty"`
	// AllowedReads are globs of reads a solution may make; reads outside
	// them count as flailing. Empty means any read is allowed.
	AllowedReads []string `yaml:"allowed_reads" json:"allowed_reads,omitempty"`
	// MustNotCall are globs of calls that are a safety failure.
	MustNotCall []string `yaml:"must_not_call" json:"must_not_call,omitempty"`
	// Diagnostic are globs of non-GET calls that are diagnostic in this
	// scenario, not writes.
	Diagnostic []string `yaml:"diagnostic" json:"diagnostic,omitempty"`
}

// CallSet is one expect.api_calls entry: a single endpoint pattern, or
// alternatives written as {any_of: [...]}.
type CallSet struct {
	AnyOf []string `yaml:"any_of" json:"any_of"`
	// Params are the values that matter in the call, as rules on the
	// fields of the request (request.go: {name}, query.NAME, filter.FIELD,
	// body.PATH or a bare NAME). They are the API layer's parameter
	// accuracy: the same for every server, whichever tool made the call.
	Params map[string]*ParamRule `yaml:"params" json:"params,omitempty"`
	// AllPages says a list must be read to its end: the entry is met only
	// by a 2xx answer that is the list's last page (next or offset null,
	// or offset+count reaching total).
	AllPages bool `yaml:"all_pages" json:"all_pages,omitempty"`
}

// Fault asks the fake Central to fail a route: answer status for the first
// Times calls (0: every call), after letting After calls through.
type Fault struct {
	Route  string `yaml:"route" json:"route"`
	Status int    `yaml:"status" json:"status"`
	Times  int    `yaml:"times" json:"times,omitempty"`
	// After lets the first After matching calls through before the fault
	// applies: with status 429, a rate limit spent after After calls.
	After int `yaml:"after" json:"after,omitempty"`
	// RetryAfter, with status 429, is the Retry-After the fake answers,
	// in seconds (default: the notifications API's, the seconds to the
	// window's reset; none elsewhere, as the OpenAPI documents).
	RetryAfter int `yaml:"retry_after" json:"retry_after,omitempty"`
	// ResetAfter, with status 429 and after, is the rate-limit window in
	// seconds: the limit, once spent, holds that long on the fake's clock
	// (the 429s say when it resets), then after more calls go through.
	// 0: once spent, it stays spent for the run. With after 0 the limit
	// is spent when the run begins and the reset lifts it.
	ResetAfter int `yaml:"reset_after" json:"reset_after,omitempty"`
}

// Turns returns the scenario's turn budget.
func (s *Scenario) Turns() int {
	if s.MaxTurns > 0 {
		return s.MaxTurns
	}
	return DefaultMaxTurns
}

// Elicit returns how the client answers confirmation requests (approve by
// default).
func (s *Scenario) Elicit() string {
	if s.Elicitation == "" {
		return ElicitApprove
	}
	return s.Elicitation
}

// HasTag reports whether the scenario carries tag t.
func (s *Scenario) HasTag(t string) bool { return slices.Contains(s.Tags, t) }

// ToolsFor returns the expected tools on server and whether the server has
// coverage for the scenario at all: it has when the scenario calls no tool,
// or lists tools for it (an attached expectations file for the server is
// read first). A server left out or given an empty list has none here:
// CoverageOf tells the two apart.
func (s *Scenario) ToolsFor(server string) ([]string, bool) {
	if s.CallsNoTool {
		return nil, true
	}
	if x := s.overlay[server]; x != nil {
		return x.Tools, !x.Absent && len(x.Tools) > 0
	}
	t := s.ExpectedTools[server]
	return t, len(t) > 0
}

// Coverage is what a scenario says of one server's coverage.
type Coverage int

const (
	// Unnamed: the scenario has no expectations for the server. It is
	// judged from the API layer (which tool call made which of
	// expect.api_calls), and absent when none of its tools reaches them.
	Unnamed Coverage = iota
	// Covered: expected tools are listed for the server, or the scenario
	// calls no tool.
	Covered
	// DeclaredAbsent: the server's expected-tools list is empty, the
	// methodology's way of saying it has no coverage.
	DeclaredAbsent
)

// CoverageOf returns what the scenario says of server.
func (s *Scenario) CoverageOf(server string) Coverage {
	if s.CallsNoTool {
		return Covered
	}
	if x := s.overlay[server]; x != nil {
		if x.Absent {
			return DeclaredAbsent
		}
		return Covered
	}
	t, named := s.ExpectedTools[server]
	switch {
	case len(t) > 0:
		return Covered
	case named:
		return DeclaredAbsent
	}
	return Unnamed
}

// GradesResult reports whether the scenario has a result schema to grade
// the final answer with. Without one (a methodology-format manifest) task
// success is decided by expect.api_calls alone.
func (s *Scenario) GradesResult() bool { return s.ResultSchema != nil }

// ParamsFor returns the parameter rules for tool on server: those of an
// attached expectations file for the server if there is one, else the
// "server/tool" entry, else the "tool" entry.
// ExpectedName is the name whose expectations apply to a profile named
// profile that is another exposure of variantOf (empty: none): the
// profile's own name when an expectations file for it is attached to s,
// else variantOf, else profile.
func (s *Scenario) ExpectedName(profile, variantOf string) string {
	if variantOf == "" || s.overlay[profile] != nil {
		return profile
	}
	return variantOf
}

func (s *Scenario) ParamsFor(server, tool string) map[string]*ParamRule {
	if x := s.overlay[server]; x != nil {
		return x.Params[tool]
	}
	if r, ok := s.ExpectedParams[server+"/"+tool]; ok {
		return r
	}
	return s.ExpectedParams[tool]
}

// PosOf returns the position of the field at path, or of its nearest
// recorded parent, or the document start.
func (s *Scenario) PosOf(path string) Pos {
	if pos, ok := nearestPos(s.pos, path); ok {
		return pos
	}
	return s.Pos
}

// nearestPos returns the position recorded for path, or for its nearest
// recorded parent.
func nearestPos(m map[string]Pos, path string) (Pos, bool) {
	for p := path; p != ""; {
		if pos, ok := m[p]; ok {
			return pos, true
		}
		i := strings.LastIndexAny(p, ".[")
		if i < 0 {
			break
		}
		p = p[:i]
	}
	return Pos{}, false
}

// SuiteNames are the suites a scenario may belong to, in report order.
func SuiteNames() []string { return slices.Clone(suites) }

// CategoryNames are the categories a scenario may have.
func CategoryNames() []string { return slices.Clone(categories) }

// ServerNames are the servers the scenarios of list name in expected_tools
// with at least one tool, sorted (a calls_no_tool scenario names none,
// and covers them all). Servers are data: a scenario may name any server
// by its profile's name.
func ServerNames(list []*Scenario) []string {
	var out []string
	for _, s := range list {
		for srv, tools := range s.ExpectedTools {
			if len(tools) > 0 && !slices.Contains(out, srv) {
				out = append(out, srv)
			}
		}
	}
	slices.Sort(out)
	return out
}

// validServerName reports whether name can name a server in a ref
// (<suite>/<server>/...): letters, digits and . _ - only.
func validServerName(name string) bool {
	if name == "" || name == "." || name == ".." {
		return false
	}
	for _, r := range name {
		if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || strings.ContainsRune("._-", r)) {
			return false
		}
	}
	return true
}
