package cores

import (
	"slices"
	"sync"
	"testing"
)

// Background runs every task, in order on one thread, and Stop returns
// only once they have run.
func TestBackgroundOrder(t *testing.T) {
	b := StartBackground(1)
	var got []int
	for i := range 200 { // more than the queue holds: Go waits, nothing is lost
		b.Go(func() { got = append(got, i) })
	}
	b.Stop()
	want := make([]int, 200)
	for i := range want {
		want[i] = i
	}
	if !slices.Equal(got, want) {
		t.Fatalf("tasks ran %v, want 0..199 in order", got)
	}
}

// With several threads every task runs once.
func TestBackgroundThreads(t *testing.T) {
	b := StartBackground(3)
	var mu sync.Mutex
	seen := map[int]int{}
	for i := range 100 {
		b.Go(func() { mu.Lock(); seen[i]++; mu.Unlock() })
	}
	b.Stop()
	for i := range 100 {
		if seen[i] != 1 {
			t.Fatalf("task %d ran %d times", i, seen[i])
		}
	}
}
