package traces

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"github.com/cockroachdb/pebble/v2"
)

// Repairing a damaged store (restic's `repair` is the model: drop what
// cannot be read, say exactly what was dropped, keep everything else).
//
// Repair reads the store as Verify does, past damage, and decides what to
// drop: every run that cannot be read (its record is damaged, or a base it
// is stored against), every ref that points at such a run or at a run the
// store lacks, every base whose run is dropped, and the families and anchor
// entries that name such a base. What pebble could not read at all (a
// damaged block of a table) is gone already; Repair names the keys around
// it. It then writes every key it keeps into a fresh database beside the
// store's (db.repair), and swaps it in: the damaged database is renamed
// db.damaged.N (kept, for the user to delete), the fresh one renamed db. A
// repair killed before the first rename leaves the store as it was (the
// next open removes db.repair); killed between the two, the next open
// finishes the second. A resumed recording then records exactly the refs
// dropped (and those lost), as if they had never been recorded.
//
// A log pebble refuses to replay (a log that is not the newest, cut short;
// a chunk that fails its checksum) stops pebble from opening the store at
// all. Repair then opens a copy of the database whose log is cut where
// pebble stopped reading it: the writes after that point are lost (the
// report says so) and the rest is repaired as above.

const (
	salvageDirName = "db.salvage"
	backupPrefix   = "db.damaged."
)

// RepairReport says what Repair found, dropped and kept.
type RepairReport struct {
	// Damage is what the store's verification found.
	Damage *VerifyReport `json:"damage"`
	// DroppedRuns are the runs dropped, each with why it cannot be read;
	// DroppedRefs the refs dropped, with the runs they pointed at.
	DroppedRuns []DroppedRun `json:"dropped_runs"`
	DroppedRefs []DroppedRef `json:"dropped_refs"`
	// DroppedBases are the base numbers dropped; DroppedKeys, the other
	// keys (families, anchor lists, malformed keys), described.
	DroppedBases []uint64 `json:"dropped_bases"`
	DroppedKeys  []string `json:"dropped_keys"`
	// Lost describes the stretches of keys pebble could not read: gone.
	Lost []string `json:"lost"`
	// Salvaged describes the logs pebble could not replay, and where they
	// were cut.
	Salvaged []string `json:"salvaged"`
	// KeptRuns and KeptRefs count what the repaired store holds.
	KeptRuns int `json:"kept_runs"`
	KeptRefs int `json:"kept_refs"`
	// Backup is the damaged database, kept beside the repaired one; empty
	// when nothing was changed.
	Backup string `json:"backup,omitempty"`
	DryRun bool   `json:"dry_run"`
}

// Changed reports whether the repair dropped or cut anything (or, dry, would).
func (r *RepairReport) Changed() bool {
	return !r.Damage.OK() || len(r.Salvaged) > 0
}

// DroppedRun is a run Repair dropped.
type DroppedRun struct {
	Run   ID     `json:"run"`
	Cause string `json:"cause"`
}

// DroppedRef is a ref Repair dropped.
type DroppedRef struct {
	Name  string `json:"name"`
	Run   ID     `json:"run"`
	Cause string `json:"cause"` // "cannot be read" or "missing"
}

// Repair drops from the store in dir what cannot be read, and what needs
// it, keeping everything else (see above); with dryRun it only says what it
// would drop. It needs the store to itself: a store in use is refused with
// an error wrapping ErrLocked.
func Repair(ctx context.Context, dir string, o *Options, dryRun bool) (*RepairReport, error) {
	opts := o.withDefaults()
	opts.ReadOnly = false
	if !storeExists(dir) {
		return nil, &noStoreError{dir: dir}
	}
	lock, err := lockDir(dir)
	if err != nil {
		return nil, err
	}
	defer func() {
		lock.Truncate(0)
		lock.Close()
	}()
	if err := finishSwap(dir); err != nil {
		return nil, err
	}
	removeStaleSnapshots(dir)
	src := filepath.Join(dir, dbDirName)
	scratch := filepath.Join(dir, salvageDirName)
	defer os.RemoveAll(scratch)
	db, salvaged, err := openSalvaging(dir, src, scratch)
	if err != nil {
		return nil, err
	}
	s := &Store{dir: dir, db: db, opts: opts}
	defer s.Close()
	if v, err := s.format(); err == nil && v != strconv.Itoa(StoreFormat) {
		// A store of another layout is not damaged: its keys would be.
		return nil, fmt.Errorf("store %s has store format %q; repair reads format %d only (a store of format 1: run `bench --store %s traces migrate` first)",
			dir, v, StoreFormat, dir)
	}
	if s.codec, err = newCodec(s); err != nil {
		return nil, err
	}
	rep, err := s.verify(ctx, true)
	if err != nil {
		return nil, err
	}
	out := &RepairReport{Damage: rep, Salvaged: salvaged, DryRun: dryRun}
	changes := planRepair(rep, out)
	if !out.Changed() || dryRun {
		return out, nil
	}
	fresh := filepath.Join(dir, repairDirName)
	if err := os.RemoveAll(fresh); err != nil {
		return nil, err
	}
	if err := s.copyInto(ctx, fresh, rep.survey.kept, changes); err != nil {
		os.RemoveAll(fresh)
		return nil, fmt.Errorf("repairing store %s: writing the repaired database: %w", dir, err)
	}
	s.Close()
	backup, err := nextBackup(dir)
	if err != nil {
		return nil, err
	}
	if err := os.Rename(src, backup); err != nil {
		return nil, fmt.Errorf("repairing store %s: %w", dir, err)
	}
	if err := os.Rename(fresh, src); err != nil {
		return nil, fmt.Errorf("repairing store %s: %w (the next open of the store finishes the swap)", dir, err)
	}
	if err := syncDir(dir); err != nil {
		return nil, err
	}
	out.Backup = backup
	return out, nil
}

