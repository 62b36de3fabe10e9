package traces

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"

	"github.com/klauspost/compress/zstd"
)

// Store format 1 kept each run as a tree of content-addressed blobs: every
// value of 256 bytes or more inside a run's document was cut out into a
// blob of its own, compressed alone (with a zstd dictionary the store
// trained at GC), and referenced from its parent by its ID. This file reads
// that layout, for Migrate and for importing packs of format 1; nothing
// writes it any more.
//
//	blob/<ID>  codec byte (0 raw, 1 zstd) + node
//	node     = uvarint(nrefs) { uvarint(gap) id[32] } literal
//	dict/<id>  a zstd dictionary
//	run/<ID>   canonical JSON {"size":N,"started_at":"...","stderr":{...}}
//
// gap is the offset in literal where the child's bytes go, relative to the
// previous reference's offset; expanding a node splices each child's
// expanded bytes into the literal at its offset, and the result hashes to
// the blob's ID.
var (
	legacyPrefixBlob = []byte("blob/")
	legacyPrefixDict = []byte("dict/")
	legacyKeyDict    = []byte("meta/dict")
)

type nodeRef struct {
	off int // offset in the literal
	id  ID
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

// expander reassembles values from nodes and verifies every one it builds.
type expander struct {
	node func(ID) ([]nodeRef, []byte, error)
	memo map[ID][]byte
}

// expand appends the canonical bytes of id to dst, verifying their hash.
func (e *expander) expand(id ID, dst []byte, depth int) ([]byte, error) {
	if b, ok := e.memo[id]; ok {
		return append(dst, b...), nil
	}
	if depth > maxDepth {
		return nil, fmt.Errorf("blob %s: references nested too deep: %w", id, ErrCorrupt)
	}
	refs, lit, err := e.node(id)
	if err != nil {
		return nil, err
	}
	start := len(dst)
	last := 0
	for _, r := range refs {
		if r.off < last || r.off > len(lit) {
			return nil, fmt.Errorf("blob %s: reference out of order: %w", id, ErrCorrupt)
		}
		dst = append(dst, lit[last:r.off]...)
		if dst, err = e.expand(r.id, dst, depth+1); err != nil {
			return nil, err
		}
		last = r.off
	}
	dst = append(dst, lit[last:]...)
	if Hash(dst[start:]) != id {
		return nil, fmt.Errorf("blob %s: content does not match its ID: %w", id, ErrCorrupt)
	}
	if e.memo != nil {
		e.memo[id] = dst[start:len(dst):len(dst)]
	}
	return dst, nil
}

// legacyBlobs reads the blobs of a format-1 store.
type legacyBlobs struct {
	get func(key []byte) ([]byte, error) // a copy of the value; ErrNotFound when absent
	dec *zstd.Decoder
}

// newLegacyBlobs loads the format-1 dictionaries through scan.
func newLegacyBlobs(get func([]byte) ([]byte, error), scan func(prefix []byte, fn func(k, v []byte) error) error) (*legacyBlobs, error) {
	var dicts [][]byte
	if err := scan(legacyPrefixDict, func(_, v []byte) error {
		dicts = append(dicts, bytes.Clone(v))
		return nil
	}); err != nil {
		return nil, fmt.Errorf("loading dictionaries: %w", err)
	}
	opts := []zstd.DOption{zstd.WithDecoderConcurrency(1), zstd.WithDecoderMaxMemory(maxPlain)}
	if len(dicts) > 0 {
		opts = append(opts, zstd.WithDecoderDicts(dicts...))
	}
	dec, err := zstd.NewReader(nil, opts...)
	if err != nil {
		return nil, fmt.Errorf("loading dictionaries: %w", err)
	}
	return &legacyBlobs{get: get, dec: dec}, nil
}

func (l *legacyBlobs) close() { l.dec.Close() }

func (l *legacyBlobs) node(id ID) ([]nodeRef, []byte, error) {
	v, err := l.get(append(bytes.Clone(legacyPrefixBlob), id[:]...))
	if err != nil {
		return nil, nil, fmt.Errorf("blob %s: %w", id, err)
	}
	plain, err := legacyDecodeBlob(l.dec, id, v)
	if err != nil {
		return nil, nil, err
	}
	refs, lit, err := decodeNode(plain)
	if err != nil {
		return nil, nil, fmt.Errorf("blob %s: %v: %w", id, err, ErrCorrupt)
	}
	return refs, lit, nil
}

func legacyDecodeBlob(dec *zstd.Decoder, id ID, val []byte) ([]byte, error) {
	if len(val) == 0 {
		return nil, fmt.Errorf("blob %s: empty value: %w", id, ErrCorrupt)
	}
	switch val[0] {
	case 0:
		return val[1:], nil
	case 1:
		plain, err := dec.DecodeAll(val[1:], nil)
		if err != nil {
			return nil, fmt.Errorf("blob %s: %v: %w", id, err, ErrCorrupt)
		}
		return plain, nil
	}
	return nil, fmt.Errorf("blob %s: unknown codec %d: %w", id, val[0], ErrCorrupt)
}

// document expands a format-1 run's document.
func (l *legacyBlobs) document(id ID) ([]byte, error) {
	return (&expander{node: l.node, memo: map[ID][]byte{}}).expand(id, nil, 0)
}
