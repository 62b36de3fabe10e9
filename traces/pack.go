package traces

import (
	"bufio"
	"bytes"
	"crypto/sha256"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"hash"
	"io"
	"slices"
	"sort"
	"strings"

	"github.com/cockroachdb/pebble/v2"
	"github.com/klauspost/compress/zstd"
)

// A pack is one file:
//
//	pack    = magic zstd(records)
//	magic   = "bench-pack\n"
//	records = header blob* run* ref* end
//	record  = type:byte uvarint(len(body)) body
//
//	'H' header  canonical JSON {"blobs":n,"format":1,"refs":n,"runs":n}
//	'B' blob    id[32] node                  (blobs sorted by ID)
//	'U' run     id[32] canonical JSON info   (runs sorted by ID)
//	'R' ref     id[32] name                  (refs sorted by name)
//	'Z' end     SHA-256 of every record byte before it
//
// The zstd stream is written by one goroutine at a fixed level, so the same
// runs give the same bytes on any machine running the same bench.
const packMagic = "bench-pack\n"

// ErrBadPack is wrapped by every error Import returns for a pack that is
// truncated, tampered with or otherwise unreadable.
var ErrBadPack = errors.New("bad pack")

const (
	recHeader = 'H'
	recBlob   = 'B'
	recRun    = 'U'
	recRef    = 'R'
	recEnd    = 'Z'
)

// maxRecord bounds one record, and maxPackBytes a whole decompressed pack,
// so that hostile input cannot allocate wildly.
const (
	maxRecord    = 1 << 30
	maxPackBytes = uint64(8 << 30)
)

type packHeader struct {
	Format int `json:"format"`
	Blobs  int `json:"blobs"`
	Runs   int `json:"runs"`
	Refs   int `json:"refs"`
}

// ExportReport says what Export wrote.
type ExportReport struct {
	Runs  int `json:"runs"`
	Refs  int `json:"refs"`
	Blobs int `json:"blobs"`
}

// Export writes a pack of the refs whose names start with one of prefixes
// (every ref when prefixes is empty), their runs and every blob they reach.
func (s *Store) Export(w io.Writer, prefixes ...string) (*ExportReport, error) {
	all, err := s.Refs("")
	if err != nil {
		return nil, err
	}
	var refs []Ref
	for _, r := range all {
		if len(prefixes) == 0 || slices.ContainsFunc(prefixes, func(p string) bool { return strings.HasPrefix(r.Name, p) }) {
			refs = append(refs, r)
		}
	}
	if len(refs) == 0 {
		return nil, fmt.Errorf("export: no ref matches %q: %w", prefixes, ErrNotFound)
	}
	live := map[ID]bool{}
	runs := map[ID]runInfo{}
	for _, r := range refs {
		if err := s.mark(r.Run, live); err != nil {
			return nil, fmt.Errorf("export: ref %s: %w", r.Name, err)
		}
		info, err := s.runInfo(r.Run)
		if err != nil {
			return nil, fmt.Errorf("export: ref %s: %w", r.Name, err)
		}
		runs[r.Run] = info
	}
	blobIDs := sortedIDs(live)
	runIDs := make([]ID, 0, len(runs))
	for id := range runs {
		runIDs = append(runIDs, id)
	}
	sortIDs(runIDs)

	if _, err := io.WriteString(w, packMagic); err != nil {
		return nil, err
	}
	zw, err := zstd.NewWriter(w, zstd.WithEncoderLevel(zstd.SpeedBetterCompression), zstd.WithEncoderConcurrency(1))
	if err != nil {
		return nil, err
	}
	pw := &packWriter{w: bufio.NewWriterSize(zw, 1<<16), h: sha256.New()}
	hdr, _ := Marshal(packHeader{Format: FormatVersion, Blobs: len(blobIDs), Runs: len(runIDs), Refs: len(refs)})
	pw.record(recHeader, hdr)
	// Every blob is verified before it leaves: the runs are expanded (and
	// so each blob re-hashed) once, sharing a memo, before blobs are written.
	for _, id := range runIDs {
		if _, err := (&expander{node: s.node, memo: map[ID][]byte{}}).expand(id, nil, 0); err != nil {
			return nil, fmt.Errorf("export: %w", err)
		}
	}
	for _, id := range blobIDs {
		plain, err := s.plain(id)
		if err != nil {
			return nil, fmt.Errorf("export: %w", err)
		}
		pw.record(recBlob, append(id[:len(id):len(id)], plain...))
	}
	for _, id := range runIDs {
		info, _ := Marshal(runs[id])
		pw.record(recRun, append(id[:len(id):len(id)], info...))
	}
	for _, r := range refs {
		pw.record(recRef, append(r.Run[:len(r.Run):len(r.Run)], r.Name...))
	}
	pw.record(recEnd, pw.h.Sum(nil))
	if pw.err == nil {
		pw.err = pw.w.Flush()
	}
	if err := zw.Close(); pw.err == nil {
		pw.err = err
	}
	if pw.err != nil {
		return nil, fmt.Errorf("export: %w", pw.err)
	}
	return &ExportReport{Runs: len(runIDs), Refs: len(refs), Blobs: len(blobIDs)}, nil
}

