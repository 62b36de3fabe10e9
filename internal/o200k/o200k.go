// Package o200k counts the tokens of text in OpenAI's o200k_base byte-pair
// encoding, exactly as github.com/tiktoken-go/tokenizer's codec counts
// them (FuzzCount holds the two to each other), with a vocabulary the
// garbage collector never reads.
//
// The tokenizer's own vocabulary is a map of 200,000 strings: some 7 MB of
// pointers that every garbage-collection cycle of a long batch scans again
// (bench's replays run a cycle every few dozen runs), and a map built on
// first use. Here the vocabulary is a file embedded in the binary
// (o200k_base.bin, written from the tokenizer's by gen.go) and an index of
// integers built from it: nothing in it holds a pointer.
//
// Text is cut into pieces by o200k_base's split pattern, matched by hand
// (split.go) as the tokenizer matches it with github.com/dlclark/regexp2
// and the matcher its codec package generated for the pattern
// (TestSplitIsTheMatchers and FuzzSplit hold the two to each other; the
// regular expression engine took four fifths of a count); each piece is one
// token if the vocabulary has it, else its bytes are merged pair by pair,
// the lowest-ranked adjacent pair first and the leftmost of equal ranks,
// until no adjacent pair is a token.
package o200k

import (
	_ "embed"
	"encoding/binary"
	"fmt"
	"hash/maphash"
	"sync"
)

// Name is the encoding's name.
const Name = "o200k_base"

// Pattern is o200k_base's split pattern, as tiktoken defines it.
const Pattern = `[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]*[\p{Ll}\p{Lm}\p{Lo}\p{M}]+(?i:'s|'t|'re|'ve|'m|'ll|'d)?|[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]+[\p{Ll}\p{Lm}\p{Lo}\p{M}]*(?i:'s|'t|'re|'ve|'m|'ll|'d)?|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n/]*|\s*[\r\n]+|\s+(?!\S)|\s+`

//go:generate go run gen.go

//go:embed o200k_base.bin
var file string

const header = "o200k_base 1\n"

// vocab is the vocabulary: every rank's token as a slice of file (which
// the binary holds), and an open-addressing index from a token's hash to
// its rank.
type vocab struct {
	text  string   // the tokens back to back, in rank order
	off   []uint32 // rank r's token is text[off[r]:off[r+1]]
	index []uint32 // rank+1 at a slot, 0 for an empty slot
	mask  uint64
	seed  maphash.Seed
}

var (
	loadOnce sync.Once
	loaded   *vocab
	loadErr  error
)

func load() (*vocab, error) {
	loadOnce.Do(func() {
		loaded, loadErr = parse(file)
	})
	return loaded, loadErr
}

func parse(f string) (*vocab, error) {
	if len(f) < len(header)+4 || f[:len(header)] != header {
		return nil, fmt.Errorf("o200k: the embedded vocabulary is not %q", header)
	}
	f = f[len(header):]
	n := int(binary.LittleEndian.Uint32([]byte(f[:4])))
	f = f[4:]
	if len(f) < n {
		return nil, fmt.Errorf("o200k: the embedded vocabulary is cut short")
	}
	lens, text := f[:n], f[n:]
	v := &vocab{text: text, off: make([]uint32, n+1), seed: maphash.MakeSeed()}
	size := 1
	for size < 2*n {
		size <<= 1
	}
	v.index, v.mask = make([]uint32, size), uint64(size-1)
	at := 0
	for r := range n {
		v.off[r] = uint32(at)
		l := int(lens[r])
		if at+l > len(text) {
			return nil, fmt.Errorf("o200k: the embedded vocabulary is cut short")
		}
		if l > 0 {
			v.insert(text[at:at+l], r)
		}
		at += l
	}
	v.off[n] = uint32(at)
	if at != len(text) {
		return nil, fmt.Errorf("o200k: %d bytes after the embedded vocabulary's last token", len(text)-at)
	}
	return v, nil
}

func (v *vocab) insert(tok string, rank int) {
	for i := maphash.String(v.seed, tok) & v.mask; ; i = (i + 1) & v.mask {
		if v.index[i] == 0 {
			v.index[i] = uint32(rank) + 1
			return
		}
	}
}

