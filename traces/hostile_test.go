package traces

import (
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/cockroachdb/pebble/v2"

	"github.com/mcpbench/bench/internal/testbin"
)

// Hostile packs (issue 16): each is imported by the bench binary under
// testbin's memory cap, and must be refused, exit 2, with an error that
// says what and names the bound, within testbin.PeakRSSLimit, and create no
// store.

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
	id, err := tx.put(doc, family{}, runInfo{Side: []byte(`[{},{}]`)}, []string{"golden/poisoned"})
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
