package centralmcp

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// kind is what a tool does to Central; it decides annotations and gating.
type kind int

const (
	kindRead        kind = iota // GETs only
	kindDiagnostic              // POSTs an async diagnostic; changes nothing
	kindWrite                   // changes Central: needs the write gate
	kindDestructive             // disrupts users: gate plus confirmation
)

// toolSpec is one tool's static description.
type toolSpec struct {
	name, title, desc string
	kind              kind
	// patch adjusts the schema inferred from the input struct: enums,
	// bounds, defaults, patterns.
	patch func(s *jsonschema.Schema)
}

// addTool registers a typed tool. h returns the value to serialise as the
// tool's JSON text. confirm words the question put to the user: always
// for a destructive tool; for a write, when it returns one (a mass action).
func addTool[In any](s *server, ms *mcp.Server, sp toolSpec, confirm func(In) string, h func(ctx context.Context, in In) (any, error)) {
	schema, err := jsonschema.For[In](nil)
	if err != nil {
		panic(fmt.Sprintf("tool %s: input schema: %v", sp.name, err)) // a programming error
	}
	tidySchema(schema)
	if sp.patch != nil {
		sp.patch(schema)
	}
	name := sp.name
	if s.inject[InjectRenameTool] && name == "get_client" {
		name = "lookup_client"
	}
	desc := sp.desc
	if s.inject[InjectVerboseTools] {
		desc = verbose(desc)
	}
	tool := &mcp.Tool{
		Name:        name,
		Title:       sp.title,
		Description: desc,
		InputSchema: schema,
		Annotations: annotations(sp.kind),
	}
	mcp.AddTool(ms, tool, func(ctx context.Context, req *mcp.CallToolRequest, in In) (*mcp.CallToolResult, any, error) {
		if sp.kind >= kindWrite && !s.inject[InjectUngatedWrite] {
			if !s.opts.Writes {
				return refusal(true, "writes_disabled",
					"writes are disabled on this server (set CENTRAL_WRITES=1); nothing was changed"), nil, nil
			}
			q := ""
			if confirm != nil {
				q = confirm(in)
			}
			if sp.kind == kindDestructive || q != "" {
				if res := askConfirmation(req, q); res != nil {
					return res, nil, nil
				}
			}
		}
		out, err := h(ctx, in)
		if err != nil {
			return refusal(true, "error", err.Error()), nil, nil
		}
		return jsonResult(out), nil, nil
	})
}

func annotations(k kind) *mcp.ToolAnnotations {
	f, t := false, true
	a := &mcp.ToolAnnotations{OpenWorldHint: &t}
	switch k {
	case kindRead, kindDiagnostic:
		a.ReadOnlyHint = true
		a.IdempotentHint = true
	case kindWrite:
		a.DestructiveHint = &f
		a.IdempotentHint = true
	case kindDestructive:
		a.DestructiveHint = &t
	}
	return a
}

// confirmID names the one elicitation a destructive tool asks for.
const confirmID = "confirm"

// askConfirmation returns nil when the user explicitly confirmed; otherwise
// the result to send instead of acting: an elicitation request (first
// round), a refusal (declined, cancelled, or a client that cannot be asked).
//
// It uses multi-round-trip input requests, which the SDK turns into a plain
// elicitation/create request for clients on older protocol versions.
func askConfirmation(req *mcp.CallToolRequest, question string) *mcp.CallToolResult {
	caps := req.ClientCapabilities()
	if caps == nil || caps.Elicitation == nil {
		return refusal(true, "confirmation_unavailable",
			"this action needs the user's confirmation, and the client cannot ask for it (no elicitation support); nothing was done")
	}
	if r, ok := req.Params.InputResponses[confirmID]; ok {
		if er, ok := r.(*mcp.ElicitResult); ok && er.Action == "accept" && er.Content["confirm"] == true {
			return nil
		}
		return refusal(false, "cancelled", "the user did not confirm; nothing was done")
	}
	return &mcp.CallToolResult{InputRequests: mcp.InputRequestMap{
		confirmID: &mcp.ElicitParams{
			Message: question,
			RequestedSchema: map[string]any{
				"type": "object",
				"properties": map[string]any{
					"confirm": map[string]any{
						"type":        "boolean",
						"title":       "Confirm",
						"description": "true to go ahead",
					},
				},
				"required": []string{"confirm"},
			},
		},
	}}
}

func refusal(isError bool, status, msg string) *mcp.CallToolResult {
	b, _ := json.Marshal(map[string]string{"status": status, "message": msg})
	return &mcp.CallToolResult{IsError: isError, Content: []mcp.Content{&mcp.TextContent{Text: string(b)}}}
}

func jsonResult(v any) *mcp.CallToolResult {
	b, err := json.Marshal(v) // maps marshal with sorted keys: deterministic
	if err != nil {
		return refusal(true, "error", fmt.Sprintf("encoding result: %v", err))
	}
	return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: string(b)}}}
}

// tidySchema turns the ["null", T] types inferred for pointer fields into
// plain T: absent means "leave unchanged", and null is not a useful value.
func tidySchema(s *jsonschema.Schema) {
	for _, p := range s.Properties {
		if len(p.Types) == 2 && (p.Types[0] == "null" || p.Types[1] == "null") {
			t := p.Types[0]
			if t == "null" {
				t = p.Types[1]
			}
			p.Type, p.Types = t, nil
		}
	}
}

// verbose is the verbose-tools regression: the same description, padded to
// ten times its length with the kind of boilerplate that creeps in.
func verbose(desc string) string {
	const pad = " Note: this tool talks to HPE Aruba Networking Central through its public REST API," +
		" uses the credentials configured for this server, respects Central's rate limits," +
		" returns JSON, and should be used whenever the request concerns the subject described above."
	var b strings.Builder
	b.WriteString(desc)
	for b.Len() < 10*len(desc) {
		b.WriteString(pad)
	}
	return b.String()
}

// Schema patch helpers.

func prop(s *jsonschema.Schema, name string) *jsonschema.Schema {
	p, ok := s.Properties[name]
	if !ok {
		panic("schema has no property " + name)
	}
	return p
}

func enum(s *jsonschema.Schema, name string, values ...string) {
	p := prop(s, name)
	for _, v := range values {
		p.Enum = append(p.Enum, v)
	}
}

func intRange(s *jsonschema.Schema, name string, lo, hi, def int) {
	p := prop(s, name)
	l, h := float64(lo), float64(hi)
	p.Minimum, p.Maximum = &l, &h
	if def != 0 {
		p.Default = json.RawMessage(fmt.Sprint(def))
	}
}

func pattern(s *jsonschema.Schema, name, re string) {
	prop(s, name).Pattern = re
}

func itemsRange(s *jsonschema.Schema, name string, lo, hi int) {
	p := prop(s, name)
	p.MinItems, p.MaxItems = &lo, &hi
}

// pagingPatch bounds the limit field of a list tool.
func pagingPatch(max, def int, more func(s *jsonschema.Schema)) func(s *jsonschema.Schema) {
	return func(s *jsonschema.Schema) {
		intRange(s, "limit", 1, max, def)
		if more != nil {
			more(s)
		}
	}
}