// plain returns a blob's node bytes as stored.
func (s *Store) plain(id ID) ([]byte, error) {
	v, closer, err := s.db.Get(blobKey(id))
	if err != nil {
		return nil, fmt.Errorf("blob %s: %w", id, wrapCorrupt(err))
	}
	defer closer.Close()
	p, err := s.decodeBlob(id, v)
	return bytes.Clone(p), err
}

type packWriter struct {
	w   *bufio.Writer
	h   hash.Hash
	err error
}

func (p *packWriter) record(typ byte, body []byte) {
	if p.err != nil {
		return
	}
	var head [1 + binary.MaxVarintLen64]byte
	head[0] = typ
	n := 1 + binary.PutUvarint(head[1:], uint64(len(body)))
	if typ != recEnd {
		p.h.Write(head[:n])
		p.h.Write(body)
	}
	if _, err := p.w.Write(head[:n]); err != nil {
		p.err = err
		return
	}
	_, p.err = p.w.Write(body)
}

// ImportReport says what Import added.
type ImportReport struct {
	Runs      int `json:"runs"`       // runs in the pack
	NewRuns   int `json:"new_runs"`   // of which the store lacked
	Blobs     int `json:"blobs"`      // blobs in the pack
	NewBlobs  int `json:"new_blobs"`  // of which the store lacked
	Refs      int `json:"refs"`       // refs in the pack
	RefsMoved int `json:"refs_moved"` // existing refs now pointing elsewhere
}

// ImportOptions control Import. A nil *ImportOptions means the defaults.
type ImportOptions struct {
	// Overwrite lets a ref in the pack replace an existing ref of the same
	// name that points to another run. By default that is a conflict and
	// nothing is imported.
	Overwrite bool
}

