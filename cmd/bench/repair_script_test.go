package main

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"

	"github.com/rogpeppe/go-internal/testscript"

	"github.com/mcpbench/bench/traces"
)

// Commands of testdata/script/repair.txtar.

// corruptrun STORE flips one byte of the stored record of the store's last
// run (the highest ID: its table block holds runs only, not the refs and
// metadata that sort before them), in its table file, as bit rot would.
func cmdCorruptRun(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 1 {
		ts.Fatalf("usage: corruptrun STORE")
	}
	dir := ts.MkAbs(args[0])
	s, err := traces.Open(dir, nil)
	ts.Check(err)
	runs, err := s.Runs()
	s.Close()
	ts.Check(err)
	if len(runs) == 0 {
		ts.Fatalf("no runs in %s", args[0])
	}
	last := runs[len(runs)-1]
	file, err := flipRun(dir, last)
	ts.Check(err)
	ts.Logf("flipped a byte of run %s in %s", last.Short(), file)
}

// flipRun flips a byte of run id's stored record in the store's table
// files (run bench traces gc first, to flush them there).
func flipRun(dir string, id traces.ID) (string, error) {
	files, _ := filepath.Glob(filepath.Join(dir, "db", "*.sst"))
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			return "", err
		}
		// The ID is in the table as the value of its refs (and base), which
		// sort first, and last in the run's key (past the prefix a block
		// elides), followed by its 8-byte trailer and the record.
		if i := bytes.LastIndex(b, id[8:]); i >= 0 {
			b[i+len(id)-8+8+16] ^= 0xff
			return filepath.Base(f), os.WriteFile(f, b, 0o644)
		}
	}
	return "", fmt.Errorf("run %s is in no table file of %s", id.Short(), dir)
}

// resumed BEFORE REPAIR KEPT RECORD AFTER checks that a record resumed
// after a repair recorded exactly what the repair dropped: BEFORE, KEPT
// and AFTER are `bench traces ls` before the damage, after the repair and
// after the record; REPAIR and RECORD their outputs.
func cmdResumed(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 5 {
		ts.Fatalf("usage: resumed BEFORE REPAIR KEPT RECORD AFTER")
	}
	read := func(name string) string { return ts.ReadFile(name) }
	refs := func(ls string) map[string]string { // ref -> short run ID
		out := map[string]string{}
		for _, line := range strings.Split(strings.TrimSpace(ls), "\n") {
			if f := strings.Fields(line); len(f) == 2 {
				out[f[1]] = f[0]
			}
		}
		return out
	}
	before, kept, after := refs(read(args[0])), refs(read(args[2])), refs(read(args[4]))
	var dropped []string
	for _, m := range regexp.MustCompile(`(?m)^dropped ref (\S+) `).FindAllStringSubmatch(read(args[1]), -1) {
		dropped = append(dropped, m[1])
	}
	var missing []string // what the repair took: dropped, or lost with the damage
	for r := range before {
		if _, ok := kept[r]; !ok {
			missing = append(missing, r)
		}
	}
	slices.Sort(missing)
	slices.Sort(dropped)
	if len(missing) == 0 {
		ts.Fatalf("the repair kept every ref: the damage hit none")
	}
	for _, r := range dropped {
		if !slices.Contains(missing, r) {
			ts.Fatalf("the repair says it dropped %s, which it kept", r)
		}
	}
	for r, id := range kept {
		if after[r] != id {
			ts.Fatalf("ref %s was kept by the repair as run %s, and is run %q after the record: recorded again", r, id, after[r])
		}
	}
	for r := range before {
		if _, ok := after[r]; !ok {
			ts.Fatalf("ref %s, dropped by the repair, was not recorded again", r)
		}
	}
	want := fmt.Sprintf("recorded %d of %d runs (%d already stored)", len(missing), len(before), len(kept))
	if !strings.Contains(read(args[3]), want) {
		ts.Fatalf("the resumed record does not say %q:\n%s", want, read(args[3]))
	}
	ts.Logf("the repair dropped %d refs (%d named), the resumed record recorded exactly those", len(missing), len(dropped))
}
