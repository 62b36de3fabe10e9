package traces

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/cockroachdb/pebble/v2"
	"github.com/klauspost/compress/zstd"
)

// Errors callers branch on.
var (
	// ErrNotFound is returned for a ref, run or blob the store does not hold.
	ErrNotFound = errors.New("not found")
	// ErrCorrupt is returned when stored bytes do not hash to their ID or
	// cannot be decoded. The error names the ID.
	ErrCorrupt = errors.New("corrupt")
	// ErrLocked is returned by Open when another process has the store open.
	ErrLocked = errors.New("store is in use by another bench process")
	// ErrAmbiguous is returned when a prefix names more than one run.
	ErrAmbiguous = errors.New("ambiguous")
)

// Options configure a Store. A nil *Options means the defaults.
type Options struct {
	// SplitThreshold is the size in bytes from which a value inside a run is
	// stored as a blob of its own (and so deduplicated). Default 256, the
	// best of 128, 256, 512 and 1024 on BenchmarkCorpus.
	SplitThreshold int
	// CompressionLevel is the zstd level for blobs: 1 fastest, 2 default,
	// 3 better, 4 best. Default 3: on BenchmarkCorpus, level 4 left the
	// store 0.6% smaller (size_ratio 0.249 vs 0.250) and took the benchmark
	// from 35 s to 97 s (level 4 is four times slower per blob,
	// BenchmarkLevels).
	CompressionLevel int
	// NoSyncLevel is the zstd level for PutRunNoSync and PutRunNoSyncRead:
	// their runs (replays) can be recomputed, and at level 2 they are
	// written 1.3 to 2 times faster than at 3 for some 5% more bytes
	// (BenchmarkLevels). Default 2, and never above CompressionLevel.
	NoSyncLevel int
	// ReadCacheBytes bounds the cache of verified values that GetRun keeps
	// across runs (least recently used out first): the values every run of
	// a server shares, its tool list above all, are then read, decompressed
	// and hashed once per process, not once per run. Default 4 MiB; a
	// negative value turns the cache off. Verify never uses it.
	ReadCacheBytes int
}

func (o *Options) withDefaults() Options {
	var out Options
	if o != nil {
		out = *o
	}
	if out.SplitThreshold <= 0 {
		out.SplitThreshold = 256
	}
	if out.CompressionLevel <= 0 {
		out.CompressionLevel = 3
	}
	if out.NoSyncLevel <= 0 {
		out.NoSyncLevel = 2
	}
	out.NoSyncLevel = min(out.NoSyncLevel, out.CompressionLevel)
	if out.ReadCacheBytes == 0 {
		out.ReadCacheBytes = 4 << 20
	}
	return out
}

// Key layout. Every key starts with a short ASCII prefix.
var (
	keyFormat  = []byte("meta/format")
	prefixBlob = []byte("blob/") // + ID -> codec byte + payload
	prefixRun  = []byte("run/")  // + ID -> canonical JSON runInfo
	prefixRef  = []byte("ref/")  // + name -> ID
)

// Blob codecs: the first byte of a stored blob value.
const (
	codecRaw  = 0
	codecZstd = 1
)

// Store is a content-addressed trace store on disk. It is safe for
// concurrent use by one process; a second process cannot open it.
type Store struct {
	dir  string
	db   *pebble.DB
	lock *os.File
	opts Options

	mu      sync.RWMutex // guards the codecs, replaced when a dictionary is trained
	enc     *zstd.Encoder
	encFast *zstd.Encoder // at NoSyncLevel
	dec     *zstd.Decoder

	cache *valueCache // GetRun's, nil when off
}

// runInfo is kept beside each run, outside its content.
type runInfo struct {
	StartedAt string `json:"started_at,omitempty"`
	// Stderr holds the servers' stderr by event index (see
	// Initialize.Stderr).
	Stderr map[string]string `json:"stderr,omitempty"`
	Size   int64             `json:"size"` // canonical bytes of the run document
}

