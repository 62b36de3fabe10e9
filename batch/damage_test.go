package batch

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/mcpbench/bench/replayer"
	"github.com/mcpbench/bench/scenarios"
	"github.com/mcpbench/bench/traces"
)

// A store with one run whose table block fails its checksum: a resumed
// recording and a replay each stop before they run or store anything, with
// an error wrapping traces.ErrCorrupt; the damaged run is never counted as
// recorded.
func TestDamageStopsRecordAndReplay(t *testing.T) {
	p := reference(t)
	list := pick(t, "alerts-001", "nac-001", "client-diagnosis-001", "firmware-001", "wlan-change-001", "config-compliance-001")
	dir := t.TempDir()
	store, err := traces.Open(dir, nil)
	if err != nil {
		t.Fatal(err)
	}
	record(t, store, p, list, 3, false)
	if err := store.Compact(context.Background()); err != nil {
		t.Fatal(err)
	}
	runs, _ := store.Runs()
	refs, _ := store.Refs("")
	store.Close()
	// Flip a byte of a run's record: the run with the highest ID, whose key
	// is the last copy of its ID in the table (refs and bases, which hold
	// it too, sort first). When the table is small, that record may share
	// the first block with the store's metadata (how large the records are
	// varies with what is kept beside them), and the store would not open
	// at all: then the flip is undone and the next run is tried.
	files, _ := filepath.Glob(filepath.Join(dir, "db", "*.sst"))
	flipped := false
	for k := len(runs) - 1; k >= 0 && !flipped; k-- {
		id := runs[k]
		for _, f := range files {
			orig, _ := os.ReadFile(f)
			i := bytes.LastIndex(orig, id[8:])
			if i < 0 {
				continue
			}
			b := bytes.Clone(orig)
			b[i+len(id)+16] ^= 0xff
			os.WriteFile(f, b, 0o644)
			if s, err := traces.Open(dir, nil); err == nil {
				s.Close()
				flipped = true
			} else {
				os.WriteFile(f, orig, 0o644)
			}
			break
		}
	}
	if !flipped {
		t.Fatal("no run's record could be damaged apart from the store's metadata")
	}

	store, err = traces.Open(dir, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer store.Close()
	var specs []RunSpec
	for _, sc := range list {
		for i := range 3 {
			specs = append(specs, RunSpec{Scenario: sc, Index: i})
		}
	}
	ran := 0
	res, err := (&Record{
		Store: store, Profile: p, Suite: "golden", Runs: specs,
		ModelRef: traces.ModelRef{Provider: "baseline", Name: "baseline"}, NewModel: baselineModel,
		Progress: func(*Recorded) { ran++ },
	}).Run(context.Background())
	if !errors.Is(err, traces.ErrCorrupt) || res != nil || ran != 0 {
		t.Errorf("resumed record on a damaged store: %v, %+v, %d runs delivered; want ErrCorrupt before any run", err, res, ran)
	}
	sel := map[string]*scenarios.Scenario{}
	for _, sc := range list {
		sel[sc.ID] = sc
	}
	_, err = (&Replay{
		Options: Options{Parallel: 2}, Store: store, Profile: p, Refs: refs, Scenarios: sel,
		Mode: replayer.Strict, Resolution: replayer.DefaultResolution, Score: scoreFor(list),
	}).Run(context.Background())
	if !errors.Is(err, traces.ErrCorrupt) {
		t.Errorf("replay of a damaged store: %v; want ErrCorrupt", err)
	}
	if got, _ := store.Refs(ReplayRefPrefix); len(got) != 0 {
		t.Errorf("the replay stored %d runs in the damaged store", len(got))
	}
}
