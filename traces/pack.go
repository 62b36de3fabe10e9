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

// The limits of a pack's framing: records other than runs and blobs are
// small, and bench writes its packs with a window of 8 MiB (zstd's default
// at its level), so a frame that asks for more is not one of its own and
// would only cost memory.
const (
	maxHeaderRecord = 4 << 10
	maxRefRecord    = 32 + maxRefName
	maxWindow       = 8 << 20
)

// Import's default bounds (ImportOptions). A run bench records is tens of
// kilobytes (a tool result is cut at 1 MiB by default, see recorder's
// Options.MaxResultBytes); these leave room for a thousand times that, and
// keep what a hostile pack can make bench hold or do to a few hundred
// megabytes and a minute.
const (
	DefaultMaxRunBytes    = 32 << 20
	DefaultMaxImportBytes = 2 << 30
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
	// MaxRunBytes bounds one run of the pack: its document and what is kept
	// beside it, as the store will hold them. It bounds a pack of format 1
	// twice more: what each of its runs expands to from its blobs is
	// computed from the blobs, and refused, before anything is expanded;
	// and its blobs and run records, which are held in memory until the
	// last is read, may not hold more than it together. Default
	// DefaultMaxRunBytes; at most 1 GiB, the largest run the store reads.
	MaxRunBytes int64
	// MaxBytes bounds the whole import: the bytes the pack decompresses to
	// and, for a pack of format 1, those its runs expand to. Default
	// DefaultMaxImportBytes.
	MaxBytes int64
}

func (o *ImportOptions) withDefaults() ImportOptions {
	var out ImportOptions
	if o != nil {
		out = *o
	}
	if out.MaxRunBytes <= 0 {
		out.MaxRunBytes = DefaultMaxRunBytes
	}
	out.MaxRunBytes = min(out.MaxRunBytes, maxPlain)
	if out.MaxBytes <= 0 {
		out.MaxBytes = DefaultMaxImportBytes
	}
	return out
}

// A LimitError is the error of an Import refused because its pack goes past
// one of the bounds of ImportOptions. It is returned as soon as the bound
// is passed, before what passes it is read or expanded. It wraps ErrBadPack.
type LimitError struct {
	// Limit names the bound: "run" (MaxRunBytes) or "import" (MaxBytes).
	Limit string
	Max   int64
	// What says what went past the bound; it reads on with "more than"
	// the bound.
	What string
}

func (e *LimitError) Error() string {
	of := "one run"
	if e.Limit == "import" {
		of = "a whole import"
	}
	return fmt.Sprintf("import: %s more than %s, the limit for %s", e.What, formatBytes(e.Max), of)
}

func (e *LimitError) Is(target error) bool { return target == ErrBadPack }

// formatBytes writes n as bytes, or whole MiB or GiB when it is that.
func formatBytes(n int64) string {
	switch {
	case n >= 1<<30 && n%(1<<30) == 0:
		return fmt.Sprintf("%d GiB", n>>30)
	case n >= 1<<20 && n%(1<<20) == 0:
		return fmt.Sprintf("%d MiB", n>>20)
	}
	return fmt.Sprintf("%d bytes", n)
}

// packRun is one run of a pack, verified: its document hashes to its ID
// and decodes, with its side, as GetRun will decode it.
type packRun struct {
	id    ID
	doc   []byte
	info  runInfo
	plain []byte // doc, then info.Side, as the store keeps them
	fam   family
}

