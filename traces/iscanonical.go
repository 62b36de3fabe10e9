package traces

import (
	"bytes"
	"encoding/binary"
	"unicode/utf8"
)

// isCanonical reports whether data is exactly its canonical form, that is
// whether Canonical(data) would return data unchanged. It is a scan with
// no allocation on the common path, several times cheaper than
// canonicalizing: most payloads bench stores are canonical already (the
// requests it builds, the values it read back from the store). It may
// answer false for a canonical text it does not bother to prove so
// (keys with escapes); never true for one that is not.
func isCanonical(data []byte) bool {
	v := canonicalChecker{in: data}
	return v.value(0) && v.pos == len(data)
}

type canonicalChecker struct {
	in    []byte
	pos   int
	known *knownValues // nil: none
	// added is where the last value remembered in known began (0: none
	// yet): an array around it is not remembered too, so that each byte
	// is copied into known once at most, however deep the nesting.
	added int
}

func (v *canonicalChecker) value(depth int) bool {
	if depth > maxDepth || v.pos >= len(v.in) {
		return false
	}
	switch ch := v.in[v.pos]; {
	case ch == '{':
		return v.object(depth)
	case ch == '[':
		if n := v.known.match(v.in, v.pos, depth, true); n > 0 {
			v.pos += n
			return true
		}
		start := v.pos
		ok := v.array(depth)
		if ok && v.known != nil && v.pos-start >= knownMinSize && (v.added == 0 || v.added < start) {
			v.known.add(v.in[start:v.pos], depth)
			v.added = start + 1
		}
		return ok
	case ch == '"':
		_, _, ok := v.str()
		return ok
	case ch == '-' || (ch >= '0' && ch <= '9'):
		return v.number()
	case ch == 't':
		return v.literal("true")
	case ch == 'f':
		return v.literal("false")
	case ch == 'n':
		return v.literal("null")
	}
	return false
}

func (v *canonicalChecker) literal(word string) bool {
	if !bytes.HasPrefix(v.in[v.pos:], []byte(word)) {
		return false
	}
	v.pos += len(word)
	return true
}

func (v *canonicalChecker) object(depth int) bool {
	v.pos++ // {
	if v.pos < len(v.in) && v.in[v.pos] == '}' {
		v.pos++
		return true
	}
	var prev []byte
	for first := true; ; first = false {
		if v.pos >= len(v.in) || v.in[v.pos] != '"' {
			return false
		}
		key, escaped, ok := v.str()
		if !ok || escaped {
			return false // escaped keys: left to the canonicalizer
		}
		// Keys in strictly increasing UTF-16 order (no duplicates).
		if !first && compareUTF16Bytes(prev, key) >= 0 {
			return false
		}
		prev = key
		if v.pos >= len(v.in) || v.in[v.pos] != ':' {
			return false
		}
		v.pos++
		if !v.value(depth + 1) {
			return false
		}
		if v.pos >= len(v.in) {
			return false
		}
		switch v.in[v.pos] {
		case ',':
			v.pos++
		case '}':
			v.pos++
			return true
		default:
			return false
		}
	}
}

func (v *canonicalChecker) array(depth int) bool {
	v.pos++ // [
	if v.pos < len(v.in) && v.in[v.pos] == ']' {
		v.pos++
		return true
	}
	for {
		if !v.value(depth+1) || v.pos >= len(v.in) {
			return false
		}
		switch v.in[v.pos] {
		case ',':
			v.pos++
		case ']':
			v.pos++
			return true
		default:
			return false
		}
	}
}

