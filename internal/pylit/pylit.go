// Package pylit writes JSON values as Python literals and reads them back:
// the arguments of a tool call inside a code-mode block
// (`await call_tool("name", {...})`), which the oracle writes and scoring
// reads. Only literals: strings, numbers, True/False/None, lists, tuples
// and dicts with string keys; anything else (a variable, an expression) is
// not a literal, and Parse says so.
package pylit

import (
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"sort"
	"strconv"
	"strings"
	"unicode/utf8"
)

// MaxDepth bounds the nesting Parse follows.
const MaxDepth = 64

// Format writes v, a value as encoding/json decodes it into any, as a Python
// literal: strings as JSON strings (also valid Python), true/false/null as
// True/False/None, objects as dicts with sorted keys.
func Format(v any) (string, error) {
	var b strings.Builder
	if err := format(&b, v, 0); err != nil {
		return "", err
	}
	return b.String(), nil
}

func format(b *strings.Builder, v any, depth int) error {
	if depth > MaxDepth {
		return errors.New("nested too deeply")
	}
	switch x := v.(type) {
	case nil:
		b.WriteString("None")
	case bool:
		if x {
			b.WriteString("True")
		} else {
			b.WriteString("False")
		}
	case string:
		s, _ := json.Marshal(x)
		b.Write(s)
	case float64:
		if math.IsInf(x, 0) || math.IsNaN(x) {
			return fmt.Errorf("%v has no literal", x)
		}
		if x == 0 && math.Signbit(x) {
			b.WriteString("-0.0")
		} else if x == math.Trunc(x) && math.Abs(x) < 1e15 {
			b.WriteString(strconv.FormatInt(int64(x), 10))
		} else {
			b.WriteString(strconv.FormatFloat(x, 'g', -1, 64))
		}
	case json.Number:
		b.WriteString(x.String())
	case []any:
		b.WriteByte('[')
		for i, y := range x {
			if i > 0 {
				b.WriteString(", ")
			}
			if err := format(b, y, depth+1); err != nil {
				return err
			}
		}
		b.WriteByte(']')
	case map[string]any:
		keys := make([]string, 0, len(x))
		for k := range x {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		b.WriteByte('{')
		for i, k := range keys {
			if i > 0 {
				b.WriteString(", ")
			}
			s, _ := json.Marshal(k)
			b.Write(s)
			b.WriteString(": ")
			if err := format(b, x[k], depth+1); err != nil {
				return err
			}
		}
		b.WriteByte('}')
	default:
		return fmt.Errorf("%T has no literal", v)
	}
	return nil
}

// ErrNotLiteral is returned by Parse for a value that is not a literal (a
// name, a call, an expression).
var ErrNotLiteral = errors.New("not a literal")

// Parse reads one literal at the start of src (after spaces) and returns
// it as encoding/json would decode it (float64 numbers, []any for lists
// and tuples, map[string]any for dicts) and the rest of src after it.
func Parse(src string) (any, string, error) {
	p := &parser{s: src}
	v, err := p.value(0)
	if err != nil {
		return nil, src, err
	}
	return v, p.s[p.i:], nil
}

type parser struct {
	s string
	i int
}

func (p *parser) space() {
	for p.i < len(p.s) {
		switch c := p.s[p.i]; {
		case c == ' ' || c == '\t' || c == '\n' || c == '\r':
			p.i++
		case c == '\\' && p.i+1 < len(p.s) && p.s[p.i+1] == '\n': // a line continuation
			p.i += 2
		case c == '#': // a comment, to the end of its line
			for p.i < len(p.s) && p.s[p.i] != '\n' {
				p.i++
			}
		default:
			return
		}
	}
}

func (p *parser) value(depth int) (any, error) {
	if depth > MaxDepth {
		return nil, errors.New("nested too deeply")
	}
	p.space()
	if p.i >= len(p.s) {
		return nil, ErrNotLiteral
	}
	switch c := p.s[p.i]; {
	case c == '"' || c == '\'':
		return p.str()
	case c == '{':
		return p.dict(depth)
	case c == '[':
		return p.seq(depth, ']')
	case c == '(':
		return p.seq(depth, ')')
	case c == '-' || c == '+' || c == '.' || c >= '0' && c <= '9':
		return p.number()
	default:
		for _, w := range []struct {
			word string
			v    any
		}{{"True", true}, {"False", false}, {"None", nil}} {
			if strings.HasPrefix(p.s[p.i:], w.word) && !identAt(p.s, p.i+len(w.word)) {
				p.i += len(w.word)
				return w.v, nil
			}
		}
		return nil, ErrNotLiteral
	}
}

func identAt(s string, i int) bool {
	if i >= len(s) {
		return false
	}
	c := s[i]
	return c == '_' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c >= 0x80
}

func (p *parser) number() (any, error) {
	start := p.i
	if p.s[p.i] == '-' || p.s[p.i] == '+' {
		p.i++
	}
	for p.i < len(p.s) {
		c := p.s[p.i]
		if c >= '0' && c <= '9' || c == '.' || c == '_' || c == 'e' || c == 'E' ||
			(c == '-' || c == '+') && (p.s[p.i-1] == 'e' || p.s[p.i-1] == 'E') {
			p.i++
			continue
		}
		break
	}
	if identAt(p.s, p.i) {
		return nil, ErrNotLiteral // 0x10, 1j, 3abc
	}
	f, err := strconv.ParseFloat(strings.ReplaceAll(p.s[start:p.i], "_", ""), 64)
	if err != nil {
		return nil, ErrNotLiteral
	}
	return f, nil
}

func (p *parser) str() (string, error) {
	q := p.s[p.i]
	triple := strings.HasPrefix(p.s[p.i:], strings.Repeat(string(q), 3))
	if triple {
		p.i += 3
	} else {
		p.i++
	}
	var b strings.Builder
	for p.i < len(p.s) {
		c := p.s[p.i]
		switch {
		case triple && strings.HasPrefix(p.s[p.i:], strings.Repeat(string(q), 3)):
			p.i += 3
			return b.String(), nil
		case !triple && c == q:
			p.i++
			return b.String(), nil
		case !triple && c == '\n':
			return "", errors.New("unterminated string")
		case c == '\\':
			if err := p.escape(&b); err != nil {
				return "", err
			}
		default:
			r, n := utf8.DecodeRuneInString(p.s[p.i:])
			b.WriteRune(r)
			p.i += n
		}
	}
	return "", errors.New("unterminated string")
}

func (p *parser) escape(b *strings.Builder) error {
	p.i++ // the backslash
	if p.i >= len(p.s) {
		return errors.New("unterminated string")
	}
	c := p.s[p.i]
	p.i++
	simple := map[byte]string{'\\': `\`, '\'': `'`, '"': `"`, 'n': "\n", 't': "\t", 'r': "\r", 'a': "\a", 'b': "\b", 'f': "\f", 'v': "\v", '\n': ""}
	if s, ok := simple[c]; ok {
		b.WriteString(s)
		return nil
	}
	width := map[byte]int{'x': 2, 'u': 4, 'U': 8}[c]
	if width == 0 {
		b.WriteByte('\\') // Python keeps an unknown escape as written
		r, n := utf8.DecodeRuneInString(p.s[p.i-1:])
		b.WriteRune(r)
		p.i += n - 1
		return nil
	}
	if p.i+width > len(p.s) {
		return fmt.Errorf(`truncated \%c escape`, c)
	}
	n, err := strconv.ParseUint(p.s[p.i:p.i+width], 16, 32)
	if err != nil || n > utf8.MaxRune {
		return fmt.Errorf(`bad \%c escape`, c)
	}
	p.i += width
	b.WriteRune(rune(n))
	return nil
}

func (p *parser) seq(depth int, end byte) ([]any, error) {
	p.i++
	out := []any{}
	for {
		p.space()
		if p.i < len(p.s) && p.s[p.i] == end {
			p.i++
			return out, nil
		}
		v, err := p.value(depth + 1)
		if err != nil {
			return nil, err
		}
		out = append(out, v)
		p.space()
		switch {
		case p.i < len(p.s) && p.s[p.i] == ',':
			p.i++
		case p.i < len(p.s) && p.s[p.i] == end:
		default:
			return nil, ErrNotLiteral
		}
	}
}

func (p *parser) dict(depth int) (map[string]any, error) {
	p.i++
	out := map[string]any{}
	for {
		p.space()
		if p.i < len(p.s) && p.s[p.i] == '}' {
			p.i++
			return out, nil
		}
		k, err := p.value(depth + 1)
		if err != nil {
			return nil, err
		}
		ks, ok := k.(string)
		if !ok {
			return nil, ErrNotLiteral // JSON objects have string keys
		}
		p.space()
		if p.i >= len(p.s) || p.s[p.i] != ':' {
			return nil, ErrNotLiteral
		}
		p.i++
		v, err := p.value(depth + 1)
		if err != nil {
			return nil, err
		}
		out[ks] = v
		p.space()
		switch {
		case p.i < len(p.s) && p.s[p.i] == ',':
			p.i++
		case p.i < len(p.s) && p.s[p.i] == '}':
		default:
			return nil, ErrNotLiteral
		}
	}
}
