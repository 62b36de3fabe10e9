package main

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/mcpbench/bench/fakecentral"
)

// runBench runs bench with args and returns the exit code and the streams.
func runBench(t *testing.T, args ...string) (int, string, string) {
	t.Helper()
	var stdout, stderr bytes.Buffer
	a := &app{stdin: strings.NewReader(""), stdout: &stdout, stderr: &stderr, getenv: func(string) string { return "" }}
	code := runWith(context.Background(), a, args)
	return code, stdout.String(), stderr.String()
}

// TestScenariosLintGolden lints the shipped suite against the real fake
// Central: every fixture entity exists, every api_calls template is served,
// every reference_result validates, and bench.yaml's stages hold.
func TestScenariosLintGolden(t *testing.T) {
	for _, args := range [][]string{
		{"scenarios", "lint", "--config", "../../scenarios/stages.yaml"}, // the embedded suite
		{"scenarios", "lint", "--config", "", "../../scenarios/golden"},  // the same files by path
	} {
		code, stdout, stderr := runBench(t, args...)
		if code != exitOK {
			t.Fatalf("%v: exit %d\n%s", args, code, stderr)
		}
		if !strings.HasPrefix(stdout, "ok: ") {
			t.Errorf("%v: stdout = %q, want ok: ...", args, stdout)
		}
	}
}

func TestScenariosLintBroken(t *testing.T) {
	dir := filepath.Join("..", "..", "scenarios", "testdata", "broken")
	code, _, stderr := runBench(t, "scenarios", "lint", "--no-fake", dir)
	if code != exitInvalidInput {
		t.Fatalf("exit %d, want %d", code, exitInvalidInput)
	}
	// Every broken file is reported, each error with file:line.
	for _, want := range []string{
		"unknown_field.yaml:5:1: broken-unknown-field: inent: unknown field",
		"bad_indent.yaml:10: invalid YAML",
		"duplicate_id.yaml:19:5: broken-duplicate: id: duplicate id",
		"invalid_schema.yaml:15:3: broken-invalid-schema: result_schema: invalid schema",
		"write_in_read.yaml:14:7: broken-write-in-read: expect.api_calls[1]: PATCH",
		"bench: scenarios lint:",
	} {
		if !strings.Contains(stderr, want) {
			t.Errorf("stderr lacks %q:\n%s", want, stderr)
		}
	}
}

func TestScenariosLintMissingPath(t *testing.T) {
	code, _, stderr := runBench(t, "scenarios", "lint", "no/such/dir")
	if code != exitInvalidInput || !strings.Contains(stderr, "no/such/dir: cannot read") {
		t.Errorf("exit %d, stderr %q", code, stderr)
	}
}