// str checks a string in canonical form at v.pos and returns its bytes
// between the quotes, whether it holds an escape (its bytes are then not
// its value), and whether it is canonical.
func (v *canonicalChecker) str() (raw []byte, escaped, ok bool) {
	v.pos++ // opening quote
	start := v.pos
	ascii := true
	for v.pos < len(v.in) {
		// Most bytes are printable ASCII other than a quote or a
		// backslash: skipped eight at a time, then one at a time.
		for v.pos+8 <= len(v.in) && !specialByteIn(binary.LittleEndian.Uint64(v.in[v.pos:])) {
			v.pos += 8
		}
		for v.pos < len(v.in) && plainByte[v.in[v.pos]] {
			v.pos++
		}
		if v.pos >= len(v.in) {
			break
		}
		ch := v.in[v.pos]
		switch {
		case ch == '"':
			s := v.in[start:v.pos]
			v.pos++
			if !ascii && !utf8.Valid(s) {
				return nil, false, false
			}
			return s, escaped, true
		case ch < 0x20:
			return nil, false, false
		case ch >= 0x80:
			ascii = false
			v.pos++
		case ch != '\\':
			v.pos++
		default:
			// The canonical escapes: \" \\ \b \f \n \r \t, and \u00xx
			// (lower-case hex) for the other control characters.
			escaped = true
			if v.pos+1 >= len(v.in) {
				return nil, false, false
			}
			switch v.in[v.pos+1] {
			case '"', '\\', 'b', 'f', 'n', 'r', 't':
				v.pos += 2
			case 'u':
				if v.pos+6 > len(v.in) || v.in[v.pos+2] != '0' || v.in[v.pos+3] != '0' {
					return nil, false, false
				}
				hi, lo := v.in[v.pos+4], v.in[v.pos+5]
				if (hi != '0' && hi != '1') || !isLowerHex(lo) {
					return nil, false, false
				}
				switch c := (hi-'0')<<4 | hexVal(lo); c {
				case '\b', '\f', '\n', '\r', '\t':
					return nil, false, false // these have short forms
				}
				v.pos += 6
			default:
				return nil, false, false
			}
		}
	}
	return nil, false, false
}

// specialByteIn says whether one of the eight bytes of x is not a plain
// byte (plainByte): 0x80 or above, below 0x20, a quote or a backslash.
// Each test is exact as a yes or no (Anderson's "Bit Twiddling Hacks":
// haszero, hasless).
func specialByteIn(x uint64) bool {
	const ones, highs = 0x0101010101010101, 0x8080808080808080
	hasZero := func(y uint64) uint64 { return (y - ones) & ^y & highs }
	return (x&highs)|((x-0x20*ones) & ^x & highs)|hasZero(x^('"'*ones))|hasZero(x^('\\'*ones)) != 0
}

// plainByte says a byte stands for itself in a canonical string: printable
// ASCII other than a quote or a backslash.
var plainByte = func() (t [256]bool) {
	for b := 0x20; b < 0x80; b++ {
		t[b] = b != '"' && b != '\\'
	}
	return t
}()

func isLowerHex(b byte) bool { return (b >= '0' && b <= '9') || (b >= 'a' && b <= 'f') }

func hexVal(b byte) byte {
	if b <= '9' {
		return b - '0'
	}
	return b - 'a' + 10
}

func (v *canonicalChecker) number() bool {
	end, integer, msg := scanNumber(v.in, v.pos)
	text := v.in[v.pos:end]
	v.pos = end
	if msg != "" {
		return false
	}
	if integer && len(text) < 19 { // fits in an int64: canonical unless -0
		return string(text) != "-0"
	}
	var buf [32]byte
	out, ok := appendCanonicalNumber(buf[:0], text, integer)
	return ok && bytes.Equal(out, text)
}

// compareUTF16Bytes is compareUTF16 on byte slices, with a fast path for
// ASCII (where byte order is UTF-16 order).
func compareUTF16Bytes(a, b []byte) int {
	n := min(len(a), len(b))
	for i := 0; i < n; i++ {
		if a[i] != b[i] {
			if a[i] < 0x80 && b[i] < 0x80 {
				return int(a[i]) - int(b[i])
			}
			for i > 0 && !utf8.RuneStart(a[i]) { // compare whole runes
				i--
			}
			return compareUTF16(string(a[i:]), string(b[i:]))
		}
	}
	return len(a) - len(b)
}
