package scoring

import (
	"io"
	"testing"
)

// BenchmarkWriteJSON writes a report of many scenarios, each with its runs'
// metrics.
func BenchmarkWriteJSON(b *testing.B) {
	full := reportFixture(b)
	var many []*ScenarioResult
	for len(many) < 220 {
		many = append(many, full.Results.Scenarios...)
	}
	r := &Report{Format: ReportFormat, Title: "x", Results: &Results{Scenarios: many, Suites: full.Results.Suites}, Comparison: full.Comparison, Meta: full.Meta}
	for b.Loop() {
		if err := WriteJSON(io.Discard, r); err != nil {
			b.Fatal(err)
		}
	}
}
