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
	"time"

	"github.com/cockroachdb/pebble/v2"
	"github.com/klauspost/compress/zstd"
)

// A pack is one file:
//
//	pack    = magic zstd(records)
//	magic   = "bench-pack\n"
//	records = header run* ref* end
//	record  = type:byte uvarint(len(body)) body
//
//	'H' header  canonical JSON {"format":3,"refs":n,"runs":n}
//	'D' run     id[32] started_at uvarint(len doc) doc side
//	            (runs sorted by ID; started_at as in a run record, see
//	            codec.go; side is what is kept beside the run, outside
//	            its ID, as a run record has it (side.go), or empty)
//	'R' ref     id[32] name                  (refs sorted by name)
//	'Z' end     SHA-256 of every record byte before it
//
// A pack holds every run whole: the zstd stream around them compresses one
// run against the runs before it. It is written by one goroutine at a fixed
// level, so the same runs give the same bytes on any machine running the
// same bench. Packs of format 2 (the same, but a run's side is only its
// servers' stderr) and of format 1 (runs as blobs: 'B' blob id node, 'U'
// run id info) are still read.
const packMagic = "bench-pack\n"

// PackFormat is the version of the packs Export writes.
const PackFormat = 3

// ErrBadPack is wrapped by every error Import returns for a pack that is
// truncated, tampered with or otherwise unreadable.
var ErrBadPack = errors.New("bad pack")

const (
	recHeader = 'H'
	recDoc    = 'D'
	recBlob   = 'B' // format 1
	recRun    = 'U' // format 1
	recRef    = 'R'
	recEnd    = 'Z'
)

// maxRecord bounds one record, and maxPackBytes a whole decompressed pack,
// so that hostile input cannot allocate or spin wildly.
const (
	maxRecord    = maxPlain + 64
	maxPackBytes = uint64(64 << 30)
	maxWindow    = 128 << 20
)

type packHeader struct {
	Format int `json:"format"`
	Blobs  int `json:"blobs,omitempty"` // format 1
	Runs   int `json:"runs"`
	Refs   int `json:"refs"`
}

// ExportReport says what Export wrote.
type ExportReport struct {
	Runs int `json:"runs"`
	Refs int `json:"refs"`
}

