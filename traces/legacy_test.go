package traces

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// The fixtures under testdata were written by bench at 6a51e10, the last
// commit of store and pack format 1: six runs of three scenarios (baseline
// model, reference server), the store after bench traces gc (so with a
// trained dictionary), and bench traces export of the same runs.
// testdata/store-v1.refs.json is bench traces ls --json of that store.

func v1Refs(t *testing.T) []Ref {
	t.Helper()
	b, err := os.ReadFile("testdata/store-v1.refs.json")
	if err != nil {
		t.Fatal(err)
	}
	var refs []Ref
	if err := json.Unmarshal(b, &refs); err != nil {
		t.Fatal(err)
	}
	return refs
}

// copyDir copies the fixture store, which tests must not change.
func copyDir(t *testing.T, from string) string {
	t.Helper()
	to := t.TempDir()
	err := filepath.WalkDir(from, func(p string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(from, p)
		if d.IsDir() {
			return os.MkdirAll(filepath.Join(to, rel), 0o755)
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		return os.WriteFile(filepath.Join(to, rel), b, 0o644)
	})
	if err != nil {
		t.Fatal(err)
	}
	return to
}

// checkRuns asserts that s holds exactly the fixture's refs and that every
// run reads back, verified against the ID format 1 gave it.
func checkRuns(t *testing.T, s *Store) {
	t.Helper()
	want := v1Refs(t)
	got, err := s.Refs("")
	if err != nil {
		t.Fatal(err)
	}
	if d := cmp.Diff(want, got); d != "" {
		t.Fatalf("refs (-format 1 +now):\n%s", d)
	}
	for _, r := range got {
		run, err := s.GetRun(r.Run)
		if err != nil {
			t.Fatalf("%s: %v", r.Name, err)
		}
		if run.Manifest.StartedAt.IsZero() {
			t.Errorf("%s lost its start time", r.Name)
		}
	}
	if rep, err := s.Verify(context.Background()); err != nil || !rep.OK() {
		t.Errorf("Verify: %v %v", err, rep)
	}
}

// A store of format 1 is refused with a message that says what to run;
// Migrate converts it in place, keeping every run, its ID and its start
// time, and every ref; a second Migrate does nothing.
func TestMigrateV1Store(t *testing.T) {
	dir := copyDir(t, "testdata/store-v1")
	if _, err := Open(dir, nil); !errors.Is(err, ErrNeedsMigration) || !bytes.Contains([]byte(err.Error()), []byte("traces migrate")) {
		t.Fatalf("Open(format 1) = %v, want ErrNeedsMigration naming the command", err)
	}
	var progress []int
	rep, err := Migrate(context.Background(), dir, nil, func(done, total int) { progress = append(progress, done) })
	if err != nil {
		t.Fatal(err)
	}
	if rep.From != 1 || rep.To != StoreFormat || rep.Runs != 6 || len(progress) != 6 {
		t.Errorf("Migrate = %+v with %d progress calls, want 6 runs from 1 to %d", rep, len(progress), StoreFormat)
	}
	s, err := Open(dir, nil)
	if err != nil {
		t.Fatal(err)
	}
	checkRuns(t, s)
	st, _ := s.Stats()
	s.Close()
	if st.Bases != 3 {
		t.Errorf("%d bases after migrating, want one per scenario", st.Bases)
	}
	if rep, err := Migrate(context.Background(), dir, nil, nil); err != nil || rep.From != rep.To {
		t.Errorf("second Migrate = %+v, %v; want nothing to do", rep, err)
	}
}

// A migration interrupted after some runs goes on where it stopped.
func TestMigrateResumes(t *testing.T) {
	dir := copyDir(t, "testdata/store-v1")
	ctx, cancel := context.WithCancel(context.Background())
	_, err := Migrate(ctx, dir, nil, func(done, _ int) {
		if done == 2 {
			cancel()
		}
	})
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("interrupted Migrate = %v", err)
	}
	if _, err := Open(dir, nil); !errors.Is(err, ErrNeedsMigration) {
		t.Fatalf("a half-migrated store opens: %v", err)
	}
	rep, err := Migrate(context.Background(), dir, nil, nil)
	if err != nil || rep.Runs != 4 {
		t.Fatalf("resumed Migrate = %+v, %v; want the 4 runs left", rep, err)
	}
	s, err := Open(dir, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	checkRuns(t, s)
}

// A pack of format 1 imports into a store of this format with the same runs
// and IDs, and exports again as a pack of this format.
func TestImportV1Pack(t *testing.T) { checkPackRoundTrip(t, "testdata/pack-v1.benchpack", checkRuns) }

// checkPackRoundTrip imports the six-run pack at path, checks the store,
// exports it again as a pack of this format, and checks that pack's import.
func checkPackRoundTrip(t *testing.T, path string, check func(*testing.T, *Store)) {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	s := openTemp(t)
	if rep, err := s.Import(f, nil); err != nil || rep.Runs != 6 || rep.NewRuns != 6 || rep.Refs != 6 {
		t.Fatalf("Import = %+v, %v", rep, err)
	}
	check(t, s)
	var p bytes.Buffer
	if _, err := s.Export(&p); err != nil {
		t.Fatal(err)
	}
	again := openTemp(t)
	if _, err := again.Import(&p, nil); err != nil {
		t.Fatal(err)
	}
	check(t, again)
}

// The fixtures store-v2, pack-v2.benchpack and store-v2.refs.json were
// written by bench at 4767110, the last commit that kept timings inside a
// run's document: six runs of three scenarios (baseline model, reference
// server started by `sh -c 'echo "reference server starting" >&2; exec
// central-mcp'`), the store after bench traces gc, and bench traces export
// of it. Their side (what is kept beside a run) is the older form: stderr
// by event index.

func checkV2Runs(t *testing.T, s *Store) {
	t.Helper()
	b, err := os.ReadFile("testdata/store-v2.refs.json")
	if err != nil {
		t.Fatal(err)
	}
	var want []Ref
	if err := json.Unmarshal(b, &want); err != nil {
		t.Fatal(err)
	}
	got, err := s.Refs("")
	if err != nil {
		t.Fatal(err)
	}
	if d := cmp.Diff(want, got); d != "" {
		t.Fatalf("refs (-at 4767110 +now):\n%s", d)
	}
	for _, r := range got {
		run, err := s.GetRun(r.Run) // verified against the ID 4767110 gave it
		if err != nil {
			t.Fatalf("%s: %v", r.Name, err)
		}
		if run.Manifest.StartedAt.IsZero() {
			t.Errorf("%s lost its start time", r.Name)
		}
		var stderr string
		var latency int64
		for _, e := range run.Events {
			if e.Initialize != nil {
				stderr += e.Initialize.Stderr
			}
			if e.Turn != nil {
				latency += e.Turn.LatencyUS
			}
		}
		if stderr != "reference server starting\n" {
			t.Errorf("%s: stderr %q, want the server's line", r.Name, stderr)
		}
		if latency == 0 {
			t.Errorf("%s lost its timings (kept in its document then)", r.Name)
		}
	}
	if rep, err := s.Verify(context.Background()); err != nil || !rep.OK() {
		t.Errorf("Verify: %v %v", err, rep)
	}
}

// A store written before timings moved beside the runs reads as it was, and
// takes new runs, which keep their timings beside them.
func TestReadV2Store(t *testing.T) {
	dir := copyDir(t, "testdata/store-v2")
	s, err := Open(dir, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	checkV2Runs(t, s)
	refs, _ := s.Refs("")
	old, err := s.GetRun(refs[0].Run)
	if err != nil {
		t.Fatal(err)
	}
	// Stored again, the same run leaves its timings out of its document: a
	// new ID, the same run read back.
	old.Manifest.RunID = ID{}
	id, err := s.PutRun(old, "again/run")
	if err != nil {
		t.Fatal(err)
	}
	if id == refs[0].Run {
		t.Error("a run stored now has its timings in its ID")
	}
	back, err := s.GetRun(id)
	if err != nil {
		t.Fatal(err)
	}
	if normalized(t, back) != normalized(t, old) {
		t.Errorf("run read back differs:\n got %s\nwant %s", normalized(t, back), normalized(t, old))
	}
}

// A pack of format 2 imports with the same runs, IDs, stderr and timings,
// and exports again as a pack of this format.
func TestImportV2Pack(t *testing.T) { checkPackRoundTrip(t, "testdata/pack-v2.benchpack", checkV2Runs) }
