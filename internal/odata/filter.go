// Package odata parses the OData filters Central's list endpoints take
// (?filter=status eq 'Connected' and siteId in ('1', '2')): the fake
// Central evaluates them, and scoring reads the values a server filtered on.
package odata

import (
	"fmt"
	"strconv"
	"strings"
	"time"
)

// Filter is a parsed OData filter in the subset Central documents and the
// compared servers send: comparisons joined by "and"; operators eq, ne, in,
// gt, lt, ge, le; values quoted with ' (a doubled ” is a quote), or bare
// (numbers, booleans, RFC 3339 timestamps). "or" and "not" are rejected, as
// Central rejects them.
type Filter struct {
	Terms []Term
}

// Term is one comparison.
type Term struct {
	Field  string
	Op     string // eq ne gt lt ge le in
	Values []string
}

// maxFilterLen bounds the work a filter can cause.
const maxFilterLen = 4096

// Parse parses an OData filter string. An empty string is an empty
// filter (matches everything).
func Parse(s string) (Filter, error) {
	var f Filter
	if len(s) > maxFilterLen {
		return f, fmt.Errorf("filter is longer than %d characters", maxFilterLen)
	}
	toks, err := lexFilter(s)
	if err != nil {
		return f, err
	}
	p := &filterParser{toks: toks}
	if len(toks) == 0 {
		return f, nil
	}
	if err := p.expr(&f, 0); err != nil {
		return Filter{}, err
	}
	if p.i != len(p.toks) {
		return Filter{}, fmt.Errorf("unexpected %q at position %d", p.toks[p.i].text, p.toks[p.i].pos)
	}
	return f, nil
}

type ftok struct {
	kind byte // 'w' word, 's' string, '(' ')' ','
	text string
	pos  int
}

func lexFilter(s string) ([]ftok, error) {
	var out []ftok
	for i := 0; i < len(s); {
		c := s[i]
		switch {
		case c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '+':
			i++
		case c == '(' || c == ')' || c == ',':
			out = append(out, ftok{kind: c, text: string(c), pos: i})
			i++
		case c == '\'':
			var b strings.Builder
			j := i + 1
			closed := false
			for j < len(s) {
				if s[j] == '\'' {
					if j+1 < len(s) && s[j+1] == '\'' {
						b.WriteByte('\'')
						j += 2
						continue
					}
					closed = true
					j++
					break
				}
				b.WriteByte(s[j])
				j++
			}
			if !closed {
				return nil, fmt.Errorf("unterminated string at position %d", i)
			}
			out = append(out, ftok{kind: 's', text: b.String(), pos: i})
			i = j
		default:
			j := i
			for j < len(s) && !strings.ContainsRune(" \t\r\n()',", rune(s[j])) {
				j++
			}
			out = append(out, ftok{kind: 'w', text: s[i:j], pos: i})
			i = j
		}
		if len(out) > 512 {
			return nil, fmt.Errorf("filter has too many tokens")
		}
	}
	return out, nil
}

type filterParser struct {
	toks []ftok
	i    int
}

func (p *filterParser) peek() *ftok {
	if p.i < len(p.toks) {
		return &p.toks[p.i]
	}
	return nil
}

func (p *filterParser) expr(f *Filter, depth int) error {
	if depth > 8 {
		return fmt.Errorf("filter nests too deeply")
	}
	for {
		if err := p.term(f, depth); err != nil {
			return err
		}
		t := p.peek()
		if t == nil || t.kind == ')' {
			return nil
		}
		if t.kind == 'w' {
			switch strings.ToLower(t.text) {
			case "and":
				p.i++
				continue
			case "or", "not":
				return fmt.Errorf("operator %q is not supported (only 'and')", t.text)
			}
		}
		return fmt.Errorf("expected 'and' at position %d, got %q", t.pos, t.text)
	}
}

