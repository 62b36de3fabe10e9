package traces

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/cockroachdb/pebble/v2"
	"github.com/cockroachdb/pebble/v2/vfs"
)

// Errors callers branch on.
var (
	// ErrNotFound is returned for a ref, run or blob the store does not hold.
	ErrNotFound = errors.New("not found")
	// ErrCorrupt is returned when stored bytes do not hash to their ID,
	// cannot be decoded, or cannot be read at all (pebble found a table or
	// log damaged). The error names what it concerns; Verify lists all
	// of it, Repair drops it.
	ErrCorrupt = errors.New("corrupt")
	// ErrLocked is wrapped by the error Open returns when another process
	// has the store open for writing (a *LockedError says which).
	ErrLocked = errors.New("store in use")
	// ErrNoStore is wrapped by the error Open returns, with
	// Options.MustExist or ReadOnly, for a directory that holds no store.
	ErrNoStore = errors.New("no store")
	// ErrReadOnly is returned by the writes of a store opened ReadOnly.
	ErrReadOnly = errors.New("the store is open read-only")
	// ErrAmbiguous is returned when a prefix names more than one run.
	ErrAmbiguous = errors.New("ambiguous")
)

// LockedError is the error of an Open refused because another process
// holds the store: the pid and command line it wrote beside its lock, when
// it could.
type LockedError struct {
	Dir     string
	PID     int    // 0 when unknown
	Command string // the holder's command line, shortened; "" when unknown
}

func (e *LockedError) Error() string {
	switch {
	case e.PID == 0:
		return fmt.Sprintf("store %s is in use by another process", e.Dir)
	case e.Command == "":
		return fmt.Sprintf("store %s is in use by pid %d", e.Dir, e.PID)
	}
	return fmt.Sprintf("store %s is in use by pid %d (%s)", e.Dir, e.PID, e.Command)
}

func (e *LockedError) Is(target error) bool { return target == ErrLocked }

type noStoreError struct{ dir string }

func (e *noStoreError) Error() string        { return "no store at " + e.dir }
func (e *noStoreError) Is(target error) bool { return target == ErrNoStore }

// Options configure a Store. A nil *Options means the defaults.
type Options struct {
	// CompressionLevel is the zstd level of PutRun: 1 fastest, 2 default,
	// 3 better, 4 best. Default 2.
	CompressionLevel int
	// NoSyncLevel is the zstd level of PutRunNoSync and PutRunNoSyncRead:
	// their runs (replays) can be recomputed. Default 1, and never above
	// CompressionLevel.
	NoSyncLevel int
	// Anchors is how many runs of a server and model are stored on their
	// own, as the dictionary of the first run of every other scenario (see
	// codec.go). Default 4.
	Anchors int
	// BaseCacheBytes bounds the documents of base runs kept in memory, as
	// dictionaries for reading and writing the runs stored against them.
	// Default 4 MiB.
	BaseCacheBytes int
	// MustExist refuses a directory that holds no store (an error wrapping
	// ErrNoStore) instead of creating one there.
	MustExist bool
	// ReadOnly opens the store for reading only, beside a process that has
	// it open for writing (a recording): the store is read from a snapshot
	// of its files (snapshot.go), as it was when Open returned, and writes
	// return ErrReadOnly. It implies MustExist, takes no lock, and
	// tolerates damage Open would refuse (Verify reports it).
	ReadOnly bool
}

func (o *Options) withDefaults() Options {
	var out Options
	if o != nil {
		out = *o
	}
	if out.CompressionLevel <= 0 {
		out.CompressionLevel = 2
	}
	if out.NoSyncLevel <= 0 {
		out.NoSyncLevel = 1
	}
	out.NoSyncLevel = min(out.NoSyncLevel, out.CompressionLevel)
	if out.Anchors <= 0 {
		out.Anchors = 4
	}
	if out.BaseCacheBytes <= 0 {
		out.BaseCacheBytes = 4 << 20
	}
	if out.ReadOnly {
		out.MustExist = true
	}
	return out
}

// Key layout. Every key starts with a short ASCII prefix (codec.go has the
// keys of the bases).
var (
	keyFormat = []byte("meta/format")
	prefixRun = []byte("run/") // + ID -> run record (codec.go)
	prefixRef = []byte("ref/") // + name -> ID
)

