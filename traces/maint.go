package traces

import (
	"bytes"
	"context"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/cockroachdb/pebble/v2"
)

// Problem is one inconsistency Verify found.
type Problem struct {
	// Kind is what the problem concerns: run, ref, base, family, anchor,
	// meta (the store's format and base counter) or keys (a stretch of the
	// store that cannot be read).
	Kind    string `json:"kind"`
	ID      string `json:"id,omitempty"`  // the run concerned
	Ref     string `json:"ref,omitempty"` // the ref concerned
	Message string `json:"message"`
}

func (p Problem) String() string {
	switch {
	case p.Ref != "":
		return fmt.Sprintf("ref %s: %s", p.Ref, p.Message)
	default:
		return fmt.Sprintf("%s: %s", p.ID, p.Message)
	}
}

// VerifyReport is what Verify checked and found.
type VerifyReport struct {
	Keys     int       `json:"keys"` // every key read
	Runs     int       `json:"runs"`
	Bases    int       `json:"bases"`
	Families int       `json:"families"`
	Anchors  int       `json:"anchors"` // anchor lists, one per server and model
	Refs     int       `json:"refs"`
	Problems []Problem `json:"problems"`
	// UnreadableRuns are the runs that cannot be read: their record, or a
	// base they are stored against, is damaged or missing. BrokenRefs are
	// the refs that point at one of them or at a run the store lacks.
	// LostStretches counts the stretches of keys pebble cannot read at all
	// (each a problem of kind keys, which names the keys around it).
	UnreadableRuns []ID     `json:"unreadable_runs"`
	BrokenRefs     []string `json:"broken_refs"`
	LostStretches  int      `json:"lost_stretches"`
	survey         *survey  // for Repair
	holes          []hole   // the stretches lost
	brokenRefs     []Ref    // BrokenRefs with the runs they point at
	runCause       map[ID]string
}

// OK reports whether Verify found nothing wrong.
func (r *VerifyReport) OK() bool { return len(r.Problems) == 0 }

// survey is what a tolerant read of every key of the store found.
type survey struct {
	keys       int
	kept       [][]byte // every key read, when collecting them (Repair)
	format     []byte
	seq        uint64
	haveSeq    bool
	seqErr     error
	bases      map[uint64]ID
	fams       map[string]uint64   // by key
	anchors    map[string][]uint64 // by key
	refs       []Ref
	runs       []ID // every run key read
	malformed  [][]byte
	holes      []hole
	maxSeqSeen uint64 // one more than the highest base number anything names
}

// survey reads every key of the store that can be read, past damage, in
// three stretches (everything before the runs, the runs, everything
// after): the refs and bases read in the first are where the second looks
// past damaged blocks.
func (s *Store) survey(ctx context.Context, collect bool) (*survey, error) {
	sv := &survey{bases: map[uint64]ID{}, fams: map[string]uint64{}, anchors: map[string][]uint64{}}
	v, closer, err := s.get(keySeq)
	switch {
	case errors.Is(err, pebble.ErrNotFound):
	case err != nil:
		sv.seqErr = err
	default:
		var n int
		sv.seq, n = binary.Uvarint(v)
		sv.haveSeq = n > 0
		closer.Close()
	}
	var hints [][]byte
	for seq := range min(sv.seq+16, 1<<16) {
		hints = append(hints, baseKey(seq))
	}
	seen := func(seq uint64) { sv.maxSeqSeen = max(sv.maxSeqSeen, seq+1) }
	visit := func(k, v []byte) error {
		if err := ctx.Err(); err != nil {
			return err
		}
		sv.keys++
		if collect {
			sv.kept = append(sv.kept, bytes.Clone(k))
		}
		switch {
		case bytes.HasPrefix(k, prefixRun):
			if len(k) != len(prefixRun)+len(ID{}) {
				sv.malformed = append(sv.malformed, bytes.Clone(k))
				return nil
			}
			sv.runs = append(sv.runs, ID(k[len(prefixRun):]))
		case bytes.HasPrefix(k, prefixRef):
			if len(v) != len(ID{}) {
				sv.malformed = append(sv.malformed, bytes.Clone(k))
				return nil
			}
			sv.refs = append(sv.refs, Ref{Name: string(k[len(prefixRef):]), Run: ID(v)})
		case bytes.HasPrefix(k, prefixBase):
			if len(k) != len(prefixBase)+8 || len(v) != len(ID{}) {
				sv.malformed = append(sv.malformed, bytes.Clone(k))
				return nil
			}
			seq := binary.BigEndian.Uint64(k[len(prefixBase):])
			sv.bases[seq] = ID(v)
			seen(seq)
		case bytes.HasPrefix(k, prefixFamily):
			seq, n := binary.Uvarint(v)
			if n <= 0 || len(bytes.Split(k[len(prefixFamily):], []byte{0})) != 3 {
				sv.malformed = append(sv.malformed, bytes.Clone(k))
				return nil
			}
			sv.fams[string(k)] = seq
			seen(seq)
		case bytes.HasPrefix(k, prefixAnchor):
			seqs, err := uvarints(v)
			if err != nil {
				sv.malformed = append(sv.malformed, bytes.Clone(k))
				return nil
			}
			sv.anchors[string(k)] = seqs
			for _, seq := range seqs {
				seen(seq)
			}
		case bytes.Equal(k, keyFormat):
			sv.format = bytes.Clone(v)
		}
		return nil
	}
	stretch := func(lower, upper []byte, hints [][]byte) error {
		holes, err := s.scanAll(lower, upper, hints, visit)
		sv.holes = append(sv.holes, holes...)
		return err
	}
	if err := stretch(nil, prefixRun, hints); err != nil {
		return nil, err
	}
	hints = hints[:0]
	for _, r := range sv.refs {
		hints = append(hints, runKey(r.Run))
	}
	for _, id := range sv.bases {
		hints = append(hints, runKey(id))
	}
	slices.SortFunc(hints, bytes.Compare)
	hints = slices.CompactFunc(hints, bytes.Equal)
	if err := stretch(prefixRun, prefixEnd(prefixRun), hints); err != nil {
		return nil, err
	}
	if err := stretch(prefixEnd(prefixRun), nil, nil); err != nil {
		return nil, err
	}
	return sv, nil
}

