package scoring

import (
	"encoding/json"
	"testing"
)

// Redact masks a secret in every string a report holds (fields, slices,
// map values, raw JSON), the longer of two overlapping secrets whole, and
// leaves every other string as it was.
func TestRedactEverywhere(t *testing.T) {
	type inner struct {
		Note string
		Raw  json.RawMessage
	}
	type doc struct {
		Cyc    *cycA // types that refer to each other, looked at first
		Other  *cycB // a string only through a cycA
		Counts map[string][]int
		Title  string
		Lines  []string
		ByName map[string]inner
		Ptr    *inner
		Clean  string
	}
	const long, short = "fc1.secret-token-xyz", "fc1.secret"
	d := &doc{
		Cyc:    &cycA{S: "top"},
		Other:  &cycB{A: &cycA{S: "deep " + long}},
		Counts: map[string][]int{"a": {1}},
		Title:  "run with " + long,
		Lines:  []string{"nothing here", "short " + short + " only"},
		ByName: map[string]inner{"a": {Note: "in a map: " + long, Raw: json.RawMessage(`{"token":"` + short + `"}`)}},
		Ptr:    &inner{Note: "plain", Raw: json.RawMessage(`{"k":1}`)},
		Clean:  "no secret at all",
	}
	Redact(d, []string{short, long, short})
	want := &doc{
		Cyc:    &cycA{S: "top"},
		Other:  &cycB{A: &cycA{S: "deep " + redact(long)}},
		Counts: map[string][]int{"a": {1}},
		Title:  "run with " + redact(long),
		Lines:  []string{"nothing here", "short " + redact(short) + " only"},
		ByName: map[string]inner{"a": {Note: "in a map: " + redact(long), Raw: json.RawMessage(`{"token":"` + redact(short) + `"}`)}},
		Ptr:    &inner{Note: "plain", Raw: json.RawMessage(`{"k":1}`)},
		Clean:  "no secret at all",
	}
	got, _ := json.Marshal(d)
	exp, _ := json.Marshal(want)
	if string(got) != string(exp) {
		t.Errorf("redacted:\n got %s\nwant %s", got, exp)
	}
	if redact(long) == long || redact(short) == short {
		t.Fatal("redact(s) is s")
	}
}

type cycA struct {
	B *cycB
	S string
}

type cycB struct{ A *cycA }