// Open opens or creates the store in dir.
func Open(dir string, o *Options) (*Store, error) {
	opts := o.withDefaults()
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("creating store %s: %w", dir, err)
	}
	lock, err := lockDir(dir)
	if err != nil {
		return nil, err
	}
	popts := &pebble.Options{
		// A small memtable keeps the write-ahead log (and the log files
		// pebble recycles) small: runs are written once and read many times.
		MemTableSize:       128 << 10,
		Logger:             quietLogger{},
		FormatMajorVersion: pebble.FormatNewest,
		// Corruption is reported to the caller as ErrCorrupt by every read
		// that meets it; pebble's default listener would abort the process.
		EventListener: &pebble.EventListener{
			DataCorruption:  func(pebble.DataCorruptionInfo) {},
			BackgroundError: func(error) {},
		},
	}
	// Blobs are zstd-compressed already; pebble's block compression would
	// spend CPU for nothing.
	popts.ApplyCompressionSettings(func() pebble.DBCompressionSettings { return pebble.DBCompressionNone })
	// 16 KiB blocks: less index overhead than pebble's 4 KiB for our small
	// values. Larger blocks save little more, and make pebble's search for a
	// single flipped bit, which it runs on every checksum failure, slow.
	for i := range popts.Levels {
		popts.Levels[i].BlockSize = 16 << 10
	}
	db, err := pebble.Open(filepath.Join(dir, "db"), popts)
	if err != nil {
		lock.Close()
		return nil, fmt.Errorf("opening store %s: %w", dir, err)
	}
	s := &Store{dir: dir, db: db, lock: lock, opts: opts}
	if opts.ReadCacheBytes > 0 {
		s.cache = newValueCache(opts.ReadCacheBytes)
	}
	if err := s.checkFormat(); err != nil {
		s.Close()
		return nil, err
	}
	if err := s.loadCodecs(); err != nil {
		s.Close()
		return nil, err
	}
	return s, nil
}

func lockDir(dir string) (*os.File, error) {
	f, err := os.OpenFile(filepath.Join(dir, "bench.lock"), os.O_CREATE|os.O_RDWR, 0o644)
	if err != nil {
		return nil, fmt.Errorf("opening store %s: %w", dir, err)
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		f.Close()
		if errors.Is(err, syscall.EWOULDBLOCK) {
			return nil, fmt.Errorf("store %s is in use by another bench process: %w", dir, ErrLocked)
		}
		return nil, fmt.Errorf("locking store %s: %w", dir, err)
	}
	return f, nil
}

func (s *Store) checkFormat() error {
	v, closer, err := s.db.Get(keyFormat)
	if errors.Is(err, pebble.ErrNotFound) {
		return s.db.Set(keyFormat, []byte(strconv.Itoa(FormatVersion)), pebble.Sync)
	}
	if err != nil {
		return fmt.Errorf("store %s: reading its format: %w", s.dir, wrapCorrupt(err))
	}
	defer closer.Close()
	if string(v) != strconv.Itoa(FormatVersion) {
		return fmt.Errorf("store %s has trace format %q; this bench reads format %d", s.dir, v, FormatVersion)
	}
	return nil
}

// Dir returns the store's directory.
func (s *Store) Dir() string { return s.dir }

// Close releases the store. Calling it again does nothing.
func (s *Store) Close() error {
	var err error
	if s.enc != nil {
		s.enc.Close()
		s.enc = nil
	}
	if s.encFast != nil {
		s.encFast.Close()
		s.encFast = nil
	}
	if s.dec != nil {
		s.dec.Close()
		s.dec = nil
	}
	if s.db != nil {
		err = s.db.Close()
		s.db = nil
	}
	if s.lock != nil {
		s.lock.Close()
		s.lock = nil
	}
	return err
}

type quietLogger struct{}

func (quietLogger) Infof(string, ...any)  {}
func (quietLogger) Errorf(string, ...any) {}
func (quietLogger) Fatalf(format string, args ...any) {
	panic(fmt.Sprintf("pebble: "+format, args...))
}

func blobKey(id ID) []byte      { return append(slices.Clip(prefixBlob), id[:]...) }
func runKey(id ID) []byte       { return append(slices.Clip(prefixRun), id[:]...) }
func refKey(name string) []byte { return append(slices.Clip(prefixRef), name...) }

