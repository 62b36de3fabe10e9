// Package cores runs independent pieces of one job on every core.
package cores

import (
	"runtime"
	"sync"
	"sync/atomic"
)

// Each calls fn(0), ..., fn(n-1), as many at once as there are cores
// (GOMAXPROCS), and returns when all have returned. The calls must be
// independent: each writes only what is its own (index i of a slice made
// beforehand), so that what they make does not depend on their order.
// With one core, or one call, they run in order on the caller's goroutine.
func Each(n int, fn func(i int)) {
	workers := min(n, runtime.GOMAXPROCS(0))
	if workers <= 1 {
		for i := range n {
			fn(i)
		}
		return
	}
	var next atomic.Int64
	var wg sync.WaitGroup
	for range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := int(next.Add(1)) - 1; i < n; i = int(next.Add(1)) - 1 {
				fn(i)
			}
		}()
	}
	wg.Wait()
}