// Export writes a pack of the refs whose names start with one of prefixes
// (every ref when prefixes is empty) and their runs, each verified as it is
// read.
func (s *Store) Export(w io.Writer, prefixes ...string) (*ExportReport, error) {
	all, err := s.Refs("")
	if err != nil {
		return nil, err
	}
	var refs []Ref
	ids := map[ID]bool{}
	for _, r := range all {
		if len(prefixes) == 0 || slices.ContainsFunc(prefixes, func(p string) bool { return strings.HasPrefix(r.Name, p) }) {
			refs = append(refs, r)
			ids[r.Run] = true
		}
	}
	if len(refs) == 0 {
		return nil, fmt.Errorf("export: no ref matches %q: %w", prefixes, ErrNotFound)
	}
	runIDs := sortedIDs(ids)
	if _, err := io.WriteString(w, packMagic); err != nil {
		return nil, err
	}
	zw, err := zstd.NewWriter(w, zstd.WithEncoderLevel(zstd.SpeedBetterCompression), zstd.WithEncoderConcurrency(1))
	if err != nil {
		return nil, err
	}
	pw := &packWriter{w: bufio.NewWriterSize(zw, 1<<16), h: sha256.New()}
	hdr, _ := Marshal(packHeader{Format: PackFormat, Runs: len(runIDs), Refs: len(refs)})
	pw.record(recHeader, hdr)
	for _, id := range runIDs {
		plain, r, err := s.codec.plain(id, 0)
		if err != nil {
			return nil, fmt.Errorf("export: %w", err)
		}
		body := append(id[:len(id):len(id)], binary.AppendUvarint(appendTime(nil, r.startedAt), uint64(r.docLen))...)
		pw.record(recDoc, append(body, plain...))
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
	return &ExportReport{Runs: len(runIDs), Refs: len(refs)}, nil
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

// packRun is one run of a pack, verified.
type packRun struct {
	id   ID
	doc  []byte
	info runInfo
}

// Import reads a pack and merges it into the store, all or nothing: every
// run is verified against its ID and the pack's end checksum checked
// before anything is committed, and then everything is written in one
// synced batch. A truncated or tampered pack imports nothing and the error
// (wrapping ErrBadPack) says why.
func (s *Store) Import(r io.Reader, o *ImportOptions) (*ImportReport, error) {
	if err := s.writable(); err != nil {
		return nil, err
	}
	var opts ImportOptions
	if o != nil {
		opts = *o
	}
	tx := s.codec.begin(s.opts.CompressionLevel)
	defer tx.abort()
	rep := &ImportReport{}
	var refs []Ref
	runs := map[ID]bool{}
	err := readPack(r, func(pr *packRun) error {
		rep.Runs++
		runs[pr.id] = true
		ok, err := s.hasRun(pr.id)
		if err != nil {
			return err
		}
		if ok {
			return nil
		}
		rep.NewRuns++
		var m struct {
			Manifest Manifest `json:"manifest"`
		}
		if err := decodeCanonical(pr.doc, &m); err != nil {
			return fmt.Errorf("import: run %s: %v: %w", pr.id.Short(), err, ErrBadPack)
		}
		_, err = tx.put(pr.doc, familyOf(&m.Manifest), pr.info, nil)
		return err
	}, func(ref Ref) { refs = append(refs, ref) })
	if err != nil {
		return nil, err
	}
	rep.Refs = len(refs)
	var conflicts []string
	for _, r := range refs {
		if !runs[r.Run] {
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
	for _, r := range refs {
		if err := tx.b.Set(refKey(r.Name), r.Run[:], nil); err != nil {
			return nil, err
		}
	}
	if err := tx.commit(pebble.Sync); err != nil {
		return nil, fmt.Errorf("import: %w", err)
	}
	return rep, nil
}

// readPack reads a pack, calling run for each run (verified) and ref for
// each ref, in pack order; it returns an error wrapping ErrBadPack for
// anything malformed, the end checksum included, so a caller keeps what it
// was handed only when readPack returns nil.
func readPack(r io.Reader, run func(*packRun) error, ref func(Ref)) error {
	bad := func(format string, args ...any) error {
		return fmt.Errorf("import: %s: %w", fmt.Sprintf(format, args...), ErrBadPack)
	}
	br := bufio.NewReader(r)
	magic := make([]byte, len(packMagic))
	if _, err := io.ReadFull(br, magic); err != nil || string(magic) != packMagic {
		return bad("not a bench pack (wrong magic)")
	}
	zr, err := zstd.NewReader(br, zstd.WithDecoderConcurrency(1), zstd.WithDecoderMaxWindow(maxWindow))
	if err != nil {
		return err
	}
	defer zr.Close()
	in := bufio.NewReaderSize(&limitedReader{r: zr, left: maxPackBytes}, 1<<16)
	h := sha256.New()
	var hdr *packHeader
	var prevRun *ID
	prevRef := ""
	nruns, nrefs := 0, 0
	var v1 *packV1
	for {
		typ, err := in.ReadByte()
		if err != nil {
			return bad("truncated: no end record (%v)", err)
		}
		n, err := binary.ReadUvarint(in)
		if err != nil {
			return bad("truncated record length (%v)", err)
		}
		if n > maxRecord {
			return bad("record of %d bytes is too large", n)
		}
		body, err := readFull(in, int(n))
		if err != nil {
			return bad("truncated record: %v", err)
		}
		if typ == recEnd {
			if !bytes.Equal(body, h.Sum(nil)) {
				return bad("checksum mismatch: the pack was altered")
			}
			if hdr == nil {
				return bad("no header")
			}
			if _, err := in.ReadByte(); err != io.EOF {
				return bad("data after the end record")
			}
			if v1 != nil {
				if hdr.Blobs != len(v1.blobs) {
					return bad("header counts %d blobs, the pack holds %d", hdr.Blobs, len(v1.blobs))
				}
				if err := v1.runs(run); err != nil {
					return err
				}
			}
			if hdr.Runs != nruns || hdr.Refs != nrefs {
				return bad("header counts (%d runs, %d refs) do not match the contents (%d, %d)", hdr.Runs, hdr.Refs, nruns, nrefs)
			}
			return nil
		}
		var head [1 + binary.MaxVarintLen64]byte
		head[0] = typ
		h.Write(head[:1+binary.PutUvarint(head[1:], n)])
		h.Write(body)
		if typ != recHeader && hdr == nil {
			return bad("record %q before the header", typ)
		}
		var id ID
		if typ == recDoc || typ == recBlob || typ == recRun || typ == recRef {
			if len(body) < len(id) {
				return bad("short %q record", typ)
			}
			copy(id[:], body)
		}
		switch {
		case typ == recHeader:
			if hdr != nil {
				return bad("second header")
			}
			hdr = &packHeader{}
			if err := json.Unmarshal(body, hdr); err != nil {
				return bad("header: %v", err)
			}
			switch hdr.Format {
			case PackFormat, 2:
			case 1:
				v1 = &packV1{blobs: map[ID][]byte{}, info: map[ID]runInfo{}}
			default:
				return bad("pack has format %d; this bench reads formats 1 to %d", hdr.Format, PackFormat)
			}
		case typ == recDoc && v1 == nil:
			if prevRun != nil && bytes.Compare(prevRun[:], id[:]) >= 0 {
				return bad("runs out of order at %s", id.Short())
			}
			prevRun = &id
			nruns++
			pr, err := decodeDocRecord(id, body[len(id):])
			if err != nil {
				return bad("run %s: %v", id.Short(), err)
			}
			if err := run(pr); err != nil {
				return err
			}
		case typ == recBlob && v1 != nil:
			if err := v1.blob(id, body[len(id):]); err != nil {
				return bad("%v", err)
			}
		case typ == recRun && v1 != nil:
			if prevRun != nil && bytes.Compare(prevRun[:], id[:]) >= 0 {
				return bad("runs out of order at %s", id.Short())
			}
			prevRun = &id
			nruns++
			if err := v1.run(id, body[len(id):]); err != nil {
				return bad("run %s: %v", id.Short(), err)
			}
		case typ == recRef:
			name := string(body[len(id):])
			if name <= prevRef {
				return bad("refs out of order at %q", name)
			}
			prevRef = name
			nrefs++
			ref(Ref{Name: name, Run: id})
		default:
			return bad("unknown record type %q", typ)
		}
	}
}

// readFull reads n bytes, growing the buffer as they arrive, so that a
// record announced larger than what follows costs what follows.
func readFull(r io.Reader, n int) ([]byte, error) {
	var buf bytes.Buffer
	if _, err := io.CopyN(&buf, r, int64(n)); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

type limitedReader struct {
	r    io.Reader
	left uint64
}

func (l *limitedReader) Read(p []byte) (int, error) {
	if l.left == 0 {
		return 0, fmt.Errorf("the pack decompresses to more than %d bytes", maxPackBytes)
	}
	if uint64(len(p)) > l.left {
		p = p[:l.left]
	}
	n, err := l.r.Read(p)
	l.left -= uint64(n)
	return n, err
}

func decodeDocRecord(id ID, b []byte) (*packRun, error) {
	at, b, err := readTime(b)
	if err != nil {
		return nil, errors.New("bad start time")
	}
	n, k := binary.Uvarint(b)
	if k <= 0 || n > uint64(len(b)-k) {
		return nil, errors.New("bad document length")
	}
	b = b[k:]
	pr := &packRun{id: id, doc: b[:n], info: runInfo{StartedAt: at}}
	if rest := b[n:]; len(rest) > 0 {
		if c, err := Canonical(rest); err != nil || !bytes.Equal(c, rest) {
			return nil, errors.New("what is kept beside the run is not canonical JSON")
		}
		pr.info.Side = rest
	}
	if Hash(pr.doc) != id {
		return nil, errors.New("content does not match its ID")
	}
	return pr, nil
}

// packV1 collects a format-1 pack's blobs and runs; the runs' documents are
// expanded from the blobs, and verified, once the pack is read whole.
type packV1 struct {
	blobs    map[ID][]byte
	prevBlob *ID
	order    []ID
	info     map[ID]runInfo
}

func (p *packV1) blob(id ID, node []byte) error {
	if p.prevBlob != nil && bytes.Compare(p.prevBlob[:], id[:]) >= 0 {
		return fmt.Errorf("blobs out of order at %s", id.Short())
	}
	p.prevBlob = &id
	p.blobs[id] = node
	return nil
}

func (p *packV1) run(id ID, body []byte) error {
	var old struct {
		StartedAt string            `json:"started_at"`
		Stderr    map[string]string `json:"stderr"`
	}
	if err := json.Unmarshal(body, &old); err != nil {
		return err
	}
	info := runInfo{Side: legacyStderrSide(old.Stderr)}
	info.StartedAt, _ = time.Parse(time.RFC3339Nano, old.StartedAt)
	p.info[id] = info
	p.order = append(p.order, id)
	return nil
}

func (p *packV1) runs(run func(*packRun) error) error {
	e := &expander{node: func(id ID) ([]nodeRef, []byte, error) {
		plain, ok := p.blobs[id]
		if !ok {
			return nil, nil, fmt.Errorf("blob %s: not in the pack: %w", id, ErrBadPack)
		}
		refs, lit, err := decodeNode(plain)
		if err != nil {
			return nil, nil, fmt.Errorf("blob %s: %v: %w", id, err, ErrBadPack)
		}
		return refs, lit, nil
	}}
	for _, id := range p.order {
		e.memo = map[ID][]byte{} // memory bounded by one run
		doc, err := e.expand(id, nil, 0)
		if err != nil {
			return fmt.Errorf("import: run %s: %v: %w", id.Short(), err, ErrBadPack)
		}
		if err := run(&packRun{id: id, doc: doc, info: p.info[id]}); err != nil {
			return err
		}
	}
	return nil
}

func sortedIDs(m map[ID]bool) []ID {
	out := make([]ID, 0, len(m))
	for id := range m {
		out = append(out, id)
	}
	sort.Slice(out, func(i, j int) bool { return bytes.Compare(out[i][:], out[j][:]) < 0 })
	return out
}