// StoreFormat is the version of the store's layout (meta/format). Format 1
// kept runs as trees of blobs; Migrate converts it.
const StoreFormat = 2

// ErrNeedsMigration is returned by Open for a store of an older layout.
var ErrNeedsMigration = errors.New("the store needs migrating")

// Store is a content-addressed trace store on disk. It is safe for
// concurrent use by one process; a second process cannot open it for
// writing, and may open it ReadOnly.
type Store struct {
	dir  string
	db   *pebble.DB
	lock *os.File
	opts Options
	// bufs are buffers for the documents putRun writes (stored.release).
	bufs bufferPool
	// known are the large values the store last wrote or read (tool
	// lists): checked or skipped again by comparison (known.go).
	known knownValues
	// snap is the directory of the snapshot a ReadOnly store reads, removed
	// on Close.
	snap string
	// fresh says Open created the store's database, and created is the
	// outermost directory it made for it ("" for none): what Abandon
	// removes.
	fresh   bool
	created string

	codec *codec
	// docSize is the size of the last run document stored: about the
	// size of the next (runs of a batch are alike).
	docSize atomic.Int64

	mu sync.Mutex
	// holes are the stretches of keys found unreadable so far: reads of
	// keys in them fail at once instead of reading the damage again.
	holes holeSet
	// damaged says why the store's metadata (its bases, families,
	// anchors, base counter) could not all be read; writes are refused.
	damaged error
}

// Open opens or creates the store in dir. A store of an older layout is
// refused with an error wrapping ErrNeedsMigration that says what to run;
// a store whose metadata cannot be read, with an error wrapping ErrCorrupt
// (unless ReadOnly: Verify and Repair say more).
func Open(dir string, o *Options) (*Store, error) {
	s, err := openRaw(dir, o)
	if err != nil {
		return nil, err
	}
	if err := s.checkFormat(); err != nil {
		s.Close()
		return nil, err
	}
	if s.codec, err = newCodec(s); err != nil {
		s.Close()
		return nil, err
	}
	if s.damaged != nil && !s.opts.ReadOnly {
		err := s.damaged
		s.Close()
		return nil, err
	}
	return s, nil
}

// Directories inside a store's: the pebble database, and the two a repair
// swaps in and keeps (repair.go).
const (
	dbDirName     = "db"
	repairDirName = "db.repair"
)

// storeExists reports whether dir holds a store: a pebble database, or the
// one an interrupted repair was about to swap in.
func storeExists(dir string) bool {
	for _, sub := range []string{dbDirName, repairDirName} {
		if desc, err := pebble.Peek(filepath.Join(dir, sub), vfs.Default); err == nil && desc.Exists {
			return true
		}
	}
	return false
}

// openRaw opens the store's database, whatever its format.
func openRaw(dir string, o *Options) (*Store, error) {
	opts := o.withDefaults()
	if opts.MustExist && !storeExists(dir) {
		return nil, &noStoreError{dir: dir}
	}
	if opts.ReadOnly {
		return openSnapshot(dir, opts)
	}
	created, err := mkdirPrivate(dir)
	if err != nil {
		return nil, fmt.Errorf("creating store %s: %w", dir, err)
	}
	lock, err := lockDir(dir)
	if err != nil {
		return nil, err
	}
	if err := finishSwap(dir); err != nil {
		lock.Close()
		return nil, err
	}
	removeStaleSnapshots(dir)
	if err := refuseLink(filepath.Join(dir, dbDirName)); err != nil {
		lock.Close()
		return nil, fmt.Errorf("opening store %s: %w", dir, err)
	}
	fresh := !storeExists(dir)
	db, err := pebble.Open(filepath.Join(dir, dbDirName), pebbleOptions(false))
	if err != nil {
		lock.Close()
		return nil, fmt.Errorf("opening store %s: %w", dir, wrapCorrupt(err))
	}
	return &Store{dir: dir, db: db, lock: lock, opts: opts, fresh: fresh, created: created}, nil
}

