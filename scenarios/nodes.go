package scenarios

import (
	"bytes"
	"crypto/sha256"
	"encoding/binary"
	"errors"
	"fmt"

	"gopkg.in/yaml.v3"
)

// The embedded suite ships parsed: its YAML node trees, as the parser made
// them, in a compact binary form (golden.nodes). Parsing YAML was most of
// a command's start-up (about 70 ms of CPU for the suite's 500 KB, where
// reading the nodes back takes a few); the scenarios are then decoded
// from the nodes exactly as from a parse, positions and errors included.
// The snapshot names the SHA-256 of the YAML it was made from: when the
// embedded YAML is not that (a scenario edited, the snapshot not made
// again), the YAML is parsed as before, so a stale snapshot is never read.
// TestGoldenNodes keeps it fresh: go test ./scenarios -run TestGoldenNodes
// -update writes it.

//go:generate go test -run ^TestGoldenNodes$ -update .

// nodesMagic starts a node snapshot; its last byte is the format version.
const nodesMagic = "bench-yaml-nodes\x00\x01"

// nodeFile is one manifest file of a snapshot: its path in the embedded
// file system and its documents.
type nodeFile struct {
	path string
	docs []*yaml.Node
}

// sourceHash is the hash a snapshot of files names: of each file's path
// and bytes, in order.
func sourceHash(paths []string, data [][]byte) [32]byte {
	h := sha256.New()
	var n [binary.MaxVarintLen64]byte
	for i, p := range paths {
		for _, b := range [][]byte{[]byte(p), data[i]} {
			h.Write(n[:binary.PutUvarint(n[:], uint64(len(b)))])
			h.Write(b)
		}
	}
	var sum [32]byte
	h.Sum(sum[:0])
	return sum
}

// encodeNodes writes files as a snapshot of the source with hash src.
func encodeNodes(src [32]byte, files []nodeFile) ([]byte, error) {
	e := &snapshotWriter{index: map[*yaml.Node]int{}, strs: map[string]int{"": 0}, table: []string{""}}
	var body []byte
	body = binary.AppendUvarint(body, uint64(len(files)))
	for _, f := range files {
		body = binary.AppendUvarint(body, uint64(e.str(f.path)))
		body = binary.AppendUvarint(body, uint64(len(f.docs)))
		for _, d := range f.docs {
			var err error
			if body, err = e.node(body, d); err != nil {
				return nil, fmt.Errorf("%s: %w", f.path, err)
			}
		}
	}
	out := append([]byte(nodesMagic), src[:]...)
	out = binary.AppendUvarint(out, uint64(len(e.index)))
	out = binary.AppendUvarint(out, uint64(len(e.table)))
	for _, s := range e.table {
		out = binary.AppendUvarint(out, uint64(len(s)))
		out = append(out, s...)
	}
	return append(out, body...), nil
}

type snapshotWriter struct {
	index map[*yaml.Node]int // node -> its number, in the order written
	strs  map[string]int
	table []string
}

func (e *snapshotWriter) str(s string) int {
	i, ok := e.strs[s]
	if !ok {
		i = len(e.table)
		e.strs[s] = i
		e.table = append(e.table, s)
	}
	return i
}

// node appends n and its content, depth first. An alias is written as the
// number of the node it stands for, which the parser made before it.
func (e *snapshotWriter) node(b []byte, n *yaml.Node) ([]byte, error) {
	if _, ok := e.index[n]; ok {
		return nil, errors.New("a node shared by two parents")
	}
	e.index[n] = len(e.index)
	alias := 0
	if n.Alias != nil {
		i, ok := e.index[n.Alias]
		if !ok {
			return nil, fmt.Errorf("line %d: an alias to a node not written before it", n.Line)
		}
		alias = i + 1
	}
	for _, v := range []int{int(n.Kind), int(n.Style), e.str(n.Tag), e.str(n.Value), e.str(n.Anchor),
		e.str(n.HeadComment), e.str(n.LineComment), e.str(n.FootComment), n.Line, n.Column, alias, len(n.Content)} {
		if v < 0 {
			return nil, fmt.Errorf("line %d: a negative field", n.Line)
		}
		b = binary.AppendUvarint(b, uint64(v))
	}
	for _, c := range n.Content {
		var err error
		if b, err = e.node(b, c); err != nil {
			return nil, err
		}
	}
	return b, nil
}