// Import reads a pack and merges it into the store, all or nothing: the
// whole pack is read and every blob verified before anything is written,
// and then everything is written in one synced batch. A truncated or
// tampered pack imports nothing and the error (wrapping ErrBadPack) says why.
func (s *Store) Import(r io.Reader, o *ImportOptions) (*ImportReport, error) {
	var opts ImportOptions
	if o != nil {
		opts = *o
	}
	p, err := readPack(r)
	if err != nil {
		return nil, err
	}
	if err := p.verify(s.node, s.hasBlob); err != nil {
		return nil, err
	}
	rep := &ImportReport{Runs: len(p.runs), Blobs: len(p.blobs), Refs: len(p.refs)}
	var conflicts []string
	for _, r := range p.refs {
		if _, ok := p.runs[r.Run]; !ok {
			return nil, fmt.Errorf("import: ref %s points to run %s, which the pack lacks: %w", r.Name, r.Run.Short(), ErrBadPack)
		}
		if err := ValidateRefName(r.Name); err != nil {
			return nil, fmt.Errorf("import: %v: %w", err, ErrBadPack)
		}
		old, err := s.Ref(r.Name)
		switch {
		case errors.Is(err, ErrNotFound):
		case err != nil:
			return nil, err
		case old != r.Run:
			rep.RefsMoved++
			conflicts = append(conflicts, fmt.Sprintf("%s (store: %s, pack: %s)", r.Name, old.Short(), r.Run.Short()))
		}
	}
	if len(conflicts) > 0 && !opts.Overwrite {
		return nil, fmt.Errorf("import: %d refs already point to other runs: %s; nothing imported (overwrite to replace them)", len(conflicts), strings.Join(conflicts, ", "))
	}
	b := s.db.NewBatch()
	defer b.Close()
	for _, id := range p.blobOrder {
		ok, err := s.hasBlob(id)
		if err != nil {
			return nil, err
		}
		if !ok {
			rep.NewBlobs++
			if err := b.Set(blobKey(id), s.encodeBlob(p.blobs[id]), nil); err != nil {
				return nil, err
			}
		}
	}
	for _, id := range sortedIDs(setOf(p.runs)) {
		ok, err := s.has(runKey(id))
		if err != nil {
			return nil, err
		}
		if !ok {
			rep.NewRuns++
			if err := b.Set(runKey(id), p.runs[id], nil); err != nil {
				return nil, err
			}
		}
	}
	for _, r := range p.refs {
		if err := b.Set(refKey(r.Name), r.Run[:], nil); err != nil {
			return nil, err
		}
	}
	if err := b.Commit(pebble.Sync); err != nil {
		return nil, fmt.Errorf("import: %w", err)
	}
	return rep, nil
}

// verify checks every blob of the pack against its ID, resolving children
// in the pack first and then with node (the store's), and that every run's
// document is present.
func (p *pack) verify(node func(ID) ([]nodeRef, []byte, error), has func(ID) (bool, error)) error {
	e := &expander{node: func(id ID) ([]nodeRef, []byte, error) {
		if plain, ok := p.blobs[id]; ok {
			refs, lit, err := decodeNode(plain)
			if err != nil {
				return nil, nil, fmt.Errorf("blob %s: %v: %w", id, err, ErrBadPack)
			}
			return refs, lit, nil
		}
		return node(id)
	}}
	for _, id := range p.blobOrder {
		e.memo = map[ID][]byte{} // memory bounded by one tree
		if _, err := e.expand(id, nil, 0); err != nil {
			return fmt.Errorf("import: %v: %w", err, ErrBadPack)
		}
	}
	for id := range p.runs {
		if _, ok := p.blobs[id]; !ok {
			if ok, err := has(id); err != nil || !ok {
				return fmt.Errorf("import: run %s has no document: %w", id, ErrBadPack)
			}
		}
	}
	return nil
}

type pack struct {
	blobs     map[ID][]byte
	blobOrder []ID
	runs      map[ID][]byte // canonical run info
	refs      []Ref
}