// lost reports whether key lies in a stretch the survey could not read,
// and that stretch.
func (sv *survey) lost(key []byte) (hole, bool) { return holeSet(sv.holes).find(key) }

// Verify reads every key of the store, past damage pebble reports (a
// block of a table whose checksum does not match: the keys around it are
// read all the same), reads every run (decompressing it against its bases,
// checking that it hashes to its ID and that it decodes as GetRun decodes
// it), and checks every base, family,
// anchor and ref; it reports every problem, naming each run that cannot
// be read and each ref that points at one, rather than stopping at the
// first.
func (s *Store) Verify(ctx context.Context) (*VerifyReport, error) {
	return s.verify(ctx, false)
}

// checkDecodes returns the error of GetRun decoding the verified plaintext
// of record r, but for a run of another trace format: that is no damage
// (GetRun says what it is), and nothing to repair.
func checkDecodes(r *record, plain []byte) error {
	doc, info, _ := splitPlain(r, plain)
	var fe formatError
	if _, err := decodeRun(doc, info, nil); err != nil && !errors.As(err, &fe) {
		return fmt.Errorf("not a run this bench can read: %v: %w", err, ErrCorrupt)
	}
	return nil
}

func (s *Store) verify(ctx context.Context, collect bool) (*VerifyReport, error) {
	sv, err := s.survey(ctx, collect)
	if err != nil {
		return nil, err
	}
	rep := &VerifyReport{Keys: sv.keys, Bases: len(sv.bases), Families: len(sv.fams), Anchors: len(sv.anchors),
		Refs: len(sv.refs), survey: sv, holes: sv.holes, runCause: map[ID]string{}}
	add := func(kind, id, ref, format string, args ...any) {
		rep.Problems = append(rep.Problems, Problem{Kind: kind, ID: id, Ref: ref, Message: fmt.Sprintf(format, args...)})
	}
	for _, h := range sv.holes {
		add("keys", "store", "", "%s", h)
	}
	rep.LostStretches = len(sv.holes)
	for _, k := range sv.malformed {
		add("keys", "store", "", "malformed %s: %v", describeKey(k), ErrCorrupt)
	}
	// Every run read, decompressed and hashed.
	have := make(map[ID]bool, len(sv.runs))
	for _, id := range sv.runs {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		rep.Runs++
		have[id] = true
		plain, r, err := s.codec.plain(id, 0)
		if err == nil {
			err = checkDecodes(r, plain)
		}
		if err != nil {
			// The ID leads the problem already.
			msg := strings.TrimPrefix(strings.TrimPrefix(err.Error(), "run "+id.String()+": "), "run "+id.String()+" ")
			rep.runCause[id] = msg
			add("run", id.String(), "", "%s", msg)
		}
	}
	// The runs refs and bases name that the store lacks, or holds where it
	// cannot be read.
	readable := func(id ID) bool { return have[id] && rep.runCause[id] == "" }
	named := func(id ID) {
		if have[id] || rep.runCause[id] != "" {
			return
		}
		if h, ok := sv.lost(runKey(id)); ok {
			rep.runCause[id] = fmt.Sprintf("cannot be read: %v", h.err)
			add("run", id.String(), "", "%s", rep.runCause[id])
		}
	}
	for _, r := range sv.refs {
		named(r.Run)
	}
	for _, id := range sv.bases {
		named(id)
	}
	for id := range rep.runCause {
		rep.UnreadableRuns = append(rep.UnreadableRuns, id)
	}
	slices.SortFunc(rep.UnreadableRuns, func(a, b ID) int { return bytes.Compare(a[:], b[:]) })
	for seq, id := range sv.bases {
		switch {
		case rep.runCause[id] != "":
			add("base", id.String(), "", "base %d: the run cannot be read", seq)
		case !have[id]:
			add("base", id.String(), "", "base %d: the run is missing", seq)
		}
	}
	for k, seq := range sv.fams {
		if _, ok := sv.bases[seq]; !ok {
			add("family", "store", "", "%s: its base %d is missing", describeKey([]byte(k)), seq)
		}
	}
	for k, seqs := range sv.anchors {
		for _, seq := range seqs {
			if _, ok := sv.bases[seq]; !ok {
				add("anchor", "store", "", "%s: its base %d is missing", describeKey([]byte(k)), seq)
			}
		}
	}
	switch {
	case sv.seqErr != nil:
		add("meta", "store", "", "%v", sv.seqErr)
	case !sv.haveSeq && sv.maxSeqSeen > 0:
		add("meta", "store", "", "meta/seq is missing, and base %d exists", sv.maxSeqSeen-1)
	case sv.seq < sv.maxSeqSeen:
		add("meta", "store", "", "meta/seq is %d, and base %d exists", sv.seq, sv.maxSeqSeen-1)
	}
	if _, lost := sv.lost(keyFormat); !lost && string(sv.format) != strconv.Itoa(StoreFormat) && (sv.format != nil || sv.keys > 0) {
		add("meta", "store", "", "meta/format is %q, want %d", sv.format, StoreFormat)
	}
	for _, r := range sv.refs {
		switch {
		case rep.runCause[r.Run] != "":
			add("ref", "", r.Name, "points to run %s, which cannot be read", r.Run.Short())
		case !readable(r.Run):
			add("ref", "", r.Name, "points to missing run %s", r.Run)
		default:
			continue
		}
		rep.BrokenRefs = append(rep.BrokenRefs, r.Name)
		rep.brokenRefs = append(rep.brokenRefs, r)
	}
	sort.SliceStable(rep.Problems, func(i, j int) bool { return rep.Problems[i].String() < rep.Problems[j].String() })
	return rep, nil
}

