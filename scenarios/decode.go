package scenarios

import (
	"fmt"
	"reflect"
	"slices"
	"strconv"
	"strings"

	"gopkg.in/yaml.v3"
)

// maxDepth bounds nesting (and alias expansion) so hostile input cannot
// exhaust the stack.
const maxDepth = 64

// decoder turns a yaml.Node into Go values strictly: every mapping key must
// be a known field, every scalar must have the right type, and every problem
// is recorded with its position and field path instead of stopping at the
// first one.
type decoder struct {
	file  string
	errs  ErrorList
	pos   map[string]Pos // field path -> position of its value
	depth int
	// unknownHint, when set, may explain an unknown field at a path better
	// than a spelling suggestion can.
	unknownHint func(path string) string
	// fields holds the yaml names of the struct types decoded so far; a
	// file's decoders share one.
	fields fieldCache
}

// fieldCache maps a struct type to its yaml names and field indexes.
type fieldCache map[reflect.Type]map[string]int

func (d *decoder) structFields(t reflect.Type) map[string]int {
	if d.fields == nil {
		d.fields = fieldCache{}
	}
	m, ok := d.fields[t]
	if !ok {
		m = structFields(t)
		d.fields[t] = m
	}
	return m
}

// nodeDecoder is implemented by types with their own YAML shape (a scalar
// shorthand next to the full mapping).
type nodeDecoder interface {
	decodeNode(d *decoder, n *yaml.Node, path string)
}

var nodeDecoderType = reflect.TypeFor[nodeDecoder]()

func (d *decoder) errorf(n *yaml.Node, path, format string, args ...any) {
	e := &Error{File: d.file, Field: path, Msg: fmt.Sprintf(format, args...)}
	if n != nil {
		e.Line, e.Column = n.Line, n.Column
	}
	d.errs = append(d.errs, e)
}

func resolve(n *yaml.Node) *yaml.Node {
	for i := 0; n != nil && n.Kind == yaml.AliasNode && i < maxDepth; i++ {
		n = n.Alias
	}
	return n
}

func kindName(n *yaml.Node) string {
	switch n.Kind {
	case yaml.MappingNode:
		return "a mapping"
	case yaml.SequenceNode:
		return "a list"
	case yaml.ScalarNode:
		if n.Tag == "!!null" {
			return "null"
		}
		return fmt.Sprintf("%s %q", strings.TrimPrefix(n.ShortTag(), "!!"), n.Value)
	case yaml.AliasNode:
		return "an alias"
	}
	return "a document"
}

func join(path, key string) string {
	if path == "" {
		return key
	}
	return path + "." + key
}

// decode stores n into v, which must be settable.
func (d *decoder) decode(n *yaml.Node, v reflect.Value, path string) {
	n = resolve(n)
	if n == nil || n.Kind == yaml.AliasNode {
		d.errorf(n, path, "alias nested too deeply")
		return
	}
	d.depth++
	defer func() { d.depth-- }()
	if d.depth > maxDepth {
		d.errorf(n, path, "nested more than %d levels", maxDepth)
		return
	}
	if d.pos != nil && path != "" {
		if _, ok := d.pos[path]; !ok {
			d.pos[path] = Pos{n.Line, n.Column}
		}
	}
	if v.CanAddr() && v.Addr().Type().Implements(nodeDecoderType) {
		v.Addr().Interface().(nodeDecoder).decodeNode(d, n, path)
		return
	}
	isNull := n.Kind == yaml.ScalarNode && n.ShortTag() == "!!null"
	switch v.Kind() {
	case reflect.Interface:
		var x any
		if err := n.Decode(&x); err != nil {
			d.errorf(n, path, "%v", cleanYAMLError(err))
			return
		}
		if x != nil {
			v.Set(reflect.ValueOf(x))
		}
	case reflect.Pointer:
		if isNull {
			return
		}
		p := reflect.New(v.Type().Elem())
		d.decode(n, p.Elem(), path)
		v.Set(p)
	case reflect.Struct:
		if isNull {
			return
		}
		if n.Kind != yaml.MappingNode {
			d.errorf(n, path, "want a mapping, got %s", kindName(n))
			return
		}
		d.decodeStruct(n, v, path)
	case reflect.Slice:
		if isNull {
			return
		}
		if n.Kind != yaml.SequenceNode {
			d.errorf(n, path, "want a list, got %s", kindName(n))
			return
		}
		s := reflect.MakeSlice(v.Type(), len(n.Content), len(n.Content))
		for i, c := range n.Content {
			d.decode(c, s.Index(i), fmt.Sprintf("%s[%d]", path, i))
		}
		v.Set(s)
	case reflect.Map:
		if isNull {
			return
		}
		if n.Kind != yaml.MappingNode {
			d.errorf(n, path, "want a mapping, got %s", kindName(n))
			return
		}
		m := reflect.MakeMapWithSize(v.Type(), len(n.Content)/2)
		seen := map[string]bool{}
		for i := 0; i+1 < len(n.Content); i += 2 {
			k, val := resolve(n.Content[i]), n.Content[i+1]
			if k == nil || k.Kind != yaml.ScalarNode || k.ShortTag() == "!!null" {
				d.errorf(n.Content[i], path, "want a string key")
				continue
			}
			if seen[k.Value] {
				d.errorf(k, join(path, k.Value), "duplicate key %q", k.Value)
				continue
			}
			seen[k.Value] = true
			e := reflect.New(v.Type().Elem()).Elem()
			d.decode(val, e, join(path, k.Value))
			m.SetMapIndex(reflect.ValueOf(k.Value), e)
		}
		v.Set(m)
	case reflect.String:
		if n.Kind != yaml.ScalarNode || isNull || n.ShortTag() != "!!str" {
			d.errorf(n, path, "want a string, got %s", kindName(n))
			return
		}
		v.SetString(n.Value)
	case reflect.Int:
		if n.Kind != yaml.ScalarNode || n.ShortTag() != "!!int" {
			d.errorf(n, path, "want an integer, got %s", kindName(n))
			return
		}
		i, err := strconv.ParseInt(strings.ReplaceAll(n.Value, "_", ""), 0, 64)
		if err != nil {
			d.errorf(n, path, "want an integer, got %q", n.Value)
			return
		}
		v.SetInt(i)
	case reflect.Float64:
		var f float64
		if n.Kind != yaml.ScalarNode || (n.ShortTag() != "!!int" && n.ShortTag() != "!!float") || n.Decode(&f) != nil {
			d.errorf(n, path, "want a number, got %s", kindName(n))
			return
		}
		v.SetFloat(f)
	case reflect.Bool:
		if n.Kind != yaml.ScalarNode || n.ShortTag() != "!!bool" {
			d.errorf(n, path, "want true or false, got %s", kindName(n))
			return
		}
		v.SetBool(n.Value == "true" || n.Value == "True" || n.Value == "TRUE")
	default:
		panic(fmt.Sprintf("scenarios: cannot decode into %s", v.Type()))
	}
}

