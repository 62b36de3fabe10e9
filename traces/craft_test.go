package traces

import (
	"bytes"
	"crypto/sha256"
	"encoding/binary"
	"fmt"
	"io"
	"math/rand/v2"
	"slices"
	"testing"
	"time"

	"github.com/klauspost/compress/zstd"
)

// Crafting packs as a hostile writer would: records with the lengths,
// counts and IDs a test chooses, so that only bench's own bounds and checks
// stand between a crafted pack and its import.

// packRecord is one record of a pack's plaintext.
type packRecord struct {
	typ  byte
	body []byte
}

// packRecords splits a pack's plaintext into its records, the end record
// left out.
func packRecords(t testing.TB, pack []byte) []packRecord {
	t.Helper()
	dec, err := zstd.NewReader(bytes.NewReader(pack[len(packMagic):]))
	if err != nil {
		t.Fatal(err)
	}
	defer dec.Close()
	plain, err := io.ReadAll(dec)
	if err != nil {
		t.Fatal(err)
	}
	var out []packRecord
	for len(plain) > 0 {
		typ := plain[0]
		n, k := binary.Uvarint(plain[1:])
		body := plain[1+k : 1+k+int(n)]
		plain = plain[1+k+int(n):]
		if typ != recEnd {
			out = append(out, packRecord{typ, body})
		}
	}
	return out
}

// recordBytes is the framing and body of one record.
func recordBytes(typ byte, n uint64, body []byte) []byte {
	b := binary.AppendUvarint([]byte{typ}, n)
	return append(b, body...)
}

// packText is the plaintext of a pack of recs, with the end record that
// checks it.
func packText(recs []packRecord) []byte {
	var b []byte
	for _, r := range recs {
		b = append(b, recordBytes(r.typ, uint64(len(r.body)), r.body)...)
	}
	sum := sha256.Sum256(b)
	return append(b, recordBytes(recEnd, sha256.Size, sum[:])...)
}

// packOf compresses a pack's plaintext into a pack.
func packOf(plain []byte) []byte {
	var out bytes.Buffer
	out.WriteString(packMagic)
	enc, _ := zstd.NewWriter(&out, zstd.WithEncoderConcurrency(1))
	enc.Write(plain)
	enc.Close()
	return out.Bytes()
}

// craftPack is the pack of recs.
func craftPack(recs ...packRecord) []byte { return packOf(packText(recs)) }

func header(format, runs, refs, blobs int) packRecord {
	h, _ := Marshal(packHeader{Format: format, Runs: runs, Refs: refs, Blobs: blobs})
	return packRecord{recHeader, h}
}

var craftStart = time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC)

// docRecord is the record of a run of format 3: its document and side.
func docRecord(id ID, doc, side []byte) packRecord {
	b := append(id[:len(id):len(id)], appendTime(nil, craftStart)...)
	b = binary.AppendUvarint(b, uint64(len(doc)))
	return packRecord{recDoc, append(append(b, doc...), side...)}
}

func refRecord(id ID, name string) packRecord {
	return packRecord{recRef, append(id[:len(id):len(id)], name...)}
}

// validPack is a pack of one small run of the corpus, and its run record.
func validPack(t *testing.T) ([]byte, packRecord) {
	t.Helper()
	s := openTemp(t)
	run := newCorpus(3, 1, 1, 1).run(0, 0, 0)
	run.Events = run.Events[:4]
	if _, err := s.PutRun(run, "golden/run"); err != nil {
		t.Fatal(err)
	}
	p := exportBytes(t, s)
	for _, r := range packRecords(t, p) {
		if r.typ == recDoc {
			return p, r
		}
	}
	t.Fatal("no run in the pack")
	return nil, packRecord{}
}

// docPack is a pack of format 3 of one run, doc, with side beside it.
func docPack(doc, side []byte) []byte {
	id := Hash(doc)
	return craftPack(header(PackFormat, 1, 1, 0), docRecord(id, doc, side), refRecord(id, "golden/run"))
}

// A zstd frame made by hand (RFC 8878): raw blocks for bytes given, RLE
// blocks for a byte repeated, so that a test describes gigabytes of
// plaintext in kilobytes and in no time, without compressing them.
type zpart struct {
	raw     []byte
	rle     byte
	n       int64 // repeats of rle, or letters, when raw is nil
	letters bool  // n random lowercase letters (see letters), in raw blocks
}

const maxZstdBlock = 128 << 10

