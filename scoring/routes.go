package scoring

import (
	"encoding/json"
	"strings"

	"github.com/mcpbench/bench/internal/pylit"
)

// reach is a tool a call reached: the call's own tool, or an inner tool
// reached through a route (a router tool, a code-mode block).
type reach struct {
	tool string
	args map[string]any
	// unresolved marks a route call whose inner tool could not be read:
	// it reached no tool a solution needs.
	unresolved bool
}

// resolve returns the tools a call of tool with args reached. A run whose
// manifest carries the profile's routes (methodology 1.7) is resolved
// through them alone: a router call reaches the tool its name argument
// names, with the object its arguments argument holds; a code block
// reaches each call of the route's function in it whose name is a literal,
// with its arguments when they are a literal dict (else none). A run
// without routes keeps the generic router rule of 1.6 (resolveCall).
func (ev *events) resolve(tool string, args map[string]any) []reach {
	if tool == "" {
		return nil // a malformed call that names no tool reaches none
	}
	if len(ev.routes) == 0 {
		name, inner := resolveCall(tool, args)
		return []reach{{tool: name, args: inner, unresolved: isRouterTool(name)}}
	}
	for _, r := range ev.routes {
		if r.Tool != tool {
			continue
		}
		if r.Code != "" {
			code, _ := args[r.Code].(string)
			if out := codeCalls(tool, code, codeFunc(r.Call)); len(out) > 0 {
				return out
			}
			return []reach{{tool: tool, args: args, unresolved: true}}
		}
		name, _ := args[r.Name].(string)
		if name == "" {
			return []reach{{tool: tool, args: args, unresolved: true}}
		}
		return []reach{{tool: name, args: objectArg(args[r.Arguments])}}
	}
	return []reach{{tool: tool, args: args}}
}

// resolvedCall is what one call reached (index resolves each call once).
type resolvedCall struct {
	reaches  []reach
	validArg bool // its arguments were a JSON object
}

// name is the name scoring gives a call of tool as a whole at the API
// layer: the one tool it reached ("<tool>(?)" when it could not be read),
// or its own tool when it reached several (a code block).
func (rc resolvedCall) name(tool string) string {
	switch {
	case len(rc.reaches) != 1:
		return tool
	case rc.reaches[0].unresolved:
		return rc.reaches[0].tool + unresolved
	}
	return rc.reaches[0].tool
}

// objectArg is a router's inner arguments: an object, or a JSON string of
// one; anything else is no arguments.
func objectArg(v any) map[string]any {
	switch x := v.(type) {
	case map[string]any:
		return x
	case string:
		var m map[string]any
		if json.Unmarshal([]byte(x), &m) == nil && m != nil {
			return m
		}
	}
	return map[string]any{}
}

// codeFunc is the function a code route's call template calls: the name
// just before "({name}" ("call_tool" in "return await call_tool({name},
// {arguments})").
func codeFunc(call string) string {
	i := strings.Index(call, "{name}")
	if i < 0 {
		return ""
	}
	s := strings.TrimRight(call[:i], " \t")
	s = strings.TrimSuffix(s, "(")
	s = strings.TrimRight(s, " \t")
	j := len(s)
	for j > 0 && isIdentByte(s[j-1]) {
		j--
	}
	return s[j:]
}

func isIdentByte(c byte) bool {
	return c == '_' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9'
}

// maxCodeCalls bounds the calls read from one code block.
const maxCodeCalls = 1000

// codeCalls reads the calls of fn in a code block of tool: fn(NAME, ARGS),
// each argument positional or by keyword. A call whose name is not a
// string literal is unresolved ("<tool>(?)"); arguments that are not a
// literal dict are none.
func codeCalls(tool, code, fn string) []reach {
	if fn == "" {
		return nil
	}
	var out []reach
	for i := 0; i < len(code) && len(out) < maxCodeCalls; {
		j := strings.Index(code[i:], fn)
		if j < 0 {
			break
		}
		at := i + j
		i = at + len(fn)
		if at > 0 && isIdentByte(code[at-1]) {
			continue // another name that ends in fn
		}
		rest := strings.TrimLeft(code[i:], " \t")
		if !strings.HasPrefix(rest, "(") {
			continue // fn named, not called
		}
		rest = rest[1:]
		name, rest, ok := codeArg(rest)
		s, isStr := name.(string)
		if !ok || !isStr || s == "" {
			out = append(out, reach{tool: tool, unresolved: true})
			continue
		}
		args := map[string]any{}
		if r := strings.TrimLeft(rest, " \t\n\r"); strings.HasPrefix(r, ",") {
			if v, _, ok := codeArg(r[1:]); ok {
				if m, isMap := v.(map[string]any); isMap {
					args = m
				}
			}
		}
		out = append(out, reach{tool: s, args: args})
	}
	return out
}

// codeArg reads one argument, positional or keyword=value, as a literal.
func codeArg(src string) (any, string, bool) {
	s := strings.TrimLeft(src, " \t\n\r")
	k := 0
	for k < len(s) && isIdentByte(s[k]) {
		k++
	}
	if k > 0 {
		if r := strings.TrimLeft(s[k:], " \t"); strings.HasPrefix(r, "=") && !strings.HasPrefix(r, "==") {
			s = r[1:]
		}
	}
	v, rest, err := pylit.Parse(s)
	if err != nil {
		return nil, src, false
	}
	return v, rest, true
}
