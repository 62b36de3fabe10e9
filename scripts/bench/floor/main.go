// Command floor is the fair floor of bench replay and bench record: the
// tool calls of recorded runs sent by a minimal go-sdk client to the same
// server and fake Central, launched as bench launches them, with no model,
// no store and no scoring. scripts/bench/replay.sh measures bench against
// it.
//
//	floor --runs RUNS.json --server PROFILE [--reuse-server] [--sequential] [--isolation none|kernel|auto]
//
// RUNS.json is what `bench traces show --json PREFIX` prints. Every run's
// mcp.call events are sent in order with their recorded arguments, under
// the server's own tool names (the profile adapter's renames undone),
// except the calls bench never sends to the server: those the trace marks
// invalid and the harness tool submit_result.
//
// Without --reuse-server every run gets a fresh fake and server, and the
// next run's pair starts while a run's calls execute, as bench does
// (--sequential: one after the other). With --reuse-server one pair serves
// the runs of one fixture and write gate, in bench replay's order (groups by
// first appearance, runs in input order), with the fake reset between runs;
// the next group's pair starts at its predecessor's first run.
//
// With --isolation kernel each stdio server starts in a kernel sandbox as
// bench starts it by default (internal/sandbox: a Starter keeping one
// started ahead, the fake's two ports opened inside): the floor of a run
// that pays for the sandbox as bench does. With auto, as bench's default,
// kernel where the kernel allows it and none elsewhere; with none (the
// default) the servers start unconfined, as with bench --isolation proxy.
// The line printed says which it was.
//
// Reading the input, the golden suite, the fixtures and the profile comes
// before the clock. It prints one JSON line: runs, calls, wall time, the
// wall time spent in tool calls (each from sending it to its result) and
// this process's CPU time (getrusage RUSAGE_SELF; the servers are children
// and not counted) over the timed part, in microseconds.
package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"os/signal"
	"runtime"
	"slices"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpbench/bench/fakecentral"
	"github.com/mcpbench/bench/internal/sandbox"
	"github.com/mcpbench/bench/llm"
	"github.com/mcpbench/bench/recorder"
	"github.com/mcpbench/bench/scenarios"
)

// callTimeout bounds one tool call, as bench's default --call-timeout.
const callTimeout = 60 * time.Second

// shown is one element of `bench traces show --json`: the fields the floor
// reads.
type shown struct {
	Ref string `json:"ref"`
	Run *struct {
		Manifest struct {
			Scenario struct {
				ID string `json:"id"`
			} `json:"scenario"`
			Fixture struct {
				Name string `json:"name"`
			} `json:"fixture"`
		} `json:"manifest"`
		Events []struct {
			Kind string `json:"kind"`
			Call *struct {
				Tool      string          `json:"tool"`
				Arguments json.RawMessage `json:"arguments"`
				Invalid   string          `json:"invalid"`
			} `json:"call"`
		} `json:"events"`
	} `json:"run"`
}

// run is one run to send.
type run struct {
	ref    string
	fx     *fakecentral.Fixture
	writes bool // the scenario opens the write gate: writes_env is set
	faults []fakecentral.Fault
	// pageSize is the scenario's page_size.
	pageSize int
	elicit   string // approve | decline
	calls    []call
	// callTime is the wall time its calls took, each from the SDK's
	// sending it to its result (set by send).
	callTime time.Duration
}

type call struct {
	tool string // the server's name
	args json.RawMessage
}

// result is the line the floor prints.
type result struct {
	Runs        int    `json:"runs"`
	Calls       int    `json:"calls"` // tool calls sent
	WallUS      int64  `json:"wall_us"`
	CallsUS     int64  `json:"calls_us"` // wall time in tool calls (run.callTime)
	CPUUserUS   int64  `json:"cpu_user_us"`
	CPUSysUS    int64  `json:"cpu_sys_us"`
	ReuseServer bool   `json:"reuse_server"`
	Overlap     bool   `json:"overlap"`   // the next server started while a run executed
	Isolation   string `json:"isolation"` // none | kernel
}