// pebbleOptions are the pebble options of every store database.
func pebbleOptions(readOnly bool) *pebble.Options {
	popts := &pebble.Options{
		// A small memtable keeps the write-ahead log (and the log files
		// pebble recycles) small: runs are written once and read many times.
		MemTableSize: 16 << 10,
		// Runs are read once each, and the bases they need are cached
		// decompressed (Options.BaseCacheBytes): pebble's own block cache
		// (8 MiB by default) would only hold memory that grows with the
		// store for nothing.
		CacheSize:          1 << 20,
		Logger:             quietLogger{},
		FS:                 privateFS{vfs.Default},
		FormatMajorVersion: pebble.FormatNewest,
		ReadOnly:           readOnly,
		// Corruption is reported to the caller as ErrCorrupt by every read
		// that meets it; pebble's default listener would abort the process.
		EventListener: &pebble.EventListener{
			DataCorruption:  func(pebble.DataCorruptionInfo) {},
			BackgroundError: func(error) {},
		},
	}
	// Runs are zstd-compressed already; pebble's block compression would
	// spend CPU for nothing.
	popts.ApplyCompressionSettings(func() pebble.DBCompressionSettings { return pebble.DBCompressionNone })
	// 16 KiB blocks: less index overhead than pebble's 4 KiB for our small
	// values. Larger blocks save little more, and make pebble's search for a
	// single flipped bit, which it runs on every checksum failure, slow.
	for i := range popts.Levels {
		popts.Levels[i].BlockSize = 16 << 10
	}
	return popts
}

// lockFileName is the file a writing process holds a flock on; it writes
// its pid and command line in it, for the message of the next one.
const lockFileName = "bench.lock"

func lockDir(dir string) (*os.File, error) {
	// The lock file is truncated and written: never through a link
	// planted in its place.
	name := filepath.Join(dir, lockFileName)
	if err := unplant(name); err != nil {
		return nil, fmt.Errorf("opening store %s: %w", dir, err)
	}
	f, err := os.OpenFile(name, os.O_CREATE|os.O_RDWR|syscall.O_NOFOLLOW, privateFileMode)
	if err != nil {
		return nil, fmt.Errorf("opening store %s: %w", dir, err)
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		defer f.Close()
		if errors.Is(err, syscall.EWOULDBLOCK) {
			return nil, lockHolder(dir, f)
		}
		return nil, fmt.Errorf("locking store %s: %w", dir, err)
	}
	// Who holds it, for the message of a process it keeps out. A failure
	// to write it only makes that message vaguer.
	if f.Truncate(0) == nil {
		fmt.Fprintf(f, "pid %d\n%s\n", os.Getpid(), commandLine())
	}
	return f, nil
}

// lockHolder reads what the holder of the lock wrote in it.
func lockHolder(dir string, f *os.File) *LockedError {
	e := &LockedError{Dir: dir}
	b, err := io.ReadAll(io.LimitReader(f, 4096))
	if err != nil {
		return e
	}
	first, rest, _ := strings.Cut(string(b), "\n")
	if pid, err := strconv.Atoi(strings.TrimPrefix(first, "pid ")); err == nil && pid > 0 {
		e.PID = pid
		e.Command = strings.TrimSpace(rest)
	}
	return e
}

// commandLine is this process's command line, its program named by base
// name and the whole cut to a line.
func commandLine() string {
	if len(os.Args) == 0 {
		return ""
	}
	args := append([]string{filepath.Base(os.Args[0])}, os.Args[1:]...)
	line := strings.Join(args, " ")
	line = strings.Map(func(r rune) rune {
		if r == '\n' || r == '\r' {
			return ' '
		}
		return r
	}, line)
	if len(line) > 200 {
		line = line[:197] + "..."
	}
	return line
}

func (s *Store) checkFormat() error {
	v, err := s.format()
	switch {
	case errors.Is(err, ErrNotFound) && s.opts.ReadOnly:
		return nil // a store nothing was written to yet
	case errors.Is(err, ErrNotFound):
		return s.db.Set(keyFormat, []byte(strconv.Itoa(StoreFormat)), pebble.Sync)
	case err != nil:
		if s.opts.ReadOnly && errors.Is(err, ErrCorrupt) {
			return nil // Verify reports it
		}
		return err
	case v == "1":
		return fmt.Errorf("store %s has store format 1; this bench reads format %d: run `bench --store %s traces migrate` once (it keeps every run, ref and run ID): %w",
			s.dir, StoreFormat, s.dir, ErrNeedsMigration)
	case v != strconv.Itoa(StoreFormat):
		return fmt.Errorf("store %s has store format %q; this bench reads format %d", s.dir, v, StoreFormat)
	}
	return nil
}