func zstdFrame(parts ...zpart) []byte {
	var out bytes.Buffer
	writeZstdFrame(&out, parts...)
	return out.Bytes()
}

func writeZstdFrame(w io.Writer, parts ...zpart) {
	// No checksum, no content size, a window of 1 MiB (exponent 10).
	w.Write([]byte{0x28, 0xb5, 0x2f, 0xfd, 0x00, 10 << 3})
	block := func(typ byte, size int, payload []byte) {
		h := uint32(typ)<<1 | uint32(size)<<3
		w.Write([]byte{byte(h), byte(h >> 8), byte(h >> 16)})
		w.Write(payload)
	}
	for _, p := range parts {
		for raw := p.raw; len(raw) > 0; {
			n := min(len(raw), maxZstdBlock)
			block(0, n, raw[:n])
			raw = raw[n:]
		}
		switch {
		case p.letters:
			letters(p.n, func(b []byte) { block(0, len(b), b) })
		case p.raw == nil:
			for left := p.n; left > 0; {
				n := min(left, maxZstdBlock)
				block(1, int(n), []byte{p.rle})
				left -= n
			}
		}
	}
	w.Write([]byte{1, 0, 0}) // the last block: raw, empty
}

// letters hands fn n random lowercase letters (the same for the same n),
// a block at a time.
func letters(n int64, fn func([]byte)) {
	r := rand.New(rand.NewPCG(uint64(n), 3))
	buf := make([]byte, maxZstdBlock)
	for ; n > 0; n -= int64(len(buf)) {
		b := buf[:min(n, int64(len(buf)))]
		for i := range b {
			b[i] = 'a' + byte(r.IntN(26))
		}
		fn(b)
	}
}

// randomBytes are n bytes no compressor can shrink.
func randomBytes(seed uint64, n int) []byte {
	b := make([]byte, n)
	r := rand.New(rand.NewPCG(seed, 2))
	for i := range b {
		b[i] = byte(r.Uint32())
	}
	return b
}

// node is a format-1 blob: refs (each spliced in at offset 0 of what
// follows it) and a literal.
func node(refs []ID, lit []byte) []byte {
	b := binary.AppendUvarint(nil, uint64(len(refs)))
	for _, id := range refs {
		b = binary.AppendUvarint(b, 0)
		b = append(b, id[:]...)
	}
	return append(b, lit...)
}

func repeatID(id ID, n int) []ID {
	out := make([]ID, n)
	for i := range out {
		out[i] = id
	}
	return out
}

// expansionBomb is a format-1 pack of one run: a 1 KiB leaf, a blob that
// refers to it 1024 times (1 MiB), one that refers to that 1024 times (1
// GiB), and the run, which refers to that 1024 times: 1 TiB from a pack of
// a few hundred bytes. Every blob but the run hashes to its ID, so that an
// expander that checks IDs only once it has expanded a blob expands the
// gigabyte. The run declares it is size bytes.
func expansionBomb(size int64) []byte {
	leaf := bytes.Repeat([]byte("x"), 1024)
	leafID := Hash(leaf)
	mib := node(repeatID(leafID, 1024), nil)
	mibID := Hash(bytes.Repeat(leaf, 1024))
	gib := node(repeatID(mibID, 1024), nil)
	h := sha256.New()
	expanded := bytes.Repeat(leaf, 1024)
	for range 1024 {
		h.Write(expanded)
	}
	var gibID ID
	copy(gibID[:], h.Sum(nil))
	root := node(repeatID(gibID, 1024), nil)
	rootID := Hash([]byte("the terabyte"))
	blobs := map[ID][]byte{leafID: node(nil, leaf), mibID: mib, gibID: gib, rootID: root}
	recs := []packRecord{header(1, 1, 1, len(blobs))}
	for _, id := range sortedIDs(map[ID]bool{leafID: true, mibID: true, gibID: true, rootID: true}) {
		recs = append(recs, packRecord{recBlob, append(id[:len(id):len(id)], blobs[id]...)})
	}
	info, _ := Marshal(map[string]any{"size": size, "started_at": "2026-12-01T00:00:00Z"})
	recs = append(recs, packRecord{recRun, append(rootID[:len(rootID):len(rootID)], info...)}, refRecord(rootID, "bomb/run"))
	return craftPack(recs...)
}

