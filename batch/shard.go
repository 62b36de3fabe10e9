package batch

import (
	"fmt"
	"strconv"
	"strings"
)

// Shard is slice I of N of a run list (1 <= I <= N): every N-th run,
// starting at the I-th. The shards of a list partition it, each the same
// on every machine, so that CI jobs record a list between them (bench
// record --shard i/n) and their packs merge into the whole.
type Shard struct{ I, N int }

// ParseShard reads "i/n"; "" is the whole list (1/1).
func ParseShard(s string) (Shard, error) {
	if s == "" {
		return Shard{1, 1}, nil
	}
	a, b, ok := strings.Cut(s, "/")
	i, err1 := strconv.Atoi(a)
	n, err2 := strconv.Atoi(b)
	if !ok || err1 != nil || err2 != nil || n < 1 || i < 1 || i > n {
		return Shard{}, fmt.Errorf("--shard %q: want i/n with 1 <= i <= n", s)
	}
	return Shard{i, n}, nil
}

// Of returns the shard's runs of runs, in order.
func (sh Shard) Of(runs []RunSpec) []RunSpec {
	var out []RunSpec
	for k, r := range runs {
		if k%sh.N == sh.I-1 {
			out = append(out, r)
		}
	}
	return out
}