// planRepair fills in what out drops and returns the changes to make, by
// key: nil to drop the key, else its new value.
func planRepair(rep *VerifyReport, out *RepairReport) map[string][]byte {
	sv := rep.survey
	changes := map[string][]byte{}
	listed := make(map[ID]bool, len(sv.runs))
	for _, id := range sv.runs {
		listed[id] = true
	}
	for _, id := range rep.UnreadableRuns {
		out.DroppedRuns = append(out.DroppedRuns, DroppedRun{Run: id, Cause: rep.runCause[id]})
		if listed[id] {
			changes[string(runKey(id))] = nil
		}
	}
	for _, r := range rep.brokenRefs {
		cause := "cannot be read"
		if rep.runCause[r.Run] == "" {
			cause = "missing"
		}
		out.DroppedRefs = append(out.DroppedRefs, DroppedRef{Name: r.Name, Run: r.Run, Cause: cause})
		changes[string(refKey(r.Name))] = nil
	}
	kept := map[uint64]bool{}
	for seq, id := range sv.bases {
		if listed[id] && rep.runCause[id] == "" {
			kept[seq] = true
			continue
		}
		out.DroppedBases = append(out.DroppedBases, seq)
		changes[string(baseKey(seq))] = nil
	}
	slices.Sort(out.DroppedBases)
	for k, seq := range sv.fams {
		if !kept[seq] {
			changes[k] = nil
			out.DroppedKeys = append(out.DroppedKeys, fmt.Sprintf("family %s (its base %d)", strings.TrimPrefix(describeKey([]byte(k)), string(prefixFamily)), seq))
		}
	}
	for k, seqs := range sv.anchors {
		keep := slices.DeleteFunc(slices.Clone(seqs), func(seq uint64) bool { return !kept[seq] })
		switch {
		case len(keep) == len(seqs):
			continue
		case len(keep) == 0:
			changes[k] = nil
		default:
			changes[k] = appendUvarints(nil, keep)
		}
		out.DroppedKeys = append(out.DroppedKeys, fmt.Sprintf("from the anchors of %s: bases %v (keeping %v)", strings.TrimPrefix(describeKey([]byte(k)), string(prefixAnchor)), without(seqs, keep), keep))
	}
	for _, k := range sv.malformed {
		changes[string(k)] = nil
		out.DroppedKeys = append(out.DroppedKeys, "malformed "+describeKey(k))
	}
	slices.Sort(out.DroppedKeys)
	for _, h := range sv.holes {
		out.Lost = append(out.Lost, h.String())
	}
	// The base counter never goes back: no base number anything ever named
	// is given again.
	changes[string(keySeq)] = binary.AppendUvarint(nil, max(sv.seq, sv.maxSeqSeen))
	changes[string(keyFormat)] = []byte(strconv.Itoa(StoreFormat))
	out.KeptRuns = len(sv.runs)
	for _, id := range sv.runs {
		if rep.runCause[id] != "" {
			out.KeptRuns--
		}
	}
	out.KeptRefs = len(sv.refs) - len(rep.brokenRefs)
	return changes
}

func without(all, keep []uint64) []uint64 {
	return slices.DeleteFunc(slices.Clone(all), func(x uint64) bool { return slices.Contains(keep, x) })
}

// copyInto writes every key of keys (sorted) into a fresh database at dir,
// with changes applied, and the changed keys keys lacks.
func (s *Store) copyInto(ctx context.Context, dir string, keys [][]byte, changes map[string][]byte) error {
	db, err := pebble.Open(dir, pebbleOptions(false))
	if err != nil {
		return err
	}
	open := true
	defer func() {
		if open {
			db.Close()
		}
	}()
	b := db.NewBatch()
	flush := func(force bool) error {
		if b.Len() < 4<<20 && !force {
			return nil
		}
		if err := b.Commit(pebble.NoSync); err != nil {
			return err
		}
		b.Close()
		b = db.NewBatch()
		return nil
	}
	done := map[string]bool{}
	for _, k := range keys {
		if err := ctx.Err(); err != nil {
			return err
		}
		if v, ok := changes[string(k)]; ok {
			done[string(k)] = true
			if v != nil {
				if err := b.Set(k, v, nil); err != nil {
					return err
				}
			}
			continue
		}
		v, closer, err := s.get(k)
		if err != nil {
			return fmt.Errorf("%s: %w", describeKey(k), err)
		}
		err = b.Set(k, v, nil)
		closer.Close()
		if err != nil {
			return err
		}
		if err := flush(false); err != nil {
			return err
		}
	}
	for k, v := range changes {
		if !done[k] && v != nil {
			if err := b.Set([]byte(k), v, nil); err != nil {
				return err
			}
		}
	}
	if err := b.Commit(pebble.Sync); err != nil {
		return err
	}
	b.Close()
	if err := db.Flush(); err != nil {
		return err
	}
	open = false
	return db.Close()
}

