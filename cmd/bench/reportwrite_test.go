package main

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// plantedLinks puts a symlink at each report name in dir, as a pull request
// can in its checkout: the first to a file outside that bench must not
// overwrite, the others dangling, to a file bench must not create.
type plantedLinks struct {
	dir      string
	names    []string
	victim   string // an existing file a link points to
	dangling []string
}

func plantLinks(t *testing.T, dir string, names ...string) *plantedLinks {
	t.Helper()
	outside := t.TempDir()
	p := &plantedLinks{dir: dir, names: names, victim: filepath.Join(outside, "victim")}
	must(t, os.MkdirAll(dir, 0o755))
	must(t, os.WriteFile(p.victim, []byte("not bench's\n"), 0o600))
	for i, n := range names {
		target := p.victim
		if i > 0 {
			target = filepath.Join(outside, "created-"+n)
			p.dangling = append(p.dangling, target)
		}
		must(t, os.Symlink(target, filepath.Join(dir, n)))
	}
	return p
}

// check fails unless every report is a regular file that bench wrote, the
// files the links pointed to are untouched, and no temporary file is left.
func (p *plantedLinks) check(t *testing.T) {
	t.Helper()
	for _, n := range p.names {
		fi, err := os.Lstat(filepath.Join(p.dir, n))
		switch {
		case err != nil:
			t.Error(err)
		case !fi.Mode().IsRegular() || fi.Size() == 0:
			t.Errorf("%s is %v, %d bytes; want the report, a regular file", n, fi.Mode(), fi.Size())
		}
	}
	if b, err := os.ReadFile(p.victim); err != nil || string(b) != "not bench's\n" {
		t.Errorf("the file a planted symlink pointed to was written: %q, %v", b, err)
	}
	for _, d := range p.dangling {
		if _, err := os.Lstat(d); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("bench created %s through a dangling symlink", d)
		}
	}
	ents, _ := os.ReadDir(p.dir)
	for _, e := range ents {
		if strings.Contains(e.Name(), ".tmp-") {
			t.Errorf("temporary file left in the report directory: %s", e.Name())
		}
	}
}

// Issue 16, row 10: a symlink planted at a report's path is replaced, not
// followed (in CI the report directory is inside the pull request's
// checkout), for every file bench writes as a report. The directory itself
// is followed when it is a symlink: the user named it.
func TestReportWritesReplacePlantedSymlinks(t *testing.T) {
	t.Run("replay --report-dir", func(t *testing.T) {
		f := recordedFixture(t)
		dir := filepath.Join(t.TempDir(), "reports")
		p := plantLinks(t, dir, "REPORT.md", "REPORT.txt", "REPORT.json", "REPORT.xml")
		replayCLI(t, f, dir, "--latency-resolution", "0")
		p.check(t)
	})
	t.Run("report --release", func(t *testing.T) {
		store := scoringStore(t)
		real := t.TempDir()
		out := filepath.Join(t.TempDir(), "docs")
		must(t, os.Symlink(real, out))
		p := plantLinks(t, real, "benchmark-results-1.2.0.md", "benchmark-results-1.2.0.svg", "benchmark-results-1.2.0.json")
		if code, _, stderr := runBench(t, "--store", store, "report", "--release", "1.2.0", "--from", "base/", "--scenarios", testScenarios, "--out-dir", out); code != exitOK {
			t.Fatalf("report --release: exit %d\n%s", code, stderr)
		}
		p.check(t)
	})
}