// format returns meta/format.
func (s *Store) format() (string, error) {
	v, closer, err := s.db.Get(keyFormat)
	if errors.Is(err, pebble.ErrNotFound) {
		return "", ErrNotFound
	}
	if err != nil {
		return "", fmt.Errorf("store %s: reading its format: %w", s.dir, wrapCorrupt(err))
	}
	defer closer.Close()
	return string(v), nil
}

// Dir returns the store's directory.
func (s *Store) Dir() string { return s.dir }

// writable returns the error of a write to a store that takes none.
func (s *Store) writable() error {
	switch {
	case s.opts.ReadOnly:
		return fmt.Errorf("store %s: %w", s.dir, ErrReadOnly)
	case s.damaged != nil:
		return s.damaged
	}
	return nil
}

// Close releases the store. Calling it again does nothing.
func (s *Store) Close() error {
	var err error
	if s.codec != nil {
		s.codec.close()
		s.codec = nil
	}
	if s.db != nil {
		err = s.db.Close()
		s.db = nil
	}
	if s.lock != nil {
		s.lock.Truncate(0) // no longer the holder
		s.lock.Close()
		s.lock = nil
	}
	if s.snap != "" {
		os.RemoveAll(s.snap)
		s.snap = ""
	}
	return err
}

type quietLogger struct{}

func (quietLogger) Infof(string, ...any)  {}
func (quietLogger) Errorf(string, ...any) {}
func (quietLogger) Fatalf(format string, args ...any) {
	panic(fmt.Sprintf("pebble: "+format, args...))
}

func runKey(id ID) []byte       { return append(slices.Clip(prefixRun), id[:]...) }
func refKey(name string) []byte { return append(slices.Clip(prefixRef), name...) }

// maxRefName bounds the length of a ref name.
const maxRefName = 512

