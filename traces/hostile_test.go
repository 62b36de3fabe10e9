package traces

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"io/fs"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/cockroachdb/pebble/v2"

	"github.com/mcpbench/bench/internal/testbin"
)

// Hostile packs (issue 16, rows 1, 3, 4, 5 and 16): each is imported by the
// bench binary under testbin's memory cap, and must be refused, exit 2,
// with an error that says what and names the bound, within
// testbin.PeakRSSLimit, and create no store.

// importCapped runs `bench --store STORE traces import PACK args...` under
// the memory cap, STORE a directory two levels below one that does not
// exist, and returns how it ended and STORE.
func importCapped(t *testing.T, pack []byte, args ...string) (*testbin.Result, string) {
	t.Helper()
	return importFileCapped(t, func(f *os.File) { f.Write(pack) }, args...)
}

// importFileCapped is importCapped of the pack write writes to a file.
func importFileCapped(t *testing.T, write func(*os.File), args ...string) (*testbin.Result, string) {
	t.Helper()
	dir := t.TempDir()
	file := filepath.Join(dir, "hostile.benchpack")
	f, err := os.Create(file)
	if err != nil {
		t.Fatal(err)
	}
	write(f)
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	store := filepath.Join(dir, "new", "store")
	return runCapped(t, append([]string{"--store", store, "traces", "import", file}, args...)...), store
}

func runCapped(t *testing.T, args ...string) *testbin.Result {
	t.Helper()
	res, err := testbin.RunCapped(exec.Command(testbin.Build(t, "./cmd/bench"), args...), 5*time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("bench %s: exit %d, peak RSS %d MB", strings.Join(args[2:], " "), res.ExitCode, res.PeakRSS>>20)
	if res.PeakRSS >= testbin.PeakRSSLimit {
		t.Errorf("peak RSS %d MB, want under %d MB", res.PeakRSS>>20, testbin.PeakRSSLimit>>20)
	}
	return res
}

// wantRefused checks that an import ended with exit 2 and an error
// containing each of wants, and created nothing.
func wantRefused(t *testing.T, res *testbin.Result, store string, wants ...string) {
	t.Helper()
	stderr := string(res.Stderr)
	if len(stderr) > 2000 { // a Go runtime's crash
		stderr = stderr[:2000] + "..."
	}
	if res.ExitCode != 2 || res.TimedOut {
		t.Errorf("exit %d signal %q, want exit 2; stdout:\n%s\nstderr:\n%s", res.ExitCode, res.Signal, res.Stdout, stderr)
	}
	for _, w := range wants {
		if !strings.Contains(stderr, w) {
			t.Errorf("stderr lacks %q", w)
		}
	}
	if _, err := os.Lstat(filepath.Dir(store)); !os.IsNotExist(err) {
		t.Errorf("a refused import created %s (or its parent)", store)
	}
}

// Row 1: a pack of a few hundred bytes whose blobs expand to a terabyte
// is refused from the sizes of its blobs, before anything is expanded.
func TestHostileExpansionBomb(t *testing.T) {
	for _, tt := range []struct {
		name     string
		declared int64
		want     string
	}{
		{"declared honestly", 1 << 40, "declares a size of 1099511627776 bytes, more than 32 MiB, the limit for one run"},
		{"declared small", 43372, "expands to more than 32 MiB, the limit for one run"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			pack := expansionBomb(tt.declared)
			t.Logf("pack of %d bytes", len(pack))
			res, store := importCapped(t, pack)
			wantRefused(t, res, store, tt.want, "--max-run-mib")
		})
	}
}

// Row 3: a zstd stream of a gigabyte of zeros padded with random bytes (a
// pack of a few megabytes; a gigabyte is just under what a record could
// hold before) is refused at the length of its record, before it is
// decompressed. (TestImportBounds has the bound of a whole import.)
func TestHostileZstdBomb(t *testing.T) {
	pack := zeroBomb(1<<30, 2400<<10)
	t.Logf("pack of %d bytes", len(pack))
	res, store := importCapped(t, pack)
	wantRefused(t, res, store, `a 'D' record of 1073741824 bytes holds more than 32 MiB, the limit for one run`, "--max-run-mib")
}

