package traces

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/klauspost/compress/zstd"

	"github.com/mcpbench/bench/internal/testbin"
)

func openTemp(t *testing.T) *Store {
	t.Helper()
	s, err := Open(t.TempDir(), nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

func smallCorpus() *corpus { return newCorpus(1, 3, 2, 2) }

func putAll(t *testing.T, s *Store, c *corpus) {
	t.Helper()
	if err := c.all(func(ref string, run *Run) error { _, err := s.PutRun(run, ref); return err }); err != nil {
		t.Fatal(err)
	}
}

func TestPutGetRoundTrip(t *testing.T) {
	s := openTemp(t)
	c := smallCorpus()
	want := c.run(1, 1, 1)
	id, err := s.PutRun(want, c.ref(1, 1, 1))
	if err != nil {
		t.Fatal(err)
	}
	got, err := s.GetRun(id)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("GetRun mismatch (-want +got):\n%s", diff)
	}
	if ref, err := s.Ref(c.ref(1, 1, 1)); err != nil || ref != id {
		t.Errorf("Ref = %v, %v; want %v", ref, err, id)
	}
	// The ID is the hash of the document, independent of the start time.
	again := c.run(1, 1, 1)
	again.Manifest.StartedAt = again.Manifest.StartedAt.Add(1)
	if id2, err := s.PutRun(again); err != nil || id2 != id {
		t.Errorf("same content, other start time: ID %v, %v; want %v", id2, err, id)
	}
	doc, _ := want.document()
	if id != Hash(doc) {
		t.Errorf("run ID is not the hash of its canonical document")
	}
}

func TestPutRunRejectsBadInput(t *testing.T) {
	s := openTemp(t)
	run := smallCorpus().run(0, 0, 0)
	tests := []struct {
		name  string
		mod   func(*Run)
		ref   string
		wants string
	}{
		{"bad ref", func(*Run) {}, "a//b", "invalid ref name"},
		{"dotdot ref", func(*Run) {}, "a/../b", "invalid ref name"},
		{"format", func(r *Run) { r.Manifest.Format = 99 }, "x", "format 99"},
		{"two payloads", func(r *Run) { r.Events[0].Tools = &Tools{} }, "x", "exactly one payload"},
		{"wrong payload", func(r *Run) { r.Events[0].Kind = KindAnswer }, "x", "another kind"},
		{"unknown kind", func(r *Run) { r.Events[0].Kind = "nope" }, "x", "unknown event kind"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := *run
			r.Events = append([]Event(nil), run.Events...)
			first := *r.Events[0].Initialize
			r.Events[0].Initialize = &first
			tt.mod(&r)
			_, err := s.PutRun(&r, tt.ref)
			if err == nil || !strings.Contains(err.Error(), tt.wants) {
				t.Errorf("PutRun error = %v, want %q", err, tt.wants)
			}
		})
	}
	if runs, _ := s.Runs(); len(runs) != 0 {
		t.Errorf("rejected runs were stored: %d", len(runs))
	}
}

// Runs of one family are stored against its first: the second run of a
// scenario costs a small part of its size, and storing a run again adds
// nothing but its ref.
func TestFamiliesCompressAgainstTheirBase(t *testing.T) {
	s := openTemp(t)
	c := smallCorpus()
	if _, err := s.PutRun(c.run(0, 0, 0), c.ref(0, 0, 0)); err != nil {
		t.Fatal(err)
	}
	one, _ := s.Stats()
	if _, err := s.PutRun(c.run(0, 0, 1), c.ref(0, 0, 1)); err != nil {
		t.Fatal(err)
	}
	two, _ := s.Stats()
	added, raw := two.StoredBytes-one.StoredBytes, two.RawBytes-one.RawBytes
	if added*20 > raw || added*3 > one.StoredBytes {
		t.Errorf("second run of the family: %d stored bytes for %d raw (the first took %d): not compressed against its base", added, raw, one.StoredBytes)
	}
	if two.Bases != 1 {
		t.Errorf("%d bases, want 1: the family's first run", two.Bases)
	}
	if _, err := s.PutRun(c.run(0, 0, 1), "other/ref"); err != nil {
		t.Fatal(err)
	}
	three, _ := s.Stats()
	if three.StoredBytes != two.StoredBytes || three.Runs != two.Runs || three.Refs != two.Refs+1 {
		t.Errorf("re-put: stored %d->%d runs %d->%d refs %d->%d", two.StoredBytes, three.StoredBytes, two.Runs, three.Runs, two.Refs, three.Refs)
	}
}