// rank is tok's rank, or -1.
func (v *vocab) rank(tok string) int {
	for i := maphash.String(v.seed, tok) & v.mask; ; i = (i + 1) & v.mask {
		r := v.index[i]
		if r == 0 {
			return -1
		}
		if r--; v.text[v.off[r]:v.off[r+1]] == tok {
			return int(r)
		}
	}
}

// Count counts the tokens of text. It fails only if the embedded
// vocabulary is damaged.
func Count(text string) (int, error) {
	v, err := load()
	if err != nil {
		return 0, err
	}
	var m merger
	var sp splitter
	n := 0
	for i := 0; i < len(text); {
		end := sp.next(text, i)
		if end < 0 {
			i -= end // a rune in no piece
			continue
		}
		piece := pieceOf(text[i:end])
		i = end
		if v.rank(piece) >= 0 {
			n++
			continue
		}
		n += m.count(v, piece)
	}
	return n, nil
}

// merger counts the tokens byte-pair encoding makes of one piece; it keeps
// its buffers from piece to piece.
type merger struct {
	nodes []node
	heap  []candidate
}

// node is a boundary between parts of the piece, in a doubly linked list
// of the boundaries left; rank is that of the token the part starting
// here and the next one make, or none.
type node struct {
	prev, next int32
	rank       int32
}

// candidate is a pair of adjacent parts that make a token: the part
// starting at at and the next one.
type candidate struct {
	rank, at int32
}

const none = -1

// count merges piece's bytes, the adjacent pair that makes the
// lowest-ranked token first (the leftmost of equal ranks), until no
// adjacent pair makes a token, and returns the number of parts left.
func (m *merger) count(v *vocab, piece string) int {
	n := int32(len(piece))
	m.nodes = m.nodes[:0]
	for i := range n + 1 {
		m.nodes = append(m.nodes, node{prev: i - 1, next: i + 1, rank: none})
	}
	m.nodes[n].next = none
	nodes := m.nodes
	rankAt := func(i int32) int32 {
		j := nodes[i].next
		if j < 0 {
			return none
		}
		k := nodes[j].next
		if k < 0 {
			return none
		}
		return int32(v.rank(piece[i:k]))
	}
	m.heap = m.heap[:0]
	for i := int32(0); i+2 <= n; i++ {
		if r := rankAt(i); r != none {
			nodes[i].rank = r
			m.push(candidate{r, i})
		}
	}
	parts := int(n)
	for len(m.heap) > 0 {
		top := m.pop()
		i := top.at
		if nodes[i].rank != top.rank {
			continue // a pair a merge has since changed
		}
		// Merge the part at i with the next one.
		j := nodes[i].next
		k := nodes[j].next
		nodes[j].rank = none
		nodes[i].next = k
		if k >= 0 {
			nodes[k].prev = i
		}
		parts--
		for _, b := range [2]int32{i, nodes[i].prev} {
			if b < 0 {
				continue
			}
			nodes[b].rank = rankAt(b)
			if nodes[b].rank != none {
				m.push(candidate{nodes[b].rank, b})
			}
		}
	}
	return parts
}

func less(a, b candidate) bool {
	return a.rank < b.rank || a.rank == b.rank && a.at < b.at
}

func (m *merger) push(c candidate) {
	m.heap = append(m.heap, c)
	h := m.heap
	for i := len(h) - 1; i > 0; {
		p := (i - 1) / 2
		if !less(h[i], h[p]) {
			break
		}
		h[i], h[p] = h[p], h[i]
		i = p
	}
}

func (m *merger) pop() candidate {
	h := m.heap
	top := h[0]
	last := len(h) - 1
	h[0] = h[last]
	h = h[:last]
	m.heap = h
	for i := 0; ; {
		c := 2*i + 1
		if c >= len(h) {
			break
		}
		if c+1 < len(h) && less(h[c+1], h[c]) {
			c++
		}
		if !less(h[c], h[i]) {
			break
		}
		h[i], h[c] = h[c], h[i]
		i = c
	}
	return top
}
