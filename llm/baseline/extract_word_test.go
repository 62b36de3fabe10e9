package baseline

import (
	"regexp"
	"testing"
	"unicode/utf8"
)

// containsWord is the regexp it replaced, without the compilation.
func FuzzContainsWord(f *testing.F) {
	for _, c := range [][2]string{
		{"show critical alerts", "critical"}, {"noncritical", "critical"}, {"in progress now", "in progress"},
		{"x-ray", "-ray"}, {"a_b", "a"}, {"é critical", "critical"}, {"aaa", "aa"}, {"wpa3-sae", "sae"},
		{"", "x"}, {"x", ""}, {"up.", "up"}, {"-", "-"}, {"a - b", "-"},
	} {
		f.Add(c[0], c[1])
	}
	f.Fuzz(func(t *testing.T, s, w string) {
		if w == "" || !utf8.ValidString(w) {
			return // the regexp does not compile; containsWord answers false
		}
		want := regexp.MustCompile(`\b` + regexp.QuoteMeta(w) + `\b`).MatchString(s)
		if got := containsWord(s, w); got != want {
			t.Fatalf("containsWord(%q, %q) = %v, regexp says %v", s, w, got, want)
		}
	})
}