// ValidateRefName checks a ref name: slash-separated segments of letters,
// digits and . _ - : @ + =, none empty, "." or "..".
func ValidateRefName(name string) error {
	if name == "" || len(name) > 512 {
		return fmt.Errorf("invalid ref name %q: must be 1 to 512 characters", name)
	}
	for _, seg := range strings.Split(name, "/") {
		if seg == "" || seg == "." || seg == ".." {
			return fmt.Errorf("invalid ref name %q: empty, '.' or '..' segment", name)
		}
		for _, r := range seg {
			ok := r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || strings.ContainsRune("._-:@+=", r)
			if !ok {
				return fmt.Errorf("invalid ref name %q: character %q not allowed", name, r)
			}
		}
	}
	return nil
}

// RunRef builds the conventional ref name of a run.
func RunRef(suite, server, model, scenario string, runIndex int) string {
	clean := func(s string) string {
		return strings.Map(func(r rune) rune {
			if r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || strings.ContainsRune("._-:@+=", r) {
				return r
			}
			return '_'
		}, s)
	}
	return fmt.Sprintf("%s/%s/%s/%s/%d", clean(suite), clean(server), clean(model), clean(scenario), runIndex)
}

// RunRefParts are the segments of a run's conventional ref name.
type RunRefParts struct {
	Prefix   string // what comes before the suite ("replay" in replay/...), or ""
	Suite    string
	Server   string
	Model    string
	Scenario string
	RunIndex int
}

// ParseRunRef splits a ref name built by RunRef, possibly under a prefix
// (replay/<ref>), into its segments. It reports false for a name of
// another shape.
func ParseRunRef(name string) (RunRefParts, bool) {
	seg := strings.Split(name, "/")
	if len(seg) < 5 {
		return RunRefParts{}, false
	}
	n := len(seg)
	idx, err := strconv.Atoi(seg[n-1])
	if err != nil || idx < 0 || strconv.Itoa(idx) != seg[n-1] {
		return RunRefParts{}, false
	}
	return RunRefParts{Prefix: strings.Join(seg[:n-5], "/"), Suite: seg[n-5], Server: seg[n-4], Model: seg[n-3],
		Scenario: seg[n-2], RunIndex: idx}, true
}

// PutRun stores run and points refs at it, atomically: its blobs, its
// record and its refs are written in one synced batch. It returns the run's
// ID and sets run.Manifest.RunID.
func (s *Store) PutRun(run *Run, refs ...string) (ID, error) {
	return s.putRun(run, refs, pebble.Sync)
}

// PutRunNoSync is PutRun without waiting for the disk: the run is written
// in one atomic batch like any other, so a crash loses it whole or keeps it
// whole, but may lose it. For runs that can be recomputed, such as replays;
// Sync (or a later PutRun) makes every earlier write durable.
func (s *Store) PutRunNoSync(run *Run, refs ...string) (ID, error) {
	return s.putRun(run, refs, pebble.NoSync)
}

// PutRunNoSyncRead is PutRunNoSync that also returns the run as GetRun
// would read it back (canonical payloads, RunID and StartedAt set) without
// reading it: it decodes the canonical document it stored.
func (s *Store) PutRunNoSyncRead(run *Run, refs ...string) (*Run, error) {
	var doc []byte
	id, err := s.putRunDoc(run, refs, pebble.NoSync, &doc)
	if err != nil {
		return nil, err
	}
	var out Run
	if err := decodeCanonical(doc, &out); err != nil {
		return nil, fmt.Errorf("run %s: decoding: %w", id, err)
	}
	out.Manifest.RunID = id
	if !run.Manifest.StartedAt.IsZero() {
		out.Manifest.StartedAt, _ = time.Parse(time.RFC3339Nano, run.Manifest.StartedAt.UTC().Format(time.RFC3339Nano))
	}
	out.setStderr(run.stderrOf())
	return &out, nil
}

// Sync makes every write so far durable.
func (s *Store) Sync() error {
	return s.db.LogData(nil, pebble.Sync)
}

