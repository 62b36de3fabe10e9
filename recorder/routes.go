package recorder

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/mcpbench/bench/internal/pylit"
	"github.com/mcpbench/bench/llm"
	"github.com/mcpbench/bench/traces"
)

// Route is how a model reaches a server's inner tools that are not in its
// tool list (traces.Route): the profile's adapter.routes, recorded in each
// run's manifest so that scoring resolves calls the same way.
type Route = traces.Route

// routeLanguages are the languages a code route's literals can be written in.
var routeLanguages = []string{"python"}

// checkRoutes validates a profile's routes, each error naming its field.
func checkRoutes(routes []Route) error {
	var errs []error
	for i, r := range routes {
		at := fmt.Sprintf("adapter.routes[%d]", i)
		if r.Tool == "" {
			errs = append(errs, fmt.Errorf("%s.tool: required (the tool that reaches inner tools)", at))
		}
		router, code := r.Name != "" || r.Arguments != "", r.Code != "" || r.Call != "" || r.Language != ""
		switch {
		case router && code:
			errs = append(errs, fmt.Errorf("%s: name/arguments (a router) and code/call/language (a code block) do not mix", at))
		case router:
			if r.Name == "" {
				errs = append(errs, fmt.Errorf("%s.name: required (the argument that names the inner tool)", at))
			}
			if r.Arguments == "" {
				errs = append(errs, fmt.Errorf("%s.arguments: required (the argument that carries the inner tool's arguments)", at))
			}
		case code:
			if r.Code == "" {
				errs = append(errs, fmt.Errorf("%s.code: required (the argument that carries the code block)", at))
			}
			if !strings.Contains(r.Call, "{name}") || !strings.Contains(r.Call, "{arguments}") {
				errs = append(errs, fmt.Errorf("%s.call: %q must contain {name} and {arguments}", at, r.Call))
			}
			if !slices.Contains(routeLanguages, r.Language) {
				errs = append(errs, fmt.Errorf("%s.language: %q is not one of %s", at, r.Language, strings.Join(routeLanguages, ", ")))
			}
		default:
			errs = append(errs, fmt.Errorf("%s: give name and arguments (a router tool) or code, call and language (a code-mode tool)", at))
		}
	}
	return errors.Join(errs...)
}

// via returns the calls that reach tool with args through routes, in the
// routes' order: what the oracle calls when tool itself is not offered.
// readOnly says tool is annotated read-only (routes that refuse writes
// apply).
func via(routes []Route, tool string, args json.RawMessage, readOnly bool) ([]llm.PlanStep, error) {
	if len(args) == 0 {
		args = json.RawMessage("{}")
	}
	var lit string // the arguments as a literal, for code routes
	var out []llm.PlanStep
	for _, r := range routes {
		if r.ReadsOnly && !readOnly {
			continue
		}
		var call map[string]any
		if r.Code != "" {
			if lit == "" {
				var v any
				dec := json.NewDecoder(bytes.NewReader(args))
				dec.UseNumber() // integers past 2^53 are written as given
				if err := dec.Decode(&v); err != nil {
					return nil, err
				}
				var err error
				if lit, err = pylit.Format(v); err != nil {
					return nil, fmt.Errorf("route %s: %w", r.Tool, err)
				}
			}
			name, _ := pylit.Format(tool)
			call = map[string]any{r.Code: strings.NewReplacer("{name}", name, "{arguments}", lit).Replace(r.Call)}
		} else {
			call = map[string]any{r.Name: tool, r.Arguments: args}
		}
		b, err := json.Marshal(call)
		if err != nil {
			return nil, err
		}
		out = append(out, llm.PlanStep{Tool: r.Tool, Arguments: b})
	}
	return out, nil
}
