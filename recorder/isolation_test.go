package recorder

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/mcpbench/bench/internal/testbin"
	"github.com/mcpbench/bench/llm"
	"github.com/mcpbench/bench/traces"
)

// escapeRun records one run of testdata/escape/server.py, whose tool tries
// the fake, an outside host through the proxy, a loopback port of the
// machine, another run's fake and an outside address, under isolation. It
// returns what the tool got and the egress the trace journaled.
func escapeRun(t *testing.T, isolation string) (map[string]string, []string, *traces.Run, []string) {
	t.Helper()
	py, err := exec.LookPath("python3")
	if err != nil {
		t.Skip("python3 not installed")
	}
	targets, stop, err := testbin.EscapeTargets()
	if err != nil {
		t.Fatal(err)
	}
	defer stop()
	script, _ := filepath.Abs("testdata/escape/server.py")
	p := &Profile{Name: "escape", Command: []string{py, script}, Env: map[string]string{"ESCAPE_TARGETS": strings.Join(targets, " ")}}
	if err := p.fill(); err != nil {
		t.Fatal(err)
	}
	p.Dir = t.TempDir()
	rec := New(&Options{Isolation: isolation, Environ: os.Environ()})
	defer rec.Close()
	plan := []llm.PlanStep{{Tool: "probe"}}
	run, err := rec.Run(context.Background(), &Job{Suite: "test", Scenario: hostileScenario(), Profile: p, Model: oracle(t, plan, `{"status":"ok"}`)})
	if err != nil {
		t.Fatal(err)
	}
	var got map[string]string
	var egress []string
	for _, e := range run.Events {
		switch {
		case e.Call != nil && e.Call.Result != nil:
			var res struct {
				Content []struct{ Text string } `json:"content"`
			}
			json.Unmarshal(e.Call.Result, &res)
			if len(res.Content) > 0 {
				json.Unmarshal([]byte(res.Content[0].Text), &got)
			}
		case e.Egress != nil:
			egress = append(egress, e.Egress.Host)
		}
	}
	if got == nil {
		t.Fatalf("no probe result; events: %s", summary(run))
	}
	return got, egress, run, targets
}

// TestIsolationKernel: in its sandbox, a server reaches its own fake and
// the fake's proxy, and nothing else — no loopback port of the machine, no
// other run's fake, no outside address — and each refused attempt is in
// the trace as egress (issue 16, item 4).
func TestIsolationKernel(t *testing.T) {
	if err := KernelIsolation(); err != nil {
		t.Skipf("no sandbox here: %v", err)
	}
	got, egress, run, targets := escapeRun(t, IsolationKernel)
	if !strings.HasPrefix(got["fake"], "ok HTTP/1.1 ") {
		t.Errorf("the fake: %q, want an HTTP answer", got["fake"])
	}
	if !strings.HasPrefix(got["proxy"], "ok HTTP/1.1 403") {
		t.Errorf("an outside host through the proxy: %q, want the proxy's 403", got["proxy"])
	}
	for _, a := range targets {
		if !strings.HasPrefix(got[a], "error ") {
			t.Errorf("%s reached from the sandbox: %q", a, got[a])
		}
		if !slices.Contains(egress, a) {
			t.Errorf("the attempt on %s is not in the journal (egress %q)", a, egress)
		}
	}
	if !slices.ContainsFunc(egress, func(h string) bool { return strings.HasPrefix(h, "example.com") }) {
		t.Errorf("the proxy's refusal is not in the journal (egress %q)", egress)
	}
	if run.Events[0].Initialize == nil || run.Events[0].Initialize.Isolation != IsolationKernel {
		t.Errorf("the run does not say it had kernel isolation: %+v", run.Events[0].Initialize)
	}
}

// TestIsolationProxy is the control: under the proxy convention alone the
// same server reaches the machine's loopback port and the other run's fake
// — what the sandbox takes away — and the run says which isolation it had.
func TestIsolationProxy(t *testing.T) {
	got, egress, run, targets := escapeRun(t, IsolationProxy)
	for _, a := range targets[:2] {
		if !strings.HasPrefix(got[a], "ok ") {
			t.Errorf("%s: %q, want it reached without the sandbox", a, got[a])
		}
		if slices.Contains(egress, a) {
			t.Errorf("%s journaled without the sandbox", a)
		}
	}
	if run.Events[0].Initialize.Isolation != IsolationProxy {
		t.Errorf("isolation %q", run.Events[0].Initialize.Isolation)
	}
}
