package main

import (
	"context"
	"io"
	"net"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpbench/bench/fakecentral"
	"github.com/mcpbench/bench/internal/testbin"
	"github.com/mcpbench/bench/llm/baseline"
	"github.com/mcpbench/bench/recorder"
	"github.com/mcpbench/bench/scenarios"
	"github.com/mcpbench/bench/traces"
)

// BenchmarkRecordOverhead measures what recording costs beyond the server,
// the fake Central and the model (issue 6): runs of the smoke scenarios
// with the baseline model against this server, with --reuse-server, stored
// as bench record stores them (a synced write each, on a goroutine of its
// own). Two transports, measured in the same run:
//
//   - stdio: the built binary as a child process, as bench record runs it;
//   - inmemory: the server in this process, over a net.Pipe (recorder
//     Options.Connect): the harness without a process boundary.
//
// Reported per run: wall ms, server ms (the tool calls' round trips: the
// server's work and the fake's), model ms, and overhead_% = the rest of the
// wall time (harness: request keys, encodings, token estimates, the store)
// as a share of the wall time. Start-up is excluded: the servers start
// before the timer.
//
//	go test -run '^$' -bench BenchmarkRecordOverhead -benchtime 50x ./examples/central-mcp
func BenchmarkRecordOverhead(b *testing.B) {
	all, err := scenarios.Golden()
	if err != nil {
		b.Fatal(err)
	}
	byID := map[string]*scenarios.Scenario{}
	for _, sc := range all {
		byID[sc.ID] = sc
	}
	var list []*scenarios.Scenario
	for _, id := range []string{"alerts-001", "nac-001", "firmware-001", "config-compliance-001", "adversarial-001"} {
		list = append(list, byID[id])
	}
	profile := func(b *testing.B) *recorder.Profile {
		p, err := recorder.ParseProfile("bench-reference.yaml", []byte(testbin.ReferenceProfile(`["`+binPath+`"]`)), "")
		if err != nil {
			b.Fatal(err)
		}
		return p
	}
	inMemory := func(ctx context.Context, env []string) (io.ReadWriteCloser, error) {
		getenv := func(k string) string {
			for i := len(env) - 1; i >= 0; i-- {
				if v, ok := strings.CutPrefix(env[i], k+"="); ok {
					return v
				}
			}
			return ""
		}
		srv, err := newServer(getenv, nil, time.Second, 2*time.Second)
		if err != nil {
			return nil, err
		}
		client, server := net.Pipe()
		go srv.Run(context.Background(), &mcp.IOTransport{Reader: server, Writer: server})
		return client, nil
	}
	for _, tc := range []struct {
		name    string
		connect func(context.Context, []string) (io.ReadWriteCloser, error)
	}{{"stdio", nil}, {"inmemory", inMemory}} {
		b.Run(tc.name, func(b *testing.B) {
			store, err := traces.Open(b.TempDir(), nil)
			if err != nil {
				b.Fatal(err)
			}
			defer store.Close()
			rec := recorder.New(&recorder.Options{Environ: os.Environ(), ReuseServer: true, Connect: tc.connect})
			defer rec.Close()
			p := profile(b)
			job := func(i int) *recorder.Job {
				sc := list[i%len(list)]
				fx, err := fakecentral.LoadFixture(sc.Fixture)
				if err != nil {
					b.Fatal(err)
				}
				return &recorder.Job{Suite: "bench", Scenario: sc, Profile: p, RunIndex: i / len(list),
					Model: baseline.New(&baseline.Options{Now: fx.Now})}
			}
			// Start a server per fixture and write gate before the timer.
			for i := range list {
				if _, err := rec.Run(context.Background(), job(i)); err != nil {
					b.Fatal(err)
				}
			}
			stored := make(chan *traces.Run, 1)
			done := make(chan struct{})
			var server, model time.Duration
			go func() {
				defer close(done)
				for run := range stored {
					if _, err := store.PutRun(run); err != nil {
						b.Error(err)
					}
					for _, e := range run.Events {
						switch {
						case e.Call != nil && e.Call.Tool != "submit_result":
							server += time.Duration(e.Call.LatencyUS) * time.Microsecond
						case e.Turn != nil:
							model += time.Duration(e.Turn.LatencyUS) * time.Microsecond
						}
					}
				}
			}()
			b.ResetTimer()
			start := time.Now()
			for i := range b.N {
				run, err := rec.Run(context.Background(), job(i))
				if err != nil {
					b.Fatal(err)
				}
				if run.Manifest.Outcome == traces.OutcomeError {
					b.Fatalf("run %d: error outcome", i)
				}
				stored <- run
			}
			close(stored)
			<-done
			wall := time.Since(start)
			b.StopTimer()
			n := float64(b.N)
			b.ReportMetric(float64(wall.Microseconds())/1e3/n, "wall_ms/run")
			b.ReportMetric(float64(server.Microseconds())/1e3/n, "server_ms/run")
			b.ReportMetric(float64(model.Microseconds())/1e3/n, "model_ms/run")
			b.ReportMetric(100*float64(wall-server-model)/float64(wall), "overhead_%")
		})
	}
}