// ValidateRefName checks a ref name: slash-separated segments of letters,
// digits and . _ - : @ + =, none empty, "." or "..".
func ValidateRefName(name string) error {
	if name == "" || len(name) > maxRefName {
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

// JudgeRefPrefix is the first segment of the refs of judgements (runs
// whose Manifest.Grades is set): judge/<judge model>/<the graded run's
// ref>. Commands that take every run of a store leave them out: they are
// no agent's runs.
const JudgeRefPrefix = "judge/"

// JudgeRef is the ref of the judgement of the run ref names by the judge
// model.
func JudgeRef(model, ref string) string {
	clean := strings.Map(func(r rune) rune {
		if r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || strings.ContainsRune("._-:@+=", r) {
			return r
		}
		return '_'
	}, model)
	return JudgeRefPrefix + clean + "/" + ref
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

// PutRun stores run and points refs at it, atomically: its record, any
// base it becomes and its refs are written in one synced batch. It returns
// the run's ID and sets run.Manifest.RunID. A run whose content is stored
// already keeps the record it has (its start time and stderr).
func (s *Store) PutRun(run *Run, refs ...string) (ID, error) {
	st, err := s.putRun(run, refs, pebble.Sync, s.opts.CompressionLevel)
	s.release(&st)
	return st.id, err
}

// PutRunUnsynced is PutRun (the same compression) without waiting for the
// disk: the run is written in one atomic batch, so a crash loses it whole
// or keeps it whole, but may lose it, until Sync (or a later PutRun)
// makes it durable. A recording writes its runs so and syncs them in
// groups, saying a run is recorded only once a sync has covered it.
func (s *Store) PutRunUnsynced(run *Run, refs ...string) (ID, error) {
	st, err := s.putRun(run, refs, pebble.NoSync, s.opts.CompressionLevel)
	s.release(&st)
	return st.id, err
}

// PutRunNoSync is PutRun without waiting for the disk: the run is written
// in one atomic batch like any other, so a crash loses it whole or keeps it
// whole, but may lose it. For runs that can be recomputed, such as replays;
// Sync (or a later PutRun) makes every earlier write durable.
func (s *Store) PutRunNoSync(run *Run, refs ...string) (ID, error) {
	st, err := s.putRun(run, refs, pebble.NoSync, s.opts.NoSyncLevel)
	s.release(&st)
	return st.id, err
}

// PutRunNoSyncRead is PutRunNoSync that also returns the run as GetRun
// would read it back (canonical payloads, RunID and StartedAt set) without
// reading it: it decodes the canonical document it stored.
func (s *Store) PutRunNoSyncRead(run *Run, refs ...string) (*Run, error) {
	st, err := s.putRun(run, refs, pebble.NoSync, s.opts.NoSyncLevel)
	if err != nil {
		return nil, err
	}
	id := st.id
	if st.same {
		// Every payload was canonical already: the run is what a read
		// would return, and need not be decoded again.
		s.release(&st)
		out := &Run{Manifest: run.Manifest, Events: slices.Clone(run.Events)}
		out.Manifest.RunID = id
		out.Manifest.StartedAt = run.Manifest.StartedAt.UTC()
		if run.Manifest.StartedAt.IsZero() {
			out.Manifest.StartedAt = time.Time{}
		}
		return out, nil
	}
	var out Run
	if err := decodeCanonical(st.doc, &out, &s.known); err != nil {
		return nil, fmt.Errorf("run %s: decoding: %w", id, err)
	}
	out.Manifest.RunID = id
	if !run.Manifest.StartedAt.IsZero() {
		out.Manifest.StartedAt = run.Manifest.StartedAt.UTC()
	}
	if err := out.setSide(st.side); err != nil {
		return nil, fmt.Errorf("run %s: %w", id, err)
	}
	return &out, nil
}

// Sync makes every write so far durable.
func (s *Store) Sync() error {
	return s.db.LogData(nil, pebble.Sync)
}

// stored is what putRun wrote of a run: its ID, its document and side, and
// whether the two decode to the run as it is.
type stored struct {
	id        ID
	doc, side []byte
	same      bool
	// scratch is the buffer of doc and side when nothing else holds it
	// (the run did not become a base): Store.release recycles it.
	scratch []byte
}

// putRun stores run.
func (s *Store) putRun(run *Run, refs []string, sync *pebble.WriteOptions, level int) (stored, error) {
	if err := s.writable(); err != nil {
		return stored{}, err
	}
	for _, r := range refs {
		if err := ValidateRefName(r); err != nil {
			return stored{}, err
		}
	}
	side, sideSame, sideErr := run.side()
	// The document is written into a buffer with room for what is kept
	// beside it, so that the plaintext is not a copy of the two.
	buf := s.bufs.get(int(s.docSize.Load())*5/4 + len(side))
	doc, same, err := run.documentAs(buf, &s.known)
	if err != nil {
		return stored{}, err
	}
	if sideErr != nil {
		return stored{}, sideErr
	}
	s.docSize.Store(int64(len(doc)))
	same = same && sideSame
	var startedAt time.Time
	if !run.Manifest.StartedAt.IsZero() {
		startedAt = run.Manifest.StartedAt.UTC()
	}
	plain := doc
	if len(side) > 0 {
		plain = append(doc, side...)
	}
	tx := s.codec.begin(level)
	defer tx.abort()
	id, err := tx.put(plain, len(doc), familyOf(&run.Manifest), startedAt, refs)
	if err != nil {
		return stored{}, fmt.Errorf("storing run: %w", err)
	}
	kept := len(tx.plains) > 0 // the run became a base: the codec keeps plain
	if err := tx.commit(sync); err != nil {
		return stored{}, fmt.Errorf("storing run: %w", err)
	}
	run.Manifest.RunID = id
	st := stored{id: id, doc: doc, side: side, same: same}
	if !kept {
		st.scratch = plain
	}
	return st, nil
}

// release gives the buffer of what putRun wrote back for the next put,
// once nothing holds the document: a replay stores thousands of runs the
// store has already, and writing each into a new buffer made a fifth of
// what it allocated.
func (s *Store) release(st *stored) {
	if st.scratch != nil {
		s.bufs.put(st.scratch)
		st.scratch, st.doc = nil, nil
	}
}

// bufferPool is a sync.Pool of byte buffers, within a bound on the size of
// one.
type bufferPool struct{ p sync.Pool }

func (b *bufferPool) get(n int) []byte {
	if p, ok := b.p.Get().(*[]byte); ok && cap(*p) >= n {
		return (*p)[:0]
	}
	return make([]byte, 0, max(4096, n))
}

func (b *bufferPool) put(buf []byte) {
	if cap(buf) <= 4<<20 {
		buf = buf[:0]
		b.p.Put(&buf)
	}
}

// GetRun loads the run with the given ID, verified: its document hashes
// to id.
func (s *Store) GetRun(id ID) (*Run, error) {
	doc, info, err := s.codec.document(id)
	if err != nil {
		return nil, fmt.Errorf("loading run %s: %w", id.Short(), err)
	}
	run, err := decodeRun(doc, info, &s.known)
	var fe formatError
	switch {
	case errors.As(err, &fe):
		return nil, fmt.Errorf("run %s %v", id.Short(), err)
	case err != nil:
		return nil, fmt.Errorf("run %s: %v: %w", id.Short(), err, ErrCorrupt)
	}
	run.Manifest.RunID = id
	return run, nil
}

// formatError is the error of a run document of another trace format.
type formatError int

func (f formatError) Error() string {
	return fmt.Sprintf("has trace format %d; this bench reads format %d", int(f), FormatVersion)
}

// decodeRun decodes a run's verified document and what is kept beside
// it, as GetRun returns them (but for the run's ID). Import checks every
// run of a pack with it, so that what it stores can be read back. known
// (nil: none) are values read before.
func decodeRun(doc []byte, info runInfo, known *knownValues) (*Run, error) {
	var run Run
	if err := decodeCanonical(doc, &run, known); err != nil {
		return nil, fmt.Errorf("decoding: %v", err)
	}
	if run.Manifest.Format != FormatVersion {
		return nil, formatError(run.Manifest.Format)
	}
	run.Manifest.StartedAt = info.StartedAt
	if err := run.setSide(info.Side); err != nil {
		return nil, fmt.Errorf("what is kept beside it: %v", err)
	}
	return &run, nil
}

// hasRun reports whether the store holds a record for id.
func (s *Store) hasRun(id ID) (bool, error) {
	_, closer, err := s.get(runKey(id))
	if errors.Is(err, pebble.ErrNotFound) {
		return false, nil
	}
	if err != nil {
		return false, err
	}
	closer.Close()
	return true, nil
}

// CheckRef reports whether the run ref name points to can be read: nil
// when there is no such ref or its run reads whole (decompressed against
// its bases, hashed); else an error wrapping ErrCorrupt that says what
// cannot be read (the ref, its run, a base of it) or is missing. A resumed
// recording checks the refs it would skip with it: a ref whose run cannot
// be read is damage to repair, not a run recorded.
func (s *Store) CheckRef(name string) error {
	id, err := s.Ref(name)
	switch {
	case errors.Is(err, ErrNotFound):
		return nil
	case err != nil:
		return err
	}
	if _, _, err := s.codec.plain(id, 0); err != nil {
		if !errors.Is(err, ErrCorrupt) {
			err = fmt.Errorf("%w: %w", err, ErrCorrupt)
		}
		return fmt.Errorf("ref %s: %w", name, err)
	}
	return nil
}

// CheckRecords is CheckRef without decompressing, for each of names in
// turn: it reports whether the records of the run a ref points to and of
// the bases it is stored against can be read from the store, which is what
// damage to the store's files breaks; content that does not hash to its ID
// is found when the run is read. A run or base shared by several of names
// is read once. It costs a few microseconds a run, where CheckRef costs a
// read. The error names the first damaged ref.
func (s *Store) CheckRecords(names ...string) error {
	checked := map[ID]bool{}
	for _, name := range names {
		id, err := s.Ref(name)
		switch {
		case errors.Is(err, ErrNotFound):
			continue
		case err != nil:
			return err
		}
		if err := s.checkRun(Ref{Name: name, Run: id}, checked); err != nil {
			return err
		}
	}
	return nil
}

// CheckRunRecords is CheckRecords of refs already read (Refs): the runs
// they point to are checked, the refs are not read again.
func (s *Store) CheckRunRecords(refs ...Ref) error {
	checked := map[ID]bool{}
	for _, r := range refs {
		if err := s.checkRun(r, checked); err != nil {
			return err
		}
	}
	return nil
}

// checkRun checks the records of r's run, skipping those in checked.
func (s *Store) checkRun(r Ref, checked map[ID]bool) error {
	if err := s.codec.records(r.Run, 0, checked); err != nil {
		if !errors.Is(err, ErrCorrupt) {
			err = fmt.Errorf("%w: %w", err, ErrCorrupt)
		}
		return fmt.Errorf("ref %s: %w", r.Name, err)
	}
	return nil
}

// Ref is a named pointer to a run.
type Ref struct {
	Name string `json:"name"`
	Run  ID     `json:"run"`
}

// Ref returns the run a ref points to.
func (s *Store) Ref(name string) (ID, error) {
	v, closer, err := s.get(refKey(name))
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
	if err := s.writable(); err != nil {
		return err
	}
	if err := ValidateRefName(name); err != nil {
		return err
	}
	if ok, err := s.hasRun(id); err != nil || !ok {
		if err == nil {
			err = fmt.Errorf("run %s: %w", id, ErrNotFound)
		}
		return err
	}
	return s.db.Set(refKey(name), id[:], pebble.Sync)
}

// DeleteRef removes a ref; the run stays until GC.
func (s *Store) DeleteRef(name string) error {
	if err := s.writable(); err != nil {
		return err
	}
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
		ok, err := s.hasRun(id)
		if err == nil && !ok {
			err = fmt.Errorf("run %s: %w", id, ErrNotFound)
		}
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

// wrapCorrupt marks pebble's own corruption errors as ErrCorrupt, so that
// callers see one kind of corruption whichever layer caught it.
func wrapCorrupt(err error) error {
	if err != nil && pebble.IsCorruptionError(err) && !errors.Is(err, ErrCorrupt) {
		// pebble's message runs over several lines (the last a placeholder,
		// "<corruption detail carrier>"); the first says it all.
		return fmt.Errorf("%s: %w", firstLine(err), ErrCorrupt)
	}
	return err
}

// get reads key from the database: a key in a hole found before fails at
// once, and a key pebble cannot read becomes a hole of its own.
func (s *Store) get(key []byte) ([]byte, io.Closer, error) {
	s.mu.Lock()
	h, ok := s.holes.find(key)
	s.mu.Unlock()
	if ok {
		return nil, nil, fmt.Errorf("%s cannot be read: %w", describeKey(key), h.err)
	}
	v, closer, err := s.db.Get(key)
	if err != nil && !errors.Is(err, pebble.ErrNotFound) {
		err = s.readErr(key, err)
	}
	return v, closer, err
}

// readErr is the error of a read of key that failed with err; pebble's
// corruption is kept as a hole of that key.
func (s *Store) readErr(key []byte, err error) error {
	if !pebble.IsCorruptionError(err) {
		return err
	}
	msg := firstLine(err)
	err = wrapCorrupt(err)
	s.addHoles([]hole{{key: bytes.Clone(key), err: err, msg: msg}})
	return fmt.Errorf("%s cannot be read: %w", describeKey(key), err)
}

func (s *Store) addHoles(hs []hole) {
	if len(hs) == 0 {
		return
	}
	s.mu.Lock()
	s.holes = append(s.holes, hs...)
	s.mu.Unlock()
}

// scanAll calls fn for every key in [lower, upper) that can be read, past
// any damage (tolerant.go), and returns and keeps the holes it met.
func (s *Store) scanAll(lower, upper []byte, hints [][]byte, fn func(k, v []byte) error) ([]hole, error) {
	it, err := s.db.NewIter(&pebble.IterOptions{LowerBound: lower, UpperBound: upper})
	if err != nil {
		return nil, err
	}
	holes, err := scanTolerant(it, lower, upper, hints, fn)
	if cerr := it.Close(); err == nil && cerr != nil && !pebble.IsCorruptionError(cerr) {
		err = cerr
	}
	s.addHoles(holes)
	return holes, err
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

// Opening is a store being opened in the background (OpenAhead), for a
// command that has other start-up work to do meanwhile.
type Opening struct {
	done  chan struct{}
	s     *Store
	err   error
	taken bool
}

// OpenAhead starts Open(dir, o) in the background. The caller takes the
// store with Wait, or lets Close release it.
func OpenAhead(dir string, o *Options) *Opening {
	op := &Opening{done: make(chan struct{})}
	go func() {
		defer close(op.done)
		op.s, op.err = Open(dir, o)
	}()
	return op
}

// Wait returns what Open returned; the store is then the caller's to
// close.
func (op *Opening) Wait() (*Store, error) {
	<-op.done
	op.taken = true
	return op.s, op.err
}

// Close waits for the open and closes the store unless Wait handed it
// out: a caller that returns early defers it.
func (op *Opening) Close() {
	<-op.done
	if !op.taken && op.s != nil {
		op.s.Close()
	}
}
