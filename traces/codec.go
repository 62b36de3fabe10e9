package traces

import (
	"bytes"
	"container/list"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/fnv"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/cockroachdb/pebble/v2"
	"github.com/klauspost/compress/zstd"
)

// How runs are stored (store format 2).
//
// Runs of one scenario, server and model are nearly the same document:
// the same tool list in every request, the same fixture's HTTP bodies, the
// same answers from a deterministic model; what differs is a request key, a
// run index, some timings. Compressed one by one they cost kilobytes each;
// against one another, a few hundred bytes. So each run is stored as one
// zstd frame whose dictionary is the document of another run, its base:
//
//   - A family is the runs of one server, model and scenario (a recording
//     and its replays alike). Its first run stored becomes its base, and
//     every later run of the family is compressed against it.
//   - The first runs of a server and model, one per scenario up to
//     Options.Anchors of them, are anchors: stored alone, they are the
//     dictionary (all of them, concatenated) of the base of every later
//     family of that server and model, which shares their tool list and
//     fixture.
//
// So a base is at most one step from an anchor, and reading any run
// decompresses at most three frames, each verified by its hash; the
// documents of bases are kept in a bounded cache. Nothing is trained or
// rewritten after the fact: the store is as small after bench record as it
// will be.
//
// Keys:
//
//	run/<ID>          run record (below)
//	base/<seq:8>      ID of the run that is base number seq
//	fam/<family>      seq of the family's base
//	anchor/<server+model>  uvarint seqs of the anchors
//	meta/seq          the next base number (uvarint)
//
// A run record is
//
//	0x02 uvarint(len doc) uvarint(len plain) started_at
//	kind: 0 raw | 1 zstd | 2 zstd with bases
//	[kind 2: uvarint(n) n × uvarint(seq)]
//	payload
//
// where started_at is uvarint(nanoseconds+1) varint(Unix seconds), or 0
// when unknown, and plain = doc || side: the run's canonical document (which hashes
// to its ID) followed by the canonical JSON of what is kept beside it
// (side.go; empty when none), and the payload is plain, or a zstd frame of it
// whose raw dictionary is the plain of each base in order.
var (
	prefixBase   = []byte("base/")
	prefixFamily = []byte("fam/")
	prefixAnchor = []byte("anchor/")
	keySeq       = []byte("meta/seq")
)

const recordVersion = 2

const (
	kindRaw   = 0
	kindZstd  = 1
	kindBased = 2
)

// runInfo is kept beside each run, outside its content.
type runInfo struct {
	StartedAt time.Time
	// Side holds the run's side fields (side.go): their canonical JSON,
	// or, for runs stored before 2026-12-01, the servers' stderr by event
	// index.
	Side []byte
	Size int64 // canonical bytes of the run document
}

// family names the runs that share a base: one server, model, scenario.
type family struct {
	server, model, scenario string
}

// familyOf is m's family. Its key joins the names with NUL bytes, so a NUL
// in a name (a hostile profile or pack) is written as U+FFFD: the key
// always splits back into three names. Two names that differ only there
// share a family, which only means they may share a base.
func familyOf(m *Manifest) family {
	clean := func(s string) string { return strings.ReplaceAll(s, "\x00", "\uFFFD") }
	return family{server: clean(m.Server.Name), model: clean(m.Model.Name), scenario: clean(m.Scenario.ID)}
}

func (f family) key() []byte {
	return []byte(string(prefixFamily) + f.server + "\x00" + f.model + "\x00" + f.scenario)
}

func (f family) anchorKey() []byte {
	return []byte(string(prefixAnchor) + f.server + "\x00" + f.model)
}

func baseKey(seq uint64) []byte { return binary.BigEndian.AppendUint64(slices.Clip(prefixBase), seq) }

// codec encodes and decodes run records and keeps the bases.
type codec struct {
	s *Store

	mu      sync.Mutex // guards what follows
	bases   map[uint64]ID
	fams    map[family]uint64
	anchors map[string][]uint64 // by anchorKey
	nextSeq uint64
	// maxSeq is one more than the highest base number any base, family or
	// anchor key names (Verify checks meta/seq against it).
	maxSeq uint64

	// create is held by a put that makes a new base, from deciding to
	// committing: a put needing a base that is being made waits for it.
	create sync.Mutex

	plains *plainCache
	encs   zencoders
	decs   *lru[*zstd.Decoder]
	dec    *zstd.Decoder // without dictionary
}

