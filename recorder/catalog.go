package recorder

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpbench/bench/llm"
)

// Catalog says how to list a server's inner tools when only its meta tools
// describe them (a dynamic mode: list_tools, get_tool_schema): bench
// servers check calls List once and Describe for each name, so that
// --save-tools captures the tools scenarios name with their schemas. Data
// beside the profile, like routes (docs/adapters.md, "Routes").
type Catalog struct {
	// List is the tool whose result names the inner tools: every object
	// with a string "name" in an array of its result.
	List string `yaml:"list" json:"list"`
	// Describe is the tool that returns one inner tool's record (an
	// object with its input_schema or inputSchema, and its description and
	// annotations); Name is its argument that names the tool.
	Describe string `yaml:"describe" json:"describe"`
	Name     string `yaml:"name" json:"name"`
}

func (c *Catalog) check() error {
	if c == nil {
		return nil
	}
	var errs []error
	for _, f := range []struct{ field, v, what string }{
		{"list", c.List, "the tool that lists the inner tools"},
		{"describe", c.Describe, "the tool that describes one"},
		{"name", c.Name, "its argument that names the tool"},
	} {
		if f.v == "" {
			errs = append(errs, fmt.Errorf("catalog.%s: required (%s)", f.field, f.what))
		}
	}
	return errors.Join(errs...)
}

// maxCatalogTools bounds the inner tools a catalog lists.
const maxCatalogTools = 5000

// catalogCallTimeout bounds each call to a catalog's meta tools.
const catalogCallTimeout = 30 * time.Second

// readCatalog lists the inner tools p's catalog describes, in the order
// the list names them, with their annotations (as JSON) by name. A tool
// the describe call gives no schema for is an error naming it.
func readCatalog(ctx context.Context, cs *mcp.ClientSession, c *Catalog) ([]llm.Tool, map[string]json.RawMessage, error) {
	call := func(tool string, args map[string]any) (any, error) {
		cctx, cancel := context.WithTimeout(ctx, catalogCallTimeout)
		defer cancel()
		res, err := cs.CallTool(cctx, &mcp.CallToolParams{Name: tool, Arguments: args})
		if err != nil {
			return nil, fmt.Errorf("catalog: %s: %w", tool, err)
		}
		if res.IsError {
			return nil, fmt.Errorf("catalog: %s answered an error: %s", tool, llm.Truncate(strings.Join(strings.Fields(resultText(res)), " "), 300))
		}
		if res.StructuredContent != nil {
			var v any
			if json.Unmarshal(mustJSON(res.StructuredContent), &v) == nil {
				return v, nil
			}
		}
		var v any
		if err := json.Unmarshal([]byte(strings.TrimSpace(resultText(res))), &v); err != nil {
			return nil, fmt.Errorf("catalog: %s: its result is not JSON", tool)
		}
		return v, nil
	}
	listed, err := call(c.List, map[string]any{})
	if err != nil {
		return nil, nil, err
	}
	var names []string
	seen := map[string]bool{}
	walkJSON(listed, 0, func(v any, inArray bool) {
		if m, ok := v.(map[string]any); ok && inArray {
			if n, ok := m["name"].(string); ok && n != "" && !seen[n] && len(names) < maxCatalogTools {
				seen[n] = true
				names = append(names, n)
			}
		}
	})
	if len(names) == 0 {
		return nil, nil, fmt.Errorf("catalog: %s named no tools (want objects with a \"name\" in an array)", c.List)
	}
	var tools []llm.Tool
	ann := map[string]json.RawMessage{}
	for _, n := range names {
		rec, err := call(c.Describe, map[string]any{c.Name: n})
		if err != nil {
			return nil, nil, err
		}
		var found map[string]any
		walkJSON(rec, 0, func(v any, _ bool) {
			if m, ok := v.(map[string]any); ok && found == nil {
				if _, ok := m["input_schema"]; ok {
					found = m
				} else if _, ok := m["inputSchema"]; ok {
					found = m
				}
			}
		})
		if found == nil {
			return nil, nil, fmt.Errorf("catalog: %s(%s=%q) gave no input_schema", c.Describe, c.Name, n)
		}
		schema := found["input_schema"]
		if schema == nil {
			schema = found["inputSchema"]
		}
		raw := mustJSON(schema)
		if !llm.IsJSONObject(raw) {
			raw = json.RawMessage(`{"type":"object"}`)
		}
		desc, _ := found["description"].(string)
		tools = append(tools, llm.Tool{Name: n, Description: desc, InputSchema: raw})
		if a, ok := found["annotations"].(map[string]any); ok && len(a) > 0 {
			ann[n] = mustJSON(a)
		}
	}
	return tools, ann, nil
}

// walkJSON calls f on every value of v, saying whether it is an element of
// an array, to a bounded depth.
func walkJSON(v any, depth int, f func(v any, inArray bool)) {
	if depth > 32 {
		return
	}
	switch x := v.(type) {
	case map[string]any:
		for _, k := range sortedKeys(x) {
			f(x[k], false)
			walkJSON(x[k], depth+1, f)
		}
	case []any:
		for _, y := range x {
			f(y, true)
			walkJSON(y, depth+1, f)
		}
	}
}
