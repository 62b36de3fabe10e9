package scenarios

import "testing"

// The rate-limit scenarios kept beside the golden suite lint clean, and
// each spends a limit that resets (what they measure).
func TestRateLimitScenarios(t *testing.T) {
	list, err := LoadPaths("rate-limits")
	if err != nil {
		t.Fatal(err)
	}
	if warns, err := Lint(list, nil); err != nil {
		t.Fatalf("lint: %v (warnings %v)", err, warns)
	}
	if len(list) < 2 {
		t.Fatalf("%d rate-limit scenarios", len(list))
	}
	for _, s := range list {
		if len(s.Faults) == 0 || s.Faults[0].Status != 429 || s.Faults[0].ResetAfter == 0 {
			t.Errorf("%s: faults %+v, want a 429 that resets", s.ID, s.Faults)
		}
	}
}
