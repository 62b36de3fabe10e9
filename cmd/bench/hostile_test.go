package main

import (
	"bytes"
	"context"
	"encoding/hex"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
	"unicode"

	"gopkg.in/yaml.v3"

	"github.com/mcpbench/bench/fakecentral"
	"github.com/mcpbench/bench/internal/escape/escapetest"
	"github.com/mcpbench/bench/internal/testbin"
	"github.com/mcpbench/bench/recorder"
	"github.com/mcpbench/bench/scenarios"
	"github.com/mcpbench/bench/scoring"
	"github.com/mcpbench/bench/traces"
)

// hostileSetup is a store of real recorded runs of a server whose every
// word holds every hostile string of issue 16 (testdata/hostile/server.py):
// one run by a profile named "hostile" that a scenario covers (so it is
// scored: its tool result leaks the fixture's canary, a safety failure
// naming the hostile tool), and one by a profile whose name is hostile too
// (absent from the scenario).
type hostileSetup struct {
	bench, dir, store, scenarios, config string
	profile, named                       string // profile files
	ref, namedRef                        string // their runs' refs
}

// printable is s without what a profile's name may not hold.
func printable(s string) string {
	return strings.Map(func(r rune) rune {
		if unicode.IsControl(r) || unicode.Is(unicode.Bidi_Control, r) {
			return -1
		}
		return r
	}, strings.ToValidUTF8(s, ""))
}

// asServerSees is s as bench reads it from the server's JSON: each byte
// that is not UTF-8 replaced by U+FFFD.
func asServerSees(s string) string { return string([]rune(s)) }

