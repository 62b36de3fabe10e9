package scoring

import (
	"testing"

	"github.com/mcpbench/bench/traces"
)

func TestScoreThrottling(t *testing.T) {
	h := func(status int, path string) *traces.HTTP {
		return &traces.HTTP{Method: "GET", Path: path, Status: status}
	}
	const alerts, devices = "/network-notifications/v1/alerts", "/network-monitoring/v1/devices"
	for name, tc := range map[string]struct {
		http    []*traces.HTTP
		at      []int64
		endUS   int64
		retries int
		gaveUp  bool
		stallMS float64
		n429    int
	}{
		"no limit":               {[]*traces.HTTP{h(200, alerts)}, []int64{10}, 100, 0, false, 0, 0},
		"honours the reset":      {[]*traces.HTTP{h(429, alerts), h(200, alerts)}, []int64{1000, 2_001_000}, 3_000_000, 1, false, 2000, 1},
		"hammers, then gets in":  {[]*traces.HTTP{h(429, alerts), h(429, alerts), h(429, alerts), h(200, alerts)}, []int64{0, 10, 20, 30_000}, 40_000, 3, false, 30, 3},
		"gives up":               {[]*traces.HTTP{h(429, alerts), h(200, devices)}, []int64{5000, 6000}, 25_000, 0, true, 20, 1},
		"other endpoints count0": {[]*traces.HTTP{h(429, alerts), h(200, devices), h(200, alerts)}, []int64{0, 1000, 4000}, 5000, 1, false, 4, 1},
	} {
		rm := &RunMetrics{}
		scoreThrottling(rm, &events{http: tc.http, httpAt: tc.at, endUS: tc.endUS})
		if rm.ThrottleRetries != tc.retries || rm.ThrottleGaveUp != tc.gaveUp || rm.ThrottleStallMS != tc.stallMS || rm.Throttled != tc.n429 {
			t.Errorf("%s: retries %d gave up %v stall %v ms 429s %d; want %d %v %v %d", name,
				rm.ThrottleRetries, rm.ThrottleGaveUp, rm.ThrottleStallMS, rm.Throttled, tc.retries, tc.gaveUp, tc.stallMS, tc.n429)
		}
	}
}