func readPack(r io.Reader) (*pack, error) {
	bad := func(format string, args ...any) error {
		return fmt.Errorf("import: %s: %w", fmt.Sprintf(format, args...), ErrBadPack)
	}
	br := bufio.NewReader(r)
	magic := make([]byte, len(packMagic))
	if _, err := io.ReadFull(br, magic); err != nil || string(magic) != packMagic {
		return nil, bad("not a bench pack (wrong magic)")
	}
	compressed, err := io.ReadAll(br)
	if err != nil {
		return nil, fmt.Errorf("import: reading pack: %w", err)
	}
	// DecodeAll runs on this goroutine and stops at maxPackBytes, so a
	// decompression bomb is refused rather than followed.
	// A pack's records compress about 5:1; allowing 1000:1 (and 64 MiB
	// whatever the size) refuses a decompression bomb quickly instead of
	// decoding gigabytes of a hostile run-length block.
	limit := min(maxPackBytes, max(64<<20, 1000*uint64(len(compressed))))
	zr, err := zstd.NewReader(nil, zstd.WithDecoderConcurrency(1), zstd.WithDecoderMaxMemory(limit))
	if err != nil {
		return nil, err
	}
	defer zr.Close()
	plain, err := zr.DecodeAll(compressed, nil)
	if err != nil {
		return nil, bad("decompressing: %v", err)
	}
	in := bytes.NewReader(plain)
	h := sha256.New()
	p := &pack{blobs: map[ID][]byte{}, runs: map[ID][]byte{}}
	var hdr *packHeader
	var prevBlob, prevRun *ID
	prevRef := ""
	for {
		typ, err := in.ReadByte()
		if err != nil {
			return nil, bad("truncated: no end record (%v)", err)
		}
		n, err := binary.ReadUvarint(in)
		if err != nil {
			return nil, bad("truncated record length (%v)", err)
		}
		if n > maxRecord {
			return nil, bad("record of %d bytes is too large", n)
		}
		if n > uint64(in.Len()) {
			return nil, bad("truncated record: %d bytes announced, %d left", n, in.Len())
		}
		off := len(plain) - in.Len()
		body := plain[off : off+int(n) : off+int(n)]
		in.Seek(int64(n), io.SeekCurrent)
		if typ == recEnd {
			if !bytes.Equal(body, h.Sum(nil)) {
				return nil, bad("checksum mismatch: the pack was altered")
			}
			if hdr == nil {
				return nil, bad("no header")
			}
			if _, err := in.ReadByte(); err != io.EOF {
				return nil, bad("data after the end record")
			}
			if hdr.Blobs != len(p.blobs) || hdr.Runs != len(p.runs) || hdr.Refs != len(p.refs) {
				return nil, bad("header counts (%d blobs, %d runs, %d refs) do not match the contents (%d, %d, %d)",
					hdr.Blobs, hdr.Runs, hdr.Refs, len(p.blobs), len(p.runs), len(p.refs))
			}
			return p, nil
		}
		var head [1 + binary.MaxVarintLen64]byte
		head[0] = typ
		h.Write(head[:1+binary.PutUvarint(head[1:], n)])
		h.Write(body)
		if typ != recHeader && hdr == nil {
			return nil, bad("record %q before the header", typ)
		}
		var id ID
		if typ == recBlob || typ == recRun || typ == recRef {
			if len(body) < len(id) {
				return nil, bad("short %q record", typ)
			}
			copy(id[:], body)
		}
		switch typ {
		case recHeader:
			if hdr != nil {
				return nil, bad("second header")
			}
			hdr = &packHeader{}
			if err := json.Unmarshal(body, hdr); err != nil {
				return nil, bad("header: %v", err)
			}
			if hdr.Format != FormatVersion {
				return nil, bad("pack has trace format %d; this bench reads format %d", hdr.Format, FormatVersion)
			}
		case recBlob:
			if prevBlob != nil && bytes.Compare(prevBlob[:], id[:]) >= 0 {
				return nil, bad("blobs out of order at %s", id.Short())
			}
			prevBlob = &id
			p.blobs[id] = body[len(id):]
			p.blobOrder = append(p.blobOrder, id)
		case recRun:
			if prevRun != nil && bytes.Compare(prevRun[:], id[:]) >= 0 {
				return nil, bad("runs out of order at %s", id.Short())
			}
			prevRun = &id
			var info runInfo
			if err := json.Unmarshal(body[len(id):], &info); err != nil {
				return nil, bad("run %s: %v", id.Short(), err)
			}
			p.runs[id] = body[len(id):]
		case recRef:
			name := string(body[len(id):])
			if name <= prevRef {
				return nil, bad("refs out of order at %q", name)
			}
			prevRef = name
			p.refs = append(p.refs, Ref{Name: name, Run: id})
		default:
			return nil, bad("unknown record type %q", typ)
		}
	}
}

func setOf[V any](m map[ID]V) map[ID]bool {
	out := make(map[ID]bool, len(m))
	for id := range m {
		out[id] = true
	}
	return out
}

func sortedIDs(m map[ID]bool) []ID {
	out := make([]ID, 0, len(m))
	for id := range m {
		out = append(out, id)
	}
	sortIDs(out)
	return out
}

func sortIDs(ids []ID) {
	sort.Slice(ids, func(i, j int) bool { return bytes.Compare(ids[i][:], ids[j][:]) < 0 })
}
