package cores

import (
	"runtime"
	"sync"
)

// Background runs work that nothing waits for at once (reading the next
// runs ahead, storing and scoring the last) on OS threads of its own at
// the lowest CPU priority (nice 19 on Linux; elsewhere the default). On a
// machine whose cores the server under test also needs, that work then
// takes the CPU that the server and a run's own path leave idle, instead
// of slowing them down: the scheduler runs a nice-19 thread when nothing
// else of normal priority wants the core, or for about 1.5% of it.
//
// What a task starts (a goroutine of its own) runs at normal priority.
// Tasks run in the order given on one thread; with more threads, as many
// at once. A task must not wait for a task given after it.
type Background struct {
	tasks chan func()
	wg    sync.WaitGroup
}

// StartBackground starts threads threads (at least one).
func StartBackground(threads int) *Background {
	b := &Background{tasks: make(chan func(), 64)}
	for range max(1, threads) {
		b.wg.Add(1)
		go func() {
			defer b.wg.Done()
			// Never unlocked: the thread, its priority lowered, ends with
			// the goroutine instead of running other goroutines.
			runtime.LockOSThread()
			lowerPriority()
			for f := range b.tasks {
				f()
			}
		}()
	}
	return b
}

// Go queues f. It blocks while the queue is full (64 tasks).
func (b *Background) Go(f func()) { b.tasks <- f }

// Stop runs the tasks queued and ends the threads. Go must not be called
// after it.
func (b *Background) Stop() {
	close(b.tasks)
	b.wg.Wait()
}
