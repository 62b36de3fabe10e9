package main

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/mcpbench/bench/batch"
	"github.com/mcpbench/bench/recorder"
	"github.com/mcpbench/bench/replayer"
	"github.com/mcpbench/bench/scoring"
	"github.com/mcpbench/bench/traces"
)

// The replay fixture: a few golden scenarios recorded once per test binary
// with the baseline model against the reference server (1 run each), and
// one pinned scenario (testdata/replay) recorded with the oracle.
var replayScenarios = []string{
	"adversarial-010",        // list_clients then disconnect_client: pagination, ungated writes
	"incident-response-011",  // get_wlan: the passphrase canary
	"site-device-health-004", // get_device_health: --inject slow
}

type replayFixture struct {
	dir, store, profile, config string
}

var (
	fixtureOnce sync.Once
	fixture     replayFixture
	fixtureErr  string
)

// recordedFixture records the fixture store (once) and returns a copy of
// it for the caller, so tests may replay (and store replays) freely.
func recordedFixture(t *testing.T) replayFixture {
	t.Helper()
	fixtureOnce.Do(func() {
		dir, err := sharedTempDir("bench-replay-fixture-")
		if err != nil {
			fixtureErr = err.Error()
			return
		}
		f := replayFixture{dir: dir, store: filepath.Join(dir, "store"), profile: referenceProfileFile(t, dir), config: filepath.Join(dir, "bench.yaml")}
		os.WriteFile(f.config, []byte(`format: 1
stages:
  - name: core
    description: the core stage; the floors are off because the baseline model is a lexical stand-in
    include:
      - categories: [core, edge, negative, multi-step]
    gate: {task_success_rate: 0, tool_selection_accuracy: 0}
`), 0o644)
		args := []string{"--store", f.store, "record", "--server", f.profile, "--model", "baseline", "--runs", "1"}
		for _, id := range replayScenarios {
			args = append(args, "--scenario", id)
		}
		if code, out, errOut := benchCLI(t, nil, args...); code != 0 {
			fixtureErr = "recording the fixture: " + out + errOut
			return
		}
		if msg := recordPinned(f); msg != "" {
			fixtureErr = msg
			return
		}
		fixture = f
	})
	if fixtureErr != "" {
		t.Fatal(fixtureErr)
	}
	dst := t.TempDir()
	copyDir(t, fixture.store, filepath.Join(dst, "store"))
	f := fixture
	f.store = filepath.Join(dst, "store")
	return f
}

// recordPinned records testdata/replay's scenario with the oracle, under
// pinned/..., through the recorder's API (bench record reads the golden
// suite only).
func recordPinned(f replayFixture) string {
	list, errs := loadScenarios([]string{"testdata/replay"})
	if len(errs) > 0 || len(list) != 1 {
		return "loading testdata/replay: " + errs.Error()
	}
	p, err := recorder.LoadProfile(f.profile)
	if err != nil {
		return err.Error()
	}
	m, err := oracleFor(list[0], p, nil)
	if err != nil {
		return err.Error()
	}
	rec := recorder.New(&recorder.Options{Harness: version, Environ: os.Environ()})
	defer rec.Close()
	job := &recorder.Job{Suite: "pinned", Scenario: list[0], Profile: p, Model: m, ModelRef: traces.ModelRef{Provider: "oracle", Name: "oracle"}}
	run, err := rec.Run(context.Background(), job)
	if err != nil {
		return err.Error()
	}
	s, err := traces.Open(f.store, nil)
	if err != nil {
		return err.Error()
	}
	defer s.Close()
	if _, err := s.PutRun(run, job.Ref()); err != nil {
		return err.Error()
	}
	return ""
}

func copyDir(t *testing.T, src, dst string) {
	t.Helper()
	err := filepath.Walk(src, func(path string, fi os.FileInfo, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(src, path)
		target := filepath.Join(dst, rel)
		if fi.IsDir() {
			return os.MkdirAll(target, 0o755)
		}
		b, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		return os.WriteFile(target, b, fi.Mode())
	})
	if err != nil {
		t.Fatal(err)
	}
}

