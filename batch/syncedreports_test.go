package batch

import (
	"errors"
	"fmt"
	"sync"
	"testing"
)

// A run is said only after a sync that came after its write, in the order
// delivered; runs not written (skipped, failed) need no sync of their own;
// a sync that fails stops the saying and is returned.
func TestSyncedReports(t *testing.T) {
	var mu sync.Mutex
	var log []string
	written := 0 // writes so far (the test's store)
	durable := 0 // writes covered by a sync
	sync := func() error {
		mu.Lock()
		defer mu.Unlock()
		durable = written
		log = append(log, "sync")
		return nil
	}
	said := func(out *Recorded) {
		mu.Lock()
		defer mu.Unlock()
		if out.Index >= durable && !out.Skipped {
			t.Errorf("%s said before a sync covered it (%d writes durable)", out.Ref, durable)
		}
		log = append(log, out.Ref)
	}
	s := newSyncedReports(sync, said)
	for i := range 50 {
		out := &Recorded{Ref: fmt.Sprintf("r%d", i), Index: i, Skipped: i%10 == 9}
		if !out.Skipped {
			mu.Lock()
			written = i + 1
			mu.Unlock()
		}
		s.add(out, !out.Skipped)
	}
	if err := s.close(); err != nil {
		t.Fatal(err)
	}
	n, syncs := 0, 0
	for _, l := range log {
		if l == "sync" {
			syncs++
			continue
		}
		if want := fmt.Sprintf("r%d", n); l != want {
			t.Fatalf("said %s, want %s next: %v", l, want, log)
		}
		n++
	}
	if n != 50 || syncs == 0 || syncs > 50 {
		t.Fatalf("%d runs said with %d syncs: %v", n, syncs, log)
	}

	// A failed sync: nothing written after it is said, and close says why.
	boom := errors.New("disk gone")
	var saidAfter []string
	f := newSyncedReports(func() error { return boom }, func(out *Recorded) { saidAfter = append(saidAfter, out.Ref) })
	f.add(&Recorded{Ref: "skipped", Skipped: true}, false)
	f.add(&Recorded{Ref: "stored"}, true)
	if err := f.close(); !errors.Is(err, boom) {
		t.Fatalf("close: %v, want the sync's error", err)
	}
	for _, r := range saidAfter {
		if r == "stored" {
			t.Fatal("a run whose sync failed was said")
		}
	}
}
