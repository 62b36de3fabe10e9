package main

import (
	"bufio"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"syscall"
	"testing"

	"github.com/mcpbench/bench/internal/testbin"
	"github.com/mcpbench/bench/traces"
)

// The fault matrix (issue 15): bench is killed, or meets a broken server,
// model or store, and after each fault it loses no committed run, says what
// is damaged, records again exactly what is missing, and a final replay
// passes with no stale run. Every fault is brought about by an event bench
// or the server reports (a progress line, a server starting), never by a
// timer: nothing here sleeps.

// benchBinary builds bench once for the tests that must run it as a
// process of its own (to kill it).
func benchBinary(t *testing.T) string {
	t.Helper()
	return testbin.Build(t, "./cmd/bench")
}

// faultEnv is one fault's world: a store, a profile of the reference
// server that announces each start on a fifo, and bench.
type faultEnv struct {
	t       *testing.T
	dir     string
	store   string
	profile string
	fifo    string
	bench   string
	started <-chan struct{} // one value per server start
}

func newFaultEnv(t *testing.T) *faultEnv {
	t.Helper()
	dir := t.TempDir()
	e := &faultEnv{t: t, dir: dir, store: filepath.Join(dir, "store"), bench: benchBinary(t), fifo: filepath.Join(dir, "starts")}
	if err := syscall.Mkfifo(e.fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	e.started = e.starts()
	e.profile = filepath.Join(dir, "reference.yaml")
	e.writeProfile(fmt.Sprintf(`[sh, -c, 'echo up > %s; exec %s']`, e.fifo, referenceServer(t)))
	return e
}

// writeProfile writes the reference server's profile with command.
func (e *faultEnv) writeProfile(command string) {
	data := testbin.ReferenceProfile(command)
	if err := os.WriteFile(e.profile, []byte(data), 0o644); err != nil {
		e.t.Fatal(err)
	}
}

// starts reads the fifo the servers announce themselves on and sends one
// value per start, for as long as the process runs (a server waits for a
// reader before it starts, so there must always be one).
func (e *faultEnv) starts() <-chan struct{} {
	ch := make(chan struct{}, 64)
	go func() {
		for {
			f, err := os.Open(e.fifo) // blocks until a server opens it to write
			if err != nil {
				return
			}
			sc := bufio.NewScanner(f)
			for sc.Scan() {
				select {
				case ch <- struct{}{}:
				default:
				}
			}
			f.Close()
		}
	}()
	return ch
}

var faultRecordArgs = []string{"record", "--scenario", "alerts-001", "--scenario", "nac-001", "--model", "baseline", "--runs", "2"}

// run runs bench to the end: its exit code, stdout and stderr.
func (e *faultEnv) run(args ...string) (int, string, string) {
	e.t.Helper()
	cmd := exec.Command(e.bench, append([]string{"--store", e.store}, args...)...)
	cmd.Dir = e.dir
	var out, errb strings.Builder
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	code := 0
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	} else if err != nil {
		e.t.Fatal(err)
	}
	return code, out.String(), errb.String()
}

var progressLine = regexp.MustCompile(`^\[\d+/\d+\] (\S+): `)

// killAt runs bench and kills it (SIGKILL) when killNow, told each line
// bench writes on stderr, or the start of a server (line ""), says so. It
// returns the refs bench reported done before it was killed.
func (e *faultEnv) killAt(killNow func(line string, done int) bool, args ...string) []string {
	e.t.Helper()
	for len(e.started) > 0 { // starts before this command
		<-e.started
	}
	cmd := exec.Command(e.bench, append([]string{"--store", e.store}, args...)...)
	cmd.Dir = e.dir
	stderr, err := cmd.StderrPipe()
	if err != nil {
		e.t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		e.t.Fatal(err)
	}
	lines := make(chan string)
	go func() {
		sc := bufio.NewScanner(stderr)
		for sc.Scan() {
			lines <- sc.Text()
		}
		close(lines)
	}()
	var done []string
	killed := false
	for !killed {
		select {
		case l, ok := <-lines:
			if !ok {
				e.t.Fatalf("bench %v ended before the fault point (done: %v)", args, done)
			}
			if m := progressLine.FindStringSubmatch(l); m != nil {
				done = append(done, m[1])
			}
			killed = killNow(l, len(done))
		case <-e.started:
			killed = killNow("", len(done))
		}
	}
	if err := cmd.Process.Kill(); err != nil {
		e.t.Fatal(err)
	}
	go func() {
		for range lines {
		}
	}()
	cmd.Wait()
	return done
}