// Import reads a pack and merges it into the store, all or nothing: every
// run is verified against its ID and decoded as GetRun will read it, the
// pack's end checksum is checked before anything is committed, and then
// everything is written in one synced batch. A truncated or tampered
// pack, one whose runs bench cannot read, and one past a bound of
// ImportOptions (a *LimitError) import nothing, and the error (wrapping
// ErrBadPack) says why.
//
// What Import holds in memory is bounded: one run at a time (MaxRunBytes),
// the runs it adds, compressed, until it commits them, and the documents
// of the bases they make (see maxTxBaseBytes).
func (s *Store) Import(r io.Reader, o *ImportOptions) (*ImportReport, error) {
	if err := s.writable(); err != nil {
		return nil, err
	}
	opts := o.withDefaults()
	tx := s.codec.begin(s.opts.CompressionLevel)
	defer tx.abort()
	rep := &ImportReport{}
	var refs []Ref
	runs := map[ID]bool{}
	err := readPack(r, opts, func(pr *packRun) error {
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
		_, err = tx.put(pr.plain, len(pr.doc), pr.fam, pr.info.StartedAt, nil)
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

// budget counts the bytes an import materialises (decompresses, expands)
// against ImportOptions.MaxBytes.
type budget struct {
	max, left int64
}

func (b *budget) take(n int64) error {
	if n > b.left {
		b.left = 0
		return b.exceeded()
	}
	b.left -= n
	return nil
}

func (b *budget) exceeded() error {
	return &LimitError{Limit: "import", Max: b.max, What: "the pack decompresses (and its runs expand) to"}
}

// budgetReader reads the decompressed pack, each byte taken from a budget:
// the stream is decompressed in bounded chunks as it is read, and stops
// at the bound.
type budgetReader struct {
	r io.Reader
	b *budget
}

func (l *budgetReader) Read(p []byte) (int, error) {
	if l.b.left == 0 {
		// At the bound, only the end of the stream may follow.
		var one [1]byte
		if n, err := io.ReadFull(l.r, one[:]); n == 0 && err == io.EOF {
			return 0, io.EOF
		}
		return 0, l.b.exceeded()
	}
	if int64(len(p)) > l.b.left {
		p = p[:l.b.left]
	}
	n, err := l.r.Read(p)
	l.b.left -= int64(n)
	return n, err
}

// readPack reads a pack, calling run for each run (verified) and ref for
// each ref, in pack order; it returns an error wrapping ErrBadPack for
// anything malformed or past a bound of lim, the end checksum included, so
// a caller keeps what it was handed only when readPack returns nil. Every
// record's length is checked against what its type may hold, and the
// header's counts against the records, before the record is read.
func readPack(r io.Reader, lim ImportOptions, run func(*packRun) error, ref func(Ref)) error {
	bad := func(format string, args ...any) error {
		return fmt.Errorf("import: %s: %w", fmt.Sprintf(format, args...), ErrBadPack)
	}
	// fail is the error of a read of the stream that failed.
	fail := func(what string, err error) error {
		var le *LimitError
		switch {
		case errors.As(err, &le):
			return le
		case err == io.EOF || errors.Is(err, io.ErrUnexpectedEOF):
			return bad("truncated: %s", what)
		}
		return bad("%s: %v", what, err)
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
	b := &budget{max: lim.MaxBytes, left: lim.MaxBytes}
	in := bufio.NewReaderSize(&budgetReader{r: zr, b: b}, 1<<16)
	h := sha256.New()
	var hdr *packHeader
	var prevRun *ID
	prevRef := ""
	nruns, nrefs := 0, 0
	var v1 *packV1
	for {
		typ, err := in.ReadByte()
		if err != nil {
			return fail("no end record", err)
		}
		n, err := binary.ReadUvarint(in)
		if err != nil {
			return fail("record length", err)
		}
		if typ != recHeader && hdr == nil {
			return bad("record %q before the header", typ)
		}
		var max uint64
		switch {
		case typ == recHeader:
			max = maxHeaderRecord
		case typ == recDoc && v1 == nil, typ == recBlob && v1 != nil, typ == recRun && v1 != nil:
			max = uint64(lim.MaxRunBytes) + 64 // an ID, a start time, a length
		case typ == recRef:
			max = maxRefRecord
		case typ == recEnd:
			max = sha256.Size
		default:
			return bad("unknown record type %q", typ)
		}
		if n > max {
			if typ == recDoc || typ == recBlob || typ == recRun {
				return &LimitError{Limit: "run", Max: lim.MaxRunBytes, What: fmt.Sprintf("a %q record of %d bytes holds", typ, n)}
			}
			return bad("%q record of %d bytes is too large", typ, n)
		}
		body := make([]byte, n)
		if _, err := io.ReadFull(in, body); err != nil {
			return fail(fmt.Sprintf("a %q record of %d bytes", typ, n), err)
		}
		if typ == recEnd {
			if !bytes.Equal(body, h.Sum(nil)) {
				return bad("checksum mismatch: the pack was altered")
			}
			if _, err := in.ReadByte(); err != io.EOF {
				return bad("data after the end record")
			}
			if v1 != nil {
				if hdr.Blobs != len(v1.blobs) {
					return bad("header counts %d blobs, the pack holds %d", hdr.Blobs, len(v1.blobs))
				}
				if err := v1.runs(lim, b, run); err != nil {
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
		var id ID
		if typ != recHeader {
			if len(body) < len(id) {
				return bad("short %q record", typ)
			}
			copy(id[:], body)
		}
		switch typ {
		case recHeader:
			if hdr != nil {
				return bad("second header")
			}
			hdr = &packHeader{}
			if err := json.Unmarshal(body, hdr); err != nil {
				return bad("header: %v", err)
			}
			if hdr.Runs < 0 || hdr.Refs < 0 || hdr.Blobs < 0 {
				return bad("header: negative counts")
			}
			switch hdr.Format {
			case PackFormat, 2:
			case 1:
				v1 = &packV1{blobs: map[ID][]byte{}, info: map[ID]v1Run{}}
			default:
				return bad("pack has format %d; this bench reads formats 1 to %d", hdr.Format, PackFormat)
			}
		case recDoc, recRun:
			if prevRun != nil && bytes.Compare(prevRun[:], id[:]) >= 0 {
				return bad("runs out of order at %s", id.Short())
			}
			prevRun = &id
			if nruns++; nruns > hdr.Runs {
				return bad("header counts %d runs, the pack holds more", hdr.Runs)
			}
			if typ == recRun {
				if err := v1.run(id, body[len(id):], lim.MaxRunBytes); err != nil {
					return runErr(id, err)
				}
				continue
			}
			pr, err := decodeDocRecord(id, body[len(id):], lim.MaxRunBytes)
			if err != nil {
				return runErr(id, err)
			}
			if err := run(pr); err != nil {
				return err
			}
		case recBlob:
			if len(v1.blobs) >= hdr.Blobs {
				return bad("header counts %d blobs, the pack holds more", hdr.Blobs)
			}
			if err := v1.blob(id, body[len(id):], lim.MaxRunBytes); err != nil {
				return runErr(ID{}, err)
			}
		case recRef:
			name := string(body[len(id):])
			if name <= prevRef {
				return bad("refs out of order at %q", name)
			}
			prevRef = name
			if nrefs++; nrefs > hdr.Refs {
				return bad("header counts %d refs, the pack holds more", hdr.Refs)
			}
			ref(Ref{Name: name, Run: id})
		}
	}
}

// runErr is the error of readPack for run id (none: zero) refused by err.
func runErr(id ID, err error) error {
	var le *LimitError
	switch {
	case errors.As(err, &le):
		return le
	case errors.Is(err, ErrBadPack):
		return err
	case id == ID{}:
		return fmt.Errorf("import: %v: %w", err, ErrBadPack)
	}
	return fmt.Errorf("import: run %s: %v: %w", id.Short(), err, ErrBadPack)
}

func decodeDocRecord(id ID, b []byte, maxRun int64) (*packRun, error) {
	at, b, err := readTime(b)
	if err != nil {
		return nil, errors.New("bad start time")
	}
	n, k := binary.Uvarint(b)
	if k <= 0 || n > uint64(len(b)-k) {
		return nil, errors.New("bad document length")
	}
	b = b[k:]
	if int64(len(b)) > maxRun {
		return nil, &LimitError{Limit: "run", Max: maxRun, What: fmt.Sprintf("run %s (its document and what is kept beside it) holds %d bytes,", id.Short(), len(b))}
	}
	if side := b[n:]; len(side) > 0 {
		if c, err := Canonical(side); err != nil || !bytes.Equal(c, side) {
			return nil, errors.New("what is kept beside the run is not canonical JSON")
		}
	}
	if Hash(b[:n]) != id {
		return nil, errors.New("content does not match its ID")
	}
	return checkRun(id, b, int(n), at)
}

// checkRun returns the packRun of plain, a document of docLen bytes that
// hashes to id and what is kept beside it, once it has checked that
// GetRun will read them: that the document is canonical JSON and decodes,
// with its side, as a run of this trace format.
func checkRun(id ID, plain []byte, docLen int, startedAt time.Time) (*packRun, error) {
	doc := plain[:docLen:docLen]
	info := runInfo{StartedAt: startedAt}
	if len(plain) > docLen {
		info.Side = plain[docLen:]
	}
	if !isCanonical(doc) { // which may not be sure: Canonical is
		if c, err := Canonical(doc); err != nil || !bytes.Equal(c, doc) {
			if err == nil {
				err = errors.New("not in canonical form")
			}
			return nil, fmt.Errorf("its document is not canonical JSON: %v", err)
		}
	}
	run, err := decodeRun(doc, info, nil)
	if err != nil {
		return nil, fmt.Errorf("not a run this bench can read: %v", err)
	}
	return &packRun{id: id, doc: doc, info: info, plain: plain, fam: familyOf(&run.Manifest)}, nil
}

// packV1 collects a format-1 pack's blobs and runs; the runs' documents are
// expanded from the blobs, and verified, once the pack is read whole.
type packV1 struct {
	blobs    map[ID][]byte
	prevBlob *ID
	order    []ID
	info     map[ID]v1Run
	held     int64 // bytes of the records held
}

// v1Run is what a format-1 pack says of a run beside its blobs.
type v1Run struct {
	size int64 // of its document, as declared
	info runInfo
}

// hold counts n more bytes held until the pack's runs are read.
func (p *packV1) hold(n int, maxRun int64) error {
	if p.held += int64(n); p.held > maxRun {
		return &LimitError{Limit: "run", Max: maxRun, What: "a pack of format 1 holds its blobs in memory until it has read them all, and they hold"}
	}
	return nil
}

func (p *packV1) blob(id ID, node []byte, maxRun int64) error {
	if p.prevBlob != nil && bytes.Compare(p.prevBlob[:], id[:]) >= 0 {
		return fmt.Errorf("blobs out of order at %s", id.Short())
	}
	p.prevBlob = &id
	if err := p.hold(len(node), maxRun); err != nil {
		return err
	}
	p.blobs[id] = node
	return nil
}

func (p *packV1) run(id ID, body []byte, maxRun int64) error {
	var old struct {
		Size      *int64            `json:"size"`
		StartedAt string            `json:"started_at"`
		Stderr    map[string]string `json:"stderr"`
	}
	if err := json.Unmarshal(body, &old); err != nil {
		return err
	}
	switch {
	case old.Size == nil:
		return errors.New("no size")
	case *old.Size < 0:
		return fmt.Errorf("a size of %d bytes", *old.Size)
	case *old.Size > maxRun:
		return &LimitError{Limit: "run", Max: maxRun, What: fmt.Sprintf("run %s declares a size of %d bytes,", id.Short(), *old.Size)}
	}
	if err := p.hold(len(body), maxRun); err != nil {
		return err
	}
	info := runInfo{Side: legacyStderrSide(old.Stderr)}
	info.StartedAt, _ = time.Parse(time.RFC3339Nano, old.StartedAt)
	p.info[id] = v1Run{size: *old.Size, info: info}
	p.order = append(p.order, id)
	return nil
}

func (p *packV1) node(id ID) ([]nodeRef, []byte, error) {
	plain, ok := p.blobs[id]
	if !ok {
		return nil, nil, fmt.Errorf("blob %s: not in the pack", id)
	}
	refs, lit, err := decodeNode(plain)
	if err != nil {
		return nil, nil, fmt.Errorf("blob %s: %v", id, err)
	}
	return refs, lit, nil
}

// runs expands and verifies each run, in pack order. What a run expands to
// is computed from its blobs first, without expanding any, and checked
// against the bound of one run, its declared size and what is left of the
// budget of the import; only then is it expanded, into a buffer of
// exactly that size.
func (p *packV1) runs(lim ImportOptions, b *budget, run func(*packRun) error) error {
	sizes := map[ID]int64{} // of every blob sized so far
	for _, id := range p.order {
		r := p.info[id]
		n, err := p.expandedSize(id, sizes, 0, lim.MaxRunBytes-int64(len(r.info.Side)))
		var le *LimitError
		switch {
		case errors.As(err, &le):
			le.What, le.Max = fmt.Sprintf("run %s (its document and what is kept beside it) expands to", id.Short()), lim.MaxRunBytes
			return le
		case err != nil:
			return runErr(id, err)
		case n != r.size:
			return runErr(id, fmt.Errorf("declares a size of %d bytes, and its blobs expand to %d", r.size, n))
		}
		if err := b.take(n); err != nil {
			return err
		}
		e := &expander{node: p.node, memo: map[ID][]byte{}} // memory bounded by one run
		doc, err := e.expand(id, make([]byte, 0, n+int64(len(r.info.Side))), 0)
		if err != nil {
			return runErr(id, err)
		}
		pr, err := checkRun(id, append(doc, r.info.Side...), len(doc), r.info.StartedAt)
		if err != nil {
			return runErr(id, err)
		}
		if err := run(pr); err != nil {
			return err
		}
	}
	return nil
}

// expandedSize returns the size blob id expands to, computed from its node
// and those it refers to (each once, in sizes), expanding nothing; past max
// it returns a *LimitError as soon as that is known.
func (p *packV1) expandedSize(id ID, sizes map[ID]int64, depth int, max int64) (int64, error) {
	if n, ok := sizes[id]; ok {
		if n < 0 {
			return 0, fmt.Errorf("blob %s refers to itself", id.Short())
		}
		return n, nil
	}
	if depth > maxDepth {
		return 0, fmt.Errorf("blob %s: references nested deeper than %d", id.Short(), maxDepth)
	}
	refs, lit, err := p.node(id)
	if err != nil {
		return 0, err
	}
	sizes[id] = -1 // being sized
	n := int64(len(lit))
	for _, r := range refs {
		c, err := p.expandedSize(r.id, sizes, depth+1, max)
		if err != nil {
			return 0, err
		}
		if n += c; n > max {
			return 0, &LimitError{Limit: "run", Max: max}
		}
	}
	if n > max {
		return 0, &LimitError{Limit: "run", Max: max}
	}
	sizes[id] = n
	return n, nil
}

func sortedIDs(m map[ID]bool) []ID {
	out := make([]ID, 0, len(m))
	for id := range m {
		out = append(out, id)
	}
	sort.Slice(out, func(i, j int) bool { return bytes.Compare(out[i][:], out[j][:]) < 0 })
	return out
}