func (s *Store) putRun(run *Run, refs []string, sync *pebble.WriteOptions) (ID, error) {
	return s.putRunDoc(run, refs, sync, nil)
}

// putRunDoc stores run; when docOut is not nil it receives the run's
// canonical document.
func (s *Store) putRunDoc(run *Run, refs []string, sync *pebble.WriteOptions, docOut *[]byte) (ID, error) {
	for _, r := range refs {
		if err := ValidateRefName(r); err != nil {
			return ID{}, err
		}
	}
	doc, err := run.document()
	if err != nil {
		return ID{}, err
	}
	sp := &splitter{threshold: s.opts.SplitThreshold, have: s.hasBlob, blobs: map[ID][]byte{}}
	// The root is always a blob, whatever its size.
	root, err := sp.split(doc)
	if err != nil {
		return ID{}, fmt.Errorf("storing run: %w", err)
	}
	b := s.db.NewBatch()
	defer b.Close()
	encode := s.encodeBlob
	if sync == pebble.NoSync {
		encode = s.encodeBlobFast
	}
	for _, id := range sp.order {
		if err := b.Set(blobKey(id), encode(sp.blobs[id]), nil); err != nil {
			return ID{}, err
		}
	}
	info := runInfo{Size: int64(len(doc)), Stderr: run.stderrOf()}
	if !run.Manifest.StartedAt.IsZero() {
		info.StartedAt = run.Manifest.StartedAt.UTC().Format(time.RFC3339Nano)
	}
	if ok, err := s.has(runKey(root)); err != nil {
		return ID{}, err
	} else if !ok {
		ib, _ := Marshal(info)
		if err := b.Set(runKey(root), ib, nil); err != nil {
			return ID{}, err
		}
	}
	for _, r := range refs {
		if err := b.Set(refKey(r), root[:], nil); err != nil {
			return ID{}, err
		}
	}
	if err := b.Commit(sync); err != nil {
		return ID{}, fmt.Errorf("storing run: %w", err)
	}
	run.Manifest.RunID = root
	if docOut != nil {
		*docOut = doc
	}
	return root, nil
}

func (s *Store) encodeBlob(plain []byte) []byte {
	return s.encodeWith(plain, false)
}

// encodeBlobFast encodes at NoSyncLevel.
func (s *Store) encodeBlobFast(plain []byte) []byte {
	return s.encodeWith(plain, true)
}

func (s *Store) encodeWith(plain []byte, fast bool) []byte {
	if len(plain) >= 64 {
		s.mu.RLock()
		defer s.mu.RUnlock()
		enc := s.enc
		if fast {
			enc = s.encFast
		}
		z := enc.EncodeAll(plain, make([]byte, 1, len(plain)/2+16))
		if len(z) < len(plain) {
			z[0] = codecZstd
			return z
		}
	}
	return append([]byte{codecRaw}, plain...)
}

func (s *Store) decodeBlob(id ID, val []byte) ([]byte, error) {
	if len(val) == 0 {
		return nil, fmt.Errorf("blob %s: empty value: %w", id, ErrCorrupt)
	}
	switch val[0] {
	case codecRaw:
		return val[1:], nil
	case codecZstd:
		s.mu.RLock()
		plain, err := s.dec.DecodeAll(val[1:], nil)
		s.mu.RUnlock()
		if err != nil {
			return nil, fmt.Errorf("blob %s: %v: %w", id, err, ErrCorrupt)
		}
		return plain, nil
	default:
		return nil, fmt.Errorf("blob %s: unknown codec %d: %w", id, val[0], ErrCorrupt)
	}
}

func (s *Store) has(key []byte) (bool, error) {
	_, closer, err := s.db.Get(key)
	if errors.Is(err, pebble.ErrNotFound) {
		return false, nil
	}
	if err != nil {
		return false, err
	}
	closer.Close()
	return true, nil
}

func (s *Store) hasBlob(id ID) (bool, error) { return s.has(blobKey(id)) }

