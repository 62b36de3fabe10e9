package traces

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"
	"sort"

	"github.com/cockroachdb/pebble/v2"
)

// Problem is one inconsistency Verify found.
type Problem struct {
	ID      string `json:"id,omitempty"`  // the blob or run concerned
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
	Blobs    int       `json:"blobs"`
	Runs     int       `json:"runs"`
	Refs     int       `json:"refs"`
	Problems []Problem `json:"problems"`
}

// OK reports whether Verify found nothing wrong.
func (r *VerifyReport) OK() bool { return len(r.Problems) == 0 }

// Verify re-hashes every blob, checks that every run loads and that every
// ref resolves. It reports problems rather than stopping at the first, and
// names each unreadable or altered blob once: a blob whose subtree holds a
// bad blob is not reported again for it.
func (s *Store) Verify(ctx context.Context) (*VerifyReport, error) {
	rep := &VerifyReport{}
	var listed []ID
	if err := s.scan(prefixBlob, func(k, _ []byte) error {
		var id ID
		if len(k) != len(prefixBlob)+len(id) {
			rep.Problems = append(rep.Problems, Problem{ID: fmt.Sprintf("%x", k), Message: "malformed blob key"})
			return nil
		}
		copy(id[:], k[len(prefixBlob):])
		listed = append(listed, id)
		return nil
	}); err != nil {
		if !errors.Is(err, ErrCorrupt) {
			return nil, err
		}
		// Part of the blob index is unreadable: say so; the walk from the
		// runs below names the blobs that cannot be read.
		rep.Problems = append(rep.Problems, Problem{ID: "store", Message: "listing blobs: " + err.Error()})
	}
	runs, err := s.Runs()
	if err != nil {
		return nil, err
	}
	// Walk the graph from every run and every listed blob, reading each
	// node once: what cannot be read, or references what is missing, is
	// named here.
	bad := map[ID]bool{}
	seen := map[ID]bool{}
	queue := append(append([]ID(nil), runs...), listed...)
	for len(queue) > 0 {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		id := queue[0]
		queue = queue[1:]
		if seen[id] {
			continue
		}
		seen[id] = true
		refs, _, err := s.node(id)
		if err != nil {
			bad[id] = true
			rep.Problems = append(rep.Problems, Problem{ID: id.String(), Message: err.Error()})
			continue
		}
		for _, r := range refs {
			queue = append(queue, r.id)
		}
	}
	rep.Blobs = len(listed)
	// Re-hash every readable blob whose subtree is readable.
	e := &expander{node: func(id ID) ([]nodeRef, []byte, error) {
		if bad[id] {
			return nil, nil, errAlreadyReported
		}
		return s.node(id)
	}, memo: map[ID][]byte{}}
	memoBytes := 0
	for _, id := range listed {
		if bad[id] {
			continue
		}
		b, err := e.expand(id, nil, 0)
		switch {
		case errors.Is(err, errAlreadyReported):
		case err != nil:
			bad[id] = true
			rep.Problems = append(rep.Problems, Problem{ID: id.String(), Message: err.Error()})
		default:
			memoBytes += len(b)
			if memoBytes > 256<<20 {
				e.memo, memoBytes = map[ID][]byte{}, 0
			}
		}
	}
	for _, id := range runs {
		rep.Runs++
		if _, err := s.runInfo(id); err != nil {
			rep.Problems = append(rep.Problems, Problem{ID: id.String(), Message: err.Error()})
		}
	}
	refs, err := s.Refs("")
	if err != nil {
		return nil, err
	}
	for _, r := range refs {
		rep.Refs++
		if _, err := s.runInfo(r.Run); err != nil {
			rep.Problems = append(rep.Problems, Problem{Ref: r.Name, Message: fmt.Sprintf("points to missing run %s", r.Run)})
		}
	}
	sort.SliceStable(rep.Problems, func(i, j int) bool { return rep.Problems[i].String() < rep.Problems[j].String() })
	return rep, nil
}

var errAlreadyReported = errors.New("depends on a blob already reported")