// GCReport says what GC removed.
type GCReport struct {
	RunsRemoved  int   `json:"runs_removed"`
	BasesRemoved int   `json:"bases_removed"`
	BytesRemoved int64 `json:"bytes_removed"` // stored (compressed) bytes
}

// GC removes every run that no ref reaches, directly or as the base of a
// run a ref reaches, then compacts the store so that the space is returned
// to the file system.
func (s *Store) GC(ctx context.Context) (*GCReport, error) {
	if err := s.writable(); err != nil {
		return nil, err
	}
	c := s.codec
	c.create.Lock() // no base is made meanwhile
	defer c.create.Unlock()
	refs, err := s.Refs("")
	if err != nil {
		return nil, err
	}
	live := map[ID]bool{}
	queue := make([]ID, 0, len(refs))
	for _, r := range refs {
		queue = append(queue, r.Run)
	}
	for len(queue) > 0 {
		id := queue[0]
		queue = queue[1:]
		if live[id] {
			continue
		}
		live[id] = true
		v, closer, err := s.get(runKey(id))
		if err != nil {
			return nil, fmt.Errorf("gc: %w", err) // it names the run
		}
		r, err := decodeRecord(v)
		closer.Close()
		if err != nil {
			return nil, fmt.Errorf("gc: run %s: %w", id, err)
		}
		for _, seq := range r.bases {
			c.mu.Lock()
			base, ok := c.bases[seq]
			c.mu.Unlock()
			if !ok {
				return nil, fmt.Errorf("gc: run %s: base %d: %w", id, seq, ErrNotFound)
			}
			queue = append(queue, base)
		}
	}
	rep := &GCReport{}
	b := s.db.NewBatch()
	defer b.Close()
	if err := s.scan(prefixRun, func(k, v []byte) error {
		if !live[ID(k[len(prefixRun):])] {
			rep.RunsRemoved++
			rep.BytesRemoved += int64(len(v))
			return b.Delete(k, nil)
		}
		return nil
	}); err != nil {
		return nil, err
	}
	c.mu.Lock()
	dead := map[uint64]bool{}
	for seq, id := range c.bases {
		if !live[id] {
			dead[seq] = true
		}
	}
	var deadFams []family
	for f, seq := range c.fams {
		if dead[seq] {
			deadFams = append(deadFams, f)
		}
	}
	anchors := map[string][]uint64{}
	for k, seqs := range c.anchors {
		var keep []uint64
		for _, seq := range seqs {
			if !dead[seq] {
				keep = append(keep, seq)
			}
		}
		if len(keep) != len(seqs) {
			anchors[k] = keep
		}
	}
	c.mu.Unlock()
	for seq := range dead {
		rep.BasesRemoved++
		if err := b.Delete(baseKey(seq), nil); err != nil {
			return nil, err
		}
	}
	for _, f := range deadFams {
		if err := b.Delete(f.key(), nil); err != nil {
			return nil, err
		}
	}
	for k, seqs := range anchors {
		var err error
		if len(seqs) == 0 {
			err = b.Delete([]byte(k), nil)
		} else {
			err = b.Set([]byte(k), appendUvarints(nil, seqs), nil)
		}
		if err != nil {
			return nil, err
		}
	}
	if err := b.Commit(pebble.Sync); err != nil {
		return nil, err
	}
	c.mu.Lock()
	for seq := range dead {
		c.plains.drop(c.bases[seq])
		delete(c.bases, seq)
	}
	for _, f := range deadFams {
		delete(c.fams, f)
	}
	for k, seqs := range anchors {
		if len(seqs) == 0 {
			delete(c.anchors, k)
		} else {
			c.anchors[k] = seqs
		}
	}
	c.mu.Unlock()
	if err := s.Compact(ctx); err != nil {
		return nil, err
	}
	return rep, nil
}

