package replayer

import (
	"sync"
	"time"
)

// DefaultResolution is the resolution at which a Clock counts live time:
// the event times of a replay and the time its fake Central sees move in
// whole steps of it while tools run, so ordinary calls against the fake
// (a few milliseconds) do not move them at all. (How long a tool call took
// is measured on the wall clock, as in a recording, and scored at
// scoring.LatencyResolution, the same step.)
const DefaultResolution = 500 * time.Millisecond

// Clock is a replay's time source (recorder.Options.Now). Its time moves
// when a Model serves a recorded turn (by the recorded latency, at once)
// and, while running, with the wall clock at its resolution. A Clock
// starts paused; a Model resumes it when it hands a response to the loop
// (tools run next) and pauses it when the next request arrives. It is safe
// for concurrent use (the fake Central reads it from its own goroutines).
type Clock struct {
	mu         sync.Mutex
	base       time.Time
	virtual    time.Duration
	wall       func() time.Time
	resolution time.Duration
	running    bool
	last       time.Time
}

// NewClock returns a paused clock that reads start. wall is the wall clock
// (time.Now in production); nil, or a resolution <= 0, counts no live time
// at all: only recorded model latency moves the clock.
func NewClock(start time.Time, wall func() time.Time, resolution time.Duration) *Clock {
	if resolution <= 0 {
		wall = nil
	}
	return &Clock{base: start, wall: wall, resolution: resolution}
}

// Now returns the clock's time.
func (c *Clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.tick()
	return c.base.Add(c.virtual)
}

// tick adds the wall time since the last reading, rounded down per
// interval, when running.
func (c *Clock) tick() {
	if !c.running || c.wall == nil {
		return
	}
	w := c.wall()
	c.virtual += w.Sub(c.last).Truncate(c.resolution)
	c.last = w
}

// Rebase sets the clock to t, paused, before a run. Only differences of
// its readings reach a trace, so the base may be the wall time: the fake
// Central's per-run certificates are then valid, however much recorded
// latency earlier runs added.
func (c *Clock) Rebase(t time.Time) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.base, c.virtual, c.running = t, 0, false
}

// Advance moves the clock by d at once: a recorded latency.
func (c *Clock) Advance(d time.Duration) {
	if c == nil || d <= 0 {
		return
	}
	c.mu.Lock()
	c.virtual += d
	c.mu.Unlock()
}

// Resume starts counting live time.
func (c *Clock) Resume() {
	if c == nil {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.running {
		return
	}
	c.running = true
	if c.wall != nil {
		c.last = c.wall()
	}
}

// Pause stops counting live time (the time spent so far is kept).
func (c *Clock) Pause() {
	if c == nil {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	c.tick()
	c.running = false
}
