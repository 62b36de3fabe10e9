package batch

import (
	"slices"
	"testing"
)

func TestParseShard(t *testing.T) {
	for _, c := range []struct {
		in   string
		i, n int
		ok   bool
	}{{"", 1, 1, true}, {"1/3", 1, 3, true}, {"3/3", 3, 3, true}, {"0/3", 0, 0, false}, {"4/3", 0, 0, false}, {"a/b", 0, 0, false}, {"2", 0, 0, false}} {
		sh, err := ParseShard(c.in)
		if (err == nil) != c.ok || sh.I != c.i || sh.N != c.n {
			t.Errorf("ParseShard(%q) = %+v, %v", c.in, sh, err)
		}
	}
}

// The shards of a list partition it.
func TestShardsPartition(t *testing.T) {
	runs := make([]RunSpec, 7)
	for i := range runs {
		runs[i].Index = i
	}
	var seen []int
	for i := 1; i <= 3; i++ {
		for _, r := range (Shard{i, 3}).Of(runs) {
			seen = append(seen, r.Index)
		}
	}
	slices.Sort(seen)
	if !slices.Equal(seen, []int{0, 1, 2, 3, 4, 5, 6}) {
		t.Errorf("shards cover %v", seen)
	}
}
