package scenarios

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

func ptr(f float64) *float64 { return &f }

var fixtureNow = time.Date(2026, 11, 20, 10, 0, 0, 0, time.UTC)

func TestMatchValue(t *testing.T) {
	tests := []struct {
		name string
		rule ParamRule
		val  any
		want Reason // "" for a match
	}{
		{"exact string", ParamRule{Equals: "Corp-Net"}, "Corp-Net", ""},
		{"string differs", ParamRule{Equals: "Corp-Net"}, "corp-net", WrongValue},
		{"case-insensitive enum", ParamRule{Equals: "Active", Normalize: "case"}, "ACTIVE", ""},
		{"MAC with dashes and upper case", ParamRule{Equals: "aa:bb:cc:11:22:33", Normalize: "mac"}, "AA-BB-CC-11-22-33", ""},
		{"MAC in Cisco dotted form", ParamRule{Equals: "aa:bb:cc:11:22:33", Normalize: "mac"}, "aabb.cc11.2233", ""},
		{"MAC differs", ParamRule{Equals: "aa:bb:cc:11:22:33", Normalize: "mac"}, "aa:bb:cc:11:22:34", WrongValue},
		{"serial in lower case with space", ParamRule{Equals: "CNAPA0101", Normalize: "serial"}, " cnapa0101 ", ""},
		{"path equivalence", ParamRule{Equals: "a/b", Normalize: "path"}, "./a/b/", ""},
		{"path differs", ParamRule{Equals: "a/b", Normalize: "path"}, "a/c", WrongValue},
		{"integer equals float", ParamRule{Equals: 10}, 10.0, ""},
		{"number for string", ParamRule{Equals: "10"}, 10.0, WrongType},
		{"in range", ParamRule{Min: ptr(10), Max: ptr(100)}, 50.0, ""},
		{"range inclusive", ParamRule{Min: ptr(10), Max: ptr(100)}, 100, ""},
		{"below range", ParamRule{Min: ptr(10)}, 5.0, WrongValue},
		{"range needs number", ParamRule{Max: ptr(100)}, "50", WrongType},
		{"one of (BFCL)", ParamRule{OneOf: []any{"last_7d", "last_30d"}}, "last_7d", ""},
		{"none of", ParamRule{OneOf: []any{"last_7d", "last_30d"}}, "today", WrongValue},
		{"one of wrong type", ParamRule{OneOf: []any{"a", "b"}}, true, WrongType},
		{"one of with case", ParamRule{OneOf: []any{"Critical", "Major"}, Normalize: "case"}, "critical", ""},
		{"list in order", ParamRule{Equals: []any{"A", "B"}}, []any{"A", "B"}, ""},
		{"list out of order", ParamRule{Equals: []any{"A", "B"}}, []any{"B", "A"}, WrongValue},
		{"list as set", ParamRule{Equals: []any{"A", "B"}, Unordered: true}, []any{"B", "A"}, ""},
		{"set with a missing member", ParamRule{Equals: []any{"A", "B"}, Unordered: true}, []any{"A", "A"}, WrongValue},
		{"set of serials normalised", ParamRule{Equals: []any{"CNSWA0001", "CNSWA0002"}, Unordered: true, Normalize: "serial"}, []any{"cnswa0002", "cnswa0001"}, ""},
		{"list for scalar", ParamRule{Equals: "A"}, []any{"A"}, WrongType},
		{"object", ParamRule{Equals: map[string]any{"a": 1}}, map[string]any{"a": 1.0}, ""},
		{"type only", ParamRule{Type: "integer"}, 3.0, ""},
		{"type integer rejects fraction", ParamRule{Type: "integer"}, 3.5, WrongType},
		{"type boolean", ParamRule{Type: "boolean"}, "true", WrongType},
		{"last week, RFC 3339", ParamRule{Time: &TimeRule{From: "-8d", To: "-6d"}}, "2026-11-13T09:00:00Z", ""},
		{"last week, date only", ParamRule{Time: &TimeRule{From: "-8d", To: "-6d"}}, "2026-11-13", ""},
		{"last week, epoch ms", ParamRule{Time: &TimeRule{From: "-8d", To: "-6d"}}, float64(fixtureNow.Add(-7 * 24 * time.Hour).UnixMilli()), ""},
		{"last week, epoch s", ParamRule{Time: &TimeRule{From: "-8d", To: "-6d"}}, float64(fixtureNow.Add(-7 * 24 * time.Hour).Unix()), ""},
		{"yesterday is not last week", ParamRule{Time: &TimeRule{From: "-8d", To: "-6d"}}, "2026-11-19T10:00:00Z", WrongValue},
		{"until now", ParamRule{Time: &TimeRule{From: "-1h", To: "now"}}, "2026-11-20T09:30:00.123Z", ""},
		{"not a time", ParamRule{Time: &TimeRule{From: "-1h", To: "now"}}, "soon", WrongType},
		{"absolute bounds", ParamRule{Time: &TimeRule{From: "2026-11-01T00:00:00Z", To: "2026-11-02T00:00:00Z"}}, "2026-11-01T12:00:00Z", ""},
		{"presence only", ParamRule{}, "anything", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m := MatchValue(&tt.rule, tt.val, fixtureNow)
			var got Reason
			if m != nil {
				got = m.Reason
			}
			if got != tt.want {
				t.Errorf("MatchValue(%+v, %#v) = %v, want %q", tt.rule, tt.val, m, tt.want)
			}
		})
	}
}

