package traces

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// A store of realistic runs, compacted into table files: 30 scenarios of 3
// runs, some 35 table blocks.
func damagedCorpus() *corpus { return newCorpus(1, 30, 3, 1) }

func compactedStore(t *testing.T, c *corpus) (string, map[string]ID) {
	t.Helper()
	dir := t.TempDir()
	s, err := Open(dir, nil)
	if err != nil {
		t.Fatal(err)
	}
	putAll(t, s, c)
	if err := s.Compact(context.Background()); err != nil {
		t.Fatal(err)
	}
	refs, err := s.Refs("")
	if err != nil {
		t.Fatal(err)
	}
	ids := map[string]ID{}
	for _, r := range refs {
		ids[r.Name] = r.Run
	}
	s.Close()
	return dir, ids
}

// flipStored flips a byte in the middle of the n-th copy (0 the first) of
// want in the store's table files, as bit rot would: the table block that
// holds it fails its checksum.
func flipStored(t *testing.T, dir string, want []byte, n int) {
	t.Helper()
	files, _ := filepath.Glob(filepath.Join(dir, "db", "*.sst"))
	for _, f := range files {
		b, _ := os.ReadFile(f)
		off := 0
		for {
			i := bytes.Index(b[off:], want)
			if i < 0 {
				break
			}
			if n == 0 {
				b[off+i+len(want)/2] ^= 0xff
				if err := os.WriteFile(f, b, 0o644); err != nil {
					t.Fatal(err)
				}
				return
			}
			n--
			off += i + 1
		}
	}
	t.Fatalf("%x is not in the table files", want)
}