// Compact rewrites the store's files so that deleted data leaves the disk.
func (s *Store) Compact(ctx context.Context) error {
	if err := s.db.Flush(); err != nil {
		return err
	}
	return s.db.Compact(ctx, []byte{0}, []byte{0xff}, false)
}

// Stats describes the store's contents and how well they pack.
type Stats struct {
	Runs  int `json:"runs"`
	Refs  int `json:"refs"`
	Bases int `json:"bases"` // runs other runs are compressed against
	// RawBytes is the sum of every run's canonical document size: what the
	// runs would take written out one by one.
	RawBytes int64 `json:"raw_bytes"`
	// StoredBytes is the size of the run records as stored (compressed).
	StoredBytes int64 `json:"stored_bytes"`
	// DiskBytes is the size of the store's database on disk, every file
	// (not the database a repair kept aside).
	DiskBytes int64 `json:"disk_bytes"`
}

// CompressionRatio is RawBytes / StoredBytes.
func (st Stats) CompressionRatio() float64 { return ratio(st.RawBytes, st.StoredBytes) }

func ratio(a, b int64) float64 {
	if b == 0 {
		return 0
	}
	return float64(a) / float64(b)
}

// Stats computes the store's statistics.
func (s *Store) Stats() (*Stats, error) {
	st := &Stats{}
	err := s.scan(prefixRun, func(_, v []byte) error {
		r, err := decodeRecord(v)
		if err != nil {
			return err
		}
		st.Runs++
		st.RawBytes += int64(r.docLen)
		st.StoredBytes += int64(len(v))
		return nil
	})
	if err != nil {
		return nil, err
	}
	refs, err := s.Refs("")
	if err != nil {
		return nil, err
	}
	st.Refs = len(refs)
	s.codec.mu.Lock()
	st.Bases = len(s.codec.bases)
	s.codec.mu.Unlock()
	st.DiskBytes, err = dirSize(filepath.Join(s.dir, dbDirName))
	return st, err
}

func dirSize(dir string) (int64, error) {
	var n int64
	err := filepath.WalkDir(dir, func(_ string, d fs.DirEntry, err error) error {
		if err != nil {
			if errors.Is(err, fs.ErrNotExist) {
				return nil
			}
			return err
		}
		if d.Type().IsRegular() {
			info, err := d.Info()
			if err == nil {
				n += info.Size()
			}
		}
		return nil
	})
	return n, err
}

// MigrateReport says what Migrate converted.
type MigrateReport struct {
	From, To int // store formats
	Runs     int // runs converted
}

