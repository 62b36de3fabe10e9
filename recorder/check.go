package recorder

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"

	"github.com/mcpbench/bench/fakecentral"
	"github.com/mcpbench/bench/llm"
	"github.com/mcpbench/bench/traces"
)

// CheckResult is what Check learned about a server.
type CheckResult struct {
	Initialize traces.Initialize
	Tools      []llm.Tool // after the adapter, in the server's order
	// Annotations are the tools' MCP annotations (readOnlyHint,
	// destructiveHint, ...) as JSON, by the name in Tools; a tool without
	// any has none.
	Annotations map[string]json.RawMessage
	// Inner are the inner tools the profile's catalog lists that are not
	// in Tools, with their annotations in Annotations too; none without a
	// catalog.
	Inner  []llm.Tool
	Boot   []fakecentral.Entry
	Stderr string
	// Sandbox says what the server's sandbox had, in words ("at most 4096
	// processes", and what the kernel refused); empty under the proxy
	// convention.
	Sandbox []string
}

// Check starts p's server against a fake Central serving fixture (default
// site-a), completes the handshake, lists its tools and stops it. An error
// means the server could not be started or listed.
func (r *Recorder) Check(ctx context.Context, p *Profile, fixture string) (*CheckResult, error) {
	if fixture == "" {
		fixture = "site-a"
	}
	fx, err := r.fixture(fixture)
	if err != nil {
		return nil, err
	}
	s, err := r.acquire(ctx, p, fx, false)
	if s == nil {
		return nil, err
	}
	defer s.fake.Close()
	if err != nil {
		return nil, err
	}
	var inner []llm.Tool
	innerAnn := map[string]json.RawMessage{}
	if p.Catalog != nil {
		inner, innerAnn, err = readCatalog(ctx, s.conn.cs, p.Catalog)
	}
	s.conn.close()
	if err != nil {
		return nil, err
	}
	res := &CheckResult{Annotations: innerAnn, Initialize: s.conn.init, Boot: s.fake.Journal(), Stderr: redact(s.conn.proc.stderrTail(), s.withheld),
		Sandbox: s.conn.proc.sandboxNotes()}
	for _, t := range s.conn.tools {
		name := t.Name
		if to, ok := p.Adapter.Rename[t.Name]; ok {
			name = to
		}
		schema := mustJSON(t.InputSchema)
		if !llm.IsJSONObject(schema) {
			schema = json.RawMessage(`{"type":"object"}`)
		}
		res.Tools = append(res.Tools, llm.Tool{Name: name, Description: t.Description, InputSchema: schema})
		if t.Annotations != nil {
			res.Annotations[name] = mustJSON(t.Annotations) // the top-level tool's, over a catalog's
		}
	}
	for _, t := range inner {
		if !slices.ContainsFunc(res.Tools, func(u llm.Tool) bool { return u.Name == t.Name }) {
			res.Inner = append(res.Inner, t)
		}
	}
	if len(res.Tools) == 0 {
		return res, fmt.Errorf("server %s lists no tools", p.Name)
	}
	return res, nil
}
