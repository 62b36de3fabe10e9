package traces

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"
	"sort"
	"strconv"
	"time"

	"github.com/cockroachdb/pebble/v2"
)

// Problem is one inconsistency Verify found.
type Problem struct {
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
	Runs     int       `json:"runs"`
	Bases    int       `json:"bases"`
	Refs     int       `json:"refs"`
	Problems []Problem `json:"problems"`
}

// OK reports whether Verify found nothing wrong.
func (r *VerifyReport) OK() bool { return len(r.Problems) == 0 }

// Verify reads every run (decompressing it against its bases and checking
// that it hashes to its ID), checks that every base and every ref points to
// a run the store holds, and reports every problem rather than stopping at
// the first.
func (s *Store) Verify(ctx context.Context) (*VerifyReport, error) {
	rep := &VerifyReport{}
	var ids []ID
	if err := s.scan(prefixRun, func(k, _ []byte) error {
		if len(k) != len(prefixRun)+len(ID{}) {
			rep.Problems = append(rep.Problems, Problem{ID: fmt.Sprintf("%x", k), Message: "malformed run key"})
			return nil
		}
		ids = append(ids, ID(k[len(prefixRun):]))
		return nil
	}); err != nil {
		if !errors.Is(err, ErrCorrupt) {
			return nil, err
		}
		rep.Problems = append(rep.Problems, Problem{ID: "store", Message: "listing runs: " + err.Error()})
	}
	bad := map[ID]bool{}
	for _, id := range ids {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		rep.Runs++
		if _, _, err := s.codec.plain(id, 0); err != nil {
			bad[id] = true
			rep.Problems = append(rep.Problems, Problem{ID: id.String(), Message: err.Error()})
		}
	}
	s.codec.mu.Lock()
	bases := make(map[uint64]ID, len(s.codec.bases))
	for seq, id := range s.codec.bases {
		bases[seq] = id
	}
	s.codec.mu.Unlock()
	for seq, id := range bases {
		rep.Bases++
		if ok, err := s.hasRun(id); err != nil || !ok {
			rep.Problems = append(rep.Problems, Problem{ID: id.String(), Message: fmt.Sprintf("base %d: the run is missing", seq)})
		}
	}
	refs, err := s.Refs("")
	if err != nil {
		return nil, err
	}
	for _, r := range refs {
		rep.Refs++
		switch ok, err := s.hasRun(r.Run); {
		case err != nil || !ok:
			rep.Problems = append(rep.Problems, Problem{Ref: r.Name, Message: fmt.Sprintf("points to missing run %s", r.Run)})
		case bad[r.Run]:
			rep.Problems = append(rep.Problems, Problem{Ref: r.Name, Message: fmt.Sprintf("points to run %s, which cannot be read", r.Run.Short())})
		}
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
		v, closer, err := s.db.Get(runKey(id))
		if err != nil {
			return nil, fmt.Errorf("gc: run %s: %w", id, wrapCorrupt(err))
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
	// DiskBytes is the size of the store's directory on disk, every file.
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
	st.DiskBytes, err = dirSize(s.dir)
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
		if err := decodeCanonical(doc, &m); err != nil {
			return nil, fmt.Errorf("migrate: run %s: %v: %w", id, err, ErrCorrupt)
		}
		info := runInfo{Side: legacyStderrSide(old.Stderr)}
		info.StartedAt, _ = time.Parse(time.RFC3339Nano, old.StartedAt)
		// The run's record is replaced in place: the put must not take it
		// for a run already stored.
		tx := s.codec.begin(s.opts.CompressionLevel)
		if err := tx.putRecord(id, doc, familyOf(&m.Manifest), info); err != nil {
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