func main() {
	runsFile := flag.String("runs", "", "`FILE` written by bench traces show --json PREFIX")
	server := flag.String("server", "", "server `PROFILE` (as bench's --server)")
	reuse := flag.Bool("reuse-server", false, "one server and fake per fixture and write gate, the fake reset between runs")
	sequential := flag.Bool("sequential", false, "start each server when its run needs it, not while the run before executes")
	isolation := flag.String("isolation", "none", "how servers start: none (unconfined), kernel (in bench's sandbox) or auto (kernel where available)")
	flag.Parse()
	if *runsFile == "" || *server == "" || flag.NArg() > 0 || !slices.Contains([]string{"none", "kernel", "auto"}, *isolation) {
		fmt.Fprintln(os.Stderr, "usage: floor --runs RUNS.json --server PROFILE [--reuse-server] [--sequential] [--isolation none|kernel|auto]")
		os.Exit(2)
	}
	if *isolation != "none" {
		err := sandbox.Available()
		switch {
		case err == nil:
			*isolation = "kernel"
		case *isolation == "auto":
			*isolation = "none"
		default:
			fmt.Fprintln(os.Stderr, "floor: --isolation kernel:", err)
			os.Exit(2)
		}
	}
	p, runs, err := load(*runsFile, *server)
	if err != nil {
		fmt.Fprintln(os.Stderr, "floor:", err)
		os.Exit(2)
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	f := &floor{p: p, overlap: !*sequential}
	if *isolation == "kernel" {
		if p.Transport != recorder.TransportStdio {
			fmt.Fprintf(os.Stderr, "floor: --isolation kernel: server %s speaks %s; the floor sandboxes stdio servers only\n", p.Name, p.Transport)
			os.Exit(2)
		}
		sandbox.SetNonDumpable() // as bench before its first server
		f.starter = sandbox.NewStarter()
		defer f.starter.Close()
	}

	runtime.GC() // the input's garbage is not the timed part's
	var ru0, ru1 syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_SELF, &ru0)
	t0 := time.Now()
	if *reuse {
		err = f.reused(ctx, runs)
	} else {
		err = f.fresh(ctx, runs)
	}
	wall := time.Since(t0)
	syscall.Getrusage(syscall.RUSAGE_SELF, &ru1)
	if err != nil {
		fmt.Fprintln(os.Stderr, "floor:", err)
		os.Exit(1)
	}
	calls, inCalls := 0, time.Duration(0)
	for _, r := range runs {
		calls += len(r.calls)
		inCalls += r.callTime
	}
	json.NewEncoder(os.Stdout).Encode(result{
		Runs: len(runs), Calls: calls, WallUS: wall.Microseconds(), CallsUS: inCalls.Microseconds(),
		CPUUserUS:   (ru1.Utime.Nano() - ru0.Utime.Nano()) / 1e3,
		CPUSysUS:    (ru1.Stime.Nano() - ru0.Stime.Nano()) / 1e3,
		ReuseServer: *reuse, Overlap: f.overlap, Isolation: *isolation,
	})
}

