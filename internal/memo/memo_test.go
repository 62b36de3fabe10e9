package memo

import (
	"fmt"
	"sync"
	"testing"
)

// A key is derived once, its value served after, and the memo starts
// again past its bound.
func TestBytes(t *testing.T) {
	b := Bytes[int]{Max: 3}
	calls := 0
	derive := func(k []byte) int { calls++; return len(k) }
	for range 2 {
		if v := b.Get([]byte("abcd"), derive); v != 4 {
			t.Fatalf("Get = %d, want 4", v)
		}
	}
	if calls != 1 {
		t.Fatalf("derived %d times, want once", calls)
	}
	for i := range 3 {
		b.Get(fmt.Appendf(nil, "k%d", i), derive)
	}
	if n := b.Len(); n > 3 {
		t.Fatalf("%d values held, more than Max", n)
	}
	unbounded := Bytes[int]{}
	for i := range 100 {
		unbounded.Get(fmt.Appendf(nil, "k%d", i), derive)
	}
	if n := unbounded.Len(); n != 100 {
		t.Fatalf("no bound: %d values held, want 100", n)
	}
}

// Concurrent callers get the one value a key derives to (go test -race).
func TestBytesConcurrent(t *testing.T) {
	b := Bytes[string]{Max: 8}
	var wg sync.WaitGroup
	for i := range 8 {
		wg.Go(func() {
			for j := range 100 {
				k := fmt.Appendf(nil, "%d", (i+j)%10)
				if v := b.Get(k, func(k []byte) string { return "v" + string(k) }); v != "v"+string(k) {
					t.Errorf("Get(%s) = %s", k, v)
				}
			}
		})
	}
	wg.Wait()
}
