package main

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mcpbench/bench/traces"
)

// A command that reads or maintains a store refuses a directory that holds
// none (a typo'd --store), exit 2, and does not create it; only record and
// import create a store.
func TestNoStoreCLI(t *testing.T) {
	dir := t.TempDir()
	store := filepath.Join(dir, "typo")
	prof := filepath.Join(dir, "p.yaml")
	if err := os.WriteFile(prof, []byte("name: p\nrepo: local\ncommand: [\"true\"]\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, args := range [][]string{
		{"traces", "ls"},
		{"traces", "show", "golden/x"},
		{"traces", "verify"},
		{"traces", "stats"},
		{"traces", "gc"},
		{"traces", "export", "-o", filepath.Join(dir, "x.benchpack")},
		{"traces", "migrate"},
		{"traces", "repair"},
		{"traces", "repair", "--dry-run"},
		{"report"},
		{"diff", "golden/a/", "golden/b/"},
		{"replay", "--suite", "alerts", "--server", prof},
	} {
		code, out, errOut := runArgs(t, append([]string{"--store", store}, args...)...)
		if code != exitInvalidInput || !strings.Contains(errOut, "no store at "+store) {
			t.Errorf("bench %v: exit %d, %q%q; want exit 2, no store at %s", args, code, out, errOut, store)
		}
		if _, err := os.Stat(store); !os.IsNotExist(err) {
			t.Fatalf("bench %v created %s", args, store)
		}
	}
}

// While a writer holds the store (a record), the commands that read it
// work, on a snapshot; one that writes is refused once, with the holder's
// pid and command.
func TestReadWhileHeld(t *testing.T) {
	store := filepath.Join(t.TempDir(), "store")
	held, err := traces.Open(store, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer held.Close()
	for i := range 3 {
		run := syntheticRun(0, i)
		if _, err := held.PutRun(run, traces.RunRef("golden", "reference", "baseline", run.Manifest.Scenario.ID, i)); err != nil {
			t.Fatal(err)
		}
	}
	ref := "golden/reference/baseline/client-diagnosis-001/1"
	for _, tt := range []struct {
		args []string
		want string
	}{
		{[]string{"traces", "ls"}, ref},
		{[]string{"traces", "show", ref}, "scenario client-diagnosis-001"},
		{[]string{"traces", "verify"}, "checked 3 runs (1 bases), 3 refs: 0 problems"},
		{[]string{"traces", "stats"}, "runs          3"},
		{[]string{"traces", "export", "-o", filepath.Join(t.TempDir(), "p.benchpack")}, "exported 3 refs, 3 runs"},
	} {
		code, out, errOut := runArgs(t, append([]string{"--store", store}, tt.args...)...)
		if code != exitOK || !strings.Contains(out, tt.want) {
			t.Errorf("bench %v beside a writer: exit %d, %q%q; want %q", tt.args, code, out, errOut, tt.want)
		}
	}
	code, _, errOut := runArgs(t, "--store", store, "traces", "gc")
	want := fmt.Sprintf("store %s is in use by pid %d (%s", store, os.Getpid(), filepath.Base(os.Args[0]))
	if code != exitSetup || !strings.Contains(errOut, want) || strings.Count(errOut, "in use") != 1 {
		t.Errorf("gc beside a writer: exit %d, %q; want exit 4 and %q once", code, errOut, want)
	}
	if snaps, _ := filepath.Glob(filepath.Join(store, ".snapshot-*")); len(snaps) != 0 {
		t.Errorf("snapshots left: %v", snaps)
	}
}

// record --force on a damaged store (one flipped byte in the record of a
// base) stops at the first run it cannot store, with one message that names
// the store and what to run, in pebble's words; not a line per run. record
// without --force says the same before it runs anything.
func TestRecordForceOnDamagedStore(t *testing.T) {
	dir := t.TempDir()
	prof := referenceProfileFile(t, dir)
	store := filepath.Join(dir, "store")
	args := []string{"--store", store, "record", "--suite", "alerts", "--server", prof, "--model", "oracle", "--runs", "2"}
	if code, out, errOut := benchCLI(t, nil, args...); code != exitOK {
		t.Fatalf("recording: exit %d\n%s%s", code, out, errOut)
	}
	if code, out, errOut := benchCLI(t, nil, "--store", store, "traces", "gc"); code != exitOK {
		t.Fatalf("gc: exit %d\n%s%s", code, out, errOut)
	}
	// The base of a family: the run of index 0 with the highest ID, whose
	// table block holds runs only.
	s, err := traces.Open(store, nil)
	if err != nil {
		t.Fatal(err)
	}
	refs, _ := s.Refs("golden/")
	s.Close()
	var base traces.Ref
	for _, r := range refs {
		if strings.HasSuffix(r.Name, "/0") && bytes.Compare(r.Run[:], base.Run[:]) > 0 {
			base = r
		}
	}
	if _, err := flipRun(store, base.Run); err != nil {
		t.Fatal(err)
	}
	for _, extra := range [][]string{{"--force"}, nil} {
		code, out, errOut := benchCLI(t, nil, append(args, extra...)...)
		hint := fmt.Sprintf("store %s is damaged: run `bench traces repair --store %s`", store, store)
		if code != exitSetup || strings.Count(errOut, hint) != 1 || strings.Contains(errOut+out, "carrier") || strings.Count(errOut, ": corrupt") != 1 {
			t.Errorf("record %v on a damaged store: exit %d\n%s%s\nwant exit 4 and the damage said once", extra, code, out, errOut)
		}
		if extra == nil && (strings.Contains(out, "already stored") || strings.Contains(errOut, "answered")) {
			t.Errorf("record on a damaged store ran or counted runs as stored:\n%s%s", out, errOut)
		}
	}
}