// firstBase returns the run that is base number 0: the first anchor, the
// dictionary of every family stored after the anchors.
func firstBase(t *testing.T, dir string) ID {
	t.Helper()
	s, err := Open(dir, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	v, closer, err := s.db.Get(baseKey(0))
	if err != nil {
		t.Fatal(err)
	}
	defer closer.Close()
	return ID(v)
}

// storedRecord returns the record of run id as the store holds it.
func storedRecord(t *testing.T, dir string, id ID) []byte {
	t.Helper()
	s, err := Open(dir, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	v, closer, err := s.db.Get(runKey(id))
	if err != nil {
		t.Fatal(err)
	}
	defer closer.Close()
	return bytes.Clone(v)
}

// unreadableRefs reads every ref's run one by one, the slow way, and
// returns those that fail.
func unreadableRefs(t *testing.T, dir string, refs map[string]ID) []string {
	t.Helper()
	s, err := Open(dir, &Options{ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	var out []string
	for name, id := range refs {
		if _, err := s.GetRun(id); err != nil {
			if !errors.Is(err, ErrCorrupt) {
				t.Fatalf("%s: %v, want ErrCorrupt", name, err)
			}
			out = append(out, name)
		}
	}
	sort.Strings(out)
	return out
}

// One flipped byte in a table block: Verify reads on past the block,
// checks every other run, and names every run that cannot be read and every
// ref that points at one; pebble's messages come through readable. Repair
// then drops exactly those refs and runs, keeps every other run as it was,
// and the dropped runs, stored again, make a whole store.
func TestFlippedBlockVerifyRepair(t *testing.T) {
	c := damagedCorpus()
	dir, refs := compactedStore(t, c)
	victimRef := c.ref(12, 0, 2) // not its family's base; its block holds no anchor
	victim := refs[victimRef]
	flipStored(t, dir, storedRecord(t, dir, victim), 0)
	want := unreadableRefs(t, dir, refs)
	if !slices.Contains(want, victimRef) || len(want) >= len(refs)/2 {
		t.Fatalf("the damage took %d refs of %d: %v; want the victim %s and a block's worth", len(want), len(refs), want, victimRef)
	}

	// Writers refuse nothing yet (the metadata reads); the cheap check
	// replay makes catches every ref that cannot be read, those stored
	// against a damaged base too; Verify names it all.
	s, err := Open(dir, nil)
	if err != nil {
		t.Fatal(err)
	}
	for name := range refs {
		if err := s.CheckRecords(name); (err != nil) != slices.Contains(want, name) {
			t.Errorf("CheckRecords(%s) = %v; reading it fails: %v", name, err, slices.Contains(want, name))
		}
	}
	rep, err := s.Verify(context.Background())
	s.Close()
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(rep.BrokenRefs, want) {
		t.Errorf("Verify names refs %v; reading each gives %v", rep.BrokenRefs, want)
	}
	if rep.LostStretches != 1 || rep.Refs != len(refs) || rep.Runs < len(refs)-len(want) {
		t.Errorf("Verify read %d runs, %d refs, %d lost stretches; want at least %d runs, %d refs and 1",
			rep.Runs, rep.Refs, rep.LostStretches, len(refs)-len(want), len(refs))
	}
	if !slices.ContainsFunc(rep.UnreadableRuns, func(id ID) bool { return id == victim }) {
		t.Errorf("Verify does not name the victim run %s", victim.Short())
	}
	for _, p := range rep.Problems {
		if strings.Contains(p.Message, "corruption detail carrier") || !strings.Contains(p.Message, "corrupt") && p.Kind != "base" && p.Kind != "ref" {
			t.Errorf("problem %q: want pebble's own message", p)
		}
	}

	// A dry run changes nothing.
	dry, err := Repair(context.Background(), dir, nil, true)
	if err != nil {
		t.Fatal(err)
	}
	if got := droppedNames(dry); !slices.Equal(got, want) || !dry.Changed() || dry.Backup != "" {
		t.Errorf("dry run would drop %v (backup %q); want %v, no backup", got, dry.Backup, want)
	}
	if again := unreadableRefs(t, dir, refs); !slices.Equal(again, want) {
		t.Fatalf("the dry run changed the store: %v", again)
	}

	rp, err := Repair(context.Background(), dir, nil, false)
	if err != nil {
		t.Fatal(err)
	}
	if got := droppedNames(rp); !slices.Equal(got, want) {
		t.Errorf("Repair dropped %v; want %v", got, want)
	}
	if rp.KeptRefs != len(refs)-len(want) || len(rp.Lost) != 1 {
		t.Errorf("Repair kept %d refs, lost %v; want %d and one stretch", rp.KeptRefs, rp.Lost, len(refs)-len(want))
	}
	if fi, err := os.Stat(rp.Backup); err != nil || !fi.IsDir() || filepath.Dir(rp.Backup) != dir {
		t.Errorf("the damaged database is not kept at %q: %v", rp.Backup, err)
	}

	s, err = Open(dir, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if rep, err := s.Verify(context.Background()); err != nil || !rep.OK() {
		t.Fatalf("after repair: %v %v", err, rep.Problems)
	}
	// Every kept run is the run it was; every dropped ref is gone.
	c.all(func(ref string, run *Run) error {
		id, err := s.Ref(ref)
		if slices.Contains(want, ref) {
			if !errors.Is(err, ErrNotFound) {
				t.Errorf("%s: %v, want it dropped", ref, err)
			}
			// Recorded again, as a resumed record does.
			if id, err := s.PutRun(run, ref); err != nil || id != refs[ref] {
				t.Errorf("storing %s again: %v, %v; want %v", ref, id, err, refs[ref])
			}
			return nil
		}
		if err != nil || id != refs[ref] {
			t.Fatalf("%s: %v %v; want it kept as %v", ref, id, err, refs[ref])
		}
		got, err := s.GetRun(id)
		if err != nil {
			t.Fatal(err)
		}
		if d := cmp.Diff(normalized(t, run), normalized(t, got)); d != "" {
			t.Errorf("%s changed (-want +got):\n%s", ref, d)
		}
		return nil
	})
	if rep, err := s.Verify(context.Background()); err != nil || !rep.OK() || rep.Refs != len(refs) {
		t.Fatalf("after storing the dropped runs again: %v %v", err, rep)
	}
	if _, err := s.GC(context.Background()); err != nil {
		t.Errorf("gc after repair: %v", err)
	}
}

func droppedNames(r *RepairReport) []string {
	var out []string
	for _, d := range r.DroppedRefs {
		out = append(out, d.Name)
	}
	sort.Strings(out)
	return out
}

// CheckRef is what a resumed record asks of each stored ref: a ref whose
// run cannot be read is damage, never a run recorded; so is a ref to a run
// the store lacks.
func TestCheckRef(t *testing.T) {
	c := damagedCorpus()
	dir, refs := compactedStore(t, c)
	victimRef := c.ref(12, 0, 2)
	flipStored(t, dir, storedRecord(t, dir, refs[victimRef]), 0)
	s, err := Open(dir, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if err := s.CheckRef(victimRef); !errors.Is(err, ErrCorrupt) || !strings.Contains(err.Error(), victimRef) || strings.Contains(err.Error(), "carrier") {
		t.Errorf("CheckRef(damaged) = %v; want ErrCorrupt naming the ref, in pebble's words", err)
	}
	if err := s.CheckRecords(victimRef); !errors.Is(err, ErrCorrupt) || !strings.Contains(err.Error(), victimRef) {
		t.Errorf("CheckRecords(damaged) = %v; want ErrCorrupt naming the ref", err)
	}
	for _, r := range []string{c.ref(0, 0, 0), c.ref(0, 0, 1)} {
		if err := s.CheckRef(r); err != nil {
			t.Errorf("CheckRef(whole) = %v", err)
		}
		if err := s.CheckRecords(r); err != nil {
			t.Errorf("CheckRecords(whole) = %v", err)
		}
	}
	if err := s.CheckRef("golden/no/such/ref/0"); err != nil {
		t.Errorf("CheckRef(absent) = %v; want nil: nothing stored", err)
	}
	if err := s.db.Set(refKey("golden/x/y/z/0"), make([]byte, 32), nil); err != nil {
		t.Fatal(err)
	}
	if err := s.CheckRef("golden/x/y/z/0"); !errors.Is(err, ErrCorrupt) {
		t.Errorf("CheckRef(ref to a missing run) = %v; want ErrCorrupt", err)
	}
	if err := s.CheckRecords("golden/x/y/z/0"); !errors.Is(err, ErrCorrupt) {
		t.Errorf("CheckRecords(ref to a missing run) = %v; want ErrCorrupt", err)
	}

}

// Damage among the bases (the first table block holds them, with the refs):
// a writer refuses the store, a reader and Verify do not, and Repair makes
// it whole again.
func TestDamagedBases(t *testing.T) {
	c := damagedCorpus()
	dir, refs := compactedStore(t, c)
	base := refs[c.ref(0, 0, 0)] // base 0: its ID is base/0's value, the first copy
	flipStored(t, dir, base[:], 0)
	if _, err := Open(dir, nil); !errors.Is(err, ErrCorrupt) {
		t.Fatalf("Open for writing: %v; want ErrCorrupt", err)
	}
	s, err := Open(dir, &Options{ReadOnly: true})
	if err != nil {
		t.Fatalf("Open read-only: %v", err)
	}
	rep, err := s.Verify(context.Background())
	s.Close()
	if err != nil || rep.OK() || rep.LostStretches == 0 {
		t.Fatalf("Verify: %v, %v; want the lost stretch reported", err, rep)
	}
	rp, err := Repair(context.Background(), dir, nil, false)
	if err != nil {
		t.Fatal(err)
	}
	if len(rp.Lost) == 0 {
		t.Errorf("Repair lost nothing: %+v", rp)
	}
	s, err = Open(dir, nil)
	if err != nil {
		t.Fatalf("Open after repair: %v", err)
	}
	defer s.Close()
	if rep, err := s.Verify(context.Background()); err != nil || !rep.OK() {
		t.Fatalf("after repair: %v %v", err, rep.Problems)
	}
	// What is left is whole, and the rest can be stored again.
	putAll(t, s, c)
	if rep, err := s.Verify(context.Background()); err != nil || !rep.OK() || rep.Refs != len(refs) {
		t.Fatalf("after storing everything again: %v %v", err, rep)
	}
}

// crashedStore stores runs and then refs that stay in the write-ahead log,
// and leaves the store as a crash would (pebble not closed cleanly: the
// log not flushed). It returns the refs, and the newest log file.
func crashedStore(t *testing.T) (string, map[string]ID, string) {
	t.Helper()
	dir := t.TempDir()
	s, err := Open(dir, nil)
	if err != nil {
		t.Fatal(err)
	}
	c := newCorpus(1, 2, 1, 1)
	putAll(t, s, c)
	id, _ := s.Ref(c.ref(0, 0, 0))
	for i := range 50 {
		if err := s.SetRef(fmt.Sprintf("extra/%03d", i), id); err != nil {
			t.Fatal(err)
		}
	}
	refs, _ := s.Refs("")
	all := map[string]ID{}
	for _, r := range refs {
		all[r.Name] = r.Run
	}
	s.db.Close() // no flush: the last refs live in the log only
	s.db = nil
	s.Close()
	logs, _ := filepath.Glob(filepath.Join(dir, "db", "*.log"))
	sort.Strings(logs)
	return dir, all, logs[len(logs)-1]
}

func checkSubset(t *testing.T, s *Store, before map[string]ID) int {
	t.Helper()
	refs, err := s.Refs("")
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range refs {
		if before[r.Name] != r.Run {
			t.Errorf("ref %s -> %s: not a ref that was written", r.Name, r.Run.Short())
		}
		if _, err := s.GetRun(r.Run); err != nil {
			t.Errorf("ref %s: %v", r.Name, err)
		}
	}
	if rep, err := s.Verify(context.Background()); err != nil || !rep.OK() {
		t.Errorf("verify: %v %v", err, rep.Problems)
	}
	return len(refs)
}

// A write-ahead log cut short. The newest log, cut: pebble replays it up to
// the cut, and the store is whole, without the writes after the cut (which
// a resumed record writes again). An older log, cut (a crash while pebble
// rotated its logs): pebble refuses to open the store at all; every open
// says so as damage, and Repair cuts the log where pebble stopped reading
// it, keeping everything before.
func TestTruncatedLog(t *testing.T) {
	// The log starts with the last runs and ends with the 50 refs, about
	// 100 bytes each: a cut at 1500 bytes loses most of the refs.
	const cut = 1500
	dir, before, last := crashedStore(t)
	if err := os.Truncate(last, cut); err != nil {
		t.Fatal(err)
	}
	s, err := Open(dir, nil)
	if err != nil {
		t.Fatalf("a cut newest log: %v", err)
	}
	n := checkSubset(t, s, before)
	s.Close()
	if n >= len(before) || n < 2 {
		t.Errorf("%d of %d refs after the cut; want fewer, and the flushed runs' refs", n, len(before))
	}

	dir, before, last = crashedStore(t)
	if err := os.Truncate(last, cut); err != nil {
		t.Fatal(err)
	}
	var num int
	fmt.Sscanf(filepath.Base(last), "%d.log", &num)
	if err := os.WriteFile(filepath.Join(dir, "db", fmt.Sprintf("%06d.log", num+1)), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	for _, o := range []*Options{nil, {ReadOnly: true}} {
		s, err := Open(dir, o)
		if err == nil {
			s.Close()
		}
		if !errors.Is(err, ErrCorrupt) || !strings.Contains(err.Error(), "WAL") {
			t.Fatalf("Open(%+v) of a store with a cut older log: %v; want ErrCorrupt", o, err)
		}
	}
	rp, err := Repair(context.Background(), dir, nil, false)
	if err != nil {
		t.Fatal(err)
	}
	if len(rp.Salvaged) != 1 || !strings.Contains(rp.Salvaged[0], filepath.Base(last)) || rp.Backup == "" {
		t.Errorf("Repair salvaged %v (backup %q); want the cut log, and the old database kept", rp.Salvaged, rp.Backup)
	}
	s, err = Open(dir, nil)
	if err != nil {
		t.Fatalf("after repair: %v", err)
	}
	defer s.Close()
	if n := checkSubset(t, s, before); n < 2 {
		t.Errorf("%d refs kept", n)
	}
}

// A reader opens a store a writer holds (as bench traces ls while bench
// record runs): it reads the store as it was, and cannot write it; its
// snapshot goes when it closes, and one a killed reader left goes at the
// next open.
func TestReadOnlyBesideWriter(t *testing.T) {
	dir := t.TempDir()
	w, err := Open(dir, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	c := smallCorpus()
	putAll(t, w, c)
	before, _ := w.Refs("")
	if _, err := Open(dir, nil); !errors.Is(err, ErrLocked) {
		t.Fatalf("a second writer: %v; want ErrLocked", err)
	}
	r1, err := Open(dir, &Options{ReadOnly: true})
	if err != nil {
		t.Fatalf("a reader beside the writer: %v", err)
	}
	r2, err := Open(dir, &Options{ReadOnly: true})
	if err != nil {
		t.Fatalf("a second reader: %v", err)
	}
	if _, err := w.PutRun(c.run(9, 0, 0), "golden/later/0/x/0"); err != nil {
		t.Fatal(err)
	}
	for _, r := range []*Store{r1, r2} {
		got, err := r.Refs("")
		if err != nil || !slices.Equal(got, before) {
			t.Errorf("reader's refs: %v %v; want the %d there were", err, len(got), len(before))
		}
		for _, ref := range got {
			if _, err := r.GetRun(ref.Run); err != nil {
				t.Errorf("reader: %s: %v", ref.Name, err)
			}
		}
		if rep, err := r.Verify(context.Background()); err != nil || !rep.OK() {
			t.Errorf("reader's verify: %v %v", err, rep)
		}
		if _, err := r.PutRun(c.run(8, 0, 0), "golden/x/0/y/0"); !errors.Is(err, ErrReadOnly) {
			t.Errorf("a reader's write: %v; want ErrReadOnly", err)
		}
		if err := r.SetRef("x/y", before[0].Run); !errors.Is(err, ErrReadOnly) {
			t.Errorf("a reader's SetRef: %v; want ErrReadOnly", err)
		}
	}
	r1.Close()
	r2.Close()
	if snaps, _ := filepath.Glob(filepath.Join(dir, snapshotPrefix+"*")); len(snaps) != 0 {
		t.Errorf("snapshots left after Close: %v", snaps)
	}
	r3, err := Open(dir, &Options{ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	if got, _ := r3.Refs(""); len(got) != len(before)+1 {
		t.Errorf("a new reader sees %d refs; want %d", len(got), len(before)+1)
	}
	r3.Close()

	// A killed reader's snapshot.
	stale := filepath.Join(dir, snapshotPrefix+"2147483646-1")
	if err := os.Mkdir(stale, 0o755); err != nil {
		t.Fatal(err)
	}
	w.Close()
	w2, err := Open(dir, nil)
	if err != nil {
		t.Fatal(err)
	}
	w2.Close()
	if _, err := os.Stat(stale); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("the stale snapshot is still there: %v", err)
	}
}

// Only a writer that may create a store creates one: a typo'd directory
// is refused, and left uncreated.
func TestNoStore(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "typo")
	for _, o := range []*Options{{MustExist: true}, {ReadOnly: true}} {
		_, err := Open(dir, o)
		if !errors.Is(err, ErrNoStore) || err.Error() != "no store at "+dir {
			t.Errorf("Open(%+v): %v; want %q", o, err, "no store at "+dir)
		}
	}
	if _, err := Migrate(context.Background(), dir, nil, nil); !errors.Is(err, ErrNoStore) {
		t.Errorf("Migrate: %v; want ErrNoStore", err)
	}
	if _, err := Repair(context.Background(), dir, nil, false); !errors.Is(err, ErrNoStore) {
		t.Errorf("Repair: %v; want ErrNoStore", err)
	}
	if _, err := os.Stat(dir); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("the directory was created: %v", err)
	}
	s, err := Open(dir, nil)
	if err != nil {
		t.Fatal(err)
	}
	s.Close()
	if s, err := Open(dir, &Options{MustExist: true}); err != nil {
		t.Errorf("a store created: %v", err)
	} else {
		s.Close()
	}
}

// A repair killed between its two renames is finished by the next open; one
// killed before them leaves the store as it was.
func TestRepairSwapInterrupted(t *testing.T) {
	dir, refs := compactedStore(t, smallCorpus())
	if err := os.Rename(filepath.Join(dir, dbDirName), filepath.Join(dir, repairDirName)); err != nil {
		t.Fatal(err)
	}
	if _, err := Open(dir, &Options{ReadOnly: true}); err == nil {
		t.Errorf("a reader opened a store mid-swap")
	}
	s, err := Open(dir, nil)
	if err != nil {
		t.Fatalf("open mid-swap: %v", err)
	}
	if n := checkSubset(t, s, refs); n != len(refs) {
		t.Errorf("%d of %d refs", n, len(refs))
	}
	s.Close()
	if err := os.CopyFS(filepath.Join(dir, repairDirName), os.DirFS(filepath.Join(dir, dbDirName))); err != nil {
		t.Fatal(err)
	}
	s, err = Open(dir, nil)
	if err != nil {
		t.Fatal(err)
	}
	s.Close()
	if _, err := os.Stat(filepath.Join(dir, repairDirName)); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("an unfinished repair's database is still there: %v", err)
	}
}

// A store of format 1 is not damaged: Repair refuses it, says what to run,
// and leaves it as it was.
func TestRepairRefusesFormat1(t *testing.T) {
	dir := copyDir(t, "testdata/store-v1")
	if _, err := Repair(context.Background(), dir, nil, false); err == nil || !strings.Contains(err.Error(), "traces migrate") {
		t.Fatalf("Repair(format 1) = %v; want refused, naming migrate", err)
	}
	if _, err := Open(dir, nil); !errors.Is(err, ErrNeedsMigration) {
		t.Errorf("after the refused repair: %v; want the store as it was", err)
	}
}

// The cheap check (records only) catches every run pebble damage makes
// unreadable, through the bases it is stored against too: here the damaged
// block holds an anchor, the dictionary of nearly every family's base.
func TestCheckRecordsThroughBases(t *testing.T) {
	c := damagedCorpus()
	dir, refs := compactedStore(t, c)
	flipStored(t, dir, storedRecord(t, dir, firstBase(t, dir)), 0)
	want := unreadableRefs(t, dir, refs)
	s, err := Open(dir, &Options{ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	direct := 0
	for name := range refs {
		err := s.CheckRecords(name)
		if (err != nil) != slices.Contains(want, name) {
			t.Errorf("CheckRecords(%s) = %v; reading it fails: %v", name, err, slices.Contains(want, name))
		}
		if err != nil && strings.Contains(err.Error(), "base ") {
			direct++
		}
	}
	if len(want) < len(refs)/2 || direct == 0 {
		t.Errorf("%d of %d refs unreadable, %d through a base; want most, through bases", len(want), len(refs), direct)
	}
	// All at once, as replay checks them (each base read once): the error
	// names the first damaged ref, and the whole ones pass together.
	names := slices.Sorted(maps.Keys(refs))
	var whole []string
	first := ""
	for _, name := range names {
		switch {
		case !slices.Contains(want, name):
			whole = append(whole, name)
		case first == "":
			first = name
		}
	}
	if err := s.CheckRecords(names...); err == nil || !strings.Contains(err.Error(), "ref "+first+":") {
		t.Errorf("CheckRecords(all) = %v; want the first damaged, %s", err, first)
	}
	if err := s.CheckRecords(whole...); err != nil {
		t.Errorf("CheckRecords(the whole ones) = %v", err)
	}
	// The refs as Refs lists them (replay's): the same answer.
	listed, err := s.Refs("")
	if err != nil {
		t.Fatal(err)
	}
	if err := s.CheckRunRecords(listed...); err == nil || !strings.Contains(err.Error(), "ref "+first+":") {
		t.Errorf("CheckRunRecords(all) = %v; want the first damaged, %s", err, first)
	}
}