func TestScenariosListJSON(t *testing.T) {
	code, stdout, stderr := runBench(t, "scenarios", "list", "--json")
	if code != exitOK {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	var l scenarioListing
	if err := json.Unmarshal([]byte(stdout), &l); err != nil {
		t.Fatal(err)
	}
	if l.Counts.Total != len(l.Scenarios) || l.Counts.Total == 0 {
		t.Errorf("counts.total = %d for %d scenarios", l.Counts.Total, len(l.Scenarios))
	}
}

func TestScenariosListFilters(t *testing.T) {
	code, stdout, stderr := runBench(t, "scenarios", "list", "--suite", "client-diagnosis")
	if code != exitOK {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	for _, line := range strings.Split(stdout, "\n")[1:] {
		if line == "" {
			break
		}
		if f := strings.Fields(line); len(f) > 1 && f[1] != "client-diagnosis" {
			t.Errorf("--suite client-diagnosis listed %q", line)
		}
	}
	code, _, stderr = runBench(t, "scenarios", "list", "--suite", "nope")
	if code != exitInvalidInput || !strings.Contains(stderr, `unknown suite "nope"`) {
		t.Errorf("unknown suite: exit %d, %q", code, stderr)
	}
	code, _, stderr = runBench(t, "scenarios", "list", "--stage", "nope")
	if code != exitInvalidInput || !strings.Contains(stderr, `no stage "nope" in (built-in stages) (have smoke, core, safety)`) {
		t.Errorf("unknown stage: exit %d, %q", code, stderr)
	}
}

// The built-in stages need no bench.yaml.
func TestScenariosListStage(t *testing.T) {
	code, stdout, stderr := runBench(t, "scenarios", "list", "--stage", "smoke", "--json")
	if code != exitOK {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	var l scenarioListing
	if err := json.Unmarshal([]byte(stdout), &l); err != nil {
		t.Fatal(err)
	}
	if l.Stage != "smoke" || l.Counts.Total > 20 {
		t.Errorf("smoke stage: %+v", l.Counts)
	}
}

// TestFakeCentralCatalog checks the adapter against the real fake: fixtures,
// entities, served routes and classes.
func TestFakeCentralCatalog(t *testing.T) {
	c := fakecentral.NewCatalog()
	checks := []struct {
		name string
		got  bool
		want bool
	}{
		{"fixture site-a", c.HasFixture("site-a"), true},
		{"fixture nope", c.HasFixture("nope"), false},
		{"ap CNAPA0101 in site-a", c.HasEntity("site-a", "ap", "CNAPA0101"), true},
		{"ap CNAPA9999 in site-a", c.HasEntity("site-a", "ap", "CNAPA9999"), false},
		{"entity of a missing fixture", c.HasEntity("nope", "ap", "CNAPA0101"), false},
		{"GET clients/{mac} served", c.Serves("GET", "/network-monitoring/v1/clients/{mac}"), true},
		{"GET firmware-versions not served", c.Serves("GET", "/network-services/v1/firmware-versions"), false},
		{"PATCH wlan-ssids is a config write", c.Class("PATCH", "/network-config/v1alpha1/wlan-ssids/{ssid}") == "config_write", true},
		{"ping is diagnostic", c.Class("POST", "/network-troubleshooting/v1/aps/{serial}/ping") == "diagnostic", true},
		{"routes list a modelled route", slices.Contains(c.Routes(), "GET /network-monitoring/v1/clients"), true},
		{"routes list a documented v1 route under v1alpha1 too", slices.Contains(c.Routes(), "DELETE /network-monitoring/v1alpha1/sitemaps/{site-id}/floors/{floor-id}"), true},
		{"a built-in fixture loads", c.FixtureError("site-a") == nil, true},
		{"a missing fixture says why", c.FixtureError("no/such/bundle") != nil, true},
	}
	for _, tc := range checks {
		if tc.got != tc.want {
			t.Errorf("%s: got %v, want %v", tc.name, tc.got, tc.want)
		}
	}
	code, _, stderr := runBench(t, "scenarios", "lint", "../../scenarios/testdata/broken/missing_entity.yaml")
	if code != exitInvalidInput || !strings.Contains(stderr, `entities.ap[1]: fixture "site-a" has no ap "CNAPA9999"`) {
		t.Errorf("lint with the fake: exit %d, stderr:\n%s", code, stderr)
	}
}

// TestScenariosLintMethodology lints the golden manifest written in the
// methodology's format against the real fake: clean, not even a warning.
func TestScenariosLintMethodology(t *testing.T) {
	code, stdout, stderr := runBench(t, "scenarios", "lint", "--config", "", "../../scenarios/testdata/methodology")
	if code != exitOK || stdout != "ok: 13 scenarios in 1 files\n" || stderr != "" {
		t.Errorf("exit %d, stdout %q, stderr:\n%s", code, stdout, stderr)
	}
}

// A methodology-format scenario may name a user's own bundle by path,
// relative to the manifest; lint loads it, says why it does not load, and
// refuses a guard that matches nothing the fake serves.
func TestScenariosLintUserBundle(t *testing.T) {
	dir := t.TempDir()
	site, err := os.ReadFile("../../fakecentral/fixtures/site-a.yaml")
	if err != nil {
		t.Fatal(err)
	}
	for name, data := range map[string][]byte{"mine": site, "broken": []byte("format: fakecentral.fixture/v1\nname: broken\nnow: yesterday\n")} {
		if err := os.MkdirAll(filepath.Join(dir, "bundles", name), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, "bundles", name, "fixture.yaml"), data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	scenario := func(fixture, guard string) string {
		return "id: client-diagnosis-001\nintent: Which clients are connected?\nplatform: central\nfixture: " + fixture +
			"\nwrite_gate: read\nexpected_tools: {reference: [list_clients]}\nexpect:\n  api_calls: [GET /network-monitoring/v1/clients]\n" +
			"  must_not_call: [\"" + guard + "\"]\n"
	}
	tests := []struct {
		name, doc, want string
	}{
		{"user bundle", scenario("bundles/mine", "POST /network-config/v1/*"), ""},
		{"broken bundle", scenario("bundles/broken", "POST /network-config/v1/*"), `fixture: fixture "` + filepath.Join(dir, "bundles", "broken") + `" does not load: parse fixture`},
		{"guard of nothing", scenario("fixtures/central/site-a", "POST /network-config/v9/*"), "expect.must_not_call[0]: POST /network-config/v9/* matches no route the fake Central serves"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			manifest := filepath.Join(dir, "m.yaml")
			if err := os.WriteFile(manifest, []byte(tt.doc), 0o644); err != nil {
				t.Fatal(err)
			}
			code, _, stderr := runBench(t, "scenarios", "lint", "--config", "", manifest)
			switch {
			case tt.want == "" && code != exitOK:
				t.Errorf("exit %d:\n%s", code, stderr)
			case tt.want != "" && (code != exitInvalidInput || !strings.Contains(stderr, tt.want)):
				t.Errorf("exit %d, want %d and %q in:\n%s", code, exitInvalidInput, tt.want, stderr)
			}
		})
	}
}
