package batch

import (
	"cmp"
	"context"
	"errors"
	"slices"
	"sync"
	"time"

	"github.com/mcpbench/bench/llm"
	"github.com/mcpbench/bench/recorder"
	"github.com/mcpbench/bench/scenarios"
	"github.com/mcpbench/bench/traces"
)

// Options are what every batch takes.
type Options struct {
	// Parallel is how many runs execute at once. Default 1.
	Parallel int
	// Recorder configures the recorders that execute the runs. Its Now is
	// the batch's to set (a replay's clock).
	Recorder recorder.Options
}

func (o *Options) parallel() int { return max(1, o.Parallel) }

// item is one run of a batch.
type item struct {
	index int
	sc    *scenarios.Scenario // the scenario it is known to run, for prestart; nil: not known yet
	group string              // server group under reuse; "" when not reused
	first bool                // the first item of its group in its worker's queue
}

// pipeline executes items on workers: each item is read (ahead of its
// worker, on a static queue), executed, then finished beside the worker's
// next item, and its result delivered in item order. An error from read,
// execute or finish stops the batch; of the errors seen, the earliest
// item's is returned.
type pipeline[In, Mid, Out any] struct {
	workers int
	// static assigns server groups to workers ahead of time (a replay);
	// otherwise workers take the next item from one shared queue.
	static bool
	// reuse: items of one group share a server, so a server is prestarted
	// per group, not per item.
	reuse bool
	items []item

	// read returns what execute needs of an item; it runs in the
	// background while the worker executes the items before (up to
	// readAhead items ahead on a static queue). Nil reads nothing.
	read func(it item) (In, error)
	// prestart starts the server an item will need, in the background.
	prestart func(w int, it item)
	// prepare works out what an item's run will need of its scenario (a
	// compiled result schema), in the background while the item before it
	// executes, so that the work is not on the run's path. Nil prepares
	// nothing; an item whose scenario is not known yet is not prepared.
	prepare func(w int, it item)
	// execute runs an item on worker w.
	execute func(ctx context.Context, w int, it item, in In) (Mid, error)
	// finish completes an executed item beside the worker's next one.
	finish func(it item, m Mid) (Out, error)
	// deliver receives each result in item order, from one goroutine.
	deliver func(it item, out Out)

	// first and last are when the first item started executing and the
	// last result was delivered (wall clock, for measuring bench).
	mu          sync.Mutex
	first, last time.Time
}

// Times are when a batch's first run started and its last run was done
// (stored and scored): what a caller's own start and exit add is the
// batch's fixed cost. Calls is the wall time its runs spent in tool calls
// sent to the server (callTime): the rest of the span is bench's own path
// between them, and what finishing the last run adds.
type Times struct {
	FirstStart, LastEnd time.Time
	Calls               time.Duration
}

// callTime is the wall time run spent in the tool calls it sent to the
// server, as its trace times each: from bench's checking the arguments to
// the result's being in bench's hands. The calls bench answers itself (the
// harness's submit_result, arguments it refused) are left out, as the fair
// floor (scripts/bench/floor) leaves them out.
func callTime(run *traces.Run) time.Duration {
	var us int64
	for _, e := range run.Events {
		if e.Kind == traces.KindCall && e.Call != nil && e.Call.Invalid == "" && e.Call.Tool != llm.SubmitTool {
			us += e.Call.LatencyUS
		}
	}
	return time.Duration(us) * time.Microsecond
}

func (p *pipeline[In, Mid, Out]) times() Times {
	p.mu.Lock()
	defer p.mu.Unlock()
	return Times{FirstStart: p.first, LastEnd: p.last}
}

type outcome[Out any] struct {
	index int
	out   Out
	err   error
}

func (p *pipeline[In, Mid, Out]) run(ctx context.Context) error {
	wctx, stop := context.WithCancel(ctx)
	defer stop()
	done := make(chan outcome[Out], p.workers)
	var wg sync.WaitGroup
	next := p.sources()
	for w := range p.workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			p.work(wctx, w, next(w), done)
		}()
	}
	go func() { wg.Wait(); close(done) }()

	pending := map[int]outcome[Out]{}
	nextIndex, errAt := 0, len(p.items)
	var firstErr error
	for d := range done {
		if d.err != nil {
			if firstErr != nil && ctx.Err() == nil && errors.Is(d.err, context.Canceled) {
				continue // stopped by the first error, not an error of its own
			}
			if d.index < errAt {
				firstErr, errAt = d.err, d.index
			}
			stop()
			continue
		}
		if firstErr != nil {
			continue
		}
		pending[d.index] = d
		for {
			r, ok := pending[nextIndex]
			if !ok {
				break
			}
			delete(pending, nextIndex)
			p.deliver(p.items[nextIndex], r.out)
			p.mu.Lock()
			p.last = time.Now()
			p.mu.Unlock()
			nextIndex++
		}
	}
	if firstErr != nil {
		return firstErr
	}
	return ctx.Err()
}

// source hands a worker its items: take returns the next one (ok false at
// the end), later those that will come after it, for the worker to
// prestart the server of the next that needs one.
type source struct {
	take func() (item, bool)
	// later returns the items after the one taken last, in the order they
	// will come (a static queue's rest; the shared queue's next item).
	later func() []item
}

