// Command fakeload measures a running fake Central (bench fake serve): it
// loads GET /network-monitoring/v1/clients?limit=100 at -c connections and,
// in the same run, a plain net/http server (in this process) serving the
// same bytes, and prints both and their ratio. scripts/bench/fake-load.sh
// runs it and reads the fake's peak RSS.
package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"strings"
	"time"

	"github.com/mcpbench/bench/fakecentral/internal/loadgen"
)

func main() {
	base := flag.String("base", "", "fake Central base URL (http://127.0.0.1:PORT)")
	path := flag.String("path", "/network-monitoring/v1/clients?limit=100", "request path")
	conns := flag.Int("c", 16, "connections")
	d := flag.Duration("d", 10*time.Second, "total load time (split over 2 rounds per side)")
	flag.Parse()
	if err := run(*base, *path, *conns, *d); err != nil {
		fmt.Fprintln(os.Stderr, "fakeload:", err)
		os.Exit(1)
	}
}

func run(base, path string, conns int, d time.Duration) error {
	if !strings.HasPrefix(base, "http://127.0.0.1:") {
		return fmt.Errorf("-base must be a loopback URL, got %q", base)
	}
	resp, err := http.Post(base+"/oauth2/token", "application/x-www-form-urlencoded", strings.NewReader("grant_type=client_credentials&client_id=load&client_secret=x"))
	if err != nil {
		return err
	}
	var tok struct {
		AccessToken string `json:"access_token"`
	}
	json.NewDecoder(resp.Body).Decode(&tok)
	resp.Body.Close()
	h := http.Header{"Authorization": {"Bearer " + tok.AccessToken}}
	req, _ := http.NewRequest("GET", base+path, nil)
	req.Header = h
	resp, err = http.DefaultClient.Do(req)
	if err != nil {
		return err
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 200 {
		return fmt.Errorf("GET %s: %d %s", path, resp.StatusCode, body)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return err
	}
	plain := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.Write(body)
	})}
	go plain.Serve(ln)
	defer plain.Close()
	plainURL := "http://" + ln.Addr().String() + path
	ctx := context.Background()
	var fr, pr []loadgen.Result
	for i := 0; i < 2; i++ {
		fr = append(fr, loadgen.Run(ctx, base+path, h, conns, 0, d/4))
		pr = append(pr, loadgen.Run(ctx, plainURL, h, conns, 0, d/4))
	}
	f, p := merge(fr), merge(pr)
	fmt.Printf("fake : %s\nplain: %s\n", f, p)
	fmt.Printf("throughput ratio fake/plain = %.2f (target >= 0.5); p99 fake %v vs plain %v\n", f.RPS/p.RPS, f.P99, p.P99)
	if f.Errors > 0 {
		return fmt.Errorf("%d errors from the fake", f.Errors)
	}
	return nil
}

func merge(rs []loadgen.Result) loadgen.Result {
	var out loadgen.Result
	for _, r := range rs {
		out.Requests += r.Requests
		out.Errors += r.Errors
		out.Duration += r.Duration
		out.BodyBytes = r.BodyBytes
		if r.P99 > out.P99 {
			out.P99 = r.P99
		}
		if r.P50 > out.P50 {
			out.P50 = r.P50
		}
	}
	if out.Duration > 0 {
		out.RPS = float64(out.Requests) / out.Duration.Seconds()
	}
	return out
}