// Migrate converts the store in dir from store format 1 to StoreFormat in
// place. Every run keeps its document, and so its ID, its start time and
// stderr; every ref stays. It is safe to interrupt: a rerun goes on where
// the last one stopped, and the store is marked converted only once every
// run is. progress, when not nil, is told each run converted.
func Migrate(ctx context.Context, dir string, o *Options, progress func(done, total int)) (*MigrateReport, error) {
	opts := o.withDefaults()
	opts.MustExist, opts.ReadOnly = true, false
	o = &opts
	s, err := Open(dir, o)
	if err == nil {
		s.Close()
		return &MigrateReport{From: StoreFormat, To: StoreFormat}, nil
	}
	if !errors.Is(err, ErrNeedsMigration) {
		return nil, err
	}
	s, err = openRaw(dir, o)
	if err != nil {
		return nil, err
	}
	defer s.Close()
	if s.codec, err = newCodec(s); err != nil {
		return nil, err
	}
	lb, err := newLegacyBlobs(func(k []byte) ([]byte, error) {
		v, closer, err := s.db.Get(k)
		if errors.Is(err, pebble.ErrNotFound) {
			return nil, ErrNotFound
		}
		if err != nil {
			return nil, wrapCorrupt(err)
		}
		defer closer.Close()
		return append([]byte(nil), v...), nil
	}, s.scan)
	if err != nil {
		return nil, err
	}
	defer lb.close()
	// Runs in ref order first, so that each scenario's first run becomes its
	// family's base as a recording would have made it, then the rest.
	var order []ID
	seen := map[ID]bool{}
	refs, err := s.Refs("")
	if err != nil {
		return nil, err
	}
	for _, r := range refs {
		if !seen[r.Run] {
			seen[r.Run] = true
			order = append(order, r.Run)
		}
	}
	if err := s.scan(prefixRun, func(k, _ []byte) error {
		if id := ID(k[len(prefixRun):]); !seen[id] {
			seen[id] = true
			order = append(order, id)
		}
		return nil
	}); err != nil {
		return nil, err
	}
	rep := &MigrateReport{From: 1, To: StoreFormat}
	for i, id := range order {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		v, closer, err := s.db.Get(runKey(id))
		if err != nil {
			return nil, fmt.Errorf("migrate: run %s: %w", id, wrapCorrupt(err))
		}
		converted := len(v) > 0 && v[0] == recordVersion
		var old struct {
			StartedAt string            `json:"started_at"`
			Stderr    map[string]string `json:"stderr"`
		}
		if !converted {
			err = json.Unmarshal(v, &old)
		}
		closer.Close()
		if err != nil {
			return nil, fmt.Errorf("migrate: run %s: record: %v: %w", id, err, ErrCorrupt)
		}
		if converted {
			continue
		}
		doc, err := lb.document(id)
		if err != nil {
			return nil, fmt.Errorf("migrate: run %s: %w", id, err)
		}
		var m struct {
			Manifest Manifest `json:"manifest"`
		}
		if err := decodeCanonical(doc, &m, nil); err != nil {
			return nil, fmt.Errorf("migrate: run %s: %v: %w", id, err, ErrCorrupt)
		}
		startedAt, _ := time.Parse(time.RFC3339Nano, old.StartedAt)
		plain := append(doc, legacyStderrSide(old.Stderr)...)
		// The run's record is replaced in place: the put must not take it
		// for a run already stored.
		tx := s.codec.begin(s.opts.CompressionLevel)
		if err := tx.putRecord(id, plain, len(doc), familyOf(&m.Manifest), startedAt); err != nil {
			tx.abort()
			return nil, fmt.Errorf("migrate: run %s: %w", id, err)
		}
		if err := tx.commit(pebble.NoSync); err != nil {
			return nil, fmt.Errorf("migrate: %w", err)
		}
		rep.Runs++
		if progress != nil {
			progress(i+1, len(order))
		}
	}
	if err := s.db.LogData(nil, pebble.Sync); err != nil {
		return nil, err
	}
	b := s.db.NewBatch()
	defer b.Close()
	for _, p := range [][]byte{legacyPrefixBlob, legacyPrefixDict} {
		if err := b.DeleteRange(p, prefixEnd(p), nil); err != nil {
			return nil, err
		}
	}
	if err := b.Delete(legacyKeyDict, nil); err != nil {
		return nil, err
	}
	if err := b.Set(keyFormat, []byte(strconv.Itoa(StoreFormat)), nil); err != nil {
		return nil, err
	}
	if err := b.Commit(pebble.Sync); err != nil {
		return nil, err
	}
	return rep, s.Compact(ctx)
}
