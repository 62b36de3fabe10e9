package scenarios

import "slices"

// Nearest returns up to n of candidates within a small edit distance of
// name (a third of its length, at least 2), closest first, ties in
// candidate order: the "did you mean" of an unknown id, stage or field.
func Nearest(name string, candidates []string, n int) []string {
	limit := max(2, len(name)/3)
	type hit struct {
		s string
		d int
	}
	var hits []hit
	for _, c := range candidates {
		if d := editDistance(name, c); d <= limit && c != name {
			hits = append(hits, hit{c, d})
		}
	}
	slices.SortStableFunc(hits, func(a, b hit) int { return a.d - b.d })
	var out []string
	for _, h := range hits {
		if len(out) == n {
			break
		}
		if !slices.Contains(out, h.s) {
			out = append(out, h.s)
		}
	}
	return out
}

// CheckUniqueIDs fails when two loaded scenarios have one id, naming both
// files: scenarios are selected and scored by id.
func CheckUniqueIDs(list []*Scenario) error {
	first := map[string]*Scenario{}
	var errs ErrorList
	for _, s := range list {
		if f, ok := first[s.ID]; ok {
			errs = append(errs, s.errAt("id", "duplicate id %q: also defined at %s:%d", s.ID, f.File, f.PosOf("id").Line))
			continue
		}
		first[s.ID] = s
	}
	return errs.Err()
}