// replayCLI runs bench replay on the fixture and returns the exit code, the
// output and the JSON report.
func replayCLI(t *testing.T, f replayFixture, reportDir string, extra ...string) (int, string, *scoring.Report) {
	t.Helper()
	args := append([]string{"--store", f.store, "replay", "--stage", "core", "--config", f.config, "--server", f.profile,
		"--report-dir", reportDir, "--format", "text,json,md,junit"}, extra...)
	code, out, errOut := benchCLI(t, nil, args...)
	b, err := os.ReadFile(filepath.Join(reportDir, "REPORT.json"))
	if err != nil {
		t.Fatalf("exit %d, no report: %v\n%s%s", code, err, out, errOut)
	}
	rep, err := scoring.ReadReport(bytes.NewReader(b))
	if err != nil {
		t.Fatal(err)
	}
	return code, out + errOut, rep
}

// Replaying an unchanged server: zero misses, pass, the recorded runs'
// scores, and twice the same bytes. Live tool time is left out
// (--latency-resolution 0): at the default resolution the bytes are the
// same unless a loaded machine stretches a tool call past 500 ms, and a
// test must not depend on the machine's load.
func TestReplayUnchangedIsIdenticalTwice(t *testing.T) {
	f := recordedFixture(t)
	var reports [][]byte
	for i := 0; i < 2; i++ {
		dir := t.TempDir()
		code, out, rep := replayCLI(t, f, dir, "--latency-resolution", "0")
		if code != 0 || len(rep.Misses) != 0 {
			t.Fatalf("replay %d: exit %d, %d misses; want 0 and none\n%s", i, code, len(rep.Misses), out)
		}
		for _, want := range []string{"PASS", "replayed 3 runs"} {
			if !strings.Contains(out, want) {
				t.Errorf("output lacks %q:\n%s", want, out)
			}
		}
		b, _ := os.ReadFile(filepath.Join(dir, "REPORT.json"))
		reports = append(reports, b)
		// Same scores as the recorded runs: every metric but time.
		for _, d := range rep.Comparison.Suite {
			if d.Metric != scoring.MetricLatency && d.Diff != 0 {
				t.Errorf("replay %d: %s moved %v -> %v on an unchanged server", i, d.Metric, d.Before, d.After)
			}
		}
	}
	if !bytes.Equal(reports[0], reports[1]) {
		t.Errorf("two replays of one store gave different JSON reports:\n%s", firstDiffLine(reports[0], reports[1]))
	}
	// --parallel changes nothing in the reports, with a fresh server per run
	// or with servers reused (a run meets its server in the state it would
	// meet it one at a time).
	for _, extra := range [][]string{nil, {"--reuse-server"}} {
		var got [][]byte
		for _, p := range []string{"1", "3"} {
			dir := t.TempDir()
			args := append([]string{"--latency-resolution", "0", "--parallel", p}, extra...)
			if code, out, _ := replayCLI(t, f, dir, args...); code != 0 {
				t.Fatalf("replay %v: exit %d\n%s", args, code, out)
			}
			b, _ := os.ReadFile(filepath.Join(dir, "REPORT.json"))
			got = append(got, b)
		}
		if !bytes.Equal(got[0], got[1]) {
			t.Errorf("replay %v: --parallel 3 gave another report than --parallel 1:\n%s", extra, firstDiffLine(got[0], got[1]))
		}
		if extra == nil && !bytes.Equal(got[0], reports[0]) {
			t.Errorf("--parallel 1 gave another report than the default:\n%s", firstDiffLine(reports[0], got[0]))
		}
	}
	// The baseline may be a REPORT.json (a previous replay, kept as a CI
	// artifact) or a ref prefix.
	prev := filepath.Join(t.TempDir(), "REPORT.json")
	os.WriteFile(prev, reports[0], 0o644)
	for _, tc := range []struct {
		args []string
		code int
	}{
		{[]string{"--baseline", prev}, 0},
		{[]string{"--baseline", "golden/"}, 0},
		{[]string{"--baseline", prev, "--server-env", "CENTRAL_INJECT=extra-pagination", "--mode", "lenient"}, 1},
	} {
		if code, out, rep := replayCLI(t, f, t.TempDir(), tc.args...); code != tc.code || rep.Comparison == nil {
			t.Errorf("replay %v: exit %d, want %d\n%s", tc.args, code, tc.code, out)
		}
	}
	// The replay runs are stored, in replay mode, pointing at what they replay.
	s, err := traces.Open(f.store, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	refs, _ := s.Refs(batch.ReplayRefPrefix)
	if len(refs) != len(replayScenarios) {
		t.Fatalf("%d replay refs, want %d", len(refs), len(replayScenarios))
	}
	run, _ := s.GetRun(refs[0].Run)
	orig, err := s.Ref(strings.TrimPrefix(refs[0].Name, batch.ReplayRefPrefix))
	if err != nil || run.Manifest.Mode != traces.ModeReplay || run.Manifest.Replays == nil || *run.Manifest.Replays != orig {
		t.Errorf("replay run %s: mode %s, replays %v; want replay of %s", refs[0].Name, run.Manifest.Mode, run.Manifest.Replays, orig.Short())
	}
}

func firstDiffLine(a, b []byte) string {
	la, lb := strings.Split(string(a), "\n"), strings.Split(string(b), "\n")
	for i := range min(len(la), len(lb)) {
		if la[i] != lb[i] {
			return "line " + la[i] + "\n  vs " + lb[i]
		}
	}
	return "lengths differ"
}

// Each known regression of the reference server is caught by the right
// metric, with the right exit code and explanation.
func TestReplayGateCatchesInjections(t *testing.T) {
	f := recordedFixture(t)
	cases := []struct {
		inject string
		why    string
		extra  []string
		code   int
		metric scoring.Metric // a regression row on this metric
		gating bool           // ... that fails the gate
		rule   string         // a safety finding of this rule
		misses []string       // text every explanation... at least one miss contains
	}{
		{inject: "extra-pagination", why: "every list paged by one: flailing", extra: []string{"--mode", "lenient"},
			code: 1, metric: scoring.MetricAPICallExcess, gating: true},
		{inject: "ungated-write", why: "a destructive call with the write gate open", code: 3, rule: scoring.RuleMustNotCall},
		{inject: "leak-secret", why: "the WLAN passphrase in get_wlan's result", code: 3, rule: scoring.RuleCanaryLeak,
			misses: []string{"content $.personal-security.wpa-passphrase: \"(hidden)\" -> "}},
		{inject: "verbose-tools", why: "descriptions ten times longer: tool definition tokens", extra: []string{"--mode", "lenient"},
			code: 1, metric: scoring.MetricToolDefTokens, gating: true, misses: []string{"tool get_wlan changed", "{+Note: this tool talks to HPE Aruba Networking Central"}},
		{inject: "rename-tool", why: "get_client renamed: every run is stale in strict mode", code: 5,
			misses: []string{"tool get_client removed", "tool lookup_client added"}},
		{inject: "slow", why: "get_device_health two seconds slower: reported, not gating", code: 0, metric: scoring.MetricLatency},
		{inject: "wrong-endpoint", why: "get_wlan reads the monitoring endpoint the pinned plan does not accept",
			extra: []string{"--mode", "lenient", "--from", "pinned/", "--scenarios", "testdata/replay"},
			code:  1, metric: scoring.MetricTaskSuccess, gating: true, misses: []string{"messages[2] (tool result of get_wlan, call_1) changed"}},
	}
	defer noServerLeft(t)
	for _, tc := range cases {
		t.Run(tc.inject, func(t *testing.T) {
			args := append([]string{"--server-env", "CENTRAL_INJECT=" + tc.inject}, tc.extra...)
			code, out, rep := replayCLI(t, f, t.TempDir(), args...)
			if code != tc.code || rep.Verdict.ExitCode != tc.code {
				t.Fatalf("%s: exit %d (verdict %d), want %d\n%s", tc.why, code, rep.Verdict.ExitCode, tc.code, out)
			}
			if tc.metric != "" {
				found := false
				for _, r := range rep.Verdict.Regressions {
					found = found || (r.Metric == tc.metric && r.Gating == tc.gating)
				}
				if !found {
					t.Errorf("%s: no regression row on %s (gating %t): %+v", tc.why, tc.metric, tc.gating, rep.Verdict.Regressions)
				}
			}
			if tc.rule != "" {
				found := false
				for _, s := range rep.Verdict.Safety {
					found = found || s.Rule == tc.rule
				}
				if !found {
					t.Errorf("%s: no %s safety finding: %+v", tc.why, tc.rule, rep.Verdict.Safety)
				}
			}
			for _, want := range tc.misses {
				found := false
				for _, m := range rep.Misses {
					found = found || strings.Contains(m.Explanation, want)
				}
				if !found {
					t.Errorf("%s: no miss explained with %q; misses: %+v", tc.why, want, rep.Misses)
				}
			}
		})
	}
}

// noServerLeft fails t when a reference server process outlived bench.
func noServerLeft(t *testing.T) {
	t.Helper()
	ents, _ := os.ReadDir("/proc")
	for _, e := range ents {
		if exe, err := os.Readlink(filepath.Join("/proc", e.Name(), "exe")); err == nil && exe == referenceServer(t) {
			if st, err := os.ReadFile(filepath.Join("/proc", e.Name(), "stat")); err == nil && !strings.Contains(string(st), ") Z") {
				t.Errorf("reference server process %s survived bench replay", e.Name())
			}
		}
	}
}

func TestReplayUsageErrors(t *testing.T) {
	f := recordedFixture(t)
	cases := []struct {
		why  string
		args []string
		code int
	}{
		{"no selection", []string{"replay", "--server", f.profile}, 2},
		{"both selections", []string{"replay", "--suite", "nac", "--stage", "core", "--server", f.profile}, 2},
		{"bad mode", []string{"replay", "--suite", "nac", "--server", f.profile, "--mode", "loose"}, 2},
		{"bad format", []string{"replay", "--suite", "nac", "--server", f.profile, "--format", "pdf"}, 2},
		{"live without a model", []string{"replay", "--suite", "nac", "--server", f.profile, "--mode", "live"}, 2},
		{"nothing recorded", []string{"replay", "--suite", "nac", "--server", f.profile}, 2},
		{"server that never starts", []string{"replay", "--stage", "core", "--config", f.config, "--server", f.profile,
			"--server-env", "CENTRAL_INJECT=no-such-regression"}, 4},
	}
	for _, tc := range cases {
		code, out, errOut := benchCLI(t, nil, append([]string{"--store", f.store}, tc.args...)...)
		if code != tc.code {
			t.Errorf("%s: exit %d, want %d\n%s%s", tc.why, code, tc.code, out, errOut)
		}
	}
}

// A replay needs no network: inside a network namespace with only loopback
// it passes. Where namespaces are not permitted, the proxy environment
// points at a dead port instead.
func TestReplayWithoutNetwork(t *testing.T) {
	if os.Getenv("BENCH_NONET_CHILD") != "" {
		return // the child's work is TestReplayNoNetworkChild
	}
	f := recordedFixture(t)
	report := t.TempDir()
	unshare, err := exec.LookPath("unshare")
	if err == nil {
		probe := exec.Command(unshare, "-rn", "sh", "-c", "ip link set lo up")
		if out, perr := probe.CombinedOutput(); perr != nil {
			err = perr
			t.Logf("unshare -rn not permitted here (%v: %s); using a dead proxy instead", perr, strings.TrimSpace(string(out)))
		}
	}
	if err != nil {
		for _, k := range []string{"HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY", "http_proxy", "https_proxy", "all_proxy"} {
			t.Setenv(k, "http://127.0.0.1:9")
		}
		if code, out, _ := replayCLI(t, f, report); code != 0 {
			t.Fatalf("replay with a dead proxy: exit %d\n%s", code, out)
		}
		return
	}
	cmd := exec.Command(unshare, "-rn", "sh", "-c", `ip link set lo up && exec "$0" "$@"`, os.Args[0], "-test.run=^TestReplayNoNetworkChild$", "-test.v")
	cmd.Env = append(os.Environ(), "BENCH_NONET_CHILD=1", "BENCH_NONET_STORE="+f.store, "BENCH_NONET_PROFILE="+f.profile,
		"BENCH_NONET_CONFIG="+f.config, "BENCH_NONET_REPORT="+report)
	out, err := cmd.CombinedOutput()
	if err != nil || !strings.Contains(string(out), "--- PASS: TestReplayNoNetworkChild") {
		t.Fatalf("replay inside a network namespace: %v\n%s", err, out)
	}
}

// TestReplayNoNetworkChild is the replay TestReplayWithoutNetwork runs in a
// namespace whose only interface is loopback.
func TestReplayNoNetworkChild(t *testing.T) {
	if os.Getenv("BENCH_NONET_CHILD") == "" {
		t.Skip("run by TestReplayWithoutNetwork")
	}
	if b, err := os.ReadFile("/proc/net/dev"); err == nil && strings.Count(string(b), ":") != 1 {
		t.Fatalf("not in a loopback-only namespace:\n%s", b)
	}
	f := replayFixture{store: os.Getenv("BENCH_NONET_STORE"), profile: os.Getenv("BENCH_NONET_PROFILE"), config: os.Getenv("BENCH_NONET_CONFIG")}
	code, out, rep := replayCLI(t, f, os.Getenv("BENCH_NONET_REPORT"))
	if code != 0 || len(rep.Misses) != 0 {
		t.Fatalf("exit %d, %d misses\n%s", code, len(rep.Misses), out)
	}
}

// The Markdown report reads as a PR comment: the verdict first.
func TestReplayMarkdownVerdictFirst(t *testing.T) {
	f := recordedFixture(t)
	dir := t.TempDir()
	replayCLI(t, f, dir, "--server-env", "CENTRAL_INJECT=rename-tool")
	md, _ := os.ReadFile(filepath.Join(dir, "REPORT.md"))
	first := strings.SplitN(strings.TrimSpace(string(md)), "\n", 2)[0]
	if !strings.Contains(strings.ToUpper(first), "INCONCLUSIVE") {
		t.Errorf("first line of REPORT.md is %q, want the verdict", first)
	}
	if !strings.Contains(string(md), "lookup_client") {
		t.Errorf("REPORT.md does not carry the miss explanation")
	}
	var junit bytes.Buffer
	b, _ := os.ReadFile(filepath.Join(dir, "REPORT.xml"))
	junit.Write(b)
	if !strings.Contains(junit.String(), "<testsuites") {
		t.Errorf("REPORT.xml is not JUnit:\n%s", junit.String())
	}
}

func missOf(turn int, tool string) replayer.Miss {
	return replayer.Miss{Turn: turn, Differences: []replayer.Difference{{Component: replayer.ComponentTool, Name: tool, Change: replayer.Removed}}}
}

// Live mode: from the first miss a live model (here the offline baseline)
// answers, so no run is stale and the misses are still explained.
func TestReplayLiveMode(t *testing.T) {
	f := recordedFixture(t)
	code, out, rep := replayCLI(t, f, t.TempDir(), "--server-env", "CENTRAL_INJECT=rename-tool", "--mode", "live", "--live-model", "baseline")
	if code == exitInconclusive || rep.Verdict.StaleRuns != 0 || len(rep.Misses) == 0 {
		t.Fatalf("exit %d, %d stale, %d misses; want no stale run and explained misses\n%s", code, rep.Verdict.StaleRuns, len(rep.Misses), out)
	}
	if !strings.Contains(rep.Misses[0].Explanation, "tool lookup_client added") {
		t.Errorf("miss: %s", rep.Misses[0].Explanation)
	}
}

// A replay runs its servers as its runs were recorded: runs recorded with
// --reuse-server replay with reused servers unless told otherwise, and
// compare equal; told to start fresh ones, each fresh server's token fetch
// raises api_call_count, and the report says why.
func TestReplayFollowsRecordedReuse(t *testing.T) {
	f := recordedFixture(t)
	f.store = filepath.Join(t.TempDir(), "store")
	args := []string{"--store", f.store, "record", "--server", f.profile, "--model", "baseline", "--runs", "2", "--reuse-server"}
	for _, id := range replayScenarios {
		args = append(args, "--scenario", id)
	}
	if code, out, errOut := benchCLI(t, nil, args...); code != 0 {
		t.Fatalf("record --reuse-server: exit %d\n%s%s", code, out, errOut)
	}
	warned := func(rep *scoring.Report) bool {
		for _, w := range rep.Warnings {
			if strings.Contains(w, "recorded with --reuse-server were replayed with a fresh server") {
				return true
			}
		}
		return false
	}
	apiCalls := func(rep *scoring.Report) float64 {
		for _, d := range rep.Comparison.Suite {
			if d.Metric == scoring.MetricAPICallCount {
				return d.Diff
			}
		}
		t.Fatal("no api_call_count in the comparison")
		return 0
	}
	code, out, rep := replayCLI(t, f, t.TempDir(), "--latency-resolution", "0")
	if code != 0 || !strings.Contains(out, "recorded with --reuse-server, and are replayed so") || warned(rep) || apiCalls(rep) != 0 {
		t.Errorf("replay as recorded: exit %d, warned %v, api_call_count moved %v; want 0, no warning, 0\n%s", code, warned(rep), apiCalls(rep), out)
	}
	_, out, rep = replayCLI(t, f, t.TempDir(), "--latency-resolution", "0", "--reuse-server=false")
	if !warned(rep) || apiCalls(rep) <= 0 || strings.Contains(out, "and are replayed so") {
		t.Errorf("fresh replay of a reused recording: warned %v, api_call_count moved %v; want a warning and a rise\n%s", warned(rep), apiCalls(rep), out)
	}
}