// load reads the profile and the runs, with what they need of the golden
// suite and the fixtures.
func load(runsFile, server string) (*recorder.Profile, []*run, error) {
	p, err := recorder.LoadProfile(server)
	if err != nil {
		return nil, nil, err
	}
	if err := p.ExpandEnv(os.Getenv, nil); err != nil {
		return nil, nil, err
	}
	toServer := map[string]string{} // the model's name -> the server's
	for from, to := range p.Adapter.Rename {
		toServer[to] = from
	}
	data, err := os.ReadFile(runsFile)
	if err != nil {
		return nil, nil, fmt.Errorf("--runs: %w", err)
	}
	var list []shown
	if err := json.Unmarshal(data, &list); err != nil {
		return nil, nil, fmt.Errorf("%s: want the JSON array of bench traces show --json: %w", runsFile, err)
	}
	if len(list) == 0 {
		return nil, nil, fmt.Errorf("%s: no runs", runsFile)
	}
	golden, err := scenarios.Golden()
	if err != nil {
		return nil, nil, err
	}
	byID := map[string]*scenarios.Scenario{}
	for _, sc := range golden {
		byID[sc.ID] = sc
	}
	fixtures := map[string]*fakecentral.Fixture{}
	var runs []*run
	for i, s := range list {
		where := fmt.Sprintf("%s: run %d (%s)", runsFile, i, s.Ref)
		if s.Run == nil {
			return nil, nil, fmt.Errorf("%s: no \"run\"", where)
		}
		m := s.Run.Manifest
		sc := byID[m.Scenario.ID]
		if sc == nil {
			return nil, nil, fmt.Errorf("%s: manifest.scenario.id %q is not a scenario of the golden suite", where, m.Scenario.ID)
		}
		if m.Fixture.Name != sc.Fixture {
			return nil, nil, fmt.Errorf("%s: manifest.fixture.name %q, but scenario %s now uses fixture %q", where, m.Fixture.Name, sc.ID, sc.Fixture)
		}
		fx := fixtures[m.Fixture.Name]
		if fx == nil {
			if fx, err = fakecentral.LoadFixture(m.Fixture.Name); err != nil {
				return nil, nil, fmt.Errorf("%s: manifest.fixture.name: %w", where, err)
			}
			fixtures[m.Fixture.Name] = fx
		}
		r := &run{ref: s.Ref, fx: fx, writes: opensWriteGate(sc), faults: recorder.FaultsOf(sc.Faults), pageSize: sc.PageSize, elicit: sc.Elicit()}
		for j, e := range s.Run.Events {
			if e.Kind != "mcp.call" {
				continue
			}
			if e.Call == nil || e.Call.Tool == "" {
				return nil, nil, fmt.Errorf("%s: events[%d]: an mcp.call without call.tool", where, j)
			}
			c := e.Call
			if c.Invalid != "" || c.Tool == llm.SubmitTool {
				continue // never sent to the server
			}
			name := c.Tool
			if to, ok := toServer[name]; ok {
				name = to
			}
			// As stored (traces show indents its output).
			var args bytes.Buffer
			if len(c.Arguments) == 0 {
				args.WriteString("{}")
			} else if err := json.Compact(&args, c.Arguments); err != nil {
				return nil, nil, fmt.Errorf("%s: events[%d]: call.arguments: %w", where, j, err)
			}
			r.calls = append(r.calls, call{tool: name, args: args.Bytes()})
		}
		runs = append(runs, r)
	}
	return p, runs, nil
}

type floor struct {
	p       *recorder.Profile
	overlap bool
	starter *sandbox.Starter // --isolation kernel: starts each server's sandbox
}

// fresh sends each run to a fake and server of its own.
func (f *floor) fresh(ctx context.Context, runs []*run) error {
	cur := f.startAsync(ctx, runs[0])
	for k, r := range runs {
		var next *pending
		if f.overlap && k+1 < len(runs) {
			next = f.startAsync(ctx, runs[k+1]) // as recorder.Prestart
		}
		s, err := cur.wait()
		if err == nil {
			err = s.send(ctx, r)
			s.close()
		}
		if err != nil {
			if next != nil {
				if s, err := next.wait(); err == nil {
					s.close()
				}
			}
			return err
		}
		if next == nil && k+1 < len(runs) {
			next = f.startAsync(ctx, runs[k+1])
		}
		cur = next
	}
	return nil
}