// Every run reads back whatever it was stored against: an anchor, a base
// made against the anchors, a later run of a family; also after the store
// is reopened.
func TestBasesAcrossReopen(t *testing.T) {
	dir := t.TempDir()
	s, err := Open(dir, &Options{Anchors: 2})
	if err != nil {
		t.Fatal(err)
	}
	c := newCorpus(5, 4, 2, 1) // 4 scenarios: 2 anchors, 2 bases against them
	putAll(t, s, c)
	check := func(s *Store) {
		t.Helper()
		c.all(func(ref string, want *Run) error {
			id, err := s.Ref(ref)
			if err != nil {
				t.Fatal(err)
			}
			got, err := s.GetRun(id)
			if err != nil {
				t.Fatalf("%s: %v", ref, err)
			}
			if d := cmp.Diff(normalized(t, want), normalized(t, got)); d != "" {
				t.Fatalf("%s (-want +got):\n%s", ref, d)
			}
			return nil
		})
	}
	check(s)
	st, _ := s.Stats()
	if st.Bases != 4 {
		t.Errorf("%d bases, want one per scenario", st.Bases)
	}
	s.Close()
	s, err = Open(dir, &Options{Anchors: 2, BaseCacheBytes: 1})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	check(s) // with nothing cached: every base read from disk
	// A new run of an old family after reopening is stored against its base.
	if _, err := s.PutRun(c.run(3, 0, 5), "late/run"); err != nil {
		t.Fatal(err)
	}
	st2, _ := s.Stats()
	if st2.Bases != 4 {
		t.Errorf("after reopening, a new run of a known scenario made a base (%d bases)", st2.Bases)
	}
}

// normalized is a run as JSON, without what the store fills in.
func normalized(t *testing.T, r *Run) string {
	t.Helper()
	c := *r
	c.Manifest.RunID = ID{}
	b, err := Marshal(c) // encoding/json: the side fields too
	if err != nil {
		t.Fatal(err)
	}
	return string(b) + c.Manifest.StartedAt.UTC().String()
}

// rewriteRecord replaces a stored run record behind the store's back, as
// bit rot or a bug would, with a valid pebble checksum.
func rewriteRecord(t *testing.T, s *Store, id ID, fn func([]byte) []byte) {
	t.Helper()
	v, closer, err := s.db.Get(runKey(id))
	if err != nil {
		t.Fatal(err)
	}
	nv := fn(bytes.Clone(v))
	closer.Close()
	if err := s.db.Set(runKey(id), nv, nil); err != nil {
		t.Fatal(err)
	}
}