func (p *filterParser) term(f *Filter, depth int) error {
	t := p.peek()
	if t == nil {
		return fmt.Errorf("unexpected end of filter")
	}
	if t.kind == '(' {
		p.i++
		if err := p.expr(f, depth+1); err != nil {
			return err
		}
		if t := p.peek(); t == nil || t.kind != ')' {
			return fmt.Errorf("missing ')'")
		}
		p.i++
		return nil
	}
	if t.kind != 'w' {
		return fmt.Errorf("expected a field name at position %d, got %q", t.pos, t.text)
	}
	if strings.EqualFold(t.text, "not") {
		return fmt.Errorf("operator 'not' is not supported")
	}
	field := t.text
	p.i++
	opTok := p.peek()
	if opTok == nil || opTok.kind != 'w' {
		return fmt.Errorf("expected an operator after %q", field)
	}
	op := strings.ToLower(opTok.text)
	p.i++
	switch op {
	case "eq", "ne", "gt", "lt", "ge", "le":
		v := p.peek()
		if v == nil || (v.kind != 's' && v.kind != 'w') {
			return fmt.Errorf("expected a value after %q %s", field, op)
		}
		p.i++
		f.Terms = append(f.Terms, Term{Field: field, Op: op, Values: []string{v.text}})
		return nil
	case "in":
		if t := p.peek(); t == nil || t.kind != '(' {
			return fmt.Errorf("expected '(' after %q in", field)
		}
		p.i++
		var vals []string
		for {
			v := p.peek()
			if v == nil || (v.kind != 's' && v.kind != 'w') {
				return fmt.Errorf("expected a value in the list of %q", field)
			}
			vals = append(vals, v.text)
			p.i++
			sep := p.peek()
			if sep == nil {
				return fmt.Errorf("missing ')' after the list of %q", field)
			}
			p.i++
			if sep.kind == ')' {
				break
			}
			if sep.kind != ',' {
				return fmt.Errorf("expected ',' or ')' in the list of %q", field)
			}
		}
		f.Terms = append(f.Terms, Term{Field: field, Op: "in", Values: vals})
		return nil
	}
	return fmt.Errorf("operator %q is not supported", opTok.text)
}

// Fields lists the fields the filter mentions.
func (f Filter) Fields() []string {
	var out []string
	for _, t := range f.Terms {
		out = append(out, t.Field)
	}
	return out
}

// Has reports whether the filter constrains field.
func (f Filter) Has(field string) bool {
	for _, t := range f.Terms {
		if t.Field == field {
			return true
		}
	}
	return false
}

// Match evaluates the filter on an object's fields.
func (f Filter) Match(get func(field string) (string, bool)) bool {
	for _, t := range f.Terms {
		v, ok := get(t.Field)
		if !ok {
			return false
		}
		if !t.match(v) {
			return false
		}
	}
	return true
}

func (t Term) match(v string) bool {
	switch t.Op {
	case "eq":
		return strings.EqualFold(v, t.Values[0])
	case "ne":
		return !strings.EqualFold(v, t.Values[0])
	case "in":
		for _, x := range t.Values {
			if strings.EqualFold(v, x) {
				return true
			}
		}
		return false
	}
	c := CompareValues(v, t.Values[0])
	switch t.Op {
	case "gt":
		return c > 0
	case "lt":
		return c < 0
	case "ge":
		return c >= 0
	case "le":
		return c <= 0
	}
	return false
}

// CompareValues orders two values as times, then numbers, then strings.
func CompareValues(a, b string) int {
	if ta, err := time.Parse(time.RFC3339Nano, a); err == nil {
		if tb, err := time.Parse(time.RFC3339Nano, b); err == nil {
			return ta.Compare(tb)
		}
	}
	if fa, err := strconv.ParseFloat(a, 64); err == nil {
		if fb, err := strconv.ParseFloat(b, 64); err == nil {
			switch {
			case fa < fb:
				return -1
			case fa > fb:
				return 1
			}
			return 0
		}
	}
	return strings.Compare(a, b)
}

// TimeWindow extracts "timestamp gt X and timestamp lt Y" bounds (zero when
// absent); an unparsable bound is an error.
func (f Filter) TimeWindow(field string) (from, to time.Time, err error) {
	for _, t := range f.Terms {
		if t.Field != field {
			continue
		}
		ts, perr := time.Parse(time.RFC3339Nano, t.Values[0])
		if perr != nil {
			return from, to, fmt.Errorf("%s %s %q is not an RFC 3339 timestamp", field, t.Op, t.Values[0])
		}
		switch t.Op {
		case "gt", "ge":
			from = ts
		case "lt", "le":
			to = ts
		default:
			return from, to, fmt.Errorf("%s supports only gt, lt, ge, le", field)
		}
	}
	return from, to, nil
}