// reused sends the runs of one fixture and write gate to one fake and
// server, resetting the fake between runs, and stops them all at the end.
func (f *floor) reused(ctx context.Context, runs []*run) error {
	type group struct {
		runs []*run
		p    *pending
	}
	var groups []*group
	byKey := map[string]*group{}
	for _, r := range runs {
		key := fmt.Sprintf("%s|%t", r.fx.Version(), r.writes)
		g := byKey[key]
		if g == nil {
			g = &group{}
			byKey[key] = g
			groups = append(groups, g)
		}
		g.runs = append(g.runs, r)
	}
	defer func() { // stop every pair started, as recorder's Close
		for _, g := range groups {
			if g.p != nil {
				if s, err := g.p.wait(); err == nil {
					s.close()
				}
			}
		}
	}()
	for i, g := range groups {
		if g.p == nil {
			g.p = f.startAsync(ctx, g.runs[0])
		}
		if f.overlap && i+1 < len(groups) {
			groups[i+1].p = f.startAsync(ctx, groups[i+1].runs[0]) // as recorder.Prestart
		}
		s, err := g.p.wait()
		if err != nil {
			return err
		}
		for k, r := range g.runs {
			if k > 0 {
				s.fake.Reset()
			}
			if err := s.send(ctx, r); err != nil {
				return err
			}
		}
	}
	return nil
}

// slot is a fake Central and a server connected to it.
type slot struct {
	fake    *fakecentral.Server
	cs      *mcp.ClientSession
	cmd     *exec.Cmd        // http only: the server process (stdio: the transport owns it)
	sb      *sandbox.Sandbox // --isolation kernel: the server's sandbox
	streams []*os.File       // its stdin, stdout and stderr

	mu     sync.Mutex
	elicit string // how the current run answers elicitation requests
}

type pending struct {
	done chan struct{}
	s    *slot
	err  error
}

func (f *floor) startAsync(ctx context.Context, r *run) *pending {
	p := &pending{done: make(chan struct{})}
	go func() {
		defer close(p.done)
		p.s, p.err = f.start(ctx, r)
		if p.err != nil {
			p.err = fmt.Errorf("%s: %w", r.ref, p.err)
		}
	}()
	return p
}

func (p *pending) wait() (*slot, error) {
	<-p.done
	return p.s, p.err
}

