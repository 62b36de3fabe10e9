package odata

import "testing"

func FuzzParseFilter(f *testing.F) {
	for _, s := range []string{
		"status eq 'Connected'",
		"tunnelType in ('Port-based', 'Overlay') and clientConnectionType eq 'Wired'",
		"siteName in ('A', 'B''s')",
		"timestamp gt 2026-03-21T00:00:00.123000Z and timestamp lt 2026-03-21T01:00:00Z",
		"(status eq 'Failed') and (vlanId eq '10')",
		"status eq 'a' or status eq 'b'",
		"not x", "x in (", "'", "a eq", "",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		flt, err := Parse(s)
		if err != nil {
			return
		}
		// A parsed filter evaluates without panicking on any object.
		flt.Match(func(field string) (string, bool) { return field, true })
		flt.TimeWindow("timestamp")
	})
}