// A run whose bytes changed is refused, and so is every run stored against
// it; Verify names each.
func TestCorruptRecordDetected(t *testing.T) {
	s := openTemp(t)
	c := smallCorpus()
	putAll(t, s, c)
	base, _ := s.Ref(c.ref(0, 0, 0)) // the family's base
	later, _ := s.Ref(c.ref(0, 0, 1))
	rewriteRecord(t, s, base, func(b []byte) []byte { b[len(b)-3] ^= 0x20; return b })
	s.codec.plains = newPlainCache(s.opts.BaseCacheBytes) // forget what was cached
	for _, id := range []ID{base, later} {
		if _, err := s.GetRun(id); !errors.Is(err, ErrCorrupt) || !strings.Contains(err.Error(), base.String()) {
			t.Errorf("GetRun(%s) error = %v, want ErrCorrupt naming %s", id.Short(), err, base)
		}
	}
	rep, err := s.Verify(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	got := fmt.Sprint(rep.Problems)
	if rep.OK() || !strings.Contains(got, base.String()) || !strings.Contains(got, later.String()) || !strings.Contains(got, c.ref(0, 0, 1)) {
		t.Errorf("Verify problems = %v, want the base, the run against it and its ref", rep.Problems)
	}
}

func TestCorruptFileOnDisk(t *testing.T) {
	dir := t.TempDir()
	s, err := Open(dir, nil)
	if err != nil {
		t.Fatal(err)
	}
	c := smallCorpus()
	putAll(t, s, c)
	if err := s.Compact(context.Background()); err != nil {
		t.Fatal(err)
	}
	victim, _ := s.Ref(c.ref(2, 1, 1))
	v, closer, _ := s.db.Get(runKey(victim))
	stored := bytes.Clone(v)
	closer.Close()
	s.Close()

	flipped := false
	files, _ := filepath.Glob(filepath.Join(dir, "db", "*.sst"))
	for _, f := range files {
		b, _ := os.ReadFile(f)
		if i := bytes.Index(b, stored); i >= 0 {
			b[i+len(stored)/2] ^= 0xff
			if err := os.WriteFile(f, b, 0o644); err != nil {
				t.Fatal(err)
			}
			flipped = true
		}
	}
	if !flipped {
		t.Fatal("the run's bytes were not found in any table file")
	}
	s, err = Open(dir, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	rep, err := s.Verify(context.Background())
	if err != nil {
		t.Fatalf("Verify failed instead of reporting: %v", err)
	}
	if rep.OK() || !strings.Contains(fmt.Sprint(rep.Problems), "corrupt") {
		t.Errorf("Verify problems = %v, want the corruption reported", rep.Problems)
	}
}

func TestGC(t *testing.T) {
	s := openTemp(t)
	c := smallCorpus()
	putAll(t, s, c)
	before, _ := s.Stats()
	// Keep one run that is not a base: its base, which no ref names any
	// more, must stay too.
	keep, _ := s.Ref(c.ref(0, 0, 1))
	refs, _ := s.Refs("")
	for _, r := range refs {
		if r.Run != keep {
			if err := s.DeleteRef(r.Name); err != nil {
				t.Fatal(err)
			}
		}
	}
	rep, err := s.GC(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	after, _ := s.Stats()
	if rep.RunsRemoved != before.Runs-2 || after.Runs != 2 || after.Bases != 1 || rep.BasesRemoved != before.Bases-1 {
		t.Errorf("GC removed %d runs, %d bases; %d runs and %d bases left (of %d, %d); want the kept run and its base", rep.RunsRemoved, rep.BasesRemoved, after.Runs, after.Bases, before.Runs, before.Bases)
	}
	if _, err := s.GetRun(keep); err != nil {
		t.Errorf("kept run no longer loads: %v", err)
	}
	if v, _ := s.Verify(context.Background()); !v.OK() {
		t.Errorf("Verify after GC: %v", v.Problems)
	}
	if rep2, _ := s.GC(context.Background()); rep2.BasesRemoved != 0 || rep2.RunsRemoved != 0 {
		t.Errorf("second GC removed %+v", rep2)
	}
}

func TestFindRunAndRefs(t *testing.T) {
	s := openTemp(t)
	c := smallCorpus()
	putAll(t, s, c)
	id, _ := s.Ref(c.ref(1, 0, 1))
	if got, err := s.FindRun(id.String()[:10]); err != nil || got != id {
		t.Errorf("FindRun(prefix) = %v, %v", got, err)
	}
	if _, err := s.FindRun("zz"); !errors.Is(err, ErrNotFound) {
		t.Errorf("FindRun(bad) = %v", err)
	}
	refs, _ := s.Refs("golden/reference/" + corpusModels[0] + "/")
	if len(refs) != c.scenarios*c.runs {
		t.Errorf("Refs(prefix) = %d refs, want %d", len(refs), c.scenarios*c.runs)
	}
	for i := 1; i < len(refs); i++ {
		if refs[i-1].Name >= refs[i].Name {
			t.Errorf("refs not sorted: %s >= %s", refs[i-1].Name, refs[i].Name)
		}
	}
	if err := s.SetRef("x/y", ID{1}); !errors.Is(err, ErrNotFound) {
		t.Errorf("SetRef to a missing run = %v", err)
	}
}

func exportBytes(t *testing.T, s *Store, prefixes ...string) []byte {
	t.Helper()
	var buf bytes.Buffer
	if _, err := s.Export(&buf, prefixes...); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

func TestPackDeterministic(t *testing.T) {
	c := smallCorpus()
	a := openTemp(t)
	putAll(t, a, c)
	p1 := exportBytes(t, a)
	if p2 := exportBytes(t, a); !bytes.Equal(p1, p2) {
		t.Fatal("two exports of one store differ")
	}
	// Another store, filled in another order, gives the same pack.
	b := openTemp(t)
	for s := c.scenarios - 1; s >= 0; s-- {
		for m := c.models - 1; m >= 0; m-- {
			for i := c.runs - 1; i >= 0; i-- {
				if _, err := b.PutRun(c.run(s, m, i), c.ref(s, m, i)); err != nil {
					t.Fatal(err)
				}
			}
		}
	}
	if p3 := exportBytes(t, b); !bytes.Equal(p1, p3) {
		t.Fatal("stores with the same runs export different packs")
	}
	// Round trip: import into an empty store, export again.
	d := openTemp(t)
	rep, err := d.Import(bytes.NewReader(p1), nil)
	if err != nil {
		t.Fatal(err)
	}
	if rep.NewRuns != c.scenarios*c.models*c.runs {
		t.Errorf("imported %d new runs", rep.NewRuns)
	}
	if p4 := exportBytes(t, d); !bytes.Equal(p1, p4) {
		t.Fatal("export after import differs")
	}
	if v, _ := d.Verify(context.Background()); !v.OK() {
		t.Errorf("Verify after import: %v", v.Problems)
	}
}

func assertEmpty(t *testing.T, s *Store) {
	t.Helper()
	st, err := s.Stats()
	if err != nil {
		t.Fatal(err)
	}
	if st.Runs != 0 || st.Bases != 0 || st.Refs != 0 {
		t.Errorf("store not empty after a rejected import: %+v", st)
	}
}

func TestPackTruncatedImportsNothing(t *testing.T) {
	a := openTemp(t)
	putAll(t, a, smallCorpus())
	p := exportBytes(t, a)
	for _, n := range []int{0, 5, len(packMagic), len(packMagic) + 10, len(p) / 3, len(p) / 2, len(p) - 40, len(p) - 1} {
		t.Run(strconv.Itoa(n), func(t *testing.T) {
			d := openTemp(t)
			_, err := d.Import(bytes.NewReader(p[:n]), nil)
			if !errors.Is(err, ErrBadPack) {
				t.Errorf("Import(truncated to %d of %d) = %v, want ErrBadPack", n, len(p), err)
			}
			assertEmpty(t, d)
		})
	}
}

// repack decompresses a pack, lets fn alter the records, and compresses it
// again, so that tampering is caught by bench's own checks, not zstd's.
func repack(t *testing.T, p []byte, fn func([]byte) []byte) []byte {
	t.Helper()
	dec, _ := zstd.NewReader(bytes.NewReader(p[len(packMagic):]))
	defer dec.Close()
	body, err := io.ReadAll(dec)
	if err != nil {
		t.Fatal(err)
	}
	body = fn(body)
	var out bytes.Buffer
	out.WriteString(packMagic)
	enc, _ := zstd.NewWriter(&out)
	enc.Write(body)
	enc.Close()
	return out.Bytes()
}

func TestPackTamperedImportsNothing(t *testing.T) {
	a := openTemp(t)
	putAll(t, a, smallCorpus())
	p := exportBytes(t, a)
	tests := []struct {
		name  string
		pack  []byte
		wants string
	}{
		{"compressed byte flipped", func() []byte { q := bytes.Clone(p); q[len(q)/2] ^= 1; return q }(), ""},
		// Inside a run, its ID refuses it before the checksum is reached.
		{"record byte flipped", repack(t, p, func(b []byte) []byte { b[inDoc(b)] ^= 1; return b }), "does not match its ID"},
		{"ref name changed", repack(t, p, func(b []byte) []byte { b[len(b)-35] ^= 2; return b }), "checksum mismatch"}, // the last ref's run index, 1 -> 3
		{"record flipped and checksum fixed", repack(t, p, func(b []byte) []byte {
			b[inDoc(b)] ^= 1
			h := Hash(b[:len(b)-34]) // the end record: 'Z', length 32, hash
			copy(b[len(b)-32:], h[:])
			return b
		}), "does not match its ID"},
		{"wrong magic", append([]byte("not-a-pack\n"), p[len(packMagic):]...), "wrong magic"},
		{"trailing data", repack(t, p, func(b []byte) []byte { return append(b, 'x') }), "after the end"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			d := openTemp(t)
			_, err := d.Import(bytes.NewReader(tt.pack), nil)
			if !errors.Is(err, ErrBadPack) || !strings.Contains(err.Error(), tt.wants) {
				t.Errorf("Import = %v, want ErrBadPack with %q", err, tt.wants)
			}
			assertEmpty(t, d)
		})
	}
}

// inDoc is the offset of a byte inside the first run document of a pack's
// plaintext (what is kept beside a run is not part of its ID).
func inDoc(b []byte) int { return bytes.Index(b, []byte(`{"events":[`)) + 3 }

func TestMergeStores(t *testing.T) {
	c := newCorpus(1, 4, 1, 1)
	a, b := openTemp(t), openTemp(t)
	for s := 0; s < 3; s++ {
		a.PutRun(c.run(s, 0, 0), c.ref(s, 0, 0))
	}
	for s := 2; s < 4; s++ {
		b.PutRun(c.run(s, 0, 0), c.ref(s, 0, 0))
	}
	rep, err := a.Import(bytes.NewReader(exportBytes(t, b)), nil)
	if err != nil {
		t.Fatal(err)
	}
	if rep.Runs != 2 || rep.NewRuns != 1 {
		t.Errorf("import report %+v, want 2 runs of which 1 new", rep)
	}
	st, _ := a.Stats()
	if st.Runs != 4 || st.Refs != 4 {
		t.Errorf("merged store has %d runs, %d refs; want 4, 4", st.Runs, st.Refs)
	}
	if v, _ := a.Verify(context.Background()); !v.OK() {
		t.Errorf("Verify after merge: %v", v.Problems)
	}
	// A ref that points elsewhere is a conflict: nothing is imported.
	other := openTemp(t)
	other.PutRun(c.run(3, 0, 0), c.ref(0, 0, 0))
	other.PutRun(c.run(1, 0, 0), "new/ref")
	_, err = a.Import(bytes.NewReader(exportBytes(t, other)), nil)
	if err == nil || !strings.Contains(err.Error(), c.ref(0, 0, 0)) {
		t.Errorf("conflicting import = %v, want an error naming the ref", err)
	}
	if _, err := a.Ref("new/ref"); !errors.Is(err, ErrNotFound) {
		t.Errorf("a conflicting import wrote a ref")
	}
	if _, err := a.Import(bytes.NewReader(exportBytes(t, other)), &ImportOptions{Overwrite: true}); err != nil {
		t.Errorf("import with overwrite: %v", err)
	}
}

// The helper process: the tests below run the test binary again as a child
// that holds or writes a store.
func TestMain(m *testing.M) {
	switch os.Getenv("BENCH_TRACES_HELPER") {
	case "":
		code := m.Run()
		testbin.RemoveAll()
		os.Exit(code)
	case "open":
		s, err := Open(os.Getenv("BENCH_TRACES_DIR"), nil)
		if err != nil {
			fmt.Println(err)
			os.Exit(3)
		}
		s.Close()
		os.Exit(0)
	case "write":
		s, err := Open(os.Getenv("BENCH_TRACES_DIR"), nil)
		if err != nil {
			fmt.Println(err)
			os.Exit(3)
		}
		c := newCorpus(2, 1000, 1000, 1)
		for i := 0; ; i++ {
			if _, err := s.PutRun(c.run(i%1000, 0, i), c.ref(i%1000, 0, i)); err != nil {
				fmt.Println(err)
				os.Exit(3)
			}
			fmt.Println(i) // this run is durable
		}
	}
}

func helper(t *testing.T, mode, dir string) *exec.Cmd {
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), "BENCH_TRACES_HELPER="+mode, "BENCH_TRACES_DIR="+dir)
	return cmd
}

func TestSecondProcessLocked(t *testing.T) {
	dir := t.TempDir()
	s, err := Open(dir, nil)
	if err != nil {
		t.Fatal(err)
	}
	out, err := helper(t, "open", dir).CombinedOutput()
	s.Close()
	// It names the holder, once.
	want := fmt.Sprintf("store %s is in use by pid %d (%s ", dir, os.Getpid(), filepath.Base(os.Args[0]))
	if err == nil || !strings.HasPrefix(string(out), want) || strings.Count(string(out), "in use") != 1 {
		t.Errorf("second process: %v, output %q; want %q...", err, out, want)
	}
	if out, err := helper(t, "open", dir).CombinedOutput(); err != nil {
		t.Errorf("after close, a second process cannot open: %v %s", err, out)
	}
}

func TestKillDuringWrite(t *testing.T) {
	dir := t.TempDir()
	durable := -1
	for round, stopAfter := range []int{3, 11, 24} {
		cmd := helper(t, "write", dir)
		stdout, _ := cmd.StdoutPipe()
		cmd.Stderr = os.Stderr
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		sc := bufio.NewScanner(stdout)
		seen := 0
		for sc.Scan() {
			n, err := strconv.Atoi(sc.Text())
			if err != nil {
				t.Fatalf("child: %s", sc.Text())
			}
			durable = max(durable, n)
			if seen++; seen == stopAfter {
				break
			}
		}
		// Killed while writing its next run.
		cmd.Process.Signal(syscall.SIGKILL)
		cmd.Wait()

		s, err := Open(dir, nil)
		if err != nil {
			t.Fatalf("round %d: reopening after kill: %v", round, err)
		}
		rep, err := s.Verify(context.Background())
		if err != nil || !rep.OK() {
			t.Fatalf("round %d: verify after kill: %v %v", round, err, rep.Problems)
		}
		refs, _ := s.Refs("")
		runs, _ := s.Runs()
		// Every ref resolves (checked by Verify), every run has its ref: no
		// partial run is visible.
		if len(runs) != len(refs) || len(refs) < durable+1 {
			t.Errorf("round %d: %d runs, %d refs, want equal and >= %d", round, len(runs), len(refs), durable+1)
		}
		for _, r := range refs {
			if _, err := s.GetRun(r.Run); err != nil {
				t.Errorf("round %d: %s: %v", round, r.Name, err)
			}
		}
		s.Close()
	}
}

// TestPutRunNoSyncRead: the run it returns is the one GetRun reads back.
func TestPutRunNoSyncRead(t *testing.T) {
	s := openTemp(t)
	c := newCorpus(2, 3, 2, 2)
	if err := c.all(func(ref string, run *Run) error {
		got, err := s.PutRunNoSyncRead(run, ref)
		if err != nil {
			return err
		}
		back, err := s.GetRun(got.Manifest.RunID)
		if err != nil {
			return err
		}
		if diff := cmp.Diff(back, got); diff != "" {
			t.Errorf("%s: PutRunNoSyncRead differs from GetRun (-get +put):\n%s", ref, diff)
		}
		// A run whose payloads are canonical already (one read back, or
		// one the recorder canonicalized) is returned without decoding:
		// still what a read gives.
		back.Manifest.Mode = ModeReplay
		for i := range back.Events {
			back.Events[i].Canonicalize()
		}
		again, err := s.PutRunNoSyncRead(back, "replay/"+ref)
		if err != nil {
			return err
		}
		read, err := s.GetRun(again.Manifest.RunID)
		if err != nil {
			return err
		}
		if !reflect.DeepEqual(read.Manifest, again.Manifest) || normalized(t, read) != normalized(t, again) {
			t.Errorf("%s (canonical): PutRunNoSyncRead differs from GetRun", ref)
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	if err := s.Sync(); err != nil {
		t.Fatal(err)
	}
}

// A server's stderr is kept beside its run, like StartedAt: a server that
// writes the time there does not change the run's ID, and the stderr
// comes back from GetRun, PutRunNoSyncRead and a pack.
func TestStderrBesideTheRun(t *testing.T) {
	s := openTemp(t)
	c := smallCorpus()
	withStderr := func(text string) *Run {
		r := c.run(1, 1, 1)
		for i := range r.Events {
			if r.Events[i].Initialize != nil {
				r.Events[i].Initialize.Stderr = text
			}
		}
		return r
	}
	plain, err := s.PutRun(c.run(1, 1, 1))
	if err != nil {
		t.Fatal(err)
	}
	first := withStderr("12:00:01 INFO started\n")
	got, err := s.PutRunNoSyncRead(first, "a")
	if err != nil {
		t.Fatal(err)
	}
	if got.Manifest.RunID != plain {
		t.Errorf("stderr changed the run ID: %v, want %v", got.Manifest.RunID, plain)
	}
	if diff := cmp.Diff(first, got); diff != "" {
		t.Errorf("PutRunNoSyncRead (-put +got):\n%s", diff)
	}
	if first.Events[0].Initialize.Stderr == "" {
		t.Fatal("PutRun cleared the caller's stderr")
	}
	doc, _ := first.document()
	if bytes.Contains(doc, []byte("INFO started")) {
		t.Errorf("stderr is in the run's document")
	}

	// A new store: the run is stored with stderr first.
	s2 := openTemp(t)
	id, err := s2.PutRun(withStderr("12:00:01 INFO started\n"), "a")
	if err != nil {
		t.Fatal(err)
	}
	if id2, err := s2.PutRun(withStderr("12:00:02 INFO started\n"), "b"); err != nil || id2 != id {
		t.Errorf("other stderr: ID %v, %v; want %v", id2, err, id)
	}
	back, err := s2.GetRun(id)
	if err != nil {
		t.Fatal(err)
	}
	want := withStderr("12:00:01 INFO started\n")
	want.Manifest.RunID = id
	if diff := cmp.Diff(want, back); diff != "" {
		t.Errorf("GetRun: the first stderr is kept (-want +got):\n%s", diff)
	}
	d := openTemp(t)
	if _, err := d.Import(bytes.NewReader(exportBytes(t, s2)), nil); err != nil {
		t.Fatal(err)
	}
	if back, err = d.GetRun(id); err != nil || back.Events[0].Initialize.Stderr != "12:00:01 INFO started\n" {
		t.Errorf("after a pack: %v, %+v", err, back)
	}
}

// What a run measured (when each event happened, how long each turn,
// call and HTTP request took, the provider's answers to a turn's attempts
// that were retried) is kept beside it: two runs that did the same
// thing at other speeds have one ID, and the first one's timings come back
// from GetRun, PutRunNoSyncRead and a pack.
func TestTimingsBesideTheRun(t *testing.T) {
	c := smallCorpus()
	timed := func(scale int64) *Run {
		r := c.run(1, 1, 1)
		for i := range r.Events {
			e := &r.Events[i]
			e.AtUS = scale * int64(i+1)
			switch {
			case e.Turn != nil:
				e.Turn.LatencyUS = scale * 1000
				e.Turn.Retries = []Retry{{Attempt: 1, Status: 429, Error: "HTTP 429: slow down", RetryAfterUS: scale * 100, WaitUS: scale * 100}}
			case e.Call != nil:
				e.Call.LatencyUS = scale * 10
			case e.HTTP != nil:
				e.HTTP.LatencyUS = scale
			}
		}
		return r
	}
	s := openTemp(t)
	slow, fast := timed(7), timed(3)
	id, err := s.PutRun(slow, "slow")
	if err != nil {
		t.Fatal(err)
	}
	got, err := s.PutRunNoSyncRead(fast, "fast")
	if err != nil {
		t.Fatal(err)
	}
	if got.Manifest.RunID != id {
		t.Fatalf("timings changed the run ID: %v, want %v", got.Manifest.RunID, id)
	}
	if diff := cmp.Diff(fast, got); diff != "" {
		t.Errorf("PutRunNoSyncRead (-put +got):\n%s", diff)
	}
	doc, _ := slow.document()
	if bytes.Contains(doc, []byte("latency_us")) || bytes.Contains(doc, []byte("at_us")) || bytes.Contains(doc, []byte("retries")) {
		t.Errorf("timings are in the run's document:\n%s", doc)
	}
	want := timed(7)
	want.Manifest.RunID = id
	want.Manifest.StartedAt = want.Manifest.StartedAt.UTC()
	back, err := s.GetRun(id)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(want, back); diff != "" {
		t.Errorf("GetRun: the first timings are kept (-want +got):\n%s", diff)
	}
	d := openTemp(t)
	if _, err := d.Import(bytes.NewReader(exportBytes(t, s)), nil); err != nil {
		t.Fatal(err)
	}
	if back, err = d.GetRun(id); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(want, back); diff != "" {
		t.Errorf("after a pack (-want +got):\n%s", diff)
	}
}

func TestParseRunRef(t *testing.T) {
	for _, tc := range []struct {
		name string
		want RunRefParts
		ok   bool
	}{
		{"golden/reference/baseline/alerts-001/3", RunRefParts{Suite: "golden", Server: "reference", Model: "baseline", Scenario: "alerts-001", RunIndex: 3}, true},
		{"replay/golden/ref/openai:gpt@seed=7/nac-002/0", RunRefParts{Prefix: "replay", Suite: "golden", Server: "ref", Model: "openai:gpt@seed=7", Scenario: "nac-002"}, true},
		{RunRef("g", "s/x", "m", "c", 12), RunRefParts{Suite: "g", Server: "s_x", Model: "m", Scenario: "c", RunIndex: 12}, true},
		{"golden/reference/baseline/alerts-001/x", RunRefParts{}, false},
		{"golden/reference/baseline/alerts-001/01", RunRefParts{}, false},
		{"a/b/c/d", RunRefParts{}, false},
		{"hand-named", RunRefParts{}, false},
	} {
		got, ok := ParseRunRef(tc.name)
		if ok != tc.ok || got != tc.want {
			t.Errorf("ParseRunRef(%q) = %+v, %v; want %+v, %v", tc.name, got, ok, tc.want, tc.ok)
		}
	}
}

// Runs of new families stored at once each make their own base: none takes
// another's number, and every run reads back.
func TestConcurrentBases(t *testing.T) {
	s := openTemp(t)
	c := newCorpus(9, 12, 2, 1)
	var wg sync.WaitGroup
	errs := make(chan error, 64)
	c.all(func(ref string, run *Run) error {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if _, err := s.PutRunNoSync(run, ref); err != nil {
				errs <- err
			}
		}()
		return nil
	})
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	st, _ := s.Stats()
	if st.Bases != 12 {
		t.Errorf("%d bases for 12 scenarios", st.Bases)
	}
	if rep, err := s.Verify(context.Background()); err != nil || !rep.OK() {
		t.Fatalf("Verify: %v %v", err, rep.Problems)
	}
}

// TestNULInNames: a run whose server, model and scenario names hold NUL
// bytes (the store's family keys join names with NUL) is stored, read back
// after a reopen, and verifies; before, the next open refused the store as
// corrupt (issue 16).
func TestNULInNames(t *testing.T) {
	dir := t.TempDir()
	s, err := Open(dir, nil)
	if err != nil {
		t.Fatal(err)
	}
	var ids []ID
	for _, name := range []string{"a\x00b", "a\x00b\x00c", "a"} {
		r := fullRun(name, json.RawMessage(`{"x":1}`))
		r.Manifest.Mode, r.Manifest.Replays = ModeRecord, nil
		id, err := s.PutRun(r, "golden/nul/"+strconv.Itoa(len(ids)))
		if err != nil {
			t.Fatal(err)
		}
		ids = append(ids, id)
	}
	s.Close()
	if s, err = Open(dir, nil); err != nil {
		t.Fatalf("reopening: %v", err)
	}
	defer s.Close()
	for _, id := range ids {
		if _, err := s.GetRun(id); err != nil {
			t.Errorf("run %s: %v", id, err)
		}
	}
	if rep, err := s.Verify(context.Background()); err != nil || len(rep.Problems) > 0 {
		t.Errorf("verify: %v %+v", err, rep)
	}
}

// TestStoreWritesNoPlantedLink: links planted where a store writes its
// lock and its database files (a store directory a pull request could
// ship) are never written through: the file they name stays as it was,
// whether the store then opens (the links were replaced) or refuses what
// it found (issue 16, item 6). A database directory that is a link is
// refused.
func TestStoreWritesNoPlantedLink(t *testing.T) {
	plants := map[string][]string{
		"lock":    {"bench.lock"},
		"tables":  {"db/000005.sst", "db/000006.sst", "db/000007.sst", "db/000008.sst"},
		"wal":     {"db/000001.log", "db/000002.log", "db/000003.log", "db/000004.log"},
		"options": {"db/OPTIONS-000001", "db/OPTIONS-000003", "db/MANIFEST-000001"},
	}
	for name, files := range plants {
		t.Run(name, func(t *testing.T) {
			dir := t.TempDir()
			victim := filepath.Join(dir, "victim")
			if err := os.WriteFile(victim, []byte("precious"), 0o644); err != nil {
				t.Fatal(err)
			}
			store := filepath.Join(dir, "store")
			os.MkdirAll(filepath.Join(store, "db"), 0o700)
			for _, f := range files {
				if err := os.Symlink(victim, filepath.Join(store, f)); err != nil {
					t.Fatal(err)
				}
			}
			if s, err := Open(store, nil); err == nil {
				r := fullRun("linked", json.RawMessage(`{"x":1}`))
				r.Manifest.Mode, r.Manifest.Replays = ModeRecord, nil
				if _, err := s.PutRun(r, "golden/linked/0"); err != nil {
					t.Logf("put: %v", err)
				}
				s.Close()
			} else {
				t.Logf("refused: %v", err)
			}
			if b, _ := os.ReadFile(victim); string(b) != "precious" {
				t.Errorf("the file a planted link named was written: %q", b)
			}
		})
	}
	t.Run("db dir", func(t *testing.T) {
		dir := t.TempDir()
		elsewhere := filepath.Join(dir, "elsewhere")
		os.MkdirAll(elsewhere, 0o700)
		store := filepath.Join(dir, "store")
		os.MkdirAll(store, 0o700)
		os.Symlink(elsewhere, filepath.Join(store, "db"))
		if s, err := Open(store, nil); err == nil {
			s.Close()
			t.Error("a database directory that is a link was opened")
		}
		if ents, _ := os.ReadDir(elsewhere); len(ents) > 0 {
			t.Errorf("files written where the link points: %d", len(ents))
		}
	})
}

// TestOpenAhead: a store opened ahead is the store Open gives; one the
// caller never took is closed by Close (its lock released, so the next
// Open succeeds), one it took is not; an error comes out of Wait.
func TestOpenAhead(t *testing.T) {
	dir := t.TempDir()
	s, err := Open(dir, nil)
	if err != nil {
		t.Fatal(err)
	}
	id, err := s.PutRun(smallCorpus().run(1, 1, 1), "golden/a")
	if err != nil {
		t.Fatal(err)
	}
	s.Close()

	op := OpenAhead(dir, &Options{MustExist: true})
	op.Close() // never taken: released
	op = OpenAhead(dir, &Options{MustExist: true})
	got, err := op.Wait()
	if err != nil {
		t.Fatalf("the store was left locked by an Opening nobody took: %v", err)
	}
	op.Close() // taken: still open
	if ref, err := got.Ref("golden/a"); err != nil || ref != id {
		t.Errorf("the store taken from Wait: Ref = %v, %v; want %v (closed by Close?)", ref, err, id)
	}
	got.Close()

	if _, err := OpenAhead(filepath.Join(dir, "none"), &Options{MustExist: true}).Wait(); !errors.Is(err, ErrNoStore) {
		t.Errorf("opening ahead a store that does not exist: %v, want ErrNoStore", err)
	}
}

// TestEncodersTakeAnotherDictionary holds a reused encoder to a fresh one:
// an idle encoder that takes another base's dictionary (ResetWithOptions)
// writes the same frame as one made for that base, and the frame decodes
// against that base.
func TestEncodersTakeAnotherDictionary(t *testing.T) {
	var dicts, srcs [][]byte
	for i := range 3 {
		var d, s bytes.Buffer
		for j := range 400 {
			fmt.Fprintf(&d, `{"name":"tool-%d-%d","description":"lists the devices of site %d"},`, i, j, j%7)
			fmt.Fprintf(&s, `{"name":"tool-%d-%d","description":"lists the devices of site %d"},`, i, j, j%5)
		}
		dicts, srcs = append(dicts, d.Bytes()), append(srcs, s.Bytes())
	}
	kind := encoderKind{level: 1, window: 1 << 17, dict: true}
	encode := func(es *zencoders, i int) []byte {
		t.Helper()
		e, err := es.get(kind, strconv.Itoa(i), func() []byte { return dicts[i] }, uint32(i+1))
		if err != nil {
			t.Fatal(err)
		}
		out := e.EncodeAll(srcs[i], nil)
		es.put(e)
		return out
	}
	var reused zencoders
	for round := range 3 {
		for i := range dicts {
			got := encode(&reused, i)
			if want := encode(&zencoders{}, i); !bytes.Equal(got, want) {
				t.Fatalf("round %d, dictionary %d: a reused encoder wrote %d bytes, a fresh one %d", round, i, len(got), len(want))
			}
			d, err := zstd.NewReader(nil, zstd.WithDecoderDictRaw(uint32(i+1), dicts[i]))
			if err != nil {
				t.Fatal(err)
			}
			plain, err := d.DecodeAll(got, nil)
			d.Close()
			if err != nil || !bytes.Equal(plain, srcs[i]) {
				t.Fatalf("round %d, dictionary %d: decoding: %v", round, i, err)
			}
		}
	}
	if n := len(reused.idle); n != 1 {
		t.Errorf("%d encoders idle after one at a time, want 1: each took the next dictionary", n)
	}
}
