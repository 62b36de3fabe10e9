package atomicfile

import (
	"errors"
	"io"
	"os"
	"path/filepath"
	"testing"
)

func TestWriteReplacesAPlantedSymlink(t *testing.T) {
	for _, tc := range []struct {
		why    string
		plant  func(t *testing.T, target, victim string)
		victim bool // the victim file exists and must stay as it is
	}{
		{"a symlink to a file bench must not overwrite", func(t *testing.T, target, victim string) {
			must(t, os.Symlink(victim, target))
		}, true},
		{"a dangling symlink, that os.Create would create the file of", func(t *testing.T, target, victim string) {
			must(t, os.Symlink(victim, target))
		}, false},
		{"an old report, replaced", func(t *testing.T, target, _ string) {
			must(t, os.WriteFile(target, []byte("old"), 0o600))
		}, false},
	} {
		t.Run(tc.why, func(t *testing.T) {
			dir, elsewhere := t.TempDir(), t.TempDir()
			target, victim := filepath.Join(dir, "REPORT.md"), filepath.Join(elsewhere, "victim")
			if tc.victim {
				must(t, os.WriteFile(victim, []byte("keep me"), 0o600))
			}
			tc.plant(t, target, victim)
			must(t, WriteFile(target, []byte("report"), 0o644))
			fi, err := os.Lstat(target)
			must(t, err)
			if !fi.Mode().IsRegular() || fi.Mode().Perm()&0o600 != 0o600 {
				t.Errorf("%s is %v, want a regular file", target, fi.Mode())
			}
			if b, _ := os.ReadFile(target); string(b) != "report" {
				t.Errorf("%s holds %q", target, b)
			}
			b, err := os.ReadFile(victim)
			switch {
			case tc.victim && string(b) != "keep me":
				t.Errorf("the file the symlink pointed to was changed: %q, %v", b, err)
			case !tc.victim && !errors.Is(err, os.ErrNotExist):
				t.Errorf("the dangling symlink's target was created: %q, %v", b, err)
			}
			onlyFile(t, dir, "REPORT.md")
		})
	}
}

func TestWriteFailureLeavesTheOldFile(t *testing.T) {
	dir := t.TempDir()
	target := filepath.Join(dir, "REPORT.json")
	must(t, os.WriteFile(target, []byte("old"), 0o644))
	boom := errors.New("boom")
	err := Write(target, 0o644, func(w io.Writer) error {
		w.Write([]byte("half"))
		return boom
	})
	if !errors.Is(err, boom) {
		t.Fatalf("Write: %v, want the fill error", err)
	}
	if b, _ := os.ReadFile(target); string(b) != "old" {
		t.Errorf("a failed write changed the old file: %q", b)
	}
	onlyFile(t, dir, "REPORT.json")
}

func TestWriteIntoAMissingDirectoryFails(t *testing.T) {
	if err := WriteFile(filepath.Join(t.TempDir(), "no", "REPORT.md"), nil, 0o644); err == nil {
		t.Error("writing into a directory that does not exist: no error")
	}
}

// onlyFile fails unless dir holds exactly name: no temporary file left.
func onlyFile(t *testing.T, dir, name string) {
	t.Helper()
	ents, err := os.ReadDir(dir)
	must(t, err)
	if len(ents) != 1 || ents[0].Name() != name {
		var names []string
		for _, e := range ents {
			names = append(names, e.Name())
		}
		t.Errorf("%s holds %v, want only %s", dir, names, name)
	}
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}