// start starts a fake Central with r's fixture and the profile's server
// against it, as recorder's start and launch do: the same command, working
// directory and environment, the MCP handshake and tools/list.
func (f *floor) start(ctx context.Context, r *run) (*slot, error) {
	p := f.p
	fake, err := fakecentral.Start(&fakecentral.Options{Fixture: r.fx})
	if err != nil {
		return nil, fmt.Errorf("starting the fake Central: %w", err)
	}
	s := &slot{fake: fake}
	fail := func(err error) (*slot, error) {
		s.close()
		return nil, fmt.Errorf("server %s: %w", p.Name, err)
	}
	v := recorder.Vars{CentralURL: fake.BaseURL, TokenURL: fake.TokenURL, ProxyURL: fake.ProxyURL, CAFile: fake.CAFile, Writes: r.writes}
	if usesPort(p) {
		if v.Port, err = freePort(); err != nil {
			return fail(err)
		}
	}
	env := append(recorder.ChildEnv(os.Environ(), p.PassEnv), fake.Env()...)
	for _, k := range sortedKeys(p.Env) {
		env = append(env, k+"="+v.Expand(p.Env[k]))
	}
	if r.writes {
		for _, k := range sortedKeys(p.WritesEnv) {
			env = append(env, k+"="+v.Expand(p.WritesEnv[k]))
		}
	}
	var argv []string
	for _, a := range p.Argv() {
		argv = append(argv, v.Expand(a))
	}
	ctx, cancel := context.WithTimeout(ctx, time.Duration(p.StartTimeout))
	defer cancel()
	var cmd *exec.Cmd
	if len(argv) > 0 {
		cmd = exec.Command(argv[0], argv[1:]...)
		cmd.Dir, cmd.Env = p.WorkDir(), env
	}
	var transport mcp.Transport
	switch {
	case f.starter != nil && cmd != nil: // stdio, in a sandbox
		if cmd.Err != nil {
			return fail(cmd.Err)
		}
		sb, err := f.starter.Start()
		if err != nil {
			return fail(err)
		}
		s.sb = sb
		stdin, stdout, stderr := sb.Streams()
		s.streams = []*os.File{stdin, stdout, stderr}
		go io.Copy(io.Discard, stderr)
		api, proxy := fake.Addrs()
		spec := &sandbox.Spec{Path: cmd.Path, Args: argv, Env: env, Dir: p.WorkDir(), Listen: []string{api, proxy}}
		if err := sb.Setup(spec, time.Duration(p.StartTimeout)); err != nil {
			return fail(err)
		}
		ls := sb.Listeners()
		fake.Serve(ls[0], ls[1])
		transport = &mcp.IOTransport{Reader: stdout, Writer: stdin}
	case p.Transport == recorder.TransportStdio:
		transport = &mcp.CommandTransport{Command: cmd, TerminateDuration: recorder.DefaultStopGrace}
	case p.Transport == recorder.TransportHTTP:
		if cmd != nil {
			cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
			if err := cmd.Start(); err != nil {
				return fail(err)
			}
			s.cmd = cmd
		}
		url, ready, anyStatus := v.Expand(p.URL), v.Expand(p.Ready), false
		if ready == "" && cmd != nil {
			ready, anyStatus = url, true
		}
		if err := waitReady(ctx, ready, anyStatus); err != nil {
			return fail(err)
		}
		// bench's bound on one message (go-sdk v1.8.0 reads an SSE event
		// without end when MaxEventSize is 0). On stdio CommandTransport
		// keeps the SDK's own bound, 16 MiB a line.
		transport = &mcp.StreamableClientTransport{Endpoint: url, MaxRetries: -1, MaxEventSize: recorder.DefaultMaxMessageBytes}
	default:
		return fail(fmt.Errorf("transport %q", p.Transport))
	}
	client := mcp.NewClient(&mcp.Implementation{Name: "bench", Version: "floor"}, &mcp.ClientOptions{
		Capabilities:       &mcp.ClientCapabilities{Elicitation: &mcp.ElicitationCapabilities{}},
		ElicitationHandler: s.answer,
	})
	if s.cs, err = client.Connect(ctx, transport, &mcp.ClientSessionOptions{ProtocolVersion: p.ProtocolVersion}); err != nil {
		return fail(fmt.Errorf("MCP handshake: %w", err))
	}
	for _, err := range s.cs.Tools(ctx, nil) {
		if err != nil {
			return fail(fmt.Errorf("listing tools: %w", err))
		}
	}
	return s, nil
}

// send sends r's calls. A JSON-RPC error is the server's answer, as in
// bench; any other error means the session broke.
func (s *slot) send(ctx context.Context, r *run) error {
	s.fake.SetFaults(r.faults)
	s.fake.SetPageSize(r.pageSize)
	s.mu.Lock()
	s.elicit = r.elicit
	s.mu.Unlock()
	for i, c := range r.calls {
		cctx, cancel := context.WithTimeout(ctx, callTimeout)
		t0 := time.Now()
		_, err := s.cs.CallTool(cctx, &mcp.CallToolParams{Name: c.tool, Arguments: c.args})
		r.callTime += time.Since(t0)
		cancel()
		var wire *jsonrpc.Error
		if err != nil && !errors.As(err, &wire) {
			return fmt.Errorf("%s: call %d (%s): %w", r.ref, i, c.tool, err)
		}
	}
	return ctx.Err()
}