// refs lists the store's refs.
func (e *faultEnv) refs() []string {
	e.t.Helper()
	code, out, errOut := e.run("traces", "ls")
	if code != 0 {
		e.t.Fatalf("traces ls: exit %d\n%s", code, errOut)
	}
	var refs []string
	for _, l := range strings.Split(strings.TrimSpace(out), "\n") {
		if f := strings.Fields(l); len(f) == 2 { // short ID, ref
			refs = append(refs, f[1])
		}
	}
	return refs
}

// intact checks that every ref reported done is stored and that the store
// verifies.
func (e *faultEnv) intact(done []string) {
	e.t.Helper()
	have := map[string]bool{}
	for _, r := range e.refs() {
		have[r] = true
	}
	for _, r := range done {
		if !have[r] {
			e.t.Errorf("%s was reported done and is lost", r)
		}
	}
	if code, out, errOut := e.run("traces", "verify"); code != 0 {
		e.t.Errorf("traces verify: exit %d\n%s%s", code, out, errOut)
	}
}

// resumeAndReplay resumes the recording, which records exactly the runs
// not stored, then replays: no stale run, exit 0.
func (e *faultEnv) resumeAndReplay() {
	e.t.Helper()
	before := 0
	for _, r := range e.refs() {
		if strings.HasPrefix(r, "golden/") { // not the replays'
			before++
		}
	}
	code, out, errOut := e.run(append(faultRecordArgs, "--server", e.profile)...)
	want := fmt.Sprintf("recorded %d of 4 runs (%d already stored)", 4-before, before)
	if code != 0 || !strings.Contains(out, want) {
		e.t.Fatalf("resumed record: exit %d, want %q\n%s%s", code, want, out, errOut)
	}
	code, out, errOut = e.run("replay", "--suite", "alerts", "--server", e.profile)
	if code != 0 || !strings.Contains(out, " 0 stale") {
		e.t.Fatalf("replay after the fault: exit %d\n%s%s", code, out, errOut)
	}
}

func TestFaultKillRecord(t *testing.T) {
	if testing.Short() {
		t.Skip("records with a real server; skipped with -short")
	}
	for _, tc := range []struct {
		name string
		kill func(line string, done int) bool
	}{
		// A server starting while no run is done: the first run is in
		// flight.
		{"mid-first-run", func(line string, done int) bool { return line == "" && done == 0 }},
		// The first run stored: the second in flight, the third's server
		// starting.
		{"after-a-run", func(_ string, done int) bool { return done == 1 }},
		// Every run stored: the summary is next.
		{"after-the-last-run", func(_ string, done int) bool { return done == 4 }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := newFaultEnv(t)
			done := e.killAt(tc.kill, append(faultRecordArgs, "--server", e.profile)...)
			e.intact(done)
			e.resumeAndReplay()
		})
	}
}

func TestFaultKillReplay(t *testing.T) {
	if testing.Short() {
		t.Skip("records and replays with a real server; skipped with -short")
	}
	for _, tc := range []struct {
		name string
		kill func(line string, done int) bool
	}{
		{"mid-first-run", func(line string, done int) bool { return line == "" && done == 0 }},
		{"after-a-run", func(_ string, done int) bool { return done == 1 }},
		{"after-the-last-run", func(_ string, done int) bool { return done == 2 }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := newFaultEnv(t)
			if code, out, errOut := e.run(append(faultRecordArgs, "--server", e.profile)...); code != 0 {
				t.Fatalf("record: exit %d\n%s%s", code, out, errOut)
			}
			e.killAt(tc.kill, "replay", "--suite", "alerts", "--server", e.profile)
			e.intact(nil)
			e.resumeAndReplay()
		})
	}
}