func TestMatchCall(t *testing.T) {
	s := &Scenario{
		ExpectedTools: map[string][]string{
			"reference": {"get_client"},
			"karthik":   {"central_find_client"},
		},
		ExpectedParams: map[string]map[string]*ParamRule{
			"get_client":                  {"mac": {Equals: "aa:bb:cc:11:22:33", Normalize: "mac"}, "site": {Equals: "2001", Optional: true}},
			"karthik/central_find_client": {"mac_address": {Equals: "aa:bb:cc:11:22:33", Normalize: "mac"}},
		},
		AllowedExtraParams: []string{"limit"},
		ForbiddenTools:     []string{"disconnect_client"},
	}
	tests := []struct {
		name         string
		server, tool string
		args         map[string]any
		want         []Mismatch
	}{
		{"match", "reference", "get_client", map[string]any{"mac": "AA:BB:CC:11:22:33"}, nil},
		{"allowed extra and optional given", "reference", "get_client", map[string]any{"mac": "aa:bb:cc:11:22:33", "limit": 5.0, "site": "2001"}, nil},
		{"per-server rule", "karthik", "central_find_client", map[string]any{"mac_address": "aa-bb-cc-11-22-33"}, nil},
		{"wrong tool", "reference", "list_clients", nil, []Mismatch{{Reason: WrongTool, Tool: "list_clients", Detail: "expected one of [get_client]"}}},
		{"tool of another server", "karthik", "get_client", nil, []Mismatch{{Reason: WrongTool, Tool: "get_client", Detail: "expected one of [central_find_client]"}}},
		{"forbidden", "reference", "disconnect_client", nil, []Mismatch{{Reason: WrongTool, Tool: "disconnect_client", Detail: "forbidden in this scenario"}}},
		{"absent server", "secure-ssid", "find_client", nil, []Mismatch{{Reason: WrongTool, Tool: "find_client", Detail: "expected one of []"}}},
		{"missing and unexpected", "reference", "get_client", map[string]any{"client": "x"}, []Mismatch{
			{Reason: UnexpectedParam, Tool: "get_client", Param: "client", Detail: `got "x"`},
			{Reason: MissingRequired, Tool: "get_client", Param: "mac", Detail: "required argument not given"},
		}},
		{"wrong type and value", "reference", "get_client", map[string]any{"mac": 42.0, "site": "site-9"}, []Mismatch{
			{Reason: WrongType, Tool: "get_client", Param: "mac", Detail: "want string, got integer"},
			{Reason: WrongValue, Tool: "get_client", Param: "site", Detail: `want "2001", got "site-9"`},
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := s.MatchCall(tt.server, tt.tool, tt.args, fixtureNow)
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("MatchCall (-want +got):\n%s", diff)
			}
		})
	}
}

func TestResolveTime(t *testing.T) {
	tests := []struct {
		in      string
		want    time.Time
		wantErr bool
	}{
		{"now", fixtureNow, false},
		{"-7d", fixtureNow.Add(-7 * 24 * time.Hour), false},
		{"-1w2d", fixtureNow.Add(-9 * 24 * time.Hour), false},
		{"+90m", fixtureNow.Add(90 * time.Minute), false},
		{"2026-01-02T03:04:05Z", time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC), false},
		{"-7y", time.Time{}, true},
		{"7d", time.Time{}, true},
		{"-", time.Time{}, true},
		{"last week", time.Time{}, true},
	}
	for _, tt := range tests {
		got, err := ResolveTime(tt.in, fixtureNow)
		if (err != nil) != tt.wantErr || !got.Equal(tt.want) {
			t.Errorf("ResolveTime(%q) = %v, %v; want %v, error %v", tt.in, got, err, tt.want, tt.wantErr)
		}
	}
}