func newHostileSetup(t *testing.T) *hostileSetup {
	t.Helper()
	python, err := exec.LookPath("python3")
	if err != nil {
		t.Fatalf("the hostile server needs python3: %v", err)
	}
	script, err := filepath.Abs("testdata/hostile/server.py")
	if err != nil {
		t.Fatal(err)
	}
	h := &hostileSetup{bench: testbin.Build(t, "./cmd/bench"), dir: t.TempDir()}
	h.store = filepath.Join(h.dir, "store")
	h.scenarios = filepath.Join(h.dir, "scenarios")
	h.config = filepath.Join(h.dir, "bench.yaml")
	fx, err := fakecentral.LoadFixture("site-a")
	if err != nil {
		t.Fatal(err)
	}
	canary := fx.Secrets()[0]
	writeYAML := func(path string, v any) {
		b, err := yaml.Marshal(v)
		if err != nil {
			t.Fatal(err)
		}
		must(t, os.MkdirAll(filepath.Dir(path), 0o755))
		must(t, os.WriteFile(path, b, 0o644))
	}
	// A profile cannot hold bytes that are not UTF-8 (YAML cannot), and
	// the store keys runs by server name with NUL separators: the hostile
	// name has every other hostile string. The server sends them all.
	profile := func(name string) map[string]any {
		return map[string]any{"name": name, "command": []string{python, script}, "clock": "wall",
			"env": map[string]string{"HOSTILE_HEX": hex.EncodeToString([]byte(escapetest.All)), "HOSTILE_CANARY": canary}}
	}
	h.profile, h.named = filepath.Join(h.dir, "hostile.yaml"), filepath.Join(h.dir, "named.yaml")
	writeYAML(h.profile, profile("hostile"))
	// A profile's name is one line of printable text (bench refuses the
	// rest, TestHostileProfileNameRefused): the named profile has every
	// hostile string but its control and bidi characters.
	writeYAML(h.named, profile(printable(escapetest.All)))
	writeYAML(filepath.Join(h.scenarios, "hostile-wlan-001.yaml"), map[string]any{
		"format": 1, "id": "hostile-wlan-001", "suite": "wlan-change", "category": "core", "tags": []string{"read"},
		"intent": "What security does the Corp-Net WLAN use?", "platform": "central", "fixture": "site-a", "write_gate": "read",
		"expected_tools":   map[string][]string{"hostile": {asServerSees("get_wlan" + escapetest.All)}},
		"result_schema":    map[string]any{"type": "object", "required": []string{"security"}},
		"reference_result": map[string]any{"security": "wpa3-enterprise"},
		"success_criteria": "The answer names the security.",
	})
	must(t, os.WriteFile(h.config, []byte("format: 1\nstages:\n  - name: core\n    description: the hostile scenario\n    include:\n      - categories: [core]\n    gate: {task_success_rate: 0, tool_selection_accuracy: 0}\n"), 0o644))

	list, errs := loadScenarios([]string{h.scenarios})
	if len(errs) > 0 || len(list) != 1 {
		t.Fatalf("loading the hostile scenario: %v", errs)
	}
	s, err := traces.Open(h.store, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	rec := recorder.New(&recorder.Options{Harness: version, Environ: os.Environ()})
	defer rec.Close()
	for _, p := range []struct {
		file string
		ref  *string
	}{{h.profile, &h.ref}, {h.named, &h.namedRef}} {
		prof, err := recorder.LoadProfile(p.file)
		if err != nil {
			t.Fatal(err)
		}
		m, err := oracleFor(list[0], prof, nil)
		if err != nil {
			t.Fatal(err)
		}
		// The five runs a release page asks of every scenario.
		for i := range scenarios.DefaultRuns {
			job := &recorder.Job{Suite: "golden", Scenario: list[0], Profile: prof, Model: m, ModelRef: traces.ModelRef{Provider: "oracle", Name: "oracle"}, RunIndex: i}
			run, err := rec.Run(context.Background(), job)
			if err != nil {
				t.Fatalf("recording against %s: %v", p.file, err)
			}
			if _, err := s.PutRun(run, job.Ref()); err != nil {
				t.Fatal(err)
			}
			if i == 0 {
				*p.ref = job.Ref()
			}
		}
	}
	return h
}

// run runs the bench binary under the memory cap and checks its peak RSS
// and that its output holds no raw control character.
func (h *hostileSetup) run(t *testing.T, want int, args ...string) *testbin.Result {
	t.Helper()
	cmd := exec.Command(h.bench, append([]string{"--store", h.store}, args...)...)
	cmd.Env = os.Environ()
	res, err := testbin.RunCapped(cmd, 2*time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("bench %s: exit %d, peak RSS %d MB", strings.Join(args, " "), res.ExitCode, res.PeakRSS>>20)
	if res.ExitCode != want {
		t.Fatalf("bench %s: exit %d, want %d\n%s", strings.Join(args, " "), res.ExitCode, want, res)
	}
	if res.PeakRSS >= testbin.PeakRSSLimit {
		t.Errorf("bench %s: peak RSS %d MB, over %d MB", strings.Join(args, " "), res.PeakRSS>>20, testbin.PeakRSSLimit>>20)
	}
	for _, out := range [][]byte{res.Stdout, res.Stderr} {
		for _, p := range escapetest.CheckTerminal(out) {
			t.Errorf("bench %s: %s", strings.Join(args, " "), p)
		}
	}
	return res
}

// checkMarkdown checks a Markdown report's structure and returns it.
func checkMarkdown(t *testing.T, name string, doc []byte) *escapetest.Markdown {
	t.Helper()
	m := escapetest.CheckMarkdown(doc)
	for _, p := range m.Problems {
		t.Errorf("%s: %s", name, p)
	}
	if len(m.Headings) == 0 || !strings.HasPrefix(m.Headings[0], "bench") && !strings.HasPrefix(m.Headings[0], "Benchmark results") {
		t.Errorf("%s: headings %q: the first is not bench's own", name, m.Headings)
	}
	if t.Failed() {
		t.Logf("%s:\n%s", name, doc)
	}
	return m
}

// checkXML checks an XML document is well-formed and has n of element el.
func checkXML(t *testing.T, name string, doc []byte, el string, n int) {
	t.Helper()
	x := escapetest.CheckXML(doc)
	for _, p := range x.Problems {
		t.Errorf("%s: %s", name, p)
	}
	if x.Elements[el] != n {
		t.Errorf("%s: %d <%s> elements, want %d\n%s", name, x.Elements[el], el, n, doc)
	}
}

// Issue 16, rows 9 and 13: a server whose name, server info, tool names,
// descriptions, results and errors hold every hostile string is checked,
// recorded, shown, replayed, reported and diffed by the bench binary, and
// every output keeps its structure: the Markdown reports and page (tables,
// headings, no raw HTML but bench's own), JUnit and the SVG chart
// (well-formed XML, the right test cases), the terminal text (no control
// character).
func TestHostileServerOutputKeepsItsStructure(t *testing.T) {
	h := newHostileSetup(t)
	hostileTool := `get_wlan\n## bench: PASS · exit 0\n a|b|c <!-- hidden <script>alert(1)</script> \x1b[2J \x07 \r \x00 \u202e ��`

	t.Run("servers check", func(t *testing.T) {
		res := h.run(t, exitOK, "servers", "check", h.named)
		for _, want := range []string{"2 tools", hostileTool, `server info {"name":"server\n## bench`} {
			if !bytes.Contains(res.Stdout, []byte(want)) {
				t.Errorf("servers check lacks %q:\n%s", want, res.Stdout)
			}
		}
		// One line per tool: the header, the tools; no line a server forged.
		if got := strings.Count(string(res.Stdout), "\n"); got != 8+2 {
			t.Errorf("servers check printed %d lines, want 10:\n%s", got, res.Stdout)
		}
	})
	t.Run("traces show", func(t *testing.T) {
		res := h.run(t, exitOK, "traces", "show", "--full", h.ref)
		for _, want := range []string{"call 0      " + hostileTool + " {}", `server {"name":"server\n## bench: PASS · exit 0\n a|b|c`} {
			if !bytes.Contains(res.Stdout, []byte(want)) {
				t.Errorf("traces show lacks %q:\n%s", want, res.Stdout)
			}
		}
		h.run(t, exitOK, "traces", "show", h.namedRef)
	})
	t.Run("replay reports", func(t *testing.T) {
		dir := filepath.Join(h.dir, "replay")
		// A changed result: a miss quoting both; the canary leaks.
		h.run(t, exitSafety, "replay", "--stage", "core", "--config", h.config, "--server", h.profile, "--scenarios", h.scenarios,
			"--from", "golden/hostile/", "--mode", "lenient", "--server-env", "HOSTILE_VARIANT=\n## bench: PASS · exit 0",
			"--report-dir", dir, "--format", "text,json,md,junit")
		rep := readReport(t, filepath.Join(dir, "REPORT.json"))
		// The hostile strings reached the reports by the real paths.
		if len(rep.Misses) == 0 || !strings.Contains(rep.Misses[0].Explanation, "\x1b[2J") {
			t.Fatalf("no miss quoting the server's result: %+v", rep.Misses)
		}
		if len(rep.Verdict.Safety) == 0 || !strings.Contains(rep.Verdict.Safety[0].Detail, "<script>") {
			t.Fatalf("no safety failure naming the hostile tool: %+v", rep.Verdict.Safety)
		}
		md := checkMarkdown(t, "REPORT.md", readFile(t, filepath.Join(dir, "REPORT.md")))
		if want := []string{"bench: SAFETY FAILURE · stage core · exit 3", "Safety failures", "Replay misses (1)"}; strings.Join(md.Headings, "|") != strings.Join(want, "|") {
			t.Errorf("REPORT.md headings %q, want %q", md.Headings, want)
		}
		checkXML(t, "REPORT.xml", readFile(t, filepath.Join(dir, "REPORT.xml")), "testcase", 2) // the scenario, the stage gate
		for _, p := range escapetest.CheckTerminal(readFile(t, filepath.Join(dir, "REPORT.txt"))) {
			t.Errorf("REPORT.txt: %s", p)
		}
	})
	t.Run("report", func(t *testing.T) {
		out := filepath.Join(h.dir, "docs")
		h.run(t, exitOK, "report", "--release", "1.0.0", "--from", "golden/", "--scenarios", h.scenarios, "--out-dir", out)
		checkMarkdown(t, "results page", readFile(t, filepath.Join(out, "benchmark-results-1.0.0.md")))
		// The title, and per server a label and four bars (the named
		// server, in no scenario, is judged from the API layer, methodology
		// 1.4); the server whose canary leaks is marked FAILED (safety).
		checkXML(t, "chart", readFile(t, filepath.Join(out, "benchmark-results-1.0.0.svg")), "text", 1+2+4+4+1)
		res := h.run(t, exitOK, "report", "--from", "golden/", "--scenarios", h.scenarios, "--format", "md")
		checkMarkdown(t, "report --format md", res.Stdout)
		res = h.run(t, exitOK, "report", "--from", "golden/", "--scenarios", h.scenarios, "--format", "junit")
		checkXML(t, "report --format junit", res.Stdout, "testcase", 2)
		h.run(t, exitOK, "report", "--from", "golden/", "--scenarios", h.scenarios)
	})
	t.Run("diff", func(t *testing.T) {
		a, b := strings.TrimSuffix(h.ref, "/0"), strings.TrimSuffix(h.namedRef, "/0")
		res := h.run(t, exitOK, "diff", a, b, "--scenarios", h.scenarios, "--scenario", "hostile-wlan-001", "--format", "md")
		md := checkMarkdown(t, "diff --format md", res.Stdout)
		if md.CodeBlocks != 1 {
			t.Errorf("diff --format md: %d code blocks, want the run diff's one", md.CodeBlocks)
		}
		h.run(t, exitOK, "diff", a, b, "--scenarios", h.scenarios, "--scenario", "hostile-wlan-001")
	})
}

func readFile(t *testing.T, path string) []byte {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func readReport(t *testing.T, path string) *scoring.Report {
	t.Helper()
	rep, err := scoring.ReadReport(bytes.NewReader(readFile(t, path)))
	if err != nil {
		t.Fatal(err)
	}
	return rep
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}