// sources returns each worker's source.
func (p *pipeline[In, Mid, Out]) sources() func(w int) source {
	if !p.static {
		var mu sync.Mutex
		pos := 0
		shared := source{
			take: func() (item, bool) {
				mu.Lock()
				defer mu.Unlock()
				if pos >= len(p.items) {
					return item{}, false
				}
				pos++
				return p.items[pos-1], true
			},
			later: func() []item {
				mu.Lock()
				defer mu.Unlock()
				return p.items[pos:min(pos+1, len(p.items))]
			},
		}
		return func(int) source { return shared }
	}
	queues := assign(p.items, p.workers)
	return func(w int) source {
		q, pos := queues[w], 0
		return source{
			take: func() (item, bool) {
				if pos >= len(q) {
					return item{}, false
				}
				pos++
				return q[pos-1], true
			},
			later: func() []item { return q[pos:] },
		}
	}
}

// assign gives the items' groups to workers ahead of time, the largest
// first to the least loaded, so that each worker knows its next group and
// can start its server early. A worker's queue holds its groups one after
// the other (a group's runs share one server in turn), in the order of
// their first items, and marks each group's first item.
func assign(items []item, workers int) [][]item {
	var groups [][]item
	at := map[string]int{}
	for _, it := range items {
		key := it.group
		if key == "" { // a group of its own
			groups = append(groups, []item{it})
			continue
		}
		g, ok := at[key]
		if !ok {
			g = len(groups)
			at[key] = g
			groups = append(groups, nil)
		}
		groups[g] = append(groups[g], it)
	}
	order := make([]int, len(groups))
	for i := range order {
		order[i] = i
	}
	slices.SortStableFunc(order, func(a, b int) int { return cmp.Compare(len(groups[b]), len(groups[a])) })
	assigned := make([][][]item, workers)
	load := make([]int, workers)
	for _, g := range order {
		w := slices.Index(load, slices.Min(load))
		assigned[w] = append(assigned[w], groups[g])
		load[w] += len(groups[g])
	}
	queues := make([][]item, workers)
	for w, gs := range assigned {
		slices.SortFunc(gs, func(a, b []item) int { return cmp.Compare(a[0].index, b[0].index) })
		for _, g := range gs {
			g[0].first = true
			queues[w] = append(queues[w], g...)
		}
	}
	return queues
}

// work runs one worker: its items in order, each read while those before
// execute, finished beside the next.
func (p *pipeline[In, Mid, Out]) work(ctx context.Context, w int, src source, done chan<- outcome[Out]) {
	var finishing, preparing sync.WaitGroup
	defer finishing.Wait()
	defer preparing.Wait()
	slots := make(chan struct{}, 2) // runs being finished at once
	type read struct {
		in  In
		err error
	}
	reading := func(it item) func() (In, error) {
		if p.read == nil {
			return func() (In, error) { var zero In; return zero, nil }
		}
		ch := make(chan read, 1)
		go func() {
			in, err := p.read(it)
			ch <- read{in, err}
		}()
		return func() (In, error) { r := <-ch; return r.in, r.err }
	}
	// A static queue's next items are read readAhead ahead: a run shorter
	// than the read of the next one (an answer without a tool call) would
	// otherwise wait for it.
	ahead := map[int]func() (In, error){} // item index -> its read in flight
	readOf := func(it item) func() (In, error) {
		if get, ok := ahead[it.index]; ok {
			delete(ahead, it.index)
			return get
		}
		return reading(it)
	}
	it, ok := src.take()
	if !ok {
		return
	}
	get := readOf(it)
	for ok {
		later := src.later()
		if p.static {
			for _, l := range later[:min(readAhead, len(later))] {
				if _, ok := ahead[l.index]; !ok {
					ahead[l.index] = reading(l)
				}
			}
		}
		if ctx.Err() != nil {
			// Stopped: let the reads in flight finish before the store closes.
			get()
			for _, g := range ahead {
				g()
			}
			return
		}
		p.prestartAfter(w, it, later)
		if p.prepare != nil && len(later) > 0 && later[0].sc != nil {
			preparing.Add(1)
			go func(next item) {
				defer preparing.Done()
				p.prepare(w, next)
			}(later[0])
		}
		p.mu.Lock()
		if p.first.IsZero() {
			p.first = time.Now()
		}
		p.mu.Unlock()
		in, err := get()
		var m Mid
		if err == nil {
			m, err = p.execute(ctx, w, it, in)
		}
		if err != nil {
			done <- outcome[Out]{index: it.index, err: err}
		} else {
			slots <- struct{}{}
			finishing.Add(1)
			go func(it item, m Mid) {
				defer func() { <-slots; finishing.Done() }()
				out, err := p.finish(it, m)
				done <- outcome[Out]{index: it.index, out: out, err: err}
			}(it, m)
		}
		if it, ok = src.take(); ok {
			get = readOf(it)
		}
	}
}

// readAhead is how many items a worker of a static queue reads ahead.
const readAhead = 3

// prestartAfter starts, while it executes, the server of the item that will
// need one next: the next item's, or with reuse the next group's, at this
// group's first item.
func (p *pipeline[In, Mid, Out]) prestartAfter(w int, it item, later []item) {
	if p.prestart == nil {
		return
	}
	switch {
	case !p.reuse && len(later) > 0:
		if later[0].sc != nil {
			p.prestart(w, later[0])
		}
	case p.reuse && p.static && it.first:
		for _, l := range later {
			if l.sc != nil && l.first {
				p.prestart(w, l)
				break
			}
		}
	case p.reuse && !p.static && len(later) > 0 && later[0].group != it.group:
		// The next item's server is this one's when they share a group: it
		// is in use now, and starting another would start one too many.
		p.prestart(w, later[0])
	}
}
