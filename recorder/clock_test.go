package recorder

import (
	"context"
	"errors"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
)

// systemLibfaketime is the installed libfaketime, or "" (the tests that
// need one then skip, saying so).
func systemLibfaketime() string {
	for _, p := range libfaketimePaths {
		if _, err := os.Stat(p); err == nil {
			return p
		}
	}
	return ""
}

func writeScript(t *testing.T, dir, name, body string) string {
	t.Helper()
	p := filepath.Join(dir, name)
	if err := os.WriteFile(p, []byte(body), 0o755); err != nil {
		t.Fatal(err)
	}
	return p
}

// TestResolveProgram: bench tells the programs libfaketime can pin
// (dynamically linked, or a script run by one) from those it cannot (Go
// programs, static binaries), following shebangs and env.
func TestResolveProgram(t *testing.T) {
	dir := t.TempDir()
	goBin := helperBin(t, "central-mcp")
	if _, kind := resolveProgram(goBin, dir, 0); kind != progGo {
		t.Errorf("%s: kind %v, want a Go program", goBin, kind)
	}
	sh, err := exec.LookPath("sh")
	if err != nil {
		t.Skip("no sh")
	}
	shReal, _ := filepath.EvalSymlinks(sh)
	if _, kind := resolveProgram("sh", dir, 0); kind != progDynamic {
		t.Errorf("sh (%s): kind %v, want dynamically linked", shReal, kind)
	}
	s := writeScript(t, dir, "srv.sh", "#!"+sh+" -e\necho hi\n")
	if prog, kind := resolveProgram("./srv.sh", dir, 0); kind != progDynamic || prog != sh {
		t.Errorf("a script: %s %v, want %s dynamically linked", prog, kind, sh)
	}
	// #!/usr/bin/env NAME=V PROG: PROG is what runs.
	if env, err := exec.LookPath("env"); err == nil {
		writeScript(t, dir, "gowrap", "#!"+env+" -S A=1 "+goBin+" --flag\n")
		if prog, kind := resolveProgram(filepath.Join(dir, "gowrap"), dir, 0); kind != progGo || prog != goBin {
			t.Errorf("env script running a Go binary: %s %v", prog, kind)
		}
	}
	if _, kind := resolveProgram(s+".missing", dir, 0); kind != progUnknown {
		t.Errorf("a missing program: kind %v", kind)
	}
	writeScript(t, dir, "loop", "#!"+filepath.Join(dir, "loop")+"\n")
	if _, kind := resolveProgram(filepath.Join(dir, "loop"), dir, 0); kind != progUnknown {
		t.Errorf("a script that is its own interpreter: kind %v", kind)
	}
	if _, err := os.Stat("/sbin/ldconfig"); err == nil { // static-pie on glibc systems
		if _, kind := resolveProgram("/sbin/ldconfig", dir, 0); kind != progStatic {
			t.Errorf("/sbin/ldconfig: kind %v, want static", kind)
		}
	}
}

// TestPlanClock: what bench does with each kind of server and library, and
// what it says.
func TestPlanClock(t *testing.T) {
	dir := t.TempDir()
	sh, err := exec.LookPath("sh")
	if err != nil {
		t.Skip("no sh")
	}
	// npx and the like: a script run by node, found through env.
	node := writeScript(t, dir, "npx", "#!/usr/bin/env node\n")
	profile := func(clock string, argv ...string) *Profile {
		return &Profile{Name: "srv", Command: argv, Clock: clock, Dir: dir, Cwd: "."}
	}
	// Libraries by path, as inspectLibfaketime would find them.
	oldLib, newLib := filepath.Join(dir, "old.so"), filepath.Join(dir, "new.so")
	libfaketimes.Store(oldLib, libfaketime{fixed: false})
	libfaketimes.Store(newLib, libfaketime{fixed: true})
	env := func(lib string) []string { return []string{LibfaketimeVar + "=" + lib} }
	goBin := helperBin(t, "central-mcp")

	cases := []struct {
		name     string
		p        *Profile
		environ  []string
		pinned   bool
		manifest string
		note     string
	}{
		{"go", profile("", goBin), env(newLib), false, "", ""},
		{"go-pinned", profile(ClockPinned, goBin), env(newLib), true, "pinned", "although"},
		{"wall", profile(ClockWall, sh), env(newLib), false, "", ""},
		{"dynamic", profile("", sh), env(newLib), true, "pinned", "clock stopped at the fixture's time"},
		{"no-lib", profile("", sh), env(filepath.Join(dir, "absent.so")), false, "unpinned", "NOT pinned"},
		{"old-lib", profile("", sh), env(oldLib), false, "unpinned", "older than 0.9.11"},
		{"old-lib-node", profile("", node), env(oldLib), true, "pinned", "clock stopped"}, // skipped without node
		{"old-lib-forced", profile(ClockPinned, sh), env(oldLib), true, "pinned", "clock stopped"},
		{"no-command", &Profile{Name: "http", URL: "http://127.0.0.1:1/mcp"}, env(newLib), false, "", ""},
	}
	_, noNode := exec.LookPath("node")
	for _, c := range cases {
		if c.name == "old-lib-node" && noNode != nil {
			t.Log("node is not installed: the case of a Node server under an old libfaketime is skipped")
			continue
		}
		plan := PlanClock(c.p, c.environ)
		if plan.Pinned() != c.pinned || plan.Manifest != c.manifest || !strings.Contains(plan.Note, c.note) || (c.note == "") != (plan.Note == "") {
			t.Errorf("%s: plan %+v; want pinned %v, manifest %q, note with %q", c.name, plan, c.pinned, c.manifest, c.note)
		}
		if c.manifest == "unpinned" && !strings.Contains(plan.Note, "server srv") {
			t.Errorf("%s: the note does not name the server: %s", c.name, plan.Note)
		}
	}
	connect := func(context.Context, []string) (io.ReadWriteCloser, error) { return nil, errors.New("unused") }
	if plan := (&Options{Environ: env(newLib), Connect: connect}).clockPlan(profile("", sh)); plan.Pinned() || plan.Manifest != "" {
		t.Errorf("an in-process server (Options.Connect) was planned a clock: %+v", plan)
	}
}

