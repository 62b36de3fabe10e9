package fakecentral

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/mcpbench/bench/fakecentral/internal/loadgen"
)

// BenchmarkClientsPageVsPlain measures GET /network-monitoring/v1/clients?limit=100
// on campus at 16 connections against a plain net/http handler serving the
// same bytes, in the same run, and reports the ratios (target: throughput
// ratio >= 0.5).
func BenchmarkClientsPageVsPlain(b *testing.B) {
	c := New(&Options{Fixture: MustLoadFixture("campus")})
	fake := httptest.NewServer(c)
	defer fake.Close()
	url := fake.URL + "/network-monitoring/v1/clients?limit=100"
	h := http.Header{"Authorization": {"Bearer " + c.Token()}}
	req, _ := http.NewRequest("GET", url, nil)
	req.Header = h
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		b.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	plain := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.Write(body)
	}))
	defer plain.Close()

	const conns = 16
	n := b.N
	if n < 2000 {
		n = 2000
	}
	ctx := context.Background()
	b.ResetTimer()
	// Interleave halves so machine noise hits both sides alike.
	var fr, pr []loadgen.Result
	for i := 0; i < 2; i++ {
		fr = append(fr, loadgen.Run(ctx, url, h, conns, n/2, time.Hour))
		c.Reset() // keep the journal from growing across rounds
		pr = append(pr, loadgen.Run(ctx, plain.URL+"/network-monitoring/v1/clients?limit=100", h, conns, n/2, time.Hour))
	}
	b.StopTimer()
	f, p := mergeResults(fr), mergeResults(pr)
	if f.Errors > 0 || p.Errors > 0 {
		b.Fatalf("errors: fake %d, plain %d", f.Errors, p.Errors)
	}
	b.ReportMetric(f.RPS, "fake-req/s")
	b.ReportMetric(p.RPS, "plain-req/s")
	b.ReportMetric(f.RPS/p.RPS, "throughput-ratio")
	b.ReportMetric(float64(f.P99.Microseconds())/1000, "fake-p99-ms")
	b.ReportMetric(float64(p.P99.Microseconds())/1000, "plain-p99-ms")
	b.ReportMetric(float64(len(body)), "resp-bytes")
}

func mergeResults(rs []loadgen.Result) loadgen.Result {
	var out loadgen.Result
	for _, r := range rs {
		out.Requests += r.Requests
		out.Errors += r.Errors
		out.Duration += r.Duration
		if r.P99 > out.P99 {
			out.P99 = r.P99
		}
	}
	out.RPS = float64(out.Requests) / out.Duration.Seconds()
	return out
}

// BenchmarkHandlerClientsPage is the handler alone (no network).
func BenchmarkHandlerClientsPage(b *testing.B) {
	c := New(&Options{Fixture: MustLoadFixture("campus"), JournalLimit: 1})
	r := httptest.NewRequest("GET", "/network-monitoring/v1/clients?limit=100&next=3", nil)
	r.Header.Set("Authorization", "Bearer "+c.Token())
	b.ReportAllocs()
	for i := 0; i < b.N; i++ {
		w := httptest.NewRecorder()
		c.ServeHTTP(w, r)
		if w.Code != 200 {
			b.Fatal(w.Code)
		}
	}
}