// node reads and decodes the blob id without expanding it.
func (s *Store) node(id ID) ([]nodeRef, []byte, error) {
	v, closer, err := s.db.Get(blobKey(id))
	if errors.Is(err, pebble.ErrNotFound) {
		return nil, nil, fmt.Errorf("blob %s: %w", id, ErrNotFound)
	}
	if err != nil {
		return nil, nil, fmt.Errorf("reading blob %s: %w", id, wrapCorrupt(err))
	}
	plain, err := s.decodeBlob(id, v)
	if v[0] == codecRaw && err == nil {
		plain = bytes.Clone(plain)
	}
	closer.Close()
	if err != nil {
		return nil, nil, err
	}
	refs, lit, err := decodeNode(plain)
	if err != nil {
		return nil, nil, fmt.Errorf("blob %s: %v: %w", id, err, ErrCorrupt)
	}
	return refs, lit, nil
}

// expander reassembles values from nodes and verifies every one it builds.
type expander struct {
	node  func(ID) ([]nodeRef, []byte, error)
	memo  map[ID][]byte
	cache *valueCache // verified values below the root, shared across reads; may be nil
}

// expand appends the canonical bytes of id to dst, verifying their hash.
func (e *expander) expand(id ID, dst []byte, depth int) ([]byte, error) {
	if b, ok := e.memo[id]; ok {
		return append(dst, b...), nil
	}
	if depth > maxDepth {
		return nil, fmt.Errorf("blob %s: references nested too deep: %w", id, ErrCorrupt)
	}
	if b, ok := e.cache.get(id); ok {
		if e.memo != nil {
			e.memo[id] = b
		}
		return append(dst, b...), nil
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
	if depth > 0 { // a run's root is its own
		e.cache.add(id, dst[start:])
	}
	return dst, nil
}

// Blob returns the canonical bytes of the value with the given ID.
func (s *Store) Blob(id ID) ([]byte, error) {
	e := &expander{node: s.node, memo: map[ID][]byte{}}
	return e.expand(id, nil, 0)
}

// GetRun loads the run with the given ID, every payload verified.
func (s *Store) GetRun(id ID) (*Run, error) {
	info, err := s.runInfo(id)
	if err != nil {
		return nil, err
	}
	e := &expander{node: s.node, memo: map[ID][]byte{}, cache: s.cache}
	doc, err := e.expand(id, make([]byte, 0, info.Size), 0)
	if err != nil {
		return nil, fmt.Errorf("loading run %s: %w", id.Short(), err)
	}
	var run Run
	if err := decodeCanonical(doc, &run); err != nil {
		return nil, fmt.Errorf("run %s: decoding: %v: %w", id, err, ErrCorrupt)
	}
	if run.Manifest.Format != FormatVersion {
		return nil, fmt.Errorf("run %s has trace format %d; this bench reads format %d", id.Short(), run.Manifest.Format, FormatVersion)
	}
	run.Manifest.RunID = id
	if info.StartedAt != "" {
		run.Manifest.StartedAt, _ = time.Parse(time.RFC3339Nano, info.StartedAt)
	}
	run.setStderr(info.Stderr)
	return &run, nil
}

func (s *Store) runInfo(id ID) (runInfo, error) {
	var info runInfo
	v, closer, err := s.db.Get(runKey(id))
	if errors.Is(err, pebble.ErrNotFound) {
		return info, fmt.Errorf("run %s: %w", id, ErrNotFound)
	}
	if err != nil {
		return info, fmt.Errorf("reading run %s: %w", id, err)
	}
	defer closer.Close()
	if err := json.Unmarshal(v, &info); err != nil {
		return info, fmt.Errorf("run %s: record: %v: %w", id, err, ErrCorrupt)
	}
	return info, nil
}

// Ref is a named pointer to a run.
type Ref struct {
	Name string `json:"name"`
	Run  ID     `json:"run"`
}

// Ref returns the run a ref points to.
func (s *Store) Ref(name string) (ID, error) {
	v, closer, err := s.db.Get(refKey(name))
	if errors.Is(err, pebble.ErrNotFound) {
		return ID{}, fmt.Errorf("ref %s: %w", name, ErrNotFound)
	}
	if err != nil {
		return ID{}, err
	}
	defer closer.Close()
	var id ID
	if len(v) != len(id) {
		return ID{}, fmt.Errorf("ref %s: bad value: %w", name, ErrCorrupt)
	}
	copy(id[:], v)
	return id, nil
}

// SetRef points name at an existing run.
func (s *Store) SetRef(name string, id ID) error {
	if err := ValidateRefName(name); err != nil {
		return err
	}
	if _, err := s.runInfo(id); err != nil {
		return err
	}
	return s.db.Set(refKey(name), id[:], pebble.Sync)
}

// DeleteRef removes a ref; the run stays until GC.
func (s *Store) DeleteRef(name string) error {
	if _, err := s.Ref(name); err != nil {
		return err
	}
	return s.db.Delete(refKey(name), pebble.Sync)
}

// Refs lists the refs whose names start with prefix, sorted by name.
func (s *Store) Refs(prefix string) ([]Ref, error) {
	var out []Ref
	err := s.scan(refKey(prefix), func(k, v []byte) error {
		var id ID
		if len(v) != len(id) {
			return fmt.Errorf("ref %s: bad value: %w", k[len(prefixRef):], ErrCorrupt)
		}
		copy(id[:], v)
		out = append(out, Ref{Name: string(k[len(prefixRef):]), Run: id})
		return nil
	})
	return out, err
}

// Runs lists the IDs of every stored run, sorted.
func (s *Store) Runs() ([]ID, error) {
	var out []ID
	err := s.scan(prefixRun, func(k, _ []byte) error {
		var id ID
		copy(id[:], k[len(prefixRun):])
		out = append(out, id)
		return nil
	})
	return out, err
}

// FindRun resolves a hex prefix (at least 4 digits) of a run ID.
func (s *Store) FindRun(hexPrefix string) (ID, error) {
	hexPrefix = strings.ToLower(hexPrefix)
	if len(hexPrefix) < 4 || strings.Trim(hexPrefix, "0123456789abcdef") != "" {
		return ID{}, fmt.Errorf("run %q: %w", hexPrefix, ErrNotFound)
	}
	if len(hexPrefix) == 64 {
		id, err := ParseID(hexPrefix)
		if err != nil {
			return ID{}, err
		}
		_, err = s.runInfo(id)
		return id, err
	}
	runs, err := s.Runs()
	if err != nil {
		return ID{}, err
	}
	var found []ID
	for _, id := range runs {
		if strings.HasPrefix(id.String(), hexPrefix) {
			found = append(found, id)
		}
	}
	switch len(found) {
	case 0:
		return ID{}, fmt.Errorf("run %s: %w", hexPrefix, ErrNotFound)
	case 1:
		return found[0], nil
	default:
		return ID{}, fmt.Errorf("run prefix %s matches %d runs: %w", hexPrefix, len(found), ErrAmbiguous)
	}
}

// wrapCorrupt marks pebble's own checksum failures as ErrCorrupt, so that
// callers see one kind of corruption whichever layer caught it.
func wrapCorrupt(err error) error {
	if pebble.IsCorruptionError(err) {
		// pebble's message runs over several lines; the first says it all.
		msg, _, _ := strings.Cut(err.Error(), "\n")
		return fmt.Errorf("%s: %w", msg, ErrCorrupt)
	}
	return err
}

func (s *Store) scan(prefix []byte, fn func(k, v []byte) error) error {
	it, err := s.db.NewIter(&pebble.IterOptions{LowerBound: prefix, UpperBound: prefixEnd(prefix)})
	if err != nil {
		return err
	}
	for it.First(); it.Valid(); it.Next() {
		v, err := it.ValueAndErr()
		if err != nil {
			it.Close()
			return wrapCorrupt(err)
		}
		if err := fn(it.Key(), v); err != nil {
			it.Close()
			return err
		}
	}
	if err := it.Error(); err != nil {
		it.Close()
		return wrapCorrupt(err)
	}
	return wrapCorrupt(it.Close())
}

// prefixEnd returns the smallest key greater than every key with prefix p.
func prefixEnd(p []byte) []byte {
	end := bytes.Clone(p)
	for i := len(end) - 1; i >= 0; i-- {
		if end[i] < 0xff {
			end[i]++
			return end[:i+1]
		}
	}
	return nil
}
