package scoring

// scoreThrottling measures what a server did under a rate limit
// (docs/methodology.md, "Rate limits"): each endpoint (method and path) a
// 429 answered is followed to its next 2xx. Requests to it after its first
// 429 are the retries the limit cost; an endpoint with no 2xx after is one
// the server gave up on; the time from the first 429 to that 2xx (or the
// run's end) is the time it stalled. Start-up requests are left out.
func scoreThrottling(rm *RunMetrics, ev *events) {
	type state struct {
		firstUS int64
		done    bool
	}
	throttled := map[string]*state{}
	var order []string
	for i, h := range ev.http {
		if h.Boot {
			continue
		}
		key := h.Method + " " + h.Path
		st := throttled[key]
		switch {
		case h.Status == 429:
			rm.Throttled++
			if st == nil {
				throttled[key] = &state{firstUS: ev.httpAt[i]}
				order = append(order, key)
				continue
			}
			if !st.done {
				rm.ThrottleRetries++
			}
		case st != nil && !st.done:
			rm.ThrottleRetries++
			if h.Status >= 200 && h.Status < 300 {
				st.done = true
				rm.ThrottleStallMS += float64(ev.httpAt[i]-st.firstUS) / 1000
			}
		}
	}
	for _, key := range order {
		if st := throttled[key]; !st.done {
			rm.ThrottleGaveUp = true
			rm.ThrottleStallMS += float64(max(ev.endUS-st.firstUS, 0)) / 1000
		}
	}
	rm.ThrottleStallMS = round(rm.ThrottleStallMS)
}