// zeroBomb is a pack of format 3 whose one run record holds n bytes: n-pad
// zeros and pad random bytes (which defeat a guard on the compression
// ratio), all in a few kilobytes more than pad. It ends there, with no
// end record: a reader that holds the record whole has spent its memory
// before it can find anything wrong.
func zeroBomb(n, pad int64) []byte {
	head := append(headerBytes(), recordBytes(recDoc, uint64(n), nil)...)
	frame := zstdFrame(zpart{raw: head}, zpart{rle: 0, n: n - pad}, zpart{raw: randomBytes(3, int(pad))})
	return append([]byte(packMagic), frame...)
}

// stringBomb is a pack of format 3 whose one run's document is a JSON
// string of n bytes; like zeroBomb, it ends there.
func stringBomb(n int64) []byte {
	id := Hash([]byte("a string"))
	head := append(headerBytes(), recordBytes(recDoc, uint64(len(id))+1+uint64(binary.PutUvarint(make([]byte, 10), uint64(n)))+uint64(n), id[:])...)
	head = binary.AppendUvarint(append(head, 0), uint64(n)) // no start time
	head = append(head, '"')
	frame := zstdFrame(zpart{raw: head}, zpart{rle: 'a', n: n - 2}, zpart{raw: []byte(`"`)})
	return append([]byte(packMagic), frame...)
}

// headerBytes is the header record of a pack of format 3 of one run.
func headerBytes() []byte {
	h := header(PackFormat, 1, 0, 0)
	return recordBytes(h.typ, uint64(len(h.body)), h.body)
}

// writeLargeRuns writes to w a valid pack of format 3 of runs runs of
// one family, each the small run of validPack with its tool list replaced
// by a JSON string of about n bytes (n+i for run i, so that they differ),
// of a letter repeated or, when random, of random letters: runs at the
// bound of one run, made without holding them in memory.
func writeLargeRuns(t *testing.T, w io.Writer, n int64, runs int, random bool) {
	t.Helper()
	_, rec := validPack(t)
	_, rest, _ := readTime(rec.body[32:])
	dn, k := binary.Uvarint(rest)
	doc, side := rest[k:k+int(dn)], rest[k+int(dn):]
	at := bytes.Index(doc, []byte(`"tools":{"tools":`)) + len(`"tools":{"tools":`)
	end := at + skipCanonical(doc[at:], 0)
	before, after := doc[:at], doc[end:]
	str := func(n int64) zpart { return zpart{rle: 'a', n: n, letters: random} }
	writeStr := func(w io.Writer, n int64) {
		if random {
			letters(n, func(b []byte) { w.Write(b) })
		} else {
			writeRepeat(w, 'a', n)
		}
	}
	type big struct {
		id ID
		n  int64
	}
	var bigs []big
	for i := range runs {
		h := sha256.New()
		h.Write(before)
		h.Write([]byte(`"`))
		writeStr(h, n+int64(i))
		h.Write([]byte(`"`))
		h.Write(after)
		bigs = append(bigs, big{ID(h.Sum(nil)), n + int64(i)})
	}
	slices.SortFunc(bigs, func(a, b big) int { return bytes.Compare(a.id[:], b.id[:]) })
	// The plaintext, as parts, and its hash for the end record.
	var parts []zpart
	sum := sha256.New()
	raw := func(b []byte) { parts = append(parts, zpart{raw: b}); sum.Write(b) }
	hdr := header(PackFormat, runs, runs, 0)
	raw(recordBytes(hdr.typ, uint64(len(hdr.body)), hdr.body))
	for _, b := range bigs {
		docLen := int64(len(before)+len(after)) + 2 + b.n
		head := append(b.id[:len(b.id):len(b.id)], appendTime(nil, craftStart)...)
		head = binary.AppendUvarint(head, uint64(docLen))
		bodyLen := int64(len(head)) + docLen + int64(len(side))
		raw(append(append(recordBytes(recDoc, uint64(bodyLen), head), before...), '"'))
		parts = append(parts, str(b.n))
		writeStr(sum, b.n)
		raw(append(append([]byte(`"`), after...), side...))
	}
	for i, b := range bigs {
		r := refRecord(b.id, fmt.Sprintf("golden/big/%d", i))
		raw(recordBytes(r.typ, uint64(len(r.body)), r.body))
	}
	raw(recordBytes(recEnd, sha256.Size, sum.Sum(nil)))
	w.Write([]byte(packMagic))
	writeZstdFrame(w, parts...)
}

func writeRepeat(w io.Writer, c byte, n int64) {
	chunk := bytes.Repeat([]byte{c}, 1<<20)
	for ; n > 0; n -= int64(len(chunk)) {
		w.Write(chunk[:min(n, int64(len(chunk)))])
	}
}
