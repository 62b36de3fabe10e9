package scenarios

import (
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

var update = flag.Bool("update", false, "rewrite golden files under testdata")

// lintFile loads and lints one file against the test catalog, the way
// `bench scenarios lint` does, and returns every error and warning as text.
func lintFile(t *testing.T, path string) string {
	t.Helper()
	list, err := LoadPaths(path)
	var errs ErrorList
	if l, ok := err.(ErrorList); ok {
		errs = append(errs, l...)
	} else if err != nil {
		t.Fatalf("LoadPaths(%s): %v", path, err)
	}
	warns, err := Lint(list, &ValidateOptions{Catalog: newTestCatalog()})
	errs = append(errs, warns...)
	if err != nil {
		errs = append(errs, err.(ErrorList)...)
	}
	errs.Sort()
	var b strings.Builder
	for _, e := range errs {
		b.WriteString(e.Error() + "\n")
	}
	return b.String()
}

func TestBrokenManifests(t *testing.T) {
	// Each broken manifest must produce (at least) this error, with its file
	// and line; the full output is pinned in the .golden file next to it.
	tests := []struct {
		file string
		want string
	}{
		{"unknown_field.yaml", `unknown_field.yaml:5:1: broken-unknown-field: inent: unknown field "inent" (did you mean "intent"?)`},
		{"bad_indent.yaml", `bad_indent.yaml:10: invalid YAML: did not find expected key`},
		{"duplicate_id.yaml", `duplicate_id.yaml:19:5: broken-duplicate: id: duplicate id "broken-duplicate" (first defined at testdata/broken/duplicate_id.yaml:2)`},
		{"missing_entity.yaml", `missing_entity.yaml:10:19: broken-missing-entity: entities.ap[1]: fixture "site-a" has no ap "CNAPA9999"`},
		{"missing_fixture.yaml", `missing_fixture.yaml:7:10: broken-missing-fixture: fixture: fixture "site-zz" does not exist`},
		{"invalid_schema.yaml", `invalid_schema.yaml:15:3: broken-invalid-schema: result_schema: invalid schema:`},
		{"reference_mismatch.yaml", `reference_mismatch.yaml:19:19: broken-reference-mismatch: reference_result: does not validate against result_schema`},
		{"write_in_read.yaml", `write_in_read.yaml:14:7: broken-write-in-read: expect.api_calls[1]: PATCH /network-config/v1alpha1/wlan-ssids/{ssid} is a config_write but write_gate is read`},
		{"guard_of_nothing.yaml", `guard_of_nothing.yaml:16:7: broken-guard-of-nothing: expect.must_not_call[1]: POST /network-config/v9/* matches no route the fake Central serves: it guards nothing`},
		{"unknown_endpoint.yaml", `unknown_endpoint.yaml:13:59: broken-unknown-endpoint: expect.api_calls[0].any_of[1]: GET /network-services/v1/firmware-versions is not served by the fake Central`},
		{"format_version.yaml", `format_version.yaml:1:9: broken-format-version: format: unsupported format 2; this bench reads format 1 (and, with no format key, the methodology's format)`},
		{"wrong_types.yaml", `wrong_types.yaml:3:8: broken-wrong-types: suite: want a string, got a list`},
		{"bad_values.yaml", `bad_values.yaml:28:7: Broken_Bad_Values: expect.api_calls[0]: endpoint "GET network-monitoring/v1/clients": path must start with /`},
	}
	seen := map[string]bool{}
	for _, tt := range tests {
		seen[tt.file] = true
		t.Run(tt.file, func(t *testing.T) {
			path := filepath.Join("testdata", "broken", tt.file)
			got := lintFile(t, path)
			if !strings.Contains(got, tt.want) {
				t.Errorf("errors for %s lack\n  %s\ngot:\n%s", tt.file, tt.want, got)
			}
			golden := strings.TrimSuffix(path, ".yaml") + ".golden"
			if *update {
				if err := os.WriteFile(golden, []byte(got), 0o644); err != nil {
					t.Fatal(err)
				}
				return
			}
			want, err := os.ReadFile(golden)
			if err != nil {
				t.Fatalf("%v (run go test -update)", err)
			}
			if diff := cmp.Diff(string(want), got); diff != "" {
				t.Errorf("errors for %s differ from %s (-want +got):\n%s", tt.file, golden, diff)
			}
		})
	}
	files, _ := filepath.Glob(filepath.Join("testdata", "broken", "*.yaml"))
	for _, f := range files {
		if !seen[filepath.Base(f)] {
			t.Errorf("%s has no test case", f)
		}
	}
}

func TestLoadValid(t *testing.T) {
	list, err := LoadPaths(filepath.Join("testdata", "valid"))
	if err != nil {
		t.Fatal(err)
	}
	if err := Validate(list, &ValidateOptions{Catalog: newTestCatalog()}); err != nil {
		t.Fatal(err)
	}
	if len(list) != 2 {
		t.Fatalf("loaded %d scenarios, want 2", len(list))
	}
	s := list[0]
	if got, want := s.Expect.APICalls[0].AnyOf, []string{"GET /network-monitoring/v1/clients/{mac}", "GET /network-monitoring/v1/clients"}; !cmp.Equal(got, want) {
		t.Errorf("api_calls[0] = %v, want %v", got, want)
	}
	if r := s.ParamsFor("karthik", "central_find_client")["mac_address"]; r == nil || r.Equals != "aa:bb:cc:11:22:33" {
		t.Errorf("scalar shorthand not decoded as equals: %+v", r)
	}
	if got := s.PosOf("expect.api_calls[0]"); got.Line == 0 {
		t.Errorf("no position recorded for expect.api_calls[0]")
	}
	if s.Turns() != 8 || list[1].Turns() != DefaultMaxTurns {
		t.Errorf("Turns() = %d, %d; want 8, %d", s.Turns(), list[1].Turns(), DefaultMaxTurns)
	}
}

func TestLoadPathErrors(t *testing.T) {
	_, err := LoadPaths(filepath.Join("testdata", "no-such-dir"))
	if err == nil || !strings.Contains(err.Error(), "no-such-dir: cannot read") {
		t.Errorf("missing path: got %v", err)
	}
	_, err = Parse("x.yaml", []byte("- just\n- a list\n"))
	if err == nil || !strings.Contains(err.Error(), "x.yaml:1:1: a scenario must be a mapping") {
		t.Errorf("list document: got %v", err)
	}
	ss, err := Parse("empty.yaml", []byte("---\n---\n"))
	if err != nil || len(ss) != 0 {
		t.Errorf("empty documents: got %v, %v", ss, err)
	}
}
