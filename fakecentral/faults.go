package fakecentral

import (
	"net/http"
	"strconv"
	"time"
)

type faultState struct {
	Fault
	pat  Pattern
	left int // remaining applications; -1 = unlimited
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
func (c *Central) takeFault(method string, segs []string) *Fault {
	c.jmu.Lock()
	defer c.jmu.Unlock()
	for i := range c.faults {
		f := &c.faults[i]
		if f.left == 0 || !f.pat.Match(method, segs) {
			continue
		}
		if f.left > 0 {
			f.left--
		}
		out := f.Fault
		return &out
	}
	return nil
}

// errDropped makes serve abort the connection after journaling.
type dropSignal struct{}

// applyFault answers the request for 429/500 (done) or waits for a delay
// (not done: the request is then served normally). A drop panics with
// http.ErrAbortHandler after the journal entry is written by serve.
func (c *Central) applyFault(w http.ResponseWriter, rq *request, f *Fault) (done bool) {
	switch f.Kind {
	case Fault429:
		if f.RetryAfter > 0 {
			w.Header().Set("Retry-After", strconv.Itoa(f.RetryAfter))
		}
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