// Rows 4 and 5: run records whose size is not one, documents that are not
// runs, and runs bench cannot read are refused at import, each named, so
// that nothing imported can fail verify, show, report or replay later.
func TestHostileRuns(t *testing.T) {
	_, rec := validPack(t)
	id := ID(rec.body[:32])
	_, rest, _ := readTime(rec.body[32:])
	n, k := binary.Uvarint(rest)
	doc, side := rest[k:k+int(n)], rest[k+int(n):]
	// A run record of format 3 whose document length is length.
	withLength := func(length uint64) []byte {
		b := append(id[:len(id):len(id)], appendTime(nil, craftStart)...)
		b = append(binary.AppendUvarint(b, length), doc...)
		return craftPack(header(PackFormat, 1, 1, 0), packRecord{recDoc, b}, refRecord(id, "golden/run"))
	}
	// A pack of format 1 of the run, whose run record says size.
	v1 := func(size any) []byte {
		info, _ := Marshal(map[string]any{"size": size, "started_at": "2026-12-01T00:00:00Z"})
		return craftPack(header(1, 1, 1, 1),
			packRecord{recBlob, append(id[:len(id):len(id)], node(nil, doc)...)},
			packRecord{recRun, append(id[:len(id):len(id)], info...)},
			refRecord(id, "golden/run"))
	}
	uncanonical := bytes.Replace(doc, []byte(`{"events":[`), []byte(`{"events":[ `), 1)
	otherFormat := bytes.Replace(doc, []byte(`"format":1`), []byte(`"format":7`), 1)
	for _, tt := range []struct {
		name, why string
		pack      []byte
		want      string
	}{
		{"v1 size 2^62", "a size that cannot be allocated", v1(int64(1) << 62), "declares a size of 4611686018427387904 bytes, more than 32 MiB"},
		{"v1 size -5", "a negative size", v1(-5), "a size of -5 bytes"},
		{"v1 size wrong", "a size its blobs do not expand to", v1(len(doc) + 1), "its blobs expand to"},
		{"v1 size max", "a size that overflows", v1(uint64(math.MaxUint64)), "cannot unmarshal"},
		{"length 2^62", "a document length past the record", withLength(1 << 62), "bad document length"},
		{"empty object", "a document that is not a run", docPack([]byte(`{}`), nil), "not a run this bench can read: has trace format 0"},
		{"string", "a document that is not a run", docPack([]byte(`"a run"`), nil), "not a run this bench can read: decoding"},
		{"array", "a document that is not a run", docPack([]byte(`[1,2,3]`), nil), "not a run this bench can read: decoding"},
		{"other format", "a run of another trace format", docPack(otherFormat, side), "has trace format 7"},
		{"not canonical", "a document GetRun would misread", docPack(uncanonical, side), "not canonical JSON"},
		{"side of another run", "what is kept beside it does not fit it", docPack(doc, []byte(`[{}]`)), "events beside a run of"},
		{"huge string", "a document of a gigabyte", stringBomb(1 << 30), "holds more than 32 MiB, the limit for one run"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			res, store := importCapped(t, tt.pack)
			wantRefused(t, res, store, tt.want)
		})
	}
}

