// Package loadgen drives HTTP load for the fake Central's measurements: a
// fixed number of connections, each sending requests back to back, with
// per-request latencies kept for percentiles. It is used by the package
// benchmark and by cmd/fakeload (scripts/bench/fake-load.sh).
package loadgen

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"sort"
	"sync"
	"time"
)

// Result summarises one load run.
type Result struct {
	Requests  int           `json:"requests"`
	Errors    int           `json:"errors"`
	Duration  time.Duration `json:"duration_ns"`
	RPS       float64       `json:"rps"`
	P50       time.Duration `json:"p50_ns"`
	P99       time.Duration `json:"p99_ns"`
	BodyBytes int           `json:"body_bytes"`
}

func (r Result) String() string {
	return fmt.Sprintf("%d req in %v: %.0f req/s, p50 %v, p99 %v, %d errors, %d B/response",
		r.Requests, r.Duration.Round(time.Millisecond), r.RPS, r.P50, r.P99, r.Errors, r.BodyBytes)
}

// Run sends GET url with header h from conns connections until total
// requests are done (total > 0) or d has passed.
func Run(ctx context.Context, url string, h http.Header, conns, total int, d time.Duration) Result {
	tr := &http.Transport{MaxIdleConnsPerHost: conns, MaxConnsPerHost: conns, DisableCompression: true}
	defer tr.CloseIdleConnections()
	client := &http.Client{Transport: tr}
	var (
		mu      sync.Mutex
		lats    []time.Duration
		errs    int
		size    int
		counter int
	)
	deadline := time.Now().Add(d)
	start := time.Now()
	var wg sync.WaitGroup
	for i := 0; i < conns; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			local := make([]time.Duration, 0, 1024)
			for ctx.Err() == nil {
				mu.Lock()
				if total > 0 && counter >= total {
					mu.Unlock()
					break
				}
				counter++
				mu.Unlock()
				if total <= 0 && time.Now().After(deadline) {
					break
				}
				req, _ := http.NewRequestWithContext(ctx, "GET", url, nil)
				req.Header = h.Clone()
				t0 := time.Now()
				resp, err := client.Do(req)
				if err != nil {
					mu.Lock()
					errs++
					mu.Unlock()
					continue
				}
				n, _ := io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
				local = append(local, time.Since(t0))
				if resp.StatusCode != 200 {
					mu.Lock()
					errs++
					mu.Unlock()
				}
				size = int(n)
			}
			mu.Lock()
			lats = append(lats, local...)
			mu.Unlock()
		}()
	}
	wg.Wait()
	el := time.Since(start)
	sort.Slice(lats, func(i, j int) bool { return lats[i] < lats[j] })
	r := Result{Requests: len(lats), Errors: errs, Duration: el, BodyBytes: size}
	if len(lats) > 0 {
		r.RPS = float64(len(lats)) / el.Seconds()
		r.P50 = lats[len(lats)/2]
		r.P99 = lats[len(lats)*99/100]
	}
	return r
}