func newCodec(s *Store) (*codec, error) {
	c := &codec{s: s, bases: map[uint64]ID{}, fams: map[family]uint64{}, anchors: map[string][]uint64{},
		plains: newPlainCache(s.opts.BaseCacheBytes)}
	// An evicted codec may still be in use by another goroutine: it is left
	// to the garbage collector (one used only through EncodeAll and
	// DecodeAll holds no goroutine).
	c.decs = newLRU[*zstd.Decoder](4)
	var err error
	if c.dec, err = zstd.NewReader(nil, decoderOptions()...); err != nil {
		return nil, err
	}
	// The metadata is read past any damage: what cannot be read is noted
	// (s.damaged), so that a store with a damaged block among its bases
	// can still be verified and repaired. The base keys meta/seq implies
	// are where the scan looks past such a block.
	var damage []string
	v, closer, err := s.get(keySeq)
	switch {
	case errors.Is(err, pebble.ErrNotFound):
	case err != nil:
		damage = append(damage, err.Error())
	default:
		c.nextSeq, _ = binary.Uvarint(v)
		closer.Close()
	}
	var hints [][]byte
	for seq := range min(c.nextSeq+16, 1<<16) {
		hints = append(hints, baseKey(seq))
	}
	// One scan from the anchors to the families (anchor/ < base/ < fam/):
	// damage among them is skipped once.
	visit := func(k, v []byte) error {
		switch {
		case bytes.HasPrefix(k, prefixBase):
			if len(k) != len(prefixBase)+8 || len(v) != len(ID{}) {
				return fmt.Errorf("base key %x: %w", k, ErrCorrupt)
			}
			seq := binary.BigEndian.Uint64(k[len(prefixBase):])
			c.bases[seq] = ID(v)
			c.maxSeq = max(c.maxSeq, seq+1)
		case bytes.HasPrefix(k, prefixFamily):
			parts := bytes.Split(k[len(prefixFamily):], []byte{0})
			seq, n := binary.Uvarint(v)
			if len(parts) != 3 || n <= 0 {
				return fmt.Errorf("family key %q: %w", k, ErrCorrupt)
			}
			c.fams[family{string(parts[0]), string(parts[1]), string(parts[2])}] = seq
			c.maxSeq = max(c.maxSeq, seq+1)
		case bytes.HasPrefix(k, prefixAnchor):
			seqs, err := uvarints(v)
			if err != nil {
				return fmt.Errorf("anchor key %q: %w", k, err)
			}
			c.anchors[string(k)] = seqs
			for _, seq := range seqs {
				c.maxSeq = max(c.maxSeq, seq+1)
			}
		}
		return nil
	}
	holes, err := s.scanAll(prefixAnchor, prefixEnd(prefixFamily), hints, func(k, v []byte) error {
		if err := visit(k, v); err != nil {
			damage = append(damage, err.Error())
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("store %s: loading bases: %w", s.dir, err)
	}
	for _, h := range holes {
		damage = append(damage, h.String())
	}
	if len(damage) > 0 {
		s.damaged = fmt.Errorf("store %s: its bases cannot all be read: %s: %w", s.dir, strings.Join(damage, "; "), ErrCorrupt)
	}
	return c, nil
}

func (c *codec) close() {
	c.encs.clear()
	c.decs.clear()
	c.dec.Close()
}

func uvarints(b []byte) ([]uint64, error) {
	var out []uint64
	for len(b) > 0 {
		v, n := binary.Uvarint(b)
		if n <= 0 {
			return nil, fmt.Errorf("bad number list: %w", ErrCorrupt)
		}
		out = append(out, v)
		b = b[n:]
	}
	return out, nil
}

func appendUvarints(dst []byte, vs []uint64) []byte {
	for _, v := range vs {
		dst = binary.AppendUvarint(dst, v)
	}
	return dst
}

// record is a run record, decoded.
type record struct {
	docLen, plainLen int
	startedAt        time.Time
	kind             byte
	bases            []uint64
	payload          []byte
}

// setRecord sets key to the record r in batch b, written into the batch
// in place (a run's payload may be large).
func setRecord(b *pebble.Batch, key []byte, r *record) error {
	head := encodeRecordHead(r)
	op := b.SetDeferred(len(key), len(head)+len(r.payload))
	copy(op.Key, key)
	copy(op.Value[copy(op.Value, head):], r.payload)
	return op.Finish()
}

// encodeRecordHead is what comes before r's payload in its record.
func encodeRecordHead(r *record) []byte {
	out := make([]byte, 0, 32+8*len(r.bases))
	out = append(out, recordVersion)
	out = binary.AppendUvarint(out, uint64(r.docLen))
	out = binary.AppendUvarint(out, uint64(r.plainLen))
	out = appendTime(out, r.startedAt)
	out = append(out, r.kind)
	if r.kind == kindBased {
		out = binary.AppendUvarint(out, uint64(len(r.bases)))
		out = appendUvarints(out, r.bases)
	}
	return out
}

// maxPlain bounds a run's plaintext, so that a corrupt length cannot
// allocate wildly.
const maxPlain = 1 << 30

func decodeRecord(v []byte) (*record, error) {
	bad := func(what string) error { return fmt.Errorf("run record: %s: %w", what, ErrCorrupt) }
	if len(v) == 0 || v[0] != recordVersion {
		return nil, bad("unknown version")
	}
	v = v[1:]
	next := func() (uint64, bool) {
		x, n := binary.Uvarint(v)
		if n <= 0 {
			return 0, false
		}
		v = v[n:]
		return x, true
	}
	r := &record{}
	doc, ok1 := next()
	plain, ok2 := next()
	if !ok1 || !ok2 || doc > plain || plain > maxPlain {
		return nil, bad("bad header")
	}
	r.docLen, r.plainLen = int(doc), int(plain)
	var err error
	if r.startedAt, v, err = readTime(v); err != nil || len(v) == 0 {
		return nil, bad("bad header")
	}
	r.kind, v = v[0], v[1:]
	switch r.kind {
	case kindRaw, kindZstd:
	case kindBased:
		n, ok := next()
		if !ok || n == 0 || n > 64 {
			return nil, bad("bad bases")
		}
		for range n {
			seq, ok := next()
			if !ok {
				return nil, bad("bad bases")
			}
			r.bases = append(r.bases, seq)
		}
	default:
		return nil, bad("unknown kind")
	}
	r.payload = v
	return r, nil
}

// appendTime appends t as uvarint(nanoseconds+1) varint(Unix seconds), or
// a single 0 for the zero time.
func appendTime(dst []byte, t time.Time) []byte {
	if t.IsZero() {
		return append(dst, 0)
	}
	dst = binary.AppendUvarint(dst, uint64(t.Nanosecond())+1)
	return binary.AppendVarint(dst, t.Unix())
}

func readTime(b []byte) (time.Time, []byte, error) {
	ns, n := binary.Uvarint(b)
	if n <= 0 || ns > 1e9 {
		return time.Time{}, nil, errors.New("bad time")
	}
	b = b[n:]
	if ns == 0 {
		return time.Time{}, b, nil
	}
	sec, n := binary.Varint(b)
	if n <= 0 {
		return time.Time{}, nil, errors.New("bad time")
	}
	return time.Unix(sec, int64(ns-1)).UTC(), b[n:], nil
}

// info splits a verified plaintext into the document and its run info.
func splitPlain(r *record, plain []byte) ([]byte, runInfo, error) {
	info := runInfo{StartedAt: r.startedAt, Size: int64(r.docLen)}
	doc, rest := plain[:r.docLen], plain[r.docLen:]
	if len(rest) > 0 {
		info.Side = rest
	}
	return doc, info, nil
}

// dictID names a dictionary in a zstd frame: a hash of its bases.
func dictID(bases []uint64) uint32 {
	h := fnv.New32a()
	h.Write(appendUvarints(nil, bases))
	return h.Sum32()%(1<<31-1) + 1 // 1 .. 2^31-1: zstd reserves 0 and the high range
}

func basesKey(bases []uint64) string { return string(appendUvarints(nil, bases)) }

// document reads, decompresses and verifies run id, and returns its
// document and info.
func (c *codec) document(id ID) ([]byte, runInfo, error) {
	plain, r, err := c.plain(id, 0)
	if err != nil {
		return nil, runInfo{}, err
	}
	return splitPlain(r, plain)
}

// plain returns the verified plaintext of run id and its record.
func (c *codec) plain(id ID, depth int) ([]byte, *record, error) {
	if depth > 3 {
		return nil, nil, fmt.Errorf("run %s: bases nested too deep: %w", id, ErrCorrupt)
	}
	v, closer, err := c.s.get(runKey(id))
	if errors.Is(err, pebble.ErrNotFound) {
		return nil, nil, fmt.Errorf("run %s: %w", id, ErrNotFound)
	}
	if err != nil {
		return nil, nil, err // it names the run
	}
	r, err := decodeRecord(v)
	if err != nil {
		closer.Close()
		return nil, nil, fmt.Errorf("run %s: %w", id, err)
	}
	var plain []byte
	switch r.kind {
	case kindRaw:
		plain = bytes.Clone(r.payload)
	case kindZstd:
		plain, err = decodeFrame(c.dec, r)
	case kindBased:
		var parts [][]byte
		if parts, err = c.dictOf(r.bases, depth); err == nil {
			var d *zstd.Decoder
			if d, err = c.decoder(r.bases, parts); err == nil {
				plain, err = decodeFrame(d, r)
			}
		}
	}
	closer.Close()
	if err != nil {
		if errors.Is(err, ErrNotFound) || errors.Is(err, ErrCorrupt) {
			return nil, nil, fmt.Errorf("run %s: %w", id, err)
		}
		return nil, nil, fmt.Errorf("run %s: decompressing: %v: %w", id, err, ErrCorrupt)
	}
	if len(plain) != r.plainLen || Hash(plain[:r.docLen]) != id {
		return nil, nil, fmt.Errorf("run %s: content does not match its ID: %w", id, ErrCorrupt)
	}
	return plain, r, nil
}

// decoderOptions are those of the codec's decoders: DecodeAll never
// writes past the capacity of the buffer it is given (decodeFrame).
func decoderOptions() []zstd.DOption {
	return []zstd.DOption{zstd.WithDecoderConcurrency(0), zstd.WithDecodeAllCapLimit(true), zstd.WithDecoderMaxMemory(maxPlain)}
}

// maxZstdRatio bounds what a zstd frame decompresses to: a block of at
// most 128 KiB takes 4 bytes at least (a byte repeated).
const maxZstdRatio = 1 << 15

// decodeFrame decompresses the payload of run record r into a buffer of
// r.plainLen bytes, the size the record declares, and no further: a
// record that declares more than its frame declares, or than its frame
// could hold, is refused before anything is allocated for it, and a frame
// that would decode to more stops at the bound.
func decodeFrame(d *zstd.Decoder, r *record) ([]byte, error) {
	var h zstd.Header
	if err := h.Decode(r.payload); err != nil {
		return nil, err
	}
	switch {
	case h.HasFCS && h.FrameContentSize != uint64(r.plainLen):
		return nil, fmt.Errorf("the frame holds %d bytes, the record says %d", h.FrameContentSize, r.plainLen)
	case uint64(r.plainLen) > uint64(len(r.payload))*maxZstdRatio:
		return nil, fmt.Errorf("the record says %d bytes, more than a frame of %d bytes holds", r.plainLen, len(r.payload))
	}
	return d.DecodeAll(r.payload, make([]byte, 0, r.plainLen))
}

// records checks that the record of run id, and those of the bases it is
// stored against, can be read and parsed, without decompressing them.
// checked holds the runs found whole so far, which are not read again; id
// is added to it.
func (c *codec) records(id ID, depth int, checked map[ID]bool) error {
	if depth > 3 {
		return fmt.Errorf("run %s: bases nested too deep: %w", id, ErrCorrupt)
	}
	if checked[id] {
		return nil
	}
	v, closer, err := c.s.get(runKey(id))
	if errors.Is(err, pebble.ErrNotFound) {
		return fmt.Errorf("run %s: %w", id, ErrNotFound)
	}
	if err != nil {
		return err
	}
	r, err := decodeRecord(v)
	closer.Close()
	if err != nil {
		return fmt.Errorf("run %s: %w", id, err)
	}
	for _, seq := range r.bases {
		c.mu.Lock()
		base, ok := c.bases[seq]
		c.mu.Unlock()
		if !ok {
			return fmt.Errorf("run %s: base %d: %w", id, seq, ErrNotFound)
		}
		if _, cached := c.plains.get(base); cached {
			continue // read whole already
		}
		if err := c.records(base, depth+1, checked); err != nil {
			return fmt.Errorf("run %s: base %d: %w", id, seq, err)
		}
	}
	checked[id] = true
	return nil
}

// dictOf is the dictionary of a run stored against bases: their
// plaintexts, to be concatenated (join), each verified.
func (c *codec) dictOf(bases []uint64, depth int) ([][]byte, error) {
	parts := make([][]byte, 0, len(bases))
	for _, seq := range bases {
		p, err := c.basePlain(seq, depth)
		if err != nil {
			return nil, err
		}
		parts = append(parts, p)
	}
	return parts, nil
}

// join is the dictionary of parts; a codec builds it only when it makes
// a new encoder or decoder (one serves every run of a family).
func join(parts [][]byte) []byte {
	if len(parts) == 1 {
		return parts[0]
	}
	var n int
	for _, p := range parts {
		n += len(p)
	}
	out := make([]byte, 0, n)
	for _, p := range parts {
		out = append(out, p...)
	}
	return out
}

func size(parts [][]byte) int {
	n := 0
	for _, p := range parts {
		n += len(p)
	}
	return n
}

// basePlain returns the plaintext of base seq, from the cache or the store.
func (c *codec) basePlain(seq uint64, depth int) ([]byte, error) {
	c.mu.Lock()
	id, ok := c.bases[seq]
	c.mu.Unlock()
	if !ok {
		c.s.mu.Lock()
		h, lost := c.s.holes.find(baseKey(seq))
		c.s.mu.Unlock()
		if lost {
			return nil, fmt.Errorf("base %d: its key is in a damaged part of the store: %w", seq, h.err)
		}
		return nil, fmt.Errorf("base %d: %w", seq, ErrNotFound)
	}
	if p, ok := c.plains.get(id); ok {
		return p, nil
	}
	p, _, err := c.plain(id, depth+1)
	if err != nil {
		return nil, fmt.Errorf("base %d: %w", seq, err)
	}
	c.plains.add(id, p)
	return p, nil
}

func (c *codec) decoder(bases []uint64, parts [][]byte) (*zstd.Decoder, error) {
	key := basesKey(bases)
	if d, ok := c.decs.get(key); ok {
		return d, nil
	}
	d, err := zstd.NewReader(nil, append(decoderOptions(), zstd.WithDecoderDictRaw(dictID(bases), join(parts)))...)
	if err != nil {
		return nil, err
	}
	return c.decs.put(key, d), nil
}

// encoder returns an encoder for runs of about size bytes stored against
// bases, for the caller alone until it gives it back (zencoders.put). Its
// window holds the dictionary and the run: matches reach back into the
// base, and no further (zstd's default window of 8 MiB would cost tens of
// megabytes per encoder for nothing).
func (c *codec) encoder(bases []uint64, parts [][]byte, n, level int) (*zencoder, error) {
	window, limit := 1<<16, zstd.MaxWindowSize
	if bases == nil {
		limit = aloneWindow
	}
	for window < size(parts)+2*n && window < limit {
		window <<= 1
	}
	return c.encs.get(encoderKind{level: level, window: window, dict: bases != nil}, basesKey(bases), func() []byte { return join(parts) }, dictID(bases))
}

// zencoders keeps the codec's idle encoders for reuse. An encoder is some
// hundreds of kilobytes of tables and history: a replay stores each run
// against the base of its scenario, and an encoder made for each base
// took 200 MB of the 451 MB a replay of one run a scenario allocated. An
// idle encoder of the kind wanted takes the new base as its dictionary
// instead (ResetWithOptions); one that has it already is taken first, as
// it need not index it again.
type zencoders struct {
	mu   sync.Mutex
	idle []*zencoder // the most recently given back last
}

// maxIdleEncoders bounds the encoders kept idle.
const maxIdleEncoders = 4

// zencoder is a zstd encoder of a kind, with the dictionary it has now.
type zencoder struct {
	*zstd.Encoder
	kind encoderKind
	dict string // basesKey of its dictionary's bases
}

// encoderKind is what an encoder cannot change once made.
type encoderKind struct {
	level, window int
	dict          bool // whether it has a dictionary (zstd makes another encoder type for one)
}

// get returns an encoder of kind k with the dictionary of the bases keyed
// dict: content gives the dictionary, id its ID.
func (es *zencoders) get(k encoderKind, dict string, content func() []byte, id uint32) (*zencoder, error) {
	es.mu.Lock()
	at := -1
	for i := len(es.idle) - 1; i >= 0; i-- {
		e := es.idle[i]
		if e.kind != k {
			continue
		}
		if e.dict == dict {
			at = i
			break
		}
		if at < 0 {
			at = i
		}
	}
	var e *zencoder
	if at >= 0 {
		e = es.idle[at]
		es.idle = slices.Delete(es.idle, at, at+1)
	}
	es.mu.Unlock()
	if e != nil && e.dict == dict {
		return e, nil
	}
	if e != nil {
		if err := e.ResetWithOptions(nil, zstd.WithEncoderDictRaw(id, content())); err != nil {
			return nil, err
		}
		e.dict = dict
		return e, nil
	}
	opts := []zstd.EOption{zstd.WithEncoderLevel(zstd.EncoderLevel(k.level)), zstd.WithEncoderConcurrency(1),
		zstd.WithEncoderCRC(false), zstd.WithWindowSize(k.window), zstd.WithLowerEncoderMem(true)}
	if k.dict {
		opts = append(opts, zstd.WithEncoderDictRaw(id, content()))
	}
	z, err := zstd.NewWriter(nil, opts...)
	if err != nil {
		return nil, err
	}
	return &zencoder{Encoder: z, kind: k, dict: dict}, nil
}

// put gives e back; the least recently used idle encoder beyond
// maxIdleEncoders is dropped.
func (es *zencoders) put(e *zencoder) {
	es.mu.Lock()
	defer es.mu.Unlock()
	es.idle = append(es.idle, e)
	if len(es.idle) > maxIdleEncoders {
		es.idle = slices.Delete(es.idle, 0, 1)
	}
}

func (es *zencoders) clear() {
	es.mu.Lock()
	defer es.mu.Unlock()
	es.idle = nil
}

// A run larger than maxBasedBytes is stored alone, compressed against no
// base, and becomes no base: against its own size a base would gain little,
// and cost memory of the order of both (a dictionary holding the base, a
// window holding the dictionary and the run). A run stored alone is
// compressed with a window of aloneWindow at most (zstd's own default),
// so that what an encoder keeps between runs stays small.
const (
	maxBasedBytes = 4 << 20
	aloneWindow   = 8 << 20
)

// tx is a set of runs written in one batch; the bases they make are seen
// by the codec once the batch commits.
type tx struct {
	c       *codec
	level   int
	b       *pebble.Batch
	locked  bool // holds c.create
	bases   map[uint64]ID
	plains  map[uint64][]byte // of the bases made here
	fams    map[family]uint64
	anchors map[string][]uint64
	nextSeq uint64
	ids     map[ID]bool // runs written here
	held    int         // bytes of plains
	done    bool
}

// maxTxBaseBytes bounds the documents of the bases a transaction makes,
// which it holds until it commits, as the dictionaries of the runs of
// their families after them: past it (an import of many large runs of
// many families), a run that would make a base is stored without being
// one, and the first run of its family stored after the commit becomes
// its base. The first base of a transaction is always made.
var maxTxBaseBytes = 32 << 20 // a variable for a test

func (c *codec) begin(level int) *tx {
	c.mu.Lock()
	next := c.nextSeq
	c.mu.Unlock()
	return &tx{c: c, level: level, b: c.s.db.NewBatch(), bases: map[uint64]ID{}, plains: map[uint64][]byte{},
		fams: map[family]uint64{}, anchors: map[string][]uint64{}, nextSeq: next, ids: map[ID]bool{}}
}

func (t *tx) abort() {
	if t.done {
		return
	}
	t.done = true
	t.b.Close()
	if t.locked {
		t.c.create.Unlock()
	}
}

// lookup returns the family's base and the server's anchors, as the
// transaction sees them.
func (t *tx) lookup(f family) (fam uint64, haveFam bool, anchors []uint64) {
	if seq, ok := t.fams[f]; ok {
		fam, haveFam = seq, true
	}
	ak := string(f.anchorKey())
	anchors, ok := t.anchors[ak]
	t.c.mu.Lock()
	if !haveFam {
		fam, haveFam = t.c.fams[f]
	}
	if !ok {
		anchors = t.c.anchors[ak]
	}
	t.c.mu.Unlock()
	return fam, haveFam, anchors
}

func (t *tx) basePlain(seq uint64) ([]byte, error) {
	if p, ok := t.plains[seq]; ok {
		return p, nil
	}
	return t.c.basePlain(seq, 0)
}

// put adds a run to the transaction and points refs at it: plain is its
// document, of docLen bytes, followed by what is kept beside it.
func (t *tx) put(plain []byte, docLen int, f family, startedAt time.Time, refs []string) (ID, error) {
	id := Hash(plain[:docLen])
	stored := t.ids[id]
	if !stored {
		ok, err := t.c.s.hasRun(id)
		if err != nil {
			return ID{}, err
		}
		stored = ok
	}
	if !stored {
		if err := t.putRecord(id, plain, docLen, f, startedAt); err != nil {
			return ID{}, err
		}
	}
	for _, r := range refs {
		if err := t.b.Set(refKey(r), id[:], nil); err != nil {
			return ID{}, err
		}
	}
	return id, nil
}

func (t *tx) putRecord(id ID, plain []byte, docLen int, f family, startedAt time.Time) error {
	fam, haveFam, anchors := t.lookup(f)
	if !haveFam && !t.locked {
		// This run makes a base: one put at a time does, and a put that
		// raced this one may have made it meanwhile.
		t.c.create.Lock()
		t.locked = true
		fam, haveFam, anchors = t.lookup(f)
		// A put that made a base while this one waited took a number: the
		// next free one is read again, under the lock.
		t.c.mu.Lock()
		t.nextSeq = max(t.nextSeq, t.c.nextSeq)
		t.c.mu.Unlock()
	}
	alone := len(plain) > maxBasedBytes
	makeBase := !alone && !haveFam && (t.held == 0 || t.held+len(plain) <= maxTxBaseBytes)
	r := &record{docLen: docLen, plainLen: len(plain), startedAt: startedAt, kind: kindZstd}
	switch {
	case alone:
	case haveFam:
		r.kind, r.bases = kindBased, []uint64{fam}
	case len(anchors) >= t.c.s.opts.Anchors:
		r.kind, r.bases = kindBased, slices.Clone(anchors)
	}
	var parts [][]byte
	if r.kind == kindBased {
		for _, seq := range r.bases {
			p, err := t.basePlain(seq)
			if err != nil {
				return err
			}
			parts = append(parts, p)
		}
	}
	enc, err := t.c.encoder(r.bases, parts, len(plain), t.level)
	if err != nil {
		return err
	}
	// Room for an eighth of plain: a run stored against a base takes a
	// few hundred bytes of its tens of kilobytes (room for all of it made a
	// tenth of what a replay of thousands of runs allocated); one that
	// takes more is grown as it is written, and one that takes as much as
	// plain is stored raw.
	r.payload = enc.EncodeAll(plain, make([]byte, 0, len(plain)/8))
	t.c.encs.put(enc)
	if len(r.payload) >= len(plain) {
		r.kind, r.bases, r.payload = kindRaw, nil, plain
	}
	if err := setRecord(t.b, runKey(id), r); err != nil {
		return err
	}
	t.ids[id] = true
	if !makeBase {
		return nil
	}
	// The run becomes its family's base, and an anchor while its server
	// and model have fewer than Options.Anchors.
	seq := t.nextSeq
	t.nextSeq++
	t.bases[seq] = id
	t.plains[seq] = plain
	t.held += len(plain)
	t.fams[f] = seq
	if err := t.b.Set(baseKey(seq), id[:], nil); err != nil {
		return err
	}
	if err := t.b.Set(f.key(), binary.AppendUvarint(nil, seq), nil); err != nil {
		return err
	}
	if len(anchors) < t.c.s.opts.Anchors && r.kind != kindBased {
		anchors = append(slices.Clone(anchors), seq)
		t.anchors[string(f.anchorKey())] = anchors
		if err := t.b.Set(f.anchorKey(), appendUvarints(nil, anchors), nil); err != nil {
			return err
		}
	}
	return t.b.Set(keySeq, binary.AppendUvarint(nil, t.nextSeq), nil)
}

// commit writes the batch and makes its bases the codec's.
func (t *tx) commit(sync *pebble.WriteOptions) error {
	if err := t.b.Commit(sync); err != nil {
		return err
	}
	c := t.c
	c.mu.Lock()
	for seq, id := range t.bases {
		c.bases[seq] = id
		c.plains.add(id, t.plains[seq])
	}
	for f, seq := range t.fams {
		c.fams[f] = seq
	}
	for k, v := range t.anchors {
		c.anchors[k] = v
	}
	c.nextSeq = max(c.nextSeq, t.nextSeq)
	c.mu.Unlock()
	t.abort()
	return nil
}

// plainCache keeps the plaintexts of bases, least recently used out first,
// within a bound on their bytes.
type plainCache struct {
	mu    sync.Mutex
	max   int
	size  int
	order *list.List // of *plainEntry, most recent first
	items map[ID]*list.Element
}

type plainEntry struct {
	id  ID
	val []byte
}

func newPlainCache(max int) *plainCache {
	return &plainCache{max: max, order: list.New(), items: map[ID]*list.Element{}}
}

func (c *plainCache) get(id ID) ([]byte, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if e, ok := c.items[id]; ok {
		c.order.MoveToFront(e)
		return e.Value.(*plainEntry).val, true
	}
	return nil, false
}

func (c *plainCache) add(id ID, val []byte) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if _, ok := c.items[id]; ok || len(val) > c.max {
		return
	}
	c.items[id] = c.order.PushFront(&plainEntry{id: id, val: val})
	c.size += len(val)
	for c.size > c.max {
		e := c.order.Back()
		pe := e.Value.(*plainEntry)
		c.order.Remove(e)
		delete(c.items, pe.id)
		c.size -= len(pe.val)
	}
}

func (c *plainCache) drop(id ID) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if e, ok := c.items[id]; ok {
		c.order.Remove(e)
		delete(c.items, id)
		c.size -= len(e.Value.(*plainEntry).val)
	}
}

