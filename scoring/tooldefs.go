package scoring

import (
	"cmp"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"slices"

	"github.com/mcpbench/bench/traces"
)

// SubmitTool is the tool bench adds to every request for the answer
// (llm.SubmitTool): not the server's, so not in its tool definitions.
const SubmitTool = "submit_result"

// ToolDefinitions is what a server's tool definitions cost a model in
// every request: each tool as the model receives it (the tool list of the
// run's first model request, bench's submit_result left out), its
// canonical JSON counted with the tokenizer (o200k_base from the CLI), and
// their sum. Every model turn carries them again.
type ToolDefinitions struct {
	Server string       `json:"server"`
	Tokens int          `json:"tokens"`
	Tools  []ToolTokens `json:"tools"`
}

// ToolTokens is one tool definition's cost.
type ToolTokens struct {
	Name   string `json:"name"`
	Tokens int    `json:"tokens"`
	// SHA256 is the hash of its canonical definition: a changed
	// description or schema changes it.
	SHA256 string `json:"sha256"`
}

// ToolDefinitionsOf measures the tool definitions a run's server offered,
// from the run's first model request; false when the run has none (its
// server did not start). A cache measures each distinct list once.
func (c *Cache) ToolDefinitionsOf(run *traces.Run, count func([]byte) int) (*ToolDefinitions, bool) {
	for i := range run.Events {
		t := run.Events[i].Turn
		if t == nil {
			continue
		}
		tools := c.requestTools(t.Request)
		if len(tools) == 0 {
			return nil, false
		}
		var d *ToolDefinitions
		if c == nil {
			d = measureTools(tools, count)
		} else {
			d = c.defs.Get(tools, func(b []byte) *ToolDefinitions { return c.measureTools(b, count) })
		}
		cp := *d // shared by every run of the list: the server's name is the copy's
		cp.Server = run.Manifest.Server.Name
		return &cp, true
	}
	return nil, false
}

// AddToolDefinitions adds d to list, which keeps one entry per server:
// the largest tool list it offered (a server may list more tools to the
// write scenarios, whose writes_env opens its write gate).
func AddToolDefinitions(list []ToolDefinitions, d *ToolDefinitions) []ToolDefinitions {
	if d == nil {
		return list
	}
	for i := range list {
		if list[i].Server == d.Server {
			if d.Tokens > list[i].Tokens {
				list[i] = *d
			}
			return list
		}
	}
	return append(list, *d)
}

// MeasureToolList measures a tool list given as a JSON array of tools
// ({"name", "description", "input_schema"}), as bench servers check has
// it: the same figures a run of the server gives.
func MeasureToolList(server string, tools []byte, count func([]byte) int) (*ToolDefinitions, error) {
	c, err := traces.Canonical(tools)
	if err != nil {
		return nil, fmt.Errorf("tool list: %w", err)
	}
	d := measureTools(c, count)
	d.Server = server
	return d, nil
}

func measureTools(tools []byte, count func([]byte) int) *ToolDefinitions {
	return (*Cache)(nil).measureTools(tools, count)
}

// measureTools measures each tool of a list; with a cache, each distinct
// tool once (the lists of a server's scenarios share all but the last).
func (c *Cache) measureTools(tools []byte, count func([]byte) int) *ToolDefinitions {
	d := &ToolDefinitions{Tools: []ToolTokens{}}
	list, ok := traces.CanonicalElements(tools)
	if !ok || !json.Valid(tools) { // not canonical: decoded
		var raws []json.RawMessage
		if json.Unmarshal(tools, &raws) != nil {
			return d
		}
		list = list[:0]
		for _, r := range raws {
			list = append(list, r)
		}
	}
	measure := func(raw []byte) ToolTokens {
		var t struct {
			Name string `json:"name"`
		}
		json.Unmarshal(raw, &t)
		if t.Name == SubmitTool {
			return ToolTokens{Name: t.Name}
		}
		def, err := traces.Canonical(raw)
		if err != nil {
			def = raw
		}
		sum := sha256.Sum256(def)
		return ToolTokens{Name: t.Name, Tokens: count(def), SHA256: hex.EncodeToString(sum[:])}
	}
	for _, raw := range list {
		var t ToolTokens
		if c == nil {
			t = measure(raw)
		} else {
			t = c.def.Get(raw, measure)
		}
		if t.Name == SubmitTool {
			continue
		}
		d.Tools = append(d.Tools, t)
		d.Tokens += t.Tokens
	}
	slices.SortStableFunc(d.Tools, func(a, b ToolTokens) int { return cmp.Compare(a.Name, b.Name) })
	return d
}

// ToolChurn is how a server's tool definitions changed between the
// recorded runs and the live server of a replay. Any change breaks a
// provider's prompt cache: the definitions are the front of every
// request, so a cached prefix ends at the first changed byte.
type ToolChurn struct {
	Server  string       `json:"server"`
	Before  int          `json:"tokens_before"`
	After   int          `json:"tokens_after"`
	Added   []ToolTokens `json:"added,omitempty"`
	Removed []ToolTokens `json:"removed,omitempty"`
	Changed []ToolChange `json:"changed,omitempty"`
}

// ToolChange is a tool whose definition changed, with its tokens before
// and after.
type ToolChange struct {
	Name   string `json:"name"`
	Before int    `json:"tokens_before"`
	After  int    `json:"tokens_after"`
}

// Delta is the change of the tool definitions' tokens.
func (c *ToolChurn) Delta() int { return c.After - c.Before }

// Empty reports an unchanged tool list.
func (c *ToolChurn) Empty() bool { return len(c.Added)+len(c.Removed)+len(c.Changed) == 0 }

// DiffToolDefinitions compares the recorded definitions with the live
// ones, tools in name order.
func DiffToolDefinitions(recorded, live *ToolDefinitions) ToolChurn {
	c := ToolChurn{Server: live.Server, Before: recorded.Tokens, After: live.Tokens}
	if slices.Equal(recorded.Tools, live.Tools) {
		return c // the same tools: what every run of an unchanged server says
	}
	before := map[string]ToolTokens{}
	for _, t := range recorded.Tools {
		before[t.Name] = t
	}
	seen := map[string]bool{}
	for _, t := range live.Tools {
		seen[t.Name] = true
		b, ok := before[t.Name]
		switch {
		case !ok:
			c.Added = append(c.Added, t)
		case b.SHA256 != t.SHA256:
			c.Changed = append(c.Changed, ToolChange{Name: t.Name, Before: b.Tokens, After: t.Tokens})
		}
	}
	for _, t := range recorded.Tools {
		if !seen[t.Name] {
			c.Removed = append(c.Removed, t)
		}
	}
	return c
}

// checkToolBudget fails the verdict for each server whose tool definitions
// take more tokens than the gate's tool_definition_tokens: a regression,
// unless the verdict is already worse.
func checkToolBudget(g *Gate, defs []ToolDefinitions, v *Verdict) {
	if g == nil || g.ToolDefinitionTokens == nil || v == nil {
		return
	}
	for _, d := range defs {
		if d.Tokens <= *g.ToolDefinitionTokens {
			continue
		}
		v.Reasons = append(v.Reasons, fmt.Sprintf("%s: tool definitions take %d tokens (%s), over the tool_definition_tokens budget of %d (%+d)",
			d.Server, d.Tokens, toolCount(len(d.Tools)), *g.ToolDefinitionTokens, d.Tokens-*g.ToolDefinitionTokens))
		if v.Status == StatusPass || v.Status == "" {
			v.Status = StatusRegression
		}
	}
}
