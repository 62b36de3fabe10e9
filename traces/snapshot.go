package traces

import (
	"errors"
	"fmt"
	"io"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"

	"github.com/cockroachdb/pebble/v2"
)

// Reading a store beside its writer (Options.ReadOnly).
//
// pebble locks its directory even to read it, and a writing bench holds the
// store's own lock (bench.lock) for as long as it runs: a recording keeps
// every other bench out for hours. So a read-only open reads a snapshot, a
// directory beside the database holding hard links to its tables (pebble
// never changes a table once written, and a link keeps a table the writer
// deletes meanwhile) and copies of the files pebble does change (the
// manifest, the logs, the options, the markers), which pebble opens
// read-only. The snapshot is consistent when the manifest did not change
// while it was made: every table the manifest names was linked before the
// writer could delete it, and every log it still needs was copied whole, or
// up to a record being written, which pebble's replay drops as it would
// after a crash. When the manifest changed (the writer flushed or compacted
// meanwhile), the snapshot is made again.
//
// The snapshot is removed on Close; one a killed process left is removed by
// the next open of the store (removeStaleSnapshots). Where the store's
// directory cannot be written, it goes to the temporary directory, copied.

const snapshotPrefix = ".snapshot-"

// snapshotAttempts bounds the snapshots made of a store its writer keeps
// changing.
const snapshotAttempts = 8

func openSnapshot(dir string, opts Options) (*Store, error) {
	removeStaleSnapshots(dir)
	src := filepath.Join(dir, dbDirName)
	if _, err := os.Stat(src); err != nil {
		// Only an interrupted repair's database is there (storeExists):
		// the next writer finishes the swap.
		return nil, fmt.Errorf("store %s: a repair was interrupted; run `bench traces repair` to finish it: %w", dir, err)
	}
	var last error
	for range snapshotAttempts {
		snap, ok, err := makeSnapshot(dir, src)
		if err != nil {
			return nil, fmt.Errorf("store %s: reading a snapshot: %w", dir, err)
		}
		if !ok {
			os.RemoveAll(snap)
			last = errors.New("its writer changed it while the snapshot was made")
			continue
		}
		db, err := pebble.Open(snap, pebbleOptions(true))
		if err != nil {
			os.RemoveAll(snap)
			last = wrapCorrupt(err)
			if pebble.IsCorruptionError(err) {
				break // the store's own files: the same again
			}
			continue
		}
		return &Store{dir: dir, db: db, opts: opts, snap: snap}, nil
	}
	return nil, fmt.Errorf("opening store %s read-only: %w", dir, last)
}

// makeSnapshot links and copies the database src into a new directory
// and reports whether the copy is consistent.
func makeSnapshot(dir, src string) (snap string, ok bool, err error) {
	snap, err = os.MkdirTemp(dir, fmt.Sprintf("%s%d-", snapshotPrefix, os.Getpid()))
	if err != nil {
		// A store the user may not write: copy it to the temporary
		// directory instead.
		if snap, err = os.MkdirTemp("", "bench-store-snapshot-"); err != nil {
			return "", false, err
		}
	}
	before, err := manifestState(src)
	if err != nil {
		return snap, false, err
	}
	ents, err := os.ReadDir(src)
	if err != nil {
		return snap, false, err
	}
	copied := map[string]int64{}
	for _, e := range ents {
		name := e.Name()
		from, to := filepath.Join(src, name), filepath.Join(snap, name)
		switch {
		case name == "LOCK" || !e.Type().IsRegular():
		case strings.HasSuffix(name, ".sst") || strings.HasSuffix(name, ".blob"):
			if err := os.Link(from, to); err != nil {
				if errors.Is(err, os.ErrNotExist) {
					return snap, false, nil // deleted meanwhile
				}
				if _, err := copyFile(from, to); err != nil {
					return snap, false, ignoreNotExist(err) // gone: try again
				}
			}
		default:
			n, err := copyFile(from, to)
			if err != nil {
				return snap, false, ignoreNotExist(err)
			}
			copied[name] = n
		}
	}
	after, err := manifestState(src)
	if err != nil {
		return snap, false, err
	}
	if !maps.Equal(before, after) {
		return snap, false, nil
	}
	// Every log but the newest was closed before the newest was made: one
	// that grew after it was copied lost records the newer holds the
	// sequel of.
	var logs []string
	for name := range copied {
		if strings.HasSuffix(name, ".log") {
			logs = append(logs, name)
		}
	}
	slices.Sort(logs)
	for i, name := range logs {
		if i == len(logs)-1 {
			break
		}
		if fi, err := os.Stat(filepath.Join(src, name)); err == nil && fi.Size() != copied[name] {
			return snap, false, nil
		}
	}
	return snap, true, nil
}

// manifestState is what changes when the writer edits its manifest: the
// manifests and markers there are, and the manifests' sizes.
func manifestState(src string) (map[string]int64, error) {
	ents, err := os.ReadDir(src)
	if err != nil {
		return nil, err
	}
	out := map[string]int64{}
	for _, e := range ents {
		name := e.Name()
		switch {
		case strings.HasPrefix(name, "marker."):
			out[name] = 0
		case strings.HasPrefix(name, "MANIFEST-"):
			fi, err := e.Info()
			if err != nil {
				return nil, ignoreNotExist(err)
			}
			out[name] = fi.Size()
		}
	}
	return out, nil
}

func ignoreNotExist(err error) error {
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	return err
}

// copyFile copies from to a new file to and returns the bytes copied.
func copyFile(from, to string) (int64, error) {
	in, err := os.Open(from)
	if err != nil {
		return 0, err
	}
	defer in.Close()
	out, err := os.OpenFile(to, os.O_CREATE|os.O_EXCL|os.O_WRONLY, privateFileMode)
	if err != nil {
		return 0, err
	}
	n, err := io.Copy(out, in)
	if cerr := out.Close(); err == nil {
		err = cerr
	}
	return n, err
}

// removeStaleSnapshots removes the snapshots of processes that are gone.
func removeStaleSnapshots(dir string) {
	ents, err := os.ReadDir(dir)
	if err != nil {
		return
	}
	for _, e := range ents {
		rest, ok := strings.CutPrefix(e.Name(), snapshotPrefix)
		if !ok || !e.IsDir() {
			continue
		}
		pidText, _, _ := strings.Cut(rest, "-")
		pid, err := strconv.Atoi(pidText)
		if err != nil || pid <= 0 || syscall.Kill(pid, 0) == syscall.ESRCH {
			os.RemoveAll(filepath.Join(dir, e.Name()))
		}
	}
}