// lru is a small cache of codecs by key.
type lru[T any] struct {
	mu    sync.Mutex
	max   int
	order *list.List // of *lruEntry[T], most recent first
	items map[string]*list.Element
}

type lruEntry[T any] struct {
	key string
	val T
}

func newLRU[T any](max int) *lru[T] {
	return &lru[T]{max: max, order: list.New(), items: map[string]*list.Element{}}
}

func (l *lru[T]) get(key string) (T, bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if e, ok := l.items[key]; ok {
		l.order.MoveToFront(e)
		return e.Value.(*lruEntry[T]).val, true
	}
	var zero T
	return zero, false
}

// put adds val under key and returns what the cache holds for key: val, or
// the one another goroutine put first.
func (l *lru[T]) put(key string, val T) T {
	l.mu.Lock()
	defer l.mu.Unlock()
	if e, ok := l.items[key]; ok {
		l.order.MoveToFront(e)
		return e.Value.(*lruEntry[T]).val
	}
	l.items[key] = l.order.PushFront(&lruEntry[T]{key: key, val: val})
	for l.order.Len() > l.max {
		e := l.order.Back()
		l.order.Remove(e)
		delete(l.items, e.Value.(*lruEntry[T]).key)
	}
	return val
}

func (l *lru[T]) clear() {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.items = map[string]*list.Element{}
	l.order.Init()
}
