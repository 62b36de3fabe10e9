package traces

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
)

// A node is the plaintext of a blob: the canonical bytes of a value with
// its large children cut out and replaced by references to their blobs.
//
//	node    = uvarint(nrefs) { uvarint(gap) id[32] } literal
//
// gap is the offset in literal where the child's bytes go, relative to the
// previous reference's offset. Expanding a node splices each child's
// expanded bytes into the literal at its offset; the result is the value's
// canonical bytes, whose SHA-256 is the blob's ID.
type nodeRef struct {
	off int // offset in the literal
	id  ID
}

func encodeNode(refs []nodeRef, literal []byte) []byte {
	out := make([]byte, 0, len(literal)+len(refs)*(len(ID{})+2)+2)
	out = binary.AppendUvarint(out, uint64(len(refs)))
	prev := 0
	for _, r := range refs {
		out = binary.AppendUvarint(out, uint64(r.off-prev))
		out = append(out, r.id[:]...)
		prev = r.off
	}
	return append(out, literal...)
}

var errBadNode = errors.New("malformed blob")

func decodeNode(plain []byte) ([]nodeRef, []byte, error) {
	n, k := binary.Uvarint(plain)
	if k <= 0 || n > uint64(len(plain)) {
		return nil, nil, errBadNode
	}
	plain = plain[k:]
	var refs []nodeRef
	if n > 0 {
		refs = make([]nodeRef, 0, n)
	}
	off := 0
	for i := uint64(0); i < n; i++ {
		gap, k := binary.Uvarint(plain)
		if k <= 0 || len(plain) < k+len(ID{}) || gap > uint64(1<<40) {
			return nil, nil, errBadNode
		}
		off += int(gap)
		var id ID
		copy(id[:], plain[k:k+len(id)])
		refs = append(refs, nodeRef{off: off, id: id})
		plain = plain[k+len(id):]
	}
	if off > len(plain) {
		return nil, nil, fmt.Errorf("%w: reference past the end of the literal", errBadNode)
	}
	return refs, plain, nil
}

// splitter cuts a canonical value into nodes. A child of at least
// threshold bytes is cut out of its parent; it becomes a blob of its own when
// what is left of it (its literal, once its own large children are cut out)
// still has threshold bytes, and is otherwise folded into its parent's node
// (its literal inline, its references carried up). So a value that repeats
// is stored once however deep it sits, while containers that are little more
// than a list of references (a tool list, a conversation) add no blob and no
// hashing of their own.
type splitter struct {
	threshold int
	// have reports whether a blob is already stored (and so its subtree).
	have  func(ID) (bool, error)
	blobs map[ID][]byte // new nodes, by ID
	order []ID          // in the order created, children first
}

// split stores v as a blob (whatever its size) and returns its ID.
func (s *splitter) split(v []byte) (ID, error) {
	id := Hash(v)
	if ok, err := s.known(id); err != nil || ok {
		return id, err
	}
	lit, refs, err := s.build(v)
	if err != nil {
		return id, err
	}
	s.add(id, refs, lit)
	return id, nil
}

func (s *splitter) known(id ID) (bool, error) {
	if _, ok := s.blobs[id]; ok {
		return true, nil
	}
	return s.have(id)
}

func (s *splitter) add(id ID, refs []nodeRef, lit []byte) {
	s.blobs[id] = encodeNode(refs, lit)
	s.order = append(s.order, id)
}

// build returns v's literal and references once its large children are cut.
func (s *splitter) build(v []byte) ([]byte, []nodeRef, error) {
	if len(v) == 0 || (v[0] != '{' && v[0] != '[') {
		return v, nil, nil
	}
	var (
		lit  = make([]byte, 0, len(v))
		refs []nodeRef
		last int
		err  error
	)
	forEachChild(v, func(start, end int) bool {
		if end-start < s.threshold {
			return true
		}
		lit = append(lit, v[last:start]...)
		last = end
		child := v[start:end]
		cid := Hash(child)
		var ok bool
		if ok, err = s.known(cid); err != nil {
			return false
		}
		if ok {
			refs = append(refs, nodeRef{off: len(lit), id: cid})
			return true
		}
		var clit []byte
		var crefs []nodeRef
		if clit, crefs, err = s.build(child); err != nil {
			return false
		}
		if len(clit) >= s.threshold {
			s.add(cid, crefs, clit)
			refs = append(refs, nodeRef{off: len(lit), id: cid})
			return true
		}
		for _, r := range crefs {
			refs = append(refs, nodeRef{off: len(lit) + r.off, id: r.id})
		}
		lit = append(lit, clit...)
		return true
	})
	if err != nil {
		return nil, nil, err
	}
	return append(lit, v[last:]...), refs, nil
}

// forEachChild calls fn with the span of each element of the canonical
// array, or each member value of the canonical object, v.
func forEachChild(v []byte, fn func(start, end int) bool) {
	i := 1
	for i < len(v)-1 {
		if v[0] == '{' {
			i = skipCanonical(v, i) + 1 // key and ':'
		}
		end := skipCanonical(v, i)
		if !fn(i, end) {
			return
		}
		i = end + 1 // ','
	}
}

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