// decodeStruct decodes a mapping into a struct by its yaml tags, reporting
// unknown and duplicate keys.
func (d *decoder) decodeStruct(n *yaml.Node, v reflect.Value, path string) {
	fields := d.structFields(v.Type())
	seen := map[string]bool{}
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, val := resolve(n.Content[i]), n.Content[i+1]
		if k == nil || k.Kind != yaml.ScalarNode {
			d.errorf(n.Content[i], path, "want a field name")
			continue
		}
		fp := join(path, k.Value)
		idx, ok := fields[k.Value]
		if !ok {
			if d.unknownHint != nil {
				if h := d.unknownHint(fp); h != "" {
					d.errorf(k, fp, "unknown field %q: %s", k.Value, h)
					continue
				}
			}
			d.errorf(k, fp, "unknown field %q%s", k.Value, suggest(k.Value, fields))
			continue
		}
		if seen[k.Value] {
			d.errorf(k, fp, "duplicate field %q", k.Value)
			continue
		}
		seen[k.Value] = true
		d.decode(val, v.Field(idx), fp)
	}
}

// structFields maps yaml names to field indexes.
func structFields(t reflect.Type) map[string]int {
	m := map[string]int{}
	for i := range t.NumField() {
		f := t.Field(i)
		name, _, _ := strings.Cut(f.Tag.Get("yaml"), ",")
		if !f.IsExported() || name == "-" || name == "" {
			continue
		}
		m[name] = i
	}
	return m
}

// suggest names the known field closest to an unknown one, to catch typos.
func suggest(name string, fields map[string]int) string {
	best, bestD := "", 3
	keys := make([]string, 0, len(fields))
	for k := range fields {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for _, k := range keys {
		if dist := editDistance(name, k); dist < bestD {
			best, bestD = k, dist
		}
	}
	if best == "" {
		return ""
	}
	return fmt.Sprintf(" (did you mean %q?)", best)
}

func editDistance(a, b string) int {
	if len(a) > 64 || len(b) > 64 {
		return 99
	}
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			c := 1
			if a[i-1] == b[j-1] {
				c = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+c)
		}
		prev, cur = cur, prev
	}
	return prev[len(b)]
}

// cleanYAMLError drops yaml.v3's "yaml: " prefix.
func cleanYAMLError(err error) string {
	return strings.TrimPrefix(err.Error(), "yaml: ")
}

// decodeNode accepts a bare endpoint string, {call: "GET /path"} or
// {any_of: [...]}, the mappings with params.
func (c *CallSet) decodeNode(d *decoder, n *yaml.Node, path string) {
	if n.Kind == yaml.ScalarNode && n.ShortTag() == "!!str" {
		c.AnyOf = []string{n.Value}
		return
	}
	if n.Kind != yaml.MappingNode {
		d.errorf(n, path, "want an endpoint such as \"GET /path\", {call: ..., params: ...} or {any_of: [...]}, got %s", kindName(n))
		return
	}
	var p struct {
		Call     string                `yaml:"call"`
		AnyOf    []string              `yaml:"any_of"`
		Params   map[string]*ParamRule `yaml:"params"`
		AllPages bool                  `yaml:"all_pages"`
	}
	d.decodeStruct(n, reflect.ValueOf(&p).Elem(), path)
	switch {
	case p.Call != "" && len(p.AnyOf) > 0:
		d.errorf(n, path, "give call or any_of, not both")
	case p.Call != "":
		p.AnyOf = []string{p.Call}
	}
	*c = CallSet{AnyOf: p.AnyOf, Params: p.Params, AllPages: p.AllPages}
}

// decodeNode accepts a bare scalar as shorthand for {equals: scalar}.
func (r *ParamRule) decodeNode(d *decoder, n *yaml.Node, path string) {
	if n.Kind == yaml.ScalarNode {
		var x any
		if err := n.Decode(&x); err != nil {
			d.errorf(n, path, "%v", cleanYAMLError(err))
			return
		}
		r.Equals = x
		return
	}
	if n.Kind != yaml.MappingNode {
		d.errorf(n, path, "want a rule mapping or a scalar, got %s", kindName(n))
		return
	}
	type plain ParamRule
	var p plain
	d.decodeStruct(n, reflect.ValueOf(&p).Elem(), path)
	*r = ParamRule(p)
}
