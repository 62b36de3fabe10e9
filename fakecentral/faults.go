package fakecentral

import (
	"net/http"
	"strconv"
	"time"
)

type faultState struct {
	Fault
	pat     Pattern
	left    int       // remaining applications; -1 = unlimited
	seen    int       // matching requests let through so far (Fault.After)
	spentAt time.Time // when the rate limit was spent (Fault.ResetAfter), by Options.Now
}

// taken is a fault applied to one request, with where its rate-limit
// window stands.
type taken struct {
	Fault
	elapsed time.Duration // since the run started, by Options.Now
	resetIn time.Duration // until the window resets (Fault.ResetAfter); 0 = not modelled
}

func armFaults(fs []Fault) []faultState {
	out := make([]faultState, 0, len(fs))
	for _, f := range fs {
		left := f.Times
		if left <= 0 {
			left = -1
		}
		out = append(out, faultState{Fault: f, pat: ParsePattern(f.Route), left: left})
	}
	return out
}

// takeFault returns the first armed fault matching the request and counts it.
func (c *Central) takeFault(method string, segs []string) *taken {
	c.jmu.Lock()
	defer c.jmu.Unlock()
	now := c.opts.Now()
	for i := range c.faults {
		f := &c.faults[i]
		if f.left == 0 || !f.pat.Match(method, segs) {
			continue
		}
		if f.ResetAfter > 0 && !f.spentAt.IsZero() && now.Sub(f.spentAt) >= f.ResetAfter {
			f.spentAt, f.seen = time.Time{}, 0 // the window reset: a new quota
			if f.After == 0 {
				f.left = 0 // spent when the run began: the reset lifts it
				continue
			}
		}
		if f.seen < f.After {
			f.seen++ // the rate limit is not spent yet
			continue
		}
		if f.left > 0 {
			f.left--
		}
		out := &taken{Fault: f.Fault, elapsed: now.Sub(c.start)}
		if f.ResetAfter > 0 {
			if f.spentAt.IsZero() {
				f.spentAt = now
			}
			out.resetIn = f.ResetAfter - now.Sub(f.spentAt)
		}
		return out
	}
	return nil
}

// faulted applies the first armed fault that matches the request and
// reports whether it answered it (a delay lets it be served after).
func (c *Central) faulted(w http.ResponseWriter, rq *request, e *Entry) bool {
	f := c.takeFault(rq.method, rq.segs)
	if f == nil {
		return false
	}
	e.Fault = string(f.Kind)
	return c.applyFault(w, rq, f)
}

// errDropped makes serve abort the connection after journaling.
type dropSignal struct{}

// applyFault answers the request for 429/500 (done) or waits for a delay
// (not done: the request is then served normally). A drop panics with
// http.ErrAbortHandler after the journal entry is written by serve.
func (c *Central) applyFault(w http.ResponseWriter, rq *request, f *taken) (done bool) {
	switch f.Kind {
	case Fault429:
		setRateLimitHeaders(w.Header(), c.fx.Now(), rq.segs, f)
		writeError(w, rq, &apiError{status: 429, message: "Too many requests: rate limit exceeded"})
		return true
	case Fault500:
		writeError(w, rq, &apiError{status: 500, message: "Internal server error"})
		return true
	case FaultDelay:
		t := time.NewTimer(f.Delay)
		defer t.Stop()
		select {
		case <-t.C:
		case <-rq.r.Context().Done():
		}
		return false
	case FaultDrop:
		panic(dropSignal{})
	}
	return false
}

// rateLimitPerHour is the X-RateLimit-Limit the fake answers with: the
// OpenAPI documents the header ("Request limit per hour"), not its value.
const rateLimitPerHour = 5000

// defaultRetryAfter is the notifications API's Retry-After, in seconds:
// the OpenAPI's example.
const defaultRetryAfter = 60

// setRateLimitHeaders writes the headers the OpenAPI documents on every
// 429 (all 1,641 operations that list one): X-RateLimit-Limit, -Remaining
// (0: the window is used up) and -Reset, the RFC 3339 UTC time the window
// ends by the fixture's clock: the end of the hour, or, for a modelled
// window (Fault.ResetAfter), the fixture's time now (its now plus the
// run's elapsed time) plus what is left of the window, rounded up to a
// second. Retry-After is documented on the notifications API only: there
// it is the seconds left of a modelled window, else the OpenAPI's
// example, 60 seconds, unless the fault sets it (retry_after, which any
// API answers when asked; retry_after: 1 keeps a run that honours it
// short).
func setRateLimitHeaders(h http.Header, fixtureNow time.Time, segs []string, f *taken) {
	fixtureNow = fixtureNow.UTC()
	reset := fixtureNow.Truncate(time.Hour).Add(time.Hour)
	retryAfter := f.RetryAfter
	if f.resetIn > 0 {
		left := (f.resetIn + time.Second - 1).Truncate(time.Second)
		reset = fixtureNow.Add(f.elapsed.Truncate(time.Second) + left)
		if retryAfter == 0 && len(segs) > 0 && segs[0] == "network-notifications" {
			retryAfter = int(left / time.Second)
		}
	}
	h.Set("X-RateLimit-Limit", strconv.Itoa(rateLimitPerHour))
	h.Set("X-RateLimit-Remaining", "0")
	h.Set("X-RateLimit-Reset", reset.Format("2006-01-02T15:04:05Z"))
	if retryAfter == 0 && len(segs) > 0 && segs[0] == "network-notifications" {
		retryAfter = defaultRetryAfter
	}
	if retryAfter > 0 {
		h.Set("Retry-After", strconv.Itoa(retryAfter))
	}
}