// decodeNodes reads a snapshot made from the source with hash src. It
// fails on a snapshot of other source, of another format, or damaged.
func decodeNodes(b []byte, src [32]byte) ([]nodeFile, error) {
	if !bytes.HasPrefix(b, []byte(nodesMagic)) {
		return nil, errors.New("not a node snapshot of this format")
	}
	b = b[len(nodesMagic):]
	if len(b) < len(src) || !bytes.Equal(b[:len(src)], src[:]) {
		return nil, errors.New("made from other YAML")
	}
	d := &snapshotReader{in: b[len(src):]}
	total := d.count(len(d.in))
	d.slab = make([]yaml.Node, 0, total)
	d.ptrs = make([]*yaml.Node, 0, total)
	d.table = make([]string, d.count(len(d.in)))
	for i := range d.table {
		d.table[i] = string(d.bytes())
	}
	files := make([]nodeFile, d.count(len(d.in)))
	for i := range files {
		files[i].path = d.str()
		files[i].docs = make([]*yaml.Node, d.count(len(d.in)))
		for j := range files[i].docs {
			files[i].docs[j] = d.node(0)
		}
	}
	switch {
	case d.err != nil:
		return nil, d.err
	case d.pos != len(d.in):
		return nil, errors.New("data after the last file")
	}
	return files, nil
}

type snapshotReader struct {
	in    []byte
	pos   int
	err   error
	table []string
	slab  []yaml.Node  // every node, in the order written
	ptrs  []*yaml.Node // the content of every node, one after the other
}

func (d *snapshotReader) uint() uint64 {
	if d.err != nil {
		return 0
	}
	v, n := binary.Uvarint(d.in[d.pos:])
	if n <= 0 {
		d.err = errors.New("truncated")
		return 0
	}
	d.pos += n
	return v
}

// bytes reads a length and as many bytes.
func (d *snapshotReader) bytes() []byte {
	n := d.uint()
	if d.err != nil {
		return nil
	}
	if n > uint64(len(d.in)-d.pos) {
		d.err = errors.New("a string past the data")
		return nil
	}
	b := d.in[d.pos : d.pos+int(n)]
	d.pos += int(n)
	return b
}

// count reads a count of at most limit.
func (d *snapshotReader) count(limit int) int {
	v := d.uint()
	if limit < 0 || v > uint64(limit) {
		d.err = errors.New("a count past the data")
		return 0
	}
	return int(v)
}

func (d *snapshotReader) str() string {
	i := d.count(len(d.table) - 1)
	if d.err != nil {
		return ""
	}
	return d.table[i]
}

func (d *snapshotReader) node(depth int) *yaml.Node {
	if d.err != nil || depth > maxNodeDepth || len(d.slab) == cap(d.slab) {
		if d.err == nil {
			d.err = errors.New("more nodes than the header says, or nested too deep")
		}
		return nil
	}
	d.slab = append(d.slab, yaml.Node{})
	n := &d.slab[len(d.slab)-1]
	n.Kind = yaml.Kind(d.uint())
	n.Style = yaml.Style(d.uint())
	n.Tag, n.Value, n.Anchor = d.str(), d.str(), d.str()
	n.HeadComment, n.LineComment, n.FootComment = d.str(), d.str(), d.str()
	n.Line, n.Column = d.count(1<<31), d.count(1<<31)
	if alias := d.count(len(d.slab) - 1); alias > 0 {
		n.Alias = &d.slab[alias-1]
	}
	k := d.count(cap(d.slab) - len(d.slab))
	if k > 0 && d.err == nil {
		start := len(d.ptrs)
		if start+k > cap(d.ptrs) {
			d.err = errors.New("more nodes than the header says")
			return nil
		}
		d.ptrs = d.ptrs[:start+k]
		for i := range k {
			d.ptrs[start+i] = d.node(depth + 1)
		}
		n.Content = d.ptrs[start : start+k : start+k]
	}
	return n
}

// maxNodeDepth bounds the nesting a snapshot may hold (the suite nests a
// dozen levels).
const maxNodeDepth = 10000