// TestClockEnv: the variables a pinned server gets, and that nothing of
// the user's own libfaketime settings reaches it.
func TestClockEnv(t *testing.T) {
	plan := ClockPlan{Library: "/lib/ft.so"}
	at := time.Date(2026, 11, 20, 10, 0, 0, 0, time.FixedZone("X", 3600)).In(time.Local)
	got := plan.Env([]string{"PATH=/bin", "LD_PRELOAD=/lib/mine.so", "FAKETIME=+1d", "FAKETIME_NO_CACHE=1", "HOME=/h"}, at)
	want := []string{"PATH=/bin", "HOME=/h", "LD_PRELOAD=/lib/ft.so:/lib/mine.so", "FAKETIME=2026-11-20 09:00:00",
		"FAKETIME_DONT_FAKE_MONOTONIC=1", "FAKETIME_DISABLE_SHM=1"}
	if !slices.Equal(got, want) {
		t.Errorf("env\n got %q\nwant %q", got, want)
	}
	if got := (ClockPlan{}).Env([]string{"A=1"}, at); !slices.Equal(got, []string{"A=1"}) {
		t.Errorf("an unpinned plan changed the env: %q", got)
	}
}

// TestInspectLibfaketime reads the installed library (skipped without
// one) and refuses a shared library that is not libfaketime.
func TestInspectLibfaketime(t *testing.T) {
	lib := systemLibfaketime()
	if lib == "" {
		t.Skip("libfaketime is not installed (apt-get install libfaketime)")
	}
	if l := inspectLibfaketime(lib); l.err != nil {
		t.Errorf("%s: %v", lib, l.err)
	} else {
		t.Logf("%s: 0.9.11 or later: %v", lib, l.fixed)
	}
	libc, _ := filepath.Glob("/usr/lib/*/libc.so.6")
	if len(libc) > 0 {
		if l := inspectLibfaketime(libc[0]); l.err == nil {
			t.Errorf("%s passed for libfaketime", libc[0])
		}
	}
	if l := inspectLibfaketime("/nonexistent/libfaketime.so.1"); l.err == nil {
		t.Error("a missing library passed")
	}
}

// TestPinnedServerLeavesNoSharedMemory: a pinned server that bench has to
// kill leaves nothing of libfaketime's in /dev/shm (versions before 0.9.12
// keep a semaphore and a segment there, named by the server's pid, and
// remove them only on a clean exit).
func TestPinnedServerLeavesNoSharedMemory(t *testing.T) {
	node, err := exec.LookPath("node")
	if err != nil {
		t.Skip("node is not installed")
	}
	if systemLibfaketime() == "" {
		t.Skip("libfaketime is not installed (apt-get install libfaketime)")
	}
	dir := t.TempDir()
	pidFile := filepath.Join(dir, "pid")
	// A server that ignores SIGTERM and outlives its stdin: bench SIGKILLs it.
	writeScript(t, dir, "server.js", `'use strict';
const fs = require('fs');
fs.writeFileSync(process.env.PID_FILE, process.pid + ' ' + fs.existsSync('/dev/shm/faketime_shm_' + process.pid));
process.on('SIGTERM', () => {});
setInterval(() => {}, 1000);
require('readline').createInterface({ input: process.stdin }).on('line', (line) => {
  const m = JSON.parse(line);
  if (m.id === undefined) return;
  const result = m.method === 'initialize'
    ? { protocolVersion: m.params.protocolVersion, capabilities: { tools: {} }, serverInfo: { name: 'stubborn', version: '1' } }
    : m.method === 'tools/list' ? { tools: [{ name: 'noop', inputSchema: { type: 'object' } }] } : {};
  process.stdout.write(JSON.stringify({ jsonrpc: '2.0', id: m.id, result }) + '\n');
});
`)
	p := &Profile{Name: "stubborn", Command: []string{node, "server.js"}, Env: map[string]string{"PID_FILE": pidFile}}
	if err := p.fill(); err != nil {
		t.Fatal(err)
	}
	p.Dir = dir
	if !PlanClock(p, nil).Pinned() {
		t.Skipf("not pinned here: %s", PlanClock(p, nil).Note)
	}
	r := New(&Options{StopGrace: 50 * time.Millisecond})
	defer r.Close()
	if _, err := r.Check(context.Background(), p, ""); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(pidFile)
	if err != nil {
		t.Fatal(err)
	}
	pid, had, _ := strings.Cut(string(b), " ")
	if had != "true" {
		t.Logf("this libfaketime keeps nothing in /dev/shm (FAKETIME_DISABLE_SHM): nothing to clean")
	}
	for _, f := range []string{"/dev/shm/faketime_shm_" + pid, "/dev/shm/sem.faketime_sem_" + pid} {
		if _, err := os.Stat(f); err == nil {
			os.Remove(f)
			t.Errorf("%s was left behind", f)
		}
	}
}
