package cores

import (
	"runtime"
	"sync/atomic"
	"testing"
)

// Each calls every index once, whatever the number of cores, and returns
// only when all calls have returned.
func TestEach(t *testing.T) {
	for _, procs := range []int{1, 2, 4} {
		old := runtime.GOMAXPROCS(procs)
		for _, n := range []int{0, 1, 3, 100} {
			calls := make([]atomic.Int32, n)
			var running, most atomic.Int32
			Each(n, func(i int) {
				r := running.Add(1)
				for m := most.Load(); r > m && !most.CompareAndSwap(m, r); m = most.Load() {
				}
				calls[i].Add(1)
				running.Add(-1)
			})
			for i := range calls {
				if c := calls[i].Load(); c != 1 {
					t.Errorf("GOMAXPROCS %d, n %d: fn(%d) called %d times", procs, n, i, c)
				}
			}
			if running.Load() != 0 || int(most.Load()) > procs {
				t.Errorf("GOMAXPROCS %d, n %d: %d calls still running at return, at most %d at once", procs, n, running.Load(), most.Load())
			}
		}
		runtime.GOMAXPROCS(old)
	}
}