// verifyNames runs traces verify on a damaged store: exit 4, naming each
// of refs.
func (e *faultEnv) verifyNames(refs []string) {
	e.t.Helper()
	code, out, errOut := e.run("traces", "verify")
	if code != exitSetup {
		e.t.Fatalf("traces verify on a damaged store: exit %d, want %d\n%s%s", code, exitSetup, out, errOut)
	}
	for _, r := range refs {
		if !strings.Contains(out+errOut, r) {
			e.t.Errorf("traces verify does not name %s:\n%s%s", r, out, errOut)
		}
	}
}

// repair runs traces repair and returns the refs it dropped.
func (e *faultEnv) repair() []string {
	e.t.Helper()
	code, out, errOut := e.run("traces", "repair")
	if code != 0 {
		e.t.Fatalf("traces repair: exit %d\n%s%s", code, out, errOut)
	}
	var dropped []string
	for _, m := range regexp.MustCompile(`(?m)^dropped ref (\S+) `).FindAllStringSubmatch(out, -1) {
		dropped = append(dropped, m[1])
	}
	return dropped
}

// A byte flipped in a stored run: verify names the refs that cannot be
// read, record and replay refuse once, repair drops exactly those, a
// resumed record records exactly those, and a replay passes.
func TestFaultFlippedByte(t *testing.T) {
	if testing.Short() {
		t.Skip("records with a real server; skipped with -short")
	}
	e := newFaultEnv(t)
	if code, out, errOut := e.run(append(faultRecordArgs, "--server", e.profile)...); code != 0 {
		t.Fatalf("record: exit %d\n%s%s", code, out, errOut)
	}
	if code, _, errOut := e.run("traces", "gc"); code != 0 { // flush to table files
		t.Fatalf("traces gc: %s", errOut)
	}
	s, err := traces.Open(e.store, nil)
	if err != nil {
		t.Fatal(err)
	}
	runs, _ := s.Runs()
	s.Close()
	if _, err := flipRun(e.store, runs[len(runs)-1]); err != nil {
		t.Fatal(err)
	}
	code, out, errOut := e.run(append(faultRecordArgs, "--server", e.profile)...)
	if code != exitSetup || strings.Count(errOut, "bench traces repair") != 1 || strings.Contains(out, "already stored") {
		t.Errorf("record on a damaged store: exit %d, want %d and one hint\n%s%s", code, exitSetup, out, errOut)
	}
	e.verifyNames(nil)
	dropped := e.repair()
	kept := e.refs()
	if len(kept) == 4 {
		t.Fatal("repair kept every ref")
	}
	// What it dropped is named (a byte in the block of the store's
	// metadata loses every ref with it: then repair names the stretch
	// lost, and the resume records everything again).
	for _, r := range dropped {
		if slices.Contains(kept, r) {
			t.Errorf("repair dropped %s and kept it", r)
		}
	}
	e.intact(nil)
	e.resumeAndReplay()
}

// The write-ahead log cut short, as a full disk or a crash of the machine
// would leave it: the store opens with what the log kept, verify passes,
// and a resumed record records exactly what was lost.
func TestFaultTruncatedWAL(t *testing.T) {
	if testing.Short() {
		t.Skip("records with a real server; skipped with -short")
	}
	e := newFaultEnv(t)
	if code, out, errOut := e.run(append(faultRecordArgs, "--server", e.profile)...); code != 0 {
		t.Fatalf("record: exit %d\n%s%s", code, out, errOut)
	}
	logs, _ := filepath.Glob(filepath.Join(e.store, "db", "*.log"))
	if len(logs) == 0 {
		t.Fatal("no write-ahead log")
	}
	slices.Sort(logs)
	newest := logs[len(logs)-1]
	fi, err := os.Stat(newest)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.Truncate(newest, fi.Size()/2); err != nil {
		t.Fatal(err)
	}
	if n := len(e.refs()); n >= 4 {
		t.Fatalf("%d refs after cutting the log in half: the cut lost nothing", n)
	}
	e.intact(nil)
	e.resumeAndReplay()
}
