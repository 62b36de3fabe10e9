package traces

import "bytes"

// skipCanonical returns the end of the canonical value starting at v[i].
func skipCanonical(v []byte, i int) int {
	switch v[i] {
	case '"':
		return skipString(v, i)
	case '{', '[':
		depth := 0
		for j := i; j < len(v); j++ {
			switch v[j] {
			case '"':
				j = skipString(v, j) - 1
			case '{', '[':
				depth++
			case '}', ']':
				depth--
				if depth == 0 {
					return j + 1
				}
			}
		}
		return len(v)
	default:
		j := i
		for j < len(v) && v[j] != ',' && v[j] != '}' && v[j] != ']' && v[j] != ':' {
			j++
		}
		return j
	}
}

// skipString returns the end of the string starting at v[i], jumping from
// quote to quote (strings are most of a run's bytes).
func skipString(v []byte, i int) int {
	j := i + 1
	for {
		k := bytes.IndexByte(v[j:], '"')
		if k < 0 {
			return len(v)
		}
		j += k
		// The quote ends the string unless an odd number of backslashes
		// precede it.
		n := 0
		for b := j - 1; b > i && v[b] == '\\'; b-- {
			n++
		}
		if n%2 == 0 {
			return j + 1
		}
		j++
	}
}
