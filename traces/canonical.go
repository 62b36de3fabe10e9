package traces

import (
	"bytes"
	"errors"
	"fmt"
	"math"
	"slices"
	"strconv"
	"unicode/utf16"
	"unicode/utf8"
)

// maxDepth bounds nesting so that hostile input cannot exhaust the stack.
const maxDepth = 512

// Canonical returns the canonical form of the JSON text data, following the
// rules in the package documentation. It returns an error for anything that
// is not exactly one JSON value, for duplicate keys, invalid UTF-8, lone
// surrogates and nesting deeper than 512.
func Canonical(data []byte) ([]byte, error) {
	if isCanonical(data) {
		return bytes.Clone(data), nil
	}
	c := canonicalizer{in: data, out: make([]byte, 0, len(data))}
	c.skipSpace()
	if err := c.value(0); err != nil {
		return nil, err
	}
	c.skipSpace()
	if c.pos != len(c.in) {
		return nil, c.errorf("unexpected data after the JSON value")
	}
	return c.out, nil
}

// Marshal returns the canonical form of v as encoding/json encodes it:
// Canonical(json.Marshal(v)), written directly (encode.go) rather than
// encoded and then parsed again, byte for byte the same
// (FuzzCanonicalEncoder).
func Marshal(v any) ([]byte, error) {
	e := &encoder{out: make([]byte, 0, 512), withSide: true} // side fields too, as encoding/json writes them
	e.encode(v)
	return e.out, e.err
}

// ErrSyntax is wrapped by every error Canonical returns for bad input.
var ErrSyntax = errors.New("invalid JSON")

type canonicalizer struct {
	in  []byte
	pos int
	out []byte
}

func (c *canonicalizer) errorf(format string, args ...any) error {
	return fmt.Errorf("%w at byte %d: %s", ErrSyntax, c.pos, fmt.Sprintf(format, args...))
}

func (c *canonicalizer) skipSpace() {
	for c.pos < len(c.in) {
		switch c.in[c.pos] {
		case ' ', '\t', '\n', '\r':
			c.pos++
		default:
			return
		}
	}
}

func (c *canonicalizer) value(depth int) error {
	if depth > maxDepth {
		return c.errorf("nesting deeper than %d", maxDepth)
	}
	if c.pos >= len(c.in) {
		return c.errorf("unexpected end of input")
	}
	switch ch := c.in[c.pos]; {
	case ch == '{':
		return c.object(depth)
	case ch == '[':
		return c.array(depth)
	case ch == '"':
		s, err := c.str()
		if err != nil {
			return err
		}
		c.out = appendString(c.out, s)
		return nil
	case ch == '-' || (ch >= '0' && ch <= '9'):
		return c.number()
	case ch == 't':
		return c.literal("true")
	case ch == 'f':
		return c.literal("false")
	case ch == 'n':
		return c.literal("null")
	default:
		return c.errorf("unexpected character %q", ch)
	}
}

func (c *canonicalizer) literal(word string) error {
	if !bytes.HasPrefix(c.in[c.pos:], []byte(word)) {
		return c.errorf("invalid literal")
	}
	c.pos += len(word)
	c.out = append(c.out, word...)
	return nil
}

type member struct {
	key        string
	start, end int // of `"key":value` in out
}

func (c *canonicalizer) object(depth int) error {
	c.pos++ // {
	base := len(c.out)
	c.out = append(c.out, '{')
	var members []member
	c.skipSpace()
	if c.pos < len(c.in) && c.in[c.pos] == '}' {
		c.pos++
		c.out = append(c.out, '}')
		return nil
	}
	for {
		c.skipSpace()
		if c.pos >= len(c.in) || c.in[c.pos] != '"' {
			return c.errorf("expected a string key")
		}
		key, err := c.str()
		if err != nil {
			return err
		}
		c.skipSpace()
		if c.pos >= len(c.in) || c.in[c.pos] != ':' {
			return c.errorf("expected ':' after object key")
		}
		c.pos++
		c.skipSpace()
		start := len(c.out)
		c.out = appendString(c.out, key)
		c.out = append(c.out, ':')
		if err := c.value(depth + 1); err != nil {
			return err
		}
		members = append(members, member{key: key, start: start, end: len(c.out)})
		c.skipSpace()
		if c.pos >= len(c.in) {
			return c.errorf("unexpected end of input in object")
		}
		if c.in[c.pos] == ',' {
			c.pos++
			continue
		}
		if c.in[c.pos] != '}' {
			return c.errorf("expected ',' or '}' in object")
		}
		c.pos++
		break
	}
	cmp := func(a, b member) int { return compareUTF16(a.key, b.key) }
	if !slices.IsSortedFunc(members, cmp) {
		slices.SortStableFunc(members, cmp)
	}
	for i := 1; i < len(members); i++ {
		if members[i-1].key == members[i].key {
			return c.errorf("duplicate object key %q", members[i].key)
		}
	}
	// Members were written back to back without commas; lay them out again
	// in key order, comma-separated.
	body := slices.Clone(c.out[base+1:])
	c.out = c.out[:base+1]
	for i, m := range members {
		if i > 0 {
			c.out = append(c.out, ',')
		}
		c.out = append(c.out, body[m.start-base-1:m.end-base-1]...)
	}
	c.out = append(c.out, '}')
	return nil
}

