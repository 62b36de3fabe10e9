package traces

import (
	"bytes"
	"encoding/binary"
	"sync"
	"sync/atomic"
)

// knownValues are the large JSON arrays a store has lately read or proved
// canonical (a server's tool list, the tools of a model request: most of a
// run's bytes, the same in every turn of a run and every run of a server),
// so that checking or skipping one of them again is a comparison of bytes
// instead of a scan. It is safe for concurrent use.
//
// A value found at some offset of a document is the value there: a JSON
// array is complete at its closing bracket, so a document whose bytes at
// an offset equal a complete value holds that value there and nothing
// longer.
type knownValues struct {
	mu   sync.Mutex                   // serializes changes of list and seen
	list atomic.Pointer[[]knownValue] // most recent first; a snapshot, never changed
	// seen are the marks of the values offered once (add): a value is
	// remembered the second time it is offered, so that the large values
	// seen once (most response bodies) are not copied for nothing.
	seen [knownSeenLen]knownMark
	next int // the next slot of seen to fill
}

// knownMark tells values apart cheaply: their length and their first and
// last eight bytes.
type knownMark struct {
	size       int
	head, tail uint64
}

func markOf(b []byte) knownMark {
	return knownMark{len(b), binary.LittleEndian.Uint64(b), binary.LittleEndian.Uint64(b[len(b)-8:])}
}

// knownValue is one value: its bytes, its first eight bytes (a cheap
// first test), and the nesting depth it was proved canonical at (a value
// holds the same nesting at any depth no deeper; -1: read, not checked).
type knownValue struct {
	b     []byte
	head  uint64
	depth int
}

const (
	knownMinSize = 4 << 10 // smaller values are not worth remembering
	knownMaxLen  = 16      // values remembered
	knownSeenLen = 64      // marks of values offered once
)

// match returns the length of the known value that data[i:] begins with,
// 0 for none. With check set, only values proved canonical at depth or
// deeper count.
func (k *knownValues) match(data []byte, i, depth int, check bool) int {
	if k == nil || len(data)-i < knownMinSize {
		return 0
	}
	list := k.list.Load()
	if list == nil {
		return 0
	}
	head := binary.LittleEndian.Uint64(data[i:])
	for j, v := range *list {
		// The values of one server begin alike (its tool lists differ at
		// their end, in the harness's submit_result): the last bytes first.
		n := len(v.b)
		if v.head == head && n <= len(data)-i && (!check || depth <= v.depth) &&
			binary.LittleEndian.Uint64(data[i+n-8:]) == binary.LittleEndian.Uint64(v.b[n-8:]) && bytes.Equal(data[i:i+n], v.b) {
			if j > 0 {
				k.touch(v)
			}
			return len(v.b)
		}
	}
	return 0
}

// add offers b, proved canonical at depth (-1: read from a verified
// document, not checked): the second time it is offered it is remembered
// (a copy).
func (k *knownValues) add(b []byte, depth int) {
	if k == nil || len(b) < knownMinSize {
		return
	}
	m := markOf(b)
	k.mu.Lock()
	again := false
	for i, s := range k.seen {
		if s == m {
			again = true
			k.seen[i] = knownMark{}
			break
		}
	}
	if !again {
		k.seen[k.next] = m
		k.next = (k.next + 1) % knownSeenLen
	}
	k.mu.Unlock()
	if again {
		k.put(knownValue{b: bytes.Clone(b), head: m.head, depth: depth})
	}
}

// touch puts v first.
func (k *knownValues) touch(v knownValue) { k.put(v) }

// put puts v first, in place of a value with the same bytes.
func (k *knownValues) put(v knownValue) {
	k.mu.Lock()
	defer k.mu.Unlock()
	next := make([]knownValue, 0, knownMaxLen)
	next = append(next, v)
	if old := k.list.Load(); old != nil {
		for _, o := range *old {
			if len(next) == knownMaxLen {
				break
			}
			if o.head == v.head && bytes.Equal(o.b, v.b) {
				next[0].depth = max(next[0].depth, o.depth)
				continue
			}
			next = append(next, o)
		}
	}
	k.list.Store(&next)
}

// skipKnown is skipCanonical that jumps over the known values it meets
// and remembers the large arrays it skips whole (as read, depth -1).
func skipKnown(v []byte, i int, k *knownValues) int {
	if k == nil || len(v)-i < knownMinSize || v[i] != '{' && v[i] != '[' {
		return skipCanonical(v, i)
	}
	var starts [maxDepth + 2]int // where each open array began; -1: an object
	depth := 0
	added := -1 // where the last array remembered began: none around it is (canonicalChecker.added)
	for j := i; j < len(v); j++ {
		switch v[j] {
		case '"':
			j = skipString(v, j) - 1
		case '[':
			if n := k.match(v, j, 0, false); n > 0 {
				if depth == 0 {
					return j + n
				}
				j += n - 1
				continue
			}
			if depth < len(starts) {
				starts[depth] = j
			}
			depth++
		case '{':
			if depth < len(starts) {
				starts[depth] = -1
			}
			depth++
		case '}', ']':
			depth--
			if v[j] == ']' && depth >= 0 && depth < len(starts) && starts[depth] >= 0 && j+1-starts[depth] >= knownMinSize &&
				(added < 0 || added < starts[depth]) {
				k.add(v[starts[depth]:j+1], -1)
				added = starts[depth]
			}
			if depth == 0 {
				return j + 1
			}
		}
	}
	return len(v)
}