// GCReport says what GC removed.
type GCReport struct {
	BlobsRemoved int   `json:"blobs_removed"`
	RunsRemoved  int   `json:"runs_removed"`
	BytesRemoved int64 `json:"bytes_removed"` // stored (compressed) bytes
}

// GC removes every run and blob that no ref reaches, retrains the blobs'
// compression dictionary when the store has grown (see dict.go), then
// compacts the store so that the space is returned to the file system.
func (s *Store) GC(ctx context.Context) (*GCReport, error) {
	refs, err := s.Refs("")
	if err != nil {
		return nil, err
	}
	live := map[ID]bool{}
	liveRuns := map[ID]bool{}
	for _, r := range refs {
		liveRuns[r.Run] = true
		if err := s.mark(r.Run, live); err != nil {
			return nil, fmt.Errorf("gc: ref %s: %w", r.Name, err)
		}
	}
	rep := &GCReport{}
	b := s.db.NewBatch()
	defer b.Close()
	err = s.scan(prefixBlob, func(k, v []byte) error {
		var id ID
		copy(id[:], k[len(prefixBlob):])
		if !live[id] {
			rep.BlobsRemoved++
			rep.BytesRemoved += int64(len(v))
			return b.Delete(k, nil)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	err = s.scan(prefixRun, func(k, _ []byte) error {
		var id ID
		copy(id[:], k[len(prefixRun):])
		if !liveRuns[id] {
			rep.RunsRemoved++
			return b.Delete(k, nil)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	if err := b.Commit(pebble.Sync); err != nil {
		return nil, err
	}
	if err := s.retrain(ctx); err != nil {
		return nil, fmt.Errorf("gc: training the compression dictionary: %w", err)
	}
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

// mark adds id and every blob it references to live.
func (s *Store) mark(id ID, live map[ID]bool) error {
	if live[id] {
		return nil
	}
	refs, _, err := s.node(id)
	if err != nil {
		return err
	}
	live[id] = true
	for _, r := range refs {
		if err := s.mark(r.id, live); err != nil {
			return err
		}
	}
	return nil
}

// Stats describes the store's contents and how well they pack.
type Stats struct {
	Runs int `json:"runs"`
	Refs int `json:"refs"`
	// Blobs is the number of distinct blobs.
	Blobs int `json:"blobs"`
	// RawBytes is the sum of every run's canonical document size: what the
	// runs would take written out one by one.
	RawBytes int64 `json:"raw_bytes"`
	// UniqueBytes is the plaintext of the distinct blobs: RawBytes after
	// deduplication, before compression.
	UniqueBytes int64 `json:"unique_bytes"`
	// StoredBytes is the size of the blob values as stored (compressed).
	StoredBytes int64 `json:"stored_bytes"`
	// DiskBytes is the size of the store's directory on disk.
	DiskBytes int64 `json:"disk_bytes"`
}

// DedupRatio is RawBytes / UniqueBytes.
func (st Stats) DedupRatio() float64 { return ratio(st.RawBytes, st.UniqueBytes) }

// CompressionRatio is UniqueBytes / StoredBytes.
func (st Stats) CompressionRatio() float64 { return ratio(st.UniqueBytes, st.StoredBytes) }

func ratio(a, b int64) float64 {
	if b == 0 {
		return 0
	}
	return float64(a) / float64(b)
}

// Stats computes the store's statistics.
func (s *Store) Stats() (*Stats, error) {
	st := &Stats{}
	err := s.scan(prefixBlob, func(k, v []byte) error {
		st.Blobs++
		st.StoredBytes += int64(len(v))
		var id ID
		copy(id[:], k[len(prefixBlob):])
		plain, err := s.decodeBlob(id, v)
		if err != nil {
			return err
		}
		st.UniqueBytes += int64(len(plain))
		return nil
	})
	if err != nil {
		return nil, err
	}
	runs, err := s.Runs()
	if err != nil {
		return nil, err
	}
	for _, id := range runs {
		info, err := s.runInfo(id)
		if err != nil {
			return nil, err
		}
		st.Runs++
		st.RawBytes += info.Size
	}
	refs, err := s.Refs("")
	if err != nil {
		return nil, err
	}
	st.Refs = len(refs)
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