func (c *canonicalizer) array(depth int) error {
	c.pos++ // [
	c.out = append(c.out, '[')
	c.skipSpace()
	if c.pos < len(c.in) && c.in[c.pos] == ']' {
		c.pos++
		c.out = append(c.out, ']')
		return nil
	}
	for first := true; ; first = false {
		if !first {
			c.out = append(c.out, ',')
		}
		c.skipSpace()
		if err := c.value(depth + 1); err != nil {
			return err
		}
		c.skipSpace()
		if c.pos >= len(c.in) {
			return c.errorf("unexpected end of input in array")
		}
		if c.in[c.pos] == ',' {
			c.pos++
			continue
		}
		if c.in[c.pos] != ']' {
			return c.errorf("expected ',' or ']' in array")
		}
		c.pos++
		c.out = append(c.out, ']')
		return nil
	}
}

// str parses a JSON string at c.pos and returns its decoded value.
func (c *canonicalizer) str() (string, error) {
	c.pos++ // opening quote
	start := c.pos
	// Fast path: no escapes.
	for c.pos < len(c.in) {
		ch := c.in[c.pos]
		if ch == '"' {
			s := c.in[start:c.pos]
			if !utf8.Valid(s) {
				return "", c.errorf("invalid UTF-8 in string")
			}
			c.pos++
			return string(s), nil
		}
		if ch == '\\' {
			break
		}
		if ch < 0x20 {
			return "", c.errorf("control character in string")
		}
		c.pos++
	}
	buf := append([]byte(nil), c.in[start:c.pos]...)
	for {
		if c.pos >= len(c.in) {
			return "", c.errorf("unterminated string")
		}
		ch := c.in[c.pos]
		switch {
		case ch == '"':
			c.pos++
			if !utf8.Valid(buf) {
				return "", c.errorf("invalid UTF-8 in string")
			}
			return string(buf), nil
		case ch < 0x20:
			return "", c.errorf("control character in string")
		case ch != '\\':
			buf = append(buf, ch)
			c.pos++
			continue
		}
		if c.pos+1 >= len(c.in) {
			return "", c.errorf("unterminated escape")
		}
		esc := c.in[c.pos+1]
		c.pos += 2
		switch esc {
		case '"', '\\', '/':
			buf = append(buf, esc)
		case 'b':
			buf = append(buf, '\b')
		case 'f':
			buf = append(buf, '\f')
		case 'n':
			buf = append(buf, '\n')
		case 'r':
			buf = append(buf, '\r')
		case 't':
			buf = append(buf, '\t')
		case 'u':
			r, err := c.hex4()
			if err != nil {
				return "", err
			}
			if utf16.IsSurrogate(r) {
				if r >= 0xDC00 || c.pos+1 >= len(c.in) || c.in[c.pos] != '\\' || c.in[c.pos+1] != 'u' {
					return "", c.errorf("lone surrogate \\u%04x", r)
				}
				c.pos += 2
				lo, err := c.hex4()
				if err != nil {
					return "", err
				}
				r = utf16.DecodeRune(r, lo)
				if r == utf8.RuneError {
					return "", c.errorf("invalid surrogate pair")
				}
			}
			buf = utf8.AppendRune(buf, r)
		default:
			return "", c.errorf("invalid escape \\%c", esc)
		}
	}
}

func (c *canonicalizer) hex4() (rune, error) {
	if c.pos+4 > len(c.in) {
		return 0, c.errorf("short \\u escape")
	}
	var r rune
	for _, h := range c.in[c.pos : c.pos+4] {
		r <<= 4
		switch {
		case h >= '0' && h <= '9':
			r |= rune(h - '0')
		case h >= 'a' && h <= 'f':
			r |= rune(h-'a') + 10
		case h >= 'A' && h <= 'F':
			r |= rune(h-'A') + 10
		default:
			return 0, c.errorf("invalid hex digit in \\u escape")
		}
	}
	c.pos += 4
	return r, nil
}

func (c *canonicalizer) number() error {
	end, integer, msg := scanNumber(c.in, c.pos)
	text := c.in[c.pos:end]
	c.pos = end
	if msg != "" {
		return c.errorf("%s", msg)
	}
	out, ok := appendCanonicalNumber(c.out, text, integer)
	if !ok {
		return c.errorf("number %s out of range", text)
	}
	c.out = out
	return nil
}

