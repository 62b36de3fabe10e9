package recorder

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/mcpbench/bench/internal/testbin"
)

// TestHostileWireCapped records one run with the bench binary, under
// testbin's memory cap, against servers whose one message never ends or
// is over bench's limit, or nested too deep, or that answers another id
// (issue 16, rows 2, 12 and 15): each run is stored with an error that
// names the cause, bench's peak RSS stays under
// testbin.PeakRSSLimit, and the server and bench's temporary files are
// gone when bench exits.
func TestHostileWireCapped(t *testing.T) {
	bench := testbin.Build(t, "./cmd/bench")
	py := python3(t)
	cases := []struct {
		script, mode string
		http         bool
		want         string // in `traces show` of the run
		why          string
	}{
		{"streamable.py", "sse-line", true, "ERROR       message_too_large: call 0 (list_alerts): the server sent an SSE event over 32 MiB",
			"an event stream of one line that never ends (row 2)"},
		{"streamable.py", "json-body", true, "ERROR       message_too_large: call 0 (list_alerts): the server sent an HTTP response body over 32 MiB",
			"a JSON body that never ends"},
		{"wire.py", "long-line", false, "ERROR       message_too_large: call 0 (list_alerts): the server sent a line over 32 MiB",
			"a 50 MB line on stdio (row 12)"},
		{"wire.py", "deep-json", false, "the server sent a message nested over 1000 levels deep",
			"a result nested 100,000 arrays deep (row 12)"},
		{"wire.py", "wrong-id", false, "which bench never sent (a JSON-RPC id mismatch)",
			"a response whose id is not the call's (row 15)"},
		{"flood.py", "flood", false, "call 0      list_alerts {} -> ok",
			"5000 reads of a 20 KB list from the fake in one call: the journal keeps 8 MiB of bodies, not 100 MB"},
	}
	for _, c := range cases {
		t.Run(c.mode, func(t *testing.T) {
			dir := t.TempDir()
			tmp, store := filepath.Join(dir, "tmp"), filepath.Join(dir, "store")
			if err := os.Mkdir(tmp, 0o700); err != nil {
				t.Fatal(err)
			}
			pidfile := filepath.Join(dir, "pids")
			script, err := filepath.Abs(filepath.Join("testdata", "hostile", c.script))
			if err != nil {
				t.Fatal(err)
			}
			// Named reference so that the oracle follows the reference
			// server's plan for alerts-001: one call of list_alerts.
			profile := fmt.Sprintf("name: reference\nrepo: local\ncommand: [%q, %q]\nenv: {HOSTILE_WIRE: %s, HOSTILE_PIDFILE: %q, HOSTILE_TOOL: list_alerts}\n",
				py, script, c.mode, pidfile)
			if c.http {
				profile = fmt.Sprintf("name: reference\nrepo: local\ntransport: http\ncommand: [%q, %q, \"{port}\"]\nurl: http://127.0.0.1:{port}/mcp\nenv: {HOSTILE_WIRE: %s, HOSTILE_PIDFILE: %q, HOSTILE_TOOL: list_alerts}\n",
					py, script, c.mode, pidfile)
			}
			prof := filepath.Join(dir, "hostile.yaml")
			if err := os.WriteFile(prof, []byte(profile), 0o644); err != nil {
				t.Fatal(err)
			}
			env := append(os.Environ(), "TMPDIR="+tmp)
			cmd := exec.Command(bench, "--store", store, "record", "--scenario", "alerts-001", "--server", prof,
				"--model", "oracle", "--runs", "1")
			cmd.Env = env
			res, err := testbin.RunCapped(cmd, 2*time.Minute)
			if err != nil {
				t.Fatal(err)
			}
			checkNoLeftovers(t, pidfile)
			t.Logf("%s: peak RSS %d MB", c.mode, res.PeakRSS>>20)
			if res.PeakRSS >= testbin.PeakRSSLimit {
				t.Errorf("%s: bench's peak RSS %d MB, over %d MB", c.why, res.PeakRSS>>20, testbin.PeakRSSLimit>>20)
			}
			if res.ExitCode != 0 || !strings.Contains(string(res.Stdout), "recorded 1 of 1 runs") {
				t.Errorf("%s: the run is not recorded: %s", c.why, res)
			} else {
				show := exec.Command(bench, "--store", store, "traces", "show", "golden/reference/oracle/alerts-001")
				show.Env = env
				out, err := show.CombinedOutput()
				if err != nil || !strings.Contains(string(out), c.want) {
					t.Errorf("%s: traces show does not say %q: %v\n%s", c.why, c.want, err, out)
				}
			}
			if left, _ := os.ReadDir(tmp); len(left) > 0 {
				var names []string
				for _, e := range left {
					names = append(names, e.Name())
				}
				t.Errorf("%s: bench left temporary files behind: %s", c.why, strings.Join(names, ", "))
			}
		})
	}
}

// TestHostileDefinitionsCapped: a server whose one tool is described in
// 5 MiB (one message well under the size limit, but every model turn would
// carry it) does not start, the error names the bound, and bench's peak
// RSS stays under the limit (at 30 MB it was 1.3 GB).
func TestHostileDefinitionsCapped(t *testing.T) {
	bench := testbin.Build(t, "./cmd/bench")
	dir := t.TempDir()
	script, err := filepath.Abs(filepath.Join("testdata", "hostile", "wire.py"))
	if err != nil {
		t.Fatal(err)
	}
	prof := filepath.Join(dir, "hostile.yaml")
	profile := fmt.Sprintf("name: reference\nrepo: local\ncommand: [%q, %q]\nenv: {HOSTILE_WIRE: huge-definitions, HOSTILE_TOOL: list_alerts}\n", python3(t), script)
	if err := os.WriteFile(prof, []byte(profile), 0o644); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(bench, "--store", filepath.Join(dir, "store"), "record", "--scenario", "alerts-001", "--server", prof,
		"--model", "baseline", "--runs", "1")
	res, err := testbin.RunCapped(cmd, 2*time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("peak RSS %d MB", res.PeakRSS>>20)
	if res.PeakRSS >= testbin.PeakRSSLimit {
		t.Errorf("bench's peak RSS %d MB, over %d MB", res.PeakRSS>>20, testbin.PeakRSSLimit>>20)
	}
	if res.ExitCode != 4 || !strings.Contains(string(res.Stderr), "tool definitions and instructions are over 4 MiB") {
		t.Errorf("want exit 4 naming the bound: %s", res)
	}
}