// Row 16: a refused import leaves an existing empty directory as it was;
// a store bench creates is its user's alone: directories 0700, files
// 0600, whatever the umask.
func TestImportCreatesNothingAndPrivate(t *testing.T) {
	good, _ := validPack(t)
	dir := t.TempDir()
	empty := filepath.Join(dir, "empty")
	if err := os.Mkdir(empty, 0o755); err != nil {
		t.Fatal(err)
	}
	bad := filepath.Join(dir, "bad.benchpack")
	os.WriteFile(bad, good[:len(good)/2], 0o644)
	res := runCapped(t, "--store", empty, "traces", "import", bad)
	if res.ExitCode != 2 {
		t.Errorf("import of a bad pack: %s", res)
	}
	if ents, _ := os.ReadDir(empty); len(ents) != 0 {
		t.Errorf("a refused import left %v in an empty directory", ents)
	}

	file := filepath.Join(dir, "good.benchpack")
	os.WriteFile(file, good, 0o644)
	store := filepath.Join(dir, "new", "store")
	for _, args := range [][]string{{"traces", "import", file}, {"traces", "verify"}, {"traces", "show", "golden/run"}} {
		if res := runCapped(t, append([]string{"--store", store}, args...)...); res.ExitCode != 0 {
			t.Fatalf("bench %v: %s", args, res)
		}
	}
	var files int
	filepath.WalkDir(filepath.Join(dir, "new"), func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			t.Fatal(err)
		}
		info, _ := d.Info()
		want := fs.FileMode(0o600)
		if d.IsDir() {
			want = 0o700
		}
		if info.Mode().Perm() != want {
			t.Errorf("%s is %v, want %v", path, info.Mode().Perm(), want)
		}
		files++
		return nil
	})
	if files < 5 {
		t.Errorf("only %d files and directories in the store", files)
	}
}

// Runs at the bound of one run import within the memory bound: three of
// a letter repeated, stored against one another, and one of random
// letters, which compresses little. (bench holds what an import adds,
// compressed, until it commits it: a pack of many runs that do not
// compress costs about its own size.) One past the bound is refused, and
// imports once the bound is raised.
func TestImportLargeRuns(t *testing.T) {
	const n = DefaultMaxRunBytes - 64<<10 // its document and side, at the bound
	for _, tt := range []struct {
		name   string
		n      int64
		runs   int
		random bool
		args   []string
		want   string
	}{
		{"three compressible", n, 3, false, nil, ""},
		{"one random", n, 1, true, nil, ""},
		{"one past the bound", DefaultMaxRunBytes, 1, false, nil, "holds more than 32 MiB, the limit for one run (--max-run-mib raises it"},
		{"one past the bound raised", DefaultMaxRunBytes, 1, false, []string{"--max-run-mib", "33"}, ""},
	} {
		t.Run(tt.name, func(t *testing.T) {
			res, store := importFileCapped(t, func(f *os.File) {
				w := bufio.NewWriter(f)
				writeLargeRuns(t, w, tt.n, tt.runs, tt.random)
				w.Flush()
			}, tt.args...)
			if tt.want != "" {
				wantRefused(t, res, store, tt.want)
				return
			}
			if res.ExitCode != 0 {
				t.Fatalf("import: %s", res)
			}
			if res := runCapped(t, "--store", store, "traces", "verify"); res.ExitCode != 0 {
				t.Errorf("verify: %s", res)
			}
		})
	}
}

// A store poisoned before imports checked their runs (a run that is not
// one, stored as is) is reported by verify, and show refuses the run with
// an error that names it, instead of failing later or panicking.
func TestPoisonedStore(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "store")
	s, err := Open(dir, nil)
	if err != nil {
		t.Fatal(err)
	}
	doc := []byte(`{"events":[{"kind":"answer"}],"manifest":{"format":1}}`)
	tx := s.codec.begin(1)
	id, err := tx.put(append(doc, `[{},{}]`...), len(doc), family{}, time.Time{}, []string{"golden/poisoned"})
	if err == nil {
		err = tx.commit(pebble.Sync)
	}
	if err != nil {
		t.Fatal(err)
	}
	s.Close()
	res := runCapped(t, "--store", dir, "traces", "verify")
	if res.ExitCode == 0 || !strings.Contains(string(res.Stdout)+string(res.Stderr), id.String()) {
		t.Errorf("verify of a poisoned store: %s", res)
	}
	res = runCapped(t, "--store", dir, "traces", "show", "golden/poisoned")
	if res.ExitCode == 0 || !strings.Contains(string(res.Stderr), id.Short()) || strings.Contains(string(res.Stderr), "panic") {
		t.Errorf("show of a poisoned run: %s", res)
	}
}