// scanNumber scans the JSON number at in[pos:] and returns where it ends
// and whether it is an integer (no fraction, no exponent); for text that is
// not a number, where scanning stopped and why.
func scanNumber(in []byte, pos int) (end int, integer bool, msg string) {
	digits := func() int {
		n := 0
		for pos < len(in) && in[pos] >= '0' && in[pos] <= '9' {
			pos++
			n++
		}
		return n
	}
	integer = true
	if pos < len(in) && in[pos] == '-' {
		pos++
	}
	switch {
	case pos < len(in) && in[pos] == '0':
		pos++
	case pos < len(in) && in[pos] >= '1' && in[pos] <= '9':
		digits()
	default:
		return pos, false, "invalid number"
	}
	if pos < len(in) && in[pos] == '.' {
		integer = false
		pos++
		if digits() == 0 {
			return pos, false, "invalid number: no digits after '.'"
		}
	}
	if pos < len(in) && (in[pos] == 'e' || in[pos] == 'E') {
		integer = false
		pos++
		if pos < len(in) && (in[pos] == '+' || in[pos] == '-') {
			pos++
		}
		if digits() == 0 {
			return pos, false, "invalid number: no digits in exponent"
		}
	}
	return pos, integer, ""
}

// appendCanonicalNumber appends the canonical form of the number text
// (scanned by scanNumber): an integer that fits in an int64 as such, any
// other number as ECMAScript prints it. ok is false when it is out of
// range.
func appendCanonicalNumber(dst, text []byte, integer bool) (out []byte, ok bool) {
	if integer {
		if n, err := strconv.ParseInt(string(text), 10, 64); err == nil {
			return strconv.AppendInt(dst, n, 10), true
		}
	}
	f, err := strconv.ParseFloat(string(text), 64)
	if err != nil || math.IsInf(f, 0) {
		return dst, false
	}
	return appendES6Number(dst, f), true
}

// appendES6Number formats f as ECMAScript's Number.prototype.toString does.
func appendES6Number(dst []byte, f float64) []byte {
	if f == 0 {
		return append(dst, '0') // also -0
	}
	abs := math.Abs(f)
	if abs >= 1e-6 && abs < 1e21 {
		return strconv.AppendFloat(dst, f, 'f', -1, 64)
	}
	s := strconv.FormatFloat(f, 'e', -1, 64) // 1.5e-07, 1e+21
	mant, exp, _ := bytes.Cut([]byte(s), []byte("e"))
	dst = append(dst, mant...)
	dst = append(dst, 'e', exp[0])
	digits := bytes.TrimLeft(exp[1:], "0")
	return append(dst, digits...)
}

// appendString writes s as a canonical JSON string.
func appendString(dst []byte, s string) []byte {
	const hex = "0123456789abcdef"
	dst = append(dst, '"')
	start := 0
	for i := 0; i < len(s); i++ {
		ch := s[i]
		if ch >= 0x20 && ch != '"' && ch != '\\' {
			continue
		}
		dst = append(dst, s[start:i]...)
		switch ch {
		case '"':
			dst = append(dst, '\\', '"')
		case '\\':
			dst = append(dst, '\\', '\\')
		case '\b':
			dst = append(dst, '\\', 'b')
		case '\f':
			dst = append(dst, '\\', 'f')
		case '\n':
			dst = append(dst, '\\', 'n')
		case '\r':
			dst = append(dst, '\\', 'r')
		case '\t':
			dst = append(dst, '\\', 't')
		default:
			dst = append(dst, '\\', 'u', '0', '0', hex[ch>>4], hex[ch&0xF])
		}
		start = i + 1
	}
	dst = append(dst, s[start:]...)
	return append(dst, '"')
}

// compareUTF16 orders strings by their UTF-16 code units, as RFC 8785
// requires. UTF-8 byte order equals code point order, which differs from
// UTF-16 order only between U+E000..U+FFFF and supplementary characters.
func compareUTF16(a, b string) int {
	for a != "" && b != "" {
		ra, na := utf8.DecodeRuneInString(a)
		rb, nb := utf8.DecodeRuneInString(b)
		if ra != rb {
			return utf16Key(ra) - utf16Key(rb)
		}
		a, b = a[na:], b[nb:]
	}
	return len(a) - len(b)
}

// utf16Key maps a rune to a value ordered like its first UTF-16 code unit,
// with ties between two supplementary runes broken by code point.
func utf16Key(r rune) int {
	if r < 0x10000 {
		return int(r) << 21
	}
	hi, _ := utf16.EncodeRune(r)
	return int(hi)<<21 | int(r)
}