// finishSwap completes a repair interrupted between its two renames, and
// removes the database of one interrupted before them.
func finishSwap(dir string) error {
	db, fresh := filepath.Join(dir, dbDirName), filepath.Join(dir, repairDirName)
	if _, err := os.Stat(fresh); errors.Is(err, os.ErrNotExist) {
		return nil
	}
	if _, err := os.Stat(db); errors.Is(err, os.ErrNotExist) {
		// The damaged database was moved aside; the repaired one was
		// complete before that.
		if err := os.Rename(fresh, db); err != nil {
			return fmt.Errorf("store %s: finishing an interrupted repair: %w", dir, err)
		}
		return syncDir(dir)
	}
	return os.RemoveAll(fresh)
}

// nextBackup is the name the damaged database is kept under.
func nextBackup(dir string) (string, error) {
	ents, err := os.ReadDir(dir)
	if err != nil {
		return "", err
	}
	n := 0
	for _, e := range ents {
		if rest, ok := strings.CutPrefix(e.Name(), backupPrefix); ok {
			if i, err := strconv.Atoi(rest); err == nil {
				n = max(n, i)
			}
		}
	}
	return filepath.Join(dir, backupPrefix+strconv.Itoa(n+1)), nil
}

func syncDir(dir string) error {
	f, err := os.Open(dir)
	if err != nil {
		return err
	}
	defer f.Close()
	return f.Sync()
}

// walOffset finds, in the detail of pebble's error for a log it could not
// replay, the log file and the offset of the record it stopped at.
var walOffset = regexp.MustCompile(`replaying wal \d+, offset \(([^()]+): (\d+)\)`)

// openSalvaging opens the database src; one whose log pebble cannot replay
// is copied to scratch with the log cut where pebble stopped, and that copy
// opened instead.
func openSalvaging(dir, src, scratch string) (*pebble.DB, []string, error) {
	db, err := pebble.Open(src, pebbleOptions(false))
	if err == nil {
		return db, nil, nil
	}
	if !pebble.IsCorruptionError(err) {
		return nil, nil, fmt.Errorf("opening store %s: %w", dir, err)
	}
	if err := os.RemoveAll(scratch); err != nil {
		return nil, nil, err
	}
	if err := copyDB(src, scratch); err != nil {
		return nil, nil, fmt.Errorf("repairing store %s: copying its database: %w", dir, err)
	}
	var salvaged []string
	for range 16 {
		m := walOffset.FindStringSubmatch(fmt.Sprintf("%+v", err))
		if m == nil {
			return nil, salvaged, fmt.Errorf("opening store %s: %w (bench cannot repair this: only a damaged log, by cutting it)", dir, wrapCorrupt(err))
		}
		name := filepath.Base(m[1])
		off, _ := strconv.ParseInt(m[2], 10, 64)
		path := filepath.Join(scratch, name)
		fi, serr := os.Stat(path)
		if serr != nil || off >= fi.Size() {
			return nil, salvaged, fmt.Errorf("opening store %s: %w", dir, wrapCorrupt(err))
		}
		if err := os.Truncate(path, off); err != nil {
			return nil, salvaged, err
		}
		salvaged = append(salvaged, fmt.Sprintf("log %s: cut at byte %d of %d, where pebble stopped reading it (%s): the writes after it are lost",
			name, off, fi.Size(), firstLine(err)))
		if db, err = pebble.Open(scratch, pebbleOptions(false)); err == nil {
			return db, salvaged, nil
		}
		if !pebble.IsCorruptionError(err) {
			return nil, salvaged, fmt.Errorf("opening store %s: %w", dir, err)
		}
	}
	return nil, salvaged, fmt.Errorf("opening store %s: %w", dir, wrapCorrupt(err))
}

// copyDB makes dst a copy of the database src that pebble may write:
// tables linked (pebble never writes them), everything else copied.
func copyDB(src, dst string) error {
	if err := os.Mkdir(dst, privateDirMode); err != nil {
		return err
	}
	ents, err := os.ReadDir(src)
	if err != nil {
		return err
	}
	for _, e := range ents {
		name := e.Name()
		from, to := filepath.Join(src, name), filepath.Join(dst, name)
		switch {
		case name == "LOCK" || !e.Type().IsRegular():
		case strings.HasSuffix(name, ".sst") || strings.HasSuffix(name, ".blob"):
			if os.Link(from, to) == nil {
				continue
			}
			fallthrough
		default:
			if _, err := copyFile(from, to); err != nil {
				return err
			}
		}
	}
	return nil
}