// close stops the server (stdio: close stdin, then SIGTERM and SIGKILL
// after recorder.DefaultStopGrace each) and the fake.
func (s *slot) close() {
	if s.cs != nil {
		s.cs.Close()
	}
	if s.cmd != nil {
		syscall.Kill(-s.cmd.Process.Pid, syscall.SIGTERM)
		done := make(chan struct{})
		go func() { s.cmd.Wait(); close(done) }()
		select {
		case <-done:
		case <-time.After(recorder.DefaultStopGrace):
			syscall.Kill(-s.cmd.Process.Pid, syscall.SIGKILL)
			<-done
		}
	}
	if s.sb != nil {
		// As CommandTransport: stdin closed (by the session's Close),
		// then SIGTERM and SIGKILL to the init's group after the grace
		// each; the init reaped, the kernel has killed the rest.
		s.streams[0].Close()
		done := make(chan struct{})
		go func() { s.sb.Wait(); close(done) }()
		for _, sig := range []syscall.Signal{syscall.SIGTERM, syscall.SIGKILL} {
			select {
			case <-done:
			case <-time.After(recorder.DefaultStopGrace):
				syscall.Kill(-s.sb.Pid(), sig)
			}
		}
		<-done
		for _, f := range s.streams {
			f.Close()
		}
		s.sb.Close()
	}
	s.fake.Close()
}

// answer answers an elicitation request as the current run's scenario says
// (a copy of recorder's elicitor and approveContent).
func (s *slot) answer(_ context.Context, req *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
	s.mu.Lock()
	approve := s.elicit == scenarios.ElicitApprove
	s.mu.Unlock()
	if !approve {
		return &mcp.ElicitResult{Action: "decline"}, nil
	}
	var schema struct {
		Properties map[string]struct {
			Type    string `json:"type"`
			Enum    []any  `json:"enum"`
			Default any    `json:"default"`
		} `json:"properties"`
	}
	b, _ := json.Marshal(req.Params.RequestedSchema)
	json.Unmarshal(b, &schema)
	content := map[string]any{}
	for name, p := range schema.Properties {
		switch {
		case p.Type == "boolean":
			content[name] = true
		case len(p.Enum) > 0:
			content[name] = p.Enum[0]
		case p.Default != nil:
			content[name] = p.Default
		case p.Type == "string":
			content[name] = "yes"
		case p.Type == "number" || p.Type == "integer":
			content[name] = 0
		}
	}
	return &mcp.ElicitResult{Action: "accept", Content: content}, nil
}

// What follows copies unexported recorder helpers.

// opensWriteGate reports whether sc's runs get the profile's writes_env.
func opensWriteGate(sc *scenarios.Scenario) bool {
	return sc.WriteGate == scenarios.GateWrite || sc.WriteGate == scenarios.GateDestructive
}

// faultsOf maps a scenario's faults onto the fake's: 429 stays 429, any
// other status is served as the fake's 500.
func usesPort(p *recorder.Profile) bool {
	for _, s := range append(append([]string{p.URL, p.Ready}, p.Command...), mapValues(p.Env)...) {
		if strings.Contains(s, "{port}") {
			return true
		}
	}
	return false
}

func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

// waitReady polls ready every 25 ms until it answers 2xx (or, with
// anyStatus, anything below 500).
func waitReady(ctx context.Context, ready string, anyStatus bool) error {
	if ready == "" {
		return nil
	}
	tick := time.NewTicker(25 * time.Millisecond)
	defer tick.Stop()
	for {
		req, _ := http.NewRequestWithContext(ctx, http.MethodGet, ready, nil)
		resp, err := http.DefaultClient.Do(req)
		if err == nil {
			io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
			if resp.StatusCode/100 == 2 || anyStatus && resp.StatusCode < 500 {
				return nil
			}
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("server not ready within the start timeout: %w", ctx.Err())
		case <-tick.C:
		}
	}
}

func sortedKeys(m map[string]string) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

func mapValues(m map[string]string) []string {
	var out []string
	for _, k := range sortedKeys(m) {
		out = append(out, m[k])
	}
	return out
}
